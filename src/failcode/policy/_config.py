"""Configuration that refuses bad values: ``failcode.toml`` or
``[tool.failcode]`` in ``pyproject.toml``.

The validator is public and schema-driven, so users validate their own TOML files the same way:
declare a :class:`Section` of :class:`Setting` values (types and ranges as data), call
:func:`validate_toml`, and get back the values plus one :class:`~failcode.Failure` per problem,
each naming the file, the line, the key, the value and the permitted range, with an FC-CFG code:

==================  ===================  =========================================================
code                constant             problem
==================  ===================  =========================================================
FC-CFG-001          CFG_INVALID_VALUE    a value outside its range (nothing is ever clamped)
FC-CFG-002          CFG_UNKNOWN_KEY      a key the schema does not declare (nearest suggested)
FC-CFG-003          CFG_UNKNOWN_TABLE    a table the schema does not declare (nearest suggested)
FC-CFG-004          CFG_BROKEN_TOML      the file is not TOML (tomllib's line and column)
FC-CFG-005          CFG_WRONG_TYPE       a value of the wrong type (a string where a number goes)
==================  ===================  =========================================================

Line numbers: tomllib gives values, not positions, so a small scanner (:func:`key_lines`) reads
the file text and records the line of every table header and every ``key = value``, its key bare,
quoted (escapes resolved as TOML reads them) or dotted; it skips strings, comments, multi-line
strings and multi-line arrays. Its limits: the keys inside an inline table (``a = {b = 1}``) are
not recorded, a key repeated in several ``[[array]]`` tables keeps its first line, and a key
whose line is not recorded (such as a table only implied by a dotted key) is reported at the
line of its nearest enclosing table that is, or at line 1.
"""

from __future__ import annotations

import difflib
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Literal

from failcode.policy._decide import (
    DEFAULT_CLASSES,
    BudgetPolicy,
    LadderPolicy,
    MonitorPolicy,
    Policy,
    RetryClass,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from failcode.policy._preflight import Check
    from failcode.record._failure import Failure

__all__ = [
    "FAILCODE_SCHEMA",
    "ConfigError",
    "FailcodeConfig",
    "Section",
    "Setting",
    "ValidatedConfig",
    "find_config",
    "key_lines",
    "load_config",
    "validate_toml",
]

SettingType = Literal["int", "float", "bool", "str", "str_list"]


@dataclass(frozen=True, slots=True)
class Setting:
    """One configurable value: its type, its permitted range and its default.

    Attributes:
        type: ``int`` (bools refused), ``float`` (ints accepted; NaN and infinities refused),
            ``bool``, ``str`` or ``str_list``.
        default: the value when the key is absent.
        min: the smallest permitted number (inclusive), or None.
        max: the largest permitted number (inclusive), or None.
        choices: the permitted strings, or None.
        help: what it means, for summaries and error messages.
    """

    type: SettingType
    default: Any = None
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] | None = None
    help: str = ""

    @property
    def expected(self) -> str:
        """The permitted values in words, e.g. ``an integer from 1 to 100``."""
        noun = {"int": "an integer", "float": "a number", "bool": "true or false",
                "str": "a string", "str_list": "a list of strings"}[self.type]
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.min is not None and self.max is not None:
            return f"{noun} from {_num(self.min)} to {_num(self.max)}"
        if self.min is not None:
            return f"{noun} of at least {_num(self.min)}"
        if self.max is not None:
            return f"{noun} of at most {_num(self.max)}"
        return noun


@dataclass(frozen=True, slots=True)
class Section:
    """A table of the schema: its settings and sub-tables, and optionally free-named sub-tables.

    Attributes:
        entries: key -> :class:`Setting` or nested :class:`Section`.
        named: when set, any other key is the name of a sub-table of this shape (e.g.
            ``[retry.<operation class>]``); names must be identifiers.
        help: what the table is for.
    """

    entries: Mapping[str, Setting | Section] = field(default_factory=dict)
    named: Section | None = None
    help: str = ""


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


# ---------------------------------------------------------------------------------------------
# failcode's own schema

