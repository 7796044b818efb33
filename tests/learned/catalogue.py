"""The case files: loading, checking and expanding them into examples (see :mod:`tests.learned`).

Nothing here runs a command: the catalogue's size, its programs and its labels are read from
the data alone, so the tests can check them without running anything.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final

CASES: Final = Path(__file__).parent / "cases"
DOCS_CLASSIFICATION: Final = Path(__file__).parents[2] / "docs" / "classification.md"

GENERATOR_VERSION: Final = "1"
"""Part of the cache key: a change to how examples are run or written bumps it."""

DEFAULT_TIMEOUT_S: Final = 60.0
PLACEHOLDER: Final = re.compile(r"@([a-z_][a-z0-9_]*)@")
"""``@name@`` in a command, a file's path or text, or a setup script: a parameter's value."""

CASE_KEYS: Final = frozenset({
    "id", "program", "command", "exit", "kind", "class", "files", "setup", "params",
    "timeout", "about", "tools", "says",
})


class CaseError(ValueError):
    """A case file that does not follow the format (names the file and the field)."""


@dataclass(frozen=True, slots=True)
class Case:
    """One way a program passes or fails, with its truth, and the parameters it varies."""

    id: str
    ecosystem: str
    program: str
    command: str
    exit: int
    kind: str
    error_class: str
    files: dict[str, str] = field(default_factory=dict)
    setup: str = ""
    params: dict[str, tuple[str, ...]] = field(default_factory=dict)
    timeout_s: float = DEFAULT_TIMEOUT_S
    about: str = ""
    tools: tuple[str, ...] = ()
    """Every program the example needs on the machine (the program itself first)."""
    says: str = ""
    """A regular expression the output (stdout and stderr) must match, when set."""

    @property
    def size(self) -> int:
        """How many examples the case yields (the product of its parameters' lengths)."""
        count = 1
        for values in self.params.values():
            count *= len(values)
        return count

    def examples(self) -> list[Example]:
        """Every example: one per combination of parameter values, in a stable order."""
        names = sorted(self.params)
        out = []
        for combo in itertools.product(*(self.params[name] for name in names)):
            values = dict(zip(names, combo, strict=True))
            out.append(Example(case=self, values=values))
        return out


@dataclass(frozen=True, slots=True)
class Example:
    """A case with its parameters chosen: what the generator runs."""

    case: Case
    values: dict[str, str]

    @property
    def id(self) -> str:
        """Stable: the case id and a hash of the parameter values."""
        digest = hashlib.sha256(json.dumps(self.values, sort_keys=True).encode()).hexdigest()
        return f"{self.case.id}#{digest[:10]}"

    def fill(self, text: str) -> str:
        """``text`` with every ``@name@`` replaced by the parameter's value."""
        return PLACEHOLDER.sub(lambda m: self.values[m.group(1)], text)

    @property
    def command(self) -> str:
        return self.fill(self.case.command)

    @property
    def says(self) -> str:
        return self.fill(self.case.says)

    @property
    def setup(self) -> str:
        return self.fill(self.case.setup)

    @property
    def files(self) -> dict[str, str]:
        return {self.fill(path): self.fill(text) for path, text in self.case.files.items()}


def _fail(path: Path, where: str, message: str) -> CaseError:
    return CaseError(f"{path.name}: {where}: {message}")


def _str(path: Path, where: str, raw: dict[str, Any], key: str, default: str | None = None) -> str:
    value = raw.get(key, default)
    if not isinstance(value, str) or (default is None and not value.strip()):
        raise _fail(path, f"{where}.{key}", f"a non-empty string is required, got {value!r}")
    return value


def _case(path: Path, ecosystem: str, index: int, raw: Any) -> Case:
    where = f"case[{index}]"
    if not isinstance(raw, dict):
        raise _fail(path, where, f"a case is a table, got {raw!r}")
    where = f"case[{index}] ({raw.get('id', '?')})"
    unknown = set(raw) - CASE_KEYS
    if unknown:
        raise _fail(path, where, f"unknown keys {sorted(unknown)}")
    exit_status = raw.get("exit")
    if not isinstance(exit_status, int) or isinstance(exit_status, bool):
        raise _fail(path, f"{where}.exit", f"an exit status is required, got {exit_status!r}")
    files = raw.get("files", {})
    if not isinstance(files, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise _fail(path, f"{where}.files", "a table of path = text is required")
    params_raw = raw.get("params", {})
    if not isinstance(params_raw, dict):
        raise _fail(path, f"{where}.params", "a table of name = [values] is required")
    params: dict[str, tuple[str, ...]] = {}
    for name, values in params_raw.items():
        if (not isinstance(values, list) or not values
                or not all(isinstance(v, str) for v in values)):
            raise _fail(path, f"{where}.params.{name}", "a non-empty list of strings is required")
        if len(set(values)) != len(values):
            raise _fail(path, f"{where}.params.{name}", "values repeat")
        params[name] = tuple(values)
    timeout = raw.get("timeout", DEFAULT_TIMEOUT_S)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        raise _fail(path, f"{where}.timeout", f"a positive number of seconds, got {timeout!r}")
    program = _str(path, where, raw, "program")
    tools = raw.get("tools", [])
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        raise _fail(path, f"{where}.tools", "a list of program names is required")
    case = Case(
        id=_str(path, where, raw, "id"), ecosystem=ecosystem, program=program,
        command=_str(path, where, raw, "command"), exit=exit_status,
        kind=_str(path, where, raw, "kind"), error_class=_str(path, where, raw, "class"),
        files=files, setup=_str(path, where, raw, "setup", ""), params=params,
        timeout_s=float(timeout), about=_str(path, where, raw, "about", ""),
        tools=tuple(dict.fromkeys([program, *tools])),
        says=_str(path, where, raw, "says", ""),
    )
    try:
        re.compile(case.says)
    except re.error as exc:
        raise _fail(path, f"{where}.says", f"not a regular expression: {exc}") from exc
    used = set()
    for text in (case.command, case.setup, case.says, *case.files, *case.files.values()):
        used |= set(PLACEHOLDER.findall(text))
    if used - set(params):
        raise _fail(path, f"{where}.params", f"no values for {sorted(used - set(params))}")
    if set(params) - used:
        raise _fail(path, f"{where}.params", f"{sorted(set(params) - used)} used nowhere")
    if case.exit == 0 and case.kind != "none":
        raise _fail(path, f"{where}.kind", "a case that exits 0 has kind \"none\"")
    if case.kind == "none" and case.error_class != "none":
        raise _fail(path, f"{where}.class", "a passing case has class \"none\"")
    return case


def load(path: Path) -> list[Case]:
    """The cases of one file (its name, without ``.toml``, is their ecosystem).

    Raises:
        CaseError: the file is not TOML or a field is missing, of the wrong type or unknown.
    """
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise _fail(path, "file", f"not valid TOML: {exc}") from exc
    unknown = set(data) - {"case", "about"}
    if unknown:
        raise _fail(path, "file", f"unknown keys {sorted(unknown)}")
    raw_cases = data.get("case")
    if not isinstance(raw_cases, list) or not raw_cases:
        raise _fail(path, "case", "at least one [[case]] is required")
    cases = [_case(path, path.stem, index, raw) for index, raw in enumerate(raw_cases)]
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise _fail(path, f"case {case.id}", "the id repeats")
        seen.add(case.id)
    return cases


def case_files(folder: Path = CASES) -> list[Path]:
    return sorted(folder.glob("*.toml"))


def load_all(folder: Path = CASES, only: str | None = None) -> list[Case]:
    """Every case of every file in ``folder`` (of one ecosystem with ``only``); ids unique."""
    files = case_files(folder)
    if only is not None:
        files = [f for f in files if f.stem == only]
        if not files:
            known = ", ".join(f.stem for f in case_files(folder))
            raise CaseError(f"no ecosystem {only!r}; known: {known}")
    cases = [case for path in files for case in load(path)]
    ids = [case.id for case in cases]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise CaseError(f"case ids repeat across files: {repeated}")
    return cases


def cases_hash(folder: Path = CASES, only: str | None = None) -> str:
    """A hash of the case files read (and of :data:`GENERATOR_VERSION`): the cache key."""
    digest = hashlib.sha256(GENERATOR_VERSION.encode())
    for path in case_files(folder):
        if only is None or path.stem == only:
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@cache
def taxonomy() -> tuple[frozenset[str], frozenset[str]]:
    """failcode's kinds, and its classes: those of its own catalog's codes and those
    docs/classification.md names in its "Classes" section and parser table (the classes the
    command rules give)."""
    from failcode import FC, Kind

    kinds = frozenset(kind.value for kind in Kind)
    classes = {code.spec.error_class for code in FC if code.spec.error_class}
    text = DOCS_CLASSIFICATION.read_text()
    start = text.index("### Classes (public contract)")
    end = text.index("\n### ", start + 1)
    classes |= set(re.findall(r"`([a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+)`", text[start:end]))
    return kinds, frozenset(classes)
