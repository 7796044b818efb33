"""The event record: one versioned msgspec Struct for every failure, outcome, decision and
remedy an agent meets, and the factories that build it redacted.

An :class:`Event` carries exactly one subject: a :class:`~failcode.Failure` (failure and
decision events), a typed non-error outcome (outcome events) or a remedy attempt (knowledge
events). Known event names fix which one; any other name of the form ``area.what`` may carry any
subject. Build events with :func:`failure_event`, :func:`outcome_event`, :func:`decision_event`
and :func:`remedy_event`: they fill the id and the time and redact every text before the event
can leave the process.

Rules (input from other programs):

- Text: lone surrogates and NUL in every string field (session, source, a decision's reason,
  a remedy, and everything the Failure or outcome holds) become U+FFFD when an event is built
  or decoded, as for every record (:mod:`failcode.record._frozen`).
- Integers are bounded at decoding: ``step`` lies in ``0..MAX_STEP`` (2**31 - 1), a
  decision's ``rule`` in ``0..MAX_STEP`` and its ``delay_s`` is finite and >= 0; anything else
  is a ``ValueError`` (a validation error when decoding) naming the field, the value and the
  range, which :func:`~failcode.events.read_events` reports as that line's FC-STORE-008.
- Redaction: an event decoded from a file another program wrote is not trusted to be
  redacted; :func:`redact_event` redacts it exactly as the factories do, and every reader
  that shows events (``failcode triage`` on a failcode-events file, ``failcode report``)
  applies it before anything reaches an output.
"""

from __future__ import annotations

import functools
import math
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

import msgspec

from failcode import (
    Action,
    Cancelled,
    EntityRef,
    Failure,
    NoMatch,
    NonErrorOutcome,
    Outcome,
    PeerExited,
    RejectedAction,
    Route,
    SessionEnded,
    SessionStarted,
    Veto,
    redact,
)
from failcode.events._ids import new_event_id
from failcode.record._frozen import is_clean, replace_surrogates

if TYPE_CHECKING:
    from collections.abc import Mapping

    from failcode import Decision

__all__ = [
    "DECISION_EVENTS",
    "EVENT_VERSION",
    "FAILURE_EVENTS",
    "MAX_STEP",
    "OUTCOME_EVENTS",
    "REMEDY_EVENT",
    "Event",
    "EventDecision",
    "RemedyAttempt",
    "decision_event",
    "event_json_schema",
    "failure_event",
    "outcome_event",
    "redact_event",
    "remedy_event",
    "ts_micros",
]

EVENT_VERSION: Final = 1
"""The event record version this failcode writes and reads."""

FAILURE_EVENTS: Final = frozenset({
    "tool.failed", "command.failed", "task.failed", "task.blocked", "agent.failed",
    "context.compaction.failed", "doctor.fix.failed",
})
"""The failure events: each carries a Failure (and the decision when there is one)."""

OUTCOME_EVENTS: Final[Mapping[type, str]] = {
    NoMatch: "probe.no_match",
    RejectedAction: "action.rejected",
    Veto: "task.vetoed",
    Cancelled: "task.cancelled",
    PeerExited: "peer.exited",
    SessionStarted: "session.started",
    SessionEnded: "session.ended",
}
"""The event name of each typed non-error outcome."""

DECISION_EVENTS: Final[Mapping[Action, str]] = {
    Action.RETRY: "retry.scheduled",
    Action.RETRY_AFTER_CHANGE: "retry.awaiting_change",
    Action.ESCALATE: "failure.escalated",
    Action.BLOCK: "failure.blocked",
    Action.ABORT: "failure.aborted",
    Action.SKIP: "failure.skipped",
    Action.CANCEL: "failure.cancelled",
}
"""The event name of a decision by its action; a decision event carries its Failure too."""

REMEDY_EVENT: Final = "remedy.applied"
"""A remedy was tried on a signature; the event says whether it worked."""

MAX_STEP: Final = 2**31 - 1
"""The largest step (and decision rule) an event holds: more steps than any session has, and
a step count (step + 1) fits every store's integer column."""

_NAME_RE: Final = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+")
_MAX_NAME: Final = 64
_MAX_TEXT: Final = 4000
_MAX_ID: Final = 200
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO: Final = timedelta(microseconds=1)
_OUTCOME_NAMES: Final = frozenset(OUTCOME_EVENTS.values())
_DECISION_NAMES: Final = frozenset(DECISION_EVENTS.values())


