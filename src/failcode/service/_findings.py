"""Findings: one per signature of a store, with a lifecycle, kept in the store's transaction.

A finding is what the triage report calls one: every failure with one signature. Its counts,
sessions, first and last seen and last message are the store's own ``signatures`` row; this
module adds what the store does not know, in tables of the same database, written in the
transaction that stores the events (:meth:`failcode.store.Store.append` with ``after``), so a
retried batch changes nothing twice and a batch that fails changes nothing:

==========================  ====================================================================
table                       one row per
==========================  ====================================================================
svc_findings                signature: its id (a number, per store), status, since when, the
                            version it was resolved in and when, how often it regressed
svc_finding_days            (signature, UTC day): failures that day
svc_finding_versions        (signature, agent, agent version, model): failures, first/last seen
svc_session_ends            (session, input): how it ended (the ``triage.ended`` or
                            ``session.ended`` of its latest event that says) and when
svc_session_agents          (session, input): the agent, its version and the model its events
                            name (the latest of each that one names)
==========================  ====================================================================

Lifecycle (:func:`after_failure` is the rule, a pure function):

- A signature's first failure makes its finding, status ``open``. An open finding reads as
  ``new`` while its first failure is less than :data:`NEW_FOR_S` (7 days) old, then
  ``ongoing``.
- ``resolve`` (optionally *in version V*) sets ``resolved``. A later failure (its time after
  the resolution) reopens it as ``regressed`` when the finding was resolved without a version,
  or when the failure's agent version is known and at least V. A failure from an older version,
  or from an unknown version after a resolution in a version, leaves it resolved: an event from
  an old build does not reopen what a newer build fixed.
- ``ignore`` sets ``ignored``: failures still count, nothing reopens it; ``reopen`` sets
  ``open`` again (and forgets the version).
- Versions compare by their numbers (:func:`version_key`): ``1.10.0 > 1.9.2``; a pre-release
  (``1.4.0rc1``, ``1.4.0-beta.2``, ``dev``) sorts before its release; a version with no
  number compares as text after every numbered one.

Did the fix work (:func:`fix_effect`, a pure function; :meth:`Findings.detail` counts): a
finding resolved (or reopened) since a resolution is compared before and after it, by the rules
of ``failcode triage --changed-at`` (:mod:`failcode.triage.analysis._compare`): per side, the
sessions, how many of them the finding hit (``session_signatures``) and that per 100 sessions;
the status ``gone`` (sessions after, none hit), ``up``, ``down`` or ``same`` (the shares of
sessions hit), ``unknown`` when a side has no session; *significant* by the same
two-proportion test (:func:`~failcode.triage._versions.significant`, 1.96 standard errors),
else too few sessions to tell.

- **Resolved in a version V** (status ``resolved``, or ``regressed`` since): the sessions of
  an agent whose version is known (``svc_session_agents``), before V (:func:`version_key`) and
  from V on; a session of an unknown version counts on neither side. The agents are those the
  finding's failures name (``svc_finding_versions``); of them, the ones with a session of
  version V when any has one (a version number belongs to one agent's numbering), else all of
  them (V not seen yet: each says how many sessions it has since). One comparison per agent; an
  agent with no session of a known version, or a finding whose failures name no agent, has
  none.
- **Resolved without a version** (status ``resolved``, or ``regressed`` since): every session
  of the store, split at the resolution (``svc_findings.resolved_us``, kept when a failure
  reopens the finding) by when it started (its first event, ``sessions.first_us``), as the CLI
  splits at ``--changed-at``. A finding resolved before the store kept that time (findings
  schema 3) and reopened since has no comparison.

A learned suggestion (issue 39): for a finding the rules left unknown (its latest stored
record is ``unknown_error``, or a ``command_error`` of class ``unknown``:
:func:`failcode.learned.wants_suggestion`), the detail carries ``suggested``: what the learned
model suggests for that latest record (:func:`failcode.triage._findings.record_suggestion`:
the command triage recorded as its evidence, the exit status and the output the record keeps),
and ``suggested_remedies``: **the store's known remedies for the nearest stored
signatures**, by this rule: the store's other signatures whose kind and class are the
suggestion's, or one of its nearest examples' (a class ``unknown`` is never matched: it says
nothing failed alike), that carry a remedy: remedies reported as tried on them
(``failcode store remedy``, the ``remedies`` table, best first) or their latest record's own
``remedy``. In order: the suggestion's own kind and class first, then each nearest example's,
most failures first within each; at most :data:`SUGGESTED_REMEDIES`. Each says its finding's
id and status (``resolved`` in a version: a fix that was made). A suggestion never changes
the finding, its code or its status.

Who produced a failure: the failure's (or outcome's) context keys ``agent``, ``agent_version``
and ``model``; failures that triage recorded (``failcode triage --store``/``--report-to``)
carry ``triage.format``, ``triage.agent_version`` and ``triage.model`` instead, read the same
way. A failure that names its agent but no version (an agent hook's) takes its session's,
when an earlier event of the session (its export's) named one for that agent.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, Literal

import msgspec

from failcode import FC, FailureError, SessionEnded
from failcode.events._event import ts_micros
from failcode.record._outcomes import ENDED_KEY
from failcode.triage._versions import significant, version_key
from failcode.triage._window import shown

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from failcode import Failure
    from failcode.events import Event
    from failcode.learned import Suggestion
    from failcode.store import Store
    from failcode.store._ingest import Tx

__all__ = [
    "NEW_FOR_S",
    "STATUSES",
    "EFFECT_STATUSES",
    "SUGGESTED_REMEDIES",
    "Change",
    "Effect",
    "EffectSide",
    "Finding",
    "FindingDetail",
    "Findings",
    "after_failure",
    "ensure_tables",
    "effect_agents",
    "event_attributes",
    "fix_effect",
    "split_at_version",
    "version_key",
]

NEW_FOR_S: Final = 7 * 86_400
"""How long an open finding reads as ``new`` after its first failure."""
STATUSES: Final = ("new", "ongoing", "resolved", "regressed", "ignored")
EFFECT_STATUSES: Final = ("gone", "down", "same", "up", "unknown")
"""What a fix did to a finding's share of sessions hit (see the module)."""
Status = Literal["open", "resolved", "regressed", "ignored"]
DAY_US: Final = 86_400_000_000
_SCHEMA_KEY: Final = "service_findings_schema"
_MAX_ATTR: Final = 120
SUGGESTED_REMEDIES: Final = 5
"""The most stored signatures a finding's ``suggested_remedies`` lists."""

