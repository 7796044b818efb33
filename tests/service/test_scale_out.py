"""Issue 37, item 3: the service scales out. Real ``failcode serve`` processes, real HTTP, both
backends (SQLite: the processes share one file on one machine).

- Two workers behind one port (``--workers 2``): a key's rate limit counts the requests both
  served (over it, 429 whichever answers); a dashboard session is seen by every worker and
  survives a restart of the service; a revoked key is refused by every worker within the key
  cache's bound.
- Two replicas (two ``failcode serve`` on two ports, one store): an alert's rate window is the
  sum of what both saw, and an alert one fired is throttled for the other; the retention
  schedule runs in one of them at a time (one lease), and the other takes over when the
  holder dies.

Which process answered is read from ``X-Failcode-Worker``. Requests go out eight at a time on
their own connections, so the kernel hands them to both workers; a test waits (bounded) until
it has seen both. Each test fails without the shared state: per-process counts let twice the
limit through, per-process sessions are unknown to the other worker and gone after a restart,
per-process alert windows never reach the threshold, and without a lease both replicas prune.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import msgspec
import pytest

from failcode import FC
from failcode.events import failure_event
from failcode.service._alerts import ALLOW_ENV
from failcode.service._shared import Lease
from failcode.store import open_store
from tests.conftest import BACKENDS, fresh_url
from tests.service.conftest import Served, _drop_project_schemas, failcode, free_port, make_served
from tests.service.test_alerts_http import Receiver

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from failcode import Failure

KEY_CACHE_S = 5.0
"""The service's default ``key_cache_s``: the documented bound on a revocation."""
Answer = tuple[int, str, dict[str, str]]
"""(status, the answering worker's id, headers in lower case)."""


def ask(served: Served, method: str, path: str, *, key: str | None = None,
        headers: dict[str, str] | None = None, body: bytes | None = None) -> Answer:
    """One request on a connection of its own."""
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
    sent = dict(headers or {})
    if key is not None:
        sent["Authorization"] = f"Bearer {key}"
    try:
        connection.request(method, path, body=body, headers=sent)
        response = connection.getresponse()
        response.read()
        got = {k.lower(): v for k, v in response.getheaders()}
        return response.status, got.get("x-failcode-worker", ""), got
    finally:
        connection.close()


def spread(served: Served, count: int, method: str, path: str, **options: object,
           ) -> list[Answer]:
    """``count`` requests, eight at a time on their own connections (so both workers get some)."""
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(lambda _n: ask(served, method, path, **options),  # type: ignore[arg-type]
                             range(count)))


def until_both(served: Served, method: str, path: str, wanted: set[int], *,
               timeout_s: float = 60, **options: object) -> dict[str, list[int]]:
    """Statuses per worker, asked in rounds until two workers answered one of ``wanted``."""
    seen: dict[str, list[int]] = {}
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for status, worker, _headers in spread(served, 16, method, path, **options):
            seen.setdefault(worker, []).append(status)
        if sum(1 for statuses in seen.values() if set(statuses) & wanted) >= 2:
            return seen
    pytest.fail(f"two workers did not both answer {sorted(wanted)} within {timeout_s} s: {seen}")


def this_minute_has(seconds: float) -> None:
    """Wait (at most a minute) until at least ``seconds`` remain in the clock's minute, so a
    rate test's requests count in one fixed one-minute window."""
    while 60 - time.time() % 60 < seconds:
        time.sleep(0.2)


@contextlib.contextmanager
def two_workers(backend: str, tmp: Path, *extra: str) -> Iterator[Served]:
    """``failcode serve --workers 2`` on a fresh store, once both workers answer."""
    for store in fresh_url(backend, tmp):
        served = make_served(store, tmp, extra=("--workers", "2", *extra))
        served.start()
        try:
            until_both(served, "GET", "/healthz", {200})
            yield served
        finally:
            served.stop()
            if backend == "postgresql":
                _drop_project_schemas(store)


@contextlib.contextmanager
def two_replicas(backend: str, tmp: Path, *extra: str) -> Iterator[tuple[Served, Served]]:
    """Two ``failcode serve`` processes on two ports and one store."""
    for store in fresh_url(backend, tmp):
        first = make_served(store, tmp, extra=extra)
        second = Served(store=store, port=free_port(), log=tmp / "serve-2.log", keys=first.keys,
                        extra=extra)
        first.start()
        second.start()
        try:
            yield first, second
        finally:
            first.stop()
            second.stop()
            if backend == "postgresql":
                _drop_project_schemas(store)


