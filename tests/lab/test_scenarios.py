"""Scenarios: every file loads, covers enough of each agent, and states the truth.

The truth of a scenario's ``exit`` and ``output`` is checked by running its commands with the
real tools (gcc, cargo, go, node, tsc, git, pytest...) in a fresh project, with no agent.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import pytest

from tests._needs import missing
from tests.lab.agents import REPO, agents
from tests.lab.replay import replay
from tests.lab.scenario import SCENARIOS, ScenarioError, load, load_all

if TYPE_CHECKING:
    from pathlib import Path

    from tests.lab.scenario import Scenario

ALL = load_all()
TOOLS = ("gcc", "cargo", "rustc", "go", "node", "git", "make", "tsc")


def _needs(scenario: Scenario) -> None:
    commands = " ".join(step.command for step in scenario.steps) + scenario.setup
    for tool in TOOLS:
        if f"{tool} " in commands or commands.startswith(tool):
            found = shutil.which(tool) or (
                tool == "tsc" and (REPO / ".cache/npm/node_modules/.bin/tsc").exists())
            if not found:
                missing(f"{tool} is not installed (scenario {scenario.name})")


def test_there_are_at_least_25_scenarios_for_every_agent() -> None:
    """Each agent can run at least 25 scenarios (the others name a reason)."""
    for name, agent in agents().items():
        runnable = [s for s in ALL if agent.supports(s) is None]
        assert len(runnable) >= 25, (name, len(runnable))


def test_scenarios_cover_what_the_lab_promises() -> None:
    """Missing programs, test runners, compilers, linters, git, masks, probes, refusals,
    provider faults, limits, timeouts and loops each have a scenario."""
    names = {s.name for s in ALL}
    for wanted in ("missing-program", "missing-module", "pytest-failure", "unittest-failure",
                   "node-test-failure", "cargo-test-failure", "go-test-failure",
                   "gcc-syntax-error", "link-error", "rustc-error", "tsc-error", "ruff-lint",
                   "pip-install-missing", "git-merge-conflict", "git-rebase-conflict",
                   "git-push-failure", "permission-denied", "masked-pipe-tail",
                   "masked-or-true-wrapper", "probes-no-output", "edit-unread-file",
                   "edit-string-not-found", "provider-retried", "provider-fatal-500",
                   "turn-limit", "command-timeout", "loop-same-failure", "progress-not-loop"):
        assert wanted in names


@pytest.mark.parametrize("scenario", ALL, ids=lambda s: s.name)
def test_stated_exit_statuses_are_what_the_commands_do(scenario: Scenario) -> None:
    """Each run step's ``exit`` and ``output`` match a run of the command itself."""
    _needs(scenario)
    commands = [step for step in scenario.steps if step.action == "run"]
    ran = replay(scenario)
    assert [(r.command, r.exit, r.output) for r in ran] == [
        (s.command, s.exit, s.output) for s in commands], [r.text[-400:] for r in ran]


OBEYED = [s for s in ALL if any(step.instead is not None for step in s.steps)]


def test_a_scenario_shows_a_model_obeying_failcodes_instruction() -> None:
    """The before/after run (tests/lab/test_fix_line.py) has a scenario to play."""
    assert OBEYED


@pytest.mark.parametrize("scenario", OBEYED, ids=lambda s: s.name)
def test_what_an_obeying_model_runs_exits_as_stated(scenario: Scenario) -> None:
    """Each ``instead`` command's ``exit`` and ``output`` match a run of it, in the place of
    the step it replaces; it expects no failure when it exits 0 unmasked."""
    _needs(scenario)
    obeyed = scenario.obeyed()
    commands = [step for step in obeyed.steps if step.action == "run"]
    ran = replay(obeyed)
    assert [(r.command, r.exit, r.output) for r in ran] == [
        (s.command, s.exit, s.output) for s in commands], [r.text[-400:] for r in ran]
    for step in scenario.steps:
        if step.instead is not None:
            assert step.instead.step.command != step.command
            assert step.instead.step.exit != 0 or not step.instead.step.expect.failure


@pytest.mark.parametrize("scenario", ALL, ids=lambda s: s.name)
def test_expectations_are_consistent(scenario: Scenario) -> None:
    """A step that exits 0 with a clear output expects no failure unless a pipe or wrapper
    masks one; loops name failing steps; a fatal fault's scenario ends on a provider error."""
    for loop in scenario.loops:
        assert all(scenario.steps[i].expect.failure for i in loop)
    if scenario.fatal_step is not None:
        assert scenario.ended == "provider_error"
    for step in scenario.steps:
        if step.action == "run" and step.exit == 0 and step.expect.failure:
            assert any(mask in step.command for mask in ("|", "||", "./")), step.command


@pytest.mark.parametrize(("text", "message"), [
    ("about = 'x'\n", r"at least one \[\[step\]\]"),
    ("[[step]]\nrun = 'ls'\nexit = 0\n", "about"),
    ("about = 'x'\n[[step]]\nrun = 'ls'\n", "true exit status"),
    ("about = 'x'\n[[step]]\nrun = 'ls'\nread = 'a'\nexit = 0\n", "exactly one of"),
    ("about = 'x'\n[[step]]\nrun = 'ls'\nexit = 0\nfaults = [{ mode = 'slow' }]\n", "mode"),
    ("about = 'x'\n[[step]]\nrun = 'ls'\nexit = 0\nexpect = { outcome = 'maybe' }\n",
     "outcome 'maybe'"),
    ("about = 'x'\nended = 'crashed'\n[[step]]\nrun = 'ls'\nexit = 0\n", "ended"),
    ("about = 'x'\nloops = [[0, 5]]\n[[step]]\nrun = 'ls'\nexit = 0\n", "loops"),
    ("about = 'x'\ncolour = 'red'\n[[step]]\nrun = 'ls'\nexit = 0\n", "unknown keys"),
    ("about = 'x\n", "not TOML"),
    (("about = 'x'\n[[step]]\nrun = 'ls'\nexit = 0\ninstead = { when = 'y', run = 'ls', "
     "exit = 0 }\n"), "only a step that expects a failure"),
    (("about = 'x'\n[[step]]\nrun = 'no-such'\nexit = 127\nexpect = { failure = { kind = "
     "'dependency_error' } }\ninstead = { when = 'y', run = 'ls' }\n"), "true exit status"),
    (("about = 'x'\n[[step]]\nrun = 'no-such'\nexit = 127\nexpect = { failure = { kind = "
     "'dependency_error' } }\ninstead = { run = 'ls', exit = 0 }\n"), "when names"),
])
def test_a_bad_scenario_file_is_an_error_naming_file_and_field(
        tmp_path: Path, text: str, message: str) -> None:
    """A mistake in a scenario file is a ScenarioError naming the file and what is wrong."""
    path = tmp_path / "broken.toml"
    path.write_text(text)
    with pytest.raises(ScenarioError, match=message) as caught:
        load(path)
    assert str(caught.value).startswith("broken.toml: ")


def test_scenarios_are_files_in_one_folder() -> None:
    """A new scenario is one file: load_all reads every .toml of the folder."""
    assert len(ALL) == len(list(SCENARIOS.glob("*.toml")))