_DDL: Final = (
    ("CREATE TABLE IF NOT EXISTS svc_findings (signature TEXT PRIMARY KEY, id BIGINT NOT NULL "
    "UNIQUE, status TEXT NOT NULL, status_us BIGINT NOT NULL, resolved_in TEXT, regressions "
    "BIGINT NOT NULL, first_us BIGINT NOT NULL, last_us BIGINT NOT NULL, count BIGINT NOT NULL,"
    " last_version TEXT)"),
    "CREATE INDEX IF NOT EXISTS svc_findings_last ON svc_findings (last_us)",
    ("CREATE TABLE IF NOT EXISTS svc_finding_days (signature TEXT NOT NULL, day BIGINT NOT NULL,"
    " count BIGINT NOT NULL, PRIMARY KEY (signature, day))"),
    ("CREATE TABLE IF NOT EXISTS svc_finding_versions (signature TEXT NOT NULL, agent TEXT NOT "
    "NULL, version TEXT NOT NULL, model TEXT NOT NULL, count BIGINT NOT NULL, first_us BIGINT "
    "NOT NULL, last_us BIGINT NOT NULL, PRIMARY KEY (signature, agent, version, model))"),
    "CREATE TABLE IF NOT EXISTS svc_counters (name TEXT PRIMARY KEY, value BIGINT NOT NULL)",
)
_DDL_2: Final = (
    ("CREATE TABLE IF NOT EXISTS svc_session_ends (session TEXT NOT NULL, input TEXT NOT NULL,"
     " ended TEXT NOT NULL, last_us BIGINT NOT NULL, PRIMARY KEY (session, input))"),
)
"""Version 2: how each session ended, for the dashboard's counts per status and day."""
_DDL_3: Final = (
    ("CREATE TABLE IF NOT EXISTS svc_session_agents (session TEXT NOT NULL, input TEXT NOT "
     "NULL, agent TEXT NOT NULL, version TEXT NOT NULL, model TEXT NOT NULL, last_us BIGINT NOT "
     "NULL, PRIMARY KEY (session, input))"),
)
"""Version 3: which agent (and version, model) each session is, for the sessions pages."""
_DDL_4: Final = (
    "ALTER TABLE svc_findings ADD COLUMN resolved_us BIGINT",
    "UPDATE svc_findings SET resolved_us = status_us WHERE status = 'resolved'",
)
"""Version 4: when a finding was resolved, kept when a later failure reopens it (the status's
time then moves), for whether the fix worked."""
_UPGRADES: Final = {"1": (*_DDL_2, *_DDL_3, *_DDL_4), "2": (*_DDL_3, *_DDL_4), "3": _DDL_4}
_SCHEMA_VERSION: Final = "4"


def ensure_tables(store: Store) -> None:
    """Make the findings tables in ``store`` when missing, and findings for every signature
    the store already holds (a store triage filled before the service read it)."""
    with store.transaction() as tx:
        store.backend.lock_schema(tx)  # workers and replicas opening it at once: one makes it
        known = tx.run("SELECT value FROM meta WHERE key = ?", (_SCHEMA_KEY,))
        if known and known[0][0] == _SCHEMA_VERSION:
            return
        if known:  # an older version: add what it lacks (from now on; older sessions: unknown)
            for statement in _UPGRADES.get(str(known[0][0]), ()):
                tx.run(statement)
            tx.run("UPDATE meta SET value = ? WHERE key = ?", (_SCHEMA_VERSION, _SCHEMA_KEY))
            return
        for statement in (*_DDL, *_DDL_2, *_DDL_3, *_DDL_4):
            tx.run(statement)
        rows = tx.run("SELECT signature, first_us, last_us, count FROM signatures "
                      "ORDER BY first_us, signature")
        if rows:
            first = _next_ids(tx, len(rows))
            tx.many("INSERT INTO svc_findings (signature, id, status, status_us, resolved_in, "
                    "regressions, first_us, last_us, count, last_version) VALUES "
                    "(?, ?, 'open', ?, NULL, 0, ?, ?, ?, NULL)",
                    [(r[0], first + i, int(r[1]), int(r[1]), int(r[2]), int(r[3]))
                     for i, r in enumerate(rows)])
        tx.run("INSERT INTO meta (key, value) VALUES (?, ?)", (_SCHEMA_KEY, _SCHEMA_VERSION))


