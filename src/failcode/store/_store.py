"""The store: one interface over two backends, chosen by URL.

:class:`Store` is a :class:`~failcode.events.Sink` (``emit`` buffers, ``flush`` writes one
durable batch) with :meth:`Store.append` for explicit batches, the queries of
:mod:`failcode.store._queries` as methods, and the migrations. A backend supplies connections,
transactions and the mapping of its driver's exceptions to FC-STORE failures; everything else
is shared, so both backends run the same statements and answer with the same results.

Opening for reading (``open_store(url, read_only=True)``, what every command that only reads
uses): the store must exist (a URL naming no store is FC-STORE-001, and nothing is created);
nothing is written (no folder, no file, no ``-wal``/``-shm``, no migration, no ``journal_mode``
change): SQLite opens the file with the ``mode=ro`` URI, and, when the folder cannot hold the
``-shm`` file (a read-only mount) and no WAL is left over, with ``immutable=1``; PostgreSQL
runs every transaction ``READ ONLY``. A store of an older schema is migrated once by a
writing open first (that needs write access). A read-only store refuses ``append``, ``emit``
and ``prune`` with FC-STORE-005.

URL parsing never raises anything but FC-STORE-001: a NUL character, a malformed host or port,
a query or fragment on a ``sqlite://`` URL (``?mode=ro``: failcode chooses the mode itself).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import weakref
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol
from urllib.parse import urlsplit

from failcode import FC, FailureError, TemplateClusterer
from failcode.events import Event, remedy_event
from failcode.store import _queries as _q
from failcode.store._ingest import Tx, assign_clusters, backfill_v4, ingest, replay_remedies
from failcode.store._schema import SCHEMA_VERSION, ddl

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from types import TracebackType

    from failcode import Failure
    from failcode.store._queries import (
        Blame,
        Cluster,
        Diagnostic,
        KnownRemedy,
        Loop,
        SignatureHistory,
        StoreStats,
    )

__all__ = ["DEFAULT_DEMOTE_AFTER", "DEFAULT_PROMOTE_AFTER", "Backend", "Retry", "Store",
           "StoreError", "default_store_url", "open_store"]

DEFAULT_PROMOTE_AFTER: Final = 3
"""Successes after which a remedy becomes the signature's known remedy."""
DEFAULT_DEMOTE_AFTER: Final = 2
"""Failures in a row after which a known remedy is demoted."""
ENV_VAR: Final = "FAILCODE_STORE"


class StoreError(FailureError):
    """A store could not be opened, written or read: carries an FC-STORE :class:`Failure`."""


class Backend(Protocol):
    """What a backend provides to :class:`Store`."""

    url: str
    """The store's URL with any password removed."""
    name: str
    """``sqlite`` or ``postgresql``."""

    def write(self) -> Any:
        """A context manager yielding a :class:`Tx`: one write transaction, committed on exit."""

    def read(self) -> Any:
        """A context manager yielding a :class:`Tx` for reading."""

    def has_table(self, tx: Tx, name: str) -> bool:
        """Whether the table exists."""

    def lock_schema(self, tx: Tx) -> None:
        """Serialize concurrent migrations until the transaction ends."""

    def failure(self, exc: BaseException, *, writing: bool) -> Failure | None:
        """The FC-STORE failure of a driver exception, or None when it is not the driver's."""

    def close(self) -> None:
        """Release connections."""


def default_store_url() -> str:
    """``$FAILCODE_STORE`` when set, else the embedded store in the user data directory
    (``platformdirs.user_data_dir("failcode")/failcode.db``)."""
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return env
    import platformdirs  # noqa: PLC0415 - only the default path needs it

    return "sqlite:///" + str(Path(platformdirs.user_data_dir("failcode")) / "failcode.db")


def _bad_url(url: str, problem: str) -> StoreError:
    return StoreError(FC.STORE_BAD_URL.failure(surface="store.open",
                                               params={"url": url, "problem": problem}))


