"""Sessions are what triage says they are: a session is a (session name, input) pair.

The same session name in three input files (three runs of one benchmark instance) is three
sessions in the store, as in triage: three in every count, no run of a signature continuing
from one file into the next, no loop that no log has. Every test runs on a real SQLite file and
a real PostgreSQL schema (``store_url``); every expected count is computed here, in plain
Python, from the events the test stored, never taken from another answer of the store.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import pytest
from click.testing import CliRunner

from failcode import FC, NoMatch
from failcode.cli import main
from failcode.events import Event, failure_event, outcome_event, remedy_event
from failcode.store import SCHEMA_VERSION, open_store
from failcode.store._schema import INPUT_KEY, ddl
from failcode.triage import triage
from failcode.triage._record import record, result_events
from failcode.triage.readers._failcode_events import TRIAGE_PREFIX
from tests.conftest import fresh_url
from tests.store.runs import INSTANCE, RUNS, A, B, C, write_runs
from tests.store.sample import T0
from tests.store.test_store_ingest import _recount, _stored

if TYPE_CHECKING:
    from failcode.store import Store

FIXTURE = Path(__file__).parents[1] / "fixtures" / "store_v3.sql"
HOUR_US = 3_600_000_000
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# -- the rule, counted independently ------------------------------------------------------------


def _input(event: Event) -> str:
    """The documented rule: the failure's (else the outcome's) ``triage.path`` when a string,
    else the empty string."""
    subject = event.failure if event.failure is not None else event.outcome
    value = subject.context.get("triage.path") if subject is not None else None
    return value if isinstance(value, str) else ""


def _pair(event: Event) -> tuple[str, str]:
    assert event.session is not None
    return (event.session, _input(event))


def _us(event: Event) -> int:
    return (event.ts - EPOCH) // timedelta(microseconds=1)


def _in_order(events: list[Event]) -> list[Event]:
    return sorted(events, key=lambda e: (_us(e), e.event_id))


def _failures(events: list[Event], *, session: str | None = None, source: str | None = None,
              since: datetime | None = None, until: datetime | None = None,
              everything: bool = False) -> list[Event]:
    """The failures (``everything``: all events) of the sessions a filter selects (a name, an
    input, both; none: every failure, with a session or not), in an event-time range."""
    scoped = session is not None or source is not None
    return [e for e in _in_order(events) if (everything or e.failure is not None)
            and (not scoped or e.session is not None)
            and (session is None or e.session == session)
            and (source is None or _input(e) == source)
            and (since is None or e.ts >= since) and (until is None or e.ts < until)]


def _sessions_of(failures: list[Event]) -> dict[str, int]:
    """Per signature: the distinct (session, input) pairs it failed in."""
    pairs: dict[str, set[tuple[str, str]]] = {}
    for e in failures:
        if e.session is not None:
            pairs.setdefault(e.signature or "", set()).add(_pair(e))
    return {sig: len(found) for sig, found in pairs.items()}


def _runs(events: list[Event]) -> dict[tuple[str, str, str], tuple[int, int]]:
    """Per (session, input, signature): (failures, longest run in a row), each pair's failures
    in time order."""
    streams: dict[tuple[str, str], list[str]] = {}
    for e in _failures(events):
        if e.session is not None:
            streams.setdefault(_pair(e), []).append(e.signature or "")
    out: dict[tuple[str, str, str], tuple[int, int]] = {}
    for (session, source), sigs in streams.items():
        run = 0
        for n, sig in enumerate(sigs):
            run = run + 1 if n and sigs[n - 1] == sig else 1
            count, longest = out.get((session, source, sig), (0, 0))
            out[(session, source, sig)] = (count + 1, max(longest, run))
    return out


def _loops(events: list[Event], *, min_count: int = 3, min_run: int = 2,
           ) -> set[tuple[str, str, str, int, int]]:
    return {(s, i, sig, n, run) for (s, i, sig), (n, run) in _runs(events).items()
            if n >= min_count or run >= min_run}


def _found_loops(store: Store, **filters: Any) -> set[tuple[str, str, str, int, int]]:
    return {(x.session, x.input, x.signature, x.count, x.max_run)
            for x in store.loops(limit=1000, **filters)}


# -- three runs of one instance, through triage -------------------------------------------------


def _triage_loops(result: Any) -> set[tuple[str, str, str, int, int]]:
    """The store's loop rule applied to each session triage found, on its own."""
    out = set()
    for session in result.sessions:
        sigs = [entry.failure.signature for entry in session.failures]
        for sig in set(sigs):
            longest = run = 0
            for n, each in enumerate(sigs):
                run = (run + 1 if n and sigs[n - 1] == each else 1) if each == sig else 0
                longest = max(longest, run)
            if sigs.count(sig) >= 3 or longest >= 2:
                out.add((session.session, session.path, sig, sigs.count(sig), longest))
    return out