def _next_ids(tx: Tx, count: int) -> int:
    """Reserve ``count`` consecutive finding ids; returns the first (atomic on both backends:
    the counter row is updated in the batch's transaction)."""
    rows = tx.run("INSERT INTO svc_counters (name, value) VALUES ('finding', ?) ON CONFLICT "
                  "(name) DO UPDATE SET value = svc_counters.value + ? RETURNING value",
                  (count, count))
    return int(rows[0][0]) - count + 1


# -- the rules -------------------------------------------------------------------------------
def after_failure(status: Status, *, resolved_in: str | None, status_us: int,
                  version: str | None, ts_us: int) -> Status:
    """The status of a finding after one more failure (see the module's lifecycle)."""
    if status != "resolved" or ts_us <= status_us:
        return status
    if resolved_in is None:
        return "regressed"
    if version is None:
        return "resolved"
    return "regressed" if version_key(version) >= version_key(resolved_in) else "resolved"


def _side(sessions: int, hit: int) -> EffectSide:
    return EffectSide(sessions=sessions, hit=hit,
                      per_100=round(100 * hit / sessions, 1) if sessions else None)


def fix_effect(before: tuple[int, int], after: tuple[int, int], *, since: str,
               agent: str | None = None, version: str | None = None,
               at: datetime | None = None) -> Effect:
    """The comparison of (sessions, sessions hit) before a resolution and since (the module's
    rules: ``unknown`` when a side has no session, ``gone`` when none since hit the finding,
    else ``up``, ``down`` or ``same`` by the shares; significant by the triage test)."""
    (n_before, hit_before), (n_after, hit_after) = before, after
    if not n_before or not n_after:
        status = "unknown"
    elif not hit_after and hit_before:
        status = "gone"
    else:
        old, new = hit_before * n_after, hit_after * n_before  # the shares, cross-multiplied
        status = "up" if new > old else "down" if new < old else "same"
    return Effect(agent=agent, since=since, version=version, at=at,
                  before=_side(n_before, hit_before), after=_side(n_after, hit_after),
                  status=status, significant=significant(hit_before, n_before, hit_after,
                                                         n_after))