def open_store(url: str | os.PathLike[str] | None = None, *,
               promote_after: int = DEFAULT_PROMOTE_AFTER,
               demote_after: int = DEFAULT_DEMOTE_AFTER, batch: int = 500,
               flush_interval_s: float = 0.1, timeout_s: float = 5.0,
               read_only: bool = False) -> Store:
    """Open the store at ``url``, creating it and migrating its schema as needed (with
    ``read_only``: an existing store, opened for reading only; see the module).

    Args:
        url: ``sqlite:///relative/or/absolute.db`` (``sqlite:////abs.db`` works too), a plain
            path ending in ``.db``, or ``postgresql://user:pass@host:port/db``; a
            :class:`pathlib.Path` (any ``os.PathLike``) is the SQLite file it names; None: see
            :func:`default_store_url`. Any other value is FC-STORE-001 naming it.
        promote_after: successes after which a remedy is the signature's known remedy.
        demote_after: failures in a row after which a known remedy is demoted.
        batch: events :meth:`Store.emit` buffers before it writes them as one transaction.
        flush_interval_s: an emit also writes the buffer when its oldest event is this old.
        timeout_s: how long to wait for a lock or a connection.
        read_only: open an existing store without writing anything; a missing store is
            FC-STORE-001.

    Raises:
        StoreError: FC-STORE-001 bad URL, -002 unreachable, -003 locked, -004 corrupt,
            -005 not writable, -007 schema newer than this failcode, -010 access denied.
    """
    url = _store_url(url)
    backend = _backend(url.strip(), timeout_s=timeout_s, read_only=read_only)
    store = Store(backend, read_only=read_only, promote_after=promote_after,
                  demote_after=demote_after, batch=batch, flush_interval_s=flush_interval_s)
    try:
        found = store.readable() if read_only else store.migrate()
    except BaseException:
        backend.close()
        raise
    if read_only and found < SCHEMA_VERSION:  # an older schema: migrated once, then read
        backend.close()
        options: dict[str, Any] = {
            "promote_after": promote_after, "demote_after": demote_after, "batch": batch,
            "flush_interval_s": flush_interval_s, "timeout_s": timeout_s}
        open_store(url, **options).close()
        return open_store(url, read_only=True, **options)
    return store


def _store_url(url: object) -> str:
    """The URL ``open_store`` was given, as text: a path-like value is the SQLite file it
    names; anything else but a string is FC-STORE-001 naming the value and what is expected."""
    if url is None:
        return default_store_url()
    if isinstance(url, str):
        return url
    if isinstance(url, os.PathLike):
        path = os.fspath(url)
        if isinstance(path, str):
            return path
    shown = _printable_url(repr(url))[:200]
    raise _bad_url(shown, f"a store URL is a str (sqlite:///path/failcode.db, "
                          f"postgresql://...) or a pathlib.Path of a SQLite file, not "
                          f"{type(url).__name__}")


def _printable_url(url: str) -> str:
    """``url`` without its password and with control characters escaped (it is printed)."""
    text = "".join(f"\\x{ord(ch):02x}" if ord(ch) < 32 or 0x7F <= ord(ch) <= 0x9F else ch
                   for ch in url)
    try:
        return _safe_url(text)
    except ValueError:
        return text


def _backend(text: str, *, timeout_s: float, read_only: bool) -> Backend:
    """The backend the URL names; every malformed URL is FC-STORE-001."""
    if any(ord(ch) < 32 for ch in text):
        raise _bad_url(_printable_url(text), "it holds a control character (a NUL?)")
    try:
        parts = urlsplit(text) if "://" in text else None
        scheme = parts.scheme.lower() if parts is not None else ""
        if scheme in ("postgresql", "postgres") and parts is not None:
            _ = parts.port  # a port that is no number raises here
    except ValueError as exc:
        raise _bad_url(_printable_url(text), str(exc)) from None
    if scheme == "sqlite" or (not scheme and text):
        from failcode.store._sqlite import SqliteBackend  # noqa: PLC0415 - chosen by URL

        path = text[len("sqlite://"):] if scheme else text
        if scheme:
            if not path.startswith("/"):
                raise _bad_url(text, "expected sqlite:///path/to/failcode.db")
            if "?" in path or "#" in path:
                raise _bad_url(text, "a sqlite URL takes no query or fragment (failcode opens "
                                     "a store read-only itself when it only reads)")
            path = path[1:]
        if not path or path.endswith("/"):
            raise _bad_url(text, "the URL names no database file")
        return SqliteBackend(path, display=text if scheme else f"sqlite:///{path}",
                             timeout_s=timeout_s, read_only=read_only)
    if scheme in ("postgresql", "postgres"):
        from failcode.store._postgres import PostgresBackend  # noqa: PLC0415 - chosen by URL

        return PostgresBackend(text, timeout_s=timeout_s, read_only=read_only)
    raise _bad_url(_printable_url(text), f"unknown scheme {scheme or '(none)'}; expected "
                                         "sqlite or postgresql")


