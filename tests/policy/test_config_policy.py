"""From failcode.toml to the Policy: every key reaches its field, and every message is exact.

The expected values are written out from the configuration reference (docs/config.md): each
key's default and what it changes; a retry class the file only partly sets keeps its built-in
values (or the ``default`` class's, for a class failcode does not know).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from failcode import (
    FC,
    BudgetPolicy,
    ConfigError,
    Failure,
    LadderPolicy,
    MonitorPolicy,
    RetryClass,
    find_config,
    load_config,
    validate_toml,
)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _write(text: str, name: str = "failcode.toml") -> Path:
    path = Path(name)
    path.write_text(text, encoding="utf-8")
    return path


EVERY_KEY = """\
[retry.provider]
attempts = 7
initial_delay_s = 2.5
max_delay_s = 40.0
multiplier = 3.0
deadline_s = 300.0

[retry.scraper]
multiplier = 1.5

[budget]
capacity = 50.0
retry_cost = 2.0
success_refund = 0.5

[ladder]
change_repeats = 3
route_repeats = 2

[server_delay]
ceiling_s = 12.0

[defects]
continue_noncritical = true

[models]
fallbacks = ["small-model", "backup"]

[monitor]
signature_repeats = 9
rejected_actions = 8
no_matches = 7
"""


def test_every_key_reaches_its_policy_field() -> None:
    """Each key of the file sets exactly the Policy field the reference says it changes."""
    policy = load_config(_write(EVERY_KEY)).policy
    assert policy.retry_class("provider") == RetryClass(
        max_attempts=7, initial_delay_s=2.5, max_delay_s=40.0, multiplier=3.0,
        deadline_s=300.0)
    assert policy.budget == BudgetPolicy(capacity=50.0, retry_cost=2.0, success_refund=0.5)
    assert policy.ladder == LadderPolicy(change_repeats=3, route_repeats=2)
    assert policy.retry_after_ceiling_s == 12.0
    assert policy.continue_noncritical_defects is True
    assert policy.fallback_models == ("small-model", "backup")
    assert policy.monitor == MonitorPolicy(signature_repeats=9, rejected_actions=8,
                                           no_matches=7)


def test_a_new_class_takes_the_default_class_for_what_it_leaves_out() -> None:
    """[retry.scraper] sets only the multiplier; the rest is the default class's."""
    policy = load_config(_write(EVERY_KEY)).policy
    default = RetryClass()
    assert policy.retry_class("scraper") == RetryClass(
        max_attempts=default.max_attempts, initial_delay_s=default.initial_delay_s,
        max_delay_s=default.max_delay_s, multiplier=1.5, deadline_s=default.deadline_s)


def test_a_built_in_class_keeps_its_own_values_for_what_the_file_leaves_out() -> None:
    """[retry.provider] attempts = 5 keeps the provider class's delays and deadline."""
    policy = load_config(_write("[retry.provider]\nattempts = 5\n")).policy
    assert policy.retry_class("provider") == RetryClass(
        max_attempts=5, initial_delay_s=1.0, max_delay_s=20.0, deadline_s=120.0)
    assert policy.retry_class("device") == RetryClass(
        max_attempts=6, initial_delay_s=0.05, max_delay_s=1.0, deadline_s=10.0)


def test_no_file_keys_give_the_documented_defaults() -> None:
    """An empty file is the default policy, key by key."""
    policy = load_config(_write("")).policy
    assert policy.budget == BudgetPolicy(capacity=500.0, retry_cost=5.0, success_refund=1.0)
    assert policy.ladder == LadderPolicy(change_repeats=1, route_repeats=1)
    assert policy.retry_after_ceiling_s == 60.0
    assert policy.continue_noncritical_defects is False
    assert policy.fallback_models == ()
    assert policy.monitor == MonitorPolicy(signature_repeats=3, rejected_actions=5,
                                           no_matches=5)


def _problems(path: Path) -> tuple[Failure, ...]:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return caught.value.problems


def test_a_cap_equal_to_the_initial_delay_is_accepted() -> None:
    """max_delay_s >= initial_delay_s: equal is fine."""
    policy = load_config(_write("[retry.x]\ninitial_delay_s = 5\nmax_delay_s = 5\n")).policy
    assert policy.retry_class("x").max_delay_s == policy.retry_class("x").initial_delay_s == 5


