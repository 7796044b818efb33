"""The hook reads what real agents send as triage reads their logs: every recorded payload.

``tests/live/fixtures/<agent>/<scenario>/`` holds the payloads the lab's pinned agents gave a
recording hook while they played a lab scenario (``python -m tests.live.capture``). Each is
replayed, in order, through the hook's own reading and classification; the oracle is the
scenario's ground truth (``tests/lab/scenarios/``: the command's true exit status and the
failure a careful triage reports), never the hook's own output:

- every step that failed (the ground truth's) reaches the hook, and no step the agent never
  ran (refused, or after a provider fault it gave up on); a failed step's kind, category and
  class are the ground truth's;
- a step the ground truth calls an outcome (a refused command, a string to replace that is not
  there) is no failure;
- the hook's answer for every payload is valid JSON of the agent's output format, or nothing.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from failcode.live._agents import AGENTS
from failcode.live._hook import run_hook, step_failure
from tests.lab.scenario import SCENARIOS, load

if TYPE_CHECKING:
    from failcode.live._agents import ToolCall
    from tests.lab.scenario import Scenario

FIXTURES = Path(__file__).parent / "fixtures"
_CLAUDE_FIELDS = {"hookSpecificOutput", "continue", "stopReason", "systemMessage"}
ANSWER_FIELDS = {"claude-code": _CLAUDE_FIELDS, "gemini-cli": _CLAUDE_FIELDS,
                 "qwen-code": _CLAUDE_FIELDS, "codex": _CLAUDE_FIELDS,
                 "cline": {"contextModification", "cancel", "errorMessage"}}
"""The output fields of each agent's hook contract (docs/live.md)."""


def _runs() -> list[Path]:
    return sorted(p.parent for p in FIXTURES.glob("*/*/meta.json")
                  if p.parent.parent.name in AGENTS)


def _payloads(run: Path) -> list[tuple[str, dict[str, Any]]]:
    meta = json.loads((run / "meta.json").read_text())
    return [(event, json.loads((run / name).read_text()))
            for event, name in zip(meta["events"], meta["payloads"], strict=True)]


def _steps(agent: str, scenario: Scenario,
           payloads: list[tuple[str, dict[str, Any]]]) -> list[tuple[int, ToolCall]]:
    """The after-call payloads with the scenario step each reports: the scripted model names
    the step in a shell call's ``description`` (``stub step N``) and in the call's id
    (``call_stub_N``) where the agent passes the id on; a file tool's call without either is
    the next scenario step acting on its file."""
    hooks = AGENTS[agent]
    steps: list[tuple[int, ToolCall]] = []
    for event, data in payloads:
        call = hooks.read(event, data)
        if call.phase != "after":
            continue
        described = str((data.get("tool_input") or {}).get("description", ""))
        named = (re.fullmatch(r"stub step (\d+)", described)
                 or re.search(r"call_stub_(\d+)$", call.call or ""))
        if named is not None:
            steps.append((int(named.group(1)), call))
            continue
        after = steps[-1][0] + 1 if steps else 0
        match = next(n for n in range(after, len(scenario.steps))
                     if scenario.steps[n].path and call.action.endswith(scenario.steps[n].path))
        steps.append((match, call))
    return steps


def test_there_are_recorded_payloads_for_every_agent_with_hooks() -> None:
    agents = {run.parent.name for run in _runs()}
    assert agents == set(AGENTS), f"no recorded payloads for {set(AGENTS) - agents}"


@pytest.mark.parametrize("run", _runs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_step_is_classified_as_the_ground_truth_says(run: Path) -> None:
    scenario = load(SCENARIOS / f"{run.name}.toml")
    agent = run.parent.name
    steps = _steps(agent, scenario, _payloads(run))
    seen = [n for n, _ in steps]
    end = len(scenario.steps) if scenario.fatal_step is None else scenario.fatal_step
    ran = [n for n in range(end) if not scenario.steps[n].refused]
    failed = [n for n in ran if scenario.steps[n].expect.failure]
    assert set(seen) <= set(ran), f"{agent}/{run.name}: steps {seen}, the agent ran {ran}"
    assert set(failed) <= set(seen), f"{agent}/{run.name}: failed steps {failed}, seen {seen}"
    for step, call in steps:
        truth = scenario.steps[step]
        failure, _source = step_failure(call)
        where = f"{agent}/{run.name} step {step} ({truth.label})"
        if truth.expect.failure:
            assert failure is not None, f"{where}: no failure, expected {truth.expect}"
            assert (failure.kind.value, failure.category.value, failure.error_class) == (
                truth.expect.kind, truth.expect.category, truth.expect.error_class), where
        else:
            assert failure is None, f"{where}: {failure and failure.code} where none is"


@pytest.mark.parametrize("run", _runs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_answer_is_the_agents_json_or_nothing(run: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAILCODE_STATE_DIR", str(tmp_path))
    agent = run.parent.name
    for event, data in _payloads(run):
        answer = run_hook(agent, event, io.BytesIO(json.dumps(data).encode()), env={})
        if answer:
            fields = json.loads(answer)
            assert set(fields) <= ANSWER_FIELDS[agent], fields
    log = tmp_path / "hook.log"
    problems = [line for line in log.read_text().splitlines() if "Error" in line] \
        if log.exists() else []
    assert not problems, problems
