"""Codex CLI's own stdout in the lab (``codex exec --json``, kept beside each codex fixture as
``meta.json``'s ``stdout``): triage reads it as the ``codex-exec-json`` format, scored against
the scenarios' ground truth like the rollout, and step by step it says what the rollout of the
same run says.

What the stream does not print cannot be checked on it: Codex 0.171.0 prints no item for a
command an execpolicy rule forbade before it ran (``refused-command``: the rollout keeps the
refusal, the stream goes straight to the next command), so that run's step checks are counted
apart on the stream, as the lab counts apart what an agent's log loses, and its steps are
compared with the rollout's without the refused call.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from failcode.triage.readers import detect
from tests.lab.conftest import SCORES
from tests.lab.kept import kept_logs, log_steps, session_steps
from tests.lab.report import agent_records
from tests.lab.scenario import SCENARIOS, load
from tests.lab.score import check_fixture, triage_fixture

if TYPE_CHECKING:
    from pathlib import Path

    from tests.lab.score import Check, Fixture

FLOOR = 1.0
"""The share of checks triage must pass on the streams (raise it, never lower it)."""


def _streams() -> list[tuple[Fixture, Path]]:
    return kept_logs("codex")


def _refused_unprinted(fixture: Fixture, path: Path) -> list[int]:
    """The rollout's steps refused by an execpolicy rule that the stream holds no item of."""
    printed = path.read_text()
    return [step[0] for step in session_steps(fixture)
            if step[1] == "rejected" and f"'{step[2]}'" not in printed
            and f'"{step[2]}"' not in printed]


def test_every_kept_stdout_is_read_as_codex_exec_json() -> None:
    """Each kept stdout is detected as the exec stream, not as a rollout."""
    for fixture, path in _streams():
        reader = detect(path.read_bytes()[:65536])
        assert reader is not None, path
        assert reader.name == "codex-exec-json", (fixture.scenario, reader.name)


def test_triage_passes_every_check_on_the_streams() -> None:
    """The scenarios' ground truth, checked on the stream instead of the rollout."""
    records = agent_records().get("codex")
    checks: list[Check] = []
    for fixture, path in _streams():
        scenario = load(SCENARIOS / f"{fixture.scenario}.toml")
        found = check_fixture(fixture, scenario, triage_fixture(fixture, path), records)
        if _refused_unprinted(fixture, path):  # the stream's numbering lost a step
            found = [replace(c, observable=False) if c.step is not None or c.name in (
                "loop", "no_loop") else c for c in found]
        checks += found
    observable = [c for c in checks if c.observable]
    passed = sum(c.passed for c in observable)
    apart = len(checks) - len(observable)
    SCORES.append(f"{'codex exec':15} {passed:4}/{len(observable):<4} "
                  f"{passed / len(observable):6.1%}  (floor {FLOOR:.1%}; {apart} its "
                  "stdout cannot support)")
    failed = [f"{c.scenario} step {c.step} {c.name}: {c.detail}" for c in observable
              if not c.passed]
    assert passed / len(observable) >= FLOOR, failed


def test_the_stream_and_the_rollout_of_a_run_give_the_same_steps() -> None:
    """Steps, commands, exit statuses and outcomes agree between the two logs of a run
    (the rollout's execpolicy refusals the stream never printed left out, and the steps
    after one renumbered)."""
    differ = []
    for fixture, path in _streams():
        unprinted = _refused_unprinted(fixture, path)
        from_rollout = [step for step in session_steps(fixture) if step[0] not in unprinted]
        from_rollout = [(step[0] - sum(s < step[0] for s in unprinted), *step[1:])
                        for step in from_rollout]
        if log_steps(path) != from_rollout:
            differ.append((fixture.scenario, log_steps(path), from_rollout))
    assert differ == []


def test_only_the_refused_command_scenario_loses_a_step_on_the_stream() -> None:
    """The steps the stream cannot show are the execpolicy refusals, no other."""
    lost = {fixture.scenario: _refused_unprinted(fixture, path) for fixture, path in _streams()}
    assert {name: steps for name, steps in lost.items() if steps} == {"refused-command": [0]}


def test_the_stream_keeps_the_retried_provider_faults_the_rollout_loses() -> None:
    """A fault Codex retried (``Reconnecting... 1/2``) is a provider failure on the stream."""
    for fixture, path in _streams():
        if fixture.scenario not in ("provider-retried", "provider-overloaded-malformed"):
            continue
        assert "Reconnecting..." in path.read_text(), fixture.scenario
        seen = triage_fixture(fixture, path)
        assert seen.any_provider, fixture.scenario
        assert seen.status == "submitted", fixture.scenario
