"""Claude Code's own stdout in the lab (``-p --output-format stream-json --verbose``, kept beside
each claude-code fixture as ``meta.json``'s ``stdout``): triage reads it as the
``claude-stream-json`` format, scored against the scenarios' ground truth like the transcript,
and step by step it says what the transcript of the same run says."""

from __future__ import annotations

from typing import TYPE_CHECKING

from failcode.triage.readers import detect
from tests.lab.conftest import SCORES
from tests.lab.kept import kept_logs, log_steps, session_steps
from tests.lab.report import agent_records
from tests.lab.scenario import SCENARIOS, load
from tests.lab.score import check_fixture, triage_fixture

if TYPE_CHECKING:
    from pathlib import Path

    from tests.lab.score import Fixture

FLOOR = 1.0
"""The share of checks triage must pass on the streams (raise it, never lower it)."""


def _streams() -> list[tuple[Fixture, Path]]:
    return kept_logs("claude-code")


def test_every_kept_stream_is_read_as_claude_stream_json() -> None:
    """Each kept stdout is detected as the stream format, not as a transcript."""
    for fixture, path in _streams():
        reader = detect(path.read_bytes()[:65536])
        assert reader is not None, path
        assert reader.name == "claude-stream-json", (fixture.scenario, reader.name)


def test_triage_passes_every_check_on_the_streams() -> None:
    """The scenarios' ground truth, checked on the stream instead of the transcript."""
    records = agent_records().get("claude-code")
    checks = []
    for fixture, path in _streams():
        scenario = load(SCENARIOS / f"{fixture.scenario}.toml")
        checks += check_fixture(fixture, scenario, triage_fixture(fixture, path), records)
    observable = [c for c in checks if c.observable]
    passed = sum(c.passed for c in observable)
    SCORES.append(f"{'claude stream':15} {passed:4}/{len(observable):<4} "
                  f"{passed / len(observable):6.1%}  (floor {FLOOR:.1%})")
    failed = [f"{c.scenario} step {c.step} {c.name}: {c.detail}" for c in observable
              if not c.passed]
    assert passed / len(observable) >= FLOOR, failed


def test_the_stream_and_the_transcript_of_a_run_give_the_same_steps() -> None:
    """Steps, commands, exit statuses and outcomes agree between the two logs of a run."""
    differ = []
    for fixture, path in _streams():
        from_transcript = session_steps(fixture)
        if log_steps(path) != from_transcript:
            differ.append((fixture.scenario, log_steps(path), from_transcript))
    assert differ == []
