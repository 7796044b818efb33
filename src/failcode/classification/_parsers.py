"""Parsers of real tool output: compilers, linkers, test runners, linters, make, git, shells.

Each tool family is a table of compiled, line-anchored patterns (:data:`RULES`); a pattern that
matches yields a :class:`Diagnostic` with a core class, the raw path it names, the tool's own
diagnostic code and the identity of the failure (the missing symbol, header, module or program,
the failing test's id). :func:`find_diagnostics` runs the tables over a bounded text: at most the
first and last :data:`SCAN_BYTES` characters of each stream are scanned, every pattern is anchored
at a line start and built from negated character classes, so the work is linear in the scanned
text. A rule runs only when its gate substring occurs in the text (a ``str`` search costs far less
than a regex scan).

The core classes (public contract, documented in docs/classification.md, "Command output"):
``undefined_reference``, ``undeclared_identifier``, ``missing_header``, ``syntax_error``,
``type_mismatch``, ``missing_module``, ``assertion_failed``, ``test_collection_error``,
``lint_violation``, ``type_check_error``, ``no_rule_to_make_target``, ``patch_conflict``,
``command_not_found``, ``timeout``; plus the finer classes listed in :data:`EXTRA_CLASSES`.

Parsers never decide the code: the ``_command`` module does, from the purpose and the class.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

__all__ = [
    "CORE_CLASSES",
    "EXTRA_CLASSES",
    "RULES",
    "SCAN_BYTES",
    "Diagnostic",
    "PythonTraceback",
    "cap_text",
    "find_diagnostics",
    "parse_python_traceback",
    "strip_ansi",
]

SCAN_BYTES: Final = 64 * 1024
"""Characters scanned at each end of a stream; the middle of a huge output is skipped."""

CORE_CLASSES: Final = (
    "undefined_reference", "undeclared_identifier", "missing_header", "syntax_error",
    "type_mismatch", "missing_module", "assertion_failed", "test_collection_error",
    "lint_violation", "type_check_error", "no_rule_to_make_target", "patch_conflict",
    "command_not_found", "timeout",
)  # fmt: skip
"""The command-output classes of the public contract."""

EXTRA_CLASSES: Final = (
    "compile_error", "link_error", "test_exception", "test_setup_error", "uncaught_exception",
    "file_not_found", "corrupt_patch", "dirty_worktree", "git_error", "recipe_failed",
    "npm_error", "missing_script",
)  # fmt: skip
"""Finer classes a parser may report when no core class fits (also public, documented)."""

_ANSI_RE: Final = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def strip_ansi(text: str) -> str:
    """``text`` without terminal colour and hyperlink escapes (``--pretty`` tsc, cargo, ruff)."""
    return _ANSI_RE.sub("", text) if "\x1b" in text else text


def cap_text(text: str, limit: int = SCAN_BYTES) -> str:
    """The first and last ``limit`` characters of ``text`` (cut at line breaks), or all of it."""
    if len(text) <= 2 * limit:
        return text
    head = text[:limit]
    tail = text[-limit:]
    head = head[: head.rfind("\n") + 1] or head
    cut = tail.find("\n")
    tail = tail[cut + 1:] if cut >= 0 else tail
    return head + "\n" + tail


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One parsed diagnostic: what a tool reported, in failcode's terms.

    ``path`` is raw, as the tool printed it (absolute, relative, or None); the caller makes it
    relative to the command's working directory. ``start``/``end`` are offsets of the match in the
    scanned text, for the detail excerpt.
    """

    family: str
    """Tool family: cpp, ld, rust, java, ts, node, npm, python, pytest, unittest, mypy, ruff,
    make, git, patch, shell."""
    error_class: str
    start: int
    end: int
    path: str | None = None
    code: str | None = None
    """The tool's diagnostic code: E0425, TS2304, F401, name-defined, a javac key."""
    subject: str | None = None
    """The identity: missing symbol, header, module or program; the failing test's id."""
    message: str = ""
    frames: tuple[str, ...] = ()
    """Stack frame paths, outermost first (tracebacks); the caller picks the innermost in cwd."""
    exc_type: str | None = None
    """The exception type of a traceback or uncaught error (``ModuleNotFoundError``)."""
    traceback: str | None = None


_Builder = Callable[[re.Match[str], str], Diagnostic | None]


@dataclass(frozen=True, slots=True)
class Rule:
    """One pattern of a tool family's table."""

    family: str
    gate: str
    """A substring that must occur in the text for the pattern to run."""
    pattern: re.Pattern[str]
    build: _Builder


# -- message tables: (pattern over the message, class, group of the subject or 0) --------------
# Quotes: gcc prints U+2018 foo U+2019 under UTF-8 locales and 'foo' under LANG=C; ld: `foo'.
_Q = "[\u2018'`\"]"
_NQ = "[^\u2018\u2019'`\"\n]"
_MessageRule = tuple[re.Pattern[str], str, int]

