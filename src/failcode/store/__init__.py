"""The failure event store: SQLite on one machine, PostgreSQL for a team, one set of queries.

::

    from failcode.store import open_store

    with open_store("sqlite:///failcode.db") as store:     # or postgresql://user@host/db
        store.append(events)                                 # durable, idempotent by event id
        store.diagnostics(limit=20)                          # the diagnostics table
        store.blame(by="area"), store.loops(), store.clusters(), store.history(signature)

The query functions (:func:`diagnostics`, :func:`blame`, :func:`loops`, :func:`clusters`,
:func:`history`, :func:`known_remedies`, :func:`stats`) are pure functions over anything with
``fetch(sql, params)``, a Store included; the Store's methods call them with its knowledge
thresholds. Every failure to open, write or read is a :class:`StoreError` carrying an FC-STORE
Failure, never a driver's traceback.
"""

from __future__ import annotations

from failcode.store._queries import (
    Blame,
    Cluster,
    Database,
    Diagnostic,
    KnownRemedy,
    Loop,
    SignatureHistory,
    StoreStats,
    blame,
    clusters,
    diagnostics,
    history,
    known_remedies,
    loops,
    stats,
)
from failcode.store._schema import SCHEMA_VERSION
from failcode.store._store import (
    DEFAULT_DEMOTE_AFTER,
    DEFAULT_PROMOTE_AFTER,
    Store,
    StoreError,
    default_store_url,
    open_store,
)

__all__ = [
    "DEFAULT_DEMOTE_AFTER",
    "DEFAULT_PROMOTE_AFTER",
    "SCHEMA_VERSION",
    "Blame",
    "Cluster",
    "Database",
    "Diagnostic",
    "KnownRemedy",
    "Loop",
    "SignatureHistory",
    "Store",
    "StoreError",
    "StoreStats",
    "blame",
    "clusters",
    "default_store_url",
    "diagnostics",
    "history",
    "known_remedies",
    "loops",
    "open_store",
    "stats",
]
