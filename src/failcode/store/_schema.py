"""The store's versioned schema, one DDL text for both backends, and its migrations.

Every table but ``events`` is an aggregate kept at ingest, in the transaction that stores the
events, so reading counts never scans events and pruning events keeps them:

==================  =========================================================================
table               one row per
==================  =========================================================================
meta                setting: ``schema_version``, the clusterer's state and its version
events              event (its JSON body plus the columns queries filter on)
signatures          signature: code, kind, category, counts, first/last seen, sessions
                    (its distinct (session, input) pairs)
sessions            (session, input): counts, the last failing signature and its run length
session_signatures  (session, input, signature): counts and the longest run in a row
hourly              (hour, signature): counts, for time-ranged diagnostics and blame
event_counts        event name: counts (stats)
remedies            (signature, remedy): tried, worked, failed, the current failure streak (v2)
clusters            template cluster of signatures (v2)
==================  =========================================================================

Times are integer microseconds since the Unix epoch (UTC) in both backends, so results agree
to the microsecond. Version 1 had no knowledge and no clusters; version 2 adds them and
backfills both from the stored events.

Version 3 is about write cost (each index is one more B-tree page written per event, and a
random one when the key is not time-ordered):

- ``events`` is indexed by ``event_id`` (idempotence), by ``(signature, ts_us)`` (a signature's
  history) and by ``ts_us`` (time ranges, ``prune``, ``stats``); the ``(session, ts_us)``
  index is gone. A session filter with a time range reads the range through ``ts_us``; every
  other session filter reads ``session_signatures``.
- On SQLite, ``events`` is a rowid table again: its rows carry the JSON body (about 1 KiB),
  and a WITHOUT ROWID table keeps whole rows in its interior pages (a few per page, a deep
  tree); rows now append in arrival order and the ULID index appends in time order.
  ``session_signatures``, ``hourly``, ``sessions`` and ``event_counts`` are WITHOUT ROWID
  (small rows, one B-tree each instead of a table plus its primary-key index).

On PostgreSQL (heap tables, no WITHOUT ROWID) version 3 only swaps the session index for the
time index. SQLite rebuilds the tables it changes, copying every row.

Version 4: a session is a (session, input) pair, as triage counts sessions. The same session
name in three input files (three runs of one benchmark instance) is three sessions: three rows
of ``sessions``, their own pairs in ``session_signatures`` (so a run of one signature never
continues from one input into another), and three in ``signatures.sessions``.

- An event's *input* is the string its failure's context holds under :data:`INPUT_KEY`
  (``triage.path``: the path ``failcode triage --store`` read the session from; an outcome
  event: the outcome's context), else the empty string. Events from sinks, live agents and
  ``failcode store import`` carry no ``triage.path``: each session name is one stream, one
  session. Only a string counts; any other value of the key is no input.
- ``events`` gains the column ``input`` (``''`` when none), so a session filter with a time
  range can count the pairs, and ``sessions`` / ``session_signatures`` are keyed by
  ``(session, input)`` / ``(session, input, signature)``. The name comes first in both keys: a
  filter by session name reads a key prefix (the rows of every input of that name).
- The migration fills ``events.input`` from the stored JSON bodies and recomputes the session
  aggregates from the stored events, in time order, in the migration's transaction (the
  store's migrations are one transaction). Events that ``prune`` deleted cannot be
  recomputed: a session name whose version 3 counts exceed what its stored events say keeps
  them. With its stored events all of one input (or none left: the empty input) its version 3
  rows move to that input unchanged; with several inputs, each input's rows are recomputed and
  the pruned part (counts, and a pair whose events are all pruned, with its longest run capped
  at its count) goes to the input of the name's earliest stored event (``prune`` deletes the
  oldest events first). ``signatures.sessions`` is then recounted from the pairs.
"""

from __future__ import annotations

from typing import Final

__all__ = ["INPUT_KEY", "SCHEMA_VERSION", "ddl"]

SCHEMA_VERSION: Final = 4
"""The schema version this failcode creates and migrates to."""

