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

Repeats: an event whose id is stored is not stored again and changes no aggregate; the one
thing it can add is a step the stored event lacks (:func:`_fill_steps`).

Sessions: a session is the pair (session name, input), where an event's input is its failure's
(an outcome event: its outcome's) context value under ``triage.path`` (:data:`INPUT_KEY`) when
that is a string, else the empty string (events of sinks and live agents: one stream per
session name). :func:`event_input` is the rule; ``failcode triage --store`` records the path of
the file it read there, so the same session name in three files is three sessions, as triage
counts them. Runs of a signature in a row continue within one pair only. A session row is read
and locked (PostgreSQL) by its name, with the rows of every input of that name, in key order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Protocol

import msgspec

from failcode.events import REMEDY_EVENT, Event
from failcode.events._event import ts_micros
from failcode.store._schema import INPUT_KEY

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from failcode import TemplateClusterer

__all__ = ["HOUR_US", "Tx", "backfill_v4", "event_input", "ingest", "replay_remedies"]

HOUR_US: Final = 3_600_000_000
_CHUNK: Final = 400

_ENCODE: Final = msgspec.json.Encoder(order="deterministic").encode
"""The events' canonical JSON (as ``Event.to_json``), without a method call per event."""

EVENT_COLUMNS: Final = ("event_id", "ts_us", "event", "session", "step", "source", "signature",
                        "code", "body", "input")


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


def event_input(event: Event) -> str:
    """The input an event's session came from: its failure's context value under
    :data:`INPUT_KEY` (an outcome event: its outcome's), when a string; else ``""``."""
    subject = event.failure if event.failure is not None else event.outcome
    if subject is None:
        return ""
    value = subject.context.get(INPUT_KEY)
    return value if isinstance(value, str) else ""


def event_row(event: Event) -> tuple[Any, ...]:
    """The ``events`` row of an event (its input last: :func:`event_input`, inlined)."""
    failure = event.failure
    if failure is not None:
        signature: str | None = failure.signature
        code: str | None = failure.code
        source = failure.context.get(INPUT_KEY)
    else:
        signature = event.signature
        code = None
        outcome = event.outcome
        source = outcome.context.get(INPUT_KEY) if outcome is not None else None
    return (event.event_id, ts_micros(event.ts), event.event, event.session, event.step,
            event.source, signature, code, _ENCODE(event).decode(),
            source if isinstance(source, str) else "")


def ingest(tx: Tx, events: Sequence[Event], clusters: ClustererState,
           after: Callable[[Tx, list[Event]], None] | None = None) -> int:
    """Store ``events`` (each once, by event id) and update every aggregate; return how many
    were new. ``after`` is called in the same transaction with the new events (in time
    order), when there are any: what a layer above keeps beside the store's aggregates."""
    unique: dict[str, Event] = {}
    for event in events:
        if event.event_id not in unique:
            unique[event.event_id] = event
    rows = [event_row(event) for event in unique.values()]
    new_ids = tx.upsert("events", EVENT_COLUMNS, ("event_id",), rows, None)
    _fill_steps(tx, [event for event in unique.values()
                     if event.step is not None and event.event_id not in new_ids])
    if not new_ids:
        return 0
    # (time, id, event, input): ids are unique, so the sort never compares two events
    batch = sorted((row[1], row[0], unique[row[0]], row[9]) for row in rows
                   if row[0] in new_ids)
    _aggregate(tx, batch, clusters)
    if after is not None:
        after(tx, [entry[2] for entry in batch])
    return len(batch)


def _fill_steps(tx: Tx, repeated: list[Event]) -> None:
    """The one change a repeated event makes: a stored event of that id without a step takes
    the step the repeat knows (a call an agent's export reported first, then its hook with the
    call's place in the session). No aggregate depends on the step, so nothing else moves."""
    if not repeated:
        return
    steps = {event.event_id: event.step for event in repeated}
    from failcode.events._event import Event as Stored  # noqa: PLC0415 - decode at run time

    for start in range(0, len(repeated), _CHUNK):
        chunk = sorted(steps)[start:start + _CHUNK]
        stepless = tx.run(f"SELECT event_id, body FROM events WHERE event_id IN "
                          f"({', '.join('?' * len(chunk))}) AND step IS NULL", chunk)
        if stepless:
            tx.many("UPDATE events SET step = ?, body = ? WHERE event_id = ? AND step IS NULL",
                    [(steps[event_id], _ENCODE(msgspec.structs.replace(
                        Stored.from_json(body), step=steps[event_id])).decode(), event_id)
                     for event_id, body in stepless])


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
_SESSION_COLUMNS: Final = ("session", "input", "events", "failures", "first_us", "last_us",
                           "last_signature", "run")
_SESSION_KEY: Final = ("session", "input")
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
_PAIR_COLUMNS: Final = ("session", "input", "signature", "count", "max_run", "first_us",
                        "last_us")
_PAIR_KEY: Final = ("session", "input", "signature")
_PAIR_UPDATE: Final = (
    "count = session_signatures.count + excluded.count, "
    "max_run = CASE WHEN excluded.max_run > session_signatures.max_run "
    "THEN excluded.max_run ELSE session_signatures.max_run END, "
    "first_us = CASE WHEN excluded.first_us < session_signatures.first_us "
    "THEN excluded.first_us ELSE session_signatures.first_us END, "
    "last_us = CASE WHEN excluded.last_us > session_signatures.last_us "
    "THEN excluded.last_us ELSE session_signatures.last_us END")


def _aggregate(tx: Tx, batch: list[tuple[int, str, Event, str]],  # noqa: PLR0915 - one pass
               clusters: ClustererState) -> None:
    """Aggregate the new events of a batch in Python (one row per key), then write each
    aggregate table with one set-based upsert, in one global table order."""
    event_counts: dict[str, int] = {}
    sigs: dict[str, list[Any]] = {}
    hourly: dict[tuple[int, str], int] = {}
    sessions: dict[tuple[str, str], list[Any]] = {}  # (session, input)
    session_failures: dict[tuple[str, str], list[tuple[str, int]]] = {}
    remedies: list[tuple[int, Event]] = []
    for ts, event_id, event, source in batch:
        name = event.event
        event_counts[name] = event_counts.get(name, 0) + 1
        failure = event.failure
        session = event.session
        entry: list[Any] | None = None
        if session is not None:
            key = (session, source)
            entry = sessions.get(key)
            if entry is None:
                entry = sessions[key] = [1, 0, ts, ts]
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
            if entry is not None:  # the event has a session: key is its (session, input)
                entry[1] += 1
                failed = session_failures.get(key)
                if failed is None:
                    session_failures[key] = [(sig, ts)]
                else:
                    failed.append((sig, ts))
        elif name == REMEDY_EVENT and event.remedy is not None:
            remedies.append((ts, event))

    # 1. sessions: rows exist, then their last signature and run are read (and on PostgreSQL
    #    every session row of the batch's names locked, in key order: the rows of other inputs
    #    of a name too); the runs continue from there, within one (session, input) each
    session_items = sorted(sessions.items())
    session_keys = [key for key, _entry in session_items]
    state: dict[tuple[str, str], list[Any]] = {}
    if session_keys:
        tx.upsert("sessions", _SESSION_COLUMNS, _SESSION_KEY,
                  [(s, i, 0, 0, first, last, None, 0)
                   for (s, i), (_n, _nf, first, last) in session_items], None, want_new=False)
        wanted = set(session_keys if tx.lock else session_failures)
        state = {(row[0], row[1]): [row[2], row[3]] for row in _select_in(
            tx, "SELECT session, input, last_signature, run FROM sessions WHERE session",
            sorted({s for s, _i in wanted}), tx.lock) if (row[0], row[1]) in wanted}
    pairs: dict[tuple[str, str, str], list[int]] = {}
    for key in sorted(session_failures):
        current = state.setdefault(key, [None, 0])
        session, source = key
        for sig, ts in session_failures[key]:
            current[1] = current[1] + 1 if current[0] == sig else 1
            current[0] = sig
            pair = pairs.get((session, source, sig))
            if pair is None:
                pairs[(session, source, sig)] = [1, current[1], ts, ts]
            else:
                pair[0] += 1
                pair[1] = max(pair[1], current[1])
                pair[3] = ts

    # 2. (session, input, signature) pairs: a new one adds a session to its signature
    new_pairs = tx.upsert("session_signatures", _PAIR_COLUMNS, _PAIR_KEY, [
        (s, i, sig, n, run, first, last)
        for (s, i, sig), (n, run, first, last) in sorted(pairs.items())], _PAIR_UPDATE)
    new_sessions: dict[str, int] = {}
    for _s, _i, sig in new_pairs:
        new_sessions[sig] = new_sessions.get(sig, 0) + 1

    # 3. signatures, counters added (another writer may have added to the same rows)
    sig_keys = sorted(sigs)
    new_sigs = tx.upsert("signatures", _SIG_COLUMNS, ("signature",), [
        (sig, f.code, f.kind.value, f.category.value, f.error_class, f.surface,
         f.code.split("-")[1], n, new_sessions.get(sig, 0), first, last, msg, eid)
        for sig in sig_keys for f, n, first, last, msg, eid in (sigs[sig],)], _SIG_UPDATE)

    # 4. every session of the batch, then the hourly and per-name counters
    no_state = (None, 0)
    tx.upsert("sessions", _SESSION_COLUMNS, _SESSION_KEY, [
        (s, i, n, nf, first, last, *state.get((s, i), no_state))
        for (s, i), (n, nf, first, last) in session_items], _SESSION_UPDATE, want_new=False)
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


# -- version 4: sessions keyed by (session, input), recomputed from the stored events ---------

_PAGE: Final = 2000

_DECODE_BODY: Final = msgspec.json.Decoder().decode

# the failures of each (session, input) in time order, cut into runs of one signature in a
# row (islands: a row's place among its session's failures minus its place among the same
# signature's failures is constant along a run); rn of a run's last failure, so the run
# holding a session's last failure is the one whose last_rn is the session's failure count
_RUNS: Final = (
    "SELECT session, input, signature, count(*) AS n, max(rn) AS last_rn, "
    "min(ts_us) AS first_us, max(ts_us) AS last_us FROM ("
    "SELECT session, input, signature, ts_us, "
    "row_number() OVER (PARTITION BY session, input ORDER BY ts_us, event_id) AS rn, "
    "row_number() OVER (PARTITION BY session, input ORDER BY ts_us, event_id) - "
    "row_number() OVER (PARTITION BY session, input, signature ORDER BY ts_us, event_id) "
    "AS grp FROM events WHERE session IS NOT NULL AND code IS NOT NULL) r "
    "GROUP BY session, input, signature, grp")


def _body_input(body: str) -> str:
    """:func:`event_input` of a stored JSON body (read as plain JSON: no validation)."""
    try:
        data = _DECODE_BODY(body)
    except msgspec.DecodeError:
        return ""
    if not isinstance(data, dict):
        return ""
    subject = data.get("failure")
    if subject is None:
        subject = data.get("outcome")
    context = subject.get("context") if isinstance(subject, dict) else None
    value = context.get(INPUT_KEY) if isinstance(context, dict) else None
    return value if isinstance(value, str) else ""


def backfill_v4(tx: Tx) -> None:
    """Version 4 (see :mod:`failcode.store._schema`): fill ``events.input`` from the stored
    bodies, recompute ``sessions`` and ``session_signatures`` by (session, input) from the
    stored events, keep what pruned events counted, recount ``signatures.sessions``, and drop
    the version 3 tables (``sessions_v3``, ``session_signatures_v3``)."""
    # 1. inputs: only a body that names the key can have one (paged by event id)
    after = ""
    while True:
        rows = tx.run("SELECT event_id, body FROM events WHERE event_id > ? AND body LIKE ? "
                      "ORDER BY event_id LIMIT ?", (after, f'%"{INPUT_KEY}"%', _PAGE))
        tx.many("UPDATE events SET input = ? WHERE event_id = ?",
                [(source, event_id) for event_id, body in rows
                 if (source := _body_input(body))])
        if len(rows) < _PAGE:
            break
        after = rows[-1][0]

    # 2. the aggregates of the stored events, as ingest keeps them (runs in time order)
    tx.run("INSERT INTO sessions (session, input, events, failures, first_us, last_us, "
           "last_signature, run) SELECT session, input, count(*), count(code), min(ts_us), "
           "max(ts_us), NULL, 0 FROM events WHERE session IS NOT NULL GROUP BY session, input")
    tx.run("INSERT INTO session_signatures (session, input, signature, count, max_run, "
           "first_us, last_us) SELECT session, input, signature, sum(n), max(n), min(first_us), "
           f"max(last_us) FROM ({_RUNS}) runs GROUP BY session, input, signature")
    tx.many("UPDATE sessions SET last_signature = ?, run = ? WHERE session = ? AND input = ?", [
        (sig, n, session, source) for session, source, sig, n in tx.run(
            "SELECT r.session, r.input, r.signature, r.n FROM sessions s JOIN "
            f"({_RUNS}) r ON r.session = s.session AND r.input = s.input "
            "AND r.last_rn = s.failures")])

    # 3. what pruned events counted: a session name none of whose events is left keeps its
    #    version 3 rows, under the empty input ...
    tx.run("INSERT INTO session_signatures (session, input, signature, count, max_run, "
           "first_us, last_us) SELECT o.session, '', o.signature, o.count, o.max_run, "
           "o.first_us, o.last_us FROM session_signatures_v3 o WHERE NOT EXISTS "
           "(SELECT 1 FROM sessions t WHERE t.session = o.session)")
    tx.run("INSERT INTO sessions (session, input, events, failures, first_us, last_us, "
           "last_signature, run) SELECT o.session, '', o.events, o.failures, o.first_us, "
           "o.last_us, o.last_signature, o.run FROM sessions_v3 o WHERE NOT EXISTS "
           "(SELECT 1 FROM sessions t WHERE t.session = o.session)")
    #    ... and one with some of its events left is settled by _keep_pruned
    for row in tx.run(
            "SELECT o.session, o.events, o.failures, o.first_us, o.last_us, o.last_signature, "
            "o.run FROM sessions_v3 o JOIN (SELECT session, sum(events) AS n FROM sessions "
            "GROUP BY session) t ON t.session = o.session WHERE t.n < o.events"):
        _keep_pruned(tx, row)

    # 4. each signature's sessions: its (session, input) pairs
    tx.run("UPDATE signatures SET sessions = 0")
    tx.many("UPDATE signatures SET sessions = ? WHERE signature = ?", [
        (int(n), sig) for sig, n in tx.run(
            "SELECT signature, count(*) FROM session_signatures GROUP BY signature")])
    tx.run("DROP TABLE sessions_v3")
    tx.run("DROP TABLE session_signatures_v3")


def _keep_pruned(tx: Tx, old: Sequence[Any]) -> None:
    """A session name whose version 3 counts exceed its stored events (``prune`` deleted
    some): its stored events all of one input, that input takes the version 3 rows as they
    were; of several inputs, the input of the earliest stored event takes the pruned part."""
    session, events, failures, first_us = old[0], int(old[1]), int(old[2]), int(old[3])
    rows = tx.run("SELECT input, events, failures, first_us FROM sessions WHERE session = ? "
                  "ORDER BY first_us, input", (session,))
    old_pairs = tx.run("SELECT signature, count, max_run, first_us, last_us "
                       "FROM session_signatures_v3 WHERE session = ? ORDER BY signature",
                       (session,))
    earliest = rows[0][0]
    if len(rows) == 1:
        tx.run("DELETE FROM session_signatures WHERE session = ?", (session,))
        tx.run("DELETE FROM sessions WHERE session = ?", (session,))
        tx.run("INSERT INTO sessions (session, input, events, failures, first_us, last_us, "
               "last_signature, run) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
               (session, earliest, *old[1:]))
        tx.many("INSERT INTO session_signatures (session, input, signature, count, max_run, "
                "first_us, last_us) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(session, earliest, *pair) for pair in old_pairs])
        return
    tx.run("UPDATE sessions SET events = events + ?, failures = failures + ?, first_us = ? "
           "WHERE session = ? AND input = ?",
           (events - sum(int(r[1]) for r in rows),
            max(0, failures - sum(int(r[2]) for r in rows)),
            min(first_us, int(rows[0][3])), session, earliest))
    stored: dict[str, int] = {}
    mine: set[str] = set()
    for source, sig, count in tx.run("SELECT input, signature, count FROM session_signatures "
                                     "WHERE session = ?", (session,)):
        stored[sig] = stored.get(sig, 0) + int(count)
        if source == earliest:
            mine.add(sig)
    for sig, count, max_run, first, last in old_pairs:
        left = int(count) - stored.get(sig, 0)
        if left <= 0:
            continue
        if sig in mine:
            tx.run("UPDATE session_signatures SET count = count + ?, first_us = CASE WHEN ? < "
                   "first_us THEN ? ELSE first_us END WHERE session = ? AND input = ? AND "
                   "signature = ?", (left, first, first, session, earliest, sig))
        else:  # the pruned failures' last time is known only when none of them is left
            tx.run("INSERT INTO session_signatures (session, input, signature, count, "
                   "max_run, first_us, last_us) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (session, earliest, sig, left, min(int(max_run), left), first,
                    last if sig not in stored else first))
