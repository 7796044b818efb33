"""The learned model's features: one function, used when training and at run time alike.

:func:`features` turns a failed command (its argv, exit status, stdout and stderr) into a list
of string features. Training passes it to scikit-learn's vectorizer as the analyzer
(``tests/learned/train.py``) and :mod:`failcode.learned._model` calls it on every suggestion,
so the two can never disagree.

What it reads, all bounded (linear in the input, whatever its size):

- the output: the last :data:`TAIL_CHARS` characters of each stream, of those the last
  :data:`MAX_LINES` non-empty lines, each cut to :data:`LINE_CHARS` and normalized by failcode's
  own :func:`failcode.normalize_message` (no paths, numbers or secrets). Of each line:
  its words (``w:``), its word bigrams (``b:``), its first two words (``h:``), the words
  before a colon (``k:error``, ``k:fatal``: where compilers and tools say what went wrong),
  the parts of a CamelCase name (``p:module p:not p:found p:error``: Python's and Java's
  exception names share them), and the stream it came from (``s:``);
- the command: the verbs its words hold (``c:test``, ``c:install``: :data:`VERBS`), which say
  what kind of step ran whatever the program, and never the program's name itself, so the
  model learns output, not a list of programs;
- the exit status as a bucket (``x:1``, ``x:127``, ``x:signal``: :func:`exit_bucket`).
"""

from __future__ import annotations

import itertools
import re
import shlex
from typing import TYPE_CHECKING, Final

from failcode.signature._normalize import normalize_message

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "MAX_LINES", "TAIL_CHARS", "VERBS", "command_features", "excerpt", "exit_bucket", "features",
    "lines_of", "text_of",
]

TAIL_CHARS: Final = 8192
"""Of each stream, the last this many characters are read (the end says why it failed)."""
MAX_LINES: Final = 40
"""Of those, the last this many non-empty lines."""
LINE_CHARS: Final = 300
"""A line is cut to this many characters before normalizing."""
MAX_WORDS: Final = 40
"""Of a normalized line, the first this many words."""
COMMAND_CHARS: Final = 2048
"""Of the command, the first this many characters are read."""

VERBS: Final = frozenset({
    "add", "am", "apply", "audit", "bench", "build", "bundle", "check", "checkout",
    "cherry-pick", "ci", "clone", "commit", "compile", "coverage", "deploy", "diff", "doc",
    "download", "exec", "fetch", "fix", "fmt", "format", "generate", "get", "init", "install",
    "link", "lint", "make", "merge", "migrate", "mod", "package", "patch", "publish", "pull",
    "push", "rebase", "release", "remove", "restore", "revert", "run", "serve", "start",
    "status", "stash", "switch", "sync", "test", "tidy", "typecheck", "uninstall", "update",
    "upgrade", "verify", "vet",
})
"""Command words that say what kind of step ran, whatever the program (``npm test``,
``cargo build``, ``go vet``, ``git merge``)."""

_SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_WORD: Final = re.compile(r"<[a-z_]+>|[a-z][a-z0-9_'-]*")
_SEPARATORS: Final = re.compile(r"&&|\|\||[;|]")
_KEY: Final = re.compile(r"(?:^|[\s\]])([a-z][a-z0-9_ !-]{0,20}?):(?=\s|$)")
_CAMEL: Final = re.compile(r"\b[A-Z]?[a-z]+(?:[A-Z][a-z]+)+\b")
_PART: Final = re.compile(r"[A-Z]?[a-z]+")


def text_of(value: object) -> str:
    """A stream as text: bytes decoded as UTF-8 (invalid sequences replaced), lone
    surrogates replaced, None as empty; only the last :data:`TAIL_CHARS` characters."""
    if value is None:
        return ""
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value[-TAIL_CHARS * 4:])
        text = raw.decode("utf-8", errors="replace")
    else:
        text = value if isinstance(value, str) else str(value)
    text = text[-TAIL_CHARS:]
    return text.encode("utf-8", errors="replace").decode("utf-8", errors="replace")


def lines_of(text: str) -> list[str]:
    """The last :data:`MAX_LINES` non-empty lines of ``text``, each normalized (no paths,
    numbers or secrets) and cut to :data:`LINE_CHARS` characters first."""
    picked: list[str] = []
    for raw in reversed(text.replace("\r", "\n").split("\n")):
        line = raw.replace("\x00", " ").strip()
        if not line:
            continue
        normalized = normalize_message(line[:LINE_CHARS]).strip()
        if normalized:
            picked.append(normalized)
            if len(picked) == MAX_LINES:
                break
    picked.reverse()
    return picked


