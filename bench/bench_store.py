"""Events and the store against their peers, measured in the same run.

Run:  python bench/bench_store.py [--events 200000] [--stored 1000000] [--rounds 5]

1. Reading a failcode JSONL event file with ``read_events`` (typed, validated) vs a plain
   ``json.loads`` line loop over the same file (target >= 2.5x).
2. SQLite ingest: ``Store.append`` in batches of 1,000 (event ids checked, WAL with
   synchronous=NORMAL, every aggregate updated in the same transaction) vs raw batched WAL
   inserts of the same rows into a bare table (target >= 100,000 events/s). Against an
   earlier version of the code: ``bench/bench_versions.py --base REV``.
3. PostgreSQL ingest vs a plain ``COPY`` of the same rows (needs FAILCODE_TEST_PG_URL or
   --pg URL; skipped otherwise).
4. Top-20 signatures over ``--stored`` stored events: the diagnostics query on SQLite
   (target <= 5 ms) and PostgreSQL, beside a GROUP BY over the events table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _timing import interleaved
from failcode import FC
from failcode.events import Event, failure_event, new_event_id, read_events
from failcode.store import open_store
from failcode.store._ingest import EVENT_COLUMNS, event_row

T0_MINUTES = 0


def make_events(count: int, *, distinct: int = 9554, seed: int = 5) -> list[Event]:
    """``count`` events over ``distinct`` signatures and 2,000 sessions, in time order."""
    from datetime import UTC, datetime

    rng = random.Random(seed)
    start = datetime(2026, 11, 1, tzinfo=UTC)
    pool = []
    for i in range(distinct):
        failure = FC.CMD_FAILED.failure(
            surface=f"tool.t{i % 97}", params={"program": f"step{i}", "exit_code": i % 3 + 1},
            location=f"src/mod{i % 131}/file{i}.py",
            context={"session": f"s-{i % 2000}", "step": i % 50})
        pool.append(failure_event(failure, event="command.failed", ts=start))
    weights = [1.0 / (k + 1) for k in range(distinct)]
    chosen = rng.choices(pool, weights=weights, k=count)
    out = []
    for n, base in enumerate(chosen):
        ts = start + timedelta(milliseconds=n * 10)
        out.append(msgspec.structs.replace(
            base, ts=ts, event_id=new_event_id(n * 10 + 1_800_000_000_000),
            session=f"s-{rng.randrange(2000)}"))
    return out


def _median_ratio(times: dict[str, list[float]], name: str, ref: str) -> float:
    return statistics.median(r / t for r, t in zip(times[ref], times[name], strict=True))


def bench_jsonl(events: list[Event], rounds: int, tmp: Path) -> None:
    path = tmp / "events.jsonl"
    with path.open("wb") as handle:
        for event in events:
            handle.write(event.to_json() + b"\n")

    def failcode_reader() -> None:
        for _ in read_events(path):
            pass

    def json_loads() -> None:
        loads = json.loads
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                loads(line)

    times = interleaved({"read_events": failcode_reader, "json.loads": json_loads}, rounds)
    size = path.stat().st_size / 1e6
    print(f"\n## 1. JSONL reading: {len(events):,} events, {size:.0f} MB")
    for name in times:
        med = statistics.median(times[name])
        print(f"  {name:<14} {size / med:7.1f} MB/s  {len(events) / med / 1000:7.1f} k events/s")
    print(f"  read_events vs json.loads: {_median_ratio(times, 'read_events', 'json.loads'):.2f}x"
          "  (target >= 2.5x)")


def _raw_sqlite(rows: list[tuple[object, ...]], path: Path, batch: int) -> None:
    if path.exists():
        path.unlink()
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute(f"CREATE TABLE events ({', '.join(EVENT_COLUMNS)})")
    sql = f"INSERT INTO events VALUES ({', '.join('?' * len(EVENT_COLUMNS))})"
    for start in range(0, len(rows), batch):
        con.execute("BEGIN")
        con.executemany(sql, rows[start:start + batch])
        con.execute("COMMIT")
    con.close()


def bench_sqlite_ingest(events: list[Event], rounds: int, tmp: Path, batch: int) -> None:
    rows = [event_row(event) for event in events]
    counter = iter(range(10**6))

    def store_append() -> None:
        url = f"sqlite:///{tmp / f'ingest-{next(counter)}.db'}"
        with open_store(url) as store:
            for start in range(0, len(events), batch):
                store.append(events[start:start + batch])

    def raw() -> None:
        _raw_sqlite(rows, tmp / "raw.db", batch)

    times = interleaved({"Store.append": store_append, "raw WAL inserts": raw}, rounds,
                        warmup=0)
    print(f"\n## 2. SQLite ingest: {len(events):,} events in batches of {batch}")
    for name in times:
        print(f"  {name:<30} {len(events) / statistics.median(times[name]) / 1000:7.1f} k/s")
    print(f"  Store.append vs raw batched WAL inserts: "
          f"{1 / _median_ratio(times, 'raw WAL inserts', 'Store.append'):.2f}x of the peer's "
          "rate  (target >= 100k events/s)")


def bench_pg_ingest(events: list[Event], rounds: int, url: str, batch: int) -> None:
    import psycopg

    rows = [event_row(event) for event in events]
    counter = iter(range(10**6))

    def fresh_schema() -> str:
        schema = f"bench_{os.getpid()}_{next(counter)}"
        with psycopg.connect(url, autocommit=True) as con:
            con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            con.execute(f"CREATE SCHEMA {schema}")
        sep = "&" if "?" in url else "?"
        return f"{url}{sep}options=-csearch_path%3D{schema}"

    def store_append() -> None:
        with open_store(fresh_schema()) as store:
            for start in range(0, len(events), batch):
                store.append(events[start:start + batch])

    def copy() -> None:
        with psycopg.connect(fresh_schema()) as con:
            con.execute(f"CREATE TABLE events ({', '.join(c + ' TEXT' for c in EVENT_COLUMNS)})")
            with con.cursor().copy(f"COPY events ({', '.join(EVENT_COLUMNS)}) FROM STDIN") as cp:
                for row in rows:
                    cp.write_row(row)

    times = interleaved({"Store.append": store_append, "plain COPY": copy}, rounds, warmup=0)
    print(f"\n## 3. PostgreSQL ingest: {len(events):,} events in batches of {batch}")
    for name in times:
        print(f"  {name:<16} {len(events) / statistics.median(times[name]) / 1000:7.1f} k/s")
    print(f"  Store.append vs plain COPY: "
          f"{1 / _median_ratio(times, 'plain COPY', 'Store.append'):.2f}x of COPY's rate")


def bench_top20(url: str, label: str, stored: int, rounds: int) -> None:
    events = make_events(stored, seed=11)
    with open_store(url) as store:
        t0 = time.perf_counter()
        for start in range(0, stored, 5000):
            store.append(events[start:start + 5000])
        ingest_s = time.perf_counter() - t0
        del events

        def top20() -> None:
            store.diagnostics(limit=20)

        def group_by() -> None:
            store.fetch("SELECT signature, count(*) FROM events WHERE code IS NOT NULL "
                        "GROUP BY signature ORDER BY 2 DESC LIMIT 20")

        times = interleaved({"diagnostics(limit=20)": top20, "GROUP BY over events": group_by},
                            rounds)
        agree = ([(d.signature, d.count) for d in store.diagnostics(limit=20)]
                 == [tuple(r) for r in store.fetch(
                     "SELECT signature, count(*) FROM events WHERE code IS NOT NULL "
                     "GROUP BY signature ORDER BY 2 DESC, 1 LIMIT 20")])
    print(f"\n## 4. Top-20 signatures over {stored:,} stored events, {label} "
          f"(ingested in {ingest_s:.0f} s, {stored / ingest_s / 1000:.0f} k/s)")
    for name in times:
        print(f"  {name:<24} {statistics.median(times[name]) * 1000:8.2f} ms")
    print(f"  speed-up of the kept counts: "
          f"{_median_ratio(times, 'diagnostics(limit=20)', 'GROUP BY over events'):.0f}x; "
          f"same top 20: {agree}  (target <= 5 ms on SQLite)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--stored", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--pg", default=os.environ.get("FAILCODE_TEST_PG_URL", ""))
    args = parser.parse_args()
    events = make_events(args.events)
    with tempfile.TemporaryDirectory() as tmp:
        bench_jsonl(events, args.rounds, Path(tmp))
        bench_sqlite_ingest(events, max(3, args.rounds // 2), Path(tmp), args.batch)
        pg = args.pg if args.pg.startswith("postgres") else ""
        if pg:
            bench_pg_ingest(events, max(3, args.rounds // 2), pg, args.batch)
        else:
            print("\n## 3. PostgreSQL ingest: skipped (no --pg URL / FAILCODE_TEST_PG_URL)")
        bench_top20(f"sqlite:///{Path(tmp) / 'top20.db'}", "SQLite", args.stored, args.rounds)
        if pg:
            import psycopg

            schema = f"bench_top_{os.getpid()}"
            with psycopg.connect(pg, autocommit=True) as con:
                con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
                con.execute(f"CREATE SCHEMA {schema}")
            sep = "&" if "?" in pg else "?"
            try:
                bench_top20(f"{pg}{sep}options=-csearch_path%3D{schema}", "PostgreSQL",
                            args.stored, args.rounds)
            finally:
                with psycopg.connect(pg, autocommit=True) as con:
                    con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


if __name__ == "__main__":
    main()