INPUT_KEY: Final = "triage.path"
"""The context key that names an event's input (see the module): where ``failcode triage
--store`` records the path of the file a session came from (``triage.`` + ``path``, the
``TRIAGE_PREFIX`` of :mod:`failcode.triage`, which the store may not import)."""

_V1: Final = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE events (
    event_id TEXT PRIMARY KEY,
    ts_us BIGINT NOT NULL,
    event TEXT NOT NULL,
    session TEXT,
    step BIGINT,
    source TEXT,
    signature TEXT,
    code TEXT,
    body TEXT NOT NULL
){without_rowid};
CREATE INDEX events_signature ON events (signature, ts_us);
CREATE INDEX events_session ON events (session, ts_us);
CREATE TABLE signatures (
    signature TEXT PRIMARY KEY,
    code TEXT NOT NULL,
    kind TEXT NOT NULL,
    category TEXT NOT NULL,
    error_class TEXT NOT NULL,
    surface TEXT NOT NULL,
    area TEXT NOT NULL,
    count BIGINT NOT NULL,
    sessions BIGINT NOT NULL,
    first_us BIGINT NOT NULL,
    last_us BIGINT NOT NULL,
    last_message TEXT NOT NULL,
    last_event_id TEXT NOT NULL
);
CREATE INDEX signatures_count ON signatures (count);
CREATE TABLE sessions (
    session TEXT PRIMARY KEY,
    events BIGINT NOT NULL,
    failures BIGINT NOT NULL,
    first_us BIGINT NOT NULL,
    last_us BIGINT NOT NULL,
    last_signature TEXT,
    run BIGINT NOT NULL
);
CREATE TABLE session_signatures (
    session TEXT NOT NULL,
    signature TEXT NOT NULL,
    count BIGINT NOT NULL,
    max_run BIGINT NOT NULL,
    first_us BIGINT NOT NULL,
    last_us BIGINT NOT NULL,
    PRIMARY KEY (session, signature)
);
CREATE TABLE hourly (
    hour BIGINT NOT NULL,
    signature TEXT NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (hour, signature)
);
CREATE TABLE event_counts (event TEXT PRIMARY KEY, count BIGINT NOT NULL);
"""

_V2: Final = """
CREATE TABLE remedies (
    signature TEXT NOT NULL,
    remedy TEXT NOT NULL,
    tried BIGINT NOT NULL,
    worked BIGINT NOT NULL,
    failed BIGINT NOT NULL,
    streak_failed BIGINT NOT NULL,
    first_us BIGINT NOT NULL,
    last_us BIGINT NOT NULL,
    PRIMARY KEY (signature, remedy)
);
CREATE TABLE clusters (cluster_id TEXT PRIMARY KEY, template TEXT NOT NULL);
ALTER TABLE signatures ADD COLUMN cluster_id TEXT;
"""

_V3_POSTGRES: Final = """
DROP INDEX events_session;
CREATE INDEX events_ts ON events (ts_us);
"""

# SQLite cannot change a table's storage in place: build the new table, copy, drop, rename
# (the indexes are made after the rename, so their names stay those of version 2)
_V3_SQLITE: Final = """
CREATE TABLE events_v3 (
    event_id TEXT NOT NULL,
    ts_us BIGINT NOT NULL,
    event TEXT NOT NULL,
    session TEXT,
    step BIGINT,
    source TEXT,
    signature TEXT,
    code TEXT,
    body TEXT NOT NULL
);
INSERT INTO events_v3 (event_id, ts_us, event, session, step, source, signature, code, body)
    SELECT event_id, ts_us, event, session, step, source, signature, code, body FROM events
    ORDER BY ts_us, event_id;
DROP TABLE events;
ALTER TABLE events_v3 RENAME TO events;
CREATE UNIQUE INDEX events_id ON events (event_id);
CREATE INDEX events_signature ON events (signature, ts_us);
CREATE INDEX events_ts ON events (ts_us);
CREATE TABLE sessions_v3 (
    session TEXT PRIMARY KEY,
    events BIGINT NOT NULL,
    failures BIGINT NOT NULL,
    first_us BIGINT NOT NULL,
    last_us BIGINT NOT NULL,
    last_signature TEXT,
    run BIGINT NOT NULL
) WITHOUT ROWID;
INSERT INTO sessions_v3 SELECT session, events, failures, first_us, last_us, last_signature,
    run FROM sessions;
