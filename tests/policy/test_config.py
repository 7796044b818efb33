"""Configuration: every kind of bad value is refused naming file, line, key, value and range."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from failcode import (
    FC,
    ConfigError,
    CredentialsFile,
    EnvVar,
    Module,
    Program,
    Section,
    Setting,
    WritableDir,
    find_config,
    load_config,
    preflight,
    validate_toml,
)
from failcode.cli import main
from failcode.policy._config import key_lines


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in tmp_path: messages name config files relative to the working directory."""
    monkeypatch.chdir(tmp_path)


def write(tmp_path: Path, text: str, name: str = "failcode.toml") -> Path:
    """Write a config file and return its path (relative to the working directory)."""
    (tmp_path / name).write_text(text, encoding="utf-8")
    return Path(name)


@pytest.mark.parametrize(("text", "line", "code", "parts"), [
    # wrong type
    ('[retry.provider]\nattempts = "4"\n', 2, FC.CFG_WRONG_TYPE,
     ["retry.provider.attempts", '"4"', "an integer in 1..100"]),
    ("[defects]\n\ncontinue_noncritical = 1\n", 3, FC.CFG_WRONG_TYPE,
     ["defects.continue_noncritical", "= 1", "true or false"]),
    ('[models]\nfallbacks = "gpt"\n', 2, FC.CFG_WRONG_TYPE,
     ["models.fallbacks", '"gpt"', "a list of strings"]),
    # out of range (never clamped)
    ("[retry.default]\nattempts = 0\n", 2, FC.CFG_INVALID_VALUE,
     ["retry.default.attempts", "= 0", "an integer in 1..100"]),
    ("# c\n[budget]\ncapacity = 1.5e9\n", 3, FC.CFG_INVALID_VALUE,
     ["budget.capacity", "1500000000", "a number in 1..1000000"]),
    ("[server_delay]\nceiling_s = -1\n", 2, FC.CFG_INVALID_VALUE,
     ["server_delay.ceiling_s", "-1", "a number in 0..86400"]),
    ("[server_delay]\nceiling_s = nan\n", 2, FC.CFG_INVALID_VALUE,
     ["server_delay.ceiling_s", "nan", "a number in 0..86400"]),
    ("[retry.x]\ninitial_delay_s = 10\nmax_delay_s = 5\n", 3, FC.CFG_INVALID_VALUE,
     ["retry.x.max_delay_s", "5", "max_delay_s >= initial_delay_s"]),
    # unknown key, with the nearest valid key suggested
    ("[ladder]\nchange_repeat = 2\n", 2, FC.CFG_UNKNOWN_KEY,
     ["ladder.change_repeat", "did you mean ladder.change_repeats?"]),
    ("[retry.default]\natempts = 2\n", 2, FC.CFG_UNKNOWN_KEY,
     ["retry.default.atempts", "did you mean retry.default.attempts?"]),
    # unknown table
    ("[budjet]\ncapacity = 5\n", 1, FC.CFG_UNKNOWN_TABLE, ["[budjet]", "did you mean budget?"]),
    # broken TOML
    ("[ladder]\nchange_repeats = [1,\nroute_repeats = 2\n", 3, FC.CFG_BROKEN_TOML,
     ["not valid TOML"]),
    ('[ladder]\nroute_repeats = "unterminated\n', 2, FC.CFG_BROKEN_TOML, ["not valid TOML"]),
])
def test_bad_value_is_refused_with_file_line_key_value_range(
        tmp_path: Path, text: str, line: int, code: FC, parts: list[str]) -> None:
    """A bad config is refused at load; the message names file, line, key, value and range."""
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    problems = caught.value.problems
    assert [p.code for p in problems] == [code.value]
    message = problems[0].message
    assert message.startswith(f"In {path} line {line}, ")
    for part in parts:
        assert part in message
    assert problems[0].remedy


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    """All problems of a file are listed, in file order, none skipped."""
    path = write(tmp_path, "[ladder]\nroute_repeats = 1000\n[monitor]\nno_matchs = 2\n"
                           "[retry.page_fetch]\nattempts = true\n")
    result = validate_toml(path)
    assert [(p.code, p.params["line"]) for p in result.problems] == [
        ("FC-CFG-001", 2), ("FC-CFG-002", 4), ("FC-CFG-005", 6)]


def test_valid_file_sets_the_policy(tmp_path: Path) -> None:
    """Valid values reach the Policy; classes the file leaves out keep their defaults."""
    path = write(tmp_path, "[retry.provider]\nattempts = 7\n[retry.scraper]\ndeadline_s = 5\n"
                           "[budget]\ncapacity = 50\n[server_delay]\nceiling_s = 120\n"
                           "[defects]\ncontinue_noncritical = true\n"
                           "[models]\nfallbacks = ['gpt-4o-mini']\n"
                           "[preflight]\nprograms = ['git']\nenv = ['HOME']\n")
    config = load_config(path)
    policy = config.policy
    assert policy.classes["provider"].max_attempts == 7
    assert policy.classes["provider"].max_delay_s == 20.0  # the provider class's own default
    assert policy.classes["scraper"].deadline_s == 5.0
    assert policy.classes["scraper"].max_attempts == policy.classes["default"].max_attempts
    assert (policy.budget.capacity, policy.retry_after_ceiling_s) == (50.0, 120.0)
    assert policy.continue_noncritical_defects
    assert policy.fallback_models == ("gpt-4o-mini",)
    assert config.preflight == (Program("git"), EnvVar("HOME"))


