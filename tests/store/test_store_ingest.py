"""Batched ingest on both backends: duplicates inside a batch, batches partly stored already,
and every aggregate equal to a recount from the events after mixed batches."""

from __future__ import annotations

import contextlib
import random
import tempfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failcode import Veto
from failcode.events import Event, outcome_event
from failcode.store import open_store
from tests.conftest import BACKENDS, fresh_url
from tests.store.sample import PROGRAMS, SURFACES, T0, event

if TYPE_CHECKING:
    from failcode.store import Store

HOUR_US = 3_600_000_000
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


INPUTS = (None, "runs/a/s.jsonl", "runs/b/s.jsonl")
"""The inputs of the stream's events (None: a sink's event, the empty input)."""


def _stream(count: int, seed: int) -> list[Event]:
    """Failures over a few signatures and sessions (some without a session) and vetoes, one
    second apart, so "last" is never a tie; each from one of :data:`INPUTS`, so one session
    name is up to three sessions."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        session = rng.choice(["s-0", "s-1", "s-2", None])
        source = rng.choice(INPUTS)
        if rng.random() < 0.15:
            context = {"triage.path": source} if source is not None else {}
            veto = outcome_event(Veto(reason="wrong answer", by="judge", context=context),
                                 session=session, ts=T0)
            out.append(msgspec.structs.replace(veto, ts=T0 + _seconds(i)))
        else:
            out.append(event(rng.choice(SURFACES[:2]), rng.choice(PROGRAMS[:3]),
                             session=session, minute=i / 60, input=source))
    return out


def _input(item: Event) -> str:
    """The event's input, by the store's documented rule: the failure's (else the outcome's)
    context value under ``triage.path`` when a string, else ``""``."""
    subject = item.failure if item.failure is not None else item.outcome
    value = subject.context.get("triage.path") if subject is not None else None
    return value if isinstance(value, str) else ""


def _seconds(n: int) -> timedelta:
    return timedelta(seconds=n)


def _us(item: Event) -> int:
    """Microseconds since the Unix epoch, as the store keeps times."""
    return (item.ts - EPOCH) // timedelta(microseconds=1)


def _recount(events: list[Event]) -> dict[str, set[tuple[Any, ...]]]:
    """Every aggregate table, computed from the events alone (in time order); a session is a
    (session, input) pair."""
    ordered = sorted({e.event_id: e for e in events}.values(), key=lambda e: e.ts)
    failures = [e for e in ordered if e.failure is not None]
    signatures = set()
    for sig in {e.signature for e in failures}:
        mine = [e for e in failures if e.signature == sig]
        signatures.add((sig, len(mine), len({(e.session, _input(e)) for e in mine if e.session}),
                        _us(mine[0]), _us(mine[-1]), mine[-1].failure.message))  # type: ignore[union-attr]
    sessions, pairs = set(), set()
    for session, source in {(e.session, _input(e)) for e in ordered if e.session}:
        mine = [e for e in ordered if e.session == session and _input(e) == source]
        failed = [e.signature for e in mine if e.failure is not None]
        runs: list[tuple[str, int]] = []  # (signature, run length), in order
        for sig in failed:
            if runs and runs[-1][0] == sig:
                runs[-1] = (sig, runs[-1][1] + 1)
            else:
                runs.append((sig, 1))  # type: ignore[arg-type]
        last = runs[-1] if runs else (None, 0)
        sessions.add((session, source, len(mine), len(failed), _us(mine[0]), _us(mine[-1]),
                      *last))
        for sig in set(failed):
            times = [_us(e) for e in mine if e.signature == sig and e.failure is not None]
            pairs.add((session, source, sig, failed.count(sig),
                       max(n for s, n in runs if s == sig), min(times), max(times)))
    hourly = Counter((_us(e) - _us(e) % HOUR_US, e.signature) for e in failures)
    return {
        "signatures": signatures, "sessions": sessions, "session_signatures": pairs,
        "hourly": {(h, s, n) for (h, s), n in hourly.items()},
        "event_counts": set(Counter(e.event for e in ordered).items()),
        "events": {(e.event_id, _input(e)) for e in ordered},
    }


_COLUMNS = {
    "signatures": "signature, count, sessions, first_us, last_us, last_message",
    "sessions": "session, input, events, failures, first_us, last_us, last_signature, run",
    "session_signatures": "session, input, signature, count, max_run, first_us, last_us",
    "hourly": "hour, signature, count",
    "event_counts": "event, count",
    "events": "event_id, input",
}


def _stored(store: Store) -> dict[str, set[tuple[Any, ...]]]:
    return {table: {tuple(row) for row in store.fetch(f"SELECT {columns} FROM {table}")}
            for table, columns in _COLUMNS.items()}


@contextlib.contextmanager
def _fresh(backend: str) -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        urls = fresh_url(backend, Path(tmp))
        try:
            yield next(urls)
        finally:
            urls.close()


def test_a_batch_with_duplicates_inside_stores_each_event_once(store_url: str) -> None:
    """One batch holding the same events two and three times stores and counts them once."""
    stream = _stream(40, seed=3)
    batch = stream + stream[:25] + stream[10:20]
    random.Random(1).shuffle(batch)
    with open_store(store_url) as store:
        assert store.append(batch) == 40
        assert _stored(store) == _recount(stream)


def test_a_batch_half_stored_adds_only_the_new_half(store_url: str) -> None:
    """A batch whose first half is stored already stores the second half and counts it once."""
    stream = _stream(60, seed=4)
    with open_store(store_url) as store:
        assert store.append(stream[:30]) == 30
        assert store.append(stream[15:45]) == 15
        assert store.append(stream[:60]) == 15
        assert _stored(store) == _recount(stream)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_counts_equal_a_recount_after_mixed_batches(backend: str, data: st.DataObject) -> None:
    """After overlapping, shuffled, duplicated batches of any size, every aggregate table
    equals a recount from the events."""
    count = data.draw(st.integers(1, 80), label="events")
    stream = _stream(count, seed=data.draw(st.integers(0, 2**16), label="seed"))
    with _fresh(backend) as url, open_store(url) as store:
        start = 0
        while start < count:
            end = min(count, start + data.draw(st.integers(1, 30), label="size"))
            back = data.draw(st.integers(0, start), label="overlap")
            batch = stream[start - back:end] + stream[start:end][:data.draw(
                st.integers(0, 5), label="dups")]
            random.Random(start).shuffle(batch)
            assert store.append(batch) == end - start
            start = end
        assert _stored(store) == _recount(stream)


def test_a_rolled_back_batch_does_not_break_the_next(store_url: str) -> None:
    """A batch whose transaction rolls back (here: the ``after`` step raises, as a deadlock or
    a full disk would) takes its work with it, including, on PostgreSQL, the staging tables it
    created on the connection; the next batches on the same connections are stored whole."""
    stream = _stream(60, seed=5)

    def refuse(_tx: object, _new: object) -> None:
        raise RuntimeError("the layer above refused the batch")

    with open_store(store_url) as store:
        for round_ in range(4):  # min_size=1: each batch runs on the pool's one idle connection
            part = stream[round_ * 15:(round_ + 1) * 15]
            with pytest.raises(Exception, match="refused the batch"):
                store.append(part, after=refuse)
            assert store.append(part) == 15
        assert _stored(store) == _recount(stream)
