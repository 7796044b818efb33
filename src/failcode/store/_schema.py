"""The store's versioned schema, one DDL text for both backends, and its migrations.

Every table but ``events`` is an aggregate kept at ingest, in the transaction that stores the
events, so reading counts never scans events and pruning events keeps them:

==================  =========================================================================
table               one row per
==================  =========================================================================
meta                setting: ``schema_version``, the clusterer's state and its version
events              event (its JSON body plus the columns queries filter on)
signatures          signature: code, kind, category, counts, first/last seen, sessions
sessions            session: counts, the last failing signature and its run length
session_signatures  (session, signature): counts and the longest run in a row
hourly              (hour, signature): counts, for time-ranged diagnostics and blame
event_counts        event name: counts (stats)
remedies            (signature, remedy): tried, worked, failed, the current failure streak (v2)
clusters            template cluster of signatures (v2)
==================  =========================================================================

Times are integer microseconds since the Unix epoch (UTC) in both backends, so results agree
to the microsecond. Version 1 had no knowledge and no clusters; version 2 adds them and
backfills both from the stored events.
"""

from __future__ import annotations

from typing import Final

__all__ = ["SCHEMA_VERSION", "ddl"]

SCHEMA_VERSION: Final = 2
"""The schema version this failcode creates and migrates to."""

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

STEPS: Final = {1: _V1, 2: _V2}
"""The DDL that brings a store from version ``n - 1`` to ``n``."""


def ddl(version: int, *, sqlite: bool) -> list[str]:
    """The statements of step ``version`` for one backend."""
    text = STEPS[version].replace("{without_rowid}", " WITHOUT ROWID" if sqlite else "")
    return [statement.strip() for statement in text.split(";") if statement.strip()]
