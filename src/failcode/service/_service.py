"""The service's work, without HTTP: keys checked, batches stored, findings kept, alerts sent.

:class:`Service` is what ``failcode serve`` runs behind its routes (:mod:`._app`) and what the
CLI and the tests call directly. Every method either returns or raises a
:class:`~failcode.FailureError` whose code the boundary turns into the HTTP status.

Rules:

- **Access.** A request carries a key (``Authorization: Bearer <key>`` or
  ``X-Failcode-Key: <key>``). None, malformed, unknown or revoked: FC-SVC-001 (401). A key whose
  scope does not cover the route, or a request naming another project (``?project=``):
  FC-SVC-002 (403). Nothing is read or written before the key is accepted. A checked key is
  cached for ``key_cache_s`` by its digest (never by its text).
- **Rate.** Each key may make ``rate_per_minute`` requests per minute (a fixed one-minute
  window); beyond it FC-SVC-005 (429) with ``Retry-After`` the seconds left in the window. The
  count is the control store's (:class:`~failcode.service._shared.RateCounter`): every worker
  and replica of the service counts against the same limit.
- **Revocation.** A revoked key is refused by every worker and replica at most
  ``key_cache_s`` after it was revoked (each process trusts a checked key that long); a
  dashboard session checks its key in the control store at every request.
- **Ingest.** A batch is stored in one transaction with its findings; idempotent by event id
  (a retried batch stores nothing twice and its answer says so: ``new`` and ``duplicates``).
  Events from a failcode-events body are validated and redacted exactly as
  :func:`failcode.events.read_events` with ``redacted=True`` does; a bad line is a problem of
  the answer, every good line is stored. A body with no valid event at all is FC-DATA-001
  (400). After the batch is stored, its alerts are handed to the alerter, which never
  delays the answer.
- **Event times.** A door keeps an event's time when it lies in the window from
  :data:`OLDEST_TS` (2000-01-01T00:00:00Z) to :data:`AHEAD` (one hour) after the request
  arrived. A time outside it (a skewed clock, a forged or corrupt time) is clamped to the
  window's nearer edge, and the time the event named is kept in its failure's (or outcome's)
  context as ``ts.original`` (ISO 8601): the event is stored and counted, but no time can sit
  in the dashboard's future or before any agent existed (:func:`bounded_time`). Both doors
  (failcode events and OTLP) apply the same rule.
- **Retention.** Every ``prune_interval_s`` each project's events older than its retention are
  deleted (:meth:`failcode.store.Store.prune`): counts, findings and knowledge stay. Of the
  service's processes, only the holder of the ``retention`` lease prunes
  (:class:`~failcode.service._shared.Lease`, held for twice the interval, at least
  :data:`LEASE_FLOOR_S`, and renewed before each project): one run at a time; when the holder
  dies, another takes over once its lease has expired; one that stops cleanly gives it up.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import socket
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, Literal

import msgspec

from failcode import FC, FailureError, FrozenDict
from failcode.events import Event, EventProblem, read_events
from failcode.service._control import SCOPES, Control, Key, Project, Scope, digest
from failcode.service._findings import Findings
from failcode.service._projects import ProjectStores
from failcode.service._shared import Lease, RateCounter, Sessions, SignInFailures
from failcode.store import open_store

if TYPE_CHECKING:
    from collections.abc import Sequence

    from failcode.service._alerts import Alerter, BatchFacts
    from failcode.service._config import ServiceConfig
    from failcode.service._findings import Change
    from failcode.store import Store

__all__ = ["AHEAD", "LEASE_FLOOR_S", "OLDEST_TS", "IngestResult", "Service", "bounded_time"]

OLDEST_TS: Final = datetime(2000, 1, 1, tzinfo=UTC)
"""The earliest event time a door keeps: no agent reported anything before it."""
AHEAD: Final = timedelta(hours=1)
"""How far after a request's arrival an event's time may lie (clocks drift, a little)."""
LEASE_FLOOR_S: Final = 2.0
"""The shortest time the retention lease is held for (a holder that died frees it after)."""

_COVERS: Final[dict[Scope, frozenset[str]]] = {
    "ingest": frozenset({"ingest", "classify"}),
    "read": frozenset({"read", "classify"}),
    "admin": frozenset({"ingest", "read", "admin", "classify"}),
}
"""What each scope may do: ingest (the doors), read (every GET), admin (changes)."""
_NEEDS: Final = {"ingest": "ingest", "read": "read", "admin": "admin", "classify": "ingest, "
                 "read or admin"}


class IngestResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a door did with a request."""

    received: int
    """Events in the request (for OTLP: log records and spans read)."""
    new: int
    """Events stored for the first time."""
    duplicates: int
    """Events the store already had (a retried batch)."""
    rejected: int
    """Lines that were not valid events (failcode events) or items mapped to nothing (OTLP)."""
    problems: tuple[dict[str, Any], ...] = ()
    """The first 20 problems, each a failcode Failure's JSON form (which line, what is wrong)."""


