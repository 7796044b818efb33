"""The failcode-events reader, on a JSONL file JsonlSink wrote from real classified failures."""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING

import jsonschema
import pytest

from failcode import Failure, History, NoMatch, decide, from_command
from failcode.events import JsonlSink, decision_event, failure_event, outcome_event
from failcode.triage import SessionResult, TriageResult, sample_paths, triage
from tests._needs import need_tool
from tests._paths import REPO

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA = json.loads((REPO / "docs" / "triage.schema.json").read_text())


def _run(command: list[str], cwd: Path) -> tuple[int, str]:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=60,
                          check=False)
    return done.returncode, done.stdout + done.stderr


class Written:
    """A JSONL file of two interleaved sessions: a real failing gcc build (twice, a loop), a
    real grep that finds nothing, and the policy's decision about the build failure."""

    def __init__(self, root: Path) -> None:
        need_tool("gcc")
        need_tool("grep")
        (root / "main.c").write_text("int main(void) { return count; }\n")
        code, output = _run(["gcc", "-c", "main.c"], root)
        build = from_command("gcc -c main.c", code, output, purpose="build")
        code, output = _run(["grep", "-rn", "no_such_symbol", "."], root)
        probe = from_command("grep -rn no_such_symbol .", code, output)
        assert isinstance(build, Failure)
        assert isinstance(probe, NoMatch)
        self.build, self.probe = build, probe
        self.path = root / "events.log"  # a name no reader keys on: detection is by content
        with JsonlSink(self.path) as sink:
            sink.emit(outcome_event(probe, session="s-1", step=0))
            sink.emit(failure_event(build, event="command.failed", session="s-2", step=3))
            sink.emit(failure_event(build, event="command.failed", session="s-1", step=1))
            sink.emit(failure_event(build, event="command.failed", session="s-1", step=2))
            sink.emit(decision_event(build, decide(build, History()), session="s-1", step=2))


@pytest.fixture
def written(tmp_path: Path) -> Written:
    return Written(tmp_path)


def _session(result: TriageResult, name: str) -> SessionResult:
    return next(s for s in result.sessions if s.session == name)


def test_events_file_is_detected_by_content(written: Written) -> None:
    """A JsonlSink file named .log is read as failcode-events, with no input error."""
    item = triage([written.path]).inputs[0]
    assert (item.format, item.error_code) == ("failcode-events", None)


def test_a_command_failed_event_is_a_failure_at_its_step(written: Written) -> None:
    """The gcc failure is reported at the step its event names, with its own signature."""
    session = _session(triage([written.path]), "s-1")
    assert [(e.step, e.source, e.failure.signature) for e in session.failures] == [
        (1, "command", written.build.signature), (2, "command", written.build.signature)]


def test_a_decision_event_is_not_a_second_failure(written: Written) -> None:
    """retry.scheduled about the step-2 failure adds neither a failure nor a repeat."""
    session = _session(triage([written.path]), "s-1")
    assert [e.repeats for e in session.failures] == [1, 1]


def test_a_no_match_event_is_an_outcome(written: Written) -> None:
    """The grep that found nothing is an outcome of session s-1, not a failure."""
    session = _session(triage([written.path]), "s-1")
    assert [(e.step, type(e.outcome)) for e in session.outcomes] == [(0, NoMatch)]


def test_interleaved_sessions_are_grouped(written: Written) -> None:
    """Lines of two sessions written in between each other make two sessions."""
    result = triage([written.path])
    assert [(s.session, s.steps, len(s.failures)) for s in result.sessions] == [
        ("s-1", 3, 2), ("s-2", 4, 1)]


def test_the_same_failure_at_consecutive_steps_is_a_loop(written: Written) -> None:
    """The build failing at steps 1 and 2 of s-1 is a loop."""
    session = _session(triage([written.path]), "s-1")
    assert [loop.steps for loop in session.loops] == [(1, 2)]


def test_a_truncated_line_is_named_and_the_rest_is_read(written: Written) -> None:
    """A cut line in the middle is FC-STORE-008 naming its line; the lines after it count."""
    lines = written.path.read_bytes().splitlines(keepends=True)
    damaged = [*lines[:2], lines[2][: len(lines[2]) // 2] + b"\n", *lines[3:]]
    written.path.write_bytes(b"".join(damaged))
    result = triage([written.path])
    item = result.inputs[0]
    assert item.error_code == "FC-STORE-008"
    assert "Line 3 of" in (item.error_message or "")
    assert [e.step for e in _session(result, "s-1").failures] == [2]  # step 1 was on line 3


def test_a_file_ending_in_a_cut_line_keeps_every_whole_line(written: Written) -> None:
    """An unfinished last line (a writer killed mid-line) is reported; the others are read."""
    whole = written.path.read_bytes()
    written.path.write_bytes(whole + whole.splitlines()[1][:40])
    result = triage([written.path])
    assert result.inputs[0].error_code == "FC-STORE-008"
    assert sum(len(s.failures) for s in result.sessions) == 3


def test_json_of_an_events_file_validates(written: Written) -> None:
    """The --json document of an events file matches the committed schema."""
    jsonschema.validate(triage([written.path]).to_dict(), SCHEMA)


def test_a_json_line_that_is_not_an_event_is_not_this_format(tmp_path: Path) -> None:
    """A JSONL file of other records is not taken for failcode events."""
    path = tmp_path / "other.jsonl"
    path.write_text('{"type": "user", "message": {"role": "user", "content": "hi"}}\n')
    assert triage([path]).inputs[0].format != "failcode-events"


def test_the_embedded_sample_has_a_session_of_failcode_events() -> None:
    """The shipped sample includes a JsonlSink session read with no error, with failures,
    a probe and a loop."""
    result = triage(sample_paths())
    events = [item for item in result.inputs if item.format == "failcode-events"]
    assert [item.error_code for item in events] == [None]
    session = next(s for s in result.sessions if s.path == events[0].path)
    assert session.failures
    assert any(isinstance(entry.outcome, NoMatch) for entry in session.outcomes)
    assert session.loops
