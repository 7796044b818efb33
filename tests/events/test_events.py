"""Failure events: the record, its factories, redaction, the JSONL sink and reader, feeds."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from failcode import (
    FC,
    Action,
    Cancelled,
    FailureError,
    History,
    NoMatch,
    PeerExited,
    RejectedAction,
    SessionEnded,
    SessionStarted,
    Veto,
    decide,
    retry,
)
from failcode.events import (
    DECISION_EVENTS,
    EVENT_VERSION,
    Event,
    EventHandler,
    EventProblem,
    JsonlSink,
    decision_event,
    event_id_time_ms,
    event_json_schema,
    event_processor,
    failure_event,
    failure_hook,
    new_event_id,
    outcome_event,
    read_events,
    remedy_event,
)
from failcode.testing import MemorySink, set_testing
from tests.store.sample import T0, event, failure

REPO = Path(__file__).resolve().parents[2]
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_event_round_trips_through_json() -> None:
    """An event read back from its JSON form equals the event."""
    original = event(minute=3)
    assert Event.from_json(original.to_json()) == original


@given(st.text(min_size=1, max_size=40).filter(str.strip), st.integers(0, 10**6))
def test_any_session_and_step_round_trip(session: str, step: int) -> None:
    """Session and step survive the JSON form for any printable session."""
    made = failure_event(failure(), event="tool.failed", session=session, step=step)
    back = Event.from_json(made.to_json())
    assert (back.session, back.step) == (made.session, step)


def test_event_ids_sort_in_creation_order_and_never_repeat() -> None:
    """ULIDs made one after another are unique and sort in the order they were made."""
    ids = [new_event_id() for _ in range(5000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_event_id_carries_the_millisecond() -> None:
    """An id made at a millisecond decodes back to it (a far-future one, so never clamped)."""
    assert event_id_time_ms(new_event_id(now_ms=9_000_000_000_000)) == 9_000_000_000_000


def test_failure_event_takes_session_and_step_from_context() -> None:
    """Session and step default to the failure's context."""
    f = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"},
                                 context={"session": "s-9", "step": 4})
    made = failure_event(f, event="command.failed")
    assert (made.session, made.step) == ("s-9", 4)


def test_failure_event_redacts_context_and_metadata() -> None:
    """A token in the failure's context or metadata never reaches the event's JSON."""
    f = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"},
                                 context={"note": f"token={SECRET}"},
                                 metadata={"header": f"Authorization: Bearer {SECRET}"})
    text = failure_event(f, event="tool.failed", source=f"bot {SECRET}").to_json().decode()
    assert SECRET not in text
    assert "tool.failed" in text


@pytest.mark.parametrize(("outcome", "name"), [
    (NoMatch(probe="grep", exit_code=1), "probe.no_match"),
    (RejectedAction(action="click", reason="off screen"), "action.rejected"),
    (Veto(reason="wrong answer", by="judge"), "task.vetoed"),
    (Cancelled(reason="user pressed Ctrl-C", signal=2), "task.cancelled"),
    (PeerExited(peer="worker", reason="EOF", exit_code=1), "peer.exited"),
    (SessionStarted(by="claude-code hook"), "session.started"),
    (SessionEnded(status="provider_error", by="claude-code hook", reason="server_error"),
     "session.ended"),
])
def test_outcome_event_is_named_by_its_outcome(outcome: object, name: str) -> None:
    """Each typed non-error outcome has its own event name and round-trips."""
    made = outcome_event(outcome, session="s-1")  # type: ignore[arg-type]
    assert made.event == name
    assert Event.from_json(made.to_json()).outcome == outcome


@pytest.mark.parametrize("action", list(Action))
def test_decision_event_is_named_by_its_action(action: Action) -> None:
    """A decision event's name is that of its action, and it carries the failure."""
    f = failure()
    real = decide(f, History(operation="default"))
    made = decision_event(f, msgspec.structs.replace(real, action=action))
    assert made.event == DECISION_EVENTS[action]
    assert made.failure is not None
    assert made.decision is not None
    assert made.decision.action is action


def test_a_naive_time_is_refused() -> None:
    """An event's time must be timezone-aware UTC."""
    with pytest.raises(ValueError, match="timezone-aware"):
        failure_event(failure(), event="tool.failed", ts=datetime(2026, 1, 1))  # noqa: DTZ001


def test_a_failure_event_needs_a_failure() -> None:
    """A tool.failed event that carries an outcome is refused."""
    with pytest.raises(ValueError, match="carries a failure"):
        outcome_event(Veto(reason="no"), event="tool.failed")


def test_an_unknown_version_is_refused() -> None:
    """Decoding an event of another version fails, naming the version."""
    data = json.loads(event().to_json())
    data["version"] = EVENT_VERSION + 1
    with pytest.raises(ValueError, match="version"):
        Event.from_json(json.dumps(data))


