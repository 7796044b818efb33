"""What every worker and replica of one service shares: state kept in the control store.

A service may run as several processes: ``failcode serve --workers N`` (uvicorn workers on one
port) and any number of replicas (``failcode serve`` processes, on one machine or many) on one
control store. Whatever one process decides must hold for the others, so nothing that decides
lives in a process's memory; each piece below is one small class over the control store's
tables (made by the control store's migration, :mod:`failcode.service._control`).

Rules:

- **Request rate** (:class:`RateCounter`). One row per (key id, minute): a request adds one to
  its key's row in one statement (an upsert that returns the new count), so two processes
  never both see the last free request. The 429 is decided from that shared count. Rows of
  minutes before the last are deleted by the first request of each new minute a process sees.
  On PostgreSQL the count's commit does not wait for the disk (``synchronous_commit`` off for
  that transaction alone): a crash may forget the last counts, never anything else.
- **Dashboard sessions** (:class:`Sessions`). A row per session: the SHA-256 of the session id
  (the cookie's value is never stored), the key's id and the key's SHA-256 (the same digest
  ``svc_keys`` holds: the key itself is never stored), the CSRF token, when it was opened and
  last used. Every use reads the session joined to its key's row, so a revoked key ends its
  sessions at the next request on every process. A session idle for :data:`IDLE_S` ends. At
  most ``limit`` are held: opening one more deletes those idle too long, then the least
  recently used. A restart of the service keeps them all.
- **Failed sign-ins** (:class:`SignInFailures`): one row per failure (address, time); an address
  with ``per_minute`` failures in the last minute waits until the oldest of them is a minute old.
- **Alert windows and throttles** (:class:`SharedAlertState`): the same rule as the in-memory
  :class:`~failcode.service._alerts.AlertState`, with a row per (project, webhook, signature,
  minute) bucket and a row per (project, webhook, rule, signature) quiet time. Taking a quiet
  time is one conditional upsert: of two processes that meet one condition at once, one fires.
- **Leases** (:class:`Lease`): one row per name with an owner and an expiry. Only the holder
  acts (the retention schedule); it renews the lease each time it acts; a holder that crashed
  loses it when it expires, and one that stops cleanly gives it up at once.

Times are the processes' clocks (microseconds since the epoch): the processes of one service
should keep their clocks in step (NTP), as the rate's minute and a lease's expiry depend on it.
"""

from __future__ import annotations

import hashlib
import math
import secrets
import threading
import time
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from failcode.service._control import Key
    from failcode.store import Store

__all__ = [
    "IDLE_S",
    "SHARED_DDL",
    "Lease",
    "RateCounter",
    "Session",
    "Sessions",
    "SharedAlertState",
    "SignInFailures",
]

IDLE_S: Final = 12 * 3600
"""A dashboard session idle this long (seconds) ends."""
_MINUTE_US: Final = 60_000_000
_LONGEST_WINDOW_MIN: Final = 7 * 1440  # a webhook's longest rate window, in minutes

SHARED_DDL: Final = (
    ("CREATE TABLE IF NOT EXISTS svc_rates (key_id TEXT NOT NULL, minute BIGINT NOT NULL, "
     "requests BIGINT NOT NULL, PRIMARY KEY (key_id, minute))"),
    ("CREATE TABLE IF NOT EXISTS svc_sessions (id TEXT PRIMARY KEY, key_id TEXT NOT NULL, "
     "key_digest TEXT NOT NULL, csrf TEXT NOT NULL, created_us BIGINT NOT NULL, "
     "seen_us BIGINT NOT NULL)"),
    "CREATE INDEX IF NOT EXISTS svc_sessions_seen ON svc_sessions (seen_us)",
    ("CREATE TABLE IF NOT EXISTS svc_signin_failures (address TEXT NOT NULL, "
     "at_us BIGINT NOT NULL)"),
    ("CREATE INDEX IF NOT EXISTS svc_signin_failures_address ON svc_signin_failures "
     "(address, at_us)"),
    ("CREATE TABLE IF NOT EXISTS svc_alert_windows (project TEXT NOT NULL, webhook TEXT NOT "
     "NULL, signature TEXT NOT NULL, minute BIGINT NOT NULL, failures BIGINT NOT NULL, "
     "PRIMARY KEY (project, webhook, signature, minute))"),
    ("CREATE TABLE IF NOT EXISTS svc_alert_quiet (project TEXT NOT NULL, webhook TEXT NOT NULL,"
     " rule TEXT NOT NULL, signature TEXT NOT NULL, until_us BIGINT NOT NULL, "
     "PRIMARY KEY (project, webhook, rule, signature))"),
    ("CREATE TABLE IF NOT EXISTS svc_leases (name TEXT PRIMARY KEY, owner TEXT NOT NULL, "
     "expires_us BIGINT NOT NULL, runs BIGINT NOT NULL, ran_us BIGINT)"),
)
"""The shared tables (control schema version 3)."""


