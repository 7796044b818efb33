"""The event store: the same appends and queries on SQLite and PostgreSQL, real databases."""

from __future__ import annotations

import sqlite3
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest

from failcode import Veto, render_developer
from failcode.events import Event, outcome_event, remedy_event
from failcode.store import SCHEMA_VERSION, StoreError, open_store
from tests.conftest import fresh_url, pg_server_url
from tests.store.sample import T0, event, mixed

FIXTURES = Path(__file__).parents[1] / "fixtures"


def test_a_batch_appended_twice_is_stored_once(store_url: str) -> None:
    """A retried batch (same event ids) stores nothing twice and counts nothing twice."""
    batch = mixed(50)
    with open_store(store_url) as store:
        assert store.append(batch) == 50
        assert store.append(batch) == 0
        assert store.append(batch[:10] + batch[:10]) == 0
        stats = store.stats()
    assert (stats.events_stored, stats.events_ingested) == (50, 50)
    assert sum(d.count for d in open_store(store_url).diagnostics(limit=100)) == 50


def test_a_repeat_adds_only_the_step_the_stored_event_lacks(store_url: str) -> None:
    """An agent's export reports a call first (no step), its hook later (the call's id and
    step): the stored event takes the step, in its row and its body, and nothing else moves;
    a step once known is never changed by another repeat."""
    import msgspec

    first = event("shell.run", "cargo", minute=1)
    with open_store(store_url) as store:
        assert store.append([first]) == 1
        before = (store.stats(), store.diagnostics(limit=10),
                  store.fetch("SELECT * FROM sessions"),
                  store.fetch("SELECT * FROM session_signatures"))
        assert store.append([msgspec.structs.replace(first, step=3)]) == 0
        assert store.append([msgspec.structs.replace(first, step=5)]) == 0
        rows = store.fetch("SELECT step, body FROM events")
        after = (store.stats(), store.diagnostics(limit=10),
                 store.fetch("SELECT * FROM sessions"),
                 store.fetch("SELECT * FROM session_signatures"))
    assert [(step, Event.from_json(body).step) for step, body in rows] == [(3, 3)]
    assert Event.from_json(rows[0][1]) == msgspec.structs.replace(first, step=3)
    assert after == before


def test_diagnostics_counts_equal_a_recount(store_url: str) -> None:
    """Counts, sessions, first and last seen per signature equal a recount of the events."""
    batch = mixed(300, sessions=7)
    with open_store(store_url, batch=37) as store:
        for item in batch:
            store.emit(item)
        store.flush()
        rows = {d.signature: d for d in store.diagnostics(limit=100)}
    expected = Counter(e.signature for e in batch)
    assert {sig: d.count for sig, d in rows.items()} == dict(expected)
    for sig, d in rows.items():
        mine = [e for e in batch if e.signature == sig]
        assert d.sessions == len({e.session for e in mine})
        assert (d.first_seen, d.last_seen) == (mine[0].ts, mine[-1].ts)
        assert d.last_message == mine[-1].failure.message  # type: ignore[union-attr]


def test_diagnostics_are_ordered_and_paged(store_url: str) -> None:
    """The most frequent signature comes first; pages do not overlap."""
    batch = mixed(200)
    with open_store(store_url) as store:
        store.append(batch)
        first = store.diagnostics(limit=3)
        second = store.diagnostics(limit=3, offset=3)
    counts = [d.count for d in first + second]
    assert counts == sorted(counts, reverse=True)
    assert not {d.signature for d in first} & {d.signature for d in second}


def test_diagnostics_filter_by_session_and_code(store_url: str) -> None:
    """A session filter counts that session's failures only."""
    batch = mixed(120, sessions=3)
    with open_store(store_url) as store:
        store.append(batch)
        rows = store.diagnostics(session="s-1", code="FC-CMD-001", limit=100)
        none = store.diagnostics(code="FC-NOPE-001")
    assert sum(d.count for d in rows) == sum(1 for e in batch if e.session == "s-1")
    assert none == []


