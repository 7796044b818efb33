"""``failcode serve`` under load and under ``kill -9``: nothing acknowledged is lost, nothing
is stored twice, on SQLite and PostgreSQL.

Rules tested:

- Four client processes posting batches of 100 events for 15 s (each batch also sent a
  second time, as a client whose answer was lost would): every event of every acknowledged
  batch is stored exactly once; the answers' ``new`` add up to what the store holds; the
  finding counts equal the failures stored.
- ``kill -9`` of the service while a client posts: every batch the service answered 200 before
  it died is in the store after it restarts on the same store; a batch sent again after the
  restart stores only what was not stored yet (``new`` + ``duplicates`` = its size).
- ``failcode.report_to``'s sink, emitting steadily while the service is killed mid-stream,
  keeps what it could not send and delivers every event, once, when the service is back.

The client processes are real: ``python`` running :data:`CLIENT` with failcode events of a real
failure (a program that is not installed, run here).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Final

import pytest

from failcode import Failure, from_command, report_to
from failcode.events import failure_event
from failcode.service._projects import ProjectStores
from failcode.store import open_store
from tests.conftest import BACKENDS
from tests.service.conftest import Served, running

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

CLIENTS: Final = 4
SECONDS: Final = 15.0
BATCH: Final = 100

CLIENT: Final = r'''
import json, subprocess, sys, time
import httpx
from failcode import from_command
from failcode.events import failure_event

url, key, name, seconds, batch, out = sys.argv[1:7]
argv = ["sh", "-c", "failcode-reliability-missing-tool"]
done = subprocess.run(argv, capture_output=True, text=True)
failure = from_command(argv, done.returncode, done.stdout, done.stderr)
headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/x-ndjson"}
deadline = time.monotonic() + float(seconds)
n = 0
with open(out, "a", buffering=1) as log, httpx.Client(timeout=30) as client:
    while time.monotonic() < deadline:
        events = [failure_event(failure, event="command.failed", session=f"{name}-{n}-{i}")
                  for i in range(int(batch))]
        body = b"".join(e.to_json() + b"\n" for e in events)
        ids = [e.event_id for e in events]
        for attempt in (1, 2):  # the second: a client whose first answer was lost
            try:
                answer = client.post(url + "/v1/events", content=body, headers=headers)
            except httpx.HTTPError as exc:
                log.write(json.dumps({"batch": n, "ids": ids, "error": type(exc).__name__,
                                      "body": body.decode()}) + "\n")
                time.sleep(0.05)
                break
            got = answer.json() if answer.status_code == 200 else None
            log.write(json.dumps({"batch": n, "attempt": attempt, "ids": ids,
                                  "status": answer.status_code, "answer": got}) + "\n")
        n += 1
'''


def start_clients(served: Served, tmp: Path, *, count: int, seconds: float,
                  ) -> list[tuple[subprocess.Popen[bytes], Path]]:
    script = tmp / "client.py"
    script.write_text(CLIENT)
    started = []
    for i in range(count):
        out = tmp / f"client-{i}.jsonl"
        process = subprocess.Popen([sys.executable, str(script), served.url,
                                    served.keys["ingest"], f"c{i}", str(seconds), str(BATCH),
                                    str(out)])
        started.append((process, out))
    return started


def records(out: Path) -> list[dict[str, object]]:
    if not out.exists():
        return []
    return [json.loads(line) for line in out.read_text().splitlines() if line.endswith("}")]


def stored_ids(served: Served) -> list[str]:
    """Every event id the project ``web`` holds (with repeats, if any)."""
    with open_store(served.store, read_only=True) as control:
        url = ProjectStores(control, served.store).url("web")
    with open_store(url, read_only=True) as store:
        return [str(row[0]) for row in store.fetch("SELECT event_id FROM events")]


def finding_total(served: Served) -> int:
    status, answer = served.json("GET", "/v1/findings?limit=100", key=served.keys["read"])
    assert status == 200, answer
    return sum(int(f["count"]) for f in answer["findings"])


@pytest.fixture(params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    with running(request.param, tmp_path, extra=("--rate", "1000000")) as served:
        yield served


def test_concurrent_clients_lose_nothing_and_store_nothing_twice(service: Served,
                                                                 tmp_path: Path) -> None:
    clients = start_clients(service, tmp_path, count=CLIENTS, seconds=SECONDS)
    for process, _out in clients:
        assert process.wait(timeout=SECONDS + 120) == 0
    acknowledged: set[str] = set()
    new_total = 0
    batches = 0
    for _process, out in clients:
        for record in records(out):
            assert record.get("status") == 200, record
            answer = record["answer"]
            assert isinstance(answer, dict)
            ids = record["ids"]
            assert isinstance(ids, list)
            assert answer["new"] + answer["duplicates"] == len(ids), record
            if record["attempt"] == 2:
                assert answer["new"] == 0, record  # the first attempt stored them all
            else:
                batches += 1
            new_total += int(answer["new"])
            acknowledged.update(str(i) for i in ids)
    assert batches >= CLIENTS  # every client got at least one batch through
    stored = stored_ids(service)
    assert len(stored) == len(set(stored)), "an event was stored twice"
    assert set(stored) == acknowledged
    assert new_total == len(stored)
    assert finding_total(service) == len(stored)


def test_kill_9_loses_no_acknowledged_event(service: Served, tmp_path: Path) -> None:
    [(process, out)] = start_clients(service, tmp_path, count=1, seconds=6.0)
    deadline = time.monotonic() + 60
    while sum(1 for r in records(out) if r.get("status") == 200) < 3:
        assert time.monotonic() < deadline, "the client got no batch through"
        time.sleep(0.05)
    service.kill()  # mid-ingest: the client is still posting
    assert process.wait(timeout=120) == 0
    acknowledged = {str(i) for r in records(out) if r.get("status") == 200
                    for i in r["ids"]}  # type: ignore[union-attr]
    unanswered = [r for r in records(out) if r.get("status") != 200]
    service.start()
    stored = set(stored_ids(service))
    assert acknowledged <= stored, f"{len(acknowledged - stored)} acknowledged events lost"
    for record in unanswered:  # the batch in flight when it died, sent again as it was
        body = str(record["body"]).encode()
        status, answer = service.json("POST", "/v1/events", key=service.keys["ingest"],
                                      body=body, headers={"Content-Type": "application/x-ndjson"})
        assert status == 200, answer
        assert answer["new"] + answer["duplicates"] == BATCH
    stored_after = stored_ids(service)
    assert len(stored_after) == len(set(stored_after))
    assert set(stored_after) == acknowledged | {
        str(i) for r in unanswered for i in r["ids"]}  # type: ignore[union-attr]


def test_report_to_delivers_what_it_held_while_the_service_was_down(service: Served,
                                                                      tmp_path: Path) -> None:
    argv = ["sh", "-c", "failcode-reliability-missing-tool"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    failure = from_command(argv, done.returncode, done.stdout, done.stderr)
    assert isinstance(failure, Failure)
    sent = [failure_event(failure, event="command.failed", session=f"r-{i}")
            for i in range(3000)]
    sink = report_to(service.url, service.keys["ingest"], batch=100, flush_interval_s=0.05,
                     max_delay_s=0.5)
    try:
        for n, event in enumerate(sent[:1500]):
            sink.emit(event)
            if n % 100 == 99:
                time.sleep(0.02)  # a steady agent, not one burst
        # killed once 500 are stored, however loaded the machine: mid-stream by construction,
        # with batches in flight and half the events still to come
        deadline = time.monotonic() + 120
        while sink.stats.new < 500:
            assert time.monotonic() < deadline, "the service stored no 500 events in 120 s"
            time.sleep(0.02)
        service.kill()
        for event in sent[1500:]:
            sink.emit(event)
        assert sink.stats.pending > 0  # held: nowhere to send them
        service.start()
        assert sink.flush(timeout_s=120)
        stats = sink.stats
    finally:
        sink.close()
    stored = stored_ids(service)
    assert len(stored) == len(set(stored))
    assert sorted(stored) == sorted(e.event_id for e in sent)
    assert (stats.new + stats.duplicates, stats.dropped, stats.rejected) == (3000, 0, 0)