def _now_us() -> int:
    return time.time_ns() // 1000


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class RateCounter:
    """Requests per key and minute, counted in the control store (see the module)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._swept = 0

    def add(self, key_id: str, minute: int) -> int:
        """Count one request of ``key_id`` in ``minute``; the minute's count after it."""
        with self.store.transaction() as tx:
            if minute != self._swept:
                self._swept = minute
                tx.run("DELETE FROM svc_rates WHERE minute < ?", (minute - 1,))
            rows = tx.run(self._sql, (key_id, minute))
        return int(rows[0][0])

    @property
    def _sql(self) -> str:
        """The upsert; on PostgreSQL its commit does not wait for the disk (a count lost in a
        crash lets a few requests more through; nothing else is in the transaction)."""
        upsert = ("INSERT INTO svc_rates (key_id, minute, requests) {} ON CONFLICT (key_id, "
                  "minute) DO UPDATE SET requests = svc_rates.requests + 1 RETURNING requests")
        if self.store.dialect == "postgresql":
            return ("WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)) "
                    + upsert.format("SELECT ?, ?, 1 FROM relaxed"))
        return upsert.format("VALUES (?, ?, 1)")


class Session:
    """A signed-in dashboard session: its key's row (checked valid now) and CSRF token."""

    __slots__ = ("csrf", "key")

    def __init__(self, key: Key, csrf: str) -> None:
        self.key = key
        self.csrf = csrf


class Sessions:
    """Signed-in dashboard sessions in the control store; at most ``limit`` (see the module)."""

    def __init__(self, store: Store, limit: int = 10_000) -> None:
        self.store = store
        self.limit = limit

    def __len__(self) -> int:
        return int(self.store.fetch("SELECT count(*) FROM svc_sessions")[0][0])

    def open(self, key_id: str, key_digest: str) -> tuple[str, str]:
        """Open a session for the key ``key_id`` (whose SHA-256 is ``key_digest``):
        (the session id for the cookie, its CSRF token)."""
        sid, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        now = _now_us()
        with self.store.transaction() as tx:
            held = int(tx.run("SELECT count(*) FROM svc_sessions")[0][0])
            if held >= self.limit:
                tx.run("DELETE FROM svc_sessions WHERE seen_us < ?", (now - IDLE_S * 1_000_000,))
                held = int(tx.run("SELECT count(*) FROM svc_sessions")[0][0])
            if held >= self.limit:
                tx.run("DELETE FROM svc_sessions WHERE id IN (SELECT id FROM svc_sessions "
                       "ORDER BY seen_us, created_us LIMIT ?)", (held - self.limit + 1,))
            tx.run("INSERT INTO svc_sessions (id, key_id, key_digest, csrf, created_us, "
                   "seen_us) VALUES (?, ?, ?, ?, ?, ?)",
                   (_digest(sid), key_id, key_digest, csrf, now, now))
        return sid, csrf

    def get(self, sid: str) -> Session | None:
        """The session ``sid`` with its key, now the most recently used; None when there is
        none, it was idle too long or its key was revoked (then it ends)."""
        from failcode.service._control import Key  # noqa: PLC0415 - a cycle otherwise

        stamp = _digest(sid)
        now = _now_us()
        with self.store.transaction() as tx:
            rows = tx.run(
                "SELECT s.csrf, s.seen_us, k.key_id, k.project, k.scope, k.note, k.created_us, "
                "k.revoked_us FROM svc_sessions s LEFT JOIN svc_keys k ON k.key_id = s.key_id "
                "AND k.digest = s.key_digest WHERE s.id = ?", (stamp,))
            if not rows:
                return None
            csrf, seen, key_id, project, scope, note, created, revoked = rows[0]
            if key_id is None or revoked is not None or now - int(seen) > IDLE_S * 1_000_000:
                tx.run("DELETE FROM svc_sessions WHERE id = ?", (stamp,))
                return None
            tx.run("UPDATE svc_sessions SET seen_us = ? WHERE id = ?",
                   (max(now, int(seen) + 1), stamp))
        return Session(Key(key_id=str(key_id), project=str(project), scope=scope,
                           note=str(note), created_us=int(created)), str(csrf))

    def close(self, sid: str) -> None:
        """End the session ``sid`` (nothing when there is none)."""
        with self.store.transaction() as tx:
            tx.run("DELETE FROM svc_sessions WHERE id = ?", (_digest(sid),))


