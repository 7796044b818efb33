"""Gemini CLI's own stdout in the lab (``-p --output-format stream-json``, kept beside each
gemini-cli fixture as ``meta.json``'s ``stdout``): triage reads it as the
``gemini-stream-json`` format, scored against the scenarios' ground truth like the chat
recording, and step by step it says what the chat recording of the same run says.

The stream shows a shell command's own output, not its exit status (Gemini CLI's display
text): a failing command that printed something has no status in it. Each check of such a
step (and each loop made of one) is counted apart, as :mod:`tests.lab.score` counts what an
agent's log lost; the share of those triage still passes, from the output alone, is printed
beside the score. Which steps lost their status is measured here, from the two logs of the
run: the chat recording's status is nonzero and the stream's text for that call states no
status (``Command exited with code: N``, ``Exit Code: N``, a signal).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from failcode.triage.readers import detect
from tests.lab.conftest import SCORES
from tests.lab.kept import kept_logs, log_steps, session_steps
from tests.lab.report import COLUMNS, row
from tests.lab.scenario import SCENARIOS, load
from tests.lab.score import Fixture, check_fixture, triage_fixture

if TYPE_CHECKING:
    from pathlib import Path

    from tests.lab.score import Check

FLOOR = 1.0
"""The share of checks triage must pass on the streams (raise it, never lower it)."""
LOST_FLOOR = 0.97
"""The share of checks of steps whose status the stream lost that triage must still pass,
from the output alone (raise it, never lower it): 130 of 133, the misses being ``diff``'s and
``cmp``'s differences (exit 1, an outcome whose output shows no failure)."""
AGENT = "gemini-cli"
_STATED = re.compile(r"(?m)^(?:Command exited with code|Exit Code|Signal|Command terminated by "
                     r"signal): -?\d+\s*$")
"""How Gemini CLI's texts state a command's status (``shell.ts``)."""


@dataclass(slots=True)
class _Stream(Fixture):
    """A fixture seen through its kept stdout: what the stream keeps is its text."""

    def text(self) -> str:
        return self.stream.read_text(errors="replace")

    @property
    def stream(self) -> Path:
        return self.path / str(self.meta["stdout"])


def _streams() -> list[_Stream]:
    return [_Stream(f.path, f.meta) for f, _ in kept_logs(AGENT)]


def _shown(stream: Path) -> list[str]:
    """The ``output`` of each ``tool_result`` (with its error's message), in the order of the
    calls (``tool_use``), as the stream holds them."""
    order: list[str] = []
    results: dict[str, str] = {}
    for line in stream.read_text().splitlines():
        event = json.loads(line)
        if event.get("type") == "tool_use":
            order.append(event["tool_id"])
        elif event.get("type") == "tool_result":
            error = event.get("error") or {}
            results[event["tool_id"]] = f"{event.get('output') or ''}\n{error.get('message', '')}"
    return [results.get(tool_id, "") for tool_id in order]


def _unstated(fixture: _Stream) -> set[int]:
    """The command steps whose text in the stream states no exit status."""
    shown = _shown(fixture.stream)
    return {step[0] for step in session_steps(fixture) if step[1] == "command" and not (
        step[0] < len(shown) and _STATED.search(shown[step[0]]))}


def _status_lost(fixture: _Stream) -> set[int]:
    """The steps whose nonzero exit status (the chat recording's) the stream does not state."""
    unstated = _unstated(fixture)
    return {step[0] for step in session_steps(fixture)
            if step[1] == "command" and step[3] not in (0, None) and step[0] in unstated}


def _checks() -> tuple[list[Check], list[Check]]:
    """Every check on the streams: those the stream can support, and those of steps whose
    status it lost."""
    records = dict(zip(COLUMNS, row({f.scenario: f for f in _streams()}), strict=True))
    kept: list[Check] = []
    lost: list[Check] = []
    for fixture in _streams():
        scenario = load(SCENARIOS / f"{fixture.scenario}.toml")
        gone = _status_lost(fixture)
        loops = [set(loop) for loop in scenario.loops]
        seen = triage_fixture(fixture, fixture.stream)
        for check in check_fixture(fixture, scenario, seen, records):
            if not check.observable:
                continue
            blind = check.step in gone or (check.name in ("loop", "no_loop") and any(
                loop & gone for loop in loops))
            (lost if blind else kept).append(check)
    return kept, lost


def test_every_kept_stream_is_read_as_gemini_stream_json() -> None:
    """Each kept stdout is detected as the stream format, not as a chat recording."""
    for fixture in _streams():
        reader = detect(fixture.stream.read_bytes()[:65536])
        assert reader is not None, fixture.stream
        assert reader.name == "gemini-stream-json", (fixture.scenario, reader.name)


def test_triage_passes_every_check_on_the_streams() -> None:
    """The scenarios' ground truth, checked on the stream instead of the chat recording."""
    kept, lost = _checks()
    passed = sum(c.passed for c in kept)
    from_output = sum(c.passed for c in lost)
    SCORES.append(f"{'gemini stream':15} {passed:4}/{len(kept):<4} "
                  f"{passed / len(kept):6.1%}  (floor {FLOOR:.1%}; "
                  f"{from_output}/{len(lost)} more where the stream lost the exit status, "
                  f"floor {LOST_FLOOR:.1%})")
    failed = [f"{c.scenario} step {c.step} {c.name}: {c.detail}" for c in kept if not c.passed]
    assert passed / len(kept) >= FLOOR, failed
    blind = [f"{c.scenario} step {c.step} {c.name}: {c.detail}" for c in lost if not c.passed]
    assert from_output / len(lost) >= LOST_FLOOR, blind


def test_the_stream_and_the_chat_recording_of_a_run_give_the_same_steps() -> None:
    """Steps, commands, outcomes and every exit status the stream states agree between the
    two logs of a run (a status it does not state is the next test's)."""
    differ = []
    for fixture in _streams():
        gone = _unstated(fixture)
        from_stream = log_steps(fixture.stream)
        from_recording = session_steps(fixture)

        def same(step: tuple[Any, ...], gone: set[int] = gone) -> tuple[Any, ...]:
            return step[:3] if step[1] == "command" and step[0] in gone else step

        if [same(s) for s in from_stream] != [same(s) for s in from_recording]:
            differ.append((fixture.scenario, from_stream, from_recording))
    assert differ == []


def test_a_status_the_stream_does_not_state_is_0_or_none() -> None:
    """Where the stream states no status, the reader invents none: 0, or None (no status)
    for a command whose output shows a failure."""
    for fixture in _streams():
        gone = _unstated(fixture)
        for step in log_steps(fixture.stream):
            if step[1] == "command" and step[0] in gone:
                assert step[3] in (0, None), (fixture.scenario, step)
