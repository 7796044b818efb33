"""Ingest: store a batch of events once each and update every aggregate in the same transaction.

Shared by both backends; it talks to the database only through :class:`Tx`, whose SQL uses
``?`` placeholders and portable statements (``INSERT ... ON CONFLICT``, ``RETURNING``,
``CASE``). A batch is aggregated in Python first (one row per key), then each table gets one
:meth:`Tx.upsert` with the same conflict clause on both backends: ``executemany`` of one
prepared statement on SQLite, ``COPY`` into a temporary table and one ``INSERT ... SELECT`` on
PostgreSQL.

Concurrency: SQLite writers are serialized by ``BEGIN IMMEDIATE``. On PostgreSQL, rows whose
update depends on their current value (a session's last signature, a remedy's failure streak,
the clusterer state) are read ``FOR UPDATE``, every table is touched in one global order and
keys in sorted order, and counters are updated additively; a deadlock or serialization failure
retries the whole batch (appends are idempotent by event id, so a retry stores nothing twice).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Protocol

import msgspec

from failcode.events import REMEDY_EVENT, Event
from failcode.events._event import ts_micros

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from failcode import TemplateClusterer

__all__ = ["HOUR_US", "Tx", "ingest", "replay_remedies"]

HOUR_US: Final = 3_600_000_000
_CHUNK: Final = 400

_ENCODE: Final = msgspec.json.Encoder(order="deterministic").encode
"""The events' canonical JSON (as ``Event.to_json``), without a method call per event."""

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

    def upsert(self, table: str, columns: Sequence[str], key: Sequence[str],
               rows: Sequence[Sequence[Any]], update: str | None, *,
               want_new: bool = True) -> set[Any]:
        """Insert ``rows`` (the ``key`` columns first, each key once); a row whose key exists
        is skipped (``update`` None) or updated by ``ON CONFLICT (key) DO UPDATE SET update``.
        Returns the keys that had no row before (empty unless ``want_new``).

        SQLite runs one prepared statement over the rows (``executemany``); PostgreSQL COPYs
        them into a temporary table and runs one ``INSERT ... SELECT ... ON CONFLICT``.
        """


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
    return tx.upsert(table, columns, key, rows, None)


def _select_in(tx: Tx, sql: str, keys: Sequence[Any], suffix: str = "") -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for chunk in _chunks(keys, _CHUNK):
        marks = ", ".join("?" * len(chunk))
        out.extend(tx.run(f"{sql} IN ({marks}){suffix}", list(chunk)))
    return out


def event_row(event: Event) -> tuple[Any, ...]:
    """The ``events`` row of an event."""
    failure = event.failure
    if failure is not None:
        signature: str | None = failure.signature
        code: str | None = failure.code
    else:
        signature = event.signature
        code = None
    return (event.event_id, ts_micros(event.ts), event.event, event.session, event.step,
            event.source, signature, code, _ENCODE(event).decode())


def ingest(tx: Tx, events: Sequence[Event], clusters: ClustererState) -> int:
    """Store ``events`` (each once, by event id) and update every aggregate; return how many
    were new."""
    unique: dict[str, Event] = {}
    for event in events:
        if event.event_id not in unique:
            unique[event.event_id] = event
    rows = [event_row(event) for event in unique.values()]
    new_ids = tx.upsert("events", EVENT_COLUMNS, ("event_id",), rows, None)
    if not new_ids:
        return 0
    batch = sorted((row[1], row[0], unique[row[0]]) for row in rows if row[0] in new_ids)
    _aggregate(tx, batch, clusters)
    return len(batch)


_SIG_COLUMNS: Final = ("signature", "code", "kind", "category", "error_class", "surface", "area",
                       "count", "sessions", "first_us", "last_us", "last_message",
                       "last_event_id")
_SIG_UPDATE: Final = (
    "count = signatures.count + excluded.count, "
    "sessions = signatures.sessions + excluded.sessions, "
    "first_us = CASE WHEN excluded.first_us < signatures.first_us THEN excluded.first_us "
    "ELSE signatures.first_us END, "
    "last_message = CASE WHEN excluded.last_us >= signatures.last_us "
    "THEN excluded.last_message ELSE signatures.last_message END, "
    "last_event_id = CASE WHEN excluded.last_us >= signatures.last_us "
    "THEN excluded.last_event_id ELSE signatures.last_event_id END, "
    "last_us = CASE WHEN excluded.last_us > signatures.last_us THEN excluded.last_us "
    "ELSE signatures.last_us END")
_SESSION_COLUMNS: Final = ("session", "events", "failures", "first_us", "last_us",
                           "last_signature", "run")