_CPP_MESSAGES: Final[tuple[_MessageRule, ...]] = (
    (re.compile(rf"^{_Q}({_NQ}+)[\u2019'] undeclared"), "undeclared_identifier", 1),
    (re.compile(rf"^{_Q}({_NQ}+)[\u2019'] was not declared in this scope"),
     "undeclared_identifier", 1),
    (re.compile(rf"^use of undeclared identifier {_Q}({_NQ}+)[\u2019']"),
     "undeclared_identifier", 1),
    (re.compile(rf"^unknown type name {_Q}({_NQ}+)[\u2019']"), "undeclared_identifier", 1),
    (re.compile(rf"^{_Q}({_NQ}+)[\u2019'] does not name a type"), "undeclared_identifier", 1),
    (re.compile(rf"^implicit declaration of function {_Q}({_NQ}+)[\u2019']"),
     "undeclared_identifier", 1),
    (re.compile(rf"^{_Q}?([^\u2018\u2019'`\"\n:]+?)[\u2019']?: No such file or directory$"),
     "missing_header", 1),
    (re.compile(rf"^{_Q}({_NQ}+)[\u2019'] file not found"), "missing_header", 1),
    (re.compile(r"^(?:expected |stray |missing terminating |unterminated |extraneous )"),
     "syntax_error", 0),
    (re.compile(r"^(?:cannot convert |invalid conversion |no matching function|"
                r"cannot initialize |assigning to |no viable conversion|conversion from )|"
                r"\bincompatible (?:pointer )?types?\b"), "type_mismatch", 0),
)

_RUST_MESSAGES: Final[tuple[_MessageRule, ...]] = (
    (re.compile(r"^cannot find (?:value|function|macro|type|struct|trait|crate) `([^`\n]+)`"),
     "undeclared_identifier", 1),
    (re.compile(r"^failed to resolve: use of undeclared (?:type|crate or module) `([^`\n]+)`"),
     "undeclared_identifier", 1),
    (re.compile(r"^unresolved import `([^`\n]+)`"), "missing_module", 1),
    (re.compile(r"^can't find crate for `([^`\n]+)`"), "missing_module", 1),
    (re.compile(r"^no matching package named `([^`\n]+)` found"), "missing_module", 1),
    (re.compile(r"^mismatched types"), "type_mismatch", 0),
    (re.compile(r"^expected .*, found "), "syntax_error", 0),
    (re.compile(r"^(?:expected |unexpected closing delimiter|this file contains an unclosed)"),
     "syntax_error", 0),
    (re.compile(r"^linking with `[^`\n]+` failed"), "link_error", 0),
)
_RUST_NOISE: Final = re.compile(
    r"^(?:aborting due to|could not compile|Some errors have|For more information|"
    r"build failed|failed to run custom build command)")

_JAVA_MESSAGES: Final[tuple[tuple[re.Pattern[str], str, int, str], ...]] = (
    # (message, class, subject group, javac's diagnostic key)
    (re.compile(r"^cannot find symbol"), "undeclared_identifier", 0, "compiler.err.cant.resolve"),
    (re.compile(r"^package ([\w.]+) does not exist"), "missing_module", 1,
     "compiler.err.doesnt.exist"),
    (re.compile(r"^incompatible types"), "type_mismatch", 0, "compiler.err.prob.found.req"),
    (re.compile(r"^(?:'.+' expected|<identifier> expected|class, interface, enum, or record "
                r"expected)"), "syntax_error", 0, "compiler.err.expected"),
    (re.compile(r"^illegal start of (type|expression)"), "syntax_error", 0,
     "compiler.err.illegal.start"),
    (re.compile(r"^reached end of file while parsing"), "syntax_error", 0,
     "compiler.err.premature.eof"),
)
_JAVA_KEY_CLASSES: Final = (
    ("compiler.err.cant.resolve", "undeclared_identifier"),
    ("compiler.err.doesnt.exist", "missing_module"),
    ("compiler.err.prob.found.req", "type_mismatch"),
    ("compiler.err.expected", "syntax_error"),
    ("compiler.err.illegal.start", "syntax_error"),
    ("compiler.err.premature.eof", "syntax_error"),
)

_TS_CODES: Final = {
    "TS2304": "undeclared_identifier", "TS2552": "undeclared_identifier",
    "TS2582": "undeclared_identifier", "TS2307": "missing_module", "TS2792": "missing_module",
    "TS2322": "type_mismatch", "TS2345": "type_mismatch", "TS2741": "type_mismatch",
    "TS2769": "type_mismatch",
}  # fmt: skip
_TS_SUBJECT: Final = re.compile(r"^Cannot find (?:name|module) '([^'\n]+)'")


def _classify_message(message: str, table: tuple[_MessageRule, ...],
                      default: str) -> tuple[str, str | None]:
    for pattern, error_class, group in table:
        match = pattern.search(message)
        if match:
            return error_class, (match.group(group) if group else None)
    return default, None