def test_an_initial_delay_above_the_inherited_cap_names_the_initial_delay() -> None:
    """Only initial_delay_s is given and exceeds the class's cap: the message names that key,
    its line, the value and the rule with both numbers; the surface is config.load."""
    path = _write("# retries\n[retry.default]\ninitial_delay_s = 10\n")
    (problem,) = _problems(path)
    assert problem.code == FC.CFG_INVALID_VALUE.value
    assert problem.surface == "config.load"
    assert problem.params["key"] == "retry.default.initial_delay_s"
    assert problem.params["line"] == 3
    assert problem.params["value"] == "10"
    assert problem.params["expected"] == "max_delay_s >= initial_delay_s (8 < 10)"


def test_a_cap_below_the_initial_delay_names_the_cap() -> None:
    """Both given, the cap too small: the cap is the key at fault."""
    path = _write("[retry.x]\ninitial_delay_s = 10\nmax_delay_s = 5\n")
    (problem,) = _problems(path)
    assert problem.params["key"] == "retry.x.max_delay_s"
    assert problem.params["line"] == 3
    assert problem.params["expected"] == "max_delay_s >= initial_delay_s (5 < 10)"


def test_an_unknown_key_far_from_any_lists_what_the_table_allows() -> None:
    """No close match: the message lists the table's keys, sorted."""
    (problem,) = validate_toml(_write("[ladder]\nzzz = 1\n")).problems
    assert problem.code == FC.CFG_UNKNOWN_KEY.value
    assert problem.params["key"] == "ladder.zzz"
    assert problem.params["hint"] == "[ladder] allows change_repeats, route_repeats"


def test_an_unknown_top_level_table_lists_the_top_level() -> None:
    """An unknown table at the top level is a table problem naming the top level."""
    (problem,) = validate_toml(_write("[qqqqqq]\nx = 1\n")).problems
    assert problem.code == FC.CFG_UNKNOWN_TABLE.value
    assert problem.params["table"] == "qqqqqq"
    assert problem.params["hint"].startswith("the top level allows budget, defects, ladder")


def test_an_unknown_key_close_to_a_known_one_suggests_it() -> None:
    """A near miss suggests the full dotted name of the nearest key."""
    (problem,) = validate_toml(_write("[monitor]\nno_match = 2\n")).problems
    assert problem.params["hint"] == "did you mean monitor.no_matches?"


@pytest.mark.parametrize(("literal", "shown"), [
    ('"fast"', '"fast"'),
    ('"a\\"b"', '"a\\"b"'),
    ("true", "true"),
    ("false", "false"),
    ('["x", 1]', '["x", 1]'),
    ("{a = 1}", "{...}"),
    ("1.5", "1.5"),
])
def test_a_wrong_type_shows_the_value_as_toml(literal: str, shown: str) -> None:
    """The value in a wrong-type message is written back as TOML, as the user wrote it."""
    (problem,) = validate_toml(_write(f"[ladder]\nchange_repeats = {literal}\n")).problems
    assert problem.code == FC.CFG_WRONG_TYPE.value
    assert problem.params["value"] == shown


def test_a_retry_class_that_is_not_a_table_is_a_wrong_type() -> None:
    """retry.<class> must be a table: a value there names the table expected."""
    (problem,) = validate_toml(_write("[retry]\nprovider = 3\n")).problems
    assert problem.code == FC.CFG_WRONG_TYPE.value
    assert problem.params["expected"] == "a table [retry.provider]"


def test_find_config_prefers_failcode_toml_then_a_pyproject_table() -> None:
    """failcode.toml first; else pyproject.toml with [tool.failcode]; else nothing."""
    assert find_config() is None
    _write("[project]\nname = 'x'\n", "pyproject.toml")
    assert find_config() is None
    _write("[tool.failcode.ladder]\nroute_repeats = 2\n", "pyproject.toml")
    assert find_config() == Path.cwd() / "pyproject.toml"
    _write("", "failcode.toml")
    assert find_config() == Path.cwd() / "failcode.toml"


def test_find_config_hands_a_broken_pyproject_to_the_loader(tmp_path: Path) -> None:
    """A pyproject.toml that is not TOML is returned, so load_config reports its line."""
    _write("[tool.failcode\n", "pyproject.toml")
    assert find_config(tmp_path) == tmp_path / "pyproject.toml"