def test_time_range_counts_whole_hours(store_url: str) -> None:
    """A time range counts the failures of the hours that start inside it."""
    batch = [event(minute=m) for m in (0, 30, 61, 125, 130)]
    with open_store(store_url) as store:
        store.append(batch)
        middle = store.diagnostics(since=T0 + timedelta(hours=1), until=T0 + timedelta(hours=2))
        session_range = store.diagnostics(session="s-1", since=T0 + timedelta(minutes=29),
                                          until=T0 + timedelta(minutes=126))
    assert [d.count for d in middle] == [1]
    assert [d.count for d in session_range] == [3]


def test_blame_histogram_equals_a_recount(store_url: str) -> None:
    """Blame by code and by area equals a recount of category x kind x code."""
    batch = mixed(80)
    with open_store(store_url) as store:
        store.append(batch)
        by_code = store.blame()
        by_area = store.blame(by="area")
    assert {(b.category, b.kind, b.group): b.count for b in by_code} == {
        ("environment", "dependency_error", "FC-CMD-001"): 80}
    assert [(b.group, b.count) for b in by_area] == [("CMD", 80)]


def test_loops_are_three_in_a_session_or_two_in_a_row(store_url: str) -> None:
    """3 failures of a signature in a session, or 2 in a row, are loops; 2 apart are not."""
    a, b = ("shell.run", "cargo"), ("ci.step", "node")
    batch = [
        event(*a, session="three", minute=0), event(*b, session="three", minute=1),
        event(*a, session="three", minute=2), event(*b, session="three", minute=3),
        event(*a, session="three", minute=4),
        event(*a, session="row", minute=5), event(*a, session="row", minute=6),
        event(*a, session="apart", minute=7), event(*b, session="apart", minute=8),
        event(*a, session="apart", minute=9),
    ]
    with open_store(store_url) as store:
        store.append(batch[:4])
        store.append(batch[4:])
        found = {(x.session, x.count, x.max_run) for x in store.loops()}
    assert found == {("three", 3, 1), ("row", 2, 2)}


def test_clusters_join_signatures_with_one_template(store_url: str) -> None:
    """Signatures that differ only by surface share a cluster, counted across sessions."""
    batch = [event("shell.run", "cargo", session="s-1", minute=0),
             event("shell.exec", "cargo", session="s-2", minute=1),
             event("shell.exec", "cargo", session="s-2", minute=2)]
    with open_store(store_url) as store:
        store.append(batch[:1])
        store.append(batch[1:])
        found = store.clusters(min_sessions=2)
    assert len(found) == 1
    assert (found[0].count, found[0].sessions, len(found[0].signatures)) == (3, 2, 2)


def test_clusters_survive_reopening(store_url: str) -> None:
    """A store reopened later keeps adding to the clusters it had (state kept in the store)."""
    with open_store(store_url) as store:
        store.append([event("shell.run", "cargo", minute=0)])
    with open_store(store_url) as store:
        store.append([event("ci.step", "cargo", session="s-2", minute=1)])
        found = store.clusters()
    assert [(len(c.signatures), c.sessions) for c in found] == [(2, 2)]


def test_remedy_is_promoted_then_demoted(store_url: str) -> None:
    """A remedy that worked promote_after times is known; failing demote_after times in a row
    demotes it, and a better one comes first."""
    sig = event().signature
    assert sig is not None
    with open_store(store_url, promote_after=2, demote_after=2) as store:
        store.append([event()])
        store.record_remedy(sig, "Install cargo with rustup.", worked=True)
        assert store.diagnostics()[0].known_remedies == ()
        store.record_remedy(sig, "Install cargo with rustup.", worked=True)
        assert store.diagnostics()[0].known_remedies == ("Install cargo with rustup.",)
        store.record_remedy(sig, "Add ~/.cargo/bin to PATH.", worked=True)
        store.record_remedy(sig, "Install cargo with rustup.", worked=False)
        assert store.known_remedies(sig)[0].status == "promoted"
        store.record_remedy(sig, "Install cargo with rustup.", worked=False)
        remedies = store.known_remedies(sig)
    assert [(r.remedy, r.status) for r in remedies] == [
        ("Add ~/.cargo/bin to PATH.", "candidate"), ("Install cargo with rustup.", "demoted")]