# -- builders -------------------------------------------------------------------------------
_C_EXTENSIONS: Final = frozenset({
    "c", "h", "cc", "cp", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "m", "mm", "i", "ii",
    "s", "S", "f", "f90", "f95", "for", "cu", "cuh", "inl", "ipp", "tcc", "tpp",
})  # fmt: skip


def _ext(path: str) -> str:
    dot = path.rfind(".")
    return path[dot + 1:] if dot > path.rfind("/") else ""


def _file_error(match: re.Match[str], _text: str) -> Diagnostic | None:
    """``path:line[:col]: [fatal ]error: message`` from gcc/clang, mypy, or another compiler."""
    path, message = match.group("path"), match.group("msg").strip()
    ext = _ext(path)
    if ext == "java":
        return None  # javac's own rule reads it, with the symbol line that follows
    if ext in ("py", "pyi"):
        code = match.group("mypycode")
        if code is None:
            inner = re.search(r"  \[([\w-]+)\]$", message)
            code = inner.group(1) if inner else None
            if inner:
                message = message[: inner.start()]
        return Diagnostic("mypy", "type_check_error", match.start(), match.end(), path=path,
                          code=code, message=message)
    if match.group("mypycode"):
        message = f"{message}  [{match.group('mypycode')}]"
    error_class, subject = _classify_message(message, _CPP_MESSAGES, "compile_error")
    if ext not in _C_EXTENSIONS and error_class == "compile_error":
        return Diagnostic("cpp", "compile_error", match.start(), match.end(), path=path,
                          message=message)
    return Diagnostic("cpp", error_class, match.start(), match.end(), path=path,
                      subject=subject, message=message)


_LD_SOURCE: Final = re.compile(r"(?m)(?:^|[\s:])([^\s:()]+):\(\.[^)\n]*\)")
_LD_SOURCE_LINE: Final = re.compile(r"(?m)(?:^|\s)([^\s:()]+):\d+:\s*$")


def _ld_undefined(match: re.Match[str], text: str) -> Diagnostic | None:
    """GNU ld: ``file.c:(.text+0x5): undefined reference to `foo'``, or with debug info
    ``/abs/proj/src/file.c:7: undefined reference to `foo'`` (the path is made relative to the
    command's working directory by the caller; the line number is dropped)."""
    line_start = text.rfind("\n", max(0, match.start() - 1000), match.start()) + 1
    source = _LD_SOURCE.search(text, line_start, match.start())
    # with debug info ld names the source line instead: /abs/proj/src/main.c:7: undefined ...
    with_line = _LD_SOURCE_LINE.search(text, line_start, match.start())
    path = source.group(1) if source else (with_line.group(1) if with_line else None)
    if path and path.endswith((".o", ".a", ".so", ".obj", ".lib")):
        path = None
    return Diagnostic("ld", "undefined_reference", line_start, match.end(), path=path,
                      subject=match.group("sym").strip(),
                      message=text[line_start: match.end()].strip())


def _lld_undefined(match: re.Match[str], text: str) -> Diagnostic | None:
    """lld: ``ld.lld: error: undefined symbol: foo`` then ``>>> referenced by file.c``."""
    following = text[match.end(): match.end() + 400]
    ref = re.search(r"\n>>> referenced by ([^\s:()]+)", following)
    path = ref.group(1) if ref and not ref.group(1).endswith(".o") else None
    return Diagnostic("ld", "undefined_reference", match.start(), match.end(), path=path,
                      subject=match.group("sym").strip(), message=match.group(0).strip())


def _macos_undefined(match: re.Match[str], _text: str) -> Diagnostic | None:
    """Apple ld: ``Undefined symbols for architecture x86_64:`` then ``  "_foo", referenced``."""
    symbol = match.group("sym")
    return Diagnostic("ld", "undefined_reference", match.start(), match.end(),
                      subject=symbol.removeprefix("_"),
                      message=match.group(0).strip())


def _rust_error(match: re.Match[str], text: str) -> Diagnostic | None:
    message = match.group("msg").strip()
    if _RUST_NOISE.match(message):
        return None
    code = match.group("code")
    error_class, subject = _classify_message(message, _RUST_MESSAGES, "compile_error")
    following = text[match.end(): match.end() + 600]
    arrow = re.search(r"\n *--> ([^\n:]+):\d+", following)
    return Diagnostic("rust", error_class, match.start(), match.end(),
                      path=arrow.group(1).strip() if arrow else None, code=code,
                      subject=subject, message=message)


def _javac_error(match: re.Match[str], text: str) -> Diagnostic | None:
    message = match.group("msg").strip()
    key = None
    error_class, subject = "compile_error", None
    for pattern, klass, group, diag_key in _JAVA_MESSAGES:
        found = pattern.search(message)
        if found:
            error_class, key = klass, diag_key
            subject = found.group(group) if group else None
            break
    if error_class == "undeclared_identifier":
        following = text[match.end(): match.end() + 600]
        symbol = re.search(r"\n(?:\[ERROR\])? *symbol: +(?:\w+ )?([^\s(]+)", following)
        subject = symbol.group(1) if symbol else None
    return Diagnostic("java", error_class, match.start(), match.end(), path=match.group("path"),
                      code=key, subject=subject, message=message)


