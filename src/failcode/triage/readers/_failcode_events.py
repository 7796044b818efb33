"""failcode's own events: JSON Lines written by ``JsonlSink`` (or any sink's JSON form).

Rules (about the format):

- Detection: the first non-blank line of the input decodes as a failcode ``Event`` of this
  version (the typed decoder accepts nothing else).
- Lines are read one at a time with :func:`failcode.events.read_events`. A line that is not a
  valid event (not JSON, truncated, a field of the wrong type, another event version) is
  reported with its line number (FC-STORE-008, or FC-STORE-009 for another version) and the
  other lines are still read; the input then counts as damaged (exit status 2).
- A session is the events' ``session`` (events without one belong to a session named after
  the file); sessions are reported in the order they first appear, whatever the interleaving
  of lines from several writers. Events ``failcode triage --store`` recorded name their input
  (``triage.path``): sessions of one name from different inputs (events exported from a store
  that triaged both) stay apart, each named ``session (input path)``. A step is the event's
  ``step``; the session's step count is its largest step + 1.
- Failures: every event that carries a failure and is not a decision or remedy event
  (``command.failed``, ``tool.failed``, ``agent.failed``, ``task.failed``... and any other
  ``area.what`` with a failure). Decision events (``retry.scheduled``, ``failure.escalated``...)
  are decisions about a failure already logged by its own failure event, and remedy events are
  knowledge: neither is a failure.
- Outcomes: every event that carries an outcome (``probe.no_match``, ``action.rejected``,
  ``task.vetoed``, ``task.cancelled``, ``peer.exited``), except a session's start and end.
- Source: the event's ``source`` when it is one of triage's sources, else from the event
  name (``command.*`` -> command, ``agent.*``/``task.*``/``context.*`` -> agent) and the
  failure's code (``FC-PROV-`` -> provider, ``FC-SYS-003`` -> harness), else tool.
- Evidence: the ``command`` the failure's params or context name, else the failure's code and
  the first line of its message (an outcome: its probe, action or reason).
- Time: the event's ``ts`` (always UTC: the event decoder refuses a naive or non-UTC one), or
  the step's own time triage recorded (``triage.timestamp``: seconds since the epoch, finite,
  within the years 1 to 9999; anything else, or none, is no time).
- Exit statuses: a failure read here was classified when it happened and is taken as it is;
  its exit status is part of that failure (its params), never read by this reader.
- How the session ended: what its latest ``session.ended`` event says (an agent's hook at its
  stop: :class:`~failcode.SessionEnded`; an end on an error is the session's last failure's), or
  a failure whose context says it ended the session (``session.ended``: a telemetry record of
  the error the agent gave up on); a session whose ``agent.failed`` event is the agent reaching
  a limit (FC-LIFE-009): ``limit``; else ``unknown``. ``session.started`` and ``session.ended``
  events are facts of the session, never outcomes of a step; a session with nothing else is
  still a session. Events recorded by ``failcode triage --store`` carry the session's step count
  and how it ended in ``triage.*`` keys of the failure's or outcome's context, which are read
  back (and removed).

Trust (a file another program wrote):

- Redaction: every event is redacted as the event factories redact (``read_events(...,
  redacted=True)``, :func:`failcode.events.redact_event`) before it becomes a session, so a
  secret in a session name, a detail, a context value or an outcome never reaches ``--json``,
  ``--html``, the terminal or a store; an event whose secret redaction cannot rewrite (in a
  failure's surface or location, which its signature repeats) is that line's FC-STORE-008.
  Events read back from a store (``failcode report``) are redacted the same way.
- Integers: a ``step`` outside ``0..MAX_STEP`` (2**31 - 1) is that line's FC-STORE-008
  naming the value and the range (the event decoder refuses it); ``triage.steps`` and
  ``triage.repeats`` outside that range are ignored (the session keeps what its events say).
- Text: NUL and lone surrogates were already replaced by the record layer; every renderer
  escapes control characters and markup.

Memory: the reader keeps the failures and outcomes found (as the result does), never a line
after it is decoded.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final

import msgspec

from failcode.events import (
    DECISION_EVENTS,
    MAX_STEP,
    REMEDY_EVENT,
    Event,
    EventProblem,
    read_events,
    redact_event,
)
from failcode.record._outcomes import ENDED_KEY, SESSION_STATUSES, SessionEnded, SessionStarted
from failcode.triage._events import (
    SOURCES,
    VERDICTS,
    InputError,
    Recorded,
    RecordedOutcome,
    SessionEnd,
    SessionStart,
)
from failcode.triage.readers._text import epoch_time, first_line

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import BinaryIO

    from failcode import Failure, NonErrorOutcome
    from failcode.triage._events import Event as ReaderEvent

__all__ = ["TRIAGE_PREFIX", "FailcodeEventsReader", "sessions_from_events"]

TRIAGE_PREFIX: Final = "triage."
"""The prefix of the context keys in which ``failcode triage --store`` records what only
triage knows (``triage.path``, ``triage.format``, ``triage.evidence``, ``triage.repeats``,
``triage.masked``, ``triage.timestamp``, ``triage.actor``, the session's ``triage.steps`` and
``triage.ended``, and ``triage.ends`` on the failure that ended it)."""

_DECISIONS: Final = frozenset(DECISION_EVENTS.values())
_SOURCE_BY_AREA: Final = {"command": "command", "agent": "agent", "task": "agent",
                          "context": "agent", "provider": "provider", "llm": "provider",
                          "harness": "harness"}
_OUTCOME_SOURCES: Final = {"probe.no_match": "command", "action.rejected": "tool"}
_DECODE: Final = msgspec.json.Decoder(Event).decode


def _stamp(extra: dict[str, Any], ts: float) -> float | None:
    """The step's own time when triage recorded the event (None when its format had none:
    the event's ``ts`` is then when it was recorded), else the event's ``ts``."""
    if extra:
        return epoch_time(extra.get("timestamp"))
    return ts


def _source(event: Event, failure: Failure | None) -> str:
    if event.source in SOURCES:
        return event.source
    if failure is not None:
        if failure.code.startswith("FC-PROV-"):
            return "provider"
        if failure.code == "FC-SYS-003":
            return "harness"
    return _SOURCE_BY_AREA.get(event.event.split(".", 1)[0], "tool")


def _split_context(context: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the ``triage.*`` keys without their prefix, the rest of the context)."""
    extra: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for key, value in (context or {}).items():
        if key.startswith(TRIAGE_PREFIX):
            extra[key[len(TRIAGE_PREFIX):]] = value
        else:
            rest[key] = value
    return extra, rest