_RETRY_CLASS: Final = Section({
    "attempts": Setting("int", 3, 1, 100,
                        help="Attempts in all, the first included (1: never retry); a retryable "
                             "failure escalates when they are used up"),
    "initial_delay_s": Setting("float", 0.5, 0.0, 3600.0,
                               help="Seconds of backoff before the first retry (the cap of its "
                                    "random delay)"),
    "max_delay_s": Setting("float", 8.0, 0.0, 86400.0,
                           help="The longest backoff, whatever the attempt; at least "
                                "initial_delay_s (a server-directed delay has its own ceiling)"),
    "multiplier": Setting("float", 2.0, 1.0, 10.0,
                          help="How much the backoff grows per attempt"),
    "deadline_s": Setting("float", 60.0, 0.001, 604800.0,
                          help="The longest an operation may take from its first attempt; a "
                               "retry whose delay would end later escalates instead"),
}, help="Retry bounds of one operation class: attempts, backoff and deadline")

FAILCODE_SCHEMA: Final = Section({
    "retry": Section(named=_RETRY_CLASS,
                     help="[retry.<class>]: attempts and backoff per operation class"),
    "budget": Section({
        "capacity": Setting("float", 500.0, 1.0, 1e6,
                            help="Tokens in a full retry budget (the bucket starts full)"),
        "retry_cost": Setting("float", 5.0, 0.0, 1e6,
                              help="Tokens one retry of a retryable failure spends; with fewer "
                                   "left, the failure escalates instead (0: retries are free)"),
        "success_refund": Setting("float", 1.0, 0.0, 1e6,
                                  help="Tokens a success puts back, never above capacity"),
    }, help="The retry budget: a token bucket shared by a session or process, so a failing "
            "dependency cannot turn every call into a retry storm"),
    "ladder": Section({
        "change_repeats": Setting("int", 1, 0, 100,
                                  help="Repeats of one signature, with nothing changed, decided "
                                       "retry_after_change before the failure is routed to its "
                                       "owner"),
        "route_repeats": Setting("int", 1, 0, 100,
                                 help="Further repeats routed to the owner (escalate) before "
                                      "the operation is blocked"),
    }, help="The stuck ladder: what happens when the same failure repeats with nothing changed"),
    "server_delay": Section({
        "ceiling_s": Setting("float", 60.0, 0.0, 86400.0,
                             help="The longest server-directed delay (Retry-After) honoured; a "
                                  "longer one escalates at once instead of waiting"),
    }, help="Retry-After and similar server-directed delays"),
    "defects": Section({
        "continue_noncritical": Setting("bool", False,
                                        help="Skip a not-retryable defect on a path marked "
                                             "non-critical instead of aborting (default: stop)"),
    }, help="What a defect does to the session"),
    "models": Section({
        "fallbacks": Setting("str_list", [],
                             help="Models a scheduler may switch to; when set, provider and "
                                  "model-capability failures carry the fallback_model_exists "
                                  "hint"),
    }, help="Model fallbacks"),
    "monitor": Section({
        "signature_repeats": Setting("int", 3, 1, 1000,
                                     help="Occurrences of one failure signature without "
                                          "progress that make the session stuck"),
        "rejected_actions": Setting("int", 5, 1, 1000,
                                    help="Rejected actions without progress that make the "
                                         "session stuck"),
        "no_matches": Setting("int", 5, 1, 1000,
                              help="No-match probes (a grep that found nothing) without "
                                   "progress that make the session stuck"),
    }, help="When the no-progress monitor calls a session stuck (any threshold reached)"),
    "live": Section({
        "tell_after": Setting("int", 2, 2, 1000,
                              help="Steps failing of one root cause, in a loop as triage finds "
                                   "loops, before the agent's hook tells the model (2: at the "
                                   "second of two consecutive failures)"),
        "stop_for_person": Setting("bool", True,
                                   help="Stop the agent when only a person can fix the failure "
                                        "(false: tell the model to stop retrying and ask)"),
        "timeout_s": Setting("float", 2.0, 0.1, 60.0,
                             help="The longest one hook call may take; past it the hook "
                                  "answers nothing"),
        "report": Setting("bool", True,
                          help="Send each failure to the service named by FAILCODE_URL and "
                               "FAILCODE_KEY, when both are set (never waiting for it)"),
    }, help="`failcode hook`: what the hooks installed in an agent tell it while it runs"),
    "store": Section({
        "url": Setting("str", "", help="The event store URL; empty: the embedded SQLite store "
                                       "at the platform's user data path"),
        "promote_after": Setting("int", 3, 1, 1000,
                                 help="Successes of a remedy on one signature that make it "
                                      "the signature's known remedy"),
        "demote_after": Setting("int", 2, 1, 1000,
                                help="Failures in a row that demote a known remedy"),
    }, help="The failure event store and its debug knowledge by signature"),
    "preflight": Section({
        "programs": Setting("str_list", [], help="Programs that must be on PATH (FC-CMD-001)"),
        "modules": Setting("str_list", [],
                           help="Python modules that must be importable, found without "
                                "importing them (FC-CMD-002)"),
        "env": Setting("str_list", [],
                       help="Environment variables that must be set and non-empty "
                            "(FC-CFG-006)"),
        "credentials_files": Setting("str_list", [],
                                     help="Files that must exist and be readable, ~ expanded "
                                          "(FC-CFG-007)"),
        "writable_dirs": Setting("str_list", [],
                                 help="Directories that must exist and be writable, ~ expanded "
                                      "(FC-CFG-008)"),
    }, help="Start-up checks, run by `failcode doctor` and `failcode.preflight()`"),
}, help="failcode's policy")
"""The schema of ``failcode.toml`` (and ``[tool.failcode]``)."""