def _javac_raw(match: re.Match[str], _text: str) -> Diagnostic | None:
    """``javac -XDrawDiagnostics``: ``A.java:1:63: compiler.err.cant.resolve.location: ...``."""
    key = "compiler.err." + match.group("key")
    error_class = next((klass for prefix, klass in _JAVA_KEY_CLASSES if key.startswith(prefix)),
                       "compile_error")
    args = [part.strip() for part in match.group("msg").split(",")]
    subject = args[1] if error_class == "undeclared_identifier" and len(args) > 1 else None
    if error_class == "missing_module" and args and args[0]:
        subject = args[0]
    return Diagnostic("java", error_class, match.start(), match.end(), path=match.group("path"),
                      code=key, subject=subject or None, message=match.group("msg").strip())


def _tsc_error(match: re.Match[str], _text: str) -> Diagnostic | None:
    code, message = match.group("code"), match.group("msg").strip()
    error_class = _TS_CODES.get(code)
    if error_class is None:
        error_class = "syntax_error" if code.startswith("TS1") else "compile_error"
    found = _TS_SUBJECT.match(message)
    return Diagnostic("ts", error_class, match.start(), match.end(), path=match.group("path"),
                      code=code, subject=found.group(1) if found else None, message=message)


_NODE_FRAME = re.compile(r"\n {4}at (?:[^\n]*?\()?((?:file://)?/?[^\s():]+):\d+:\d+\)?")


def _node_error(match: re.Match[str], text: str) -> Diagnostic | None:
    """An uncaught error printed by node: throw-site header, ``Type: message``, stack."""
    exc_type, message = match.group("type"), (match.group("msg") or "").strip()
    following = text[match.end(): match.end() + 4000]
    frames = tuple(frame.removeprefix("file://") for frame in _NODE_FRAME.findall(following))
    if not frames and "\n    at " not in following:
        return None  # a bare "Error: ..." line is no node crash
    header = re.search(r"(?:^|\n)((?:file://)?/?[^\s:\n]+\.[cm]?[jt]sx?):\d+\n[^\n]*\n *\^",
                       text[max(0, match.start() - 2000): match.start()])
    throw_site = header.group(1).removeprefix("file://") if header else None
    path_frames = ((throw_site,) if throw_site else ()) + tuple(
        f for f in frames if not f.startswith("node:"))
    subject = None
    if found := re.match(r"Cannot find (?:module|package) '([^'\n]+)'", message):
        error_class, subject = "missing_module", found.group(1)
    elif found := re.match(r"(\S+) is not defined$", message):
        error_class, subject = ("undeclared_identifier", found.group(1)) if (
            exc_type == "ReferenceError") else ("uncaught_exception", None)
    elif exc_type == "SyntaxError":
        error_class = "syntax_error"
    else:
        error_class = "uncaught_exception"
    return Diagnostic("node", error_class, match.start(), match.end(), subject=subject,
                      message=f"{exc_type}: {message}", frames=path_frames, exc_type=exc_type)


def _npm_error(match: re.Match[str], text: str) -> Diagnostic | None:
    code = match.group("code")
    following = text[match.end(): match.end() + 600]
    script = re.search(r"\nnpm (?:ERR!|error) Missing script: \"?([^\s\"]+)", following)
    if script or (code == "ENOENT" and "Missing script" in following):
        return Diagnostic("npm", "missing_script", match.start(), match.end(), code=code,
                          subject=script.group(1) if script else None, message=match.group(0))
    return Diagnostic("npm", "npm_error", match.start(), match.end(), code=code,
                      message=match.group(0).strip())


def _npm_missing_script(match: re.Match[str], _text: str) -> Diagnostic | None:
    return Diagnostic("npm", "missing_script", match.start(), match.end(),
                      subject=match.group("script"), message=match.group(0).strip())


def _pytest_failed(match: re.Match[str], _text: str) -> Diagnostic | None:
    node_id, message = match.group("node"), (match.group("msg") or "").strip()
    exc = re.match(r"([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning))\b",
                   message)
    assertion = message.startswith(("assert", "AssertionError", "Failed:")) or not message
    error_class = "assertion_failed" if assertion or not exc else "test_exception"
    return Diagnostic("pytest", error_class, match.start(), match.end(),
                      path=node_id.split("::", 1)[0], subject=node_id, message=message,
                      exc_type=exc.group(1) if exc else None)


def _pytest_error(match: re.Match[str], _text: str) -> Diagnostic | None:
    target, message = match.group("node"), (match.group("msg") or "").strip()
    if "::" in target:
        return Diagnostic("pytest", "test_setup_error", match.start(), match.end(),
                          path=target.split("::", 1)[0], subject=target, message=message)
    exc = re.match(r"([A-Za-z_][\w.]*(?:Error|Exception))\b", message)
    return Diagnostic("pytest", "test_collection_error", match.start(), match.end(),
                      path=target, message=message, exc_type=exc.group(1) if exc else None)