class EventDecision(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What :func:`failcode.decide` concluded about the event's failure (its wire form)."""

    action: Action
    route: Route
    outcome: Outcome
    reason: str
    delay_s: float = 0.0
    rule: int | None = None

    def __post_init__(self) -> None:
        if not is_clean(self.reason):
            msgspec.structs.force_setattr(self, "reason", replace_surrogates(self.reason))
        if not (type(self.delay_s) in (int, float) and math.isfinite(self.delay_s)
                and self.delay_s >= 0):
            msg = (f"EventDecision.delay_s={self.delay_s!r:.40}: expected a finite number of "
                   "seconds >= 0")
            raise ValueError(msg)
        if self.rule is not None and not (type(self.rule) is int and 0 <= self.rule <= MAX_STEP):
            msg = f"EventDecision.rule={_shown_int(self.rule)} is not in 0..{MAX_STEP}"
            raise ValueError(msg)


class RemedyAttempt(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A remedy tried on a signature, and whether the failure went away."""

    signature: str
    remedy: str
    worked: bool

    def __post_init__(self) -> None:
        _check_text("remedy.signature", self.signature, _MAX_ID)
        _check_text("remedy.remedy", self.remedy, _MAX_TEXT)
        for field in ("signature", "remedy"):
            value = getattr(self, field)
            if not is_clean(value):
                msgspec.structs.force_setattr(self, field, replace_surrogates(value))


def _check_text(field: str, value: object, limit: int) -> None:
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        shown = redact(repr(value)[:80]) if isinstance(value, str) else repr(value)[:80]
        msg = f"Event.{field}={shown}: expected a non-blank str of at most {limit} chars"
        raise ValueError(msg)


def _shown_int(value: object) -> str:
    """An integer as an error message quotes it: in full up to 20 digits, else its size (a
    huge one has no short decimal form, and ``repr`` refuses one over 4,300 digits)."""
    if type(value) is int and value.bit_length() > 64:
        return f"~10**{int(value.bit_length() * 0.30103)}"
    return repr(value)[:40]


class Event(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One event: a failure, an outcome, a decision or a remedy attempt, with when and where.

    Attributes:
        version: the record version (:data:`EVENT_VERSION`); another version is refused.
        event: the event name (``tool.failed``, ``task.vetoed``, ``retry.scheduled``...).
        event_id: a ULID: time-ordered, unique across machines; appends are idempotent by it.
        ts: when it happened, timezone-aware UTC.
        session: the agent session it belongs to.
        step: the step number within the session.
        source: who emitted it (``retry``, ``logging``, ``pipeline``, a host or tool name).
        failure: the Failure's canonical form (failure and decision events).
        outcome: the typed non-error outcome (outcome events).
        decision: the decision about ``failure``, when there is one.
        remedy: the remedy attempt (``remedy.applied``).
        evidence_refs: references to logs, artifacts, traces.

    Raises:
        ValueError: an unknown version, a naive or non-UTC ``ts``, a malformed name or id, or a
            subject that does not fit the name (a ``tool.failed`` without a failure...).
    """

    version: int
    event: str
    event_id: str
    ts: datetime
    session: str | None = None
    step: int | None = None
    source: str | None = None
    failure: Failure | None = None
    outcome: NonErrorOutcome | None = None
    decision: EventDecision | None = None
    remedy: RemedyAttempt | None = None
    evidence_refs: tuple[EntityRef, ...] = ()

    def __post_init__(self) -> None:
        # The fast path: a known name with the subject it requires, and plain valid fields.
        # Anything it does not accept goes through _validate, which says what is wrong.
        session = self.session
        source = self.source
        step = self.step
        event_id = self.event_id
        ts = self.ts
        if not (
            self.version == EVENT_VERSION
            and _SUBJECT_OK.get(self.event, _no_subject)(self)
            and type(event_id) is str and 0 < len(event_id) <= _MAX_ID
            and event_id.isprintable() and " " not in event_id
            and ts.tzinfo is UTC
            and (session is None or (type(session) is str and 0 < len(session) <= _MAX_ID
                                     and not session.isspace() and is_clean(session)))
            and (source is None or (type(source) is str and 0 < len(source) <= _MAX_ID
                                    and not source.isspace() and is_clean(source)))
            and (step is None or (type(step) is int and 0 <= step <= MAX_STEP))
        ):
            self._validate()

    def _validate(self) -> None:
        """Every check, each with a message naming the field, the value and the rule."""
        if self.version != EVENT_VERSION:
            msg = (f"Event.version={_shown_int(self.version)}: this failcode reads event version "
                   f"{EVENT_VERSION}")
            raise ValueError(msg)
        name = self.event
        if not (isinstance(name, str) and len(name) <= _MAX_NAME and _NAME_RE.fullmatch(name)):
            msg = f"Event.event={redact(repr(name)[:80])}: expected a name like tool.failed"
            raise ValueError(msg)
        event_id = self.event_id
        if not (isinstance(event_id, str) and 0 < len(event_id) <= _MAX_ID
                and event_id.isprintable() and " " not in event_id):
            msg = (f"Event.event_id={redact(repr(event_id)[:80])}: expected a printable id "
                   "without spaces")
            raise ValueError(msg)
        ts = self.ts
        if ts.tzinfo is None or ts.utcoffset() != timedelta(0):
            msg = f"Event.ts={ts.isoformat()}: expected a timezone-aware UTC time"
            raise ValueError(msg)
        for field, value in (("session", self.session), ("source", self.source)):
            if value is not None:
                _check_text(field, value, _MAX_ID)
                if not is_clean(value):
                    msgspec.structs.force_setattr(self, field, replace_surrogates(value))
        step = self.step
        if step is not None and not (type(step) is int and 0 <= step <= MAX_STEP):
            msg = f"Event.step={_shown_int(step)} is not in 0..{MAX_STEP}"
            raise ValueError(msg)
        _check_subject(self)

    @property
    def signature(self) -> str | None:
        """The signature the event is about: the failure's, or the remedy's."""
        if self.failure is not None:
            return self.failure.signature
        if self.remedy is not None:
            return self.remedy.signature
        return None

    def to_json(self) -> bytes:
        """The canonical JSON form (one JSONL line without its newline)."""
        return _ENCODER.encode(self)

    @classmethod
    def from_json(cls, data: bytes | str) -> Event:
        """Read one event.

        Raises:
            ValueError: not a valid event of this version; the message names the path.
        """
        try:
            return _DECODER.decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            msg = f"not a valid failcode event: {exc}"
            raise ValueError(msg) from None


def _check_subject(event: Event) -> None:
    name = event.event
    subjects = sum(x is not None for x in (event.failure, event.outcome, event.remedy))
    if subjects != 1:
        msg = (f"Event {name}: carries exactly one of failure, outcome, remedy "
               f"(got {subjects})")
        raise ValueError(msg)
    if event.decision is not None and event.failure is None:
        msg = f"Event {name}: a decision needs the failure it is about"
        raise ValueError(msg)
    if name in FAILURE_EVENTS or name in _DECISION_NAMES:
        if event.failure is None:
            msg = f"Event {name}: a {name} event carries a failure"
            raise ValueError(msg)
        if name in _DECISION_NAMES and (
                event.decision is None or DECISION_EVENTS[event.decision.action] != name):
            msg = f"Event {name}: a {name} event carries a decision of that action"
            raise ValueError(msg)
    elif name in _OUTCOME_NAMES:
        if event.outcome is None or OUTCOME_EVENTS[type(event.outcome)] != name:
            msg = f"Event {name}: a {name} event carries its outcome type"
            raise ValueError(msg)
    elif name == REMEDY_EVENT and event.remedy is None:
        msg = f"Event {name}: a {name} event carries a remedy"
        raise ValueError(msg)


def _no_subject(_event: Event) -> bool:
    return False


def _failure_subject(event: Event) -> bool:
    return (event.failure is not None and event.outcome is None and event.remedy is None)


def _outcome_subject(name: str) -> Any:
    def check(event: Event) -> bool:
        outcome = event.outcome
        return (outcome is not None and event.failure is None and event.remedy is None
                and event.decision is None and OUTCOME_EVENTS.get(type(outcome)) == name)
    return check


def _decision_subject(action: Action) -> Any:
    def check(event: Event) -> bool:
        decision = event.decision
        return (_failure_subject(event) and decision is not None
                and decision.action is action)
    return check


def _remedy_subject(event: Event) -> bool:
    return (event.remedy is not None and event.failure is None and event.outcome is None
            and event.decision is None)


_SUBJECT_OK: Final[Mapping[str, Any]] = {
    **dict.fromkeys(FAILURE_EVENTS, _failure_subject),
    **{name: _outcome_subject(name) for name in OUTCOME_EVENTS.values()},
    **{name: _decision_subject(action) for action, name in DECISION_EVENTS.items()},
    REMEDY_EVENT: _remedy_subject,
}
"""The known event names, each with a test of the fast path: it carries exactly the subject
its name requires (other names, and anything this refuses, take the full validation)."""

_ENCODER: Final = msgspec.json.Encoder(order="deterministic")
_DECODER: Final = msgspec.json.Decoder(Event)


def event_json_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of the event JSON form (one JSONL line)."""
    schema: dict[str, Any] = msgspec.json.schema(Event)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://failcode.dev/schema/event-v{EVENT_VERSION}.json"
    return schema


def ts_micros(ts: datetime) -> int:
    """Microseconds since the Unix epoch of an aware datetime (exact; no float rounding)."""
    return (ts - _EPOCH) // _MICRO


# ---------------------------------------------------------------------------------------------
# factories: every text redacted before the event exists


def _redact_tree(value: Any, text: Any = redact) -> Any:
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {key: _redact_tree(item, text) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_tree(item, text) for item in value]
    if isinstance(value, tuple):  # to_builtins keeps tuples (causes, refs) as they are
        return tuple(_redact_tree(item, text) for item in value)
    return value


_redact_repeated: Final = functools.lru_cache(maxsize=4096)(redact)
""":func:`failcode.redact`, remembering the texts events of one file repeat (a code's
message and remedy, a signature, a session): a file of many events pays for each text once."""


def _redacted_builtins(value: Any) -> Any:
    """``value`` (built-in types, as ``to_builtins`` gives) with every string redacted; the
    very same object when no string changed, so an event with nothing to redact costs one
    walk and no copy."""
    kind = type(value)
    if kind is str:
        return _redact_repeated(value)
    if kind is dict:
        copy: dict[str, Any] | None = None
        for key, item in value.items():
            kind = type(item)
            if kind is str:
                new = _redact_repeated(item)
            elif kind is dict or kind is list or kind is tuple:
                new = _redacted_builtins(item)
            else:
                continue
            if new is not item and new != item:
                if copy is None:
                    copy = dict(value)
                copy[key] = new
        return value if copy is None else copy
    if kind is list or kind is tuple:
        items = [_redacted_builtins(item) for item in value]
        if all(new is old or new == old for new, old in zip(items, value, strict=True)):
            return value
        return items
    return value


def _redacted(value: Any, cls: type[Any]) -> Any:
    """``value`` with every string redacted; the same object when nothing changed."""
    plain = msgspec.to_builtins(value)
    cleaned = _redact_tree(plain)
    if cleaned == plain:
        return value
    return msgspec.convert(cleaned, cls)


def _text(value: str | None) -> str | None:
    return None if value is None else redact(value)


def redact_event(event: Event) -> Event:
    """``event`` with every text redacted as the factories redact it (the same object when
    nothing needed it): for events another program wrote, read from a file or a store.

    Raises:
        ValueError: redaction changed a field the record checks against another (a secret in
            a failure's surface, class or location, which its signature repeats).
    """
    plain = msgspec.to_builtins(event)
    cleaned = _redacted_builtins(plain)
    if cleaned is plain:
        return event
    try:
        return msgspec.convert(cleaned, Event)
    except msgspec.ValidationError as exc:
        msg = f"a secret in a field redaction cannot rewrite: {exc}"
        raise ValueError(msg) from None


def _now() -> datetime:
    return datetime.now(UTC)


def _wire_decision(decision: Decision | EventDecision | None) -> EventDecision | None:
    if decision is None or isinstance(decision, EventDecision):
        return decision
    return EventDecision(action=decision.action, route=decision.route,
                         outcome=decision.outcome, reason=redact(decision.reason),
                         delay_s=decision.delay_s, rule=int(decision.rule))


def _context_str(context: Mapping[str, Any], key: str) -> str | None:
    value = context.get(key)
    return value if isinstance(value, str) and value.strip() else None


def _context_step(context: Mapping[str, Any]) -> int | None:
    value = context.get("step")
    return value if type(value) is int and value >= 0 else None


def _build(name: str, *, ts: datetime | None, event_id: str | None, session: str | None,
           step: int | None, source: str | None, evidence_refs: tuple[EntityRef, ...],
           **subject: Any) -> Event:
    when = _now() if ts is None else ts
    if when.tzinfo is not None and when.utcoffset() != timedelta(0):
        when = when.astimezone(UTC)
    if event_id is None:
        event_id = new_event_id(ts_micros(when) // 1000 if when.tzinfo is not None else None)
    refs = tuple(evidence_refs)
    if refs:
        refs = tuple(_redacted(ref, EntityRef) for ref in refs)
    return Event(version=EVENT_VERSION, event=name, event_id=event_id, ts=when,
                 session=_text(session), step=step, source=_text(source),
                 evidence_refs=refs, **subject)


def failure_event(
    failure: Failure,
    *,
    event: str,
    session: str | None = None,
    step: int | None = None,
    source: str | None = None,
    decision: Decision | EventDecision | None = None,
    evidence_refs: tuple[EntityRef, ...] | None = None,
    ts: datetime | None = None,
    event_id: str | None = None,
) -> Event:
    """A failure event (``tool.failed``, ``command.failed``, ``task.failed``...), redacted.

    Args:
        failure: the failure; its texts, context and metadata are redacted once more.
        event: the event name, e.g. ``tool.failed`` (see :data:`FAILURE_EVENTS`).
        session: default: the failure's ``context["session"]``.
        step: default: the failure's ``context["step"]`` when it is an integer.
        source: who emits it.
        decision: the decision made about the failure, when there is one.
        evidence_refs: default: the failure's own evidence refs.
        ts: when (aware; default now, UTC).
        event_id: default: a new ULID.

    Raises:
        ValueError: the name does not fit a failure event, or a field is invalid.
    """
    context = failure.context
    return _build(
        event, ts=ts, event_id=event_id,
        session=session if session is not None else _context_str(context, "session"),
        step=step if step is not None else _context_step(context), source=source,
        evidence_refs=failure.evidence_refs if evidence_refs is None else evidence_refs,
        failure=_redacted(failure, Failure), decision=_wire_decision(decision))


def decision_event(
    failure: Failure,
    decision: Decision | EventDecision,
    *,
    event: str | None = None,
    session: str | None = None,
    step: int | None = None,
    source: str | None = None,
    evidence_refs: tuple[EntityRef, ...] | None = None,
    ts: datetime | None = None,
    event_id: str | None = None,
) -> Event:
    """A decision event (``retry.scheduled``, ``failure.escalated``, ``failure.blocked``...).

    The name defaults to the one of the decision's action (:data:`DECISION_EVENTS`); the
    failure it is about travels with it. Other arguments as for :func:`failure_event`.
    """
    wire = _wire_decision(decision)
    assert wire is not None
    return failure_event(failure, event=event or DECISION_EVENTS[wire.action], session=session,
                         step=step, source=source, decision=wire, evidence_refs=evidence_refs,
                         ts=ts, event_id=event_id)


def outcome_event(
    outcome: NonErrorOutcome,
    *,
    event: str | None = None,
    session: str | None = None,
    step: int | None = None,
    source: str | None = None,
    evidence_refs: tuple[EntityRef, ...] = (),
    ts: datetime | None = None,
    event_id: str | None = None,
) -> Event:
    """An outcome event (a no-match probe, a rejected action, a veto, a cancellation...).

    The name defaults to the outcome type's (:data:`OUTCOME_EVENTS`); session and step default
    to the outcome's context. Other arguments as for :func:`failure_event`.
    """
    context = outcome.context
    return _build(
        event or OUTCOME_EVENTS[type(outcome)], ts=ts, event_id=event_id,
        session=session if session is not None else _context_str(context, "session"),
        step=step if step is not None else _context_step(context), source=source,
        evidence_refs=evidence_refs,
        outcome=_redacted(outcome, NonErrorOutcome))  # type: ignore[arg-type]


def remedy_event(
    signature: str,
    remedy: str,
    *,
    worked: bool,
    session: str | None = None,
    step: int | None = None,
    source: str | None = None,
    ts: datetime | None = None,
    event_id: str | None = None,
) -> Event:
    """A ``remedy.applied`` event: ``remedy`` was tried on ``signature`` and ``worked`` or not.

    The store keeps these as debug knowledge: a remedy that worked often enough is promoted to
    the signature's known remedy; one that then keeps failing is demoted.
    """
    return _build(REMEDY_EVENT, ts=ts, event_id=event_id, session=session, step=step,
                  source=source, evidence_refs=(),
                  remedy=RemedyAttempt(signature=signature, remedy=redact(remedy),
                                       worked=worked))
