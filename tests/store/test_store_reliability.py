"""Reliability on real databases: writers killed mid-batch, four writers at once, retries."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from failcode.store import Store, open_store

REPO = Path(__file__).resolve().parents[2]


def _writer(url: str, tag: str, count: int, batch: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.store.writer", url, tag, str(count), str(batch)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)})


def _recounts_agree(store: Store) -> None:
    """Every aggregate equals a recount from the stored events."""
    assert store.fetch("SELECT signature, count FROM signatures ORDER BY 1") == store.fetch(
        "SELECT signature, count(*) FROM events WHERE code IS NOT NULL GROUP BY signature "
        "ORDER BY 1")
    assert store.fetch("SELECT signature, sessions FROM signatures ORDER BY 1") == store.fetch(
        "SELECT signature, count(DISTINCT session) FROM events WHERE code IS NOT NULL "
        "GROUP BY signature ORDER BY 1")
    assert store.fetch(
        "SELECT session, signature, count FROM session_signatures ORDER BY 1, 2") == store.fetch(
        "SELECT session, signature, count(*) FROM events WHERE code IS NOT NULL "
        "GROUP BY session, signature ORDER BY 1, 2")
    assert store.fetch("SELECT sum(count) FROM event_counts") == store.fetch(
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
        assert len(stored) == store.fetch("SELECT count(*) FROM events")[0][0]
        _recounts_agree(store)
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
        _recounts_agree(store)