# a session with failures in the batch had its state read (and locked) first: run > 0 says so
_SESSION_UPDATE: Final = (
    "events = sessions.events + excluded.events, "
    "failures = sessions.failures + excluded.failures, "
    "first_us = CASE WHEN excluded.first_us < sessions.first_us THEN excluded.first_us "
    "ELSE sessions.first_us END, "
    "last_us = CASE WHEN excluded.last_us > sessions.last_us THEN excluded.last_us "
    "ELSE sessions.last_us END, "
    "last_signature = CASE WHEN excluded.run > 0 THEN excluded.last_signature "
    "ELSE sessions.last_signature END, "
    "run = CASE WHEN excluded.run > 0 THEN excluded.run ELSE sessions.run END")
_PAIR_COLUMNS: Final = ("session", "signature", "count", "max_run", "first_us", "last_us")
_PAIR_UPDATE: Final = (
    "count = session_signatures.count + excluded.count, "
    "max_run = CASE WHEN excluded.max_run > session_signatures.max_run "
    "THEN excluded.max_run ELSE session_signatures.max_run END, "
    "first_us = CASE WHEN excluded.first_us < session_signatures.first_us "
    "THEN excluded.first_us ELSE session_signatures.first_us END, "
    "last_us = CASE WHEN excluded.last_us > session_signatures.last_us "
    "THEN excluded.last_us ELSE session_signatures.last_us END")


def _aggregate(tx: Tx, batch: list[tuple[int, str, Event]],  # noqa: PLR0915 - one pass
               clusters: ClustererState) -> None:
    """Aggregate the new events of a batch in Python (one row per key), then write each
    aggregate table with one set-based upsert, in one global table order."""
    event_counts: dict[str, int] = {}
    sigs: dict[str, list[Any]] = {}
    hourly: dict[tuple[int, str], int] = {}
    sessions: dict[str, list[Any]] = {}
    session_failures: dict[str, list[tuple[str, int]]] = {}
    remedies: list[tuple[int, Event]] = []
    for ts, event_id, event in batch:
        name = event.event
        event_counts[name] = event_counts.get(name, 0) + 1
        failure = event.failure
        session = event.session
        entry: list[Any] | None = None
        if session is not None:
            entry = sessions.get(session)
            if entry is None:
                entry = sessions[session] = [1, 0, ts, ts]
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
            hour = (ts - ts % HOUR_US, sig)
            hourly[hour] = hourly.get(hour, 0) + 1
            if session is not None and entry is not None:
                entry[1] += 1
                failed = session_failures.get(session)
                if failed is None:
                    session_failures[session] = [(sig, ts)]
                else:
                    failed.append((sig, ts))
        elif name == REMEDY_EVENT and event.remedy is not None:
            remedies.append((ts, event))

    # 1. sessions: rows exist, then their last signature and run are read (and every session
    #    row of the batch locked, in key order, on PostgreSQL); the runs continue from there
    session_keys = sorted(sessions)
    state: dict[str, list[Any]] = {}
    if session_keys:
        tx.upsert("sessions", _SESSION_COLUMNS, ("session",),
                  [(s, 0, 0, sessions[s][2], sessions[s][3], None, 0) for s in session_keys],
                  None, want_new=False)
        state = {row[0]: [row[1], row[2]] for row in _select_in(
            tx, "SELECT session, last_signature, run FROM sessions WHERE session",
            session_keys if tx.lock else sorted(session_failures), tx.lock)}
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

    # 2. (session, signature) pairs: a new one adds a session to its signature
    new_pairs = tx.upsert("session_signatures", _PAIR_COLUMNS, ("session", "signature"), [
        (s, sig, n, run, first, last)
        for (s, sig), (n, run, first, last) in sorted(pairs.items())], _PAIR_UPDATE)
    new_sessions: dict[str, int] = {}
    for _s, sig in new_pairs:
        new_sessions[sig] = new_sessions.get(sig, 0) + 1

    # 3. signatures, counters added (another writer may have added to the same rows)
    sig_keys = sorted(sigs)
    new_sigs = tx.upsert("signatures", _SIG_COLUMNS, ("signature",), [
        (sig, f.code, f.kind.value, f.category.value, f.error_class, f.surface,
         f.code.split("-")[1], n, new_sessions.get(sig, 0), first, last, msg, eid)
        for sig in sig_keys for f, n, first, last, msg, eid in (sigs[sig],)], _SIG_UPDATE)

    # 4. every session of the batch, then the hourly and per-name counters
    no_state = (None, 0)
    tx.upsert("sessions", _SESSION_COLUMNS, ("session",), [
        (s, n, nf, first, last, *state.get(s, no_state))
        for s in session_keys for n, nf, first, last in (sessions[s],)], _SESSION_UPDATE,
        want_new=False)
    tx.upsert("hourly", ("hour", "signature", "count"), ("hour", "signature"),
              [(h, sig, n) for (h, sig), n in sorted(hourly.items())],
              "count = hourly.count + excluded.count", want_new=False)
    tx.upsert("event_counts", ("event", "count"), ("event",), sorted(event_counts.items()),
              "count = event_counts.count + excluded.count", want_new=False)

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
