"""The schema-driven validator: types, tables, filled defaults, unknown names, roots, limits.

The expected values come from the documented contract: :class:`Setting`'s docstring (``int``
refuses bools, ``float`` accepts ints and refuses NaN and infinities, bounds are inclusive),
:func:`validate_toml`'s (defaults filled in for absent keys, invalid values left out, at most
MAX_PROBLEMS problems, keys outside ``root`` not checked, surface ``config.load``), the FC-CFG
message templates of ``failcode explain``, and docs/config.md for failcode's own defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from failcode import (
    FC,
    ConfigError,
    Failure,
    Policy,
    RetryClass,
    Section,
    Setting,
    find_config,
    load_config,
    validate_toml,
)
from failcode.policy._config import MAX_PROBLEMS


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in tmp_path: messages name config files relative to the working directory."""
    monkeypatch.chdir(tmp_path)


def _write(text: str, name: str = "failcode.toml") -> Path:
    path = Path(name)
    path.write_text(text, encoding="utf-8")
    return path


def check(setting: Setting, literal: str) -> tuple[list[tuple[str, Any, Any]], dict[str, Any]]:
    """Validate ``v = literal`` in [t] against a schema holding ``setting`` as t.v: the
    problems as (code, value shown, expected) and t's values."""
    schema = Section({"t": Section({"v": setting})})
    result = validate_toml("agent.toml", schema, text=f"[t]\nv = {literal}\n")
    problems = [(p.code, p.params["value"], p.params["expected"]) for p in result.problems]
    return problems, result.values["t"]


WRONG = FC.CFG_WRONG_TYPE.value
INVALID = FC.CFG_INVALID_VALUE.value


# -- types -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("kind", "literal", "shown", "expected"), [
    ("int", "true", "true", "an integer"),
    ("int", "3.0", "3.0", "an integer"),
    ("int", '"3"', '"3"', "an integer"),
    ("float", "false", "false", "a number"),
    ("float", '"1.5"', '"1.5"', "a number"),
    ("bool", "1", "1", "true or false"),
    ("bool", '"true"', '"true"', "true or false"),
    ("str", "1", "1", "a string"),
    ("str", '["a"]', '["a"]', "a string"),
    ("str_list", '"a"', '"a"', "a list of strings"),
    ("str_list", '["a", 1]', '["a", 1]', "a list of strings"),
    ("str_list", "[[]]", "[[]]", "a list of strings"),
])
def test_a_value_of_another_type_is_refused_and_left_out(kind: Any, literal: str, shown: str,
                                                         expected: str) -> None:
    """Each type refuses the others (int refuses bools): FC-CFG-005, the value not kept."""
    problems, values = check(Setting(kind), literal)
    assert problems == [(WRONG, shown, expected)]
    assert values == {}


@pytest.mark.parametrize(("kind", "literal", "value"), [
    ("int", "-7", -7),
    ("float", "2.5", 2.5),
    ("bool", "true", True),
    ("bool", "false", False),
    ("str", "'anything'", "anything"),
    ("str", '""', ""),
    ("str_list", "['a', \"b\"]", ["a", "b"]),
    ("str_list", "[]", []),
])
def test_a_value_of_its_type_is_kept(kind: Any, literal: str, value: object) -> None:
    """A value of the setting's type, without a range, is kept as TOML reads it."""
    problems, values = check(Setting(kind, default="unused"), literal)
    assert problems == []
    assert values == {"v": value}
    assert type(values["v"]) is type(value)


def test_an_integer_for_a_number_is_kept_as_a_float() -> None:
    """float accepts an int and keeps it as a float (3 -> 3.0)."""
    problems, values = check(Setting("float"), "3")
    assert problems == []
    assert type(values["v"]) is float
    assert values["v"] == 3.0


@pytest.mark.parametrize("literal", ["nan", "inf", "-inf", "+inf"])
def test_nan_and_infinities_are_refused_as_invalid_numbers(literal: str) -> None:
    """A float setting without bounds still refuses NaN and the infinities (FC-CFG-001)."""
    problems, values = check(Setting("float"), literal)
    assert problems == [(INVALID, literal.removeprefix("+"), "a number")]
    assert values == {}


