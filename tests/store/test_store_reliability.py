"""Reliability on real databases: writers killed mid-batch, four writers at once, retries."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from failcode.store import open_store

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

REPO = Path(__file__).resolve().parents[2]


def _writer(url: str, tag: str, count: int, batch: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.store.writer", url, tag, str(count), str(batch)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)})


@contextmanager
def _snapshot(url: str) -> Iterator[Callable[[str], list[tuple[Any, ...]]]]:
    """Queries that all read one snapshot of the database.

    A writer killed with SIGKILL right after sending COMMIT is committed by the server after
    the process is gone: separate reads could see the events of that batch in one query and
    not in the next. One snapshot sees the batch wholly or not at all, which is the property.
    """
    if url.startswith("sqlite:///"):
        connection = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        try:
            connection.execute("BEGIN")
            yield lambda sql: connection.execute(sql).fetchall()
            connection.execute("COMMIT")
        finally:
            connection.close()
        return
    import psycopg

    with psycopg.connect(url) as connection:
        connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield lambda sql: connection.execute(sql).fetchall()


def _recounts_agree(url: str) -> None:
    """Every aggregate equals a recount from the stored events (read in one snapshot)."""
    with _snapshot(url) as fetch:
        assert fetch("SELECT signature, count FROM signatures ORDER BY 1") == fetch(
            "SELECT signature, count(*) FROM events WHERE code IS NOT NULL GROUP BY signature "
            "ORDER BY 1")
        # a session is a (session, input) pair
        assert fetch("SELECT signature, sessions FROM signatures ORDER BY 1") == fetch(
            "SELECT signature, count(*) FROM (SELECT DISTINCT signature, session, input "
            "FROM events WHERE code IS NOT NULL AND session IS NOT NULL) p "
            "GROUP BY signature ORDER BY 1")
        assert fetch("SELECT session, input, signature, count FROM session_signatures "
                     "ORDER BY 1, 2, 3") == fetch(
            "SELECT session, input, signature, count(*) FROM events WHERE code IS NOT NULL "
            "GROUP BY session, input, signature ORDER BY 1, 2, 3")
        assert fetch("SELECT session, input, events FROM sessions ORDER BY 1, 2") == fetch(
            "SELECT session, input, count(*) FROM events WHERE session IS NOT NULL "
            "GROUP BY session, input ORDER BY 1, 2")
        assert fetch("SELECT sum(count) FROM event_counts") == fetch(
            "SELECT count(*) FROM events")


def test_killed_writers_lose_nothing_acknowledged(store_url: str) -> None:
    """kill -9 at a random point of 1,000 batched appends, 50 times: every acknowledged event
    is stored, none twice, the aggregates agree and SQLite's integrity check passes."""
    rng = random.Random(12)
    acknowledged: list[str] = []
    open_store(store_url).close()
    for run in range(50):
        tag = f"k{run:02d}"
        process = _writer(store_url, tag, 1000, 10)
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.12))
        process.send_signal(signal.SIGKILL)
        out, _ = process.communicate()
        acks = [int(line.split()[1]) for line in out.splitlines() if line.startswith("ack ")]
        if acks:
            acknowledged.extend(f"{tag}-{i:05d}" for i in range(acks[-1] + 1))
    with open_store(store_url) as store:
        stored = {row[0] for row in store.fetch("SELECT event_id FROM events")}
        assert set(acknowledged) <= stored
        (total, distinct), = store.fetch("SELECT count(*), count(DISTINCT event_id) FROM events")
        assert total == distinct
        _recounts_agree(store_url)
        if store.dialect == "sqlite":
            assert store.fetch("PRAGMA integrity_check") == [("ok",)]
    assert len(acknowledged) > 0


def test_four_writers_at_once(store_url: str) -> None:
    """Four processes appending 10,000 events each: 40,000 stored once, counts equal a
    recount."""
    open_store(store_url).close()
    processes = [_writer(store_url, f"w{n}", 10_000, 500) for n in range(4)]
    for process in processes:
        _out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
    with open_store(store_url) as store:
        assert store.fetch("SELECT count(*), count(DISTINCT event_id) FROM events") == [
            (40_000, 40_000)]
        assert store.stats().events_ingested == 40_000
        _recounts_agree(store_url)