DROP TABLE sessions;
ALTER TABLE sessions_v3 RENAME TO sessions;
CREATE TABLE session_signatures_v3 (
    session TEXT NOT NULL,
    signature TEXT NOT NULL,
    count BIGINT NOT NULL,
    max_run BIGINT NOT NULL,
    first_us BIGINT NOT NULL,
    last_us BIGINT NOT NULL,
    PRIMARY KEY (session, signature)
) WITHOUT ROWID;
INSERT INTO session_signatures_v3 SELECT session, signature, count, max_run, first_us, last_us
    FROM session_signatures;
DROP TABLE session_signatures;
ALTER TABLE session_signatures_v3 RENAME TO session_signatures;
CREATE TABLE hourly_v3 (
    hour BIGINT NOT NULL,
    signature TEXT NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (hour, signature)
) WITHOUT ROWID;
INSERT INTO hourly_v3 SELECT hour, signature, count FROM hourly;
DROP TABLE hourly;
ALTER TABLE hourly_v3 RENAME TO hourly;
CREATE TABLE event_counts_v3 (event TEXT PRIMARY KEY, count BIGINT NOT NULL) WITHOUT ROWID;
INSERT INTO event_counts_v3 SELECT event, count FROM event_counts;
DROP TABLE event_counts;
ALTER TABLE event_counts_v3 RENAME TO event_counts
"""

# Version 4: the old session tables are renamed out of the way (the migration recomputes the
# new ones from the events, then drops them: _ingest.backfill_v4); PostgreSQL names a primary
# key's index after its table, so the old indexes are renamed too
_V4_COMMON: Final = """
ALTER TABLE events ADD COLUMN input TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions RENAME TO sessions_v3;
ALTER TABLE session_signatures RENAME TO session_signatures_v3;
{rename_indexes}
CREATE TABLE sessions (
    session TEXT NOT NULL,
    input TEXT NOT NULL,
    events BIGINT NOT NULL,
    failures BIGINT NOT NULL,
    first_us BIGINT NOT NULL,
    last_us BIGINT NOT NULL,
    last_signature TEXT,
    run BIGINT NOT NULL,
    PRIMARY KEY (session, input)
){without_rowid};
CREATE TABLE session_signatures (
    session TEXT NOT NULL,
    input TEXT NOT NULL,
    signature TEXT NOT NULL,
    count BIGINT NOT NULL,
    max_run BIGINT NOT NULL,
    first_us BIGINT NOT NULL,
    last_us BIGINT NOT NULL,
    PRIMARY KEY (session, input, signature)
){without_rowid}
"""

_V4_POSTGRES: Final = _V4_COMMON.replace("{rename_indexes}", """
ALTER INDEX sessions_pkey RENAME TO sessions_v3_pkey;
ALTER INDEX session_signatures_pkey RENAME TO session_signatures_v3_pkey;""")
_V4_SQLITE: Final = _V4_COMMON.replace("{rename_indexes}", "")

STEPS: Final = {1: _V1, 2: _V2, 3: _V3_POSTGRES, 4: _V4_POSTGRES}
"""The DDL that brings a store from version ``n - 1`` to ``n`` (PostgreSQL's where the
backends differ; :func:`ddl` gives each backend its own)."""

_SQLITE_STEPS: Final = {3: _V3_SQLITE, 4: _V4_SQLITE}


def ddl(version: int, *, sqlite: bool) -> list[str]:
    """The statements of step ``version`` for one backend."""
    text = _SQLITE_STEPS.get(version, STEPS[version]) if sqlite else STEPS[version]
    text = text.replace("{without_rowid}", " WITHOUT ROWID" if sqlite else "")
    return [statement.strip() for statement in text.split(";") if statement.strip()]