def test_three_runs_of_one_instance_are_three_sessions(store_url: str, tmp_path: Path) -> None:
    """Three files with one session name, recorded from triage's result: the store counts 3
    sessions for each signature and the same failures as triage, and finds no loop (no run
    has one; one stream of the three would have A 6 times, 3 in a row)."""
    result = triage([str(p) for p in write_runs(tmp_path)])
    assert [s.session for s in result.sessions] == [INSTANCE] * 3
    with open_store(store_url) as store:
        assert record(result, store)[0] == 12 + 1  # 12 failures, 1 outcome
        rows = {d.signature: d for d in store.diagnostics(limit=100)}
        by_name = {d.signature: d for d in store.diagnostics(session=INSTANCE, limit=100)}
        loops = _found_loops(store)
        twice = _found_loops(store, min_count=2)
        clusters = store.clusters()
        stats = store.stats()
    triaged = {r["signature"]: (r["count"], r["sessions"]) for r in result.signatures()}
    assert triaged == {A.signature: (6, 3), B.signature: (3, 3), C.signature: (3, 3)}
    assert {sig: (d.count, d.sessions) for sig, d in rows.items()} == triaged
    assert {sig: (d.count, d.sessions) for sig, d in by_name.items()} == triaged
    assert loops == _triage_loops(result) == set()
    paths = {s.path for s in result.sessions}
    assert twice == {(INSTANCE, path, A.signature, 2, 1) for path in paths}
    assert {c.sessions for c in clusters} == {3}
    assert stats.sessions == len(result.sessions) == 3


def test_triage_store_on_three_files_counts_what_triage_reports(store_url: str,
                                                                 tmp_path: Path) -> None:
    """`failcode triage DIR --store URL` on three real files, then `failcode store ...`: the
    same signatures, counts and sessions as triage's own report, no loop, 3 sessions."""
    write_runs(tmp_path / "runs")
    runner = CliRunner()
    triaged = runner.invoke(main, ["triage", str(tmp_path / "runs"), "--json",
                                   "--store", store_url])
    assert triaged.exit_code == 0, triaged.output
    report = json.loads(triaged.stdout)
    answers = {}
    for command in ("diagnostics", "loops", "stats"):
        run = runner.invoke(main, ["store", command, "--store", store_url, "--json"])
        assert run.exit_code == 0, run.output
        answers[command] = json.loads(run.stdout)
    assert len(report["sessions"]) == 3
    assert {r["signature"]: (r["count"], r["sessions"]) for r in report["signatures"]} == {
        d["signature"]: (d["count"], d["sessions"]) for d in answers["diagnostics"]}
    assert {d["sessions"] for d in answers["diagnostics"]} == {3}
    assert answers["loops"] == []
    assert answers["stats"]["sessions"] == 3


