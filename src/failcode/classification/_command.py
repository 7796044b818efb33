"""Classify a finished shell command: ``from_command(argv, exit_code, stdout, stderr, ...)``.

A command's non-zero exit maps by its purpose (build, test, static_analysis, doctor,
debug, merge, general). The order of the checks is the contract:

1. exit 0 (not timed out) -> None;
2. a timeout (``timed_out=True``, or exit 124 under ``timeout``) -> the purpose's timeout code;
3. exit 130/143 (or a -2/-15 signal exit) -> :class:`~failcode.Cancelled`;
4. a probe that found nothing (``grep``/``rg``/``find``/``test``/``which``/``command -v``...
   exiting 1 with no output; the last program of the last pipeline decides), or a comparison
   that found differences (``diff``, ``cmp``, ``git diff --exit-code``/``--quiet``/
   ``--no-index`` exiting 1) -> :class:`~failcode.NoMatch`;
5. a missing program (exit 127, "command not found", make's "Error 127") -> FC.CMD_NOT_FOUND,
   except a 127 whose output is a shell's unbound variable (``bash -uc``) or a permission
   denied (``sh: 1: pytest: Permission denied``, from a shell that exits 127 for it);
6. a file the shell would not run (exit 126, or 127 saying ``Permission denied``), or a path
   refused to a command with no other purpose (``cat: x: Permission denied``) ->
   FC.OS_PERMISSION_DENIED;
7. a git remote that does not exist or cannot be reached (``does not appear to be a git
   repository``, ``Could not read from remote repository``, ``unable to access``) ->
   FC.GIT_REMOTE_UNREACHABLE, an environment failure whatever the purpose; a rejected push
   (``! [rejected]``) is a merge failure of the workspace;
8. killed by signal 9 (exit 137 or -9) -> FC.OS_KILLED;
9. a network client that could not connect, by its documented status (curl 5, 6 and 7, wget
   4) -> FC.OS_CONNECTION;
10. a path the command itself names that is not there, said by the shell itself (``cd``, a
    redirect) or by a program of the script other than the one deciding the status (``cd x
    && pytest``: pytest never ran) -> FC.CMD_FAILED (class ``file_not_found``) of who said
    it, at that path (a make recipe's own ``cd`` to a path the command does not name stays
    the build's);
11. otherwise the output is parsed (the ``_parsers`` module) and the purpose picks the code,
    with the parsed class, the location relative to ``cwd`` and the tool's diagnostic code;
    a package manager's own verdict on an install (a package not found, not installable, its
    sources unreachable) is a dependency or environment failure in every purpose. An
    agent's framing of the output (``Output:``, ``<untrusted_context>``, text indented as a
    whole) is taken off first (:func:`~failcode.classification._parsers.unframe`).
"""

from __future__ import annotations

import importlib
import operator
import os
import posixpath
import re
from collections import deque
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Final

from failcode._lazy_re import lazy
from failcode.classification._lex import split as split_words
from failcode.classification._noise import without_startup_noise
from failcode.classification._parsers import (
    INSTALL_CLASSES,
    Diagnostic,
    cap_text,
    find_diagnostics,
    is_local_module,
    strip_ansi,
    unframe,
)
from failcode.classification._purpose import infer_purpose
from failcode.codes._catalog import FC
from failcode.record._failure import Failure, InvalidFailureError
from failcode.record._frozen import MAX_INT
from failcode.record._outcomes import Cancelled, NoMatch
from failcode.signature._normalize import strip_temp_dir
from failcode.signature._redact import redact_cut, redact_slice

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from failcode.record._frozen import Scalar
    from failcode.record._outcomes import NonErrorOutcome

__all__ = ["PURPOSES", "as_local_module", "from_command", "parse_invocation"]

PURPOSES: Final = ("build", "test", "static_analysis", "doctor", "debug", "merge", "general")
"""The purposes a command may have."""

_VERBS: Final = {
    "build": "build", "test": "test", "static_analysis": "lint", "doctor": "doctor",
    "debug": "debug", "merge": "merge", "general": "run",
}  # fmt: skip
_TIMEOUT_CODES: Final = {
    "build": FC.BUILD_TIMEOUT, "test": FC.TEST_TIMEOUT, "static_analysis": FC.LINT_TIMEOUT,
    "doctor": FC.CMD_DOCTOR_TIMEOUT, "debug": FC.CMD_DEBUG_TIMEOUT,
    "merge": FC.GIT_MERGE_TIMEOUT, "general": FC.CMD_TIMEOUT,
}  # fmt: skip
_MAX_SCRIPT: Final = 64 * 1024
_DETAIL_CHARS: Final = 2000
_SURFACE_BAD: Final = lazy(r"[\s:]")

# -- parsing the command line -----------------------------------------------------------------
_ERROR_WORDS: Final = lazy(r"(?i)\b(?:error|fail(?:ed|ure)?|fatal|cannot|can't|not found|no such "
                           r"file|denied|not permitted|traceback)\b")
"""Words of a line that says something failed (another part of a pipeline's error)."""
_PACMAN_SEARCH: Final = lazy(r"-[QS][a-rt-z]*s[a-z]*")
_CTRL_C_EXITS: Final = frozenset({0xC000013A, -1073741510})
"""Windows' STATUS_CONTROL_C_EXIT (as unsigned and signed 32 bits): a console program
stopped with Ctrl-C, as exit 130 is on POSIX."""
_PROGRAM_NAME: Final = lazy(r"[\w][\w.+@~-]*")
"""A name a program can have (a first character that is a letter, digit or ``_``)."""
_SELECTORS: Final = frozenset({"grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack",
                               "git grep"})
