"""Claude Code 2.x records a probe's exit 1 as a success; triage reads it as the probe it was.

The shapes are the session lab's Claude Code 2.1.197 runs (``tests/lab/fixtures/claude-code/``):
``grep`` finding nothing and ``test -f`` of a missing file come back with ``is_error: false``,
the text ``(Bash completed with no output)`` and ``toolUseResult.returnCodeInterpretation``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from failcode.triage import triage
from tests.lab.runner import FIXTURES

if TYPE_CHECKING:
    from pathlib import Path


def _session(path: Path, interpretation: str | None) -> Path:
    base = {"sessionId": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "uuid": "u"}
    use = {**base, "type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "grep -rn x ."}}]}}
    result = {**base, "type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "is_error": False,
         "content": "(Bash completed with no output)"}]},
        "toolUseResult": {"stdout": "", "stderr": "", "interrupted": False,
                          **({"returnCodeInterpretation": interpretation}
                             if interpretation else {})}}
    path.write_text(json.dumps(use) + "\n" + json.dumps(result) + "\n")
    return path


def test_the_lab_probes_are_no_match_outcomes() -> None:
    """grep, test -f and which finding nothing are three no-match outcomes, no failure."""
    result = triage([FIXTURES / "claude-code" / "probes-no-output" / "session"])
    session = result.sessions[0]
    assert session.failures == []
    assert sorted(e.step for e in session.outcomes) == [0, 1, 2]


def test_a_return_code_interpretation_means_exit_1(tmp_path: Path) -> None:
    """``returnCodeInterpretation`` on a success is an exit 1: a grep that found nothing."""
    session = triage([_session(tmp_path / "a.jsonl", "No matches found")]).sessions[0]
    assert [type(e.outcome).__name__ for e in session.outcomes] == ["NoMatch"]


def test_without_it_an_empty_success_is_nothing(tmp_path: Path) -> None:
    """The same result without the interpretation is a success: no outcome, no failure."""
    session = triage([_session(tmp_path / "a.jsonl", None)]).sessions[0]
    assert (session.failures, session.outcomes) == ([], [])