def test_a_loop_in_one_run_is_that_runs_and_the_table_names_its_input(
        store_url: str, tmp_path: Path) -> None:
    """A loop inside one input is found, once, with its input; `failcode store loops` prints
    the input when sessions have one."""
    paths = write_runs(tmp_path)
    looping = paths[0].with_name("looping.jsonl")
    looping.write_bytes(b"".join(
        failure_event(A, event="command.failed", session=INSTANCE, step=step,
                      ts=T0 + timedelta(hours=1, minutes=step)).to_json() + b"\n"
        for step in range(3)))
    result = triage([str(p) for p in [*paths, looping]])
    with open_store(store_url) as store:
        record(result, store)
        loops = _found_loops(store)
    assert loops == _triage_loops(result) == {(INSTANCE, str(looping), A.signature, 3, 3)}
    table = CliRunner().invoke(main, ["store", "loops", "--store", store_url])
    assert table.exit_code == 0, table.output
    assert table.output.splitlines()[0].split() == [
        "COUNT", "IN", "A", "ROW", "SESSION", "INPUT", "CODE", "LAST", "SEEN", "SIGNATURE"]
    assert str(looping) in table.output


def test_an_events_input_is_its_triage_path_else_none(store_url: str) -> None:
    """The rule: a failure's ``triage.path`` (an outcome's for an outcome event) when it is a
    string; a sink's event, or a value of another type, is the empty input."""
    assert INPUT_KEY == TRIAGE_PREFIX + "path"

    def failing(context: dict[str, Any], minute: int) -> Event:
        failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"},
                                           location="bin/cargo", context=context)
        return failure_event(failure, event="tool.failed", session="s",
                             ts=T0 + timedelta(minutes=minute))

    events = [
        failing({INPUT_KEY: "runs/1.jsonl"}, 0), failing({}, 1), failing({INPUT_KEY: 7}, 2),
        outcome_event(NoMatch(probe="grep", context={INPUT_KEY: "runs/2.jsonl"}), session="s",
                      ts=T0 + timedelta(minutes=3)),
        remedy_event(A.signature, "Install cargo.", worked=True, session="s",
                     ts=T0 + timedelta(minutes=4)),
    ]
    with open_store(store_url) as store:
        store.append(events)
        stored = dict(store.fetch("SELECT event_id, input FROM events"))
        sessions = set(store.fetch("SELECT session, input, events, failures FROM sessions"))
    assert [stored[e.event_id] for e in events] == [
        "runs/1.jsonl", "", "", "runs/2.jsonl", ""]
    assert sessions == {("s", "runs/1.jsonl", 1, 1), ("s", "", 3, 2), ("s", "runs/2.jsonl", 1, 0)}


# -- distinct-session counts in every query -----------------------------------------------------


def _world(tmp_path: Path) -> list[Event]:
    """Triage's events of the three runs, sink events under the same session name (the empty
    input) and another name, sessions of one input over several hours, a failure without a
    session, a remedy attempt; in time order."""
    recorded = list(result_events(triage([str(p) for p in write_runs(tmp_path)])))

    def at(minutes: float, failure: Any, session: str | None, source: str | None = None,
           ) -> Event:
        if source is not None:  # as triage records it
            failure = msgspec.structs.replace(failure, context={INPUT_KEY: source})
        return failure_event(failure, event="tool.failed", session=session,
                             ts=T0 + timedelta(minutes=minutes))

    x = "runs/run-9/s-x.jsonl"
    extra = [
        at(5, B, "live"), at(65, C, "live"), at(66, C, None),
        at(70, A, INSTANCE), at(71, A, INSTANCE), at(130, B, INSTANCE),  # a sink's stream
        at(125, A, "s-x", x), at(126, A, "s-x", x), at(127, A, "s-x", x), at(128, C, "s-x"),
        at(190, B, "s-x", x), at(191, C, INSTANCE, x),
        remedy_event(A.signature, "Install cargo.", worked=True, session="live",
                     ts=T0 + timedelta(minutes=200)),
    ]
    return _in_order(recorded + extra)


