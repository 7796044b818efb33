"""The team backend: PostgreSQL through psycopg 3 and a psycopg_pool connection pool.

Many machines append to one database at once: every batch is one transaction, idempotent by
event id (``ON CONFLICT DO NOTHING``); rows whose new value depends on the old are read
``FOR UPDATE``; a deadlock or serialization failure makes the store run the batch again.

Read-only (``read_only=True``): every connection of the pool runs its transactions
``READ ONLY`` (``default_transaction_read_only``), so a role that may only ``SELECT`` reads the
store and nothing (no table, no migration) is ever written. A URL the driver cannot parse is
FC-STORE-001.
"""

from __future__ import annotations

import weakref
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from failcode import FC

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from failcode import Failure

__all__ = ["PostgresBackend"]

_SCHEMA_LOCK: Final = 0x6661696C  # an advisory lock id ("fail") serializing migrations
_SQL_CACHE: dict[str, str] = {}


def _pg(sql: str) -> str:
    converted = _SQL_CACHE.get(sql)
    if converted is None:
        converted = sql.replace("?", "%s")
        if len(_SQL_CACHE) < 4096:
            _SQL_CACHE[sql] = converted
    return converted


_STAGED: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
"""Per connection: the tables whose temporary staging table exists on it (a table created in a
transaction that rolled back is taken out again)."""


