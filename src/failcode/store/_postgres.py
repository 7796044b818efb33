"""The team backend: PostgreSQL through psycopg 3 and a psycopg_pool connection pool.

Many machines append to one database at once: every batch is one transaction, idempotent by
event id (``ON CONFLICT DO NOTHING``); rows whose new value depends on the old are read
``FOR UPDATE``; a deadlock or serialization failure makes the store run the batch again.
"""

from __future__ import annotations

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


class _Tx:
    lock = " FOR UPDATE"

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    def run(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cursor = self._cursor
        cursor.execute(_pg(sql), params)
        return cursor.fetchall() if cursor.description is not None else []

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self._cursor.executemany(_pg(sql), rows)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


class PostgresBackend:
    """The PostgreSQL backend of :class:`~failcode.store.Store` (``postgresql://...``)."""

    name = "postgresql"

    def __init__(self, url: str, *, timeout_s: float, max_connections: int = 4) -> None:
        from failcode.store._store import StoreError, _safe_url  # noqa: PLC0415 - cycle

        self.url = _safe_url(url)
        try:
            import psycopg  # noqa: PLC0415 - the optional dependency of this backend
            from psycopg_pool import ConnectionPool  # noqa: PLC0415 - idem
        except ImportError as exc:
            raise StoreError(FC.STORE_UNREACHABLE.failure(surface="store.postgresql", params={
                "url": self.url, "problem": f"{exc.name} is not installed "
                                            "(pip install 'failcode[postgres]')"})) from None
        self._psycopg = psycopg
        timeout = max(1, round(timeout_s))
        try:
            # one direct connection first: its error says why (the pool's only times out)
            psycopg.connect(url, connect_timeout=timeout, autocommit=True).close()
        except psycopg.Error as exc:
            raise StoreError(self._opening(exc)) from None
        self._pool = ConnectionPool(url, min_size=1, max_size=max_connections, open=False,
                                    timeout=timeout_s, kwargs={"connect_timeout": timeout},
                                    name="failcode-store")
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
                yield _Tx(cursor)
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