@pytest.fixture
def world(store_url: str, tmp_path: Path) -> tuple[str, list[Event]]:
    events = _world(tmp_path / "logs")
    with open_store(store_url) as store:
        for start in range(0, len(events), 5):  # batches in time order
            store.append(events[start:start + 5])
    return store_url, events


def _run_paths(events: list[Event]) -> list[str]:
    return sorted({_input(e) for e in events if e.session == INSTANCE} - {""})


class TestDistinctSessionCounts:
    """distinct-session counts in every query: each query's session counts (and what a
    session filter selects) against counts made here from the stored events."""

    def test_diagnostics(self, world: tuple[str, list[Event]]) -> None:
        url, events = world
        run2 = _run_paths(events)[1]
        since, until = T0 + timedelta(minutes=5), T0 + timedelta(minutes=128)
        with open_store(url) as store:
            for filters in ({}, {"session": INSTANCE}, {"session": "s-x"}, {"input": run2},
                            {"input": ""}, {"session": INSTANCE, "input": ""},
                            {"session": INSTANCE, "input": run2},
                            {"session": INSTANCE, "since": since, "until": until},
                            {"input": run2, "since": since},
                            {"session": "s-x", "input": "", "until": until}):
                rows = store.diagnostics(limit=100, **filters)
                mine = _failures(events, session=filters.get("session"),
                                 source=filters.get("input"), since=filters.get("since"),
                                 until=filters.get("until"))
                counts = Counter(e.signature for e in mine)
                every = _sessions_of(_failures(events))
                sessions = _sessions_of(mine) if ("session" in filters or "input" in filters
                                                  ) else every
                assert {d.signature: (d.count, d.sessions) for d in rows} == {
                    sig: (n, sessions.get(sig or "", 0)) for sig, n in counts.items()}, filters
                if "session" in filters or "input" in filters:
                    assert {d.signature: (d.first_seen, d.last_seen) for d in rows} == {
                        sig: (min(e.ts for e in mine if e.signature == sig),
                              max(e.ts for e in mine if e.signature == sig))
                        for sig in counts}, filters

    def test_diagnostics_over_hours(self, world: tuple[str, list[Event]]) -> None:
        """A time range without a session filter counts whole hours; sessions stay the
        signature's, every (session, input) pair it ever failed in."""
        url, events = world
        since = T0 + timedelta(minutes=75)  # the hour from T0 + 60 min on
        with open_store(url) as store:
            rows = store.diagnostics(since=since, limit=100)
        low = _us(failure_event(A, event="tool.failed", ts=since))
        counts = Counter(e.signature for e in _failures(events)
                         if _us(e) - _us(e) % HOUR_US >= low - low % HOUR_US)
        every = _sessions_of(_failures(events))
        assert {d.signature: (d.count, d.sessions) for d in rows} == {
            sig: (n, every[sig or ""]) for sig, n in counts.items()}

    def test_blame(self, world: tuple[str, list[Event]]) -> None:
        url, events = world
        run3 = _run_paths(events)[2]
        with open_store(url) as store:
            for filters in ({"session": INSTANCE}, {"input": run3}, {"input": ""},
                            {"session": INSTANCE, "input": ""},
                            {"session": INSTANCE, "since": T0 + timedelta(minutes=4),
                             "until": T0 + timedelta(minutes=131)}):
                cells = {(b.category, b.kind, b.group): b.count
                         for b in store.blame(limit=100, **filters)}
                mine = _failures(events, session=filters.get("session"),
                                 source=filters.get("input"), since=filters.get("since"),
                                 until=filters.get("until"))
                assert cells == dict(Counter(
                    (str(e.failure.category), str(e.failure.kind), e.failure.code)
                    for e in mine if e.failure is not None)), filters

    def test_loops(self, world: tuple[str, list[Event]]) -> None:
        url, events = world
        x = "runs/run-9/s-x.jsonl"
        with open_store(url) as store:
            assert _found_loops(store) == _loops(events)
            assert _found_loops(store, min_count=2) == _loops(events, min_count=2)
            assert _found_loops(store, min_count=1, min_run=1) == _loops(
                events, min_count=1, min_run=1)
            assert _found_loops(store, session=INSTANCE) == {
                loop for loop in _loops(events) if loop[0] == INSTANCE}
            assert _found_loops(store, input=x) == {
                loop for loop in _loops(events) if loop[1] == x}
            assert _found_loops(store, session="s-x", input="", min_count=1) == {
                loop for loop in _loops(events, min_count=1) if loop[:2] == ("s-x", "")}
        # the sink's stream of the instance loops; no run of it does, nor the runs together
        assert {loop[:3] for loop in _loops(events)} == {
            (INSTANCE, "", A.signature), ("s-x", x, A.signature)}

    def test_clusters(self, world: tuple[str, list[Event]]) -> None:
        url, events = world
        with open_store(url) as store:
            found = store.clusters(limit=100)
            cross = store.clusters(min_sessions=5, limit=100)
        failures = _failures(events)
        assert sorted(sig for c in found for sig in c.signatures) == sorted(
            {e.signature or "" for e in failures})
        want = {}
        for c in found:
            mine = [e for e in failures if e.signature in c.signatures]
            want[c.cluster_id] = (len(mine), len({_pair(e) for e in mine if e.session}))
        assert {c.cluster_id: (c.count, c.sessions) for c in found} == want
        assert {c.cluster_id for c in cross} == {cid for cid, (_n, s) in want.items() if s >= 5}

    def test_history(self, world: tuple[str, list[Event]]) -> None:
        url, events = world
        run1 = _run_paths(events)[0]
        every = _sessions_of(_failures(events))
        with open_store(url) as store:
            for sig in sorted(every):
                for filters in ({}, {"session": INSTANCE}, {"input": run1},
                                {"session": INSTANCE, "input": ""}):
                    found = store.history(sig, limit=100, **filters)
                    assert found.diagnostic is not None
                    assert found.diagnostic.sessions == every[sig]
                    # its failures and the remedy attempts on it
                    mine = [e for e in _failures(events, session=filters.get("session"),
                                                 source=filters.get("input"), everything=True)
                            if e.signature == sig]
                    assert [e.event_id for e in found.events] == [
                        e.event_id for e in reversed(mine)], (sig, filters)

    def test_stats(self, world: tuple[str, list[Event]]) -> None:
        url, events = world
        with open_store(url) as store:
            stats = store.stats()
        pairs = {_pair(e) for e in events if e.session is not None}
        assert stats.sessions == len(pairs)
        assert len({p for p in pairs if p[0] == INSTANCE}) == 5  # 3 runs, a sink, s-x's input


