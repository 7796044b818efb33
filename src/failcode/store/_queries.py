"""The queries: pure functions over a connection, the same on both backends.

Each function takes ``db``, anything with ``fetch(sql, params) -> list[tuple]`` running one
portable statement with ``?`` placeholders (a :class:`~failcode.store.Store` is one; a service
can pass its own), plus filters and paging, and returns frozen msgspec Structs, which
``msgspec.to_builtins`` turns into JSON-ready data.

Counts come from the aggregates kept at ingest, never from a scan of the events, except for a
session filter combined with a time range (the events of the range, read through the time
index). A time range (``since`` inclusive, ``until`` exclusive) applies at hour granularity to
counts: an hour is in the range when its start is.

Sessions are what triage says they are: a session is a (session name, input) pair, the input
being the path ``failcode triage --store`` read it from (``triage.path`` in the failure's or
outcome's context; the empty string for events of sinks and live agents: see
:mod:`failcode.store._schema`). Every count of sessions (``Diagnostic.sessions``,
``Cluster.sessions``, ``StoreStats.sessions``, ``min_sessions``) counts pairs, and a loop is
one pair's. A ``session`` filter selects every session of that name, whatever its input (with
three inputs of one name, ``diagnostics(session=...)`` counts up to 3 sessions per
signature); ``input`` selects the sessions of one input, and both together one session.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

import msgspec

from failcode.events import Event
from failcode.events._event import ts_micros
from failcode.store._ingest import HOUR_US

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "Blame",
    "Cluster",
    "Database",
    "Diagnostic",
    "KnownRemedy",
    "Loop",
    "SignatureHistory",
    "StoreStats",
    "blame",
    "clusters",
    "diagnostics",
    "history",
    "known_remedies",
    "loops",
    "stats",
]

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
MAX_LIMIT: Final = 10_000


class Database(Protocol):
    """What the query functions need: one read statement at a time."""

    def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run ``sql`` (``?`` placeholders) and return its rows."""


def _time(us: int | None) -> datetime | None:
    return None if us is None else _EPOCH + timedelta(microseconds=int(us))


def _us(value: datetime | None) -> int | None:
    if value is None:
        return None
    if value.tzinfo is None:
        msg = f"{value.isoformat()}: a time filter needs a timezone (UTC)"
        raise ValueError(msg)
    return ts_micros(value)


def _page(limit: int, offset: int) -> tuple[int, int]:
    if not (1 <= limit <= MAX_LIMIT) or offset < 0:
        msg = f"limit must be in 1..{MAX_LIMIT} and offset >= 0, got {limit}, {offset}"
        raise ValueError(msg)
    return limit, offset


class KnownRemedy(msgspec.Struct, frozen=True, kw_only=True):
    """What the store knows about one remedy of one signature.

    ``status``: ``promoted`` (worked at least ``promote_after`` times and has not failed
    ``demote_after`` times in a row since), ``demoted`` (was good enough, then kept failing) or
    ``candidate``.
    """

    remedy: str
    status: Literal["promoted", "candidate", "demoted"]
    tried: int
    worked: int
    failed: int
    streak_failed: int
    last_tried: datetime


class Diagnostic(msgspec.Struct, frozen=True, kw_only=True):
    """One row of the diagnostics table: a signature and what the store knows of it.

    ``sessions``: the (session, input) pairs the signature failed in (see the module).
    """

    signature: str
    code: str
    kind: str
    category: str
    count: int
    first_seen: datetime
    last_seen: datetime
    sessions: int
    last_message: str
    cluster_id: str | None
    known_remedies: tuple[str, ...]


class Blame(msgspec.Struct, frozen=True, kw_only=True):
    """One cell of the blame histogram: who acts (category) x what failed (kind) x code/area."""

    category: str
    kind: str
    group: str
    count: int


class Loop(msgspec.Struct, frozen=True, kw_only=True):
    """A retry loop: a signature failing 3+ times in a session, or twice or more in a row.

    A session is one (``session``, ``input``) pair: the same session name in two inputs is two
    sessions, each with its own loops (``input`` tells them apart; ``""``: the events named
    no input, see the module).
    """

    session: str
    signature: str
    code: str
    count: int
    max_run: int
    first_seen: datetime
    last_seen: datetime
    input: str = ""