@pytest.mark.parametrize(("setting", "expected"), [
    (Setting("int", min=1), "an integer of at least 1"),
    (Setting("float", max=2.5), "a number of at most 2.5"),
    (Setting("float", min=0.5, max=1.5), "a number from 0.5 to 1.5"),
    (Setting("int", min=-3, max=3), "an integer from -3 to 3"),
])
def test_the_range_is_written_in_words(setting: Setting, expected: str) -> None:
    """The expected range reads 'of at least', 'of at most' or 'from .. to ..'."""
    problems, _ = check(setting, '"x"')
    assert problems == [(WRONG, '"x"', expected)]


@pytest.mark.parametrize(("setting", "inside", "outside"), [
    (Setting("int", min=1), "1", "0"),
    (Setting("float", max=2.5), "2.5", "2.5000001"),
    (Setting("int", max=-1), "-1", "0"),
])
def test_a_one_sided_range_is_inclusive(setting: Setting, inside: str, outside: str) -> None:
    """A lone min or max is inclusive: the bound is kept, one step beyond is FC-CFG-001."""
    assert check(setting, inside)[0] == []
    assert [code for code, _, _ in check(setting, outside)[0]] == [INVALID]


def test_a_string_outside_its_choices_is_invalid() -> None:
    """A str with choices refuses other strings (FC-CFG-001) and lists the choices."""
    problems, values = check(Setting("str", "a", choices=("a", "b c")), '"c"')
    assert problems == [(INVALID, '"c"', "one of 'a', 'b c'")]
    assert values == {}


def test_a_string_among_its_choices_is_kept() -> None:
    """A str with choices keeps a chosen string."""
    assert check(Setting("str", "a", choices=("a", "b")), '"b"') == ([], {"v": "b"})


@pytest.mark.parametrize(("literal", "shown"), [
    ("'a\\b'", '"a\\\\b"'),
    ('"say \\"hi\\""', '"say \\"hi\\""'),
    ("[true, 'x', 1.5, {a = 1}]", '[true, "x", 1.5, {...}]'),
])
def test_a_refused_value_is_shown_as_a_toml_basic_string(literal: str, shown: str) -> None:
    """Strings are shown as TOML basic strings: backslashes and quotes escaped."""
    problems, _ = check(Setting("int"), literal)
    assert problems == [(WRONG, shown, "an integer")]


# -- tables ----------------------------------------------------------------------------------------

def test_a_declared_table_given_a_value_is_a_wrong_type_and_left_out() -> None:
    """budget = 3: FC-CFG-005 naming the table expected; budget is not in the values."""
    result = validate_toml(_write("# top\nbudget = 3\n"))
    (problem,) = result.problems
    assert problem.message == ("In failcode.toml line 2, budget = 3 has the wrong type; "
                               "expected a table [budget].")
    assert "budget" not in result.values
    assert "ladder" in result.values


def test_an_array_of_tables_where_a_table_goes_is_a_wrong_type() -> None:
    """[[ladder]] is an array, not the table [ladder]."""
    (problem,) = validate_toml(_write("[[ladder]]\nroute_repeats = 2\n")).problems
    assert (problem.code, problem.params["value"], problem.params["line"]) == (
        WRONG, "[{...}]", 1)


def test_a_named_table_given_a_value_is_a_wrong_type_and_left_out() -> None:
    """[retry] provider = 3: retry.provider must be a table; nothing is kept for it."""
    result = validate_toml(_write("[retry]\nprovider = 3\n"))
    (problem,) = result.problems
    assert problem.message == ("In failcode.toml line 2, retry.provider = 3 has the wrong "
                               "type; expected a table [retry.provider].")
    assert result.values["retry"] == {}


def test_a_named_table_keeps_only_the_keys_it_sets() -> None:
    """[retry.x] attempts = 2: the values hold attempts only (the class fills the rest)."""
    result = validate_toml(_write("[retry.x]\nattempts = 2\n[retry.y]\n"))
    assert result.values["retry"] == {"x": {"attempts": 2}, "y": {}}


def test_absent_tables_and_keys_are_filled_with_their_defaults() -> None:
    """An empty file: every declared table with its documented defaults."""
    values = validate_toml(_write("")).values
    assert values["retry"] == {}
    assert values["budget"] == {"capacity": 500.0, "retry_cost": 5.0, "success_refund": 1.0}
    assert values["ladder"] == {"change_repeats": 1, "route_repeats": 1}
    assert values["defects"] == {"continue_noncritical": False}
    assert values["store"] == {"url": "", "promote_after": 3, "demote_after": 2}
    assert values["preflight"] == {"programs": [], "modules": [], "env": [],
                                   "credentials_files": [], "writable_dirs": []}