# -- migration from version 3 -------------------------------------------------------------------


def _v3_script(sqlite: bool) -> list[str]:
    """The version 3 store of the fixture: the tables of steps 1-3, then its rows."""
    statements = [s for version in (1, 2, 3) for s in ddl(version, sqlite=sqlite)]
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    return statements + [line.rstrip(";") for line in lines if line.startswith("INSERT")]


def _load_v3(url: str, *, prune_before: datetime | None = None) -> None:
    """Build the fixture's version 3 store at ``url`` with the driver alone (then delete the
    events older than ``prune_before``, as ``Store.prune`` does)."""
    sqlite = url.startswith("sqlite")
    statements = _v3_script(sqlite)
    if prune_before is not None:
        cutoff = _us(failure_event(A, event="tool.failed", ts=prune_before))
        statements.append(f"DELETE FROM events WHERE ts_us < {cutoff}")
    if sqlite:
        path = Path(url[len("sqlite:///"):])
        path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(path) as connection:
            for statement in statements:
                connection.execute(statement)
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        for statement in statements:
            connection.execute(statement)  # type: ignore[call-overload]


def _v3_rows(sql: str) -> list[tuple[Any, ...]]:
    """Rows of the fixture as version 3 kept them (an in-memory copy)."""
    with sqlite3.connect(":memory:") as connection:
        for statement in _v3_script(sqlite=True):
            connection.execute(statement)
        return connection.execute(sql).fetchall()


