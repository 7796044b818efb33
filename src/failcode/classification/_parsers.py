"""Parsers of real tool output: compilers, linkers, test runners, linters, make, git, shells,
package managers.

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
``command_not_found``, ``timeout``; plus the finer classes listed in :data:`EXTRA_CLASSES`,
among them a package manager's verdict on an install (:data:`INSTALL_CLASSES`).

Parsers never decide the code: the ``_command`` module does, from the purpose and the class.
"""

from __future__ import annotations

import posixpath
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote

from failcode._lazy_re import lazy

__all__ = [
    "CORE_CLASSES",
    "EXTRA_CLASSES",
    "INSTALL_CLASSES",
    "RULES",
    "SCAN_BYTES",
    "Diagnostic",
    "PythonTraceback",
    "cap_text",
    "find_diagnostics",
    "import_from_library",
    "is_library_path",
    "is_local_module",
    "package_name",
    "parse_python_traceback",
    "strip_ansi",
    "unframe",
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
    "npm_error", "missing_script", "package_not_found", "package_build_failed",
    "dependency_conflict", "package_source_unreachable", "remote_unreachable", "push_rejected",
    "permission_denied", "unbound_variable",
)  # fmt: skip
"""Finer classes a parser may report when no core class fits (also public, documented)."""

