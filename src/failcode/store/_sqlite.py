"""The embedded backend: one SQLite file in WAL mode, batched durable appends.

Writers take the write lock at the start of each batch (``BEGIN IMMEDIATE``), so several
processes can append to one file. With WAL and ``synchronous=NORMAL`` a committed batch is in
the WAL file when ``append`` returns, so it survives the process being killed (an OS crash may
lose the last batches). Readers never block writers (WAL).

Read-only (``read_only=True``): the file must exist; it is opened with the ``file:...?mode=ro``
URI (no folder made, no ``journal_mode`` set, ``query_only`` on), so it reads a live writer's
WAL through the ``-shm`` index. When that cannot be opened (a read-only mount or folder, where
the ``-shm`` file cannot be created) and no ``-wal`` file with content is left, it is opened
``immutable=1``: there is no WAL to miss and nobody can be writing it.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

from failcode import FC

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from failcode import Failure

__all__ = ["SqliteBackend"]

# sqlite3 primary result codes (the extended code's low byte)
_BUSY: Final = 5
_LOCKED: Final = 6
_READONLY: Final = 8
_IOERR: Final = 10
_CORRUPT: Final = 11
_FULL: Final = 13
_CANTOPEN: Final = 14
_PERM: Final = 3
_NOTADB: Final = 26


_NEARLY_FULL: Final = 1024 * 1024
"""Free bytes below which an I/O error of SQLite is taken for a full disk."""
_IN_CHUNK: Final = 500
_CHECKPOINT_PAGES: Final = 8192
"""WAL pages (4 KiB) after which a commit checkpoints (SQLite's default: 1000)."""
_WAL_LIMIT: Final = 64 * 1024 * 1024
"""The WAL file is truncated to this many bytes after a checkpoint."""
_CACHE_KIB: Final = 32 * 1024
"""The page cache per connection (SQLite's default: 2 MiB)."""


class _Tx:
    lock = ""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def run(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._connection.execute(sql, params).fetchall()

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self._connection.executemany(sql, rows)

    def _existing(self, table: str, key: Sequence[str],
                  keys: Sequence[Any]) -> set[Any]:
        """The keys among ``keys`` that have a row (the write lock is held: no race)."""
        execute = self._connection.execute
        found: set[Any] = set()
        if len(key) == 1:
            head = f"SELECT {key[0]} FROM {table} WHERE {key[0]} IN ("
            for start in range(0, len(keys), _IN_CHUNK):
                chunk = keys[start:start + _IN_CHUNK]
                rows = execute(head + ",".join("?" * len(chunk)) + ")", chunk).fetchall()
                found.update(row[0] for row in rows)
            return found
        # a join on a VALUES list searches the primary key once per key; a row-value
        # ``(a, b) IN (VALUES ...)`` scans the whole table (SQLite 3.40's plan)
        names = ", ".join(f"t.{name}" for name in key)
        on = " AND ".join(f"t.{name} = v.column{n}" for n, name in enumerate(key, 1))
        mark = "(" + ",".join("?" * len(key)) + ")"
        for start in range(0, len(keys), _IN_CHUNK):
            chunk = keys[start:start + _IN_CHUNK]
            params = [value for item in chunk for value in item]
            rows = execute(f"SELECT {names} FROM (VALUES {','.join([mark] * len(chunk))}) v "
                           f"CROSS JOIN {table} t ON {on}", params).fetchall()
            found.update(rows)
        return found

    def upsert(self, table: str, columns: Sequence[str], key: Sequence[str],
               rows: Sequence[Sequence[Any]], update: str | None, *,
               want_new: bool = True) -> set[Any]:
        if not rows:
            return set()
        marks = ", ".join("?" * len(columns))
        head = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"
        if update is None and not want_new:  # rows that exist stay: no keys to report
            self._connection.executemany(f"{head} ON CONFLICT ({', '.join(key)}) DO NOTHING",
                                         rows)
            return set()
        width = len(key)
        keys = ([row[0] for row in rows] if width == 1
                else [tuple(row[:width]) for row in rows])
        existing = self._existing(table, key, keys) if (want_new or update is None) else set()
        if update is None:
            fresh = [row for row, k in zip(rows, keys, strict=True) if k not in existing]
            if fresh:
                self._connection.executemany(head, fresh)
        else:
            self._connection.executemany(
                f"{head} ON CONFLICT ({', '.join(key)}) DO UPDATE SET {update}", rows)
        return {k for k in keys if k not in existing} if want_new else set()


class SqliteBackend:
    """The SQLite backend of :class:`~failcode.store.Store` (``sqlite:///path``)."""

    name = "sqlite"

    def __init__(self, path: str, *, display: str, timeout_s: float,
                 read_only: bool = False) -> None:
        self.path = Path(path)
        self.url = display
        self._timeout = timeout_s
        self._lock = threading.Lock()
        try:
            if read_only:
                self._connection = self._open_read_only()
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._connection = sqlite3.connect(
                    self.path, timeout=timeout_s, isolation_level=None,
                    check_same_thread=False)
                self._refuse_foreign()  # before journal_mode changes a byte of the file
                self._connection.execute("PRAGMA journal_mode=WAL").fetchall()
                self._connection.execute("PRAGMA synchronous=NORMAL")
                # a larger WAL between checkpoints copies a page updated by many batches (the
                # aggregates) once, and a larger cache keeps the indexes' hot pages in memory
                self._connection.execute(f"PRAGMA wal_autocheckpoint={_CHECKPOINT_PAGES}")
                self._connection.execute(f"PRAGMA journal_size_limit={_WAL_LIMIT}")
            self._connection.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
            self._connection.execute("PRAGMA foreign_keys=OFF")
        except (sqlite3.Error, OSError, ValueError) as exc:
            failure = (FC.STORE_BAD_URL.failure(surface="store.sqlite", params={
                "url": self.url, "problem": str(exc)}) if isinstance(exc, ValueError)
                else self.failure(exc, writing=not read_only))
            from failcode.store._store import StoreError  # noqa: PLC0415 - import cycle

            raise StoreError(failure) from None

    def _refuse_foreign(self) -> None:
        """FC-STORE-004 for a database of something else (tables, no failcode ``meta``)."""
        names = {row[0] for row in self._connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}
        if names and "meta" not in names:
            self._connection.close()
            from failcode.store._store import StoreError  # noqa: PLC0415 - import cycle

            raise StoreError(FC.STORE_CORRUPT.failure(surface="store.open", params={
                "url": self.url, "problem": "it holds tables but no failcode schema"}))

    def _open_read_only(self) -> sqlite3.Connection:
        """The existing file, opened read-only (see the module)."""
        from failcode.store._store import _bad_url  # noqa: PLC0415 - import cycle

        path = self.path.absolute()
        if not path.is_file():
            raise _bad_url(self.url, f"no store exists at {path} (a command that only reads "
                                     "creates none; `failcode triage --store` or `failcode "
                                     "store import` does)")
        base = "file:" + quote(str(path)) + "?mode=ro"
        connection = sqlite3.connect(base, uri=True, timeout=self._timeout,
                                     isolation_level=None, check_same_thread=False)
        try:
            connection.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except sqlite3.OperationalError as exc:
            connection.close()
            code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
            wal = path.with_name(path.name + "-wal")
            if code != _CANTOPEN or (wal.exists() and wal.stat().st_size > 0):
                raise
            connection = sqlite3.connect(base + "&immutable=1", uri=True,
                                         timeout=self._timeout, isolation_level=None,
                                         check_same_thread=False)
        connection.execute("PRAGMA query_only=1")
        return connection

    @contextmanager
    def write(self) -> Iterator[_Tx]:
        with self._lock:
            connection = self._connection
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield _Tx(connection)
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise

    @contextmanager
    def read(self) -> Iterator[_Tx]:
        with self._lock:
            yield _Tx(self._connection)

    def has_table(self, tx: Any, name: str) -> bool:
        rows = tx.run("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
        return bool(rows)

    def lock_schema(self, tx: Any) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` already serializes writers."""

    def failure(self, exc: BaseException, *, writing: bool) -> Failure:
        """The FC-STORE failure of a SQLite or OS error."""
        url = self.url
        if isinstance(exc, OSError):
            return FC.STORE_READ_ONLY.failure(surface="store.sqlite", params={
                "url": url, "problem": exc.strerror or type(exc).__name__})
        if not isinstance(exc, sqlite3.Error):
            return FC.STORE_WRITE_FAILED.failure(surface="store.sqlite", params={
                "url": url, "problem": f"{type(exc).__name__}: {exc}"})
        code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
        text = str(exc)
        if code in (_BUSY, _LOCKED) or "locked" in text:
            return FC.STORE_LOCKED.failure(surface="store.sqlite", params={
                "url": url, "timeout_s": self._timeout})
        if code == _FULL or (code == _IOERR and self._disk_full()):
            return FC.STORE_DISK_FULL.failure(surface="store.sqlite", params={"url": url})
        if code in (_CORRUPT, _NOTADB):
            return FC.STORE_CORRUPT.failure(surface="store.sqlite", params={
                "url": url, "problem": text})
        if code in (_READONLY, _CANTOPEN, _PERM):
            return FC.STORE_READ_ONLY.failure(surface="store.sqlite", params={
                "url": url, "problem": text})
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(
                exc, sqlite3.OperationalError):
            return FC.STORE_CORRUPT.failure(surface="store.sqlite", params={
                "url": url, "problem": text})
        del writing
        return FC.STORE_WRITE_FAILED.failure(surface="store.sqlite", params={
            "url": url, "problem": text})

    def _disk_full(self) -> bool:
        """Whether the file system of the store has (almost) no space left: SQLite reports a
        full disk as an I/O error where the ``-shm`` file or the WAL cannot grow."""
        try:
            found = os.statvfs(self.path.absolute().parent)
        except (OSError, ValueError):
            return False
        root = getattr(os, "geteuid", lambda: -1)() == 0
        free = found.f_bfree if root else found.f_bavail
        return free * found.f_frsize < _NEARLY_FULL

    def close(self) -> None:
        with self._lock:
            self._connection.close()