def _v3_events() -> list[Event]:
    return [Event.from_json(body) for (body,) in _v3_rows(
        "SELECT body FROM events ORDER BY ts_us, event_id")]


_TABLES = ("sessions", "session_signatures", "signatures", "hourly", "event_counts", "events")


def test_a_version_3_store_migrates_to_sessions_by_input(store_url: str,
                                                          tmp_path: Path) -> None:
    """The fixture's version 3 store, which merged three runs into one session, opens at
    version 4 with the sessions, pairs, runs and per-signature session counts recomputed per
    input from its events, and answers every query as a store that ingested them at version
    4."""
    merged = _v3_rows(f"SELECT signature, count, max_run FROM session_signatures "
                      f"WHERE session = '{INSTANCE}'")
    assert sorted((n, run) for _sig, n, run in merged) == [(3, 2), (3, 2), (6, 3)]
    events = _v3_events()
    assert len(events) == 16 + 7 + 1
    _load_v3(store_url)
    with open_store(store_url) as store:
        assert store.schema_version() == SCHEMA_VERSION == 4
        tables = _stored(store)
        got = _answers(store)
        loops = _found_loops(store)
        rows = {d.signature: d.sessions for d in store.diagnostics()}
    assert {t: tables[t] for t in _TABLES} == {t: _recount(events)[t] for t in _TABLES}
    assert loops == _loops(events) == {
        ("django__django-11099", "runs/run-1/django__django-11099.jsonl", A.signature, 2, 2),
        ("live-1", "", A.signature, 2, 2)}
    assert rows == {A.signature: 6, B.signature: 5, C.signature: 4}  # the runs: 3 each
    backend = "sqlite" if store_url.startswith("sqlite") else "postgresql"
    for url in fresh_url(backend, tmp_path / "fresh"):
        with open_store(url) as fresh:
            for start in range(0, len(events), 5):
                fresh.append(events[start:start + 5])
            assert _answers(fresh) == got


def _answers(store: Store) -> list[Any]:
    since, until = T0 + timedelta(minutes=5), T0 + timedelta(hours=2)
    out: list[Any] = [
        store.diagnostics(limit=100), store.diagnostics(session=INSTANCE),
        store.diagnostics(session=INSTANCE, since=since, until=until),
        store.diagnostics(input="runs/run-2/astropy__astropy-12907.jsonl"),
        store.diagnostics(since=since), store.blame(), store.blame(session="live-1"),
        store.loops(), store.loops(min_count=1, min_run=1), store.loops(session=INSTANCE),
        store.clusters(), store.clusters(min_sessions=3),
    ]
    for sig in (A.signature, B.signature, C.signature):
        out += [store.history(sig), store.history(sig, session=INSTANCE),
                store.known_remedies(sig)]
    stats = store.stats()
    out.append((stats.schema_version, stats.events_stored, stats.events_ingested,
                stats.by_event, stats.signatures, stats.sessions, stats.clusters,
                stats.remedies))
    return out


