"""Triage and the store: record what triage found as events, and rebuild the report from them.

``failcode triage --store URL`` turns every failure and outcome of a :class:`TriageResult`
into one failcode event and appends them to the store; ``failcode report --store URL`` reads
the store's events back through the ``failcode-events`` reader's rules and builds the same
:class:`TriageResult`, so every renderer works on either.

Idempotence: an event's id is derived from the input's path (as given to triage), the
session, the step and the failure's signature (an outcome: its type, evidence and its
place among the step's outcomes), shaped as a ULID (48 bits of the step's time in
milliseconds, or 0 when the format has none, then 80 bits of a BLAKE2b digest). Triaging the
same input again (with the same path) yields the same ids, and the store keeps each id once.
The same file given by another path is another input.

What only triage knows travels in the failure's or outcome's context under ``triage.*`` keys
(path, format, evidence, repeats, the step's time, the agent that took the step in a team of
agents, the session's steps and end, its model and agent version where the format records
them), which the reader removes again. Sessions in
which triage found no failure and no outcome leave no event, so a report from a store lists
only sessions with findings.

A store that fails while recording (a full disk, a read-only or foreign file, a server gone)
never costs the run: :class:`Recorder` keeps the first FC-STORE failure in ``failure``, stops
writing (the page that failed is not stored, every page acknowledged before stays), and the
run goes on; ``failcode triage`` prints the finished report, then that failure, exit 1.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec

from failcode.events import derived_event_id as event_id
from failcode.events import failure_event, outcome_event
from failcode.triage._result import InputResult, TriageResult
from failcode.triage.analysis._analyze import _read
from failcode.triage.readers._failcode_events import TRIAGE_PREFIX, sessions_from_events

if TYPE_CHECKING:
    from collections.abc import Iterator

    from failcode import Failure
    from failcode.events import Event
    from failcode.store import Store
    from failcode.triage._result import SessionResult

__all__ = ["Recorder", "Reporter", "record", "result_events", "result_from_store"]

_EVENT_NAME: Final = {"command": "command.failed", "tool": "tool.failed",
                      "provider": "tool.failed", "agent": "agent.failed",
                      "harness": "agent.failed"}
_PAGE: Final = 2000


def _when(timestamp: float | None) -> datetime | None:
    """The step's time; None (now, when recorded) where the format has none or an
    impossible one."""
    if timestamp is None:
        return None
    try:
        return datetime.fromtimestamp(timestamp, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _facts(session: SessionResult, *, evidence: str, timestamp: float | None,
           **more: Any) -> dict[str, Any]:
    facts = {"path": session.path, "format": session.format, "evidence": evidence,
             "timestamp": timestamp, "steps": session.steps, "ended": session.status,
             "model": session.model, "agent_version": session.agent_version,
             "verdict": session.verdict, "reward": session.reward, **more}
    return {TRIAGE_PREFIX + key: value for key, value in facts.items()}


def result_events(result: TriageResult) -> Iterator[Event]:
    """One event per failure and per outcome triage found, with deterministic ids."""
    for session in result.sessions:
        for entry in session.failures:
            failure = entry.failure
            extra = _facts(session, evidence=entry.evidence, timestamp=entry.timestamp,
                           repeats=entry.repeats, masked=entry.masked or None,
                           ends=failure is session.ended_failure or None, actor=entry.actor)
            context = {**failure.context, **{k: v for k, v in extra.items() if v is not None}}
            yield failure_event(
                msgspec.structs.replace(failure, context=context),
                event=_EVENT_NAME.get(entry.source, "tool.failed"), session=session.session,
                step=entry.step, source=entry.source, ts=_when(entry.timestamp),
                event_id=event_id(entry.timestamp, session.path, session.session, entry.step,
                                  failure.signature))
        seen: dict[tuple[int | None, str], int] = {}
        for outcome_entry in session.outcomes:
            outcome = outcome_entry.outcome
            kind = str(outcome.__struct_config__.tag)
            place = (outcome_entry.step, f"{kind}:{outcome_entry.evidence}")
            seen[place] = seen.get(place, -1) + 1
            extra = _facts(session, evidence=outcome_entry.evidence, timestamp=None,
                           actor=outcome_entry.actor)
            context = {**outcome.context, **{k: v for k, v in extra.items() if v is not None}}
            yield outcome_event(
                msgspec.structs.replace(outcome, context=context), session=session.session,
                step=outcome_entry.step, source=outcome_entry.source,
                event_id=event_id(None, session.path, session.session, outcome_entry.step,
                                  "outcome", place[1], seen[place]))


def record(result: TriageResult, store: Store) -> tuple[int, int]:
    """Append every failure and outcome of ``result`` to ``store``: (new, already stored)."""
    recorder = Recorder(store)
    for session in result.sessions:
        recorder.add(session)
    return recorder.close()


class Recorder:
    """Record sessions as they come: their events go to the store in pages of the same
    size and order as :func:`record` of all of them, one transaction per page."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.failure: Failure | None = None
        """The store's first failure; after it nothing more is written."""
        self._page: list[Event] = []
        self._new = self._total = 0

    def add(self, session: SessionResult) -> None:
        """Record one session's failures and outcomes (sessions in report order)."""
        if self.failure is not None:
            return
        events = result_events(TriageResult(sessions=[session]))
        while more := list(itertools.islice(events, _PAGE - len(self._page))):
            self._page.extend(more)
            if len(self._page) >= _PAGE:
                self._append()

    def _append(self) -> None:
        from failcode.store import StoreError  # noqa: PLC0415 - the class, at run time

        if self._page and self.failure is None:
            try:
                self._new += self.store.append(self._page)
            except StoreError as exc:
                self.failure = exc.failure
            else:
                self._total += len(self._page)
        self._page = []

    def close(self) -> tuple[int, int]:
        """Record what is left: (new events, events already stored) of every page the store
        acknowledged."""
        self._append()
        return self._new, self._total - self._new


