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
the file text and records the line of every table header and every ``key = value``. Its limits:
keys inside an inline table (``a = {b = 1}``) and inside arrays of tables get the line of the
enclosing key or header; a key whose line is not found is reported at the line of its nearest
enclosing table (or line 1). It skips multi-line strings and multi-line arrays, and understands
bare, quoted and dotted keys.
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

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _parse_key(text: str) -> tuple[str, ...] | None:
    """Split a (dotted, possibly quoted) TOML key; None when it is not one."""
    parts: list[str] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            return None
        quote = text[i]
        if quote in "\"'":
            end = text.find(quote, i + 1)
            while quote == '"' and end > 0 and text[end - 1] == "\\":
                end = text.find(quote, end + 1)
            if end < 0:
                return None
            parts.append(text[i + 1:end])
            i = end + 1
        else:
            match = _BARE_KEY.match(text, i)
            if match is None:
                return None
            parts.append(match.group())
            i = match.end()
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            return tuple(parts)
        if text[i] != ".":
            return None
        i += 1


def _split_assignment(line: str) -> tuple[str, str] | None:
    """``key = value`` -> (key text, value text), the ``=`` found outside quotes."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "=":
            return line[:i], line[i + 1:]
        elif char == "#":
            return None
    return None


def _bracket_depth(value: str) -> tuple[int, str]:
    """The net ``[``/``{`` depth of a value's text outside strings and comments, and an open
    multi-line string delimiter (or "")."""
    depth = 0
    i, n = 0, len(value)
    while i < n:
        char = value[i]
        if value.startswith(('"""', "'''"), i):
            delimiter = value[i:i + 3]
            end = value.find(delimiter, i + 3)
            if end < 0:
                return depth, delimiter
            i = end + 3
            continue
        if char in "\"'":
            end = value.find(char, i + 1)
            while char == '"' and end > 0 and value[end - 1] == "\\":
                end = value.find(char, end + 1)
            i = n if end < 0 else end + 1
            continue
        if char == "#":
            break
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        i += 1
    return depth, ""


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """The 1-based line of every table header and ``key = value`` in TOML ``text``.

    Keys are full dotted paths (``("retry", "default", "attempts")``); see the module docstring
    for the scanner's limits.
    """
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    depth = 0
    open_string = ""
    for number, raw in enumerate(text.splitlines(), 1):
        if open_string:
            end = raw.find(open_string)
            if end >= 0:
                more, open_string = _bracket_depth(raw[end + 3:])
                depth = max(depth + more, 0)
            continue
        if depth > 0:
            more, open_string = _bracket_depth(raw)
            depth += more
            continue
        stripped = raw.strip()
        if not stripped or stripped[0] == "#":
            continue
        if stripped[0] == "[":
            array = stripped.startswith("[[")
            inner = stripped[2:stripped.find("]]")] if array else stripped[1:stripped.find("]")]
            key = _parse_key(inner)
            if key is not None:
                table = key
                lines.setdefault(table, number)
            continue
        assignment = _split_assignment(raw)
        if assignment is None:
            continue
        key = _parse_key(assignment[0])
        if key is None:
            continue
        lines.setdefault(table + key, number)
        depth, open_string = _bracket_depth(assignment[1])
        depth = max(depth, 0)
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
    """``text`` cut in the middle to ``limit`` characters, keeping its start and its last
    path component (the file name), e.g. ``/srv/app/…/config/failcode.toml``."""
    if len(text) <= limit:
        return text
    name = text.rsplit("/", 1)[-1]
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


class _Validator:
    def __init__(self, file: str, lines: Mapping[tuple[str, ...], int], root: tuple[str, ...]):
        self.file = file
        self.lines = lines
        self.root = root
        self.problems: list[Failure] = []

    def line(self, path: tuple[str, ...]) -> int:
        full = self.root + path
        while full:
            found = self.lines.get(full)
            if found is not None:
                return found
            full = full[:-1]
        return 1

    def dotted(self, path: tuple[str, ...]) -> str:
        return ".".join(path)

    def add(self, spec_name: str, path: tuple[str, ...], **params: object) -> None:
        from failcode.codes._catalog import FC  # noqa: PLC0415 - the catalog imports the registry

        if len(self.problems) >= MAX_PROBLEMS:
            return  # a huge broken file costs its first problems, not one record per line
        spec = FC[spec_name]
        clean = {"file": self.file, "line": self.line(path), **params}
        self.problems.append(spec.failure(surface="config.load", params=clean))

    def unknown(self, path: tuple[str, ...], value: object, known: Sequence[str]) -> None:
        name = path[-1]
        close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
        parent = self.dotted(path[:-1])
        if close:
            hint = f"did you mean {self.dotted((*path[:-1], close[0]))}?"
        else:
            allowed = ", ".join(sorted(known)) or "nothing"
            hint = f"{('[' + parent + ']') if parent else 'the top level'} allows {allowed}"
        if isinstance(value, dict):
            self.add("CFG_UNKNOWN_TABLE", path, table=self.dotted(path), hint=hint)
        else:
            self.add("CFG_UNKNOWN_KEY", path, key=self.dotted(path), hint=hint)

    def section(self, section: Section, data: Mapping[str, Any],
                path: tuple[str, ...], *, fill: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in data.items():
            entry = section.entries.get(key)
            sub = (*path, key)
            if entry is None and section.named is not None:
                if not isinstance(value, dict):
                    self.add("CFG_WRONG_TYPE", sub, key=self.dotted(sub),
                             value=_toml_repr(value), expected=f"a table [{self.dotted(sub)}]")
                    continue
                out[key] = self.section(section.named, value, sub, fill=False)
                continue
            if entry is None:
                known = list(section.entries)
                self.unknown(sub, value, known)
                continue
            if isinstance(entry, Section):
                if not isinstance(value, dict):
                    self.add("CFG_WRONG_TYPE", sub, key=self.dotted(sub),
                             value=_toml_repr(value), expected=f"a table [{self.dotted(sub)}]")
                    continue
                out[key] = self.section(entry, value, sub)
            else:
                checked = self.setting(entry, value, sub)
                if checked is not _INVALID:
                    out[key] = checked
        for key, entry in section.entries.items() if fill else ():
            if key not in out and (*path, key) not in self.seen_bad:
                out[key] = (self.section(entry, {}, (*path, key)) if isinstance(entry, Section)
                            else entry.default)
        return out

    seen_bad: set[tuple[str, ...]]

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
            self.add("CFG_WRONG_TYPE", path, key=self.dotted(path), value=_toml_repr(value),
                     expected=setting.expected)
            return _INVALID
        bad = False
        if kind in ("int", "float"):
            # ints compare with the float bounds exactly; float() of a 400-digit int overflows
            number: float = value  # type: ignore[assignment]
            bad = ((type(number) is float and not math.isfinite(number))
                   or (setting.min is not None and number < setting.min)
                   or (setting.max is not None and number > setting.max))
        elif kind == "str" and setting.choices is not None:
            bad = value not in setting.choices
        if bad:
            self.seen_bad.add(path)
            self.add("CFG_INVALID_VALUE", path, key=self.dotted(path), value=_toml_repr(value),
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
        table), each message naming the file, the line, the key, the value and what is allowed.
        A file that is not UTF-8, has a key of more than :data:`MAX_KEY_PARTS` dotted parts,
        nests arrays too deeply or holds an integer of over 4300 digits is broken TOML
        (FC-CFG-004), never an exception.

    Raises:
        OSError: the file cannot be read.
    """

    file = _display(path)
    if text is None:
        raw = Path(path).read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _broken(file, raw.count(b"\n", 0, exc.start) + 1,
                           f"not UTF-8 text (byte {exc.start})")
    if root is None:
        root = ("tool", "failcode") if Path(path).name == "pyproject.toml" else ()
    root = tuple(root)
    long_key = _long_dotted_key(text)
    if long_key is not None:
        return _broken(file, long_key, f"a key of more than {MAX_KEY_PARTS} dotted parts")
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        problem = str(exc)
        match = re.search(r"\(at line (\d+), column (\d+)\)", problem)
        if match:
            line = int(match.group(1))
            problem = problem[:match.start()].strip() + f" at column {match.group(2)}"
        else:
            line = max(1, len(text.splitlines()))
            problem = problem.replace("(at end of document)", "at the end of the file").strip()
        return _broken(file, line, problem)
    except RecursionError:
        return _broken(file, 1, "arrays or inline tables nested too deeply to read")
    except ValueError as exc:  # an integer of more digits than int() converts (4300)
        return _broken(file, 1, str(exc).split(";", 1)[0])
    node: Any = data
    for part in root:
        node = node.get(part, {}) if isinstance(node, dict) else {}
    validator = _Validator(file, key_lines(text), root)
    validator.seen_bad = set()
    if not isinstance(node, dict):
        validator.add("CFG_WRONG_TYPE", (), key=".".join(root), value=_toml_repr(node),
                      expected="a table")
        node = {}
    values = validator.section(schema, node, ())
    return ValidatedConfig(file, values, tuple(validator.problems))


def _broken(file: str, line: int, problem: str) -> ValidatedConfig:
    from failcode.codes._catalog import FC  # noqa: PLC0415 - the catalog imports the registry

    broken = FC.CFG_BROKEN_TOML.failure(surface="config.load", params={
        "file": file, "line": line, "problem": problem})
    return ValidatedConfig(file, {}, (broken,))


MAX_KEY_PARTS: Final = 1000
"""The most dotted parts a key may have: tomllib joins a key's parts one tuple at a time,
quadratic in their number, so a longer key is refused before it is parsed."""
# A chain of dotted key parts, each started only where no key character precedes it and
# matched possessively, so the scan is linear: no position is tried twice.
_DOTTED_CHAIN: Final = re.compile(
    r"""(?<![A-Za-z0-9_"'-])(?:(?:[A-Za-z0-9_-]++|"[^"\n]*+"|'[^'\n]*+')[ \t]*+\.[ \t]*+)++""")


def _long_dotted_key(text: str) -> int | None:
    """The line of the first chain of more than :data:`MAX_KEY_PARTS` dotted parts, or None."""
    for match in _DOTTED_CHAIN.finditer(text):
        if match.group().count(".") >= MAX_KEY_PARTS:
            return text.count("\n", 0, match.start()) + 1
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


def _policy_from(values: Mapping[str, Any], problems: list[Failure], file: str,
                 lines: Mapping[tuple[str, ...], int], root: tuple[str, ...]) -> Policy:
    from failcode.codes._catalog import FC  # noqa: PLC0415

    classes = dict(DEFAULT_CLASSES)
    for name, table in values.get("retry", {}).items():
        # a key the file leaves out keeps the class's built-in value (or default's)
        base = DEFAULT_CLASSES.get(name, DEFAULT_CLASSES["default"])
        initial = table.get("initial_delay_s", base.initial_delay_s)
        cap = table.get("max_delay_s", base.max_delay_s)
        if cap < initial:
            key = "max_delay_s" if "max_delay_s" in table else "initial_delay_s"
            path = (*root, "retry", name, key)
            problems.append(FC.CFG_INVALID_VALUE.failure(surface="config.load", params={
                "file": file, "line": lines.get(path, lines.get(path[:-1], 1)),
                "key": f"retry.{name}.{key}", "value": _num(table[key]),
                "expected": f"max_delay_s >= initial_delay_s ({_num(cap)} < {_num(initial)})"}))
        classes[name] = RetryClass(
            max_attempts=table.get("attempts", base.max_attempts), initial_delay_s=initial,
            max_delay_s=cap, multiplier=table.get("multiplier", base.multiplier),
            deadline_s=table.get("deadline_s", base.deadline_s))
    budget = values.get("budget", {})
    ladder = values.get("ladder", {})
    monitor = values.get("monitor", {})
    return Policy(
        classes=MappingProxyType(classes),
        budget=BudgetPolicy(budget.get("capacity", 500.0), budget.get("retry_cost", 5.0),
                            budget.get("success_refund", 1.0)),
        ladder=LadderPolicy(ladder.get("change_repeats", 1), ladder.get("route_repeats", 1)),
        retry_after_ceiling_s=values.get("server_delay", {}).get("ceiling_s", 60.0),
        continue_noncritical_defects=values.get("defects", {}).get("continue_noncritical",
                                                                   False),
        fallback_models=tuple(values.get("models", {}).get("fallbacks", ())),
        monitor=MonitorPolicy(monitor.get("signature_repeats", 3),
                              monitor.get("rejected_actions", 5), monitor.get("no_matches", 5)),
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
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
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
    result = validate_toml(path)
    problems = list(result.problems)
    if problems and result.values == {}:
        raise ConfigError(problems)
    text = Path(path).read_text(encoding="utf-8")  # decodable: validate_toml read it
    root = ("tool", "failcode") if Path(path).name == "pyproject.toml" else ()
    policy = _policy_from(result.values, problems, _display(path), key_lines(text), root)
    if problems:
        raise ConfigError(problems)
    return FailcodeConfig(policy, checks_from(result.values.get("preflight", {})), str(path),
                          result.values)