def _unauthenticated(path: str, problem: str) -> FailureError:
    return FailureError(FC.SVC_UNAUTHENTICATED.failure(surface="service.auth", params={
        "path": path, "problem": problem}))


class Service:
    """One running service: the control store, the projects' stores, alerts and retention."""

    def __init__(self, config: ServiceConfig, *, alerter: Alerter | None = None) -> None:
        self.config = config
        self.control_store: Store = open_store(config.store_url,
                                               timeout_s=config.store_timeout_s)
        try:
            self.control = Control(self.control_store)
            self.stores = ProjectStores(self.control_store, config.store_url,
                                        timeout_s=config.store_timeout_s)
        except BaseException:
            self.control_store.close()
            raise
        self._alerter = alerter
        self._keys: dict[str, tuple[Key, float]] = {}
        self.worker = secrets.token_hex(4)
        """This process's id among the service's workers and replicas (``X-Failcode-Worker``)."""
        self._rates = RateCounter(self.control_store)
        self.sessions = Sessions(self.control_store, config.dashboard_sessions)
        self.signins = SignInFailures(self.control_store, config.signin_failures_per_minute)
        self.retention = Lease(self.control_store, "retention",
                               f"{socket.gethostname()[:60]} {os.getpid()} {self.worker}")
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._pruner: threading.Thread | None = None
        self.pruned = 0

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Start the retention schedule (when ``prune_interval_s`` > 0)."""
        if self.config.prune_interval_s > 0 and self._pruner is None:
            self._pruner = threading.Thread(target=self._prune_loop, name="failcode-retention",
                                            daemon=True)
            self._pruner.start()

    def close(self) -> None:
        """Stop the schedule and the alerter, close every store."""
        self._stop.set()
        if self._pruner is not None:
            self._pruner.join(timeout=5)
            with contextlib.suppress(FailureError):  # the store is down: the lease expires
                self.retention.release()
        if self._alerter is not None:
            self._alerter.close()
        self.stores.close()
        self.control_store.close()

    @property
    def alerter(self) -> Alerter:
        """The webhook alerter (made on first use)."""
        if self._alerter is None:
            from failcode.service._alerts import Alerter  # noqa: PLC0415 - made on first use
            from failcode.service._shared import SharedAlertState  # noqa: PLC0415

            self._alerter = Alerter(base_url=self.config.public_url,
                                    state=SharedAlertState(self.control_store))
        return self._alerter

    def ready(self) -> None:
        """Raise the store's failure when the control store's tables cannot be read (a bare
        ``SELECT 1`` would pass on a SQLite file that no longer holds a failcode store)."""
        self.control_store.fetch("SELECT 1 FROM svc_projects LIMIT 1")

    # -- access ----------------------------------------------------------------------------
    def authenticate(self, presented: str | None, *, path: str) -> Key:
        """The key of a request (see the module's access rule).

        Raises:
            FailureError: FC-SVC-001 without a valid key.
        """
        if not presented:
            raise _unauthenticated(path, "no Authorization: Bearer header and no "
                                         "X-Failcode-Key header")
        text = presented.strip()
        if text[:7].lower() == "bearer ":
            text = text[7:].strip()
        stamp = digest(text)
        now = time.monotonic()
        with self._lock:
            cached = self._keys.get(stamp)
        if cached is not None and cached[1] > now:
            return cached[0]
        key = self.control.authenticate(text)
        if key is None:
            raise _unauthenticated(path, "the key is not one this service issued, or it was "
                                         "revoked")
        with self._lock:
            if len(self._keys) > 10_000:
                self._keys.clear()
            self._keys[stamp] = (key, now + self.config.key_cache_s)
        return key

    def authorize(self, key: Key, needs: Literal["ingest", "read", "admin", "classify"], *,
                  route: str, project: str | None = None) -> str:
        """The project a request acts on (see the module's access rule).

        Raises:
            FailureError: FC-SVC-002 for the wrong scope or project, FC-SVC-005 over the rate.
        """
        if needs not in _COVERS[key.scope]:
            raise FailureError(FC.SVC_FORBIDDEN.failure(surface="service.auth", params={
                "problem": f"{route} needs the {_NEEDS[needs]} scope; this key has "
                           f"{key.scope}"}))
        if project is not None and project != key.project:
            raise FailureError(FC.SVC_FORBIDDEN.failure(surface="service.auth", params={
                "problem": f"this key belongs to the project {key.project}, not "
                           f"{project[:60]}"}))
        self._count_request(key)
        return key.project

    def _count_request(self, key: Key) -> None:
        limit = self.config.rate_per_minute
        now = time.time()
        minute = int(now // 60)
        used = self._rates.add(key.key_id, minute)
        if used > limit:
            retry = max(1, int((minute + 1) * 60 - now) + 1)
            failure = FC.SVC_RATE_LIMITED.failure(surface="service.rate", params={
                "limit": limit, "window_s": 60, "retry_after_s": retry})
            error = FailureError(failure)
            error.retry_after_s = retry  # type: ignore[attr-defined]
            raise error

    # -- projects --------------------------------------------------------------------------
    def project(self, name: str) -> Project:
        """The project ``name`` (FC-SVC-003 when it does not exist)."""
        return self.control.require_project(name)

    def findings(self, project: str) -> Findings:
        """The findings of a project."""
        return Findings(self.stores.get(project))

    def store(self, project: str) -> Store:
        """The event store of a project."""
        return self.stores.get(project)

    # -- ingest ----------------------------------------------------------------------------
    def ingest_events(self, project: str, body: bytes) -> IngestResult:
        """Store a failcode-events body: a JSON array of events or JSONL (see the module)."""
        arrived = datetime.now(UTC)
        lines = _event_lines(body)
        events: list[Event] = []
        problems: list[EventProblem] = []
        for item in read_events(io.BytesIO(lines), name="request body", redacted=True):
            if isinstance(item, EventProblem):
                problems.append(item)
            else:
                events.append(bounded_time(item, arrived))
            if len(events) + len(problems) > self.config.max_batch_events:
                raise _too_many(self.config.max_batch_events)
        if not events:
            first = problems[0].failure().message if problems else "the body holds no event"
            raise FailureError(FC.DATA_INVALID_INPUT.failure(
                surface="service.events", error_class="validation", params={
                    "problem": f"no valid failcode event in the body ({first})"}))
        new = self.store_batch(project, events)
        return IngestResult(received=len(events) + len(problems), new=new,
                            duplicates=len(events) - new, rejected=len(problems),
                            problems=tuple(p.failure().to_dict() for p in problems[:20]))

    def ingest_otlp(self, project: str, signal: Literal["logs", "traces"], body: bytes,
                    content_type: str) -> IngestResult:
        """Store what an OTLP/HTTP request maps to (:mod:`failcode.service._otlp`)."""
        from failcode.service._otlp import parse_otlp  # noqa: PLC0415 - the OTLP door only

        arrived = datetime.now(UTC)
        batch = parse_otlp(signal, body, content_type=content_type)
        if batch.items > self.config.max_batch_events:
            raise _too_many(self.config.max_batch_events)
        events = [bounded_time(event, arrived) for event in batch.events]
        if batch.tool_calls:  # the hooks report these sessions' tool calls: theirs are kept
            hooked = hooked_sessions(self.store(project), {
                e.session for e in events if e.event_id in batch.tool_calls and e.session})
            events = [e for e in events
                      if e.session not in hooked or e.event_id not in batch.tool_calls]
        new = self.store_batch(project, events) if events else 0
        return IngestResult(received=batch.items, new=new,
                            duplicates=len(batch.events) - new, rejected=batch.ignored)

    def store_batch(self, project: str, events: Sequence[Event]) -> int:
        """Store events in a project with their findings, then hand the alerts over."""
        findings = self.findings(project)
        new, changes = findings.append(events)
        if changes:
            self._alert(project, findings, changes)
        return new

    def _alert(self, project: str, findings: Findings, changes: list[Change]) -> None:
        webhooks = self.webhooks(project)
        if not webhooks:
            return
        facts = _facts(project, findings, changes)
        self.alerter.submit(webhooks, facts)

    # -- webhooks --------------------------------------------------------------------------
    def webhooks(self, project: str) -> list[Any]:
        """The webhooks of a project."""
        from failcode.service._hooks import webhooks  # noqa: PLC0415 - small, on first use

        return webhooks(self.control_store, project)

    # -- retention -------------------------------------------------------------------------
    def prune(self, *, now_us: int | None = None, lease: Lease | None = None,
              ttl_s: float = LEASE_FLOOR_S) -> dict[str, int]:
        """Delete each project's events older than its retention; (project -> deleted).

        With ``lease``, it is renewed for ``ttl_s`` before each project and the run stops
        when this process no longer holds it."""
        deleted: dict[str, int] = {}
        for project in self.control.projects():
            if lease is not None and not lease.take(ttl_s):
                break
            store = self.stores.get(project.name)
            deleted[project.name] = store.prune(project.retention_days * 86_400, now_us=now_us)
        self.pruned += sum(deleted.values())
        return deleted

    def _prune_loop(self) -> None:
        interval = self.config.prune_interval_s
        ttl = max(2 * interval, LEASE_FLOOR_S)
        while not self._stop.wait(interval):
            try:
                if not self.retention.take(ttl):
                    continue  # another process holds it: that one prunes
                self.prune(lease=self.retention, ttl_s=ttl)
                self.retention.ran()
            except FailureError:  # the store is down: the next round tries again
                continue


def hooked_sessions(store: Store, sessions: set[str]) -> set[str]:
    """The sessions among ``sessions`` whose agent's hooks report their tool calls: those with
    a ``session.started`` event a hook sent saying ``calls: hooks`` (posted before the
    session's first call, so before the agent's own export of any of its calls arrives)."""
    if not sessions:
        return set()
    names = sorted(sessions)
    found: set[str] = set()
    for start in range(0, len(names), 500):
        chunk = names[start:start + 500]
        rows = store.fetch(
            f"SELECT session, source, body FROM events WHERE session IN "
            f"({', '.join('?' * len(chunk))}) AND event = 'session.started'", tuple(chunk))
        for session, source, body in rows:
            if not str(source or "").endswith(" hook"):
                continue
            outcome = Event.from_json(body).outcome
            if outcome is not None and outcome.context.get("calls") == "hooks":
                found.add(str(session))
    return found


def bounded_time(event: Event, arrived: datetime) -> Event:
    """``event`` with its time in the door's window (see the module's event-times rule).

    Inside ``[OLDEST_TS, arrived + AHEAD]`` the event is returned as it is. Outside, its time
    becomes the nearer edge, and its failure's context (else its outcome's) gains
    ``ts.original``, the time it named; an event with neither (a remedy event) is clamped
    without it.
    """
    ts = event.ts
    latest = arrived + AHEAD
    if OLDEST_TS <= ts <= latest:
        return event
    original = {"ts.original": ts.isoformat()}
    failure, outcome = event.failure, event.outcome
    if failure is not None:
        failure = msgspec.structs.replace(
            failure, context=FrozenDict({**failure.context, **original}))
    elif outcome is not None and isinstance(getattr(outcome, "context", None), FrozenDict):
        outcome = msgspec.structs.replace(
            outcome, context=FrozenDict({**outcome.context, **original}))
    return msgspec.structs.replace(event, ts=OLDEST_TS if ts < OLDEST_TS else latest,
                                   failure=failure, outcome=outcome)


def _too_many(limit: int) -> FailureError:
    return FailureError(FC.SVC_TOO_LARGE.failure(surface="service.ingest", params={
        "problem": f"the request holds more than {limit} events; send at most {limit} per "
                   "request"}))


def _event_lines(body: bytes) -> bytes:
    """A JSON array of events as JSONL (one compact line each); JSONL as it is."""
    start = body.lstrip()[:1]
    if start != b"[":
        return body if body.endswith(b"\n") else body + b"\n"  # a request is whole
    try:
        items = msgspec.json.decode(body, type=list[msgspec.Raw])
    except msgspec.DecodeError as exc:
        lines = _array_lines(body)
        if lines is None:
            raise FailureError(FC.DATA_INVALID_INPUT.failure(
                surface="service.events", error_class="malformed_json", params={
                    "problem": f"the body is not a JSON array of events ({exc})"})) from None
        return lines
    return b"\n".join(msgspec.json.format(bytes(item), indent=-1) for item in items)


def _array_lines(body: bytes) -> bytes | None:
    """A JSON array msgspec refuses only for an escape it will not decode (a lone surrogate
    such as ``"\\ud800"``: valid JSON text, not valid Unicode), as JSONL lines, each item
    re-encoded with its escapes kept, so that item alone is refused as its JSONL line would
    be; ``None`` when the body is not a JSON array at all."""
    try:
        items = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(items, list):
        return None
    try:
        return b"\n".join(json.dumps(item, allow_nan=False).encode() for item in items)
    except (ValueError, RecursionError):  # NaN or Infinity: not JSON; the strict reading
        return None


def _facts(project: str, findings: Findings, changes: list[Change]) -> BatchFacts:
    from failcode.service._alerts import BatchFacts, FindingFact  # noqa: PLC0415

    by_id = {}
    for change in changes:
        finding = findings.get(change.finding_id)
        by_id[change.finding_id] = FindingFact(
            project=project, finding_id=finding.id, signature=finding.signature,
            code=finding.code, category=finding.category, message=finding.message,
            remedy=_remedy_of(finding.code), count=finding.count, sessions=finding.sessions,
            first_us=int(finding.first_seen.timestamp() * 1_000_000),
            last_us=int(finding.last_seen.timestamp() * 1_000_000), version=change.version)
    return BatchFacts(
        project=project, now_us=time.time_ns() // 1000,
        new_findings=tuple(by_id[c.finding_id] for c in changes if c.created),
        regressions=tuple(by_id[c.finding_id] for c in changes if c.regressed),
        counts=tuple((by_id[c.finding_id], c.added) for c in changes))


def _remedy_of(code: str) -> str | None:
    from failcode import lookup  # noqa: PLC0415

    try:
        spec = lookup(code)
    except Exception:  # noqa: BLE001 - an unknown or foreign code has no catalog remedy
        return None
    remedy = getattr(spec, "remedy", None)
    return remedy if isinstance(remedy, str) else None


assert set(_COVERS) == set(SCOPES)