@pytest.mark.parametrize("literal", ["0", '"x"'])
def test_an_invalid_value_is_left_out_and_its_siblings_filled(literal: str) -> None:
    """budget.capacity invalid: left out (not defaulted); the other budget keys filled."""
    result = validate_toml(_write(f"[budget]\ncapacity = {literal}\n"))
    assert len(result.problems) == 1
    assert result.values["budget"] == {"retry_cost": 5.0, "success_refund": 1.0}


def test_nested_declared_tables_are_filled_at_every_depth() -> None:
    """A user schema's tables within tables get their defaults when absent."""
    schema = Section({"a": Section({"b": Section({"c": Setting("int", 7)}),
                                    "d": Setting("str", "x")})})
    assert validate_toml("agent.toml", schema, text="").values == {"a": {"b": {"c": 7},
                                                                         "d": "x"}}


def test_a_declared_table_inside_a_named_table_is_filled_when_present() -> None:
    """In a named table, a declared sub-table written in the file gets its defaults."""
    schema = Section({"job": Section(named=Section({"limits": Section({
        "cpu": Setting("int", 2), "mem": Setting("int", 4)})}))})
    text = "[job.a]\n[job.b.limits]\ncpu = 8\n"
    assert validate_toml("agent.toml", schema, text=text).values == {
        "job": {"a": {}, "b": {"limits": {"cpu": 8, "mem": 4}}}}


# -- unknown names ---------------------------------------------------------------------------------

def test_an_unknown_table_is_fc_cfg_003_naming_the_table() -> None:
    """A table the schema does not declare: FC-CFG-003 with its nearest known name."""
    (problem,) = validate_toml(_write("\n[ladder.stuf]\nx = 1\n")).problems
    assert problem.message == ("In failcode.toml line 2, the table [ladder.stuf] is unknown; "
                               "[ladder] allows change_repeats, route_repeats.")


def test_an_unknown_key_is_fc_cfg_002_naming_the_key() -> None:
    """A key the schema does not declare: FC-CFG-002 with its nearest known name."""
    (problem,) = validate_toml(_write("[monitor]\n\nno_match = [1]\n")).problems
    assert problem.message == ("In failcode.toml line 3, the key monitor.no_match is unknown; "
                               "did you mean monitor.no_matches?")  # no "?." in a sentence


def test_an_unknown_key_in_a_named_table_suggests_the_key_in_that_table() -> None:
    """retry.page_fetch.deadline suggests retry.page_fetch.deadline_s."""
    (problem,) = validate_toml(_write("[retry.page_fetch]\ndeadline = 1\n")).problems
    assert problem.params["hint"] == "did you mean retry.page_fetch.deadline_s?"


def test_an_unknown_key_far_from_any_lists_its_tables_keys_with_the_tables_full_name() -> None:
    """No near miss in [a.b]: the hint names the table [a.b] and lists its keys, sorted."""
    schema = Section({"a": Section({"b": Section({"z": Setting("int"), "k": Setting("int")})})})
    (problem,) = validate_toml("agent.toml", schema, text="[a.b]\nqqq = 1\n").problems
    assert problem.params["hint"] == "[a.b] allows k, z"


def test_a_key_in_an_inline_table_is_at_the_line_of_the_inline_table() -> None:
    """x = {...} on line 3: a bad key inside it is reported at line 3 (the scanner's limit)."""
    (problem,) = validate_toml(_write("# c\n[retry]\nx = {attempts = 0}\n")).problems
    assert (problem.params["key"], problem.params["line"]) == ("retry.x.attempts", 3)


def test_a_table_only_implied_by_a_header_is_at_line_1() -> None:
    """[budjet.x] implies [budjet], which has no line of its own: line 1, as documented."""
    (problem,) = validate_toml(_write("\n\n[budjet.x]\n")).problems
    assert (problem.params["table"], problem.params["line"]) == ("budjet", 1)


@pytest.mark.parametrize(("text", "hint"), [
    ("a = 1\n", "the top level allows nothing"),
    ("[t]\nk = 1\n", "[t] allows nothing"),
])
def test_a_table_that_allows_no_key_says_so(text: str, hint: str) -> None:
    """A table without settings: the hint says it allows nothing."""
    schema = Section({"t": Section()}) if text.startswith("[t]") else Section()
    (problem,) = validate_toml("agent.toml", schema, text=text).problems
    assert problem.params["hint"] == hint