def test_known_remedies_show_in_developer_text(store_url: str) -> None:
    """render_developer lists the signature's known remedies, best first."""
    first = event()
    assert first.failure is not None
    with open_store(store_url, promote_after=1) as store:
        store.append([first])
        store.record_remedy(first.failure.signature, "Install cargo with rustup.", worked=True)
        text = render_developer(first.failure,
                                known_remedies=store.known_remedies(first.failure.signature))
    assert "[promoted] Install cargo with rustup. (worked 1 of 1)" in text


def test_history_pages_a_signatures_events_newest_first(store_url: str) -> None:
    """show SIGNATURE: the row, then the events newest first, paged."""
    batch = [event(minute=m) for m in range(5)]
    with open_store(store_url) as store:
        store.append(batch)
        found = store.history(batch[0].signature or "", limit=2, offset=1)
    assert found.diagnostic is not None
    assert found.diagnostic.count == 5
    assert [e.event_id for e in found.events] == [batch[3].event_id, batch[2].event_id]


def test_prune_keeps_aggregates_and_knowledge(store_url: str) -> None:
    """Pruning deletes old events; counts and known remedies stay."""
    batch = [event(minute=m) for m in range(4)]
    sig = batch[0].signature or ""
    with open_store(store_url, promote_after=1) as store:
        store.append(batch)
        store.append([remedy_event(sig, "Install cargo.", worked=True, ts=T0)])
        deleted = store.prune(3600, now_us=int((T0 + timedelta(minutes=62)).timestamp() * 1e6))
        stats = store.stats()
        row = store.diagnostics()[0]
    assert deleted == 3
    assert (stats.events_stored, stats.events_ingested) == (2, 5)
    assert (row.count, row.known_remedies) == (4, ("Install cargo.",))


def test_outcomes_are_counted_not_diagnosed(store_url: str) -> None:
    """A veto is stored and counted by name, and never appears as a failure."""
    with open_store(store_url) as store:
        store.append([outcome_event(Veto(reason="wrong", by="judge"), session="s-1", ts=T0)])
        stats = store.stats()
        assert store.diagnostics() == []
    assert stats.by_event == {"task.vetoed": 1}


def _load_v1(url: str) -> None:
    script = (FIXTURES / "store_v1.sql").read_text(encoding="utf-8")
    statements = [s for s in script.split(";\n") if (s.strip()
                  and not s.strip().startswith("--")) or "CREATE" in s or "INSERT" in s]
    if url.startswith("sqlite"):
        path = Path(url[len("sqlite:///"):])
        path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(path) as connection:
            connection.executescript(script)
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        for statement in statements:
            connection.execute(statement)  # type: ignore[call-overload]


def test_a_version_1_store_is_migrated(store_url: str) -> None:
    """A store made by schema version 1 opens at the current version with its data, and the
    knowledge and clusters version 2 adds are rebuilt from what it stored."""
    _load_v1(store_url)
    with open_store(store_url, promote_after=3) as store:
        assert store.schema_version() == SCHEMA_VERSION
        rows = store.diagnostics()
        clusters = store.clusters()
        stats = store.stats()
    assert [d.count for d in rows] == [3, 1]
    assert rows[0].known_remedies == ("Install cargo with rustup.",)
    assert sum(c.count for c in clusters) == 4
    assert stats.events_stored == 7


def test_a_newer_schema_is_refused(store_url: str) -> None:
    """A store whose schema is newer than this failcode is FC-STORE-007."""
    with open_store(store_url) as store:
        store.backend  # noqa: B018 - opened and created
    _bump_version(store_url)
    with pytest.raises(StoreError) as caught:
        open_store(store_url)
    assert caught.value.failure.code == "FC-STORE-007"


def _bump_version(url: str) -> None:
    sql = "UPDATE meta SET value = '99' WHERE key = 'schema_version'"
    if url.startswith("sqlite"):
        with sqlite3.connect(url[len("sqlite:///"):]) as connection:
            connection.execute(sql)
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(sql)


