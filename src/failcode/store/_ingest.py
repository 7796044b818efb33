"""Ingest: store a batch of events once each and update every aggregate in the same transaction.

Shared by both backends; it talks to the database only through :class:`Tx`, whose SQL uses
``?`` placeholders and portable statements (``INSERT ... ON CONFLICT``, ``RETURNING``,
``CASE``), so SQLite and PostgreSQL run the very same statements.

Concurrency: SQLite writers are serialized by ``BEGIN IMMEDIATE``. On PostgreSQL, rows whose
update depends on their current value (a session's last signature, a remedy's failure streak,
the clusterer state) are read ``FOR UPDATE``, every table is touched in one global order and
keys in sorted order, and counters are updated additively; a deadlock or serialization failure
retries the whole batch (appends are idempotent by event id, so a retry stores nothing twice).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Final, Protocol

from failcode.events import REMEDY_EVENT, Event
from failcode.events._event import ts_micros

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from failcode import TemplateClusterer

__all__ = ["HOUR_US", "Tx", "ingest", "replay_remedies"]

HOUR_US: Final = 3_600_000_000
_CHUNK: Final = 400

EVENT_COLUMNS: Final = ("event_id", "ts_us", "event", "session", "step", "source", "signature",
                        "code", "body")


class Tx(Protocol):
    """One open write transaction (both backends)."""

    lock: str
    """`` FOR UPDATE`` on PostgreSQL, empty on SQLite (its writers are already serialized)."""

    def run(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Execute one statement; return its rows (empty when it has none)."""

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Execute one statement per row."""


class ClustererState(Protocol):
    """Holds the store's clusterer between batches (the Store)."""

    def clusterer_for(self, tx: Tx) -> TemplateClusterer:
        """The clusterer, current as of the locked state in ``tx``."""

    def save_clusterer(self, tx: Tx, clusterer: TemplateClusterer) -> None:
        """Write the clusterer state back (in ``tx``)."""


def _chunks(rows: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(rows), size):
        yield rows[start:start + size]