def _failure_evidence(failure: Failure, extra: dict[str, Any]) -> str:
    given = extra.get("evidence")
    if isinstance(given, str) and given:
        return given[:200]
    for mapping in (failure.params, failure.context):
        command = mapping.get("command") if isinstance(mapping, dict) else None
        if isinstance(command, str) and command.strip():
            return first_line(command, 200)
    return f"{failure.code}: {first_line(failure.message, 180)}"[:200]


def _outcome_evidence(outcome: NonErrorOutcome, extra: dict[str, Any]) -> str:
    given = extra.get("evidence")
    if isinstance(given, str) and given:
        return given[:200]
    for field in ("probe", "action", "reason", "peer"):
        value = getattr(outcome, field, None)
        if isinstance(value, str) and value:
            return first_line(value, 200)
    return str(outcome.__struct_config__.tag)


class _Session:
    """What one session's events said, in order."""

    __slots__ = ("ended", "ended_failure", "events", "format", "last_failure", "name", "path",
                 "reward", "steps", "verdict")

    def __init__(self, name: str | None, path: str | None) -> None:
        self.name = name
        self.path = path
        """The input triage read it from (events it recorded in a store), else None."""
        self.format: str | None = None
        self.events: list[ReaderEvent] = []
        self.steps = 0
        self.ended = "unknown"
        self.ended_failure: Failure | None = None
        self.last_failure: Failure | None = None
        self.verdict: str | None = None
        self.reward: float | None = None

    def add(self, event: Event) -> None:
        if event.step is not None:
            self.steps = max(self.steps, event.step + 1)
        stamp = event.ts.timestamp()
        failure = event.failure
        if failure is not None and event.event not in _DECISIONS \
                and event.event != REMEDY_EVENT:
            extra, context = _split_context(failure.context)
            if extra:
                failure = msgspec.structs.replace(failure, context=context)
                self._session_facts(extra)
                if extra.get("ends") is True:
                    self.ended_failure = failure
            elif event.event == "agent.failed" and failure.code == "FC-LIFE-009":
                self.ended, self.ended_failure = "limit", failure
            ended = context.get(ENDED_KEY)
            if ended in SESSION_STATUSES and ended != "unknown":  # a producer knew it ended it
                self.ended, self.ended_failure = str(ended), failure
            self.last_failure = failure
            repeats = extra.get("repeats")
            self.events.append(Recorded(
                event.step, _source(event, failure), _failure_evidence(failure, extra),
                failure, _stamp(extra, stamp),
                repeats if type(repeats) is int and 0 < repeats <= MAX_STEP else 1,
                masked=extra.get("masked") is True, actor=_actor(extra)))
        elif isinstance(event.outcome, SessionStarted | SessionEnded):
            # what an observer said of the whole session: never an outcome of a step
            if isinstance(event.outcome, SessionEnded) and event.outcome.status != "unknown":
                # an end on an error was the session's last failure's, when it has one
                self.ended = event.outcome.status
                self.ended_failure = (None if self.ended in ("submitted", "running")
                                      else self.last_failure)
        elif event.outcome is not None:
            outcome = event.outcome
            extra, context = _split_context(outcome.context)
            if extra:
                outcome = msgspec.structs.replace(outcome, context=context)
                self._session_facts(extra)
            source = event.source if event.source in SOURCES else _OUTCOME_SOURCES.get(
                event.event, "agent")
            self.events.append(RecordedOutcome(
                event.step, source or "agent", _outcome_evidence(outcome, extra), outcome,
                _stamp(extra, stamp), _actor(extra)))

    def _session_facts(self, extra: dict[str, Any]) -> None:
        steps = extra.get("steps")
        if type(steps) is int and self.steps < steps <= MAX_STEP + 1:
            self.steps = steps
        ended = extra.get("ended")
        if isinstance(ended, str) and ended != "unknown":
            self.ended = ended
        fmt = extra.get("format")
        if isinstance(fmt, str) and self.format is None:
            self.format = fmt
        verdict = extra.get("verdict")
        if verdict in VERDICTS:
            self.verdict = verdict
            reward = extra.get("reward")
            if isinstance(reward, int | float) and not isinstance(reward, bool) \
                    and math.isfinite(reward):
                self.reward = float(reward)

    def replay(self, default: str) -> Iterator[ReaderEvent]:
        yield SessionStart(self.name or default)
        yield from self.events
        yield SessionEnd(self.steps, self.ended, self.name or default,
                         failure=self.ended_failure, verdict=self.verdict, reward=self.reward)