def test_every_problem_has_the_config_load_surface() -> None:
    """Wrong type, invalid value, unknown key and table, broken TOML: surface config.load."""
    result = validate_toml(_write("zz = 1\n[zzz]\n[ladder]\nroute_repeats = 'x'\n"
                                  "change_repeats = -1\n"))
    broken = validate_toml("x.toml", text="[")
    problems = [*result.problems, *broken.problems]
    assert sorted(p.code for p in problems) == [
        "FC-CFG-001", "FC-CFG-002", "FC-CFG-003", "FC-CFG-004", "FC-CFG-005"]
    assert {p.surface for p in problems} == {"config.load"}


# -- how many problems -----------------------------------------------------------------------------

@pytest.mark.parametrize("count", [MAX_PROBLEMS - 1, MAX_PROBLEMS])
def test_up_to_the_limit_every_problem_is_reported(count: int) -> None:
    """99 or 100 unknown keys: one problem each, in file order."""
    text = "".join(f"k{i} = 1\n" for i in range(count))
    problems = validate_toml("agent.toml", Section(), text=text).problems
    assert [p.params["line"] for p in problems] == list(range(1, count + 1))


def test_past_the_limit_the_first_100_problems_are_reported() -> None:
    """101 unknown keys: the first 100 (the limit is 100), the last not looked at."""
    assert MAX_PROBLEMS == 100
    text = "".join(f"k{i} = 1\n" for i in range(101))
    problems = validate_toml("agent.toml", Section(), text=text).problems
    assert [p.params["line"] for p in problems] == list(range(1, 101))


def test_ok_says_whether_there_is_a_problem() -> None:
    """ValidatedConfig.ok is True without problems, False with one."""
    assert validate_toml(_write("[ladder]\n")).ok is True
    assert validate_toml(_write("[ladder]\nx = 1\n")).ok is False


# -- the root table --------------------------------------------------------------------------------

def test_a_pyproject_whose_failcode_entry_is_not_a_table_is_a_wrong_type() -> None:
    """[tool] failcode = 3: tool.failcode must be a table, at its line."""
    (problem,) = validate_toml(_write("[tool]\nfailcode = 3\n", "pyproject.toml")).problems
    assert problem.message == ("In pyproject.toml line 2, tool.failcode = 3 has the wrong "
                               "type; expected a table.")


@pytest.mark.parametrize("text", ["tool = 3\n", "[project]\nzz = 1\n[tool.ruff]\nx = 1\n", ""])
def test_a_pyproject_without_a_failcode_table_gives_the_defaults(text: str) -> None:
    """Keys outside [tool.failcode] are not checked: no problem, every default."""
    result = validate_toml(_write(text, "pyproject.toml"))
    assert result.problems == ()
    assert result.values == validate_toml(_write("")).values


def test_an_explicit_root_is_where_the_schema_starts() -> None:
    """root=["app"]: [app.t] is the schema's t, its lines counted in the whole file."""
    schema = Section({"t": Section({"n": Setting("int", 1, min=1)})})
    result = validate_toml("agent.toml", schema, text="x = 1\n[app.t]\nn = 0\n", root=["app"])
    assert [(p.code, p.params["line"], p.params["key"]) for p in result.problems] == [
        (INVALID, 3, "t.n")]


def test_an_empty_root_checks_a_whole_pyproject() -> None:
    """root=() for a pyproject.toml: its own tables are checked too."""
    result = validate_toml(_write("[project]\n", "pyproject.toml"), root=())
    assert [(p.code, p.params["table"]) for p in result.problems] == [
        (FC.CFG_UNKNOWN_TABLE.value, "project")]


# -- load_config -----------------------------------------------------------------------------------

def _problems(path: Path) -> tuple[Failure, ...]:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return caught.value.problems


def test_without_a_path_or_a_file_the_defaults_apply() -> None:
    """load_config() in a directory without a config: the default Policy, no checks."""
    config = load_config()
    assert (config.policy, config.preflight, config.source, config.values) == (
        Policy(), (), None, {})


def test_without_a_path_the_working_directorys_file_is_loaded() -> None:
    """load_config() finds failcode.toml in the working directory and names it as source."""
    _write("[ladder]\nroute_repeats = 4\n")
    config = load_config()
    assert config.source == str(Path.cwd() / "failcode.toml")
    assert config.policy.ladder.route_repeats == 4


def test_the_config_keeps_the_source_as_given_and_the_validated_values() -> None:
    """source is the path given; values are validate_toml's values for the file."""
    path = _write("[preflight]\nenv = ['HOME']\n[store]\nurl = 'sqlite:///x'\n")
    config = load_config(path)
    assert config.source == "failcode.toml"
    assert config.values == validate_toml(path).values
    assert config.values["store"]["url"] == "sqlite:///x"


