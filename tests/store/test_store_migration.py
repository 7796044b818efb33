"""Schema migration 2 -> 3 (and on to the current version): a store written by version 2 answers
like one written by the current version."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import msgspec

from failcode.events import Event, new_event_id
from failcode.store import SCHEMA_VERSION, Store, open_store
from tests.conftest import fresh_url
from tests.store.sample import T0

FIXTURE = Path(__file__).parents[1] / "fixtures" / "store_v2.sql"


def _script(url: str) -> str:
    text = FIXTURE.read_text(encoding="utf-8")
    return text.replace("{without_rowid}", " WITHOUT ROWID" if url.startswith("sqlite") else "")


def _load_v2(url: str) -> None:
    """Build the version 2 store of the fixture at ``url`` with the driver alone."""
    script = _script(url)
    if url.startswith("sqlite"):
        path = Path(url[len("sqlite:///"):])
        path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(path) as connection:
            connection.executescript(script)
        return
    import psycopg

    statements = [s for s in script.split(";\n")
                  if "\n".join(line for line in s.splitlines()
                               if not line.startswith("--")).strip()]
    with psycopg.connect(url, autocommit=True) as connection:
        for statement in statements:
            connection.execute(statement)  # type: ignore[call-overload]


def _fixture_events() -> list[Event]:
    """The events the fixture stores, read from it by plain SQLite in time order."""
    with sqlite3.connect(":memory:") as connection:
        connection.executescript(_script("sqlite"))
        bodies = connection.execute("SELECT body FROM events ORDER BY ts_us, event_id").fetchall()
    return [Event.from_json(body) for (body,) in bodies]


def _answers(store: Store, signatures: list[str]) -> list[Any]:
    """Every query the store offers, with and without each kind of filter."""
    since, until = T0 + timedelta(minutes=5), T0 + timedelta(hours=2)
    out: list[Any] = [
        store.diagnostics(limit=100),
        store.diagnostics(session="s-0"),
        store.diagnostics(session="s-0", since=since, until=until),
        store.diagnostics(since=since),
        store.blame(), store.blame(by="area"), store.blame(session="s-2", since=since),
        store.blame(until=until),
        store.loops(), store.loops(session="s-1"), store.loops(min_count=1, min_run=1),
        store.clusters(), store.clusters(min_sessions=2),
    ]
    out += [store.history(sig) for sig in signatures]
    out += [store.history(sig, session="s-3", since=since) for sig in signatures]
    out += [store.known_remedies(sig) for sig in signatures]
    stats = store.stats()
    out.append((stats.schema_version, stats.events_stored, stats.events_ingested, stats.by_event,
                stats.signatures, stats.sessions, stats.clusters, stats.remedies, stats.oldest,
                stats.newest))
    return out


def test_a_version_2_store_answers_like_a_fresh_one(store_url: str, tmp_path: Path) -> None:
    """Opening the version 2 fixture migrates it, and every query answers as a store that
    ingested the same events at the current version."""
    events = _fixture_events()
    signatures = sorted({e.failure.signature for e in events if e.failure is not None})
    _load_v2(store_url)
    with open_store(store_url) as migrated:
        assert migrated.schema_version() == SCHEMA_VERSION
        got = _answers(migrated, signatures)
    backend = "sqlite" if store_url.startswith("sqlite") else "postgresql"
    for url in fresh_url(backend, tmp_path / "fresh"):
        with open_store(url) as fresh:
            for start in range(0, len(events), 7):
                fresh.append(events[start:start + 7])
            want = _answers(fresh, signatures)
    assert len(events) == 48
    assert got == want


def test_a_migrated_store_keeps_taking_events(store_url: str) -> None:
    """After the migration an appended batch is stored once and counted on top of the old
    counts; a batch of events already stored adds nothing."""
    events = _fixture_events()
    _load_v2(store_url)
    with open_store(store_url) as store:
        before = {d.signature: d.count for d in store.diagnostics(limit=100)}
        again = store.append(events)
        newer = [e for e in events if e.failure is not None][:5]
        moved = [msgspec.structs.replace(e, event_id=new_event_id()) for e in newer]
        added = store.append(moved)
        after = {d.signature: d.count for d in store.diagnostics(limit=100)}
    assert (again, added) == (0, 5)
    expected = dict(before)
    for event in moved:
        assert event.failure is not None
        expected[event.failure.signature] += 1
    assert after == expected