def _actor(extra: dict[str, Any]) -> str | None:
    """``triage.actor``: the agent that took the step, when a string."""
    actor = extra.get("actor")
    return actor if isinstance(actor, str) and actor else None


def _input_path(event: Event) -> str | None:
    subject = event.failure if event.failure is not None else event.outcome
    path = subject.context.get(TRIAGE_PREFIX + "path") if subject is not None else None
    return path if isinstance(path, str) else None


def sessions_from_events(events: Iterable[Event], *, redacted: bool = False,
                         ) -> list[_Session]:
    """Group events into sessions (by session and, for events triage recorded, the input
    they came from), in the order each session first appears.

    Each event is redacted first (:func:`failcode.events.redact_event`) unless ``redacted``
    says the caller did; one whose secret redaction cannot rewrite is left out."""
    sessions: dict[tuple[str | None, str | None], _Session] = {}
    for given in events:
        if redacted:
            event = given
        else:
            try:
                event = redact_event(given)
            except ValueError:
                continue  # never shown unredacted
        key = (event.session, _input_path(event))
        session = sessions.get(key)
        if session is None:
            session = sessions[key] = _Session(*key)
        session.add(event)
    return list(sessions.values())


_BLANK: Final = b" \t\n\r\x0b\x0c"


def first_filled_line(data: bytes) -> bytes | None:
    """The first line of ``data`` that is not blank, with its line end: the first of
    ``data.splitlines(keepends=True)`` whose ``strip()`` is not empty (None if none is),
    found without splitting the rest (a head is 64 KiB of a file's lines)."""
    stripped = data.lstrip(_BLANK)
    if not stripped:
        return None
    at = len(data) - len(stripped)  # the first byte that is not white space
    start = max(data.rfind(b"\n", 0, at), data.rfind(b"\r", 0, at)) + 1
    ends = [end for end in (data.find(b"\n", at), data.find(b"\r", at)) if end >= 0]
    if not ends:
        return data[start:]
    end = min(ends)
    if data[end:end + 2] == b"\r\n":
        end += 1
    return data[start:end + 1]


class FailcodeEventsReader:
    """Reader for failcode's own JSONL events."""

    name = "failcode-events"

    def sniff(self, head: bytes) -> bool:
        """The first non-blank line decodes as a failcode Event."""
        line = first_filled_line(head.removeprefix(b"\xef\xbb\xbf"))
        if line is None:
            return False
        if not line.endswith((b"\n", b"\r")) and len(head) >= 64 * 1024:
            return False  # a first line longer than the head: not an event line
        try:
            _DECODE(line)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return False
        return True

    def read(self, stream: BinaryIO, label: str) -> Iterator[ReaderEvent]:
        """Decode every line, group the events by session, then replay each session."""
        problems: list[EventProblem] = []

        def events() -> Iterator[Event]:
            for item in read_events(stream, name=label, redacted=True):
                if isinstance(item, EventProblem):
                    problems.append(item)
                else:
                    yield item

        default = _stem(label)
        sessions = sessions_from_events(events(), redacted=True)
        named: dict[str | None, int] = {}
        for session in sessions:
            named[session.name] = named.get(session.name, 0) + 1
        for session in sessions:
            if session.path is not None and named[session.name] > 1:  # kept apart by input
                session.name = f"{session.name or default} ({session.path})"
            yield from session.replay(default)
        if problems:
            first = problems[0].failure()
            more = (f"; {len(problems)} bad lines in all, every other line was read."
                    if len(problems) > 1 else "; every other line was read.")
            raise InputError(first.code, problems[0].problem,
                             first.message.rstrip(".") + more)


def _stem(label: str) -> str:
    name = label.replace("\\", "/").rsplit("/", 1)[-1]
    for suffix in (".jsonl", ".ndjson", ".json", ".log"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name