def _pytest_collecting(match: re.Match[str], text: str) -> Diagnostic | None:
    following = text[match.end(): match.end() + 6000]
    exc = re.search(r"\nE +([A-Za-z_][\w.]*(?:Error|Exception)):", following)
    return Diagnostic("pytest", "test_collection_error", match.start(), match.end(),
                      path=match.group("path"), message=match.group(0).strip("_ \n"),
                      exc_type=exc.group(1) if exc else None)


def _unittest_failure(match: re.Match[str], _text: str) -> Diagnostic | None:
    name, where = match.group("name"), match.group("where")
    subject = where if where.endswith("." + name) else f"{where}.{name}"
    error_class = "assertion_failed" if match.group("kind") == "FAIL" else "test_exception"
    return Diagnostic("unittest", error_class, match.start(), match.end(), subject=subject,
                      message=match.group(0).strip())


def _ruff_concise(match: re.Match[str], _text: str) -> Diagnostic | None:
    return Diagnostic("ruff", "lint_violation", match.start(), match.end(),
                      path=match.group("path"), code=match.group("code"),
                      message=match.group("msg").strip())


def _ruff_full(match: re.Match[str], _text: str) -> Diagnostic | None:
    return Diagnostic("ruff", "lint_violation", match.start(), match.end(),
                      path=match.group("path").strip(), code=match.group("code"),
                      message=match.group("msg").strip())


def _make_no_rule(match: re.Match[str], _text: str) -> Diagnostic | None:
    return Diagnostic("make", "no_rule_to_make_target", match.start(), match.end(),
                      subject=match.group("target"), message=match.group(0).strip())


def _make_recipe(match: re.Match[str], text: str) -> Diagnostic | None:
    status = match.group("status")
    if status == "127":
        before = text[max(0, match.start() - 2000): match.start()]
        found = None
        for found in _MAKE_MISSING.finditer(before):  # noqa: B007 - the last one is wanted
            pass
        return Diagnostic("make", "command_not_found", match.start(), match.end(),
                          subject=found.group("prog") if found else None,
                          message=match.group(0).strip())
    return Diagnostic("make", "recipe_failed", match.start(), match.end(),
                      path=match.group("file"), message=match.group(0).strip())


_MAKE_MISSING: Final = re.compile(
    r"(?m)^(?:make(?:\[\d+\])?|/bin/sh: \d+|(?:/usr)?/bin/(?:ba|da)?sh(?:: line \d+)?|"
    r"(?:ba|da)?sh(?:: line \d+)?|sh: \d+): (?P<prog>[^\s:]+): "
    r"(?:No such file or directory|[Cc]ommand not found|not found)$")


def _command_not_found(match: re.Match[str], _text: str) -> Diagnostic | None:
    return Diagnostic("shell", "command_not_found", match.start(), match.end(),
                      subject=match.group("prog").strip("'\""), message=match.group(0).strip())


def _git_conflict(match: re.Match[str], _text: str) -> Diagnostic | None:
    path = match.group("file") or match.group("first")
    return Diagnostic("git", "patch_conflict", match.start(), match.end(),
                      path=path.strip() if path else None, code=match.group("kind"),
                      subject=path, message=match.group(0).strip())


def _git_patch_failed(match: re.Match[str], _text: str) -> Diagnostic | None:
    return Diagnostic("git", "patch_conflict", match.start(), match.end(),
                      path=match.group("path"), subject=match.group("path"),
                      message=match.group(0).strip())


def _git_overwritten(match: re.Match[str], text: str) -> Diagnostic | None:
    following = text[match.end(): match.end() + 400]
    first = re.match(r"\n\t([^\n]+)", following)
    return Diagnostic("git", "dirty_worktree", match.start(), match.end(),
                      path=first.group(1).strip() if first else None,
                      message=match.group(0).strip())


def _simple(family: str, error_class: str, *, subject: str | None = None,
            path: str | None = None) -> _Builder:
    def build(match: re.Match[str], _text: str) -> Diagnostic | None:
        groups = match.groupdict()
        return Diagnostic(family, error_class, match.start(), match.end(),
                          path=groups.get(path) if path else None,
                          subject=groups.get(subject) if subject else None,
                          message=match.group(0).strip())
    return build


def _patch_hunk_failed(match: re.Match[str], text: str) -> Diagnostic | None:
    before = text[max(0, match.start() - 3000): match.start()]
    path = None
    for found in re.finditer(r"(?m)^(?:checking|patching) file '?([^\s']+)'?$", before):
        path = found.group(1)
    return Diagnostic("patch", "patch_conflict", match.start(), match.end(), path=path,
                      subject=path, message=match.group(0).strip())