def exit_bucket(exit_code: int | None) -> str:
    """The exit status as a feature: ``x:none``, ``x:0`` to ``x:2``, ``x:124`` (a timeout),
    ``x:126``, ``x:127`` (not executable, not found), ``x:signal`` (negative or 128+N),
    else ``x:other``."""
    if exit_code is None or isinstance(exit_code, bool) or not isinstance(exit_code, int):
        return "x:none"
    if exit_code in (0, 1, 2, 124, 126, 127):
        return f"x:{exit_code}"
    if exit_code < 0 or 128 < exit_code < 160:
        return "x:signal"
    return "x:other"


def _command_words(argv: str | Sequence[str] | None) -> list[str]:
    """The words of the command: ``bash -c 'cmd'`` is read as ``cmd``."""
    if argv is None:
        return []
    if isinstance(argv, str):
        command = argv
    else:
        parts = [str(part) for part in list(argv)[:64]]
        if (len(parts) >= 3 and parts[0].rsplit("/", 1)[-1] in _SHELLS
                and parts[1].startswith("-") and parts[1].endswith("c")):
            command = parts[2]
        else:
            command = " ".join(parts)
    command = command[:COMMAND_CHARS]
    words: list[str] = []
    for segment in _SEPARATORS.split(command):
        try:
            words += shlex.split(segment)
        except ValueError:
            words += segment.split()
    return words


def command_features(argv: str | Sequence[str] | None) -> list[str]:
    """``c:VERB`` for each verb of :data:`VERBS` among the command's words (also a word like
    ``test_api.py`` or ``unittest`` gives ``c:test``); ``c:none`` when there is no command."""
    words = _command_words(argv)
    if not words:
        return ["c:none"]
    found: set[str] = set()
    for word in words:
        lowered = word.lower().rsplit("/", 1)[-1]
        if lowered in VERBS:
            found.add(lowered)
        if "test" in lowered:
            found.add("test")
    return [f"c:{verb}" for verb in sorted(found)] or ["c:other"]


def _line_features(line: str, stream: str, out: list[str]) -> None:
    words = _WORD.findall(line.lower())[:MAX_WORDS]
    if not words:
        return
    out.extend(f"k:{key}" for key in _KEY.findall(line.lower())[:4])
    for camel in _CAMEL.findall(line)[:4]:
        out.extend(f"p:{part.lower()}" for part in _PART.findall(camel))
    out.append(f"h:{' '.join(words[:2])}")
    out.append(f"s:{stream}")
    out.extend(f"w:{word}" for word in words)
    out.extend(f"b:{first} {second}" for first, second in itertools.pairwise(words))


def features(argv: str | Sequence[str] | None, exit_code: int | None, stdout: object,
             stderr: object) -> list[str]:
    """The features of one failed command (see the module's docstring); never raises.

    Args:
        argv: the command (a string, a list of words, or None).
        exit_code: its exit status, or None.
        stdout: its standard output (str, bytes or None).
        stderr: its standard error.

    Returns:
        The features, repeated as often as they occur (the vectorizer counts them).
    """
    out = [exit_bucket(exit_code)]
    try:
        out += command_features(argv)
    except Exception:  # noqa: BLE001 - any argv at all: a bad one only loses its verbs
        out.append("c:none")
    for stream, value in (("out", stdout), ("err", stderr)):
        for line in lines_of(text_of(value)):
            _line_features(line, stream, out)
    return out


def excerpt(stdout: object, stderr: object) -> str:
    """One normalized line that says what failed: the last line of stderr (else stdout)
    saying ``error`` (or ``fatal``, ``exception``), else the last naming a failure (``not
    found``, ``denied``...), else the last non-empty line; ``""`` when there is none."""
    lines = lines_of(text_of(stderr)) or lines_of(text_of(stdout))
    for pattern in (_SAYS_ERROR, _SAYS_FAILURE):
        for line in reversed(lines):
            if pattern.search(line):
                return line
    return lines[-1] if lines else ""


_SAYS_ERROR: Final = re.compile(r"error|fatal|exception|traceback", re.IGNORECASE)
_SAYS_FAILURE: Final = re.compile(
    r"fail|not found|no such|denied|cannot|can't|could not|unable|refused|"
    r"exception|traceback|conflict|unbound|undeclared|undefined|invalid|timed out|missing",
    re.IGNORECASE)