def split_at_version(rows: Iterable[tuple[str, int, int]],
                     version: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """(sessions, sessions hit) of the versions before ``version`` and of it and later, from
    (version, sessions, sessions hit) rows of one agent (versions ordered by
    :func:`version_key`)."""
    fixed = version_key(version)
    sides = [[0, 0], [0, 0]]
    for seen, sessions, hit in rows:
        side = sides[version_key(seen) >= fixed]
        side[0] += sessions
        side[1] += hit
    return (sides[0][0], sides[0][1]), (sides[1][0], sides[1][1])


def effect_agents(versions: dict[str, list[str]], version: str) -> list[str]:
    """The agents a resolution in ``version`` is compared for, from each of the finding's
    agents' session versions: those with a session of ``version`` when any has one, else all
    (the module's rule), sorted."""
    fixed = version_key(version)
    having = [agent for agent, seen in versions.items()
              if any(version_key(v) == fixed for v in seen)]
    return sorted(having or versions)


def shown_status(status: str, first_us: int, now_us: int) -> str:
    """What a stored status reads as: ``open`` is ``new`` or ``ongoing``."""
    if status != "open":
        return status
    return "new" if now_us - first_us < NEW_FOR_S * 1_000_000 else "ongoing"


def _attr(value: object) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip().splitlines()[0][:_MAX_ATTR]
    return None


def event_attributes(event: Event) -> tuple[str | None, str | None, str | None]:
    """(agent, agent version, model) of an event (see the module)."""
    subject = event.failure if event.failure is not None else event.outcome
    if subject is None:
        return None, None, None
    context = subject.context
    return (_attr(context.get("agent")) or _attr(context.get("triage.format")),
            _attr(context.get("agent_version")) or _attr(context.get("triage.agent_version")),
            _attr(context.get("model")) or _attr(context.get("triage.model")))


# -- records ---------------------------------------------------------------------------------
class Change(msgspec.Struct, frozen=True, kw_only=True):
    """What a batch did to one finding: made it, reopened it, or only counted more."""

    finding_id: int
    signature: str
    created: bool
    regressed: bool
    added: int
    version: str | None


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    """One finding as the API lists it."""

    id: int
    signature: str
    status: str
    code: str
    kind: str
    category: str
    message: str
    count: int
    sessions: int
    first_seen: datetime
    last_seen: datetime
    status_changed: datetime
    resolved_in: str | None
    regressions: int
    last_version: str | None
    cluster_id: str | None


class Breakdown(msgspec.Struct, frozen=True, kw_only=True):
    """Failures of a finding from one (agent, agent version, model)."""

    agent: str | None
    version: str | None
    model: str | None
    count: int
    first_seen: datetime
    last_seen: datetime


class Occurrence(msgspec.Struct, frozen=True, kw_only=True):
    """One stored failure of a finding."""

    event_id: str
    ts: datetime
    event: str
    session: str | None
    step: int | None
    source: str | None
    message: str
    detail: str | None
    input: str | None


class EffectSide(msgspec.Struct, frozen=True, kw_only=True):
    """One side of a fix's comparison: sessions, those the finding hit, that per 100."""

    sessions: int
    hit: int
    per_100: float | None
    """``100 * hit / sessions`` to one decimal; None without sessions."""


class Effect(msgspec.Struct, frozen=True, kw_only=True):
    """Did the fix work: the sessions before a resolution and since (see the module)."""

    agent: str | None
    """The agent whose sessions are compared (a resolution in a version); None: every
    session (a resolution at a time)."""
    since: str
    """What the sides are split at, in words: ``version 2.1.12`` or ``2026-11-02 14:30 UTC``."""
    version: str | None
    at: datetime | None
    """The resolution's time, when it is split by time."""
    before: EffectSide
    after: EffectSide
    status: str
    """One of :data:`EFFECT_STATUSES`."""
    significant: bool
    """Whether the change is beyond noise; False: too few sessions to tell."""


class FindingDetail(msgspec.Struct, frozen=True, kw_only=True):
    """One finding with its days, versions, latest occurrences, known remedies and, when it
    was resolved, whether the fix worked."""

    finding: Finding
    days: tuple[tuple[str, int], ...]
    versions: tuple[Breakdown, ...]
    occurrences: tuple[Occurrence, ...]
    remedy: str | None
    known_remedies: tuple[dict[str, Any], ...]
    effects: tuple[Effect, ...] = ()
    """One per agent compared (see the module); empty unless resolved."""
    suggested: dict[str, Any] | None = None
    """The learned model's suggestion for its latest record when the rules left it unknown
    (see the module); None otherwise."""
    suggested_remedies: tuple[dict[str, Any], ...] = ()
    """The store's known remedies for the nearest stored signatures (the module's rule)."""


_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def _time(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=int(us))


def _not_found(what: str) -> FailureError:
    return FailureError(FC.SVC_NOT_FOUND.failure(surface="service.findings",
                                                 params={"what": what}))


_SELECT: Final = (
    "SELECT f.id, f.signature, f.status, s.code, s.kind, s.category, s.last_message, s.count, "
    "s.sessions, s.first_us, s.last_us, f.status_us, f.resolved_in, f.regressions, "
    "f.last_version, s.cluster_id FROM svc_findings f JOIN signatures s "
    "ON s.signature = f.signature")
_SORTS: Final = {"last_seen": "s.last_us DESC, f.id DESC", "count": "s.count DESC, f.id",
                 "first_seen": "s.first_us DESC, f.id DESC", "sessions": "s.sessions DESC, f.id",
                 "id": "f.id"}
SORTS: Final = tuple(_SORTS)


def _finding(row: Sequence[Any], now_us: int) -> Finding:
    return Finding(
        id=int(row[0]), signature=row[1], status=shown_status(row[2], int(row[9]), now_us),
        code=row[3], kind=row[4], category=row[5], message=row[6], count=int(row[7]),
        sessions=int(row[8]), first_seen=_time(row[9]), last_seen=_time(row[10]),
        status_changed=_time(row[11]), resolved_in=row[12], regressions=int(row[13]),
        last_version=row[14], cluster_id=row[15])


class Findings:
    """The findings of one store: the ingest hook, the queries and the status changes."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- writing ---------------------------------------------------------------------------
    def append(self, events: Sequence[Event]) -> tuple[int, list[Change]]:
        """Store ``events`` and keep the findings; returns (new events, what changed)."""
        changes: list[Change] = []

        def after(tx: Tx, new: list[Event]) -> None:
            changes.clear()  # a repeated transaction starts over
            _record_agents(tx, new)
            changes.extend(_record(tx, new))
            _record_ends(tx, new)

        stored = self.store.append(events, after=after)
        return stored, changes

    def set_status(self, finding_id: int, action: Literal["resolve", "ignore", "reopen"], *,
                   in_version: str | None = None) -> Finding:
        """Resolve (in a version), ignore or reopen a finding.

        Raises:
            FailureError: FC-SVC-003 for an unknown id; FC-DATA-001 for a version on anything
                but ``resolve``.
        """
        if in_version is not None and action != "resolve":
            raise FailureError(FC.DATA_INVALID_INPUT.failure(surface="service.findings", params={
                "problem": f"in_version applies to resolve only, not {action}"}))
        status = {"resolve": "resolved", "ignore": "ignored", "reopen": "open"}[action]
        version = _attr(in_version) if in_version is not None else None
        now = time.time_ns() // 1000
        with self.store.transaction() as tx:
            rows = tx.run("UPDATE svc_findings SET status = ?, status_us = ?, resolved_in = ?, "
                          "resolved_us = ? WHERE id = ? RETURNING id",
                          (status, now, version, now if action == "resolve" else None,
                           finding_id))
        if not rows:
            raise _not_found(f"The finding {finding_id}")
        return self.get(finding_id)

    def id_of(self, signature: str) -> int:
        """The id of the finding of ``signature`` (FC-SVC-003 when it has none)."""
        rows = self.store.fetch("SELECT id FROM svc_findings WHERE signature = ?", (signature,))
        if not rows:
            raise _not_found(f"A finding with the signature {signature[:120]!r}")
        return int(rows[0][0])

    # -- reading ---------------------------------------------------------------------------
    def list(self, *, status: str | None = None, category: str | None = None,
             code: str | None = None, kind: str | None = None, since: datetime | None = None,
             until: datetime | None = None, agent: str | None = None,
             version: str | None = None, model: str | None = None, sort: str = "last_seen",
             limit: int = 50, offset: int = 0, now_us: int | None = None,
             ) -> tuple[list[Finding], int]:
        """A page of findings and how many match in all (filters are ANDed)."""
        now = time.time_ns() // 1000 if now_us is None else now_us
        clauses: list[str] = []
        params: list[Any] = []
        new_since = now - NEW_FOR_S * 1_000_000
        if status is not None:
            if status == "new":
                clauses.append("f.status = 'open' AND s.first_us >= ?")
                params.append(new_since)
            elif status == "ongoing":
                clauses.append("f.status = 'open' AND s.first_us < ?")
                params.append(new_since)
            else:
                clauses.append("f.status = ?")
                params.append(status)
        for column, value in (("s.category", category), ("s.code", code), ("s.kind", kind)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if since is not None:
            clauses.append("s.last_us >= ?")
            params.append(ts_micros(since))
        if until is not None:
            clauses.append("s.first_us < ?")
            params.append(ts_micros(until))
        versions = [(c, v) for c, v in (("v.agent", agent), ("v.version", version),
                                        ("v.model", model)) if v is not None]
        if versions:
            clauses.append("EXISTS (SELECT 1 FROM svc_finding_versions v WHERE v.signature = "
                           "f.signature AND " + " AND ".join(f"{c} = ?" for c, _ in versions)
                           + ")")
            params.extend(v for _, v in versions)
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        order = _SORTS[sort]
        with self.store.snapshot() as tx:
            total = int(tx.run("SELECT count(*) FROM svc_findings f JOIN signatures s ON "
                               f"s.signature = f.signature{where}", params)[0][0])
            rows = tx.run(f"{_SELECT}{where} ORDER BY {order} LIMIT ? OFFSET ?",
                          [*params, limit, offset])
        return [_finding(row, now) for row in rows], total

    def get(self, finding_id: int, *, occurrences: int = 10,
            now_us: int | None = None) -> Finding:
        """One finding (FC-SVC-003 when there is none with that id)."""
        now = time.time_ns() // 1000 if now_us is None else now_us
        rows = self.store.fetch(f"{_SELECT} WHERE f.id = ?", (finding_id,))
        if not rows:
            raise _not_found(f"The finding {finding_id}")
        del occurrences
        return _finding(rows[0], now)

    def detail(self, finding_id: int, *, occurrences: int = 10, days: int = 30,
               now_us: int | None = None) -> FindingDetail:
        """A finding with its last ``days`` days, its versions and latest occurrences."""
        from failcode.events import Event  # noqa: PLC0415 - decoding stored bodies

        now = time.time_ns() // 1000 if now_us is None else now_us
        finding = self.get(finding_id, now_us=now)
        signature = finding.signature
        first_day = now // DAY_US - days + 1
        with self.store.snapshot() as tx:
            day_rows = tx.run("SELECT day, count FROM svc_finding_days WHERE signature = ? AND "
                              "day >= ? ORDER BY day", (signature, first_day))
            version_rows = tx.run(
                "SELECT agent, version, model, count, first_us, last_us FROM "
                "svc_finding_versions WHERE signature = ? ORDER BY count DESC, last_us DESC "
                "LIMIT 100", (signature,))
            event_rows = tx.run("SELECT body FROM events WHERE signature = ? ORDER BY ts_us "
                                "DESC, event_id DESC LIMIT ?", (signature, occurrences))
            effects = _effects(tx, finding)
        found: list[Occurrence] = []
        remedy: str | None = None
        latest: Failure | None = None
        for (body,) in event_rows:
            event = Event.from_json(body)
            failure = event.failure
            if failure is None:
                continue
            latest = latest or failure
            remedy = remedy or failure.remedy
            where = failure.context.get("triage.path")
            found.append(Occurrence(
                event_id=event.event_id, ts=event.ts, event=event.event, session=event.session,
                step=event.step, source=event.source, message=failure.message,
                detail="\n".join((failure.detail or "").splitlines()[:8]) or None,
                input=where if isinstance(where, str) else None))
        known = tuple(msgspec.to_builtins(r) for r in self.store.known_remedies(signature))
        suggested = None if latest is None else _suggested(latest)
        return FindingDetail(
            finding=finding,
            days=tuple((_time(int(d) * DAY_US).date().isoformat(), int(c)) for d, c in day_rows),
            versions=tuple(Breakdown(agent=r[0] or None, version=r[1] or None,
                                     model=r[2] or None, count=int(r[3]),
                                     first_seen=_time(r[4]), last_seen=_time(r[5]))
                           for r in version_rows),
            occurrences=tuple(found), remedy=remedy, known_remedies=known, effects=effects,
            suggested=None if suggested is None else suggested.to_dict(),
            suggested_remedies=() if suggested is None else self.nearest_remedies(
                suggested, signature))

    def nearest_remedies(self, suggested: Suggestion,
                         signature: str) -> tuple[dict[str, Any], ...]:
        """The store's known remedies for the stored signatures nearest to ``suggested``
        (the module's rule), ``signature`` itself left out."""
        from failcode.events import Event  # noqa: PLC0415 - decoding stored bodies

        pairs = list(dict.fromkeys(
            (kind, klass) for kind, klass in ((suggested.kind, suggested.klass),
                                              *((n.kind, n.klass) for n in suggested.nearest))
            if klass != "unknown"))
        out: list[dict[str, Any]] = []
        now = time.time_ns() // 1000
        for kind, klass in pairs:
            rows = self.store.fetch(
                "SELECT s.signature, s.code, s.last_message, s.count, s.last_event_id, f.id, "
                "f.status, f.resolved_in, s.first_us FROM signatures s LEFT JOIN svc_findings f ON "
                "f.signature = s.signature WHERE s.kind = ? AND s.error_class = ? AND "
                "s.signature <> ? ORDER BY s.count DESC, s.signature LIMIT 50",
                (kind, klass, signature))
            for (sig, code, message, count, last_event, finding_id, status, resolved_in,
                 first_us) in rows:
                if len(out) >= SUGGESTED_REMEDIES:
                    return tuple(out)
                if any(item["signature"] == sig for item in out):
                    continue
                tried = [msgspec.to_builtins(r) for r in self.store.known_remedies(sig)]
                bodies = self.store.fetch("SELECT body FROM events WHERE event_id = ?",
                                          (last_event,))
                record = Event.from_json(bodies[0][0]).failure if bodies else None
                own = record.remedy if record is not None else None
                if not tried and not own:
                    continue
                out.append({"signature": sig, "code": code, "kind": kind, "class": klass,
                            "message": message, "count": int(count),
                            "finding": None if finding_id is None else int(finding_id),
                            "status": None if status is None else shown_status(
                                status, int(first_us), now),
                            "resolved_in": resolved_in,
                            "remedy": own, "known_remedies": tried})
        return tuple(out)


def _suggested(failure: Failure) -> Suggestion | None:
    """The learned suggestion for a stored record the rules left unknown (see the module)."""
    from failcode.triage._findings import record_suggestion  # noqa: PLC0415 - on first use

    evidence = failure.context.get("triage.evidence")
    command = evidence if isinstance(evidence, str) else None
    if command is None and isinstance(program := failure.metadata.get("program"), str):
        command = program
    return record_suggestion(failure, command)


def _effects(tx: Tx, finding: Finding) -> tuple[Effect, ...]:
    """Whether the fix of a resolved finding worked (the module's rules), counted in ``tx``."""
    if finding.resolved_in is not None and finding.status in ("resolved", "regressed"):
        return _effects_in_version(tx, finding.signature, finding.resolved_in)
    if finding.status not in ("resolved", "regressed"):
        return ()
    resolved = tx.run("SELECT resolved_us FROM svc_findings WHERE signature = ?",
                      (finding.signature,))
    if not resolved or resolved[0][0] is None:
        return ()  # regressed from a resolution made before version 4 kept its time
    at_us = int(resolved[0][0])
    row = tx.run(
        "SELECT count(*), count(h.signature), sum(CASE WHEN s.first_us >= ? THEN 1 ELSE 0 "
        "END), sum(CASE WHEN s.first_us >= ? AND h.signature IS NOT NULL THEN 1 ELSE 0 END) "
        "FROM sessions s LEFT JOIN session_signatures h ON h.session = s.session AND h.input "
        "= s.input AND h.signature = ?", (at_us, at_us, finding.signature))[0]
    total, hit, after, after_hit = (int(value or 0) for value in row)
    return (fix_effect((total - after, hit - after_hit), (after, after_hit),
                       since=shown(at_us / 1e6), at=_time(at_us)),)


def _effects_in_version(tx: Tx, signature: str, version: str) -> tuple[Effect, ...]:
    """Per agent of the finding: its sessions of a known version before ``version`` and
    from it on, and those the finding hit."""
    rows = tx.run(
        "SELECT a.agent, a.version, count(*), count(h.signature) FROM svc_session_agents a "
        "LEFT JOIN session_signatures h ON h.session = a.session AND h.input = a.input AND "
        "h.signature = ? WHERE a.version <> '' AND a.agent IN (SELECT agent FROM "
        "svc_finding_versions WHERE signature = ? AND agent <> '') GROUP BY a.agent, a.version",
        (signature, signature))
    per: dict[str, list[tuple[str, int, int]]] = {}
    for agent, seen, sessions, hit in rows:
        per.setdefault(str(agent), []).append((str(seen), int(sessions), int(hit)))
    chosen = effect_agents({agent: [r[0] for r in seen] for agent, seen in per.items()},
                           version)
    return tuple(fix_effect(*split_at_version(per[agent], version), since=f"version {version}",
                            agent=agent, version=version) for agent in chosen)


def session_end(event: Event) -> str | None:
    """How the session of ``event`` ended, as far as this event says: the ``triage.ended``
    that ``failcode triage`` records, or the ``session.ended`` a producer that knows it states
    (an OpenTelemetry record that ended the session), or a ``session.ended`` event (an
    agent's hook at its stop: :class:`~failcode.SessionEnded`); None
    otherwise. A failure along the way says nothing of the end: the session may have gone on
    and finished (its page then says ``unknown`` until an event says how it ended)."""
    record = event.failure or event.outcome
    if record is None:
        return None
    if isinstance(record, SessionEnded):
        return record.status if record.status != "unknown" else None
    ended = record.context.get("triage.ended") or record.context.get(ENDED_KEY)
    if isinstance(ended, str) and ended:
        return ended[:_MAX_ATTR]
    return None


def _record_ends(tx: Tx, events: list[Event]) -> None:
    """Keep, per (session, input), what its latest event says of how it ended."""
    from failcode.store._ingest import event_input  # noqa: PLC0415

    latest: dict[tuple[str, str], tuple[int, str]] = {}
    for event in events:
        if event.session is None:
            continue
        ended = session_end(event)
        if ended is None:
            continue
        key = (event.session, event_input(event))
        ts = ts_micros(event.ts)
        if key not in latest or ts >= latest[key][0]:
            latest[key] = (ts, ended)
    tx.upsert("svc_session_ends", ("session", "input", "ended", "last_us"),
              ("session", "input"),
              [(k[0], k[1], v[1], v[0]) for k, v in sorted(latest.items())],
              "ended = CASE WHEN excluded.last_us >= svc_session_ends.last_us THEN "
              "excluded.ended ELSE svc_session_ends.ended END, last_us = CASE WHEN "
              "excluded.last_us > svc_session_ends.last_us THEN excluded.last_us ELSE "
              "svc_session_ends.last_us END", want_new=False)


def _record_agents(tx: Tx, events: list[Event]) -> None:
    """Keep, per (session, input), the agent, version and model its events name (each the
    latest one named: a hook's event names the agent only, its export's the version too)."""
    from failcode.store._ingest import event_input  # noqa: PLC0415

    latest: dict[tuple[str, str], list[Any]] = {}
    for event in events:
        if event.session is None:
            continue
        named = event_attributes(event)
        if not any(named):
            continue
        key = (event.session, event_input(event))
        ts = ts_micros(event.ts)
        row = latest.setdefault(key, ["", "", "", ts])
        for index, value in enumerate(named):
            if value:
                row[index] = value
        row[3] = max(row[3], ts)
    keep = " ".join(
        f"{c} = CASE WHEN excluded.{c} <> '' THEN excluded.{c} ELSE svc_session_agents.{c} END,"
        for c in ("agent", "version", "model"))
    tx.upsert("svc_session_agents", ("session", "input", "agent", "version", "model", "last_us"),
              ("session", "input"), [(k[0], k[1], *v) for k, v in sorted(latest.items())],
              f"{keep} last_us = CASE WHEN excluded.last_us > svc_session_agents.last_us THEN "
              "excluded.last_us ELSE svc_session_agents.last_us END", want_new=False)


def _session_versions(tx: Tx, events: list[Event]) -> dict[tuple[str, str], tuple[str, str]]:
    """(agent, version) that ``svc_session_agents`` keeps for the sessions of ``events``, those
    with a version; no query when ``events`` is empty."""
    names = sorted({e.session for e in events if e.session is not None})
    found: dict[tuple[str, str], tuple[str, str]] = {}
    for start in range(0, len(names), 500):
        chunk = names[start:start + 500]
        for row in tx.run(f"SELECT session, input, agent, version FROM svc_session_agents "
                          f"WHERE session IN ({', '.join('?' * len(chunk))}) AND version <> ''",
                          chunk):
            found[(str(row[0]), str(row[1]))] = (str(row[2]), str(row[3]))
    return found


def session_agent(store: Store, session: str, input_: str) -> str:
    """The agent of a session and its version, as the pages show them (``claude-code
    2.1.332``; empty when no event named one)."""
    rows = store.fetch("SELECT agent, version FROM svc_session_agents WHERE session = ? AND "
                       "input = ?", (session, input_))
    return " ".join(str(v) for v in rows[0] if v) if rows else ""


def _record(tx: Tx, events: list[Event]) -> list[Change]:  # noqa: PLR0915 - one pass
    """Keep the findings of the new events of one batch (in its transaction)."""
    from failcode.store._ingest import event_input  # noqa: PLC0415

    per: dict[str, list[Any]] = {}  # signature -> [first, last, count, [(ts, version)]]
    days: dict[tuple[str, int], int] = {}
    versions: dict[tuple[str, str, str, str], list[int]] = {}
    # a failure naming its agent but no version (a hook's) takes its session's, if one is known
    known = _session_versions(tx, [e for e in events if e.failure is not None
                                   and e.session is not None and not event_attributes(e)[1]])
    for event in events:
        failure = event.failure
        if failure is None:
            continue
        ts = ts_micros(event.ts)
        signature = failure.signature
        agent, version, model = event_attributes(event)
        if not version and event.session is not None:
            # a session is one agent version (it may use several models: those are not taken)
            said = known.get((event.session, event_input(event)))
            if said is not None and agent == said[0]:
                version = said[1]
        entry = per.get(signature)
        if entry is None:
            per[signature] = [ts, ts, 1, [(ts, version)]]
        else:
            entry[0] = min(entry[0], ts)
            entry[1] = max(entry[1], ts)
            entry[2] += 1
            entry[3].append((ts, version))
        day = (signature, ts // DAY_US)
        days[day] = days.get(day, 0) + 1
        key = (signature, agent or "", version or "", model or "")
        counts = versions.get(key)
        if counts is None:
            versions[key] = [1, ts, ts]
        else:
            counts[0] += 1
            counts[1] = min(counts[1], ts)
            counts[2] = max(counts[2], ts)
    if not per:
        return []
    signatures = sorted(per)
    existing: dict[str, list[Any]] = {}
    for start in range(0, len(signatures), 500):
        chunk = signatures[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        for row in tx.run("SELECT signature, id, status, status_us, resolved_in FROM "
                          f"svc_findings WHERE signature IN ({marks}){tx.lock}", chunk):
            existing[row[0]] = [int(row[1]), row[2], int(row[3]), row[4]]
    fresh = [s for s in signatures if s not in existing]
    fresh_index = {signature: index for index, signature in enumerate(fresh)}
    first_id = _next_ids(tx, len(fresh)) if fresh else 0
    changes: list[Change] = []
    inserts: list[tuple[Any, ...]] = []
    updates: list[tuple[Any, ...]] = []
    for signature in signatures:
        first, last, count, seen = per[signature]
        last_version = max(seen, key=lambda item: item[0])[1]
        current = existing.get(signature)
        if current is None:
            finding_id = first_id + fresh_index[signature]
            inserts.append((signature, finding_id, "open", first, None, 0, first, last, count,
                            last_version))
            changes.append(Change(finding_id=finding_id, signature=signature, created=True,
                                  regressed=False, added=count, version=last_version))
            continue
        finding_id, status, status_us, resolved_in = current
        reopened_by: str | None = None
        regressed = False
        for ts, version in sorted(seen, key=lambda item: item[0]):
            after = after_failure(status, resolved_in=resolved_in, status_us=status_us,
                                  version=version, ts_us=ts)
            if after != status:
                status, status_us, reopened_by, regressed = after, ts, version, True
        updates.append((status, status_us, 1 if regressed else 0, first, last, count,
                        last_version, last_version, signature))
        changes.append(Change(finding_id=finding_id, signature=signature, created=False,
                              regressed=regressed, added=count,
                              version=reopened_by if regressed else last_version))
    if inserts:
        tx.many("INSERT INTO svc_findings (signature, id, status, status_us, resolved_in, "
                "regressions, first_us, last_us, count, last_version) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (signature) DO NOTHING", inserts)
    if updates:
        tx.many("UPDATE svc_findings SET status = ?, status_us = ?, regressions = regressions + "
                "?, first_us = CASE WHEN ? < first_us THEN ? ELSE first_us END, last_us = CASE "
                "WHEN ? > last_us THEN ? ELSE last_us END, count = count + ?, last_version = "
                "COALESCE(?, last_version) WHERE signature = ?",
                [(u[0], u[1], u[2], u[3], u[3], u[4], u[4], u[5], u[6], u[8]) for u in updates])
    tx.upsert("svc_finding_days", ("signature", "day", "count"), ("signature", "day"),
              [(s, d, n) for (s, d), n in sorted(days.items())],
              "count = svc_finding_days.count + excluded.count", want_new=False)
    tx.upsert("svc_finding_versions",
              ("signature", "agent", "version", "model", "count", "first_us", "last_us"),
              ("signature", "agent", "version", "model"),
              [(*k, v[0], v[1], v[2]) for k, v in sorted(versions.items())],
              "count = svc_finding_versions.count + excluded.count, first_us = CASE WHEN "
              "excluded.first_us < svc_finding_versions.first_us THEN excluded.first_us ELSE "
              "svc_finding_versions.first_us END, last_us = CASE WHEN excluded.last_us > "
              "svc_finding_versions.last_us THEN excluded.last_us ELSE "
              "svc_finding_versions.last_us END", want_new=False)
    return changes