def _python_no_module(match: re.Match[str], _text: str) -> Diagnostic | None:
    return Diagnostic("python", "missing_module", match.start(), match.end(),
                      subject=match.group("mod"), message=match.group(0).strip(),
                      exc_type="ModuleNotFoundError")


def _python_missing_script(match: re.Match[str], _text: str) -> Diagnostic | None:
    return Diagnostic("python", "file_not_found", match.start(), match.end(),
                      path=match.group("path"), message=match.group(0).strip())


_PATH = r"(?P<path>[^\s:()'\"][^:\n()'\"]*?)"
RULES: Final[tuple[Rule, ...]] = (
    # missing programs (a shell, sudo, env, xargs, timeout, zsh, make)
    Rule("shell", "not found", re.compile(
        r"(?m)^(?:(?:/usr)?/bin/)?(?:ba|da|z|k|c|tc)?sh(?:: line \d+)?: (?:\d+: )?"
        r"(?P<prog>[^\s:]+): (?:command )?not found$"), _command_not_found),
    Rule("shell", "command not found: ", re.compile(
        r"(?m)^(?:zsh|fish): command not found: (?P<prog>[^\s]+)$"), _command_not_found),
    Rule("shell", "command not found", re.compile(
        r"(?m)^(?:sudo|doas|env|nohup|xargs|time|nice|exec|timeout): (?P<prog>[^\s:]+): "
        r"command not found$"), _command_not_found),
    Rule("shell", "Unknown command:", re.compile(
        r"(?m)^fish: Unknown command:? (?P<prog>[^\s]+)$"), _command_not_found),
    # gcc / g++ / clang diagnostics, and mypy's (same shape; told apart by the file extension)
    Rule("cpp", "error:", re.compile(
        r"(?m)^" + _PATH + r":\d+:(?:\d+:)? (?:fatal )?error: (?P<msg>[^\n]*?)"
        r"(?:  \[(?P<mypycode>[\w-]+)\])?$"), _file_error),
    # linkers
    Rule("ld", "undefined reference to", re.compile(
        r"undefined reference to [`'\u2018\"](?P<sym>[^\n`'\u2018\u2019\"]+)['\u2019\"]"),
        _ld_undefined),
    Rule("ld", "undefined symbol:", re.compile(
        r"(?m)^(?:ld(?:\.lld)?|lld|ld64\.lld|[^\s:]*ld): error: undefined symbol: "
        r"(?P<sym>[^\n]+)$"), _lld_undefined),
    Rule("ld", "Undefined symbols", re.compile(
        r"(?m)^Undefined symbols for architecture [\w-]+:\n +\"(?P<sym>[^\"\n]+)\", "
        r"referenced from"), _macos_undefined),
    # rustc / cargo
    Rule("rust", "error", re.compile(
        r"(?m)^error(?:\[(?P<code>E\d{4})\])?: (?P<msg>[^\n]+)$"), _rust_error),
    # javac / maven
    Rule("java", ".java:", re.compile(
        r"(?m)^(?:\[ERROR\] )?(?P<path>[^\s:][^:\n]*\.java):\d+: error: (?P<msg>[^\n]+)$"),
        _javac_error),
    Rule("java", "[ERROR]", re.compile(
        r"(?m)^\[ERROR\] (?P<path>[^\s:][^:\n]*\.java):\[\d+(?:,\d+)?\] (?P<msg>[^\n]+)$"),
        _javac_error),
    Rule("java", "compiler.err.", re.compile(
        r"(?m)^(?P<path>[^\s:][^:\n]*\.java):\d+:(?:\d+:)? compiler\.err\.(?P<key>[\w.]+): ?"
        r"(?P<msg>[^\n]*)$"), _javac_raw),
    # tsc (plain and --pretty after colour is stripped)
    Rule("ts", "error TS", re.compile(
        r"(?m)^(?P<path>[^\s(][^\n(]*?)\(\d+,\d+\): error (?P<code>TS\d+): (?P<msg>[^\n]+)$"),
        _tsc_error),
    Rule("ts", "error TS", re.compile(
        r"(?m)^(?P<path>[^\s:][^:\n]*?):\d+:\d+ - error (?P<code>TS\d+): (?P<msg>[^\n]+)$"),
        _tsc_error),
    # node uncaught errors, npm
    Rule("node", "    at ", re.compile(
        r"(?m)^(?:Uncaught )?(?P<type>[A-Z]\w*(?:Error|Exception)|Error)"
        r"(?: \[[A-Z_]+\])?(?:: (?P<msg>[^\n]*))?$"), _node_error),
    Rule("npm", "code ", re.compile(r"(?m)^npm (?:ERR!|error) code (?P<code>[\w-]+)$"),
         _npm_error),
    Rule("npm", "Missing script", re.compile(
        r"(?m)^npm (?:ERR!|error) Missing script: \"?(?P<script>[^\s\"]+)\"?$"),
        _npm_missing_script),
    # pytest, unittest (and django's runner)
    Rule("pytest", "FAILED ", re.compile(
        r"(?m)^FAILED (?P<node>[^\s]+::[^\n]+?)(?: - (?P<msg>[^\n]*))?$"), _pytest_failed),
    Rule("pytest", "ERROR ", re.compile(
        r"(?m)^ERROR (?P<node>[^\s]+)(?: - (?P<msg>[^\n]*))?$"), _pytest_error),
    Rule("pytest", "ERROR collecting", re.compile(
        r"(?m)^_+ ERROR collecting (?P<path>[^\s]+) _+$"), _pytest_collecting),
    Rule("unittest", ": test", re.compile(
        r"(?m)^(?P<kind>FAIL|ERROR): (?P<name>\w+) \((?P<where>[\w.]+)\)"), _unittest_failure),
    # ruff / flake8 (concise) and ruff (full)
    Rule("ruff", ": ", re.compile(
        r"(?m)^" + _PATH + r":\d+:\d+: (?P<code>[A-Z]{1,4}\d{2,5}) (?:\[\*\] )?"
        r"(?P<msg>[^\n]+)$"), _ruff_concise),
    Rule("ruff", "--> ", re.compile(
        r"(?m)^(?P<code>[A-Z]{1,4}\d{2,5}) (?:\[\*\] )?(?P<msg>[^\n]+)\n +--> "
        r"(?P<path>[^\n:]+):\d+:\d+$"), _ruff_full),
    # make
    Rule("make", "No rule to make target", re.compile(
        r"(?m)^make(?:\[\d+\])?: \*\*\* No rule to make target [`'\u2018]"
        r"(?P<target>[^\n]+?)['\u2019][^\n]*$"), _make_no_rule),
    Rule("make", "Error ", re.compile(
        r"(?m)^make(?:\[\d+\])?: \*\*\* \[(?P<file>[^\s:\]]+)(?::\d+)?:?[^\n\]]*\] "
        r"Error (?P<status>\d+)"), _make_recipe),
    Rule("make", "No targets specified", re.compile(
        r"(?m)^make(?:\[\d+\])?: \*\*\* No targets specified and no makefile found"),
        _simple("make", "no_rule_to_make_target")),
    # git
    Rule("git", "CONFLICT (", re.compile(
        r"(?m)^CONFLICT \((?P<kind>[\w/ -]+)\): (?:Merge conflict in (?P<file>[^\n]+)|"
        r"(?P<first>[^\s]+)[^\n]*)$"), _git_conflict),
    Rule("git", "patch failed:", re.compile(
        r"(?m)^error: patch failed: (?P<path>[^\n:]+):\d+$"), _git_patch_failed),
    Rule("git", "patch does not apply", re.compile(
        r"(?m)^error: (?P<path>[^\n:]+): patch does not apply$"), _git_patch_failed),
    Rule("git", "corrupt patch", re.compile(r"(?m)^error: corrupt patch at line \d+$"),
         _simple("git", "corrupt_patch")),
    Rule("git", "would be overwritten by", re.compile(
        r"(?m)^error: Your local changes to the following files would be overwritten by "
        r"[^\n]*$"), _git_overwritten),
    Rule("git", "fatal: ", re.compile(r"(?m)^fatal: (?P<msg>[^\n]+)$"),
         _simple("git", "git_error")),
    # GNU patch
    Rule("patch", "FAILED at", re.compile(r"(?m)^Hunk #\d+ FAILED at \d+[^\n]*$"),
         _patch_hunk_failed),
    Rule("patch", "malformed patch", re.compile(r"(?m)^patch: \*\*\*\* malformed patch[^\n]*$"),
         _simple("patch", "corrupt_patch")),
    Rule("patch", "can't find file to patch", re.compile(
        r"(?m)^can't find file to patch[^\n]*$"), _simple("patch", "file_not_found")),
    # python itself
    Rule("python", "can't open file", re.compile(
        r"(?m)^[^\s:]*python[\d.]*: can't open file [`'\u2018\"](?P<path>[^\n'\"\u2019]+)"
        r"['\u2019\"]: \[Errno 2\][^\n]*$"), _python_missing_script),
    Rule("python", "No module named", re.compile(
        r"(?m)^[^\s:]*python[\d.]*: No module named (?P<mod>[\w.]+)$"), _python_no_module),
    # coreutils and friends: a file operand that does not exist
    Rule("shell", "No such file or directory", re.compile(
        r"(?m)^(?P<prog>[\w.+-]+): (?:cannot (?:stat|access|open|remove) )?"
        r"[`'\u2018\"]?(?P<path>[^\n'\u2019\"]+?)[`'\u2019\"]?: No such file or directory$"),
        _simple("shell", "file_not_found", path="path")),
)
"""Every tool family's patterns, in table order (the order breaks ties at equal positions)."""