_ANSI_RE: Final = lazy(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def strip_ansi(text: str) -> str:
    """``text`` without terminal colour and hyperlink escapes (``--pretty`` tsc, cargo, ruff)."""
    return _ANSI_RE.sub("", text) if "\x1b" in text else text


_FRAME_TAG: Final = lazy(
    r"</?(?:untrusted_context|untrusted-context|output|stdout|stderr|tool_output|"
    r"command_output)\b[^>\n]{0,200}>")
_OUTPUT_LABEL: Final = lazy(r"(?m)^(?:Output|Stdout|Stderr|STDOUT|STDERR|stdout|stderr):"
                            r"[ \t]*(?:\n|(?=\S))")


def unframe(text: str) -> str:
    """The tool's own words inside an agent's framing of them: wrapper tags
    (``<untrusted_context>``, ``<output>``, ``<stdout>``...) and an ``Output:`` label
    removed, and text indented as a whole (every line) brought back to the margin, so the
    rules anchored at a line's start see the lines the tool printed."""
    if "<" in text:
        text = _FRAME_TAG.sub("", text)
    if "ut:" in text or "err:" in text or "OUT:" in text or "ERR:" in text:
        text = _OUTPUT_LABEL.sub("", text)
    if text[:1] in (" ", "\t", "\n"):
        text = textwrap.dedent(text)
    return text


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
    make, git, patch, shell, go; the package managers pip, apt, yarn, pnpm, conda, gem, brew,
    dnf, apk, pacman, zypper, uv, poetry, and pubgrub (the solver text poetry and dart share)."""
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
    (lazy(rf"^{_Q}({_NQ}+)[\u2019'] undeclared"), "undeclared_identifier", 1),
    (lazy(rf"^{_Q}({_NQ}+)[\u2019'] was not declared in this scope"),
     "undeclared_identifier", 1),
    (lazy(rf"^use of undeclared identifier {_Q}({_NQ}+)[\u2019']"),
     "undeclared_identifier", 1),
    (lazy(rf"^unknown type name {_Q}({_NQ}+)[\u2019']"), "undeclared_identifier", 1),
    (lazy(rf"^{_Q}({_NQ}+)[\u2019'] does not name a type"), "undeclared_identifier", 1),
    (lazy(rf"^implicit declaration of function {_Q}({_NQ}+)[\u2019']"),
     "undeclared_identifier", 1),
    (lazy(rf"^{_Q}?([^\u2018\u2019'`\"\n:]+?)[\u2019']?: No such file or directory$"),
     "missing_header", 1),
    (lazy(rf"^{_Q}({_NQ}+)[\u2019'] file not found"), "missing_header", 1),
    (lazy(r"^(?:expected |stray |missing terminating |unterminated |extraneous )"),
     "syntax_error", 0),
    (lazy(r"^(?:cannot convert |invalid conversion |no matching function|"
                r"cannot initialize |assigning to |no viable conversion|conversion from )|"
                r"\bincompatible (?:pointer )?types?\b"), "type_mismatch", 0),
)

# The Go compiler (``go build``, ``go vet``, ``go test``'s build step): ``./main.go:5:2:
# undefined: x`` under a ``# example.com/m`` package header; the messages of go/types
_GO_MESSAGES: Final[tuple[_MessageRule, ...]] = (
    (lazy(r"^undefined: ([\w.]+)"), "undeclared_identifier", 1),
    (lazy(r"^(?:syntax error: |expected |missing )"), "syntax_error", 0),
    (lazy(r"^(?:cannot use |invalid operation: |mismatched types |cannot convert )"),
     "type_mismatch", 0),
)
_GO_NOT_COMPILER: Final = ("no required module provides package", "cannot find package")

_RUST_MESSAGES: Final[tuple[_MessageRule, ...]] = (
    (lazy(r"^cannot find (?:value|function|macro|type|struct|trait|crate) `([^`\n]+)`"),
     "undeclared_identifier", 1),
    (lazy(r"^failed to resolve: use of undeclared (?:type|crate or module) `([^`\n]+)`"),
     "undeclared_identifier", 1),
    (lazy(r"^unresolved import `([^`\n]+)`"), "missing_module", 1),
    (lazy(r"^can't find crate for `([^`\n]+)`"), "missing_module", 1),
    # cargo's resolver and registry: a crate or version that does not exist, a conflict
    (lazy(r"^no matching package named `([^`\n]+)` found"), "package_not_found", 1),
    (lazy(r"^the crate `([^`@\n]+)[^`\n]*` could not be found in registry index"),
     "package_not_found", 1),
    (lazy(r"^could not find `([^`\n]+)` in registry"), "package_not_found", 1),
    (lazy(r"^failed to select a version for the requirement `([^`\s=]+)"),
     "package_not_found", 1),
    (lazy(r"^failed to select a version for `([^`\n]+)`"), "dependency_conflict", 1),
    (lazy(r"^mismatched types"), "type_mismatch", 0),
    (lazy(r"^expected .*, found "), "syntax_error", 0),
    (lazy(r"^(?:expected |unexpected closing delimiter|this file contains an unclosed)"),
     "syntax_error", 0),
    (lazy(r"^linking with `[^`\n]+` failed"), "link_error", 0),
)
_RUST_NOISE: Final = lazy(
    r"^(?:aborting due to|could not compile|Some errors have|For more information|"
    r"build failed|failed to run custom build command|"
    # cargo test's own summary after a test binary failed (cargo_test.rs): not a compile error
    r"(?:doc)?test failed, to rerun pass|bench failed|\d+ targets failed:)")

_JAVA_MESSAGES: Final[tuple[tuple[re.Pattern[str], str, int, str], ...]] = (
    # (message, class, subject group, javac's diagnostic key)
    (lazy(r"^cannot find symbol"), "undeclared_identifier", 0, "compiler.err.cant.resolve"),
    (lazy(r"^package ([\w.]+) does not exist"), "missing_module", 1,
     "compiler.err.doesnt.exist"),
    (lazy(r"^incompatible types"), "type_mismatch", 0, "compiler.err.prob.found.req"),
    (lazy(r"^(?:'.+' expected|<identifier> expected|class, interface, enum, or record "
                r"expected)"), "syntax_error", 0, "compiler.err.expected"),
    (lazy(r"^illegal start of (type|expression)"), "syntax_error", 0,
     "compiler.err.illegal.start"),
    (lazy(r"^reached end of file while parsing"), "syntax_error", 0,
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
_TS_SUBJECT: Final = lazy(r"^Cannot find (?:name|module) '([^'\n]+)'")


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


_LD_SOURCE: Final = lazy(r"(?m)(?:^|[\s:])([^\s:()]+):\(\.[^)\n]*\)")
_LD_SOURCE_LINE: Final = lazy(r"(?m)(?:^|\s)([^\s:()]+):\d+:\s*$")


def _go_error(match: re.Match[str], _text: str) -> Diagnostic | None:
    """``path.go:line:col: message`` from the Go compiler (a missing package is the go
    command's own rule)."""
    message = match.group("msg").strip()
    if message.startswith(_GO_NOT_COMPILER):
        return None
    error_class, subject = _classify_message(message, _GO_MESSAGES, "compile_error")
    return Diagnostic("go", error_class, match.start(), match.end(), path=match.group("path"),
                      subject=subject, message=message)


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
    if message.startswith("no matching package found"):  # cargo 1.7x+: a near miss follows
        searched = re.search(r"\nsearched package name: `([^`\n]+)`",
                             text[match.end(): match.end() + 400])
        error_class, subject = "package_not_found", searched.group(1) if searched else None
    fetch = _cargo_fetch(message, text[match.end(): match.end() + 3000])
    if fetch is not None:
        error_class, subject = fetch
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


_NODE_FRAME = lazy(r"\n {4}at (?:[^\n]*?\()?((?:file://)?/?[^\s():]+):\d+:\d+\)?")


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
    installing = _npm_install(code, match, text[match.end(): match.end() + 1500])
    if installing is not None:
        return installing
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


_COLLECT_MISSING: Final = lazy(r"\nE +ModuleNotFoundError: No module named ['\"]?([\w.]+)")


def _pytest_collecting(match: re.Match[str], text: str) -> Diagnostic | None:
    following = text[match.end(): match.end() + 6000]
    exc = re.search(r"\nE +([A-Za-z_][\w.]*(?:Error|Exception)):", following)
    if exc is not None and exc.group(1) == "ModuleNotFoundError" and (
            missing := _COLLECT_MISSING.search(following)) is not None:
        # the test module could not be imported for a module that is not there: no test ran
        return Diagnostic("pytest", "missing_module", match.start(), match.end(),
                          path=match.group("path"), subject=missing.group(1),
                          message=match.group(0).strip("_ \n"), exc_type=exc.group(1))
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


_MAKE_MISSING: Final = lazy(
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


def _git_remote(match: re.Match[str], _text: str) -> Diagnostic | None:
    remote = (match.group("remote") or match.group("url") or match.group("repo")
              or match.group("login"))
    return Diagnostic("git", "remote_unreachable", match.start(), match.end(),
                      subject=remote, message=match.group(0).strip())


def _perl_missing(match: re.Match[str], _text: str) -> Diagnostic | None:
    module = match.group("mod") or match.group("file").replace("/", "::")
    return Diagnostic("perl", "missing_module", match.start(), match.end(), subject=module,
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


def _shell_missing(match: re.Match[str], _text: str) -> Diagnostic | None:
    """The shell's own "No such file or directory": the builtin that said it (``cd``), else the
    shell itself (a redirect); the path is the one the command named."""
    groups = match.groupdict()
    return Diagnostic("shell", "file_not_found", match.start(), match.end(),
                      path=groups["path"].strip(), subject=groups.get("builtin") or
                      groups["shell"], message=match.group(0).strip())


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


# -- package managers: a package not found, not installable, or its sources unreachable ------
INSTALL_CLASSES: Final = ("package_not_found", "package_build_failed", "dependency_conflict",
                          "package_source_unreachable")
"""The classes of a package manager's own verdict on an install (pip, apt, npm, cargo...)."""

# A connection failure in an installer's words (resolver, socket, proxy, TLS). It is only read in
# the lines an installer prints as the reason a fetch failed, never in free text.
_NETWORK: Final = lazy(
    r"temporary failure (?:in name resolution|resolving)|could(?: not|n't) resolve|"
    r"name or service not known|nodename nor servname|no address associated with hostname|"
    r"getaddrinfo|failed to establish a new connection|connection refused|econnrefused|"
    r"econnreset|etimedout|enetunreach|ehostunreach|eai_again|enotfound|network is unreachable|"
    r"no route to host|could(?: not|n't) connect|failed to connect|unable to connect|"
    r"connection (?:timed out|failed|reset)|operation timed out|timeout was reached|"
    r"i/o timeout|dial tcp|no such host|dns error|tcp connect error|connection failed|"
    r"could not reach host|proxyconnect|proxyerror|newconnectionerror|connecttimeouterror|"
    r"readtimeouterror|nameresolutionerror|sslerror|certificate verify failed|"
    r"tls handshake timeout|socket hang up|timed out", re.IGNORECASE)
_SPEC_NAME: Final = lazy(r"@?[^\s=<>!~;\[\](),@'\"`]+")


def package_name(spec: str | None) -> str | None:
    """The package a requirement names: ``pc==9.9`` -> ``pc``, ``'x@*'`` -> ``x``,
    ``@scope/x@^1`` -> ``@scope/x``, ``numpy[extra]>=1`` -> ``numpy``; None for an option."""
    if not spec:
        return None
    match = _SPEC_NAME.match(spec.strip().strip("'\"`\u2018\u2019"))
    name = match.group(0).rstrip(".:") if match else ""
    return name if name and not name.startswith("-") else None


def _url_package(url: str) -> str | None:
    """The package at the end of a registry URL (``.../@scope%2fname`` -> ``@scope/name``)."""
    parts = [part for part in url.split("?", 1)[0].split("/") if part]
    if len(parts) < 2:  # a scheme and a host, no path
        return None
    name = unquote(parts[-1])
    if len(parts) > 3 and parts[-2].startswith("@"):  # a scheme, a host, a scope
        name = f"{unquote(parts[-2])}/{name}"
    return package_name(name)


def _pkg(family: str, error_class: str, *, group: str | None = "name") -> _Builder:
    """A builder of an install verdict whose package is the match's ``group``."""
    def build(match: re.Match[str], _text: str) -> Diagnostic | None:
        groups = match.groupdict()
        return Diagnostic(family, error_class, match.start(), match.end(),
                          code=groups.get("code"),
                          subject=package_name(groups.get(group)) if group else None,
                          message=match.group(0).strip())
    return build


def _network_if(family: str) -> _Builder:
    """A builder that keeps a fetch failure only when its reason is a connection failure."""
    def build(match: re.Match[str], _text: str) -> Diagnostic | None:
        if not _NETWORK.search(match.group(0)):
            return None
        return Diagnostic(family, "package_source_unreachable", match.start(), match.end(),
                          message=match.group(0).strip())
    return build


def _nearest(pattern: re.Pattern[str], text: str, position: int) -> re.Match[str] | None:
    """The last match of ``pattern`` within 3000 characters before ``position``, else the first
    anywhere: a tool's stdout and stderr are read one after the other, so a line printed just
    before an error may come after it in the text. Called by builders that always keep their
    match, so at most a few times per rule: linear in the text."""
    found = None
    for found in pattern.finditer(text, max(0, position - 3000), position):  # noqa: B007
        pass
    return found or pattern.search(text)


_PIP_BUILDING: Final = lazy(
    r"\n *\u00d7 (?:Building wheel for|Running setup\.py install for) ([^\s]+)|\n *╰─> ([\w.-]+)\n")
_PIP_COLLECTING: Final = lazy(r"(?m)^ *(?:Collecting|Processing) ([^\s]+)")


def _pip_build(match: re.Match[str], text: str) -> Diagnostic | None:
    """pip's failed build of a package (``error: subprocess-exited-with-error`` and kin): the
    package is named in the box that follows, else by the last ``Collecting``/``Processing``."""
    found = _PIP_BUILDING.search(text, match.end(), match.end() + 3000)
    name = (found.group(1) or found.group(2)) if found else None
    if name is None:
        last = _nearest(_PIP_COLLECTING, text, match.start())
        if last is not None:
            name = posixpath.basename(last.group(1).rstrip("/"))
    return Diagnostic("pip", "package_build_failed", match.start(), match.end(),
                      code=match.groupdict().get("code"), subject=package_name(name),
                      message=match.group(0).strip())


_APT_UNMET: Final = lazy(r"unmet dependencies:\n +([^\s:]+) :")


def _apt_broken(match: re.Match[str], text: str) -> Diagnostic | None:
    """apt's unsatisfiable request, naming the first package whose dependencies are unmet."""
    unmet = _nearest(_APT_UNMET, text, match.start())
    return Diagnostic("apt", "dependency_conflict", match.start(), match.end(),
                      subject=unmet.group(1) if unmet else None, message=match.group(0).strip())


def _apt_fetch(match: re.Match[str], _text: str) -> Diagnostic | None:
    """``E: Failed to fetch URL  reason``: unreachable sources, or (404) a stale index."""
    reason = match.group("msg")
    if _NETWORK.search(reason):
        return Diagnostic("apt", "package_source_unreachable", match.start(), match.end(),
                          message=match.group(0).strip())
    if "404" in reason:
        archive = posixpath.basename(match.group("url"))
        return Diagnostic("apt", "package_not_found", match.start(), match.end(),
                          subject=package_name(archive.split("_", 1)[0]) if archive.endswith(
                              ".deb") else None, message=match.group(0).strip())
    return None


_NPM_LINE: Final = r"\nnpm (?:ERR!|error) "
_NPM_SPEC: Final = lazy(
    _NPM_LINE + r"(?:404 +(?:The requested resource )?'(?P<quoted>[^'\n]+)'|"
    r"notarget No matching version found for (?P<version>[^\s]+?)\.?(?=\n|$))")
_NPM_URL: Final = lazy(_NPM_LINE + r"404 Not Found - [A-Z]+ (?P<url>[^\s]+)")
_NPM_CONFLICT: Final = lazy(
    _NPM_LINE + r"(?:Could not resolve dependency:" + _NPM_LINE +
    r"(?:peer |dev |optional |peerOptional )*|Conflicting peer dependency: )(?P<spec>[^\s]+)")
_NPM_NETWORK_CODES: Final = frozenset({
    "ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNRESET", "ENETUNREACH",
    "EHOSTUNREACH", "ECONNABORTED", "ERR_SOCKET_TIMEOUT", "SELF_SIGNED_CERT_IN_CHAIN",
    "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "UNABLE_TO_VERIFY_LEAF_SIGNATURE", "CERT_HAS_EXPIRED",
})  # fmt: skip


def _npm_install(code: str, match: re.Match[str], following: str) -> Diagnostic | None:
    """npm's install verdicts by its error code: E404/ETARGET, ERESOLVE, connection codes."""
    if code in ("E404", "ETARGET"):
        spec = _NPM_SPEC.search(following)
        url = _NPM_URL.search(following)
        name = package_name(spec.group("quoted") or spec.group("version")) if spec else (
            _url_package(url.group("url")) if url else None)
        return Diagnostic("npm", "package_not_found", match.start(), match.end(), code=code,
                          subject=name, message=match.group(0).strip())
    if code == "ERESOLVE":
        conflict = _NPM_CONFLICT.search(following)
        return Diagnostic("npm", "dependency_conflict", match.start(), match.end(), code=code,
                          subject=package_name(conflict.group("spec")) if conflict else None,
                          message=match.group(0).strip())
    if code in _NPM_NETWORK_CODES:
        return Diagnostic("npm", "package_source_unreachable", match.start(), match.end(),
                          code=code, message=match.group(0).strip())
    return None


def _fetch_verdict(family: str, match: re.Match[str], reason: str,
                   name: str | None) -> Diagnostic | None:
    """A registry fetch that failed: not found (404, "Not found") or unreachable, else None."""
    if re.search(r"\b404\b|not found", reason, re.IGNORECASE):
        return Diagnostic(family, "package_not_found", match.start(), match.end(),
                          code=match.groupdict().get("code"), subject=name,
                          message=match.group(0).strip())
    if _NETWORK.search(reason):
        return Diagnostic(family, "package_source_unreachable", match.start(), match.end(),
                          code=match.groupdict().get("code"), message=match.group(0).strip())
    return None


def _yarn_fetch(match: re.Match[str], _text: str) -> Diagnostic | None:
    """yarn 1: ``error An unexpected error occurred: "URL: reason".``"""
    return _fetch_verdict("yarn", match, match.group("msg"), _url_package(match.group("url")))


def _yarn_berry(match: re.Match[str], text: str) -> Diagnostic | None:
    """yarn 2+: ``YN0035: │ x@npm:^1: Package not found`` (or its response code below)."""
    block = match.group("msg") + text[match.end(): match.end() + 400]
    if "Package not found" in match.group("msg") or "Response Code: 404" in block:
        return Diagnostic("yarn", "package_not_found", match.start(), match.end(), code="YN0035",
                          subject=package_name(match.group("name")),
                          message=match.group(0).strip())
    return _fetch_verdict("yarn", match, block, None)


_PNPM_NOT_FOUND: Final = frozenset({"ERR_PNPM_FETCH_404", "ERR_PNPM_NO_MATCHING_VERSION",
                                    "ERR_PNPM_NO_VERSIONS"})


def _pnpm_error(match: re.Match[str], _text: str) -> Diagnostic | None:
    """pnpm's ``ERR_PNPM_*`` codes: a 404 or no matching version, unmet peers, a failed fetch."""
    code, message = match.group("code"), match.group("msg")
    if code in _PNPM_NOT_FOUND:
        url = re.match(r"[A-Z]+ (https?://[^\s]+?):? ", message)
        spec = re.search(r"No matching version found for ([^\s]+)", message)
        name = _url_package(url.group(1)) if url else package_name(
            spec.group(1) if spec else None)
        return Diagnostic("pnpm", "package_not_found", match.start(), match.end(), code=code,
                          subject=name, message=match.group(0).strip())
    if code == "ERR_PNPM_PEER_DEP_ISSUES":
        return Diagnostic("pnpm", "dependency_conflict", match.start(), match.end(), code=code,
                          message=match.group(0).strip())
    if "FETCH" in code and _NETWORK.search(message):
        return Diagnostic("pnpm", "package_source_unreachable", match.start(), match.end(),
                          code=code, message=match.group(0).strip())
    return None


def _conda_listed(match: re.Match[str], text: str) -> Diagnostic | None:
    """conda's ``PackagesNotFoundError:``/``ResolvePackageNotFound:`` and the ``- spec`` list."""
    listed = re.compile(r"\n\s*- ([^\s]+)").search(text, match.end(), match.end() + 600)
    return Diagnostic("conda", "package_not_found", match.start(), match.end(),
                      code=match.group("code"),
                      subject=package_name(listed.group(1)) if listed else None,
                      message=match.group(0).strip())


_CARGO_FETCH: Final = lazy(
    r"^(?:failed to get `([^`\n]+)` as a dependency|failed to load source for dependency "
    r"`([^`\n]+)`|failed to (?:download|query replaced source|update registry|fetch))")


def _cargo_fetch(message: str, following: str) -> tuple[str, str | None] | None:
    """A cargo fetch failure by its ``Caused by:`` chain: unreachable, else not found."""
    fetch = _CARGO_FETCH.match(message)
    if fetch is None:
        return None
    chain = following.split("\nerror", 1)[0]
    if _NETWORK.search(chain):
        return "package_source_unreachable", None
    named = re.search(r"no matching package named `([^`\n]+)`", chain)
    return "package_not_found", named.group(1) if named else (fetch.group(1) or fetch.group(2))


_GO_NOT_FOUND: Final = lazy(
    r"\b(?:404|410)\b|\bnot found\b|unknown revision|invalid version|no matching versions for "
    r"query|module lookup disabled|unrecognized import path|does not contain package|"
    r"repository not found", re.IGNORECASE)


def _go_module(match: re.Match[str], _text: str) -> Diagnostic | None:
    """``go: module X: reason`` / ``go: X@v: reason`` from go get/install/mod."""
    reason = match.group("msg")
    if _NETWORK.search(reason):
        return Diagnostic("go", "package_source_unreachable", match.start(), match.end(),
                          message=match.group(0).strip())
    if _GO_NOT_FOUND.search(reason):
        return Diagnostic("go", "package_not_found", match.start(), match.end(),
                          subject=match.group("name"), message=match.group(0).strip())
    return None


def _go_providing(match: re.Match[str], _text: str) -> Diagnostic | None:
    """``cannot find module providing package X: reason``: unreachable, not found, or missing."""
    reason = match.group("msg")
    if _NETWORK.search(reason):
        return Diagnostic("go", "package_source_unreachable", match.start(), match.end(),
                          message=match.group(0).strip())
    error_class = "package_not_found" if _GO_NOT_FOUND.search(reason) else "missing_module"
    return Diagnostic("go", error_class, match.start(), match.end(), subject=match.group("name"),
                      message=match.group(0).strip())


def _gem_not_found(match: re.Match[str], text: str) -> Diagnostic | None:
    """``ERROR:  Could not find a valid gem 'x' (>= 0) in any repository``, or ``..., here is
    why:`` then ``Unable to download data from URL - reason`` (unreachable)."""
    following = text[match.end(): match.end() + 600]
    why = re.match(r"\n\s+Unable to download data from [^\n]*", following)
    if "here is why" in match.group("msg") and why:
        return Diagnostic("gem", "package_source_unreachable", match.start(), match.end(),
                          message=match.group(0).strip())
    return Diagnostic("gem", "package_not_found", match.start(), match.end(),
                      subject=package_name(match.group("name")), message=match.group(0).strip())


def _gem_build(match: re.Match[str], text: str) -> Diagnostic | None:
    """RubyGems' ``Failed to build gem native extension.``, naming the gem when it is shown."""
    window = text[max(0, match.start() - 600): match.end() + 3000]
    named = re.search(r"An error occurred while installing ([^\s]+) |/gems/([^/\s]+?)-\d[^/\s]*"
                      r" for inspection", window)
    name = (named.group(1) or named.group(2)) if named else None
    return Diagnostic("gem", "package_build_failed", match.start(), match.end(),
                      subject=package_name(name), message=match.group(0).strip())


_UV_MISSING: Final = lazy(
    r"Because (?P<name>[^\s]+) was not found in the\s+(?:package\s+registry|cache|provided\s+"
    r"package\s+locations)")
_UV_BECAUSE: Final = lazy(
    r"Because (?:only |you require |there (?:is|are) no versions? of |your project depends on )?"
    r"(?P<name>[^\s]+)")


def _uv_unsolvable(match: re.Match[str], text: str) -> Diagnostic | None:
    """uv's ``No solution found when resolving`` (after a cross): a conflict, unless the
    explanation says a package was not found (left to that rule)."""
    block = text[match.end(): match.end() + 1500]
    if _UV_MISSING.search(block):
        return None
    because = _UV_BECAUSE.search(block)
    return Diagnostic("uv", "dependency_conflict", match.start(), match.end(),
                      subject=package_name(because.group("name")) if because else None,
                      message=match.group(0).strip())


def _uv_fetch(match: re.Match[str], text: str) -> Diagnostic | None:
    """uv's ``Failed to fetch: `URL``` with its ``Caused by:`` chain."""
    chain = text[match.end(): match.end() + 800].split("\n\n", 1)[0]
    return _fetch_verdict("uv", match, chain, _url_package(match.group("url")))


def _pubgrub_failed(match: re.Match[str], _text: str) -> Diagnostic | None:
    """PubGrub's ``... version solving failed.`` (poetry, dart pub): a conflict, unless the
    line says a requirement matches no version at all (that rule reads it)."""
    if "doesn't match any versions" in match.group(0):
        return None
    return Diagnostic("pubgrub", "dependency_conflict", match.start(), match.end(),
                      message=match.group(0).strip())


_RPM_VERSION_RELEASE_ARCH: Final = lazy(r"-\d[^-\s]*-[^-\s]*\.[^.\s-]+$")


def _dnf_needed(match: re.Match[str], _text: str) -> Diagnostic | None:
    """dnf's ``- nothing provides X needed by NAME-VERSION-RELEASE.ARCH``: a request that
    cannot be satisfied, naming the package (its version, release and arch dropped)."""
    name = _RPM_VERSION_RELEASE_ARCH.sub("", match.group("name"))
    return Diagnostic("dnf", "dependency_conflict", match.start(), match.end(),
                      subject=package_name(name), message=match.group(0).strip())


def _dnf_curl(match: re.Match[str], _text: str) -> Diagnostic | None:
    """dnf/yum's ``- Curl error (6): Couldn't resolve host name ...`` while reading a repo."""
    if match.group("num") not in ("5", "6", "7", "28", "35", "56"):
        return None
    return Diagnostic("dnf", "package_source_unreachable", match.start(), match.end(),
                      message=match.group(0).strip())


_INSTALL_RULES: Final[tuple[Rule, ...]] = (
    # pip (and pip-compile): not found, build failures, conflicts, its own connection retries
    Rule("pip", "satisfies the requirement", lazy(
        r"(?m)^(?:ERROR: )?Could not find a version that satisfies the requirement "
        r"(?P<name>[^\s]+)"), _pkg("pip", "package_not_found")),
    Rule("pip", "No matching distribution found for", lazy(
        r"(?m)^(?:ERROR: )?No matching distribution found for (?P<name>[^\s]+)"),
        _pkg("pip", "package_not_found")),
    Rule("pip", "-with-error", lazy(
        r"(?m)^ *error: (?P<code>subprocess-exited-with-error)$"), _pip_build),
    Rule("pip", "metadata-generation-failed", lazy(
        r"(?m)^ *error: (?P<code>metadata-generation-failed)$"), _pip_build),
    Rule("pip", "legacy-install-failure", lazy(
        r"(?m)^ *error: (?P<code>legacy-install-failure)$"), _pip_build),
    Rule("pip", "Command errored out with exit status", lazy(
        r"(?m)^ERROR: Command errored out with exit status \d+:"), _pip_build),
    Rule("pip", "Failed building wheel for", lazy(
        r"(?m)^ *(?:ERROR: )?Failed building wheel for (?P<name>[^\s]+)"),
        _pkg("pip", "package_build_failed")),
    Rule("pip", "Could not build wheels for", lazy(
        r"(?m)^(?:ERROR: )?Could not build wheels for (?P<name>[^\s,]+)"),
        _pkg("pip", "package_build_failed")),
    Rule("pip", "Failed to build installable wheels", lazy(
        r"(?m)^(?:ERROR: )?Failed to build installable wheels for some pyproject\.toml based "
        r"projects \((?P<name>[^\s,)]+)"), _pkg("pip", "package_build_failed")),
    Rule("pip", "because these package versions have conflicting", lazy(
        r"(?m)^(?:ERROR: )?Cannot install (?P<name>[^\s,]+)[^\n]*because these package "
        r"versions have conflicting dependencies"), _pkg("pip", "dependency_conflict")),
    Rule("pip", "ResolutionImpossible", lazy(
        r"(?m)^(?:ERROR: |[\w.]+: )?ResolutionImpossible\b"),
        _pkg("pip", "dependency_conflict", group=None)),
    Rule("pip", "after connection broken by", lazy(
        r"(?m)^WARNING: Retrying \(Retry\([^\n]*\)\) after connection broken by [^\n]*$"),
        _network_if("pip")),
    Rule("pip", "due to an OSError", lazy(
        r"(?m)^ERROR: Could not install packages due to an OSError: [^\n]*$"),
        _network_if("pip")),
    Rule("pip", "Could not fetch URL", lazy(
        r"(?m)^(?:WARNING: )?Could not fetch URL [^\s]+: [^\n]*$"), _network_if("pip")),
    # apt, apt-get (English messages)
    Rule("apt", "Unable to locate package", lazy(
        r"(?m)^E: Unable to locate package (?P<name>[^\s]+)$"),
        _pkg("apt", "package_not_found")),
    Rule("apt", "has no installation candidate", lazy(
        r"(?m)^E: Package '(?P<name>[^'\n]+)' has no installation candidate$"),
        _pkg("apt", "package_not_found")),
    Rule("apt", "Couldn't find any package by", lazy(
        r"(?m)^E: Couldn't find any package by (?:glob|regex) '(?P<name>[^'\n]+)'$"),
        _pkg("apt", "package_not_found")),
    Rule("apt", "E: Version '", lazy(
        r"(?m)^E: Version '[^'\n]+' for '(?P<name>[^'\n]+)' was not found$"),
        _pkg("apt", "package_not_found")),
    Rule("apt", "held broken packages", lazy(
        r"(?m)^E: Unable to correct problems, you have held broken packages\.?$"), _apt_broken),
    Rule("apt", "E: Unmet dependencies", lazy(r"(?m)^E: Unmet dependencies\.[^\n]*$"),
         _apt_broken),
    Rule("apt", "E: Failed to fetch", lazy(
        r"(?m)^E: Failed to fetch (?P<url>[^\s]+) +(?P<msg>[^\n]*)$"), _apt_fetch),
    # yarn 1 and 2+ (npm's own codes are read by the npm rule above)
    Rule("yarn", "error An unexpected error occurred: ", lazy(
        r"(?m)^error An unexpected error occurred: \"(?P<url>https?://[^\s\"]+?): "
        r"(?P<msg>[^\"\n]*)\"?\.?$"), _yarn_fetch),
    Rule("yarn", "error Error: http", lazy(
        r"(?m)^error Error: (?P<url>https?://[^\s]+?): (?P<msg>[^\n]*)$"), _yarn_fetch),
    Rule("yarn", "Couldn't find package", lazy(
        r"(?m)^error Couldn't find package \"(?P<name>[^\"\n]+)\""),
        _pkg("yarn", "package_not_found")),
    Rule("yarn", "Couldn't find any versions for", lazy(
        r"(?m)^error Couldn't find any versions for \"(?P<name>[^\"\n]+)\""),
        _pkg("yarn", "package_not_found")),
    Rule("yarn", "YN0035", lazy(
        r"(?m)^[^\s]* ?YN0035: [│|]? *(?P<name>[^\s]+): (?P<msg>[^\n]*)$"), _yarn_berry),
    Rule("yarn", "No candidates found", lazy(
        r"(?m)^[^\s]* ?YN0001: [│|]? *(?:\w*Error: )?(?P<name>[^\s]+): No candidates found$"),
        _pkg("yarn", "package_not_found")),
    # pnpm
    Rule("pnpm", "ERR_PNPM_", lazy(
        r"(?m)^ *\[?(?P<code>ERR_PNPM_[A-Z0-9_]+)\]? +(?P<msg>[^\n]*)$"), _pnpm_error),
    # conda, mamba
    Rule("conda", "PackagesNotFoundError", lazy(
        r"(?m)^(?P<code>PackagesNotFoundError): The following packages are not available "
        r"from current channels:?"), _conda_listed),
    Rule("conda", "ResolvePackageNotFound", lazy(
        r"(?m)^(?P<code>ResolvePackageNotFound): ?$"), _conda_listed),
    Rule("conda", "nothing provides requested", lazy(
        r"(?m)^[ \t│├└─-]*nothing provides requested (?P<name>[^\s]+)"),
        _pkg("conda", "package_not_found")),
    Rule("conda", "does not exist (perhaps a typo", lazy(
        r"(?m)^[ \t│├└─]*(?P<name>[^\s│├└─]+) does not exist \(perhaps a typo or a missing "
        r"channel\)"), _pkg("conda", "package_not_found")),
    Rule("conda", "UnsatisfiableError", lazy(
        r"(?m)^(?P<code>(?:LibMamba)?UnsatisfiableError):"),
        _pkg("conda", "dependency_conflict", group=None)),
    Rule("conda", "CONNECTION FAILED", lazy(
        r"(?m)^CondaHTTPError: HTTP 000 CONNECTION FAILED for url [^\n]*$"),
        _network_if("conda")),
    # go (its missing module is read below with the other missing modules)
    Rule("go", "go: ", lazy(
        r"(?m)^go(?: get| install| mod download)?: (?:module )?(?P<name>[^\s:@]+)"
        r"(?:@[^\s:]+)?: (?P<msg>[^\n]*)$"), _go_module),
    Rule("go", "go get ", lazy(
        r"(?m)^go get (?P<name>[^\s:@]+)(?:@[^\s:]+)?: (?P<msg>[^\n]*)$"), _go_module),
    Rule("go", "cannot find module providing package", lazy(
        r"cannot find module providing package (?P<name>[^\s:]+)(?P<msg>[^\n]*)"),
        _go_providing),
    # RubyGems, Bundler
    Rule("gem", "Could not find a valid gem", lazy(
        r"(?m)^ERROR: +Could not find a valid gem '(?P<name>[^'\n]+)' \([^)\n]*\)"
        r"(?P<msg>[^\n]*)$"), _gem_not_found),
    Rule("gem", "Could not find gem '", lazy(
        r"(?m)^Could not find gem '(?P<name>[^'\n]+)' in "), _pkg("gem", "package_not_found")),
    Rule("gem", "could not find compatible versions for gem", lazy(
        r"(?m)^Bundler could not find compatible versions for gem \"(?P<name>[^\"\n]+)\""),
        _pkg("gem", "dependency_conflict")),
    Rule("gem", "Failed to build gem native extension", lazy(
        r"(?m)^ERROR: +Failed to build gem native extension\.?$"), _gem_build),
    Rule("gem", "Could not reach host", lazy(r"(?m)^Could not reach host [^\n]*$"),
         _pkg("gem", "package_source_unreachable", group=None)),
    # Homebrew
    Rule("brew", "No available formula", lazy(
        r"(?m)^(?:Error|Warning): No available formula(?: or cask)? with the name "
        r"\"(?P<name>[^\"\n]+)\""), _pkg("brew", "package_not_found")),
    Rule("brew", "No formulae or casks found for", lazy(
        r"(?m)^(?:Error|Warning): No formulae or casks found for (?P<name>[^\s]+?)\.?$"),
        _pkg("brew", "package_not_found")),
    # dnf, yum, microdnf
    Rule("dnf", "No match for argument", lazy(
        r"(?m)^No match for argument: (?P<name>[^\s]+)$"), _pkg("dnf", "package_not_found")),
    Rule("dnf", "Unable to find a match", lazy(
        r"(?m)^Error: Unable to find a match: (?P<name>[^\s]+)"),
        _pkg("dnf", "package_not_found")),
    Rule("dnf", "No package ", lazy(r"(?m)^No package (?P<name>[^\s]+) available\.$"),
         _pkg("dnf", "package_not_found")),
    Rule("dnf", "nothing provides", lazy(
        r"(?m)^ *- nothing provides [^\s]+ needed by (?P<name>[^\s]+)"), _dnf_needed),
    Rule("dnf", "Curl error (", lazy(
        r"(?m)^ *- Curl error \((?P<num>\d+)\): [^\n]*$"), _dnf_curl),
    # apk, pacman, zypper
    Rule("apk", "(no such package)", lazy(
        r"(?m)^ +(?P<name>[^\s]+) \(no such package\):?$"), _pkg("apk", "package_not_found")),
    Rule("apk", "temporary error (try again later)", lazy(
        r"(?m)^(?:WARNING|ERROR): [^\n]*temporary error \(try again later\)$"),
        _pkg("apk", "package_source_unreachable", group=None)),
    Rule("pacman", "target not found", lazy(
        r"(?m)^error: target not found: (?P<name>[^\s]+)$"),
        _pkg("pacman", "package_not_found")),
    Rule("zypper", "No provider of", lazy(
        r"(?m)^No provider of '(?P<name>[^'\n]+)' found\.?$"),
        _pkg("zypper", "package_not_found")),
    # uv (pip-compatible and project commands)
    Rule("uv", "No solution found when resolving", lazy(
        r"(?m)^ *(?:\u00d7|x|error:) No solution found when resolving[^\n]*$"), _uv_unsolvable),
    Rule("uv", "was not found in the", _UV_MISSING, _pkg("uv", "package_not_found")),
    Rule("uv", "Failed to ", lazy(
        r"(?m)^ *(?:\u00d7|x|error:) Failed to (?:download and )?build `(?P<name>[^`\n]+)`"),
        _pkg("uv", "package_build_failed")),
    Rule("uv", "Failed to fetch: `", lazy(
        r"(?m)^ *(?:\u00d7|x|error:) Failed to fetch: `(?P<url>[^`\n]+)`"), _uv_fetch),
    # PubGrub's explanations (poetry, dart pub) and poetry's own
    Rule("pubgrub", "which doesn't match any versions", lazy(
        r"Because (?:[^\s]+ )?depends on (?P<name>[^\s(]+)(?: \([^)\n]*\)| [^\s]+)? which "
        r"doesn't match any versions"), _pkg("pubgrub", "package_not_found")),
    Rule("pubgrub", "version solving failed", lazy(
        r"(?m)^[^\n]*version solving failed[^\n]*$"), _pubgrub_failed),
    Rule("poetry", "Could not find a matching version of package", lazy(
        r"(?m)^ *Could not find a matching version of package (?P<name>[^\s]+)"),
        _pkg("poetry", "package_not_found")),
)


_PATH = r"(?P<path>[^\s:()'\"][^:\n()'\"]*?)"
# a shell variable as `set -u` names it: FOO, arr[0], m[key], $1
_SHELL_VAR = r"(?P<var>\$?[A-Za-z_][A-Za-z0-9_]{0,127}(?:\[[^\]\n]{0,100}\])?|\$?\d{1,4})"
RULES: Final[tuple[Rule, ...]] = (
    # missing programs (a shell, sudo, env, xargs, timeout, zsh, make)
    Rule("shell", "not found", lazy(
        r"(?m)^(?:(?:/usr)?/bin/)?(?:ba|da|z|k|c|tc)?sh(?:: line \d+)?: (?:\d+: )?"
        r"(?P<prog>[^\s:]+): (?:command )?not found$"), _command_not_found),
    Rule("shell", "command not found: ", lazy(
        r"(?m)^(?:zsh|fish): command not found: (?P<prog>[^\s]+)$"), _command_not_found),
    Rule("shell", "command not found", lazy(
        r"(?m)^(?:sudo|doas|env|nohup|xargs|time|nice|exec|timeout): (?P<prog>[^\s:]+): "
        r"command not found$"), _command_not_found),
    Rule("shell", "Unknown command:", lazy(
        r"(?m)^fish: Unknown command:? (?P<prog>[^\s]+)$"), _command_not_found),
    # the shell could not parse the command line (nothing in it ran): bash ``-c: line 1:
    # syntax error near unexpected token `)'``, ``eval: line 1: unexpected EOF while looking
    # for matching `''``, dash ``1: Syntax error: "(" unexpected``, zsh ``parse error near``
    *(Rule("shell", gate, lazy(
        r"(?m)^(?:[^\s:]*/)?(?P<shell>(?:ba|da|z|k)?sh)(?:: (?:-c|eval))?(?:: line \d+|: ?\d+)?: "
        + said + r".*$"), _simple("shell", "syntax_error", subject="shell"))
      for gate, said in (("yntax error", r"[Ss]yntax error\b"),
                         ("unexpected EOF", r"unexpected EOF while looking for matching\b"),
                         ("parse error", r"parse error\b"))),
    # an editor's diagnostics as agents relay them (VS Code's problems, Cline's "New problems
    # detected after saving the file: - [ts Error] Line 2: Cannot find module 'x' ..."): the
    # TypeScript service's "Cannot find module" (TS2307) is a module the project lacks
    Rule("node", "Cannot find module", lazy(
        r"(?m)^(?:- )?\[(?:ts|js|typescript|javascript) Error\] Line \d+: Cannot find module "
        r"'(?P<mod>[^'\n]+)'"), _simple("node", "missing_module", subject="mod")),
    # Perl's missing module (``Can't locate Foo/Bar.pm in @INC (you may need to install the
    # Foo::Bar module)``) and Ruby's (``cannot load such file -- foo/bar (LoadError)``)
    Rule("perl", "Can't locate ", lazy(
        r"(?m)Can't locate (?P<file>[\w/]+)\.pm in @INC(?: \(you may need to install the "
        r"(?P<mod>[\w:]+) module\))?"), _perl_missing),
    Rule("ruby", "cannot load such file -- ", lazy(
        r"(?m)cannot load such file -- (?P<mod>[\w/.+-]+) \(LoadError\)"),
        _simple("ruby", "missing_module", subject="mod")),
    # Windows: cmd.exe ("'x' is not recognized as an internal or external command,") and
    # PowerShell ("The term 'x' is not recognized as the name of a cmdlet, function, ...")
    Rule("shell", "is not recognized as ", lazy(
        r"(?m)^(?:The term )?'(?P<prog>[^'\n]+)' is not recognized as (?:an internal or "
        r"external command|the name of a cmdlet)"), _command_not_found),
    # `set -u`: a variable the script expands is not set (bash, dash, zsh, ksh); the variable
    # is the identity (FOO and BAR are two failures)
    Rule("shell", "unbound variable", lazy(
        r"(?m)^[^\s:][^\n:]*?(?::\d+)?: (?:line \d+: |\d+: )?" + _SHELL_VAR
        + r": unbound variable$"), _simple("shell", "unbound_variable", subject="var")),
    Rule("shell", "parameter not set", lazy(
        r"(?m)^[^\s:][^\n:]*?(?::\d+)?: (?:line \d+: |\d+: )?" + _SHELL_VAR
        + r": parameter not set$"), _simple("shell", "unbound_variable", subject="var")),
    # gcc / g++ / clang diagnostics, and mypy's (same shape; told apart by the file extension)
    Rule("cpp", "error:", lazy(
        r"(?m)^" + _PATH + r":\d+:(?:\d+:)? (?:fatal )?error: (?P<msg>[^\n]*?)"
        r"(?:  \[(?P<mypycode>[\w-]+)\])?$"), _file_error),
    # linkers
    Rule("ld", "undefined reference to", lazy(
        r"undefined reference to [`'\u2018\"](?P<sym>[^\n`'\u2018\u2019\"]+)['\u2019\"]"),
        _ld_undefined),
    Rule("ld", "undefined symbol:", lazy(
        r"(?m)^(?:ld(?:\.lld)?|lld|ld64\.lld|[^\s:]*ld): error: undefined symbol: "
        r"(?P<sym>[^\n]+)$"), _lld_undefined),
    Rule("ld", "Undefined symbols", lazy(
        r"(?m)^Undefined symbols for architecture [\w-]+:\n +\"(?P<sym>[^\"\n]+)\", "
        r"referenced from"), _macos_undefined),
    # rustc / cargo
    Rule("rust", "error", lazy(
        r"(?m)^error(?:\[(?P<code>E\d{4})\])?: (?P<msg>[^\n]+)$"), _rust_error),
    # javac / maven
    Rule("java", ".java:", lazy(
        r"(?m)^(?:\[ERROR\] )?(?P<path>[^\s:][^:\n]*\.java):\d+: error: (?P<msg>[^\n]+)$"),
        _javac_error),
    Rule("java", "[ERROR]", lazy(
        r"(?m)^\[ERROR\] (?P<path>[^\s:][^:\n]*\.java):\[\d+(?:,\d+)?\] (?P<msg>[^\n]+)$"),
        _javac_error),
    Rule("java", "compiler.err.", lazy(
        r"(?m)^(?P<path>[^\s:][^:\n]*\.java):\d+:(?:\d+:)? compiler\.err\.(?P<key>[\w.]+): ?"
        r"(?P<msg>[^\n]*)$"), _javac_raw),
    # tsc (plain and --pretty after colour is stripped)
    Rule("ts", "error TS", lazy(
        r"(?m)^(?P<path>[^\s(][^\n(]*?)\(\d+,\d+\): error (?P<code>TS\d+): (?P<msg>[^\n]+)$"),
        _tsc_error),
    Rule("ts", "error TS", lazy(
        r"(?m)^(?P<path>[^\s:][^:\n]*?):\d+:\d+ - error (?P<code>TS\d+): (?P<msg>[^\n]+)$"),
        _tsc_error),
    # node uncaught errors, npm
    Rule("node", "    at ", lazy(
        r"(?m)^(?:Uncaught )?(?P<type>[A-Z]\w*(?:Error|Exception)|Error)"
        r"(?: \[[A-Z_]+\])?(?:: (?P<msg>[^\n]*))?$"), _node_error),
    Rule("npm", "code ", lazy(r"(?m)^npm (?:ERR!|error) code (?P<code>[\w-]+)$"),
         _npm_error),
    Rule("npm", "Missing script", lazy(
        r"(?m)^npm (?:ERR!|error) Missing script: \"?(?P<script>[^\s\"]+)\"?$"),
        _npm_missing_script),
    # pytest, unittest (and django's runner)
    Rule("pytest", "FAILED ", lazy(
        r"(?m)^FAILED (?P<node>[^\s]+::[^\n]+?)(?: - (?P<msg>[^\n]*))?$"), _pytest_failed),
    Rule("pytest", "ERROR ", lazy(
        r"(?m)^ERROR (?P<node>[^\s]+)(?: - (?P<msg>[^\n]*))?$"), _pytest_error),
    Rule("pytest", "ERROR collecting", lazy(
        r"(?m)^_+ ERROR collecting (?P<path>[^\s]+) _+$"), _pytest_collecting),
    # a conftest pytest could not import (pytest's exit 4): what it lacks, as collecting does
    Rule("pytest", "ImportError while loading conftest", lazy(
        r"(?m)^ImportError while loading conftest '(?P<path>[^'\n]+)'\.$"), _pytest_collecting),
    Rule("unittest", ": test", lazy(
        r"(?m)^(?P<kind>FAIL|ERROR): (?P<name>\w+) \((?P<where>[\w.]+)\)"), _unittest_failure),
    # ruff / flake8 (concise) and ruff (full)
    Rule("ruff", ": ", lazy(
        r"(?m)^" + _PATH + r":\d+:\d+: (?P<code>[A-Z]{1,4}\d{2,5}) (?:\[\*\] )?"
        r"(?P<msg>[^\n]+)$"), _ruff_concise),
    Rule("ruff", "--> ", lazy(
        r"(?m)^(?P<code>[A-Z]{1,4}\d{2,5}) (?:\[\*\] )?(?P<msg>[^\n]+)\n +--> "
        r"(?P<path>[^\n:]+):\d+:\d+$"), _ruff_full),
    # make
    Rule("make", "No rule to make target", lazy(
        r"(?m)^make(?:\[\d+\])?: \*\*\* No rule to make target [`'\u2018]"
        r"(?P<target>[^\n]+?)['\u2019][^\n]*$"), _make_no_rule),
    Rule("make", "Error ", lazy(
        r"(?m)^make(?:\[\d+\])?: \*\*\* \[(?P<file>[^\s:\]]+)(?::\d+)?:?[^\n\]]*\] "
        r"Error (?P<status>\d+)"), _make_recipe),
    Rule("make", "No targets specified", lazy(
        r"(?m)^make(?:\[\d+\])?: \*\*\* No targets specified and no makefile found"),
        _simple("make", "no_rule_to_make_target")),
    # git
    Rule("git", "CONFLICT (", lazy(
        r"(?m)^CONFLICT \((?P<kind>[\w/ -]+)\): (?:Merge conflict in (?P<file>[^\n]+)|"
        r"(?P<first>[^\s]+)[^\n]*)$"), _git_conflict),
    Rule("git", "patch failed:", lazy(
        r"(?m)^error: patch failed: (?P<path>[^\n:]+):\d+$"), _git_patch_failed),
    Rule("git", "patch does not apply", lazy(
        r"(?m)^error: (?P<path>[^\n:]+): patch does not apply$"), _git_patch_failed),
    Rule("git", "corrupt patch", lazy(r"(?m)^error: corrupt patch at line \d+$"),
         _simple("git", "corrupt_patch")),
    Rule("git", "would be overwritten by", lazy(
        r"(?m)^error: Your local changes to the following files would be overwritten by "
        r"[^\n]*$"), _git_overwritten),
    # a remote that does not exist, cannot be reached or refuses the credentials
    Rule("git", "fatal: ", lazy(
        r"(?m)^fatal: (?:[`'\u2018\"](?P<remote>[^\n'\u2019\"]+)[`'\u2019\"] does not appear "
        r"to be a git repository|Could not read from remote repository\.?|unable to access "
        r"[`'\u2018\"](?P<url>[^\n'\u2019\"]+)[`'\u2019\"]: [^\n]+|repository "
        r"[`'\u2018\"](?P<repo>[^\n'\u2019\"]+)[`'\u2019\"] not found|No configured push "
        r"destination\.?|Authentication failed for [^\n]+"
        # no credentials to give (a prompt git could not show: no terminal, prompts disabled)
        r"|could not read (?:Username|Password) for [`'\u2018\"](?P<login>[^\n'\u2019\"]+)"
        r"[`'\u2019\"]: [^\n]+)$"), _git_remote),
    Rule("git", "[rejected]", lazy(
        r"(?m)^ ! \[(?:remote )?rejected\] [^\n]+$"), _simple("git", "push_rejected")),
    Rule("git", "fatal: ", lazy(r"(?m)^fatal: (?P<msg>[^\n]+)$"),
         _simple("git", "git_error")),
    # GNU patch
    Rule("patch", "FAILED at", lazy(r"(?m)^Hunk #\d+ FAILED at \d+[^\n]*$"),
         _patch_hunk_failed),
    Rule("patch", "malformed patch", lazy(r"(?m)^patch: \*\*\*\* malformed patch[^\n]*$"),
         _simple("patch", "corrupt_patch")),
    Rule("patch", "can't find file to patch", lazy(
        r"(?m)^can't find file to patch[^\n]*$"), _simple("patch", "file_not_found")),
    # go: an import no module in go.mod provides (GOPATH mode: no such package)
    Rule("go", "no required module provides package", lazy(
        r"(?m)^(?:(?P<path>[^\s:]+\.go):\d+:\d+: )?no required module provides package "
        r"(?P<name>[^\s;:]+)"), _simple("go", "missing_module", subject="name", path="path")),
    Rule("go", "cannot find package", lazy(
        r"(?m)^(?:(?P<path>[^\s:]+\.go):\d+:\d+: )?cannot find package \"(?P<name>[^\"\n]+)\" in "
        r"any of"), _simple("go", "missing_module", subject="name", path="path")),
    # the Go compiler, after the go command's own missing-package rules (same start)
    Rule("go", ".go:", lazy(
        r"(?m)^(?:vet: )?(?P<path>[^\s:]+\.go):\d+:\d+: (?P<msg>[^\n]+)$"), _go_error),
    # python itself
    Rule("python", "can't open file", lazy(
        r"(?m)^[^\s:]*python[\d.]*: can't open file [`'\u2018\"](?P<path>[^\n'\"\u2019]+)"
        r"['\u2019\"]: \[Errno 2\][^\n]*$"), _python_missing_script),
    Rule("python", "No module named", lazy(
        r"(?m)^[^\s:]*python[\d.]*: No module named (?P<mod>[\w.]+)$"), _python_no_module),
    # python -m pkg.mod whose package is missing: the interpreter names the missing part
    Rule("python", "Error while finding module specification", lazy(
        r"(?m)^[^\s:]*python[\d.]*: Error while finding module specification for "
        r"'[\w.]+' \(ModuleNotFoundError: No module named '(?P<mod>[\w.]+)'\)$"),
        _python_no_module),
    # the shell refusing to run a file (no execute bit: exit 126), or a tool refused a path
    # (EACCES "Permission denied"; EPERM "Operation not permitted", a sandbox's refusal)
    *(Rule("shell", said, lazy(
        r"(?m)^(?:[^\s:]+: )?(?:line \d+: |\d+: )?(?:(?:cannot open|cannot access|cannot "
        r"create[\w ]*) )?[`'\u2018\"]?(?P<path>[^\s:'\u2019\"][^\n:'\u2019\"]*?)[`'\u2019\"]?: "
        + said + "$"), _simple("shell", "permission_denied", path="path"))
      for said in ("Permission denied", "Operation not permitted")),
    # the same refusal at the end of a longer sentence naming the path last (git: "fatal:
    # cannot lock ref 'refs/heads/x': Unable to create '/repo/.git/refs/heads/x.lock':
    # Operation not permitted")
    *(Rule("shell", said, lazy(
        r"(?m)^[^\n]*?[`'\u2018\"](?P<path>[^\s'\u2019\"`][^\n'\u2019\"`]*)[`'\u2019\"]: "
        + said + "$"),
        _simple("shell", "permission_denied", path="path"))
      for said in ("Permission denied", "Operation not permitted")),
    # the shell's own missing path: a builtin's operand (bash ``cd: x: No such file or
    # directory``, dash ``cd: can't cd to x``, zsh ``cd:1: no such file or directory: x``) or
    # a redirect's file (bash ``out/x: No such file or directory``, dash ``cannot create
    # out/x: Directory nonexistent``); the subject is who said it (the builtin, else the
    # shell). Exit 127 with the bash shape is a missing program, told apart by the status.
    Rule("shell", "No such file or directory", lazy(
        r"(?m)^(?:[^\s:]*/)?(?P<shell>(?:ba|da|z|k)?sh)(?:: line \d+)?: (?:\d+: )?"
        r"(?:(?P<builtin>cd|pushd|popd|source|\.|exec): )?[`'\u2018\"]?(?P<path>[^\n:'\u2019\"]+?)"
        r"[`'\u2019\"]?: No such file or directory$"), _shell_missing),
    Rule("shell", "can't cd to", lazy(
        r"(?m)^(?:[^\s:]*/)?(?P<shell>(?:da|k)?sh)(?:: line \d+)?: (?:\d+: )?(?P<builtin>cd): "
        r"can't cd to (?P<path>[^\n]+)$"), _shell_missing),
    Rule("shell", "Directory nonexistent", lazy(
        r"(?m)^(?:[^\s:]*/)?(?P<shell>(?:da|k)?sh)(?:: line \d+)?: (?:\d+: )?cannot create "
        r"(?P<path>[^\n:]+): Directory nonexistent$"), _shell_missing),
    Rule("shell", "no such file or directory: ", lazy(
        r"(?m)^(?P<shell>zsh)(?::(?P<builtin>cd|pushd|source))?(?::\d+)?: no such file or "
        r"directory: (?P<path>[^\n]+)$"), _shell_missing),
    # coreutils and friends: a file operand that does not exist (sed ``can't read x``, head
    # and tail ``cannot open 'x' for reading``, ripgrep's ``x: No such file or directory (os
    # error 2)``)
    Rule("shell", "No such file or directory", lazy(
        r"(?m)^(?!(?:ba|da|z|k)?sh: )(?P<prog>[\w.+-]+): "
        r"(?:cannot (?:stat|access|open|remove) |can't read )?"
        r"[`'\u2018\"]?(?P<path>[^\n'\u2019\"]+?)[`'\u2019\"]?(?: for reading)?: "
        r"No such file or directory(?: \(os error 2\))?$"),
        _simple("shell", "file_not_found", subject="prog", path="path")),
    # package managers: pip, apt, yarn, pnpm, conda, go, gem, brew, dnf, apk, pacman, zypper,
    # uv, poetry (npm's codes and cargo's messages are read by the npm and rust rules)
    *_INSTALL_RULES,
)
"""Every tool family's patterns, in table order (the order breaks ties at equal positions)."""


# -- Python tracebacks ----------------------------------------------------------------------
# after the last frame, the first line at column 0 that is a dotted name is the exception line
_EXC_LINE: Final = lazy(r"(?m)^(?P<type>[A-Za-z_][\w.]*)(?:: (?P<msg>[^\n]*))?$")
_FRAME_RE: Final = lazy(r'(?m)^ {2}File "(?P<path>[^"\n]+)", line \d+')
_TRACEBACK_HEAD: Final = "Traceback (most recent call last):"
_MODULE_RE: Final = lazy(r"^No module named ['\"]?([\w.]+)['\"]?")


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


def _chained_missing_module(text: str, tb: PythonTraceback, *,
                            handling: bool = True) -> str | None:
    """The module of a ModuleNotFoundError the last traceback was raised from (``raise
    ImproperlyConfigured(...) from exc``) or, with ``handling``, raised while handling
    (``except ImportError: raise RuntimeError("install X")``), nearest cause first; else None.
    """
    phrases = _CHAINED if handling else _CHAINED[:1]
    current = tb
    for _ in range(_MAX_CHAIN):
        before = text[max(0, current.start - 300): current.start]
        if not any(phrase in before for phrase in phrases):
            return None
        previous = parse_python_traceback(text[: current.start])
        if previous is None:
            return None
        if previous.exc_type.rsplit(".", 1)[-1] == "ModuleNotFoundError" and (
                found := _MODULE_RE.match(previous.message)):
            return found.group(1)
        current = previous
    return None


_GENERIC_WRAPPERS: Final = frozenset({"ImportError", "RuntimeError", "Exception"})


def _chained_cause(text: str, tb: PythonTraceback, short: str) -> str | None:
    """The missing module a chained traceback's last exception stands for, else None.

    A generic wrapper (``ImportError``, ``RuntimeError``, ``Exception``) raised from or while
    handling a ``ModuleNotFoundError`` is that module. An exception of another type raised
    *from* one (``raise X from exc``) is that module too when its own message does not name
    it: the import that failed was a dependency of what it tried to load (Django's
    ``ImproperlyConfigured: 'django.db.backends.dummy' isn't an available database backend``
    raised from ``No module named 'sqlparse'``). When its message names the missing module it
    judged the name it was given (an unknown backend, a plugin that is not installed) and
    stays its own failure.
    """
    generic = short in _GENERIC_WRAPPERS
    cause = _chained_missing_module(text, tb, handling=generic)
    if cause is None or generic:
        return cause
    return None if cause in tb.message else cause


def _python_diagnostic(text: str) -> Diagnostic | None:
    tb = parse_python_traceback(text)
    if tb is None:
        return None
    short = tb.exc_type.rsplit(".", 1)[-1]
    subject = None
    if short == "ModuleNotFoundError" and (found := _MODULE_RE.match(tb.message)):
        error_class, subject = "missing_module", found.group(1)
    elif (cause := _chained_cause(text, tb, short)) is not None:
        error_class, subject = "missing_module", cause
    elif short in ("SyntaxError", "IndentationError", "TabError"):
        error_class = "syntax_error"
    elif short == "NameError" and (found := re.match(r"name '(\w+)' is not defined",
                                                     tb.message)):
        error_class, subject = "undeclared_identifier", found.group(1)
    elif tb.exc_type.startswith("pip.") and short in ("DistributionNotFound",
                                                        "ResolutionImpossible"):
        # pip's resolver raising through a wrapper (pip-compile): pip's own install verdict
        error_class = "dependency_conflict" if "ResolutionImpossible" in (
            short + tb.message) else "package_not_found"
        found = re.match(r"No matching distribution found for ([^\s]+)", tb.message)
        subject = package_name(found.group(1)) if found else None
    else:
        error_class = "uncaught_exception"
    return Diagnostic("python", error_class, tb.start, tb.end, subject=subject,
                      message=f"{tb.exc_type}: {tb.message}" if tb.message else tb.exc_type,
                      frames=tb.frames, exc_type=tb.exc_type, traceback=tb.text)


# -- where a Python module comes from ------------------------------------------------------
# A file of an installed library or of the interpreter itself: site-packages, dist-packages, a
# virtual environment, node_modules, the standard library (lib/pythonX.Y, Windows' PythonXY\Lib)
# or a module frozen into the interpreter.
_LIBRARY_PATH: Final = lazy(
    r"(?i)(?:^|[/\\])(?:site-packages|dist-packages|\.venv|node_modules)[/\\]"
    r"|[/\\]lib(?:64)?[/\\]python\d+(?:\.\d+)?t?[/\\]|[/\\]python\d+[/\\]lib[/\\]|^<frozen ")
_OWN_TEST_MODULES: Final = frozenset({"tests", "conftest"})


# Every branch of _LIBRARY_PATH holds one of these (lower-cased; "-package" and "node_module"
# without their "s", which IGNORECASE also matches as U+017F): a path holding none is no
# library's, and five ``in`` tests cost less than the search, which tries every position.
_LIBRARY_WORDS: Final = ("-package", ".venv", "node_module", "python", "<frozen ")


def is_library_path(path: str) -> bool:
    """Whether ``path`` is a file of an installed library or of the interpreter's standard
    library (``site-packages``, ``dist-packages``, ``.venv``, ``node_modules``,
    ``lib/pythonX.Y``, ``<frozen os>``), not of the project."""
    low = path.lower()
    return (any(word in low for word in _LIBRARY_WORDS)
            and _LIBRARY_PATH.search(path) is not None)


def is_local_module(module: str, frames: tuple[str, ...] | list[str] = ()) -> bool:
    """Whether a missing module is one the project itself would provide, from the text alone.

    - a module named like the project's own tests: ``tests``, ``tests.x``, ``conftest``,
      ``test_x``;
    - a submodule ``pkg.sub`` of a package ``pkg`` that the traceback shows in the project (a
      frame's file under a ``pkg/`` directory outside installed libraries), unless its last
      part is private (``astropy.table._column_mixins``: a compiled extension not built, which
      stays a missing dependency);
    - a top-level module ``pkg`` while the importing file (the innermost project frame) lies
      inside a ``pkg/`` directory: the code runs from inside the package it cannot import.

    ``frames`` are the traceback's file paths, outermost first.
    """
    parts = module.split(".")
    top = parts[0]
    if not top:
        return False
    if top in _OWN_TEST_MODULES or top.startswith("test_"):
        return True
    if len(parts) > 1 and parts[-1].startswith("_"):
        return False
    project = ["/" + frame.replace("\\", "/") for frame in frames
               if frame and not frame.startswith("<") and not is_library_path(frame)]
    directory = f"/{top}/"
    if len(parts) > 1:
        return any(directory in frame for frame in project)
    return bool(project) and directory in project[-1]


# ImportError's "cannot import name 'X' from 'Y' (path)": the path says where Y was found
_IMPORT_NAME_RE: Final = lazy(
    r"cannot import name ['\"]?(?P<name>[\w.]{1,200})['\"]? from ['\"]?(?P<module>[\w.]{1,200})"
    r"['\"]? \((?P<path>[^()\n]{1,1000})\)")


def import_from_library(message: str) -> tuple[str, str] | None:
    """``(module, name)`` when an ImportError's message says an installed library (or the
    standard library) lacks a name: ``cannot import name 'X' from 'Y' (.../site-packages/Y/...)``.
    None for a module of the project, a namespace package (``unknown location``) or a circular
    import (``partially initialized module``)."""
    found = _IMPORT_NAME_RE.search(message[:8192])
    if found is None or not is_library_path(found.group("path")):
        return None
    return found.group("module"), found.group("name")


_KEPT_PER_RULE: Final = 3
_ATTEMPTS_PER_RULE: Final = 64


# Two-level gates: a rule's gate holds the first of these keys it contains, and when a text
# lacks the key none of the rules behind it can run, so one ``in`` test rules out all of them
# (a text is tested for about 50 substrings instead of the 106 gates). The keys are common
# pieces of the gates ("No", "ould" of "Could"/"Couldn't", "ail" of "Failed"/"failed"); a
# gate that holds none is tested on its own. Which rules run, and in which order, is the same.
_GATE_KEYS: Final = ("No", "ould", "ail", "err", "ERR", "atch", "ackage", "found", "fatal",
                     "E: ", "Un", "provide")


def _gate_groups() -> tuple[tuple[tuple[int, Rule], ...],
                            tuple[tuple[str, tuple[tuple[int, Rule], ...]], ...]]:
    """The rules (with their index in :data:`RULES`) whose gate holds no key, and the rest by
    the first key their gate holds."""
    alone: list[tuple[int, Rule]] = []
    by_key: dict[str, list[tuple[int, Rule]]] = {key: [] for key in _GATE_KEYS}
    for index, rule in enumerate(RULES):
        key = next((key for key in _GATE_KEYS if key in rule.gate), None)
        (alone if key is None else by_key[key]).append((index, rule))
    return tuple(alone), tuple((key, tuple(rules)) for key, rules in by_key.items() if rules)


_UNKEYED_RULES, _KEYED_RULES = _gate_groups()


def _gated_rules(text: str) -> list[tuple[int, Rule]]:
    """The rules whose gate occurs in ``text``, in table order (with their index)."""
    rules = [item for item in _UNKEYED_RULES if item[1].gate in text]
    for key, members in _KEYED_RULES:
        if key in text:
            rules.extend(item for item in members if item[1].gate in text)
    rules.sort(key=_first)
    return rules


def _first(item: tuple[int, Rule]) -> int:
    return item[0]


def find_diagnostics(text: str) -> list[Diagnostic]:
    """Every diagnostic the tables find in ``text`` (already capped and ANSI-stripped).

    Each rule contributes its first few matches among its first 64; the last Python traceback
    is added. The list is ordered by position in the text.
    """
    found: list[Diagnostic] = []
    for _, rule in _gated_rules(text):
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