# ---------------------------------------------------------------------------------------------
# the line scanner

# One part of a key and the blanks around it: a bare key, a basic string (backslash escapes
# skipped) or a literal string; group 1, 2 or 3 holds the part's text, by kind.
_KEY_PART: Final = re.compile(
    r"""[ \t]*+(?:([A-Za-z0-9_-]++)|"((?:[^"\\\n]|\\.)*+)"|'([^'\n]*+)')[ \t]*+""")
# A one-line string from its opening quote to its closing one, by the opening quote.
_STRING: Final = {'"': re.compile(r'"(?:[^"\\\n]|\\.)*+"'), "'": re.compile(r"'[^'\n]*+'")}
# The rest of a multi-line string, from where a line starts inside it to its closing delimiter,
# by the delimiter: one or two quotes in a row are content, and so are one or two just before
# the delimiter (a run of four or five quotes ends the string).
_MULTILINE_END: Final = {'"""': re.compile(r'(?:[^"\\]|\\.|"{1,2}+(?!"))*+"{3,5}+'),
                         "'''": re.compile(r"(?:[^']|'{1,2}+(?!'))*+'{3,5}+")}
# What changes the depth of a value (group 1 opens, group 2 closes), starts a string (group 3)
# or a comment (no group).
_SIGNIFICANT: Final = re.compile(r"""([\[{])|([\]}])|(["'])|#""")
_HEADER: Final = re.compile(r"[ \t]*+(\[\[?)")


def _unescape(content: str) -> str:
    """A basic string's content with its escapes resolved as TOML reads them (unchanged when
    it is not a valid basic string)."""
    try:
        return str(tomllib.loads(f'k = "{content}"')["k"])
    except tomllib.TOMLDecodeError:
        return content


def _parse_key(text: str, start: int) -> tuple[tuple[str, ...], int] | None:
    """The (dotted, possibly quoted) TOML key at ``text[start:]``, and the index after it and
    the blanks that follow; None when there is none."""
    parts: list[str] = []
    while True:
        part = _KEY_PART.match(text, start)
        if part is None:
            return None
        bare, basic, literal = part.groups()
        parts.append(_unescape(basic) if basic is not None else bare or literal)
        start = part.end()
        if not text.startswith(".", start):
            return tuple(parts), start
        start += 1