# -- Python tracebacks ----------------------------------------------------------------------
# after the last frame, the first line at column 0 that is a dotted name is the exception line
_EXC_LINE: Final = re.compile(r"(?m)^(?P<type>[A-Za-z_][\w.]*)(?:: (?P<msg>[^\n]*))?$")
_FRAME_RE: Final = re.compile(r'(?m)^ {2}File "(?P<path>[^"\n]+)", line \d+')
_TRACEBACK_HEAD: Final = "Traceback (most recent call last):"
_MODULE_RE: Final = re.compile(r"^No module named ['\"]?([\w.]+)['\"]?")


@dataclass(frozen=True, slots=True)
class PythonTraceback:
    """The last Python traceback of a text: its exception line and frames."""

    exc_type: str
    message: str
    frames: tuple[str, ...]
    """Frame file paths, outermost first."""
    text: str
    start: int
    end: int


def parse_python_traceback(text: str) -> PythonTraceback | None:
    """The last Python traceback in ``text`` (or a bare ``SyntaxError`` report), or None.

    The exception line is the last ``TypeName: message`` line at column 0 that follows frame
    lines (``  File "...", line N``); the frames are those between it and the closest preceding
    ``Traceback (most recent call last):`` (or the first frame of the block).
    """
    last_frame = None
    for last_frame in _FRAME_RE.finditer(text):  # noqa: B007 - the last frame is wanted
        pass
    if last_frame is None:
        return None
    exc = _EXC_LINE.search(text, last_frame.end())
    if exc is None:
        return None
    head = text.rfind(_TRACEBACK_HEAD, 0, last_frame.start())
    start = head if head >= 0 else last_frame.start()
    # a chained traceback's earlier parts end before this head: keep only this block's frames
    frames = tuple(m.group("path") for m in _FRAME_RE.finditer(text, start, exc.start()))
    return PythonTraceback(exc.group("type"), (exc.group("msg") or "").strip(), frames,
                           text[start: exc.end()], start, exc.end())