class SignInFailures:
    """Failed dashboard sign-ins per client address over the last minute (see the module)."""

    def __init__(self, store: Store, per_minute: int) -> None:
        self.store = store
        self.per_minute = per_minute
        self._swept = 0

    def wait_s(self, address: str) -> int:
        """Seconds until ``address`` may try again (0: now)."""
        now = _now_us()
        rows = self.store.fetch(
            "SELECT at_us FROM svc_signin_failures WHERE address = ? AND at_us > ? "
            "ORDER BY at_us DESC LIMIT ?", (address, now - _MINUTE_US, self.per_minute))
        if len(rows) < self.per_minute:
            return 0
        oldest = int(rows[-1][0])
        return max(1, math.ceil((oldest + _MINUTE_US - now) / 1_000_000))

    def failed(self, address: str) -> None:
        """Count a failed sign-in from ``address``."""
        now = _now_us()
        with self.store.transaction() as tx:
            if now - self._swept > _MINUTE_US:
                self._swept = now
                tx.run("DELETE FROM svc_signin_failures WHERE at_us <= ?", (now - _MINUTE_US,))
            tx.run("INSERT INTO svc_signin_failures (address, at_us) VALUES (?, ?)",
                   (address, now))


class SharedAlertState:
    """:class:`~failcode.service._alerts.AlertState` in the control store (see the module):
    the windows and quiet times every process of the service sees."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._next_sweep: int | None = None
        self._lock = threading.Lock()

    def footprint(self) -> dict[str, int]:
        """How much the state holds: ``windows``, ``buckets`` and ``throttles``."""
        windows = self.store.fetch("SELECT count(*) FROM (SELECT DISTINCT project, webhook, "
                                   "signature FROM svc_alert_windows) w")[0][0]
        buckets = self.store.fetch("SELECT count(*) FROM svc_alert_windows")[0][0]
        quiet = self.store.fetch("SELECT count(*) FROM svc_alert_quiet")[0][0]
        return {"windows": int(windows), "buckets": int(buckets), "throttles": int(quiet)}

    def _add(self, key: tuple[str, str, str], now_us: int, failures: int, window_s: int) -> int:
        width = window_s // 60
        minute = now_us // _MINUTE_US
        where = "project = ? AND webhook = ? AND signature = ?"
        with self.store.transaction() as tx:
            newest_row = tx.run(f"SELECT max(minute) FROM svc_alert_windows WHERE {where}", key)
            newest = None if newest_row[0][0] is None else int(newest_row[0][0])
            if newest is None or minute > newest - width:
                tx.run("INSERT INTO svc_alert_windows (project, webhook, signature, minute, "
                       "failures) VALUES (?, ?, ?, ?, ?) ON CONFLICT (project, webhook, "
                       "signature, minute) DO UPDATE SET failures = svc_alert_windows.failures "
                       "+ excluded.failures", (*key, minute, failures))
                newest = minute if newest is None else max(newest, minute)
                tx.run(f"DELETE FROM svc_alert_windows WHERE {where} AND minute <= ?",
                       (*key, newest - width))
            total = tx.run(f"SELECT coalesce(sum(failures), 0) FROM svc_alert_windows WHERE "
                           f"{where} AND minute > ?", (*key, newest - width))
        return int(total[0][0])

    def _allow(self, key: tuple[str, str, str, str], now_us: int, throttle_s: int) -> bool:
        """Whether ``key`` may fire at ``now_us``; if so, it is quiet for ``throttle_s`` (one
        statement: of two processes asking at once, one is allowed)."""
        with self.store.transaction() as tx:
            if throttle_s:
                taken = tx.run(
                    "INSERT INTO svc_alert_quiet (project, webhook, rule, signature, until_us) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (project, webhook, rule, signature) DO "
                    "UPDATE SET until_us = excluded.until_us WHERE svc_alert_quiet.until_us <= ?"
                    " RETURNING until_us", (*key, now_us + throttle_s * 1_000_000, now_us))
                return bool(taken)
            where = "project = ? AND webhook = ? AND rule = ? AND signature = ?"
            tx.run(f"DELETE FROM svc_alert_quiet WHERE {where} AND until_us <= ?",
                   (*key, now_us))
            return not tx.run(f"SELECT 1 FROM svc_alert_quiet WHERE {where}", key)

    def _sweep(self, now_us: int) -> None:
        """Delete buckets older than the longest window and quiet times that ended (at most
        once a minute of batch time per process)."""
        with self._lock:
            if self._next_sweep is not None and now_us < self._next_sweep:
                return
            self._next_sweep = now_us + _MINUTE_US
        with self.store.transaction() as tx:
            tx.run("DELETE FROM svc_alert_windows WHERE minute <= ?",
                   (now_us // _MINUTE_US - _LONGEST_WINDOW_MIN,))
            tx.run("DELETE FROM svc_alert_quiet WHERE until_us <= ?", (now_us,))


class Lease:
    """A named lease in the control store: one owner at a time (see the module)."""

    def __init__(self, store: Store, name: str, owner: str) -> None:
        self.store = store
        self.name = name
        self.owner = owner

    def take(self, ttl_s: float) -> bool:
        """Take or renew the lease for ``ttl_s``; whether this owner holds it now."""
        now = _now_us()
        with self.store.transaction() as tx:
            rows = tx.run(
                "INSERT INTO svc_leases (name, owner, expires_us, runs) VALUES (?, ?, ?, 0) "
                "ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_us = "
                "excluded.expires_us WHERE svc_leases.owner = excluded.owner OR "
                "svc_leases.expires_us <= ? RETURNING owner",
                (self.name, self.owner, now + int(ttl_s * 1_000_000), now))
        return bool(rows)

    def ran(self) -> None:
        """Count one run of what the lease guards (by its holder)."""
        with self.store.transaction() as tx:
            tx.run("UPDATE svc_leases SET runs = runs + 1, ran_us = ? WHERE name = ? AND "
                   "owner = ?", (_now_us(), self.name, self.owner))

    def release(self) -> None:
        """Give the lease up, when this owner holds it (another may take it at once)."""
        with self.store.transaction() as tx:
            tx.run("UPDATE svc_leases SET expires_us = 0 WHERE name = ? AND owner = ?",
                   (self.name, self.owner))

    def holder(self) -> tuple[str, int, int] | None:
        """(owner, expiry in microseconds, runs) of the lease, or None when never taken."""
        rows = self.store.fetch("SELECT owner, expires_us, runs FROM svc_leases WHERE name = ?",
                                (self.name,))
        return (str(rows[0][0]), int(rows[0][1]), int(rows[0][2])) if rows else None