def _bracket_depth(value: str, open_string: str = "") -> tuple[int, str]:
    """The net ``[``/``{`` depth of one line of a value, outside strings and comments, and the
    delimiter of a multi-line string still open at its end (or ""); ``open_string`` is the
    delimiter of a multi-line string the line starts inside."""
    depth, i = 0, 0
    while True:
        if open_string:
            rest = _MULTILINE_END[open_string].match(value, i)
            if rest is None:
                return depth, open_string
            i, open_string = rest.end(), ""
        found = _SIGNIFICANT.search(value, i)
        if found is None or found.lastindex is None:  # the line's end, or a comment
            return depth, ""
        char, i = found.group(), found.end()
        if found.lastindex == 1:
            depth += 1
        elif found.lastindex == 2:
            depth -= 1
        elif value.startswith(char * 3, found.start()):
            open_string = char * 3
            i += 2
        else:
            string = _STRING[char].match(value, found.start())
            if string is None:  # not TOML: a string that does not end on its line
                return depth, ""
            i = string.end()


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """The 1-based line of every table header and ``key = value`` in TOML ``text``.

    Keys are full dotted paths (``("retry", "default", "attempts")``), quoted parts as TOML
    reads them; see the module docstring for the scanner's limits.
    """
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    depth = 0
    open_string = ""
    for number, raw in enumerate(text.split("\n"), 1):
        if open_string or depth > 0:
            more, open_string = _bracket_depth(raw, open_string)
            depth += more
            continue
        header = _HEADER.match(raw)
        if header is not None:
            key = _parse_key(raw, header.end())
            if key is not None and raw.startswith("]" * len(header.group(1)), key[1]):
                table = key[0]
                lines.setdefault(table, number)
            continue
        key = _parse_key(raw, 0)
        if key is not None and raw.startswith("=", key[1]):
            lines.setdefault(table + key[0], number)
            depth, open_string = _bracket_depth(raw[key[1] + 1:])
    return lines


# ---------------------------------------------------------------------------------------------
# validation


@dataclass(frozen=True, slots=True)
class ValidatedConfig:
    """What :func:`validate_toml` found: the values (defaults filled in) and the problems."""

    file: str
    values: dict[str, Any]
    problems: tuple[Failure, ...]

    @property
    def ok(self) -> bool:
        """Whether there is no problem."""
        return not self.problems


class ConfigError(ValueError):
    """A configuration file was refused; ``problems`` holds one FC-CFG Failure per problem."""

    def __init__(self, problems: Sequence[Failure]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(f"[{p.code}] {p.message}" for p in self.problems))


def _toml_repr(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, dict):
        return "{...}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_repr(v) for v in value) + "]"
    return str(value)


_DISPLAY_CHARS: Final = 48
"""The longest file name a message shows; every FC-CFG template leaves a param at least this."""