_CHAINED: Final = ("The above exception was the direct cause of the following exception:",
                   "During handling of the above exception, another exception occurred:")
_MAX_CHAIN: Final = 8


def _chained_missing_module(text: str, tb: PythonTraceback) -> str | None:
    """The module of a ModuleNotFoundError the last traceback was raised from or while
    handling (``raise ImportError("install X") from exc``), nearest cause first; else None."""
    current = tb
    for _ in range(_MAX_CHAIN):
        before = text[max(0, current.start - 300): current.start]
        if not any(phrase in before for phrase in _CHAINED):
            return None
        previous = parse_python_traceback(text[: current.start])
        if previous is None:
            return None
        if previous.exc_type.rsplit(".", 1)[-1] == "ModuleNotFoundError" and (
                found := _MODULE_RE.match(previous.message)):
            return found.group(1)
        current = previous
    return None


def _python_diagnostic(text: str) -> Diagnostic | None:
    tb = parse_python_traceback(text)
    if tb is None:
        return None
    short = tb.exc_type.rsplit(".", 1)[-1]
    subject = None
    if short == "ModuleNotFoundError" and (found := _MODULE_RE.match(tb.message)):
        error_class, subject = "missing_module", found.group(1)
    elif short in ("ImportError", "RuntimeError", "Exception") and (
            cause := _chained_missing_module(text, tb)) is not None:
        error_class, subject = "missing_module", cause
    elif short in ("SyntaxError", "IndentationError", "TabError"):
        error_class = "syntax_error"
    elif short == "NameError" and (found := re.match(r"name '(\w+)' is not defined",
                                                     tb.message)):
        error_class, subject = "undeclared_identifier", found.group(1)
    else:
        error_class = "uncaught_exception"
    return Diagnostic("python", error_class, tb.start, tb.end, subject=subject,
                      message=f"{tb.exc_type}: {tb.message}" if tb.message else tb.exc_type,
                      frames=tb.frames, exc_type=tb.exc_type, traceback=tb.text)


_KEPT_PER_RULE: Final = 3
_ATTEMPTS_PER_RULE: Final = 64


def find_diagnostics(text: str) -> list[Diagnostic]:
    """Every diagnostic the tables find in ``text`` (already capped and ANSI-stripped).

    Each rule contributes its first few matches among its first 64; the last Python traceback
    is added. The list is ordered by position in the text.
    """
    found: list[Diagnostic] = []
    for rule in RULES:
        if rule.gate not in text:
            continue
        kept = 0
        # A builder may read a window around its match and still decline it (a bare
        # "Error: ..." line is no node crash); bounding the attempts, not only the kept
        # matches, keeps a text of many declined matches linear.
        for attempt, match in enumerate(rule.pattern.finditer(text), 1):
            diagnostic = rule.build(match, text)
            if diagnostic is not None:
                found.append(diagnostic)
                kept += 1
                if kept >= _KEPT_PER_RULE:
                    break
            if attempt >= _ATTEMPTS_PER_RULE:
                break
    if 'File "' in text:
        python = _python_diagnostic(text)
        if python is not None:
            found.append(python)
    found.sort(key=lambda d: d.start)
    return found
