"""Every range of failcode.toml at its bounds: each bound is accepted, one step outside refused.

The bounds below are written out by hand from the documented ranges (docs and the
``failcode config`` reference), not read from the schema, so a bound changed in the code fails
here until the documentation table changes with it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pytest

from failcode import FAILCODE_SCHEMA, FC, Section, Setting, validate_toml

if TYPE_CHECKING:
    from pathlib import Path

# path (with <class> for any retry class) -> (type, inclusive min, inclusive max)
BOUNDS: dict[str, tuple[str, float, float]] = {
    "retry.<class>.attempts": ("int", 1, 100),
    "retry.<class>.initial_delay_s": ("float", 0.0, 3600.0),
    "retry.<class>.max_delay_s": ("float", 0.0, 86400.0),
    "retry.<class>.multiplier": ("float", 1.0, 10.0),
    "retry.<class>.deadline_s": ("float", 0.001, 604800.0),
    "budget.capacity": ("float", 1.0, 1e6),
    "budget.retry_cost": ("float", 0.0, 1e6),
    "budget.success_refund": ("float", 0.0, 1e6),
    "ladder.change_repeats": ("int", 0, 100),
    "ladder.route_repeats": ("int", 0, 100),
    "server_delay.ceiling_s": ("float", 0.0, 86400.0),
    "monitor.signature_repeats": ("int", 1, 1000),
    "monitor.rejected_actions": ("int", 1, 1000),
    "monitor.no_matches": ("int", 1, 1000),
    "live.tell_after": ("int", 2, 1000),
    "live.timeout_s": ("float", 0.1, 60.0),
    "store.promote_after": ("int", 1, 1000),
    "store.demote_after": ("int", 1, 1000),
}

# values a bound needs beside it so that only the bound is tested (max_delay_s >= initial_delay_s)
COMPANIONS: dict[tuple[str, str], dict[str, float]] = {
    ("retry.<class>.initial_delay_s", "max"): {"max_delay_s": 86400.0},
    ("retry.<class>.max_delay_s", "min"): {"initial_delay_s": 0.0},
}


def _ranged_settings(section: Section, prefix: str = "") -> dict[str, Setting]:
    found: dict[str, Setting] = {}
    for key, entry in section.entries.items():
        path = f"{prefix}{key}"
        if isinstance(entry, Section):
            found |= _ranged_settings(entry, path + ".")
        elif entry.min is not None or entry.max is not None:
            found[path] = entry
    if section.named is not None:
        found |= _ranged_settings(section.named, f"{prefix}<class>.")
    return found


def test_every_ranged_setting_is_in_the_table() -> None:
    """The table above names exactly the settings that have a range, with their types."""
    settings = _ranged_settings(FAILCODE_SCHEMA)
    assert sorted(settings) == sorted(BOUNDS)
    for path, setting in settings.items():
        assert (setting.type, setting.min, setting.max) == BOUNDS[path], path


def _literal(kind: str, value: float) -> str:
    if kind == "int":
        return str(int(value))
    return repr(float(value))


def _write(tmp_path: Path, path: str, kind: str, value: float,
           companions: dict[str, float]) -> tuple[Path, list[str]]:
    parts = path.replace("<class>", "provider").split(".")
    table, key = ".".join(parts[:-1]), parts[-1]
    lines = [f"[{table}]", f"{key} = {_literal(kind, value)}"]
    lines += [f"{other} = {_literal('float', v)}" for other, v in companions.items()]
    file = tmp_path / "failcode.toml"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return file, parts


def _value(values: dict[str, Any], parts: list[str]) -> Any:
    for part in parts:
        values = values[part]
    return values


def _outside(kind: str, value: float, direction: float) -> float:
    """One step outside a bound: 1 for integers, the next representable float otherwise."""
    return value + direction if kind == "int" else math.nextafter(value, direction * math.inf)


CASES = [(path, side) for path in BOUNDS for side in ("min", "max")]


@pytest.mark.parametrize(("path", "side"), CASES)
def test_a_bound_itself_is_accepted(tmp_path: Path, path: str, side: str) -> None:
    """The inclusive bound is a permitted value and reaches the validated values unchanged."""
    kind, low, high = BOUNDS[path]
    bound = low if side == "min" else high
    file, parts = _write(tmp_path, path, kind, bound, COMPANIONS.get((path, side), {}))
    result = validate_toml(file)
    assert result.problems == ()
    assert _value(result.values, parts) == bound


@pytest.mark.parametrize(("path", "side"), CASES)
def test_one_step_outside_a_bound_is_refused(tmp_path: Path, path: str, side: str) -> None:
    """One step below the minimum or above the maximum is refused as FC-CFG-001, not clamped."""
    kind, low, high = BOUNDS[path]
    value = _outside(kind, low, -1) if side == "min" else _outside(kind, high, +1)
    file, parts = _write(tmp_path, path, kind, value, COMPANIONS.get((path, side), {}))
    result = validate_toml(file)
    assert [p.code for p in result.problems] == [FC.CFG_INVALID_VALUE.value]
    assert ".".join(parts) in result.problems[0].message