class Cluster(msgspec.Struct, frozen=True, kw_only=True):
    """Signatures a person calls the same failure (one template), across sessions
    (``sessions``: distinct (session, input) pairs)."""

    cluster_id: str
    template: str
    signatures: tuple[str, ...]
    count: int
    sessions: int


class SignatureHistory(msgspec.Struct, frozen=True, kw_only=True):
    """One signature: its diagnostics row, its knowledge, and a page of its events (newest
    first)."""

    diagnostic: Diagnostic | None
    remedies: tuple[KnownRemedy, ...]
    events: tuple[Event, ...]


class StoreStats(msgspec.Struct, frozen=True, kw_only=True):
    """What a store holds (``sessions``: (session, input) pairs)."""

    schema_version: int
    events_stored: int
    events_ingested: int
    by_event: dict[str, int]
    signatures: int
    sessions: int
    clusters: int
    remedies: int
    oldest: datetime | None
    newest: datetime | None


# ---------------------------------------------------------------------------------------------


def _status(worked: int, streak: int, promote_after: int,
            demote_after: int) -> Literal["promoted", "candidate", "demoted"]:
    if worked >= promote_after:
        return "demoted" if streak >= demote_after else "promoted"
    return "candidate"


_RANK: Final = {"promoted": 0, "candidate": 1, "demoted": 2}


def _remedies_of(db: Database, signatures: Sequence[str], promote_after: int,
                 demote_after: int) -> dict[str, list[KnownRemedy]]:
    found: dict[str, list[KnownRemedy]] = {}
    if not signatures:
        return found
    marks = ", ".join("?" * len(signatures))
    for sig, text, tried, worked, failed, streak, last in db.fetch(
            "SELECT signature, remedy, tried, worked, failed, streak_failed, last_us "
            f"FROM remedies WHERE signature IN ({marks})", list(signatures)):
        found.setdefault(sig, []).append(KnownRemedy(
            remedy=text, status=_status(worked, streak, promote_after, demote_after),
            tried=int(tried), worked=int(worked), failed=int(failed),
            streak_failed=int(streak), last_tried=_EPOCH + timedelta(microseconds=int(last))))
    for items in found.values():
        items.sort(key=lambda r: (_RANK[r.status], -r.worked, r.failed,
                                  -ts_micros(r.last_tried), r.remedy))
    return found


def known_remedies(db: Database, signature: str, *, promote_after: int = 3,
                   demote_after: int = 2) -> list[KnownRemedy]:
    """The remedies tried on ``signature``, the best first (promoted, then by successes)."""
    return _remedies_of(db, [signature], promote_after, demote_after).get(signature, [])