# -- two workers ------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_a_keys_rate_limit_counts_the_requests_of_every_worker(backend: str,
                                                              tmp_path: Path) -> None:
    limit = 20
    with two_workers(backend, tmp_path, "--rate", str(limit)) as served:
        this_minute_has(30)
        answers = spread(served, 3 * limit, "GET", "/v1/findings", key=served.keys["read"])
        by_status: dict[int, set[str]] = {}
        for status, worker, _headers in answers:
            by_status.setdefault(status, set()).add(worker)
        statuses = [status for status, _worker, _headers in answers]
        assert statuses.count(200) == limit, by_status  # per-worker counts would pass 2x
        assert statuses.count(429) == 2 * limit
        assert all(int(h["retry-after"]) >= 1 for s, _w, h in answers if s == 429)
        # over the limit, whichever worker answers refuses
        refused = until_both(served, "GET", "/v1/findings", {429}, key=served.keys["read"])
        assert all(200 not in statuses for statuses in refused.values()), refused


def sign_in(served: Served, key: str) -> str:
    """Sign in through the dashboard's form; the session cookie (``failcode_ui=...``)."""
    status, headers, page = served.request("GET", "/ui/signin")
    assert status == 200, page
    cookie = re.match(r"(failcode_ui_signin=[^;]+)", headers.get("set-cookie", ""))
    token = re.search(rb'name="signin" value="([^"]+)"', page)
    assert cookie is not None
    assert token is not None
    body = urllib.parse.urlencode({"key": key, "next": "/ui/",
                                   "signin": token.group(1).decode()}).encode()
    # the sign-in page's cookie is the worker-independent token: any worker takes the form
    status, _worker, got = ask(served, "POST", "/ui/signin", body=body, headers={
        "Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie.group(1)})
    assert status == 303, got
    session = re.match(r"(failcode_ui=[^;]+)", got.get("set-cookie", ""))
    assert session is not None, got
    return session.group(1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_session_is_seen_by_every_worker_and_survives_a_restart(backend: str,
                                                                 tmp_path: Path) -> None:
    with two_workers(backend, tmp_path) as served:
        cookie = sign_in(served, served.keys["read"])
        seen = until_both(served, "GET", "/ui/", {200}, headers={"Cookie": cookie})
        assert all(set(statuses) == {200} for statuses in seen.values()), seen  # never 303
        served.stop()
        served.start()
        after = until_both(served, "GET", "/ui/", {200}, headers={"Cookie": cookie})
        assert all(set(statuses) == {200} for statuses in after.values()), after
        assert not set(after) & set(seen)  # new processes, the same session
        # signing out ends it for every worker
        status, _headers, page = served.request("GET", "/ui/", headers={"Cookie": cookie})
        csrf = re.search(rb'name="csrf" value="([^"]+)"', page)
        assert status == 200
        assert csrf is not None
        status, _worker, _got = ask(served, "POST", "/ui/signout", headers={
            "Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"},
            body=b"csrf=" + csrf.group(1))
        assert status == 303
        gone = until_both(served, "GET", "/ui/", {303}, headers={"Cookie": cookie})
        assert all(set(statuses) == {303} for statuses in gone.values()), gone


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_revoked_key_is_refused_by_every_worker_within_the_key_cache(backend: str,
                                                                      tmp_path: Path) -> None:
    with two_workers(backend, tmp_path, "--rate", "100000") as served:
        key = served.keys["read"]
        cookie = sign_in(served, key)
        until_both(served, "GET", "/v1/findings", {200}, key=key)  # both hold it in their cache
        failcode("token", "revoke", key, store=served.store)
        revoked = time.monotonic()
        # a dashboard session checks its key in the store: refused at once, by every worker
        pages = spread(served, 16, "GET", "/ui/", headers={"Cookie": cookie})
        assert {status for status, _w, _h in pages} == {303}, pages
        first_refusal: dict[str, float] = {}
        deadline = revoked + KEY_CACHE_S + 10
        while len(first_refusal) < 2 and time.monotonic() < deadline:
            # one round's requests run at once and come back in the order they were sent, not
            # answered: a worker may accept one from its cache while refusing another whose
            # check found the cache expired. Across rounds, once refused, refused from then on.
            answers = spread(served, 16, "GET", "/v1/findings", key=key)
            for status, worker, _headers in answers:
                assert status in (200, 401)
                assert status == 401 or worker not in first_refusal, (worker, first_refusal)
            for status, worker, _headers in answers:
                if status == 401:
                    first_refusal.setdefault(worker, time.monotonic() - revoked)
        assert len(first_refusal) == 2, first_refusal
        assert max(first_refusal.values()) <= KEY_CACHE_S + 1, first_refusal


# -- two replicas ------------------------------------------------------------------------------

def post(served: Served, failure: Failure, count: int) -> None:
    failure = msgspec.structs.replace(failure, context={"agent": "codex",
                                                        "agent_version": "1.0.0"})
    body = b"\n".join(failure_event(failure, event="command.failed",
                                    session=f"s-{served.port}-{time.monotonic_ns()}-{i}")
                      .to_json() for i in range(count))
    status, answer = served.json("POST", "/v1/events", key=served.keys["ingest"], body=body,
                                 headers={"Content-Type": "application/x-ndjson"})
    assert status == 200, answer
    assert answer["new"] == count


def arrived(receiver: Receiver, wanted: int, timeout_s: float = 60) -> list[tuple[str, str]]:
    """(rule, code) of the alerts received, once ``wanted`` are in."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with receiver.lock:
            bodies = list(receiver.bodies)
        if len(bodies) >= wanted:
            return [(str(b["rule"]), str(b["finding"]["code"])) for b in bodies]
        time.sleep(0.05)
    pytest.fail(f"{wanted} alerts did not arrive within {timeout_s} s: {receiver.bodies}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_alert_windows_and_throttles_are_one_for_two_replicas(
        backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOW_ENV, "127.0.0.1/32")
    receiver = Receiver()
    try:
        with two_replicas(backend, tmp_path) as (first, second):
            status, hook = first.json(
                "POST", "/v1/webhooks", key=first.keys["admin"],
                body=json.dumps({"url": receiver.url, "on": ["new_finding", "rate"],
                                 "rate_threshold": 3, "rate_window_s": 3600,
                                 "throttle_s": 3600}).encode(),
                headers={"Content-Type": "application/json"})
            assert status == 200, hook
            missing = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})
            other = FC.CMD_MISSING_MODULE.failure(surface="python.run",
                                                  params={"module": "yaml"})
            post(first, missing, 2)   # a new finding; 2 in the window
            post(second, missing, 2)  # 4 in the one window: over 3, the second fires
            assert arrived(receiver, 2) == [("new_finding", missing.code),
                                            ("rate", missing.code)]
            post(first, missing, 2)   # over again: quiet, though the first never fired it
            post(first, other, 1)     # a new finding, queued after anything the first fires
            assert arrived(receiver, 3)[2:] == [("new_finding", other.code)]
            with receiver.lock:
                rules = [b["rule"] for b in receiver.bodies]
            assert rules.count("rate") == 1, receiver.bodies
    finally:
        receiver.server.shutdown()
        receiver.server.server_close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_retention_runs_in_one_replica_at_a_time(backend: str, tmp_path: Path) -> None:
    with (two_replicas(backend, tmp_path, "--prune-interval", "0.1") as (first, second),
          open_store(first.store) as store):
        lease = Lease(store, "retention", "the test")

        def runs_by_owner(more: int) -> dict[str, int]:
            """Owners seen (and their last count of runs) until ``more`` runs were made."""
            owners: dict[str, int] = {}
            start: int | None = None
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                held = lease.holder()
                if held is not None:
                    owner, _expires, runs = held
                    owners[owner] = runs
                    start = runs if start is None else start
                    if runs - start >= more:
                        return owners
                time.sleep(0.05)
            pytest.fail(f"the retention schedule made fewer than {more} runs in 60 s: "
                        f"{owners}")

        owners = runs_by_owner(10)
        assert len(owners) == 1, owners  # both replicas tick every 0.1 s; one prunes
        (holder,) = owners
        pids = {served.process.pid: served for served in (first, second)
                if served.process is not None}
        dead = pids[int(holder.split()[1])]
        dead.kill()  # no clean shutdown: its lease must expire
        deadline = time.monotonic() + 60
        while (held := lease.holder()) is not None and held[0] == holder:
            assert time.monotonic() < deadline, "the lease was never taken over"
            time.sleep(0.05)
        after = runs_by_owner(10)
        assert holder not in after
        assert len(after) == 1, after
        (survivor,) = after
        alive = next(s for s in (first, second) if s is not dead)
        assert alive.process is not None
        assert int(survivor.split()[1]) == alive.process.pid