def _shorten_middle(text: str, limit: int = _DISPLAY_CHARS) -> str:
    """``text`` cut in the middle to exactly ``limit`` characters when longer, keeping its start
    and its last path component (the file name), e.g. ``/srv/app/…/config/failcode.toml``.

    The end kept is the file name with the slash before it, or half the room beside the "…"
    (``(limit - 1) // 2`` characters) when that is more; the start fills the rest, at least one
    character (so a file name longer than ``limit - 2`` loses its own start)."""
    if len(text) <= limit:
        return text
    name = text[text.rfind("/") + 1:]
    tail = min(limit - 2, max(len(name) + 1, (limit - 1) // 2))
    return text[: limit - 1 - tail] + "\u2026" + text[-tail:]


def _display(path: str | Path) -> str:
    """The file as messages name it: relative to the working directory when inside it, and cut
    in the middle when long (a message is one bounded sentence; the file name is kept)."""
    try:
        shown = str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError, RuntimeError):
        shown = str(path)
    return _shorten_middle(shown)


def _line(lines: Mapping[tuple[str, ...], int], path: tuple[str, ...]) -> int:
    """The line of ``path`` (a full dotted path), else of its nearest enclosing table found,
    else 1."""
    while path not in lines and path:
        path = path[:-1]
    return lines.get(path, 1)


class _Validator:
    def __init__(self, file: str, lines: Mapping[tuple[str, ...], int], root: tuple[str, ...]):
        self.file = file
        self.lines = lines
        self.root = root
        self.problems: list[Failure] = []
        self.seen_bad: set[tuple[str, ...]] = set()

    def add(self, spec_name: str, path: tuple[str, ...], **params: object) -> None:
        from failcode.codes._catalog import FC  # noqa: PLC0415 - the catalog imports the registry

        if len(self.problems) >= MAX_PROBLEMS:
            return  # a huge broken file costs its first problems, not one record per line
        clean = {"file": self.file, "line": _line(self.lines, self.root + path), **params}
        self.problems.append(FC[spec_name].failure(surface="config.load", params=clean))

    def unknown(self, path: tuple[str, ...], value: object, known: Sequence[str]) -> None:
        close = difflib.get_close_matches(path[-1], known)
        parent = ".".join(path[:-1])
        if close:
            hint = f"did you mean {'.'.join((*path[:-1], close[0]))}?"
        else:
            allowed = ", ".join(sorted(known)) or "nothing"
            hint = f"{f'[{parent}]' if parent else 'the top level'} allows {allowed}"
        if isinstance(value, dict):
            self.add("CFG_UNKNOWN_TABLE", path, table=".".join(path), hint=hint)
        else:
            self.add("CFG_UNKNOWN_KEY", path, key=".".join(path), hint=hint)

    def not_a_table(self, path: tuple[str, ...], value: object) -> None:
        self.seen_bad.add(path)
        dotted = ".".join(path)
        self.add("CFG_WRONG_TYPE", path, key=dotted, value=_toml_repr(value),
                 expected=f"a table [{dotted}]")

    def section(self, section: Section, data: Mapping[str, Any],
                path: tuple[str, ...], *, fill: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in data.items():
            entry = section.entries.get(key, section.named)
            sub = (*path, key)
            if entry is None:
                self.unknown(sub, value, list(section.entries))
            elif isinstance(entry, Setting):
                checked = self.setting(entry, value, sub)
                if checked is not _INVALID:
                    out[key] = checked
            elif not isinstance(value, dict):
                self.not_a_table(sub, value)
            else:  # a named table (e.g. [retry.<class>]) keeps only the keys it sets
                out[key] = self.section(entry, value, sub, fill=key in section.entries)
        for key, entry in section.entries.items() if fill else ():
            if key not in out and (*path, key) not in self.seen_bad:
                out[key] = (self.section(entry, {}, (*path, key)) if isinstance(entry, Section)
                            else entry.default)
        return out

    def setting(self, setting: Setting, value: object, path: tuple[str, ...]) -> object:
        kind = setting.type
        ok_type = (
            (kind == "int" and type(value) is int)
            or (kind == "float" and type(value) in (int, float))
            or (kind == "bool" and type(value) is bool)
            or (kind == "str" and type(value) is str)
            or (kind == "str_list" and type(value) is list
                and all(type(item) is str for item in value))
        )
        if not ok_type:
            self.seen_bad.add(path)
            self.add("CFG_WRONG_TYPE", path, key=".".join(path), value=_toml_repr(value),
                     expected=setting.expected)
            return _INVALID
        # ints compare with the float bounds exactly; float() of a 400-digit int overflows
        number: float = value  # type: ignore[assignment]
        bad = (kind in ("int", "float") and (
            (type(number) is float and not math.isfinite(number))
            or (setting.min is not None and number < setting.min)
            or (setting.max is not None and number > setting.max))) or (
            kind == "str" and setting.choices is not None and value not in setting.choices)
        if bad:
            self.seen_bad.add(path)
            self.add("CFG_INVALID_VALUE", path, key=".".join(path), value=_toml_repr(value),
                     expected=setting.expected)
            return _INVALID
        return float(value) if kind == "float" else value  # type: ignore[arg-type]


_INVALID: Final = object()
MAX_PROBLEMS: Final = 100
"""The most problems :func:`validate_toml` reports for one file; the rest are not looked at."""


def validate_toml(
    path: str | Path,
    schema: Section = FAILCODE_SCHEMA,
    *,
    text: str | None = None,
    root: Sequence[str] | None = None,
) -> ValidatedConfig:
    """Validate a TOML file against ``schema``: every problem (up to :data:`MAX_PROBLEMS`),
    none clamped.

    Args:
        path: the file (read unless ``text`` is given; always used as the name in messages).
        schema: the tables, keys, types and ranges allowed.
        text: the file's text, when already read.
        root: the table holding the configuration (``("tool", "failcode")`` for a
            pyproject.toml); default: that for a file named ``pyproject.toml``, else the top.
            Keys outside ``root`` are not checked.

    Returns:
        The values (defaults filled in for absent keys; invalid ones left out) and one FC-CFG
        Failure per problem (broken TOML, wrong type, value out of range, unknown key or
        table) with the surface ``config.load``, each message naming the file, the line, the
        key, the value and what is allowed. A file that is not UTF-8 (the line of the first
        bad byte), has a key of more than :data:`MAX_KEY_PARTS` dotted parts (the key's line),
        nests arrays too deeply or holds an integer of over 4300 digits (line 1: the parser
        does not say where) is broken TOML (FC-CFG-004), never an exception; so is a file that
        ends too early (its last line).

    Raises:
        OSError: the file cannot be read.
    """
    return _validate(path, schema, text, root)[0]


def _validate(path: str | Path, schema: Section, text: str | None,
              root: Sequence[str] | None) -> tuple[ValidatedConfig, dict[tuple[str, ...], int]]:
    """:func:`validate_toml`, and the line of every key (none for a file that is not TOML)."""
    file = _display(path)
    if text is None:
        raw = Path(path).read_bytes()
        try:
            text = raw.decode()
        except UnicodeDecodeError as exc:
            return _broken(file, raw[:exc.start].count(b"\n") + 1,
                           f"not UTF-8 text (byte {exc.start})"), {}
    long_key = _long_dotted_key(text)
    if long_key is not None:
        return _broken(file, long_key, f"a key of more than {MAX_KEY_PARTS} dotted parts"), {}
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        problem = str(exc)
        match = re.search(r" \(at line (\d+), column (\d+)\)$", problem)
        if match:
            line = int(match.group(1))
            problem = f"{problem[:match.start()]} at column {match.group(2)}"
        else:
            line = text[:-1].count("\n") + 1  # the file's last line
            problem = problem.replace(" (at end of document)", " at the end of the file")
        return _broken(file, line, problem), {}
    except RecursionError:
        return _broken(file, 1, "arrays or inline tables nested too deeply to read"), {}
    except ValueError as exc:  # an integer of more digits than int() converts (4300)
        return _broken(file, 1, str(exc).split(";")[0]), {}
    root = _root_for(path) if root is None else tuple(root)
    node: Any = data
    for part in root:
        node = node.get(part, {}) if isinstance(node, dict) else {}
    lines = key_lines(text)
    validator = _Validator(file, lines, root)
    if not isinstance(node, dict):
        validator.add("CFG_WRONG_TYPE", (), key=".".join(root), value=_toml_repr(node),
                      expected="a table")
        node = {}
    values = validator.section(schema, node, ())
    return ValidatedConfig(file, values, tuple(validator.problems)), lines


def _root_for(path: str | Path) -> tuple[str, ...]:
    """The table holding failcode's configuration in ``path``."""
    return ("tool", "failcode") if Path(path).name == "pyproject.toml" else ()


def _broken(file: str, line: int, problem: str) -> ValidatedConfig:
    from failcode.codes._catalog import FC  # noqa: PLC0415 - the catalog imports the registry

    broken = FC.CFG_BROKEN_TOML.failure(surface="config.load", params={
        "file": file, "line": line, "problem": problem})
    return ValidatedConfig(file, {}, (broken,))


MAX_KEY_PARTS: Final = 1000
"""The most dotted parts a key may have: tomllib joins a key's parts one tuple at a time,
quadratic in their number, so a longer key is refused before it is parsed."""
# A chain of key parts each followed by a dot, started only where no key character precedes it
# and matched possessively, so the scan is linear: no position is tried twice.
_DOTTED_CHAIN: Final = re.compile(
    r"""(?<![A-Za-z0-9_"'-])(?:(?:[A-Za-z0-9_-]++|"(?:[^"\\\n]|\\.)*+"|'[^'\n]*+')"""
    r"""[ \t]*+\.[ \t]*+)++""")


def _long_dotted_key(text: str) -> int | None:
    """The line of the first key of more than :data:`MAX_KEY_PARTS` dotted parts, or None."""
    for chain in _DOTTED_CHAIN.finditer(text):
        # the chain's parts (a quoted one may hold dots), and the key's last part after them
        if len(_KEY_PART.findall(chain.group())) >= MAX_KEY_PARTS:
            return text[:chain.start()].count("\n") + 1
    return None


# ---------------------------------------------------------------------------------------------
# failcode's configuration


@dataclass(frozen=True, slots=True)
class FailcodeConfig:
    """The effective configuration: the decision policy, the start-up checks and where they
    came from (``source`` is None when failcode's defaults apply)."""

    policy: Policy
    preflight: tuple[Check, ...]
    source: str | None
    values: Mapping[str, Any] = field(default_factory=dict)


def _retry_classes(retry: Mapping[str, Mapping[str, Any]]) -> dict[str, RetryClass]:
    """The retry classes: the built-in ones, updated and extended by the file's."""
    classes = dict(DEFAULT_CLASSES)
    for name, table in retry.items():
        # a key the file leaves out keeps the class's built-in value (or default's)
        base = DEFAULT_CLASSES.get(name, DEFAULT_CLASSES["default"])
        classes[name] = RetryClass(
            max_attempts=table.get("attempts", base.max_attempts),
            initial_delay_s=table.get("initial_delay_s", base.initial_delay_s),
            max_delay_s=table.get("max_delay_s", base.max_delay_s),
            multiplier=table.get("multiplier", base.multiplier),
            deadline_s=table.get("deadline_s", base.deadline_s))
    return classes


def _delay_problems(classes: Mapping[str, RetryClass], retry: Mapping[str, Mapping[str, Any]],
                    file: str, lines: Mapping[tuple[str, ...], int],
                    root: tuple[str, ...]) -> list[Failure]:
    """One FC-CFG-001 per retry class of the file whose max_delay_s is below its
    initial_delay_s, naming the key the file sets (max_delay_s when it sets both)."""
    from failcode.codes._catalog import FC  # noqa: PLC0415

    problems = []
    for name, table in retry.items():
        initial, cap = classes[name].initial_delay_s, classes[name].max_delay_s
        if cap < initial:
            key = "max_delay_s" if "max_delay_s" in table else "initial_delay_s"
            problems.append(FC.CFG_INVALID_VALUE.failure(surface="config.load", params={
                "file": file, "line": _line(lines, (*root, "retry", name, key)),
                "key": f"retry.{name}.{key}", "value": _num(table[key]),
                "expected": f"max_delay_s >= initial_delay_s ({_num(cap)} < {_num(initial)})"}))
    return problems


def _policy_from(values: Mapping[str, Any], classes: Mapping[str, RetryClass]) -> Policy:
    """The Policy of validated values: every table and key present, every value valid."""
    budget, ladder, monitor = values["budget"], values["ladder"], values["monitor"]
    return Policy(
        classes=MappingProxyType(dict(classes)),
        budget=BudgetPolicy(budget["capacity"], budget["retry_cost"], budget["success_refund"]),
        ladder=LadderPolicy(ladder["change_repeats"], ladder["route_repeats"]),
        retry_after_ceiling_s=values["server_delay"]["ceiling_s"],
        continue_noncritical_defects=values["defects"]["continue_noncritical"],
        fallback_models=tuple(values["models"]["fallbacks"]),
        monitor=MonitorPolicy(monitor["signature_repeats"], monitor["rejected_actions"],
                              monitor["no_matches"]),
    )


def find_config(start: str | Path | None = None) -> Path | None:
    """The configuration file for ``start`` (default: the working directory): ``failcode.toml``
    there, else a ``pyproject.toml`` there with a ``[tool.failcode]`` table; None otherwise."""
    base = Path.cwd() if start is None else Path(start)
    candidate = base / "failcode.toml"
    if candidate.is_file():
        return candidate
    pyproject = base / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_bytes().decode())
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
            return pyproject  # let load_config report it with its line
        if isinstance(data.get("tool"), dict) and "failcode" in data["tool"]:
            return pyproject
    return None


def load_config(path: str | Path | None = None) -> FailcodeConfig:
    """Load failcode's configuration, refusing any invalid value.

    Args:
        path: a ``failcode.toml`` or ``pyproject.toml``; default: :func:`find_config` in the
            working directory (failcode's defaults when there is none).

    Returns:
        The effective configuration.

    Raises:
        ConfigError: a problem in the file (all of them are listed, each with its FC-CFG code,
            file, line, key, value and permitted range).
        OSError: the file cannot be read.
    """
    from failcode.policy._preflight import checks_from  # noqa: PLC0415 - preflight imports us

    if path is None:
        path = find_config()
        if path is None:
            return FailcodeConfig(Policy(), (), None)
    result, lines = _validate(path, FAILCODE_SCHEMA, None, None)
    if not result.values:  # not TOML: nothing to check further
        raise ConfigError(result.problems)
    classes = _retry_classes(result.values["retry"])
    problems = [*result.problems, *_delay_problems(
        classes, result.values["retry"], result.file, lines, _root_for(path))]
    if problems:
        raise ConfigError(problems)
    return FailcodeConfig(_policy_from(result.values, classes),
                          checks_from(result.values["preflight"]), str(path), result.values)