def test_pyproject_tool_table_is_read_and_its_lines_reported(tmp_path: Path) -> None:
    """[tool.failcode] in pyproject.toml: other tables ignored, lines counted in the file."""
    path = write(tmp_path, '[project]\nname = "x"\n\n[tool.failcode.ladder]\nroute_repeats = -1\n',
                 "pyproject.toml")
    assert find_config(tmp_path) == tmp_path / path
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.problems[0].params["line"] == 5
    assert "ladder.route_repeats" in caught.value.problems[0].message


def test_no_config_gives_the_defaults(tmp_path: Path) -> None:
    """Without failcode.toml or [tool.failcode], failcode's defaults apply."""
    write(tmp_path, '[project]\nname = "x"\n', "pyproject.toml")
    assert find_config(tmp_path) is None


def test_user_schema_validates_the_same_way(tmp_path: Path) -> None:
    """The validator is public: a user schema with ranges gives file-and-line FC-CFG errors."""
    schema = Section({"capture": Section({
        "fps": Setting("int", 30, 1, 240), "mode": Setting("str", "window",
                                                           choices=("window", "borderless"))})})
    path = write(tmp_path, "[capture]\nfps = 500\nmode = 'fullscreen'\n", "agent.toml")
    result = validate_toml(path, schema)
    assert [(p.code, p.params["line"], p.params["key"]) for p in result.problems] == [
        ("FC-CFG-001", 2, "capture.fps"), ("FC-CFG-001", 3, "capture.mode")]
    assert "one of 'window', 'borderless'" in result.problems[1].message


def test_key_lines_skips_multiline_strings_and_arrays() -> None:
    """The line scanner ignores keys that only look like keys inside strings and arrays."""
    text = ('a = """\nb = 1\n"""\nc = [\n  "d = 2",\n]\n[t."q.k"]\ne.f = 3\n'
            "g = 'x' # h = 4\n")
    assert key_lines(text) == {("a",): 1, ("c",): 4, ("t", "q.k"): 7, ("t", "q.k", "e", "f"): 8,
                               ("t", "q.k", "g"): 9}


# -- the CLI -----------------------------------------------------------------------------------

def test_config_check_exits_1_with_the_messages(tmp_path: Path) -> None:
    """`failcode config check PATH` exits 1 listing each problem."""
    path = write(tmp_path, "[ladder]\nchange_repeats = 101\n")
    result = CliRunner().invoke(main, ["config", "check", str(path)])
    assert result.exit_code == 1
    assert f"In {path} line 2, ladder.change_repeats = 101 is invalid" in result.output


def test_config_check_exits_0_with_the_effective_policy(tmp_path: Path) -> None:
    """`failcode config check PATH` exits 0 and summarises the effective policy."""
    path = write(tmp_path, "[retry.device]\nattempts = 9\n")
    result = CliRunner().invoke(main, ["config", "check", str(path)])
    assert result.exit_code == 0, result.output
    assert "device" in result.output
    assert "9" in result.output
    assert "[budget] capacity = 500.0" in result.output


def test_config_check_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    """A missing config path exits 2."""
    result = CliRunner().invoke(main, ["config", "check", str(tmp_path / "nope.toml")])
    assert result.exit_code == 2


def test_doctor_runs_the_configured_checks(tmp_path: Path) -> None:
    """`failcode doctor` exits 1 when a check fails, printing each failure with its remedy."""
    path = write(tmp_path, f"[preflight]\nprograms = ['{Path(sys.executable).name}', "
                           "'no-such-program-fc']\n")
    result = CliRunner().invoke(main, ["doctor", "--config", str(path)],
                                env={"PATH": str(Path(sys.executable).parent)})
    assert result.exit_code == 1
    assert "FAIL  program no-such-program-fc: [FC-CMD-001]" in result.output
    assert "remedy: Install no-such-program-fc" in result.output
    assert f"ok    program {Path(sys.executable).name}" in result.output


def test_doctor_exits_0_when_all_pass(tmp_path: Path) -> None:
    """`failcode doctor` exits 0 when every check passes."""
    path = write(tmp_path, f"[preflight]\nwritable_dirs = ['{tmp_path}']\nmodules = ['json']\n")
    result = CliRunner().invoke(main, ["doctor", "--config", str(path)])
    assert result.exit_code == 0, result.output


# -- preflight ---------------------------------------------------------------------------------

def test_preflight_returns_environment_failures_with_remedies(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """Each failing check gives its FC code, the environment category and a remedy."""
    monkeypatch.delenv("FC_PREFLIGHT_UNSET", raising=False)
    read_only = tmp_path / "ro"
    read_only.mkdir()
    read_only.chmod(0o500)
    checks = [Program("no-such-program-fc"), Module("no_such_module_fc"),
              EnvVar("FC_PREFLIGHT_UNSET"), CredentialsFile(str(tmp_path / "creds")),
              WritableDir(str(tmp_path / "missing"))]
    if os.geteuid() != 0:  # root writes anywhere
        checks.append(WritableDir(str(read_only)))
    failures = preflight(checks)
    expected = ["FC-CMD-001", "FC-CMD-002", "FC-CFG-006", "FC-CFG-007", "FC-CFG-008"]
    assert [f.code for f in failures] == expected + (["FC-CFG-008"] if len(checks) == 6 else [])
    assert all(f.category.value == "environment" and f.remedy for f in failures)


def test_preflight_passes_a_ready_environment(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Checks that hold return no failure."""
    monkeypatch.setenv("FC_PREFLIGHT_SET", "1")
    creds = tmp_path / "creds"
    creds.write_text("k", encoding="utf-8")
    checks = [Program(Path(sys.executable).name), Module("json"), EnvVar("FC_PREFLIGHT_SET"),
              CredentialsFile(str(creds)), WritableDir(str(tmp_path))]
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    assert preflight(checks) == []