"""Probes whose exit 1 means only "no line selected" (their errors exit 2)."""
_PROBES: Final = frozenset({
    "grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "find", "fd", "fdfind", "test", "[",
    "[[", "which", "pgrep",
})  # fmt: skip
_KEYWORDS: Final = frozenset({
    "do", "done", "then", "fi", "else", "elif", "esac", "{", "}", "!", "if", "while", "until",
})  # fmt: skip
_SIMPLE_WRAPPERS: Final = frozenset({
    "nohup", "time", "exec", "builtin", "unbuffer", "stdbuf", "ionice", "nice", "chronic",
    "caffeinate", "setsid", "npx", "pnpx", "bunx",
})  # fmt: skip
_WRAPPER_ARG_OPTIONS: Final = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-U", "-r", "-t"}),
    "doas": frozenset({"-u", "-C"}),
    "nice": frozenset({"-n"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "xargs": frozenset({"-I", "-n", "-L", "-P", "-d", "-E", "-s", "-a", "-l", "-i",
                        "--max-args", "--max-procs", "--delimiter", "--arg-file"}),
}  # fmt: skip
_RUNNERS: Final = {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"),
                   ("hatch", "run"), ("conda", "run"), ("rye", "run")}
_ASSIGNMENT: Final = lazy(r"^[A-Za-z_][A-Za-z0-9_]*=")
_REDIRECT: Final = lazy(r"^(?:\d*|&)(?:>>?|<<?<?|>&|<&|>\|)(?P<target>.*)$")
_PYTHON: Final = lazy(r"^python(?:\d+(?:\.\d+)?)?$")


@dataclass(frozen=True, slots=True)
class Invocation:
    """The command that decides the exit status: the last program of the last pipeline."""

    program: str
    """Base name of the deciding program after wrappers (``sudo``, ``env``, ``timeout``,
    ``xargs``, ``python -m``...) are removed; ``sh`` when nothing can be told."""
    args: tuple[str, ...] = ()
    probe: str | None = None
    """``grep``, ``git grep``, ``command -v``... when the deciding program is a probe."""
    under_timeout: bool = False
    """The program ran under ``timeout`` (exit 124 then means the limit was hit)."""
    under_xargs: bool = False
    programs: tuple[str, ...] = ()
    """Every program of the script, in order (for the surface)."""


# Runs of characters the lexer below appends one by one in its last branch, per quoting state.
# Backticks, ``<`` and ``>`` stay single: the lexer counts backticks among the pieces and looks
# at the piece before ``&`` (``2>&1``).
_PLAIN_RUN: Final = lazy(r"[^\\'\"#$`<>\n();&|]+")
_SINGLE_RUN: Final = lazy(r"[^'`]+")
_DOUBLE_RUN: Final = lazy(r'[^"\\`]+')


def _segments(script: str) -> list[str]:
    """Simple commands of a shell script, in order: separators, heredoc bodies and comments gone
    (:func:`_scan_segments`)."""
    return list(segments_of(script))


@lru_cache(maxsize=32)
def segments_of(script: str) -> tuple[str, ...]:
    """:func:`_segments` as a tuple, kept for the last few scripts: classifying one failing
    command reads its segments twice (its purpose, then the program that decides its exit
    status)."""
    return tuple(_scan_segments(script))


def _scan_segments(script: str) -> list[str]:  # noqa: PLR0915 - one lexer loop, one branch per char
    """Simple commands of a shell script, in order: separators, heredoc bodies and comments gone.

    A small single-pass lexer (quotes, backslashes, ``$(...)`` and backticks nest; ``;``, ``&``,
    ``|``, ``&&``, ``||``, ``(``, ``)`` and newlines separate). Linear in the script's length.
    """
    segments: list[str] = []
    current: list[str] = []
    heredocs: list[tuple[str, bool]] = []
    quote: str | None = None
    depth = 0
    i, n = 0, len(script)

    def flush() -> None:
        text = "".join(current).strip()
        if text:
            segments.append(text)
        current.clear()

    while i < n:
        c = script[i]
        # a run of characters no branch below treats specially is one append, not one per
        # character (each of those characters would take the last branch)
        run = (_PLAIN_RUN if quote is None else _SINGLE_RUN if quote == "'" else
               _DOUBLE_RUN).match(script, i)
        if run is not None:
            current.append(run.group())
            i = run.end()
            continue
        if quote == "'":
            current.append(c)
            if c == "'":
                quote = None
        elif quote == '"':
            current.append(c)
            if c == "\\" and i + 1 < n:
                current.append(script[i + 1])
                i += 1
            elif c == '"':
                quote = None
        elif c == "\\":
            if i + 1 < n and script[i + 1] == "\n":
                i += 2
                continue
            current.append(script[i: i + 2])
            i += 1
        elif c in "'\"":
            quote = c
            current.append(c)
        elif c == "#" and (i == 0 or script[i - 1] in " \t\n;&|()"):
            end = script.find("\n", i)
            i = n if end < 0 else end
            continue
        elif c == "$" and i + 1 < n and script[i + 1] == "(":
            depth += 1
            current.append("$(")
            i += 1
        elif c == "`":
            depth = depth - 1 if depth and current.count("`") % 2 else depth + 1
            current.append(c)
        elif c == "<" and script.startswith("<<", i) and not script.startswith("<<<", i):
            i = _read_heredoc_word(script, i + 2, heredocs)
            current.append(" ")
            continue
        elif c == "\n":
            if heredocs:
                i = _skip_heredocs(script, i + 1, heredocs)
                heredocs.clear()
                if depth == 0:
                    flush()
                continue
            if depth == 0:
                flush()
        elif depth and c == ")":
            depth -= 1
            current.append(c)
        elif c == "&" and (script.startswith("&>", i) or (
                current and current[-1] in "<>")):
            current.append(c)  # a redirection (2>&1, &>file), not a separator
        elif depth == 0 and c in ";&|()":
            flush()
        else:
            current.append(c)
        i += 1
    flush()
    return segments


def _read_heredoc_word(script: str, i: int, heredocs: list[tuple[str, bool]]) -> int:
    strip_tabs = i < len(script) and script[i] == "-"
    if strip_tabs:
        i += 1
    while i < len(script) and script[i] in " \t":
        i += 1
    match = re.compile(r"'([^'\n]*)'|\"([^\"\n]*)\"|\\?([^\s;&|<>()]+)").match(script, i)
    if match is None:
        return i
    word = next(group for group in match.groups() if group is not None)
    heredocs.append((word, strip_tabs))
    return match.end()


def _skip_heredocs(script: str, i: int, heredocs: list[tuple[str, bool]]) -> int:
    n = len(script)
    for word, strip_tabs in heredocs:
        while i < n:
            end = script.find("\n", i)
            line = script[i: n if end < 0 else end]
            i = n if end < 0 else end + 1
            if (line.lstrip("\t") if strip_tabs else line) == word:
                break
    return i


def _words(segment: str) -> list[str]:
    try:
        words = split_words(segment)  # shlex.split's words, without its per-character loop
    except ValueError:
        words = segment.split()
    cleaned: list[str] = []
    skip_next = False
    for word in words:
        if skip_next:
            skip_next = False
            continue
        redirect = _REDIRECT.match(word)
        if redirect:
            skip_next = not redirect.group("target")
            continue
        cleaned.append(word)
    return cleaned


def _unwrap(words: list[str]) -> tuple[str, list[str], bool, bool]:
    """(program, args, under_timeout, under_xargs) with wrappers and assignments removed.

    The words are consumed from the left of a deque: popping the head of a list in a loop
    would copy the rest each time, quadratic in a long argv of wrappers.
    """
    under_timeout = under_xargs = False
    rest = deque(words)  # popleft is O(1); list.pop(0) made long argv quadratic
    while rest:
        while rest and (_ASSIGNMENT.match(rest[0]) or rest[0] in _KEYWORDS):
            rest.popleft()
        if not rest:
            break
        name = posixpath.basename(rest[0])
        if name == "env":
            rest.popleft()
            while rest and (rest[0].startswith("-") or _ASSIGNMENT.match(rest[0])):
                rest.popleft()
            continue
        if name in _WRAPPER_ARG_OPTIONS:
            arg_options = _WRAPPER_ARG_OPTIONS[name]
            rest.popleft()
            while rest and rest[0].startswith("-") and rest[0] != "-":
                option = rest.popleft()
                if option in arg_options and rest:
                    rest.popleft()
            if name == "timeout":
                under_timeout = True
                if rest:
                    rest.popleft()  # the duration
            elif name == "xargs":
                under_xargs = True
                if not rest:
                    return "echo", [], under_timeout, under_xargs  # xargs's default command
            continue
        if name in _SIMPLE_WRAPPERS:
            rest.popleft()
            while rest and rest[0].startswith("-"):
                rest.popleft()
            continue
        if len(rest) > 1 and (name, rest[1]) in _RUNNERS:
            rest.popleft()
            rest.popleft()
            while rest and rest[0].startswith("-"):
                option = rest.popleft()
                if option in ("-n", "-p", "--name", "--prefix") and rest:
                    rest.popleft()
            continue
        if _PYTHON.match(name) and len(rest) > 2 and rest[1] == "-m":
            rest.popleft()
            rest.popleft()
            module = rest.popleft()
            return module.split(".", 1)[0], list(rest), under_timeout, under_xargs
        rest.popleft()
        return name, list(rest), under_timeout, under_xargs
    return "sh", [], under_timeout, under_xargs


def parse_invocation(argv: str | Sequence[str]) -> Invocation:
    """The deciding program of a command given as an argv list or a shell string.

    An argv list of a shell (``bash -c SCRIPT``, ``sh -lc SCRIPT``) is parsed as its script;
    another argv list is the program and its arguments.
    """
    if isinstance(argv, str):
        script = argv
    else:
        items = [item if isinstance(item, str) else os.fsdecode(item) for item in argv]
        shell_index = next((k for k in range(len(items) - 1)
                            if items[k].startswith("-") and "c" in items[k][1:]
                            and not items[k].startswith("--")), None)
        if items and posixpath.basename(items[0]) in ("sh", "bash", "zsh", "dash", "ksh") and (
                shell_index is not None):
            script = items[shell_index + 1]
        else:
            program, args, under_timeout, under_xargs = _unwrap(items)
            return _with_probe(program, args, under_timeout, under_xargs, (program,))
    segments = segments_of(script[:_MAX_SCRIPT])
    programs: list[str] = []
    decided: tuple[str, list[str], bool, bool] = ("sh", [], False, False)
    for segment in segments:
        words = _words(segment)
        if not words or all(word in _KEYWORDS or _ASSIGNMENT.match(word) for word in words):
            continue
        if words[0] in ("for", "case", "select", "function"):
            continue
        decided = _unwrap(words)
        programs.append(decided[0])
    return _with_probe(*decided, tuple(programs))


_GIT_ARG_OPTIONS: Final = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace"})


def _git_subcommand(args: list[str]) -> str | None:
    """git's subcommand after its global options (``git -C dir -c k=v grep ...``: grep)."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in _GIT_ARG_OPTIONS:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def _with_probe(program: str, args: list[str], under_timeout: bool, under_xargs: bool,
                programs: tuple[str, ...]) -> Invocation:
    probe = None
    if program in _PROBES:
        probe = program
    elif program == "git" and _git_subcommand(args) == "grep":
        probe = "git grep"
    elif program == "command" and args and args[0] in ("-v", "-V"):
        probe = "command -v"
    elif program == "pacman" and args and _PACMAN_SEARCH.fullmatch(args[0]):
        probe = "pacman"  # -Qs/-Ss: a search, exit 1 when nothing matched
    return Invocation(program, tuple(args), probe, under_timeout, under_xargs, programs)


# -- surfaces, locations, excerpts -----------------------------------------------------------
_FAMILY_LANG: Final = {
    "cpp": "cpp", "ld": "cpp", "rust": "rust", "java": "java", "ts": "ts", "node": "node",
    "npm": "node", "python": "python", "pytest": "python", "unittest": "python",
    "mypy": "python", "ruff": "python", "make": "make", "git": "git", "patch": "git",
    "pip": "python", "uv": "python", "poetry": "python", "yarn": "node", "pnpm": "node",
    "go": "go",
}  # fmt: skip
_PROGRAM_LANG: Final = {
    "gcc": "cpp", "g++": "cpp", "cc": "cpp", "c++": "cpp", "clang": "cpp", "clang++": "cpp",
    "ld": "cpp", "cmake": "cpp", "ninja": "cpp", "make": "make", "cargo": "rust",
    "rustc": "rust", "javac": "java", "java": "java", "mvn": "java", "gradle": "java",
    "gradlew": "java", "tsc": "ts", "node": "node", "npm": "node", "yarn": "node",
    "pnpm": "node", "pytest": "python", "mypy": "python", "ruff": "python", "flake8": "python",
    "pylint": "python", "pip": "python", "unittest": "python", "tox": "python", "git": "git",
    "patch": "git", "go": "go", "gofmt": "go",
}  # fmt: skip
_PROGRAM_FAMILIES: Final = {
    "cpp": ("cpp", "ld", "make"), "make": ("make", "cpp", "ld"), "rust": ("rust", "ld"),
    "java": ("java",), "ts": ("ts",), "node": ("node", "npm", "ts"),
    "python": ("python", "pytest", "unittest", "mypy", "ruff"), "git": ("git", "patch"),
    "go": ("go",),
}  # fmt: skip
_PURPOSE_FAMILIES: Final = {
    "build": ("cpp", "ld", "rust", "java", "ts", "make", "npm", "go"),
    "test": ("pytest", "unittest"),
    "static_analysis": ("mypy", "ruff", "ts"),
    "merge": ("git", "patch"),
}  # fmt: skip
# Package managers: when one decides the exit status its install verdict outranks anything
# else it printed (a setup.py traceback or a compiler error inside a failed wheel build).
_INSTALLERS: Final = frozenset({
    "pip", "pipx", "uv", "uvx", "poetry", "pdm", "pipenv", "pip-compile", "pip-sync", "conda",
    "mamba", "micromamba", "apt", "apt-get", "aptitude", "npm", "yarn", "pnpm", "bun", "cargo",
    "go", "gem", "bundle", "bundler", "brew", "dnf", "yum", "microdnf", "apk", "pacman",
    "zypper",
})  # fmt: skip
_PIP: Final = lazy(r"^pip\d*(?:\.\d+)?$")
# The program an install verdict is attributed to when the deciding program is no installer
# (``pip install x && pytest``); None: the deciding program (PubGrub's text is shared).
_INSTALL_TOOLS: Final[dict[str, str | None]] = {"rust": "cargo", "python": "pip",
                                                "pubgrub": None}
_INSTALL_ORDER: Final = {"package_not_found": 1, "package_source_unreachable": 2}
"""Among install verdicts, what stopped the install comes first: a failed build or a conflict
happened after the download, a package not found before it, and a connection warning may be
followed by either."""
_STABLE_ROOTS: Final = ("/usr/", "/opt/", "/etc/", "/lib/", "/lib64/", "/nix/", "/Library/")
_LOCATION_BAD: Final = lazy(r"[\s:]|\(\d+(?:,\d+)?\)|#L\d")
# a traceback frame in an interpreter's standard library or installed packages
_INTERPRETER_LIBRARY: Final = lazy(r"/lib/python\d+\.\d+t?/|dist-packages/|site-packages/")


def _lang(program: str) -> str:
    if _PYTHON.match(program):
        return "python"
    return _PROGRAM_LANG.get(program, "shell")


def _relative(raw: str | None, cwd: str | None) -> str | None:
    """``raw`` as a location: relative to ``cwd``, never a line number, None when volatile."""
    if not raw:
        return None
    path = raw.strip().strip("'\"\u2018\u2019`").removeprefix("file://")
    if not path or path.startswith(("<", "node:", "[")) or "site-packages/" in path:
        return None
    if path.startswith("/"):
        path = posixpath.normpath(path)
        base = posixpath.normpath(cwd) if cwd else None
        if base and base != "/" and (path == base or path.startswith(base + "/")):
            path = posixpath.relpath(path, base)
        elif not path.startswith(_STABLE_ROOTS):
            return None
    else:
        path = posixpath.normpath(path)
    if path in (".", "") or _LOCATION_BAD.search(path) or path.startswith("~"):
        return None
    return path


def _excerpt(text: str, start: int, end: int) -> str:
    """The lines around ``text[start:end]``: two before, up to fifteen after, bounded."""
    begin = start
    for _ in range(3):
        found = text.rfind("\n", 0, max(0, begin - 1))
        begin = found + 1 if found >= 0 else 0
        if begin == 0:
            break
    stop = end
    for _ in range(15):
        found = text.find("\n", stop + 1)
        if found < 0:
            stop = len(text)
            break
        stop = found
    # Redact before you cut: the excerpt is redacted with the text around it, then bounded.
    cut = stop - begin > _DETAIL_CHARS
    excerpt = redact_slice(text, begin, min(stop, begin + _DETAIL_CHARS)).strip("\n")
    if not cut and len(excerpt) <= _DETAIL_CHARS:
        return excerpt
    # a long diagnostic (a deep traceback) keeps its head and its last lines, where the
    # exception line is: "what failed" must survive the cut
    head = excerpt[: _DETAIL_CHARS * 2 // 3].rstrip()
    last = text.rfind("\n", begin, max(begin, stop - _DETAIL_CHARS // 3))
    tail = redact_slice(text, max(begin, last + 1), stop).strip("\n")[-(_DETAIL_CHARS // 3):]
    return f"{head}\n…\n{tail}"


def _tail(text: str) -> str | None:
    """The last 20 lines of ``text`` (at most ``_DETAIL_CHARS``), redacted before the cut."""
    body = text.rstrip("\n")
    begin = len(body)
    for _ in range(20):
        found = body.rfind("\n", 0, begin)
        begin = max(found, 0)
        if begin == 0:
            break
    if not body[begin:].strip():
        return None
    if len(body) - begin > _DETAIL_CHARS - 2:
        return "… " + redact_slice(body, len(body) - (_DETAIL_CHARS - 2), len(body))
    return redact_slice(body, begin, len(body)).strip("\n")


def _decode(data: str | bytes | bytearray | memoryview | None) -> str:
    if data is None:
        return ""
    if isinstance(data, str):
        return data
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data[: 1 << 22]).decode("utf-8", errors="replace") if len(data) > (
            1 << 22) else bytes(data).decode("utf-8", errors="replace")
    return str(data)


def _exit_status(code: object) -> int | None:
    """``exit_code`` as an int: an ``int`` (or an integer type with ``__index__``, a numpy
    int) inside a record's range (``-MAX_INT <= code < 2 * MAX_INT``), or None.

    Raises:
        TypeError: a bool, a float (NaN and infinities too), a str or any other non-integer.
        ValueError: an integer outside 64 bits.
    """
    if code is None:
        return None
    if type(code) is not int:
        value = None
        if not isinstance(code, bool | float | str | bytes):
            try:
                value = operator.index(code)  # type: ignore[arg-type]
            except Exception:  # noqa: BLE001 - any object: refused below, named
                value = None
        if value is None:
            try:
                shown = repr(code)[:40]
            except Exception:  # noqa: BLE001 - a hostile __repr__
                shown = "?"
            msg = (f"from_command: exit_code={shown} ({type(code).__name__}) is not an exit "
                   "status; expected an int or None")
            raise TypeError(msg)
        code = value
    if not -MAX_INT <= code < 2 * MAX_INT:
        msg = (f"from_command: exit_code is an integer of {code.bit_length()} bits; an exit "
               f"status lies in -2**63..2**64-1")
        raise ValueError(msg)
    return code


def _normalize_exit(code: int | None) -> int | None:
    """A shell's view of the status: -N (killed by signal N) is 128+N; bounded to 32 bits."""
    if code is None:
        return None
    code = int(code)
    if -64 <= code < 0:
        return 128 - code
    if not -(2**31) <= code < 2**32:
        return code & 0xFFFFFFFF
    return code


def _signal_of(raw: int | None) -> int | None:
    if raw is None:
        return None
    if -64 <= raw < 0:
        return -raw
    if 128 < raw <= 128 + 64:
        return raw - 128
    return None


# -- the decision -----------------------------------------------------------------------------
_GREP_NOTICE: Final = lazy(
    r"(?m)^(?:grep: [^\n]*: binary file matches|Binary file [^\n]* matches)$")
_GREP_COUNT_ZERO: Final = lazy(r"^(?:[^\n]*:)?0$")
_SHELL_ENOENT: Final = lazy(
    r"(?m)^(?:(?:/usr)?/bin/)?(?:ba|da|z|k)?sh(?:: line \d+)?: (?:\d+: )?"
    r"(?P<prog>[^\s:]+): No such file or directory$")
_PHRASES: Final = {
    "undefined_reference": "undefined reference to {}",
    "undeclared_identifier": "{} is not declared",
    "missing_header": "header {} not found",
    "missing_module": "module {} not found",
    "assertion_failed": "test {} failed",
    "test_exception": "test {} failed",
    "test_setup_error": "test {} could not be set up",
    "no_rule_to_make_target": "no rule to make target {}",
    "patch_conflict": "conflict in {}",
    "missing_script": "missing script {}",
    "unbound_variable": "variable '{}' is not set",
}  # fmt: skip


def _own_output(argv: str | Sequence[str], out: str, err: str) -> tuple[str, str]:
    """The command's own output: without what the shell's start-up files printed
    (:mod:`failcode.classification._noise`)."""
    line = argv if isinstance(argv, str) else " ".join(map(str, argv))
    return without_startup_noise(out, line), without_startup_noise(err, line)


def _is_silent(invocation: Invocation, stdout: str, stderr: str) -> bool:
    if invocation.probe == "grep":
        # grep's notices about binary files are no match (it exits 1 when no line matched)
        stdout, stderr = _GREP_NOTICE.sub("", stdout), _GREP_NOTICE.sub("", stderr)
    said = f"{(invocation.probe or '').split(' ')[-1]}: "
    both = stderr + "\n" + stdout
    if invocation.probe in _SELECTORS and said not in both and not _ERROR_WORDS.search(both) \
            and not find_diagnostics(both):
        # grep, rg, ag, ack: exit 1 is "no line selected" by their documented contract (an
        # error is 2); lines they did not say, none an error, came from another part of the
        # pipeline or the shell
        return True
    if stderr.strip():
        return False
    out = stdout.strip()
    if not out:
        return True
    # `grep -c` prints a zero count and exits 1 when nothing matched
    return invocation.probe == "grep" and any((a.startswith("-") and "c" in a and not
                                               a.startswith("--")) or a == "--count"
                                              for a in invocation.args) and all(
        _GREP_COUNT_ZERO.match(line) for line in out.splitlines())


def _is_installer(program: str) -> bool:
    return program in _INSTALLERS or _PIP.match(program) is not None


def _primary(diagnostics: list[Diagnostic], purpose: str, program: str) -> Diagnostic | None:
    if not diagnostics:
        return None
    installer = _is_installer(program)
    preferred = set(_PURPOSE_FAMILIES.get(purpose, ()))
    if not installer:
        preferred.update(_PROGRAM_FAMILIES.get(_lang(program), ()))

    def rank(diagnostic: Diagnostic) -> tuple[int, int, int]:
        order = _INSTALL_ORDER.get(diagnostic.error_class, 0)
        if diagnostic.error_class == "command_not_found":
            return (0, 0, diagnostic.start)
        if installer and diagnostic.error_class in INSTALL_CLASSES:
            return (1, order, diagnostic.start)
        generic = diagnostic.error_class in ("recipe_failed", "git_error", "npm_error")
        if diagnostic.family in preferred and not generic:
            return (1, order, diagnostic.start)
        return (3 if generic else 2, order, diagnostic.start)

    return min(diagnostics, key=rank)


def _location(diagnostic: Diagnostic, cwd: str | None) -> str | None:
    if diagnostic.frames:
        # the innermost frame inside cwd (a traceback), else the throw site (node)
        frames = diagnostic.frames if diagnostic.family != "node" else diagnostic.frames[:1] + (
            tuple(reversed(diagnostic.frames[1:])))
        ordered = reversed(frames) if diagnostic.family != "node" else iter(frames)
        for frame in ordered:
            if _INTERPRETER_LIBRARY.search(frame):
                continue  # the interpreter's own library (importlib...) is never the place
            location = _relative(frame, cwd)
            if location is not None and "node_modules/" not in location:
                return location
        return None
    return _relative(diagnostic.path, cwd)


def _subject(diagnostic: Diagnostic) -> str | None:
    subject = diagnostic.subject
    if not subject:
        return None
    return redact_cut(" ".join(subject.strip("'\"\u2018\u2019`").split()), 200) or None


def _classify_traceback(diagnostic: Diagnostic, surface: str) -> Failure:
    """The shared exception rules over a traceback found as text (``classify_text``).

    Falls back to FC.SYS_UNKNOWN while ``failcode.classification._classify`` is unavailable.
    """
    exc_type = diagnostic.exc_type or "Exception"
    message = diagnostic.message.partition(": ")[2]
    fallback = FC.SYS_UNKNOWN.failure(surface=surface, params={"exception": exc_type})
    try:
        classify_text = importlib.import_module("failcode.classification._classify").classify_text
    except (ImportError, AttributeError):
        return fallback
    try:
        result = classify_text(exc_type, message, traceback=diagnostic.traceback,
                               surface=surface)
    except Exception:  # noqa: BLE001 - classification of text must never raise
        return fallback
    return result if isinstance(result, Failure) else fallback


@dataclass(frozen=True, slots=True)
class _Build:
    """The pieces of the record being built."""

    surface: str
    program: str
    exit_code: int | None
    metadata: dict[str, Scalar]
    detail: str | None


def _make(code: FC, piece: _Build, *, params: dict[str, Scalar] | None = None,
          location: str | None = None, error_class: str | None = None,
          diagnostic: str | None = None, extra: dict[str, Scalar] | None = None) -> Failure:
    metadata = dict(piece.metadata)
    if diagnostic:
        metadata["diagnostic"] = diagnostic
    if extra:
        metadata.update(extra)
    try:
        return code.failure(surface=piece.surface, params=params or {"program": piece.program},
                            location=location, error_class=error_class, detail=piece.detail,
                            metadata=metadata)
    except InvalidFailureError:
        # a location the record refuses (an odd file name) must not lose the failure
        return code.failure(surface=piece.surface, params=params or {"program": piece.program},
                            error_class=error_class, detail=piece.detail, metadata=metadata)


def _rebuild(failure: Failure, piece: _Build, location: str | None,
             diagnostic: str | None) -> Failure:
    """A ``classify_text`` result re-made with the command's surface, location and metadata."""
    from failcode.codes._registry import lookup  # noqa: PLC0415 - only needed on this path

    spec = lookup(failure.code)
    metadata: dict[str, Scalar] = dict(failure.metadata)
    metadata.update(piece.metadata)
    if diagnostic:
        metadata["diagnostic"] = diagnostic
    for attempt_location in (location, None):
        try:
            return spec.failure(surface=piece.surface, params=dict(failure.params),
                                location=attempt_location, error_class=failure.error_class,
                                severity=failure.severity, retryability=failure.retryability,
                                detail=piece.detail or failure.detail, cause=failure.cause,
                                metadata=metadata)
        except (InvalidFailureError, KeyError):
            continue
    return failure


def from_command(  # noqa: PLR0915 - the checks of the module's contract, in its order
    argv: str | Sequence[str],
    exit_code: int | None,
    stdout: str | bytes = "",
    stderr: str | bytes = "",
    *,
    purpose: str | None = None,
    cwd: str | os.PathLike[str] | None = None,
    surface: str | None = None,
    timed_out: bool = False,
) -> Failure | NonErrorOutcome | None:
    """Classify a finished command by its purpose, exit status and real output.

    Args:
        argv: the command as an argv list, or a shell string (split with :mod:`shlex`, falling
            back to white space). ``bash -c SCRIPT`` is read as its script; in a script, the
            last program of the last pipeline decides the exit status (``cd d && grep x f``:
            ``grep``), after wrappers such as ``sudo``, ``env``, ``timeout`` and ``xargs``.
        exit_code: the exit status, an int within 64 bits (beyond 32 bits it is kept modulo
            2**32); -N (killed by signal N) is read as 128+N. None when the command reported
            none.
        stdout: the standard output, ``str`` or ``bytes`` (decoded as UTF-8, errors
            replaced); only its first and last 64 KiB are scanned.
        stderr: the standard error, read like ``stdout``.
        purpose: one of :data:`PURPOSES`; picks the kind and code. None (the default) infers
            it from the command and then its output with :func:`failcode.infer_purpose`, the
            rule ``failcode triage`` uses, so the same failing command is the same failure
            through both.
        cwd: the command's working directory; locations are made relative to it.
        surface: the record's surface; by default the tool and purpose, e.g. ``cpp.build``,
            ``python.test``, ``git.merge``, ``shell.run``.
        timed_out: the caller stopped the command at its time limit.

    Returns:
        None for success (exit 0, not timed out); a :class:`~failcode.NoMatch` for a probe
        that found nothing; a :class:`~failcode.Cancelled` for exit 130/143; else a
        :class:`~failcode.Failure` (see docs/classification.md, "Command output").

    Raises:
        ValueError: ``purpose`` is not one of :data:`PURPOSES`, or ``surface`` holds white
            space or ``:``, or ``exit_code`` is an integer outside 64 bits (a record's range).
        TypeError: ``exit_code`` is not an int or None (a bool, a float such as NaN, inf or
            ``1.0``, a str). Nothing else raises: unknown output gives a generic code.
    """
    if purpose is not None and purpose not in PURPOSES:
        msg = f"from_command: purpose={purpose!r} is not allowed; expected one of " + (
            ", ".join(PURPOSES))
        raise ValueError(msg)
    if surface is not None and (not surface or _SURFACE_BAD.search(surface)):
        msg = f"from_command: surface={surface!r} must be non-empty with no ':' or white space"
        raise ValueError(msg)
    raw_exit = _exit_status(exit_code)
    if raw_exit == 0 and not timed_out:
        return None
    out, err = _decode(stdout), _decode(stderr)
    out, err = _own_output(argv, out, err)
    if purpose is None:
        purpose = infer_purpose(argv, err + "\n" + out if err and out else err or out)
    invocation = parse_invocation(argv if isinstance(argv, str) else list(argv))
    status = _normalize_exit(raw_exit)
    base = os.fspath(cwd) if cwd is not None else None
    verb = _VERBS[purpose]
    program = redact_cut(invocation.program, 64) or "sh"

    def piece(lang_hint: str | None, detail: str | None, *, timed: bool = False) -> _Build:
        chosen = surface or f"{lang_hint or _lang(program)}.{verb}"
        metadata: dict[str, Scalar] = {"program": program}
        if timed:
            metadata["timed_out"] = True
        elif status is not None:
            metadata["exit_code"] = status
        return _Build(chosen, program, status, metadata, detail)

    # 2. timeouts
    if timed_out or (invocation.under_timeout and status in (124, 137)):
        return _make(_TIMEOUT_CODES[purpose], piece(None, _tail(err) or _tail(out), timed=True))
    # 3. cancellations
    signal = _signal_of(raw_exit)
    if (status in (130, 143) and signal in (2, 15)) or status in _CTRL_C_EXITS:
        return Cancelled(reason="terminated" if signal == 15 else "interrupted", signal=signal)
    # 4. a probe that found nothing
    if invocation.probe and _is_silent(invocation, out, err) and (
            status == 1 or (invocation.under_xargs and status == 123)
            # POSIX `command -v` (dash) exits 127 when the name is unknown
            or (invocation.probe == "command -v" and status == 127)):
        return NoMatch(probe=invocation.probe, exit_code=status)

    # 4b. a comparison that found differences (diff, cmp, git diff --exit-code exit 1): an
    # answer, like a probe's; their trouble is another status (2, 128)
    if status == 1 and (compared := _comparison(invocation)) is not None:
        return NoMatch(probe=compared, exit_code=status)

    # an agent's framing (``Output:``, ``<untrusted_context>``, indented text) is not the
    # tool's: the rules read the lines the tool printed
    text_err, text_out = cap_text(unframe(strip_ansi(err))), cap_text(unframe(strip_ansi(out)))
    text = text_err + "\n" + text_out if text_err and text_out else text_err or text_out
    diagnostics = find_diagnostics(text)
    primary = _primary(diagnostics, purpose, program)
    detail = (_excerpt(text, primary.start, primary.end) if primary else
              _tail(text_err) or _tail(text_out))
    lang = _FAMILY_LANG.get(primary.family) if primary else None

    # 5. a missing program, anywhere (bash -c also exits 127 on a ``set -u`` variable: that
    # is the script's own error, read from the output below)
    unbound = any(d.error_class == "unbound_variable" for d in diagnostics)
    denied = next((d for d in diagnostics if d.error_class == "permission_denied"), None)
    if (status == 127 and not unbound and denied is None) or (
            primary is not None and primary.error_class == "command_not_found"):
        missing = _subject(primary) if primary and primary.error_class == "command_not_found" \
            else None
        if missing is None and (found := _SHELL_ENOENT.search(text)):
            missing = found.group("prog")
        missing = redact_cut(posixpath.basename(missing or program), 64) or program
        if _PROGRAM_NAME.fullmatch(missing) is None:
            # no program has such a name (`,`, `:ls`, `}pip`, `-c` after a stray `>`): the
            # agent's command line is malformed, nothing is missing from the environment
            return _make(FC.CMD_DIAGNOSTIC, piece("shell", detail),
                         params={"program": "sh", "problem": f"'{missing}' is not a command "
                                                             "(a malformed command line)"},
                         error_class="command_not_found")
        return _make(FC.CMD_NOT_FOUND, piece("shell" if lang in (None, "shell") else lang,
                                             detail), params={"program": missing})
    # 5b. the shell could not parse the command line, or what it ran is no program's name
    # (``-R``, ``]}``): the agent's malformed line, in every purpose
    syntax = primary is not None and primary.family == "shell" and (
        primary.error_class == "syntax_error")
    if syntax or _malformed(program):
        return _make(FC.CMD_DIAGNOSTIC, piece("shell", detail),
                     params={"program": (primary.subject if primary and syntax else None)
                             or "sh",
                             "problem": ("the command line does not parse" if syntax else
                                         f"'{program}' is not a command")
                             + " (a malformed command line)"},
                     error_class="syntax_error" if syntax else "command_not_found")
    # 6. the shell refused to run a file (126: found, not executable), or a command that
    # says nothing else was refused a path: the user's environment, in every purpose
    if status == 126 or (denied is not None and (
            status == 127 or (purpose == "general" and primary is not None
                              # the same line read by a looser rule too (git's "error: ...")
                              and (primary is denied or primary.start == denied.start)))):
        path = redact_cut(denied.path, 200) if denied is not None and denied.path else None
        return _make(FC.OS_PERMISSION_DENIED, piece("shell", detail),
                     params={"path": path} if path else {})
    # 7. a git remote that does not exist or cannot be reached, in every purpose
    remote = next((d for d in diagnostics if d.error_class == "remote_unreachable"), None)
    if remote is not None and not any(d.error_class in INSTALL_CLASSES for d in diagnostics):
        name = redact_cut(remote.subject, 200) if remote.subject else None
        return _make(FC.GIT_REMOTE_UNREACHABLE,
                     piece("git", _excerpt(text, remote.start, remote.end)),
                     params={"remote": name} if name else {})
    # 8. killed
    if status == 137 or raw_exit == -9:
        return _make(FC.OS_KILLED, piece(None, detail), params={"program": program, "signal": 9})
    # 9. a network client that could not connect, by its documented status (curl 5/6/7,
    # wget 4): the connection failed, whatever the command was for
    said = _CURL_SAID.search(text) if program == "curl" and "curl: (" in text else None
    connect_status = int(said.group(1)) if said is not None else status
    if connect_status is not None and connect_status in _CONNECT_EXITS.get(program, ()):
        # curl's own "curl: (7) Failed to connect" names its status when the log kept none
        return _make(FC.OS_CONNECTION, piece(None, detail), params={"operation": program},
                     extra={"exit_code": connect_status})
    # 10. a path the command named that is not there, said by the shell itself (``cd``, a
    # redirect's file) or by another program of the script than the one deciding the status
    # (``cd x && pytest``: pytest never ran): the failure of who said it, in every purpose. A
    # path the command does not name (a make recipe's own ``cd``) is the deciding program's.
    if primary is not None and primary.family == "shell" and (
            primary.error_class == "file_not_found") and primary.subject and primary.path and (
            primary.subject != program) and (primary.subject in _SHELL_SPEAKERS
                                             or primary.subject in invocation.programs) and (
            primary.path in (argv if isinstance(argv, str) else " ".join(map(str, argv)))):
        return _said_missing(primary, surface, status, base, detail)

    return _by_purpose(_built_first(purpose, text), primary, piece(lang, detail), base,
                       status=status, signal=signal, diagnostics=diagnostics)


_CONNECT_EXITS: Final = {"curl": frozenset({5, 6, 7}), "wget": frozenset({4})}
"""Exit statuses a network client documents as "could not connect": curl's 5 (could not
resolve the proxy), 6 (the host) and 7 (failed to connect), wget's 4 (network failure)."""
_CURL_SAID: Final = lazy(r"(?m)^curl: \((\d{1,3})\) ")
_SHELL_SPEAKERS: Final = frozenset({"sh", "bash", "dash", "zsh", "ksh", "cd", "pushd", "popd",
                                    "source", ".", "exec"})
_COMPARERS: Final = frozenset({"diff", "cmp", "colordiff"})
_GIT_EXIT_CODE: Final = frozenset({"--exit-code", "--quiet", "--no-index"})


def _comparison(invocation: Invocation) -> str | None:
    """``diff``, ``cmp`` or ``git diff`` when the deciding program compares and exits 1 for
    "they differ" (``git diff`` only with ``--exit-code``, ``--quiet`` or ``--no-index``)."""
    if invocation.program in _COMPARERS:
        return invocation.program
    if invocation.program == "git" and _git_subcommand(list(invocation.args)) == "diff" and (
            any(arg in _GIT_EXIT_CODE for arg in invocation.args)):
        return "git diff"
    return None


def _said_missing(primary: Diagnostic, surface: str | None, status: int | None,
                  cwd: str | None, detail: str | None) -> Failure:
    """FC.CMD_FAILED (class ``file_not_found``) of the program or shell that said a path is
    not there, with that path as the location."""
    speaker = redact_cut(primary.subject or "sh", 64) or "sh"
    metadata: dict[str, Scalar] = {"program": speaker}
    if status is not None:
        metadata["exit_code"] = status
    piece = _Build(surface or "shell.run", speaker, status, metadata, detail)
    return _make(FC.CMD_FAILED, piece, params={"program": speaker, "exit_code": status},
                 location=_temp_free(_relative(primary.path, cwd)),
                 error_class="file_not_found")


_RUNNER_MISSING: Final = lazy(
    r"python[\d.]*: (?:No module named |Error while finding module specification for )")


def _install_failure(primary: Diagnostic, diagnostics: Sequence[Diagnostic], piece: _Build,
                     location: str | None) -> Failure:
    """A package manager's verdict: FC.CMD_PACKAGE_NOT_FOUND, FC.CMD_PACKAGE_INSTALL_FAILED
    (a failed build, a conflict), or FC.CMD_PACKAGE_SOURCE_UNREACHABLE.

    A package reported missing while the installer could not reach its sources (pip's
    connection retries before "No matching distribution") is the unreachable sources: the
    lookup never completed. A build failure or a conflict happened after the download, so it
    stays what it is whatever connection warnings came before. A warning the installer itself
    ignored (apt's ``W: Failed to fetch`` of an index refresh) is no connection failure here.
    """
    error_class = primary.error_class
    tool = piece.program if _is_installer(piece.program) else (
        _INSTALL_TOOLS.get(primary.family, primary.family) or piece.program)
    package = _subject(primary) or next(
        (found for d in diagnostics if d.error_class == error_class
         and (found := _subject(d)) is not None), None)
    code = primary.code or None
    if error_class == "package_source_unreachable" or (
            error_class == "package_not_found"
            and any(d.error_class == "package_source_unreachable" for d in diagnostics)):
        return _make(FC.CMD_PACKAGE_SOURCE_UNREACHABLE, piece, params={"program": tool},
                     location=location, diagnostic=code,
                     extra={"package": package} if package else None)
    params: dict[str, Scalar] = {"program": tool}
    if package:
        params["package"] = package
    if error_class == "package_not_found":
        return _make(FC.CMD_PACKAGE_NOT_FOUND, piece, params=params, location=location,
                     diagnostic=code)
    return _make(FC.CMD_PACKAGE_INSTALL_FAILED, piece, params=params, location=location,
                 error_class=error_class, diagnostic=code)


def _by_purpose(purpose: str, primary: Diagnostic | None, piece: _Build, cwd: str | None, *,
                status: int | None, signal: int | None,
                diagnostics: Sequence[Diagnostic] = ()) -> Failure:
    """The code for a parsed diagnostic: the rules that hold in every purpose first, then
    the purpose's code.

    In every purpose: a package manager's verdict on an install; a ``set -u`` variable that is
    not set (``FC.CMD_DIAGNOSTIC`` naming the variable, so FOO and BAR are two signatures);
    a missing module the project itself would provide
    (:func:`~failcode.classification._parsers.is_local_module`: the code runs from inside the
    package it cannot import), also while tests are collected: ``FC.CMD_LOCAL_MODULE_MISSING``;
    any other missing module, test collection too: ``FC.CMD_MISSING_MODULE``; a Python
    traceback the exception rules call a missing module, a missing program or an incompatible
    dependency (``cannot import name`` from an installed
    library). A traceback's ``FileNotFoundError`` (or another OSError about a path that is not
    there) is the script opening what does not exist: the command's own failure
    (``FC.CMD_FAILED``, class ``file_not_found``), as ``cat``'s "No such file" is, never the
    exception rules' ``FC.OS_FILE_NOT_FOUND`` (a program's own exception in the API). The
    location and a subject naming a file never hold a temporary directory.
    """
    crash: dict[str, Scalar] | None = None
    if signal is not None and status is not None and status > 128:
        crash = {"signal": signal}
    if primary is None:
        error_class = "crashed" if crash else None
        code = {"build": FC.BUILD_FAILED, "test": FC.TEST_FAILED,
                "static_analysis": FC.LINT_FAILED, "doctor": FC.CMD_DOCTOR_FAILED,
                "debug": FC.CMD_DEBUG_FAILED, "merge": FC.GIT_MERGE_FAILED}.get(purpose)
        if code is None:
            return _make(FC.CMD_FAILED, piece, params={"program": piece.program,
                                                       "exit_code": piece.exit_code},
                         error_class=error_class or "unknown", extra=crash)
        if code is FC.LINT_FAILED and error_class is None:
            error_class = "check_failed"
        return _make(code, piece, error_class=error_class, extra=crash)

    location = _temp_free(_location(primary, cwd))
    subject = _temp_free_subject(_subject(primary))
    error_class = primary.error_class
    diagnostic = primary.code or primary.exc_type
    phrase = _PHRASES.get(error_class)
    problem = phrase.format(subject) if phrase and subject else None
    # "python: No module named pytest" is the interpreter's: the runner itself is missing and
    # no test was collected, so it is a missing dependency in every purpose
    runner_missing = (primary.family == "python"
                      and _RUNNER_MISSING.search(primary.message) is not None)
    collecting = (purpose == "test" and not runner_missing
                  and error_class in ("missing_module", "test_collection_error"))

    # a package manager's verdict on an install is a dependency (or, sources unreachable, an
    # environment) problem in every purpose: whatever the command meant to do next never ran
    if error_class in INSTALL_CLASSES:
        return _install_failure(primary, diagnostics or (primary,), piece, location)

    # `set -u` stopped the script at a variable that is not set, before the command it would
    # have run: in every purpose it is that variable (FOO and BAR are two failures)
    if error_class == "unbound_variable" and subject:
        return _make(FC.CMD_DIAGNOSTIC, piece, params={"program": piece.program,
                                                       "problem": _PHRASES[error_class].format(
                                                           subject)},
                     location=location, error_class=error_class, diagnostic=diagnostic)

    # a missing module the project itself would provide (its tests, a submodule of its own
    # package, the package a file runs inside) is the agent's to fix in every purpose, test
    # collection too; any other missing module is a dependency problem, also while tests are
    # collected (no test ran, let alone failed: the environment lacks a package)
    local = (error_class == "missing_module" and primary.family in ("python", "pytest")
             and bool(subject)
             and is_local_module(subject or "", primary.frames))
    if error_class == "missing_module" and primary.family in ("python", "pytest", "node",
                                                              "go", "perl", "ruby") \
            and subject and not subject.startswith("."):
        if local:
            return _make(FC.CMD_LOCAL_MODULE_MISSING, piece, params={"module": subject},
                         location=location, diagnostic=diagnostic,
                         extra={"rule": "local-module:text"})
        return _make(FC.CMD_MISSING_MODULE, piece, params={"module": subject},
                     location=location, diagnostic=diagnostic)

    if primary.family == "python" and error_class == "uncaught_exception":
        classified = _classify_traceback(primary, piece.surface)
        if classified.code == FC.OS_FILE_NOT_FOUND:
            # the script's own open() of a path that is not there: the command's failure, as
            # `cat`'s "No such file" is (FC.OS_FILE_NOT_FOUND is a program's own exception)
            return _make(FC.CMD_FAILED, piece, params={"program": piece.program,
                                                       "exit_code": piece.exit_code},
                         location=location, error_class="file_not_found",
                         diagnostic=diagnostic)
        if classified.code != FC.SYS_UNKNOWN:
            if purpose in ("general", "debug", "doctor") or classified.code in (
                    FC.CMD_MISSING_MODULE, FC.CMD_NOT_FOUND, FC.CMD_INCOMPATIBLE_DEPENDENCY,
                    FC.CMD_LOCAL_MODULE_MISSING):
                return _rebuild(classified, piece, location, diagnostic)
            error_class = classified.error_class

    # the interpreter could not open the script it was given (``python: can't open file``):
    # what the command was for never ran, so it is the command's own failure in every purpose
    if primary.family == "python" and error_class == "file_not_found" and purpose not in (
            "general", "debug", "doctor"):
        return _by_purpose("general", primary, piece, cwd, status=status, signal=signal,
                           diagnostics=diagnostics)
    if purpose == "build":
        if problem:
            return _make(FC.BUILD_DIAGNOSTIC, piece, params={"program": piece.program,
                                                             "problem": problem},
                         location=location, error_class=error_class, diagnostic=diagnostic)
        return _make(FC.BUILD_FAILED, piece, location=location, error_class=error_class,
                     diagnostic=diagnostic)
    if purpose == "test" and primary.family in _COMPILED and primary.path and (
            error_class in _COMPILE_CLASSES):
        # the tests never ran: their build failed (``cargo test``'s error[E0599], ``go test``'s
        # "[build failed]", a compile error under jest/ts-jest): a build failure
        return _by_purpose("build", primary, piece, cwd, status=status, signal=signal,
                           diagnostics=diagnostics)
    if purpose == "test":
        if collecting:
            error_class = "test_collection_error"
        if subject and error_class in ("assertion_failed", "test_exception", "test_setup_error"):
            return _make(FC.TEST_CASE_FAILED, piece, params={"test": subject},
                         location=location, error_class=error_class, diagnostic=diagnostic)
        return _make(FC.TEST_FAILED, piece, location=location, error_class=error_class,
                     diagnostic=diagnostic)
    if purpose == "static_analysis":
        if primary.family in ("mypy", "ts"):
            error_class = "type_check_error"
        elif primary.family == "ruff":
            error_class = "lint_violation"
        return _make(FC.LINT_FAILED, piece, location=location, error_class=error_class,
                     diagnostic=diagnostic)
    if purpose == "merge":
        if error_class == "patch_conflict" and location:
            return _make(FC.GIT_MERGE_CONFLICT, piece, params={"path": location},
                         location=location, diagnostic=diagnostic)
        return _make(FC.GIT_MERGE_FAILED, piece, location=location, error_class=error_class,
                     diagnostic=diagnostic)
    if purpose == "doctor":
        return _make(FC.CMD_DOCTOR_FAILED, piece, location=location, error_class=error_class,
                     diagnostic=diagnostic)
    if purpose == "debug":
        # the debugged target's own diagnostic, when one was parsed
        target = _target_code(primary)
        if target is not None:
            return _by_purpose(target, primary, piece, cwd, status=status, signal=signal,
                               diagnostics=diagnostics)
        return _make(FC.CMD_DEBUG_FAILED, piece, location=location, error_class=error_class,
                     diagnostic=diagnostic)
    if problem:
        return _make(FC.CMD_DIAGNOSTIC, piece, params={"program": piece.program,
                                                       "problem": problem},
                     location=location, error_class=error_class, diagnostic=diagnostic)
    return _make(FC.CMD_FAILED, piece, params={"program": piece.program,
                                               "exit_code": piece.exit_code},
                 location=location, error_class=error_class, diagnostic=diagnostic)


_CARGO_UNBUILT: Final = lazy(r"\berror: (?:could not compile `|failed to run custom build "
                             r"command for `)")
"""cargo's own word that the crate or a build script did not build (no test ran)."""
_COMPILED: Final = frozenset({"cpp", "ld", "rust", "java", "ts", "go"})
_COMPILE_CLASSES: Final = frozenset({"compile_error", "link_error", "syntax_error",
                                     "undefined_reference", "undeclared_identifier",
                                     "missing_header", "type_mismatch"})


def _malformed(program: str) -> bool:
    """``program`` is no program's name (an option, punctuation), nor a shell word."""
    name = posixpath.basename(program) or program
    return name not in _SHELL_WORDS and _PROGRAM_NAME.fullmatch(name) is None


_SHELL_WORDS: Final = frozenset({"[", "[[", ".", ":", "!", "{", "(", "((", "sh", "*"})


def _built_first(purpose: str, text: str) -> str:
    """``build`` for a test run whose build cargo says failed (no test ran), else
    ``purpose``."""
    return "build" if purpose == "test" and _CARGO_UNBUILT.search(text) else purpose


def _target_code(primary: Diagnostic) -> str | None:
    """The purpose whose code a debugged target's diagnostic takes (None: the debug code)."""
    if primary.family in ("cpp", "ld", "rust", "java", "ts", "go") and primary.error_class != (
            "compile_error"):
        return "build"
    if primary.family in ("pytest", "unittest"):
        return "test"
    if primary.family in ("mypy", "ruff"):
        return "static_analysis"
    if primary.family in ("git", "patch") and primary.error_class == "patch_conflict":
        return "merge"
    return None


def _temp_free(location: str | None) -> str | None:
    """A location without the temporary directory it passes through (``tmpab12cd_3/x.py`` is
    ``x.py``): a temp directory never reaches a record's location, nor so its signature."""
    return strip_temp_dir(location) if location else None


def _temp_free_subject(subject: str | None) -> str | None:
    """A subject naming a file (a test's node id ``tmpab12cd_3/test_a.py::test_x``, a header)
    without the temporary directory it passes through."""
    if not subject or "/" not in subject:
        return subject
    head, sep, tail = subject.partition("::")
    stripped = strip_temp_dir(head)
    return stripped + sep + tail if stripped else subject


def as_local_module(failure: Failure, provided: Collection[str]) -> Failure:
    """``failure`` as the project's own missing module when the session says the project
    provides it; else ``failure`` unchanged. Pure: the caller supplies what the session knows.

    The classifier alone cannot know the repository: a missing module whose name says nothing
    (``testapp``, listed in a Django settings file the agent wrote) is ``FC-CMD-002``, a package
    to install. A caller that knows the session's repository passes the module names it
    provides in ``provided``: the top-level packages and modules of the repository (a directory
    with an ``__init__.py``, a ``*.py`` file at its root or under ``src/``), the modules the
    agent created or listed (an entry of ``INSTALLED_APPS``). When ``params["module"]``, or one
    of its dotted prefixes, is among them, the record becomes ``FC-CMD-014`` (command_error,
    task: the code imports what the project does not have) with the same surface, location,
    detail and metadata (``metadata["rule"]`` is ``local-module:session``).

    Args:
        failure: a record of any code; only ``FC-CMD-002`` with a ``module`` param changes.
        provided: dotted module names the session's repository provides.
    """
    if failure.code != FC.CMD_MISSING_MODULE.value:
        return failure
    module = failure.params.get("module")
    if not isinstance(module, str) or not module:
        return failure
    parts = module.split(".")
    names = {name for name in provided if isinstance(name, str)}
    if not any(".".join(parts[:end]) in names for end in range(1, len(parts) + 1)):
        return failure
    metadata: dict[str, Scalar] = {**failure.metadata, "rule": "local-module:session"}
    try:
        return FC.CMD_LOCAL_MODULE_MISSING.failure(
            surface=failure.surface, params={"module": module}, location=failure.location,
            detail=failure.detail, cause=failure.cause, context=failure.context,
            metadata=metadata, cause_refs=failure.cause_refs,
            evidence_refs=failure.evidence_refs)
    except (InvalidFailureError, KeyError):
        return failure