def _filters(alias: str, kind: str | None, code: str | None,
             category: str | None) -> tuple[list[str], list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    for column, value in (("kind", kind), ("code", code), ("category", category)):
        if value is not None:
            clauses.append(f"{alias}.{column} = ?")
            params.append(value)
    return clauses, params


def _hours(since: datetime | None, until: datetime | None) -> tuple[list[str], list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    low, high = _us(since), _us(until)
    if low is not None:
        clauses.append("h.hour >= ?")
        params.append(low - low % HOUR_US)
    if high is not None:
        clauses.append("h.hour < ?")
        params.append(high)
    return clauses, params


def _events_range(since: datetime | None,
                  until: datetime | None) -> tuple[list[str], list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    low, high = _us(since), _us(until)
    if low is not None:
        clauses.append("e.ts_us >= ?")
        params.append(low)
    if high is not None:
        clauses.append("e.ts_us < ?")
        params.append(high)
    return clauses, params


def _where(clauses: Sequence[str]) -> str:
    return (" WHERE " + " AND ".join(clauses)) if clauses else ""


def _scope(alias: str, session: str | None,
           source: str | None) -> tuple[list[str], list[Any]]:
    """The clauses of a session filter (a name, an input, or both) on ``alias``'s rows, with
    a session (events without one belong to no session of any input)."""
    clauses: list[str] = []
    params: list[Any] = []
    if session is not None:
        clauses.append(f"{alias}.session = ?")
        params.append(session)
    else:
        clauses.append(f"{alias}.session IS NOT NULL")
    if source is not None:
        clauses.append(f"{alias}.input = ?")
        params.append(source)
    return clauses, params


_SIG_COLUMNS: Final = "s.signature, s.code, s.kind, s.category"


def diagnostics(
    db: Database, *, session: str | None = None, since: datetime | None = None,
    until: datetime | None = None, kind: str | None = None, code: str | None = None,
    category: str | None = None, limit: int = 50, offset: int = 0, promote_after: int = 3,
    demote_after: int = 2, input: str | None = None,  # noqa: A002 - the store's word
) -> list[Diagnostic]:
    """The diagnostics table by signature, most frequent first: code, kind, category, count,
    first and last seen, sessions, last (redacted) message and the promoted remedies.

    With ``session`` (a name: every input's session of that name) or ``input`` (the sessions
    of one input), counts, sessions, first and last seen are those of the sessions selected;
    with a time range, counts are those of the range (first and last seen stay the
    signature's, and so do sessions unless a session filter is given too).
    """
    limit, offset = _page(limit, offset)
    clauses, params = _filters("s", kind, code, category)
    tail = "s.last_message, s.cluster_id"
    scoped = session is not None or input is not None
    if scoped and (since is not None or until is not None):
        range_clauses, range_params = _events_range(since, until)
        scope, scope_params = _scope("e", session, input)
        # the pairs: one name has one session per input, one input one per name
        pairs = "count(DISTINCT e.input)" if session is not None else "count(DISTINCT e.session)"
        sql = (f"SELECT {_SIG_COLUMNS}, x.n, x.first_us, x.last_us, x.sessions, {tail} FROM "
               "(SELECT e.signature AS signature, count(*) AS n, min(e.ts_us) AS first_us, "
               f"max(e.ts_us) AS last_us, {pairs} AS sessions FROM events e"
               + _where([*scope, "e.code IS NOT NULL", *range_clauses])
               + " GROUP BY e.signature) x JOIN signatures s ON s.signature = x.signature")
        params = [*scope_params, *range_params, *params]
    elif scoped:
        scope, scope_params = _scope("x", session, input)
        sql = (f"SELECT {_SIG_COLUMNS}, x.n, x.first_us, x.last_us, x.sessions, {tail} FROM "
               "(SELECT x.signature AS signature, sum(x.count) AS n, min(x.first_us) AS "
               "first_us, max(x.last_us) AS last_us, count(*) AS sessions FROM "
               f"session_signatures x{_where(scope)} GROUP BY x.signature) x "
               "JOIN signatures s ON s.signature = x.signature")
        params = [*scope_params, *params]
    elif since is not None or until is not None:
        hour_clauses, hour_params = _hours(since, until)
        sql = (f"SELECT {_SIG_COLUMNS}, x.n, s.first_us, s.last_us, s.sessions, {tail} FROM "
               "(SELECT h.signature AS signature, sum(h.count) AS n FROM hourly h"
               + _where(hour_clauses) + " GROUP BY h.signature) x "
               "JOIN signatures s ON s.signature = x.signature")
        params = [*hour_params, *params]
    else:
        sql = (f"SELECT {_SIG_COLUMNS}, s.count, s.first_us, s.last_us, s.sessions, {tail} "
               "FROM signatures s")
    sql += _where(clauses) + " ORDER BY 5 DESC, 1 LIMIT ? OFFSET ?"
    rows = db.fetch(sql, [*params, limit, offset])
    remedies = _remedies_of(db, [row[0] for row in rows], promote_after, demote_after)
    return [Diagnostic(
        signature=row[0], code=row[1], kind=row[2], category=row[3], count=int(row[4]),
        first_seen=_EPOCH + timedelta(microseconds=int(row[5])),
        last_seen=_EPOCH + timedelta(microseconds=int(row[6])), sessions=int(row[7]),
        last_message=row[8], cluster_id=row[9],
        known_remedies=tuple(r.remedy for r in remedies.get(row[0], ())
                             if r.status == "promoted")) for row in rows]


def blame(
    db: Database, *, by: Literal["code", "area"] = "code", session: str | None = None,
    since: datetime | None = None, until: datetime | None = None, kind: str | None = None,
    code: str | None = None, category: str | None = None, limit: int = 100, offset: int = 0,
    input: str | None = None,  # noqa: A002 - the store's word
) -> list[Blame]:
    """The blame histogram: who acts (category) x what failed (kind) x code (or area), the
    largest cell first; ``session`` and ``input`` select sessions as :func:`diagnostics`."""
    limit, offset = _page(limit, offset)
    if by not in ("code", "area"):
        msg = f"blame by {by!r}: expected 'code' or 'area'"
        raise ValueError(msg)
    clauses, params = _filters("s", kind, code, category)
    scoped = session is not None or input is not None
    if scoped and (since is not None or until is not None):
        range_clauses, range_params = _events_range(since, until)
        scope, scope_params = _scope("e", session, input)
        source = ("(SELECT e.signature AS signature, count(*) AS n FROM events e"
                  + _where([*scope, "e.code IS NOT NULL", *range_clauses])
                  + " GROUP BY e.signature) x JOIN signatures s ON s.signature = x.signature")
        params = [*scope_params, *range_params, *params]
        count = "x.n"
    elif scoped:
        scope, scope_params = _scope("x", session, input)
        source = "session_signatures x JOIN signatures s ON s.signature = x.signature"
        clauses = [*scope, *clauses]
        params = [*scope_params, *params]
        count = "x.count"
    elif since is not None or until is not None:
        hour_clauses, hour_params = _hours(since, until)
        source = "hourly h JOIN signatures s ON s.signature = h.signature"
        clauses = [*hour_clauses, *clauses]
        params = [*hour_params, *params]
        count = "h.count"
    else:
        source = "signatures s"
        count = "s.count"
    sql = (f"SELECT s.category, s.kind, s.{by}, sum({count}) FROM {source}{_where(clauses)} "
           f"GROUP BY s.category, s.kind, s.{by} ORDER BY 4 DESC, 1, 2, 3 LIMIT ? OFFSET ?")
    return [Blame(category=row[0], kind=row[1], group=row[2], count=int(row[3]))
            for row in db.fetch(sql, [*params, limit, offset])]


def loops(
    db: Database, *, session: str | None = None, since: datetime | None = None,
    until: datetime | None = None, kind: str | None = None, code: str | None = None,
    category: str | None = None, min_count: int = 3, min_run: int = 2, limit: int = 100,
    offset: int = 0, input: str | None = None,  # noqa: A002 - the store's word
) -> list[Loop]:
    """Retry loops: a signature failing ``min_count`` or more times in one session (one
    (session, input) pair), or ``min_run`` or more times in a row, unless it is unclassified
    (``FC-SYS-001`` of class ``unknown``); the longest first. A time
    range selects loops whose last failure falls in it; ``session`` and ``input`` select
    sessions as :func:`diagnostics`."""
    limit, offset = _page(limit, offset)
    clauses, params = _filters("s", kind, code, category)
    # an unclassified failure never loops: nothing says its repeats share a cause (an export's
    # "Shell command failed" of one command may fail for a new reason each time)
    clauses = ["(x.count >= ? OR x.max_run >= ?)",
               "NOT (s.code = 'FC-SYS-001' AND s.error_class = 'unknown')", *clauses]
    params = [min_count, min_run, *params]
    for op, value in ((">=", _us(since)), ("<", _us(until))):
        if value is not None:
            clauses.append(f"x.last_us {op} ?")
            params.append(value)
    if session is not None:
        clauses.append("x.session = ?")
        params.append(session)
    if input is not None:
        clauses.append("x.input = ?")
        params.append(input)
    sql = ("SELECT x.session, x.input, x.signature, s.code, x.count, x.max_run, x.first_us, "
           "x.last_us FROM session_signatures x JOIN signatures s ON s.signature = x.signature"
           + _where(clauses) + " ORDER BY 5 DESC, 6 DESC, 1, 2, 3 LIMIT ? OFFSET ?")
    return [Loop(session=row[0], input=row[1], signature=row[2], code=row[3],
                 count=int(row[4]), max_run=int(row[5]),
                 first_seen=_EPOCH + timedelta(microseconds=int(row[6])),
                 last_seen=_EPOCH + timedelta(microseconds=int(row[7])))
            for row in db.fetch(sql, [*params, limit, offset])]


def clusters(
    db: Database, *, min_sessions: int = 1, kind: str | None = None, code: str | None = None,
    category: str | None = None, limit: int = 100, offset: int = 0,
) -> list[Cluster]:
    """Clusters of signatures with one message template (``TemplateClusterer`` state kept in
    the store), the most frequent first; ``min_sessions=2`` keeps the cross-session ones
    (sessions: distinct (session, input) pairs)."""
    limit, offset = _page(limit, offset)
    clauses, params = _filters("s", kind, code, category)
    rows = db.fetch(
        "SELECT c.cluster_id, c.template, s.signature, s.count FROM clusters c "
        "JOIN signatures s ON s.cluster_id = c.cluster_id" + _where(clauses)
        + " ORDER BY 1, 3", params)
    sessions = dict(db.fetch(
        "SELECT p.cluster_id, count(*) FROM (SELECT DISTINCT s.cluster_id AS cluster_id, "
        "x.session AS session, x.input AS input FROM session_signatures x "
        "JOIN signatures s ON s.signature = x.signature" + _where(
            ["s.cluster_id IS NOT NULL", *clauses]) + ") p GROUP BY p.cluster_id", params))
    grouped: dict[str, tuple[str, list[str], list[int]]] = {}
    for cid, template, sig, count in rows:
        entry = grouped.setdefault(cid, (template, [], []))
        entry[1].append(sig)
        entry[2].append(int(count))
    found = [Cluster(cluster_id=cid, template=template, signatures=tuple(sigs),
                     count=sum(counts), sessions=int(sessions.get(cid, 0)))
             for cid, (template, sigs, counts) in grouped.items()
             if int(sessions.get(cid, 0)) >= min_sessions]
    found.sort(key=lambda c: (-c.count, -c.sessions, c.cluster_id))
    return found[offset:offset + limit]


def history(
    db: Database, signature: str, *, session: str | None = None,
    since: datetime | None = None, until: datetime | None = None, limit: int = 50,
    offset: int = 0, promote_after: int = 3, demote_after: int = 2,
    input: str | None = None,  # noqa: A002 - the store's word
) -> SignatureHistory:
    """One signature's history: its diagnostics row (all of it: the filters select events),
    known remedies (best first) and a page of its stored events, newest first; ``session``
    and ``input`` select the events of sessions as :func:`diagnostics`."""
    limit, offset = _page(limit, offset)
    found = db.fetch(
        f"SELECT {_SIG_COLUMNS}, s.count, s.first_us, s.last_us, s.sessions, s.last_message, "
        "s.cluster_id FROM signatures s WHERE s.signature = ?", [signature])
    remedies = known_remedies(db, signature, promote_after=promote_after,
                              demote_after=demote_after)
    diagnostic = None
    if found:
        row = found[0]
        diagnostic = Diagnostic(
            signature=row[0], code=row[1], kind=row[2], category=row[3], count=int(row[4]),
            first_seen=_EPOCH + timedelta(microseconds=int(row[5])),
            last_seen=_EPOCH + timedelta(microseconds=int(row[6])), sessions=int(row[7]),
            last_message=row[8], cluster_id=row[9],
            known_remedies=tuple(r.remedy for r in remedies if r.status == "promoted"))
    clauses, params = _events_range(since, until)
    clauses = ["e.signature = ?", *clauses]
    params = [signature, *params]
    if session is not None or input is not None:
        scope, scope_params = _scope("e", session, input)
        clauses.extend(scope)
        params.extend(scope_params)
    bodies = db.fetch("SELECT e.body FROM events e" + _where(clauses)
                      + " ORDER BY e.ts_us DESC, e.event_id DESC LIMIT ? OFFSET ?",
                      [*params, limit, offset])
    return SignatureHistory(diagnostic=diagnostic, remedies=tuple(remedies),
                            events=tuple(Event.from_json(body) for (body,) in bodies))


def stats(db: Database) -> StoreStats:
    """Counts of what the store holds (events stored now, events ever ingested by name)."""
    version = int(db.fetch("SELECT value FROM meta WHERE key = 'schema_version'")[0][0])
    stored, oldest, newest = db.fetch("SELECT count(*), min(ts_us), max(ts_us) FROM events")[0]
    by_event = {name: int(n) for name, n in db.fetch(
        "SELECT event, count FROM event_counts ORDER BY event")}

    def one(sql: str) -> int:
        return int(db.fetch(sql)[0][0])

    return StoreStats(
        schema_version=version, events_stored=int(stored),
        events_ingested=sum(by_event.values()), by_event=by_event,
        signatures=one("SELECT count(*) FROM signatures"),
        sessions=one("SELECT count(*) FROM sessions"),
        clusters=one("SELECT count(*) FROM clusters"),
        remedies=one("SELECT count(*) FROM remedies"),
        oldest=_time(oldest), newest=_time(newest))