def _safe_url(url: str) -> str:
    """``url`` without its password."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return parts._replace(netloc=netloc).geturl()


_RETRYABLE_TX: Final = 8


class Store:
    """An event store: a :class:`~failcode.events.Sink` plus the queries over its aggregates.

    Build it with :func:`open_store`. Thread-safe; one instance per process is enough.
    ``emit`` buffers events and writes them in batches (on a full buffer, when the oldest
    buffered event is ``flush_interval_s`` old, on ``flush``, on ``close`` and at exit);
    :meth:`append` writes a batch now and returns once it is durable.
    """

    def __init__(self, backend: Backend, *, promote_after: int, demote_after: int,
                 batch: int, flush_interval_s: float, read_only: bool = False) -> None:
        if promote_after < 1 or demote_after < 1 or batch < 1:
            msg = "promote_after, demote_after and batch must be >= 1"
            raise ValueError(msg)
        self.backend = backend
        self.url = backend.url
        self.read_only = read_only
        self.promote_after = promote_after
        self.demote_after = demote_after
        self._batch = batch
        self._interval = flush_interval_s
        self._buffer: list[Event] = []
        self._oldest = 0.0
        self._lock = threading.RLock()
        self._closed = False
        self._clusterer: TemplateClusterer | None = None
        self._clusterer_version = -1
        # at exit, a store still open flushes its buffer (finalize runs live objects at exit)
        self._finalizer = weakref.finalize(self, _close_at_exit, weakref.ref(self))

    # -- errors --------------------------------------------------------------------------
    @contextmanager
    def _classified(self, *, writing: bool) -> Iterator[None]:
        try:
            yield
        except FailureError:
            raise
        except Exception as exc:
            failure = self.backend.failure(exc, writing=writing)
            if failure is None:
                raise
            raise StoreError(failure) from None

    # -- schema --------------------------------------------------------------------------
    def migrate(self) -> int:
        """Create the schema or migrate it to :data:`SCHEMA_VERSION`; return the version the
        store had (0: new). Every step, and what it recomputes from the stored events, runs in
        one transaction (:mod:`failcode.store._schema`).

        Raises:
            StoreError: FC-STORE-007 when the store's schema is newer than this failcode, or
                FC-STORE-004 when the database holds other tables but no failcode schema.
        """
        sqlite = self.backend.name == "sqlite"
        with self._classified(writing=True), self.backend.write() as tx:
            self.backend.lock_schema(tx)
            if self.backend.has_table(tx, "meta"):
                rows = tx.run("SELECT value FROM meta WHERE key = 'schema_version'")
                found = int(rows[0][0]) if rows else 0
            elif sqlite and tx.run("SELECT count(*) FROM sqlite_master")[0][0]:
                raise StoreError(FC.STORE_CORRUPT.failure(surface="store.open", params={
                    "url": self.url, "problem": "it holds tables but no failcode schema"}))
            else:
                found = 0
            if found > SCHEMA_VERSION:
                raise StoreError(FC.STORE_SCHEMA_NEWER.failure(surface="store.open", params={
                    "url": self.url, "found": found, "supported": SCHEMA_VERSION}))
            for version in range(found + 1, SCHEMA_VERSION + 1):
                for statement in ddl(version, sqlite=sqlite):
                    tx.run(statement)
                if version == 2:
                    self._backfill_v2(tx)
                elif version == 4:
                    backfill_v4(tx)  # sessions by (session, input), from the stored events
                tx.run("INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
                       "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (str(version),))
        return found

    def _backfill_v2(self, tx: Tx) -> None:
        """Version 2 adds knowledge and clusters: rebuild both from what version 1 stored."""
        tx.run("INSERT INTO meta (key, value) VALUES ('clusterer_version', '0') "
               "ON CONFLICT (key) DO NOTHING")
        rows = tx.run("SELECT signature, last_message FROM signatures "
                      "ORDER BY first_us, signature")
        clusterer = TemplateClusterer()
        if rows:
            assign_clusters(tx, clusterer, [(row[0], row[1]) for row in rows])
        self.save_clusterer(tx, clusterer)
        remedies = [(int(row[0]), Event.from_json(row[1])) for row in tx.run(
            "SELECT ts_us, body FROM events WHERE event = 'remedy.applied' "
            "ORDER BY ts_us, event_id")]
        if remedies:
            replay_remedies(tx, remedies)

    def readable(self) -> int:
        """Check, without writing, that the store holds a failcode schema this failcode reads;
        return its version (older than :data:`SCHEMA_VERSION`: it needs migrating).

        Raises:
            StoreError: FC-STORE-001 no failcode store at the URL, -004 a database of
                something else, -007 a newer schema.
        """
        sqlite = self.backend.name == "sqlite"
        with self._classified(writing=False), self.backend.read() as tx:
            if not self.backend.has_table(tx, "meta"):
                if sqlite and tx.run("SELECT count(*) FROM sqlite_master")[0][0]:
                    raise StoreError(FC.STORE_CORRUPT.failure(surface="store.open", params={
                        "url": self.url, "problem": "it holds tables but no failcode schema"}))
                raise _bad_url(self.url, "no failcode store exists there (a command that only "
                                         "reads creates none; `failcode triage --store` or "
                                         "`failcode store import` does)")
            rows = tx.run("SELECT value FROM meta WHERE key = 'schema_version'")
            found = int(rows[0][0]) if rows else 0
        if found > SCHEMA_VERSION:
            raise StoreError(FC.STORE_SCHEMA_NEWER.failure(surface="store.open", params={
                "url": self.url, "found": found, "supported": SCHEMA_VERSION}))
        return found

    def _refuse_if_read_only(self) -> None:
        if self.read_only:
            raise StoreError(FC.STORE_READ_ONLY.failure(surface="store.write", params={
                "url": self.url, "problem": "it was opened read-only, by a command that only "
                                            "reads"}))

    def schema_version(self) -> int:
        """The schema version of the store."""
        with self._classified(writing=False), self.backend.read() as tx:
            return int(tx.run("SELECT value FROM meta WHERE key = 'schema_version'")[0][0])

    # -- the clusterer, shared through the store -----------------------------------------
    def clusterer_for(self, tx: Tx) -> TemplateClusterer:
        """The clusterer as of the state locked in ``tx`` (reloaded when another writer
        changed it)."""
        rows = tx.run("SELECT value FROM meta WHERE key = 'clusterer_version'" + tx.lock)
        version = int(rows[0][0]) if rows else 0
        if self._clusterer is None or version != self._clusterer_version:
            state = tx.run("SELECT value FROM meta WHERE key = 'clusterer'")
            self._clusterer = (TemplateClusterer.from_json(state[0][0]) if state
                               else TemplateClusterer())
            self._clusterer_version = version
        return self._clusterer

    def save_clusterer(self, tx: Tx, clusterer: TemplateClusterer) -> None:
        """Write the clusterer's state and bump its version (in ``tx``)."""
        self._clusterer_version = max(self._clusterer_version, 0) + 1
        tx.run("INSERT INTO meta (key, value) VALUES ('clusterer', ?) ON CONFLICT (key) "
               "DO UPDATE SET value = excluded.value", (clusterer.to_json().decode(),))
        tx.run("INSERT INTO meta (key, value) VALUES ('clusterer_version', ?) "
               "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
               (str(self._clusterer_version),))
        self._clusterer = clusterer

    # -- writing -------------------------------------------------------------------------
    def append(self, events: Iterable[Event], *,
               after: Callable[[Tx, list[Event]], None] | None = None) -> int:
        """Store a batch in one transaction; return how many events were new.

        Idempotent by event id: a batch appended twice (a retried request) is stored once.
        When it returns, the batch is durable; when it raises, nothing of the batch is
        stored and everything acknowledged before stays.

        ``after(tx, new_events)`` runs inside that transaction with the events that were new
        (none: not called), so what a layer above keeps about them (the service's findings)
        is written with them or not at all. It may run more than once when the backend asks
        for the transaction to be repeated (a deadlock): it must not act outside ``tx``.

        Raises:
            StoreError: FC-STORE-003 locked, -006 full, -005 not writable, -011 refused.
        """
        batch = list(events)
        if not batch:
            return 0
        self._refuse_if_read_only()
        for attempt in range(_RETRYABLE_TX):
            try:
                with self._lock, self._classified(writing=True), self.backend.write() as tx:
                    return ingest(tx, batch, self, after)
            except Retry:
                self._clusterer = None
                time.sleep(0.01 * (attempt + 1))
        with self._lock, self._classified(writing=True), self.backend.write() as tx:
            return ingest(tx, batch, self, after)

    def emit(self, event: Event) -> None:
        """Buffer one event; the buffer is written as one batch when full or old enough."""
        with self._lock:
            if self._closed:
                msg = f"the store {self.url} is closed"
                raise ValueError(msg)
            self._refuse_if_read_only()
            if not self._buffer:
                self._oldest = time.monotonic()
            self._buffer.append(event)
            if (len(self._buffer) >= self._batch
                    or time.monotonic() - self._oldest >= self._interval):
                self.flush()

    def flush(self) -> None:
        """Write the buffered events as one durable batch.

        Raises:
            StoreError: as :meth:`append`; the events stay buffered for the next flush.
        """
        with self._lock:
            if self._buffer:
                self.append(self._buffer)
                self._buffer = []

    def close(self) -> None:
        """Flush and release the connections; closing twice is harmless."""
        with self._lock:
            if self._closed:
                return
            try:
                self.flush()
            finally:
                self._closed = True
                self.backend.close()
                self._finalizer.detach()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, typ: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        """One write transaction for tables a layer above keeps in the store's database
        (committed on exit, rolled back when the block raises); errors are FC-STORE failures.

        Raises:
            StoreError: as :meth:`append`.
        """
        self._refuse_if_read_only()
        with self._lock, self._classified(writing=True), self.backend.write() as tx:
            yield tx

    @contextmanager
    def snapshot(self) -> Iterator[Tx]:
        """One read transaction: every query in the block sees the same committed state."""
        with self._classified(writing=False), self.backend.read() as tx:
            yield tx

    # -- reading -------------------------------------------------------------------------
    def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one read query (``?`` placeholders) and return its rows: the connection the
        query functions of :mod:`failcode.store` take."""
        with self._classified(writing=False), self.backend.read() as tx:
            rows: list[tuple[Any, ...]] = tx.run(sql, params)
            return rows

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.backend.name

    def prune(self, older_than_s: float, *, now_us: int | None = None) -> int:
        """Delete events older than ``older_than_s`` seconds; aggregates and knowledge stay.
        Returns how many events were deleted."""
        self._refuse_if_read_only()
        current = time.time_ns() // 1000 if now_us is None else now_us
        cutoff = current - int(older_than_s * 1_000_000)
        with self._lock, self._classified(writing=True), self.backend.write() as tx:
            rows = tx.run("DELETE FROM events WHERE ts_us < ? RETURNING event_id", (cutoff,))
        return len(rows)

    # -- the queries of failcode.store, with this store's knowledge thresholds ------------
    def diagnostics(self, **filters: Any) -> list[Diagnostic]:
        """:func:`failcode.store.diagnostics` over this store."""
        return _q.diagnostics(self, promote_after=self.promote_after,
                              demote_after=self.demote_after, **filters)

    def blame(self, **filters: Any) -> list[Blame]:
        """:func:`failcode.store.blame` over this store."""
        return _q.blame(self, **filters)

    def loops(self, **filters: Any) -> list[Loop]:
        """:func:`failcode.store.loops` over this store."""
        return _q.loops(self, **filters)

    def clusters(self, **filters: Any) -> list[Cluster]:
        """:func:`failcode.store.clusters` over this store."""
        return _q.clusters(self, **filters)

    def history(self, signature: str, **filters: Any) -> SignatureHistory:
        """:func:`failcode.store.history` over this store."""
        return _q.history(self, signature, promote_after=self.promote_after,
                          demote_after=self.demote_after, **filters)

    def known_remedies(self, signature: str) -> list[KnownRemedy]:
        """The remedies tried on ``signature``, best first (``render_developer`` shows them)."""
        return _q.known_remedies(self, signature, promote_after=self.promote_after,
                                 demote_after=self.demote_after)

    def record_remedy(self, signature: str, remedy: str, *, worked: bool,
                      session: str | None = None) -> None:
        """Record (durably, now) that ``remedy`` was tried on ``signature``."""
        self.append([remedy_event(signature, remedy, worked=worked, session=session,
                                  source="store")])

    def stats(self) -> StoreStats:
        """:func:`failcode.store.stats` over this store."""
        return _q.stats(self)

    def __repr__(self) -> str:
        return f"Store({self.url!r})"


class Retry(Exception):  # noqa: N818 - a signal between a backend and the store
    """A backend's transient conflict (deadlock, serialization): run the batch again."""


def _close_at_exit(ref: weakref.ReferenceType[Store]) -> None:
    store = ref()
    if store is not None and not store._closed:
        with contextlib.suppress(Exception):  # at exit nothing can report it any more
            store.close()