class _Tx:
    lock = " FOR UPDATE"

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor
        self._used: set[str] = set()
        self.created: set[str] = set()
        """Staging tables this transaction created (gone again if it rolls back)."""

    def _stage(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
        """COPY ``rows`` into the connection's temporary staging table of ``table`` (emptied
        at commit or rollback, and before a second use in one transaction)."""
        cursor = self._cursor
        stage = f"_fc_stage_{table}"
        made = _STAGED.setdefault(cursor.connection, set())
        if table not in made:
            cursor.execute(f"CREATE TEMPORARY TABLE IF NOT EXISTS {stage} (LIKE {table}) "
                           "ON COMMIT DELETE ROWS")
            made.add(table)
            self.created.add(table)
        elif table in self._used:
            cursor.execute(f"DELETE FROM {stage}")
        self._used.add(table)
        with cursor.copy(f"COPY {stage} ({', '.join(columns)}) FROM STDIN") as copy:
            write = copy.write_row
            for row in rows:
                write(row)
        return stage

    def run(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cursor = self._cursor
        cursor.execute(_pg(sql), params)
        return cursor.fetchall() if cursor.description is not None else []

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self._cursor.executemany(_pg(sql), rows)

    def upsert(self, table: str, columns: Sequence[str], key: Sequence[str],
               rows: Sequence[Sequence[Any]], update: str | None, *,
               want_new: bool = True) -> set[Any]:
        if not rows:
            return set()
        stage = self._stage(table, columns, rows)
        names = ", ".join(columns)
        keys = ", ".join(key)
        # key order: concurrent writers lock rows in one order (no deadlock between batches)
        sql = (f"INSERT INTO {table} ({names}) SELECT {names} FROM {stage} ORDER BY {keys} "
               f"ON CONFLICT ({keys}) DO ")
        if update is None:
            sql += "NOTHING" + (f" RETURNING {keys}" if want_new else "")
        else:
            # a row just inserted has no xmax; one updated by ON CONFLICT has this transaction's
            sql += f"UPDATE SET {update}" + (f" RETURNING {keys}, xmax = 0" if want_new else "")
        cursor = self._cursor
        cursor.execute(sql)
        if not want_new:
            return set()
        width = len(key)
        result = cursor.fetchall()
        if update is not None:
            result = [row[:width] for row in result if row[width]]
        return {row[0] for row in result} if width == 1 else {tuple(row) for row in result}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def _read_only(connection: Any) -> None:
    """Make every transaction of ``connection`` READ ONLY (a pool's configure hook)."""
    connection.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    connection.commit()


class PostgresBackend:
    """The PostgreSQL backend of :class:`~failcode.store.Store` (``postgresql://...``)."""

    name = "postgresql"

    def __init__(self, url: str, *, timeout_s: float, max_connections: int = 4,
                 read_only: bool = False) -> None:
        from failcode.store._store import StoreError, _bad_url, _safe_url  # noqa: PLC0415

        self.url = _safe_url(url)
        try:
            import psycopg  # noqa: PLC0415 - the optional dependency of this backend
            from psycopg_pool import ConnectionPool  # noqa: PLC0415 - idem
        except ImportError as exc:
            raise StoreError(FC.STORE_UNREACHABLE.failure(surface="store.postgresql", params={
                "url": self.url, "problem": f"{exc.name} is not installed "
                                            "(pip install 'failcode[postgres]')"})) from None
        self._psycopg = psycopg
        try:
            port = psycopg.conninfo.conninfo_to_dict(url).get("port")
            if port is not None and not all(p.strip().isdigit() for p in str(port).split(",")):
                raise _bad_url(self.url, f"the port {port} is not a number")
        except psycopg.Error as exc:
            raise _bad_url(self.url, _first_line(exc)) from None
        timeout = max(1, round(timeout_s))
        try:
            # one direct connection first: its error says why (the pool's only times out)
            psycopg.connect(url, connect_timeout=timeout, autocommit=True).close()
        except psycopg.Error as exc:
            raise StoreError(self._opening(exc)) from None
        self._pool = ConnectionPool(url, min_size=1, max_size=max_connections, open=False,
                                    timeout=timeout_s, kwargs={"connect_timeout": timeout},
                                    name="failcode-store",
                                    configure=_read_only if read_only else None)
        try:
            self._pool.open(wait=True, timeout=timeout_s)
        except Exception as exc:  # noqa: BLE001 - the pool's errors are classified below
            self._pool.close()
            raise StoreError(self._opening(exc)) from None

    @contextmanager
    def write(self) -> Iterator[_Tx]:
        from failcode.store._store import Retry  # noqa: PLC0415 - import cycle

        errors = self._psycopg.errors
        try:
            with self._pool.connection() as connection, connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '30s'")
                tx = _Tx(cursor)
                try:
                    yield tx
                except BaseException:
                    # the transaction rolls back, and a staging table it created with it: the
                    # connection must create it again (else a retried batch finds none)
                    _STAGED.get(connection, set()).difference_update(tx.created)
                    raise
        except (errors.DeadlockDetected, errors.SerializationFailure):
            raise Retry from None

    def lock_schema(self, tx: Any) -> None:
        """Serialize concurrent migrations (an advisory lock held until commit)."""
        tx.run("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))

    @contextmanager
    def read(self) -> Iterator[_Tx]:
        with self._pool.connection() as connection, connection.cursor() as cursor:
            yield _Tx(cursor)

    def has_table(self, tx: Any, name: str) -> bool:
        rows = tx.run("SELECT 1 FROM information_schema.tables WHERE table_schema = "
                      "current_schema() AND table_name = ?", (name,))
        return bool(rows)

    def failure(self, exc: BaseException, *, writing: bool) -> Failure | None:
        """The FC-STORE failure of a psycopg or pool error (FC-STORE-011 for anything
        else raised while opening)."""
        psycopg = self._psycopg
        errors = psycopg.errors
        url = self.url
        problem = _first_line(exc)
        lowered = problem.lower()
        surface = "store.postgresql"
        if isinstance(exc, errors.DiskFull):
            return FC.STORE_DISK_FULL.failure(surface=surface, params={"url": url})
        if isinstance(exc, (errors.InsufficientPrivilege, errors.InvalidPassword,
                            errors.InvalidAuthorizationSpecification)) or (
                "authentication failed" in lowered or "permission denied" in lowered
                or ("role" in lowered and "does not exist" in lowered)):
            return FC.STORE_ACCESS_DENIED.failure(surface=surface, params={
                "url": url, "problem": problem})
        if isinstance(exc, errors.ReadOnlySqlTransaction):
            return FC.STORE_READ_ONLY.failure(surface=surface, params={
                "url": url, "problem": problem})
        if isinstance(exc, errors.LockNotAvailable):
            return FC.STORE_LOCKED.failure(surface=surface, params={"url": url,
                                                                    "timeout_s": 30})
        if isinstance(exc, psycopg.ProgrammingError) and (
                "dsn" in lowered or "conninfo" in lowered or "connection option" in lowered):
            return FC.STORE_BAD_URL.failure(surface=surface, params={
                "url": url, "problem": problem})
        if isinstance(exc, psycopg.OperationalError) and not writing:
            return FC.STORE_UNREACHABLE.failure(surface=surface, params={
                "url": url, "problem": problem})
        if type(exc).__name__ == "PoolTimeout":
            return FC.STORE_UNREACHABLE.failure(surface=surface, params={
                "url": url, "problem": problem})
        if isinstance(exc, psycopg.Error):
            return FC.STORE_WRITE_FAILED.failure(surface=surface, params={
                "url": url, "problem": problem})
        return None

    def _opening(self, exc: BaseException) -> Failure:
        return self.failure(exc, writing=False) or FC.STORE_WRITE_FAILED.failure(
            surface="store.postgresql", params={"url": self.url, "problem": _first_line(exc)})

    def close(self) -> None:
        self._pool.close()