def insert_new(tx: Tx, table: str, columns: Sequence[str], key: Sequence[str],
               rows: Sequence[Sequence[Any]]) -> set[Any]:
    """Insert ``rows``, skipping those whose key exists; return the keys actually inserted."""
    if not rows:
        return set()
    width = len(columns)
    head = f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
    tail = f" ON CONFLICT ({', '.join(key)}) DO NOTHING RETURNING {', '.join(key)}"
    one = "(" + ", ".join("?" * width) + ")"
    inserted: set[Any] = set()
    for chunk in _chunks(rows, max(1, _CHUNK * 9 // width)):
        params = [value for row in chunk for value in row]
        result = tx.run(head + ", ".join([one] * len(chunk)) + tail, params)
        if len(key) == 1:
            inserted.update(row[0] for row in result)
        else:
            inserted.update(tuple(row) for row in result)
    return inserted


def _select_in(tx: Tx, sql: str, keys: Sequence[Any], suffix: str = "") -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for chunk in _chunks(keys, _CHUNK):
        marks = ", ".join("?" * len(chunk))
        out.extend(tx.run(f"{sql} IN ({marks}){suffix}", list(chunk)))
    return out


def event_row(event: Event) -> tuple[Any, ...]:
    """The ``events`` row of an event."""
    failure = event.failure
    signature = event.signature
    return (event.event_id, ts_micros(event.ts), event.event, event.session, event.step,
            event.source, signature, failure.code if failure is not None else None,
            event.to_json().decode())


def ingest(tx: Tx, events: Sequence[Event], clusters: ClustererState) -> int:
    """Store ``events`` (each once, by event id) and update every aggregate; return how many
    were new."""
    unique: dict[str, Event] = {}
    for event in events:
        unique.setdefault(event.event_id, event)
    rows = [event_row(event) for event in unique.values()]
    new_ids = insert_new(tx, "events", EVENT_COLUMNS, ("event_id",), rows)
    if not new_ids:
        return 0
    batch = sorted(((row[1], row[0], unique[row[0]]) for row in rows if row[0] in new_ids),
                   key=lambda item: (item[0], item[1]))
    _aggregate(tx, batch, clusters)
    return len(batch)


def _aggregate(tx: Tx, batch: list[tuple[int, str, Event]],  # noqa: PLR0915 - one pass, one order
               clusters: ClustererState) -> None:
    lock = tx.lock
    event_counts: Counter[str] = Counter()
    sigs: dict[str, list[Any]] = {}
    hourly: Counter[tuple[int, str]] = Counter()
    sessions: dict[str, list[Any]] = {}
    session_failures: dict[str, list[tuple[str, int]]] = {}
    remedies: list[tuple[int, Event]] = []
    for ts, event_id, event in batch:
        event_counts[event.event] += 1
        failure = event.failure
        session = event.session
        if session is not None:
            entry = sessions.get(session)
            if entry is None:
                sessions[session] = [1, 0, ts, ts]
            else:
                entry[0] += 1
                entry[3] = ts
        if failure is not None:
            sig = failure.signature
            info = sigs.get(sig)
            if info is None:
                sigs[sig] = [failure, 1, ts, ts, failure.message, event_id]
            else:
                info[1] += 1
                info[3] = ts
                info[4] = failure.message
                info[5] = event_id
            hourly[(ts - ts % HOUR_US, sig)] += 1
            if session is not None:
                sessions[session][1] += 1
                session_failures.setdefault(session, []).append((sig, ts))
        elif event.event == REMEDY_EVENT and event.remedy is not None:
            remedies.append((ts, event))

    # 1. signatures: make sure each has a row (new ones are clustered below)
    sig_keys = sorted(sigs)
    new_sigs = insert_new(tx, "signatures", (
        "signature", "code", "kind", "category", "error_class", "surface", "area", "count",
        "sessions", "first_us", "last_us", "last_message", "last_event_id"), ("signature",), [
        (sig, f.code, f.kind.value, f.category.value, f.error_class, f.surface,
         f.code.split("-")[1], 0, 0, first, last, msg, eid)
        for sig in sig_keys for f, _n, first, last, msg, eid in (sigs[sig],)])

    # 2. sessions: rows exist, then read their last signature and run (locked on PostgreSQL)
    session_keys = sorted(sessions)
    insert_new(tx, "sessions", ("session", "events", "failures", "first_us", "last_us",
                                "last_signature", "run"), ("session",),
               [(s, 0, 0, sessions[s][2], sessions[s][3], None, 0) for s in session_keys])
    state = {row[0]: [row[1], row[2]] for row in _select_in(
        tx, "SELECT session, last_signature, run FROM sessions WHERE session",
        session_keys, lock)} if session_keys else {}
    pairs: dict[tuple[str, str], list[int]] = {}
    for session in sorted(session_failures):
        current = state.setdefault(session, [None, 0])
        for sig, ts in session_failures[session]:
            current[1] = current[1] + 1 if current[0] == sig else 1
            current[0] = sig
            pair = pairs.get((session, sig))
            if pair is None:
                pairs[(session, sig)] = [1, current[1], ts, ts]
            else:
                pair[0] += 1
                pair[1] = max(pair[1], current[1])
                pair[3] = ts

    # 3. (session, signature) pairs: the new ones add a session to their signature
    pair_keys = sorted(pairs)
    new_pairs = insert_new(tx, "session_signatures", (
        "session", "signature", "count", "max_run", "first_us", "last_us"),
        ("session", "signature"),
        [(s, sig, 0, 0, pairs[(s, sig)][2], pairs[(s, sig)][3]) for s, sig in pair_keys])
    new_sessions: Counter[str] = Counter(sig for _s, sig in new_pairs)

    # 4. counters, additively (another writer may have added to the same rows)
    if sig_keys:
        tx.many(
            "UPDATE signatures SET count = count + ?, sessions = sessions + ?, "
            "first_us = CASE WHEN ? < first_us THEN ? ELSE first_us END, "
            "last_message = CASE WHEN ? >= last_us THEN ? ELSE last_message END, "
            "last_event_id = CASE WHEN ? >= last_us THEN ? ELSE last_event_id END, "
            "last_us = CASE WHEN ? > last_us THEN ? ELSE last_us END WHERE signature = ?",
            [(n, new_sessions[sig], first, first, last, msg, last, eid, last, last, sig)
             for sig in sig_keys for _f, n, first, last, msg, eid in (sigs[sig],)])
    if session_keys:
        tx.many(
            "UPDATE sessions SET events = events + ?, failures = failures + ?, "
            "first_us = CASE WHEN ? < first_us THEN ? ELSE first_us END, "
            "last_us = CASE WHEN ? > last_us THEN ? ELSE last_us END, "
            "last_signature = ?, run = ? WHERE session = ?",
            [(sessions[s][0], sessions[s][1], sessions[s][2], sessions[s][2], sessions[s][3],
              sessions[s][3], state.get(s, [None, 0])[0], state.get(s, [None, 0])[1], s)
             for s in session_keys])
    if pair_keys:
        tx.many(
            "UPDATE session_signatures SET count = count + ?, "
            "max_run = CASE WHEN ? > max_run THEN ? ELSE max_run END, "
            "first_us = CASE WHEN ? < first_us THEN ? ELSE first_us END, "
            "last_us = CASE WHEN ? > last_us THEN ? ELSE last_us END "
            "WHERE session = ? AND signature = ?",
            [(n, run, run, first, first, last, last, s, sig)
             for (s, sig) in pair_keys for n, run, first, last in (pairs[(s, sig)],)])
    if hourly:
        tx.many("INSERT INTO hourly (hour, signature, count) VALUES (?, ?, ?) "
                "ON CONFLICT (hour, signature) DO UPDATE SET count = hourly.count + "
                "excluded.count", [(h, sig, n) for (h, sig), n in sorted(hourly.items())])
    tx.many("INSERT INTO event_counts (event, count) VALUES (?, ?) ON CONFLICT (event) "
            "DO UPDATE SET count = event_counts.count + excluded.count",
            sorted(event_counts.items()))

    # 5. knowledge, then 6. clusters of the signatures seen for the first time
    if remedies:
        replay_remedies(tx, remedies)
    if new_sigs:
        clusterer = clusters.clusterer_for(tx)
        assign_clusters(tx, clusterer, [(sig, sigs[sig][4]) for sig in sig_keys
                                        if sig in new_sigs])
        clusters.save_clusterer(tx, clusterer)


def assign_clusters(tx: Tx, clusterer: TemplateClusterer,
                    messages: Sequence[tuple[str, str]]) -> None:
    """Add each new signature's message to the clusterer; record its cluster and template."""
    templates: dict[str, str] = {}
    assigned: list[tuple[str, str]] = []
    for sig, message in messages:
        match = clusterer.add(message)
        templates[match.cluster_id] = match.template
        assigned.append((match.cluster_id, sig))
    tx.many("INSERT INTO clusters (cluster_id, template) VALUES (?, ?) ON CONFLICT (cluster_id) "
            "DO UPDATE SET template = excluded.template", sorted(templates.items()))
    tx.many("UPDATE signatures SET cluster_id = ? WHERE signature = ?", assigned)


def replay_remedies(tx: Tx, remedies: Sequence[tuple[int, Event]]) -> None:
    """Apply remedy attempts, in time order, to the knowledge rows (locked on PostgreSQL)."""
    attempts: dict[tuple[str, str], list[tuple[int, bool]]] = {}
    for ts, event in remedies:
        remedy = event.remedy
        assert remedy is not None
        attempts.setdefault((remedy.signature, remedy.remedy), []).append((ts, remedy.worked))
    keys = sorted(attempts)
    insert_new(tx, "remedies", ("signature", "remedy", "tried", "worked", "failed",
                                "streak_failed", "first_us", "last_us"), ("signature", "remedy"),
               [(sig, text, 0, 0, 0, 0, attempts[(sig, text)][0][0],
                 attempts[(sig, text)][0][0]) for sig, text in keys])
    current: dict[tuple[str, str], int] = {}
    for sig, text in keys:
        rows = tx.run("SELECT streak_failed FROM remedies WHERE signature = ? AND remedy = ?"
                      + tx.lock, (sig, text))
        current[(sig, text)] = int(rows[0][0])
    updates = []
    for key in keys:
        streak = current[key]
        worked = failed = 0
        first = last = attempts[key][0][0]
        for ts, ok in attempts[key]:
            if ok:
                worked += 1
                streak = 0
            else:
                failed += 1
                streak += 1
            first, last = min(first, ts), max(last, ts)
        updates.append((worked + failed, worked, failed, streak, first, first, last, last, *key))
    tx.many("UPDATE remedies SET tried = tried + ?, worked = worked + ?, failed = failed + ?, "
            "streak_failed = ?, first_us = CASE WHEN ? < first_us THEN ? ELSE first_us END, "
            "last_us = CASE WHEN ? > last_us THEN ? ELSE last_us END "
            "WHERE signature = ? AND remedy = ?", updates)