def test_jsonl_sink_and_reader_round_trip(tmp_path: Path) -> None:
    """What a JsonlSink writes, read_events reads back in order."""
    written = [event(minute=i) for i in range(100)]
    with JsonlSink(tmp_path / "logs" / "events.jsonl", buffer=7) as sink:
        for item in written:
            sink.emit(item)
    assert list(read_events(tmp_path / "logs" / "events.jsonl")) == written


def test_reader_reports_bad_lines_with_their_numbers(tmp_path: Path) -> None:
    """A malformed line and an unknown version are reported by line; the rest are read."""
    good = [event(minute=i) for i in range(3)]
    newer = json.loads(good[0].to_json())
    newer["version"] = 99
    lines = [good[0].to_json().decode(), "{not json", "", json.dumps(newer),
             good[1].to_json().decode()[:-1] + ',"extra":1}', good[2].to_json().decode()]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    items = list(read_events(path))
    assert [e for e in items if isinstance(e, Event)] == [good[0], good[2]]
    problems = [p for p in items if isinstance(p, EventProblem)]
    assert [(p.line, p.kind) for p in problems] == [
        (2, "malformed"), (4, "unknown_version"), (5, "malformed")]
    assert problems[1].failure().code == "FC-STORE-009"
    assert "Line 5 of" in problems[2].failure().message


def test_jsonl_sink_on_an_unwritable_path_is_classified(tmp_path: Path) -> None:
    """A sink whose directory cannot exist raises FC-STORE-005, not an OSError."""
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(FailureError) as caught:
        JsonlSink(blocker / "events.jsonl")
    assert caught.value.failure.code == "FC-STORE-005"


def test_event_schema_is_committed() -> None:
    """docs/event.schema.json is the generated schema; regenerate it when this fails."""
    committed = json.loads((REPO / "docs" / "event.schema.json").read_text(encoding="utf-8"))
    assert committed == json.loads(json.dumps(event_json_schema())), (
        "docs/event.schema.json is stale: run "
        "`python -m failcode.events schema > docs/event.schema.json`")


def test_memory_sink_keeps_what_was_emitted() -> None:
    """MemorySink holds the emitted events and marks them flushed on close."""
    sink = MemorySink()
    sink.emit(event())
    sink.close()
    assert len(sink.flushed) == 1
    with pytest.raises(ValueError, match="closed"):
        sink.emit(event())


def test_retry_hook_emits_every_failed_attempt_with_its_decision() -> None:
    """failure_hook as on_failure records each failed attempt and the decision made."""
    sink = MemorySink()

    @retry("default", on_failure=failure_hook(sink, session="s-3"), wrap=True)
    def broken() -> None:
        raise FailureError(failure())

    with set_testing(True, attempts=3), pytest.raises(FailureError):
        broken()
    assert [e.event for e in sink.events] == ["tool.failed"] * len(sink.events)
    assert sink.events
    assert all(e.decision is not None and e.session == "s-3"
                               for e in sink.events)


def test_logging_handler_emits_records_that_carry_a_failure() -> None:
    """EventHandler turns a log record with a failure into an event and ignores the rest."""
    sink = MemorySink()
    log = logging.getLogger("failcode.test.events")
    handler = EventHandler(sink)
    log.addHandler(handler)
    try:
        log.error("plain message")
        log.error("step failed", extra={"failure": failure(session="s-4")})
        try:
            raise FailureError(failure())
        except FailureError:
            log.exception("raised")
    finally:
        log.removeHandler(handler)
    assert [(e.event, e.source) for e in sink.events] == [("tool.failed", "logging")] * 2
    assert sink.events[0].session == "s-4"


def test_structlog_processor_emits_and_passes_the_event_through() -> None:
    """event_processor emits a failure event and returns the event dict unchanged."""
    import structlog

    sink = MemorySink()
    structlog.configure(processors=[event_processor(sink), structlog.processors.dict_tracebacks,
                                    structlog.testing.LogCapture()])
    try:
        capture = structlog.get_config()["processors"][-1]
        structlog.get_logger().error("failed", failure=failure())
    finally:
        structlog.reset_defaults()
    assert [e.source for e in sink.events] == ["structlog"]
    assert capture.entries[0]["event"] == "failed"


def test_remedy_event_redacts_the_remedy_text() -> None:
    """A remedy mentioning a secret is stored redacted."""
    made = remedy_event("sig", f"export GITHUB_TOKEN={SECRET}", worked=True,
                        ts=T0 + timedelta(hours=1))
    assert made.remedy is not None
    assert SECRET not in made.remedy.remedy