def _after_prune(events: list[Event]) -> dict[str, set[tuple[Any, ...]]]:
    """The documented rule for a pruned version 3 store, applied here: each (session, input)
    recounted from the events left, then per session name whose version 3 counts exceed
    them: one input (or none) left takes the version 3 rows; of several, the input of the
    earliest event left takes the pruned part."""
    left = _recount(events)
    sessions = {(r[0], r[1]): list(r[2:]) for r in left["sessions"]}
    pairs = {(r[0], r[1], r[2]): list(r[3:]) for r in left["session_signatures"]}
    old_pairs = _v3_rows("SELECT session, signature, count, max_run, first_us, last_us "
                         "FROM session_signatures")
    for name, n_events, n_failures, first, last, last_sig, run in _v3_rows(
            "SELECT session, events, failures, first_us, last_us, last_signature, run "
            "FROM sessions"):
        mine = sorted((key for key in sessions if key[0] == name),
                      key=lambda key: (sessions[key][2], key[1]))
        if sum(sessions[key][0] for key in mine) >= n_events:
            continue
        if len(mine) <= 1:
            source = mine[0][1] if mine else ""
            for key in [k for k in pairs if k[0] == name]:
                del pairs[key]
            sessions.pop((name, source), None)
            sessions[(name, source)] = [n_events, n_failures, first, last, last_sig, run]
            for old in old_pairs:
                if old[0] == name:
                    pairs[(name, source, old[1])] = list(old[2:])
            continue
        earliest = sessions[mine[0]]
        earliest[0] += n_events - sum(sessions[key][0] for key in mine)
        earliest[1] += max(0, n_failures - sum(sessions[key][1] for key in mine))
        earliest[2] = min(earliest[2], first)
        for _name, sig, count, max_run, sig_first, sig_last in (p for p in old_pairs
                                                                 if p[0] == name):
            kept = sum(v[0] for k, v in pairs.items() if k[0] == name and k[2] == sig)
            if count - kept <= 0:
                continue
            key = (name, mine[0][1], sig)
            if key in pairs:
                pairs[key][0] += count - kept
                pairs[key][2] = min(pairs[key][2], sig_first)
            else:
                pairs[key] = [count - kept, min(max_run, count - kept), sig_first,
                              sig_last if kept == 0 else sig_first]
    per_sig = Counter(sig for _s, _i, sig in pairs)
    return {"sessions": {(*k, *v) for k, v in sessions.items()},
            "session_signatures": {(*k, *v) for k, v in pairs.items()},
            "signature_sessions": set(per_sig.items())}


def test_a_pruned_version_3_store_keeps_what_pruned_events_counted(store_url: str) -> None:
    """Events pruned before the migration cannot be recomputed: no session name loses a
    count, a session whose events left are of one input (or none left) keeps its version 3
    rows under that input, and of several inputs the earliest left takes the pruned part."""
    cutoff = T0 + timedelta(minutes=4)
    events = [e for e in _v3_events() if e.ts >= cutoff]
    _load_v3(store_url, prune_before=cutoff)
    with open_store(store_url) as store:
        tables = _stored(store)
        signature_sessions = set(store.fetch("SELECT signature, sessions FROM signatures"))
        by_name = store.fetch("SELECT session, sum(events), sum(failures) FROM sessions "
                              "GROUP BY session ORDER BY session")
        pair_totals = store.fetch("SELECT session, signature, sum(count) FROM "
                                  "session_signatures GROUP BY session, signature "
                                  "ORDER BY session, signature")
    want = _after_prune(events)
    assert tables["sessions"] == want["sessions"]
    assert tables["session_signatures"] == want["session_signatures"]
    assert signature_sessions == want["signature_sessions"]
    assert [tuple(int(v) if i else v for i, v in enumerate(row)) for row in by_name] == \
        _v3_rows("SELECT session, events, failures FROM sessions ORDER BY session")
    assert [(s, sig, int(n)) for s, sig, n in pair_totals] == _v3_rows(
        "SELECT session, signature, count FROM session_signatures ORDER BY session, signature")
    # the three cases occur: live-0 wholly pruned, live-1 of one input, the instance of three
    names = {row[0] for row in want["sessions"]}
    assert {"live-0", "live-1", INSTANCE} <= names
    assert ("live-0", "") in {row[:2] for row in want["sessions"]}
    assert len([row for row in want["sessions"] if row[0] == INSTANCE]) == len(RUNS)