class Reporter:
    """Send sessions' events to a failcode service (``failcode triage --report-to``), with the
    ids :func:`result_events` gives them: the service stores each once however often the same
    input is triaged. Sending never costs the run: what could not be sent is said after the
    report (exit 1)."""

    _WAIT_EVERY: Final = 5000
    """Events after which the reporter waits for the service (the buffer never overflows)."""

    def __init__(self, url: str, key: str) -> None:
        from failcode.events import report_to  # noqa: PLC0415 - only with --report-to

        self.url = url
        self._sink = report_to(url, key, buffer=2 * self._WAIT_EVERY, exit_timeout_s=30.0)
        self._since_wait = 0

    def add(self, session: SessionResult) -> None:
        """Send one session's failures and outcomes."""
        for event in result_events(TriageResult(sessions=[session])):
            self._sink.emit(event)
            self._since_wait += 1
            if self._since_wait >= self._WAIT_EVERY:
                self._sink.flush(timeout_s=120.0)
                self._since_wait = 0

    def close(self) -> tuple[str | None, list[str]]:
        """Wait for the service, stop: (the line saying what was sent when every event was
        acknowledged, else the problem's lines)."""
        from failcode.events._remote import _shown_url  # noqa: PLC0415

        self._sink.flush(timeout_s=120.0)
        self._sink.close()
        stats = self._sink.stats
        where = _shown_url(self.url)
        if stats.sent == stats.emitted:
            return (f"reported {stats.sent} events to {where} ({stats.new} new, "
                    f"{stats.duplicates} already there)"), []
        lines = [(f"--report-to {where}: {stats.emitted - stats.sent} of {stats.emitted} "
                  f"events were not stored ({stats.rejected} refused, {stats.dropped} "
                  "dropped)")]
        failure = stats.last_failure
        if failure is not None:
            lines.append(f"  [{failure.code}] {failure.message}")
            if failure.remedy:
                lines.append(f"  remedy: {failure.remedy}")
        lines.append("  triage again with --report-to to send the rest (each once)")
        return None, lines


def _stored_events(store: Store) -> Iterator[Event]:
    from failcode.events import Event  # noqa: PLC0415 - the class, at run time

    after: tuple[int, str] = (-(1 << 62), "")
    while True:
        rows = store.fetch("SELECT ts_us, event_id, body FROM events WHERE ts_us > ? OR "
                           "(ts_us = ? AND event_id > ?) ORDER BY ts_us, event_id LIMIT ?",
                           (after[0], after[0], after[1], _PAGE))
        for _, _, body in rows:
            yield Event.from_json(body)
        if len(rows) < _PAGE:
            return
        after = (rows[-1][0], rows[-1][1])


def result_from_store(store: Store, *, label: str = "store") -> TriageResult:
    """The report of every failure and outcome event in ``store``, as a TriageResult.

    Sessions are grouped as triage found them (per input path and session) and listed by
    path; events from other producers form sessions whose path is ``label``.
    """
    result = TriageResult()
    inputs: dict[str, list[str | None]] = {}
    for session in sessions_from_events(_stored_events(store)):
        path = session.path or label
        fmt = session.format or "failcode-events"
        default = Path(path).stem or "session"
        _read(session.replay(default), path, fmt, result.sessions)
        inputs.setdefault(path, []).append(fmt)
    result.sessions.sort(key=lambda session: session.path)  # stable: first seen within a path
    for path, formats in sorted(inputs.items()):
        result.inputs.append(InputResult(path, formats[0], len(formats)))
    return result