def test_find_config_looks_in_the_directory_given(tmp_path: Path) -> None:
    """find_config(start) looks in start, not in the working directory."""
    (tmp_path / "sub").mkdir()
    _write("", "sub/failcode.toml")
    assert find_config(tmp_path / "sub") == tmp_path / "sub" / "failcode.toml"
    assert find_config() is None


def test_find_config_hands_a_pyproject_that_is_not_utf8_to_the_loader() -> None:
    """A pyproject.toml that is not UTF-8 is returned, so load_config reports its byte."""
    Path("pyproject.toml").write_bytes(b"[tool.failcode]\n\xff\n")
    assert find_config() == Path.cwd() / "pyproject.toml"
    (problem,) = _problems(Path("pyproject.toml"))
    assert problem.params["problem"] == "not UTF-8 text (byte 16)"


def test_a_delay_rule_with_fractions_shows_them() -> None:
    """max_delay_s 1.5 below initial_delay_s 2.5: both numbers as written."""
    (problem,) = _problems(_write("[retry.x]\ninitial_delay_s = 2.5\nmax_delay_s = 1.5\n"))
    assert problem.message == (
        "In failcode.toml line 3, retry.x.max_delay_s = 1.5 is invalid; expected "
        "max_delay_s >= initial_delay_s (1.5 < 2.5).")


def test_a_cap_below_a_built_in_initial_delay_names_the_cap() -> None:
    """[retry.provider] max_delay_s = 0.5 is below provider's built-in initial delay (1)."""
    (problem,) = _problems(_write("[retry.provider]\nmax_delay_s = 0.5\n"))
    assert problem.params["key"] == "retry.provider.max_delay_s"
    assert problem.params["expected"] == "max_delay_s >= initial_delay_s (0.5 < 1)"


def test_a_delay_rule_in_a_pyproject_is_at_its_line_in_the_file() -> None:
    """In pyproject.toml the rule's line is counted in the whole file."""
    path = _write("[project]\nname = 'x'\n[tool.failcode.retry.x]\ninitial_delay_s = 10\n",
                  "pyproject.toml")
    (problem,) = _problems(path)
    assert (problem.params["line"], problem.params["key"]) == (4, "retry.x.initial_delay_s")


def test_a_delay_rule_in_an_inline_class_is_at_the_line_of_the_class() -> None:
    """[retry] x = {...} on line 3: the rule's key has no line of its own, x's is 3."""
    (problem,) = _problems(_write("# c\n[retry]\nx = {initial_delay_s = 10}\n"))
    assert problem.params["line"] == 3


def test_a_delay_rule_in_an_inline_table_is_at_the_line_of_the_table() -> None:
    """retry = {x = {...}} on line 2: the rule's key has no line of its own, retry's is 2."""
    (problem,) = _problems(_write("# c\nretry = {x = {initial_delay_s = 10}}\n"))
    assert problem.params["line"] == 2


def test_the_delay_rule_is_reported_after_the_files_other_problems() -> None:
    """A bad value and a broken delay rule: both reported, the value's first."""
    text = "[retry.x]\ninitial_delay_s = 10\n[ladder]\nroute_repeats = -1\n"
    assert [p.params["key"] for p in _problems(_write(text))] == [
        "ladder.route_repeats", "retry.x.initial_delay_s"]


def test_an_invalid_retry_key_is_reported_without_building_the_class() -> None:
    """attempts = 0 in a class: that one problem, no other error."""
    (problem,) = _problems(_write("[retry.x]\nattempts = 0\nmultiplier = 3.0\n"))
    assert problem.params["key"] == "retry.x.attempts"


def test_each_class_is_built_from_its_own_table() -> None:
    """Two classes of the file: each from its own keys and its own built-in values."""
    policy = load_config(_write("[retry.device]\nattempts = 2\n[retry.zz]\nattempts = 9\n"))\
        .policy
    assert policy.retry_class("device") == RetryClass(
        max_attempts=2, initial_delay_s=0.05, max_delay_s=1.0, deadline_s=10.0)
    assert policy.retry_class("zz") == RetryClass(max_attempts=9)
    assert policy.retry_class("provider") == RetryClass(
        max_attempts=4, initial_delay_s=1.0, max_delay_s=20.0, deadline_s=120.0)