def test_both_backends_answer_the_same(tmp_path: Path) -> None:
    """The same events give the same diagnostics, blame, loops, clusters and stats."""
    batch = mixed(150, sessions=4)
    answers = []
    for backend in ("sqlite", "postgresql"):
        for url in fresh_url(backend, tmp_path / backend):
            with open_store(url) as store:
                for start in range(0, 150, 40):
                    store.append(batch[start:start + 40])
                answers.append((store.diagnostics(limit=100), store.blame(), store.loops(),
                                store.clusters(), store.stats()))
    assert answers[0] == answers[1]


# -- bad URLs and faults: classified, never a driver traceback ---------------------------------


@pytest.mark.parametrize("url", ["mysql://db/failcode", "sqlite://relative.db", "sqlite:///"])
def test_a_bad_url_is_store_001(url: str) -> None:
    """A URL no backend serves is FC-STORE-001 naming it."""
    with pytest.raises(StoreError) as caught:
        open_store(url)
    assert caught.value.failure.code == "FC-STORE-001"


def test_an_unreachable_server_is_store_002() -> None:
    """A PostgreSQL URL where no server listens is FC-STORE-002."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(StoreError) as caught:
        open_store(f"postgresql://failcode@127.0.0.1:{port}/postgres", timeout_s=2)
    assert caught.value.failure.code == "FC-STORE-002"


def test_a_corrupt_sqlite_file_is_store_004(tmp_path: Path) -> None:
    """A file that is not SQLite is FC-STORE-004."""
    path = tmp_path / "failcode.db"
    path.write_bytes(b"this is not a database at all" * 200)
    with pytest.raises(StoreError) as caught:
        open_store(f"sqlite:///{path}")
    assert caught.value.failure.code == "FC-STORE-004"


def test_a_foreign_sqlite_database_is_store_004(tmp_path: Path) -> None:
    """A SQLite database with other tables and no failcode schema is refused, untouched."""
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE invoices (id INTEGER)")
    with pytest.raises(StoreError) as caught:
        open_store(str(path))
    assert caught.value.failure.code == "FC-STORE-004"


def test_an_uncreatable_path_is_store_005(tmp_path: Path) -> None:
    """A store path under a regular file cannot be created: FC-STORE-005."""
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(StoreError) as caught:
        open_store(f"sqlite:///{blocker}/failcode.db")
    assert caught.value.failure.code == "FC-STORE-005"


def test_a_locked_sqlite_store_is_store_003(tmp_path: Path) -> None:
    """A writer blocked by another's exclusive lock past its timeout gets FC-STORE-003, and
    the batch is stored once by a retry after the lock is gone."""
    path = tmp_path / "failcode.db"
    store = open_store(str(path), timeout_s=0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError) as caught:
            store.append([event()])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert caught.value.failure.code == "FC-STORE-003"
    assert store.append([event(minute=1)]) == 1
    store.close()


def test_a_full_sqlite_store_keeps_what_it_acknowledged(tmp_path: Path) -> None:
    """SQLITE_FULL during an append is FC-STORE-006; acknowledged events stay readable and a
    later append (after space is freed) works."""
    path = tmp_path / "failcode.db"
    store = open_store(str(path))
    acknowledged = mixed(20)
    store.append(acknowledged)
    pages = store.fetch("PRAGMA page_count")[0][0]
    store.fetch(f"PRAGMA max_page_count = {pages + 1}")
    with pytest.raises(StoreError) as caught:
        store.append(mixed(3000, seed=9))
    assert caught.value.failure.code == "FC-STORE-006"
    assert store.stats().events_stored == 20
    assert store.fetch("PRAGMA integrity_check") == [("ok",)]
    store.fetch("PRAGMA max_page_count = 1000000")
    assert store.append(mixed(5, seed=10)) == 5
    store.close()


def test_the_postgresql_server_is_available_in_ci() -> None:
    """With CI=true the throwaway PostgreSQL must be running (scripts/test.sh starts it)."""
    assert pg_server_url().startswith("postgresql://")
