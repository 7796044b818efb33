"""The proof in the lab: real agents with failcode's hooks installed, a looping scenario, and
what the model read.

For each agent failcode has hooks for, ``failcode hooks install AGENT`` in the run's HOME (as a
person runs it), then the agent plays a live scenario (``tests/live/scenarios/``:
``missing-modules`` for every agent, ``same-failure-five`` too for Claude Code and Gemini CLI;
the other agents' loops without a stop are covered by their recorded payloads) against the
scripted model, which counts failcode's messages in every request. The ground truth is the
scenario's own loop: the model must first read failcode's message in the request after the
loop's second failing step (``[live] tell_after``'s default), and in none before;
``failcode hooks uninstall`` must then give back the agent's settings (byte for byte, or every
key as it was for an agent that rewrites its own file). In ``missing-modules`` (one missing
module after another: one cause, the environment) the agent must stop before it runs the
scenario's last step, because only a person can help.

An agent that cannot be installed is a skip with the reason, and a failure under ``CI=true``
(``scripts/test.sh`` installs them).
"""

from __future__ import annotations

import pytest

from tests._needs import missing
from tests.lab.agents import agents
from tests.lab.scenario import load
from tests.live.lab import HOOKED, SCENARIOS, expected_tell_step, run_live


@pytest.mark.parametrize("agent", ["claude-code", "gemini-cli"])
def test_the_model_is_told_at_the_loops_threshold_and_nowhere_before(agent: str) -> None:
    if not agents()[agent].installed():
        missing(f"{agent} is not installed (python -m tests.lab install)")
    scenario = load(SCENARIOS / "same-failure-five.toml")
    run = run_live(agent, scenario)
    assert not run.timed_out, run.stdout[-2000:]
    assert run.first_told == expected_tell_step(scenario), (run.told_at, run.hook_log)
    assert run.played == list(range(len(scenario.steps))), run.played  # told, not stopped
    assert run.settings_restored, "failcode hooks uninstall changed the agent's settings"


@pytest.mark.parametrize("agent", HOOKED)
def test_the_agent_stops_when_only_a_person_can_help(agent: str) -> None:
    if not agents()[agent].installed():
        missing(f"{agent} is not installed (python -m tests.lab install)")
    scenario = load(SCENARIOS / "missing-modules.toml")
    run = run_live(agent, scenario)
    assert not run.timed_out, run.stdout[-2000:]
    assert run.first_told == expected_tell_step(scenario), (run.told_at, run.hook_log)
    assert run.ran_commands < len(scenario.steps), (run.played, run.hook_log)
    assert "row=person verdict=stop" in run.hook_log, run.hook_log
    assert run.settings_restored, "failcode hooks uninstall changed the agent's settings"
