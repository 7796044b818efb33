"""RemoteSink, the client of a failcode service: delivery, batching, retrying, the buffer, the
key, exit and fork, and the logging and retry integrations.

Every test talks to a real ``http.server.ThreadingHTTPServer`` on 127.0.0.1 that implements the
service's contract for ``POST /v1/events`` (below): it validates every line as an Event, keeps
the event ids it stored, and can be told to answer 503 with Retry-After, to refuse the key, to
refuse bodies over N bytes with 413, to hold a request until released, to store a batch and
lose its answer, or to stop and start again on the same port.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import logging
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

import failcode
from failcode import FC, Action, Budget, History, classify, classify_http, decide
from failcode.boundary import problem
from failcode.events import (
    Event,
    EventHandler,
    RemoteSink,
    Sink,
    failure_event,
    failure_hook,
    report_to,
)
from failcode.events._remote import GZIP_ABOVE, _policy, _retry_delay
from failcode.testing import set_testing
from tests._paths import REPO

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

KEY = "fc-test-key-7Qz9"
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}


# ---------------------------------------------------------------------------------------------
# the service, as its contract says


class Request(msgspec.Struct):
    """One POST the service received: its headers and its lines (decoded)."""

    headers: dict[str, str]
    raw_size: int
    lines: list[bytes]


class Service:
    """A small failcode service on 127.0.0.1 implementing ``POST /v1/events``."""

    def __init__(self) -> None:
        self.port = 0
        self.lock = threading.Lock()
        self.stored: set[str] = set()
        self.received: Counter[str] = Counter()  # event id -> times received
        self.requests: list[Request] = []
        self.answers: list[str] = []  # scripted: "503" or "lose" for the next requests
        self.retry_after = 1
        self.refuse: tuple[int, str] | None = None  # (status, code) for every request
        self.max_body: int | None = None
        self.hold: threading.Event | None = None
        self.entered = threading.Event()
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        server = ThreadingHTTPServer(("127.0.0.1", self.port), _Handler)
        server.service = server_service = self  # type: ignore[attr-defined]
        del server_service
        self.port = server.server_address[1]
        self.server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()

    def stop(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def ids(self) -> set[str]:
        with self.lock:
            return set(self.stored)


class _Handler(BaseHTTPRequestHandler):
    server: Any

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        del format, args

    def _answer(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None,
                ) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in (headers or {"Content-Type": "application/json"}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _problem(self, failure: failcode.Failure, status: int,
                 headers: dict[str, str] | None = None) -> None:
        made = problem(failure)
        self._answer(status, {**made.body, "status": status}, {**made.headers, **(headers or {})})

    def do_POST(self) -> None:
        service: Service = self.server.service
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        service.entered.set()
        if service.hold is not None:
            service.hold.wait()
        if self.path != "/v1/events":
            self._problem(FC.SVC_NOT_FOUND.failure(surface="service", params={
                "what": f"The route {self.path}"}), 404)
            return
        given = self.headers.get("Authorization", "")
        if service.refuse is not None or given != f"Bearer {KEY}":
            status, code = service.refuse or (401, "FC-SVC-001")
            spec = FC.SVC_FORBIDDEN if status == 403 else FC.SVC_UNAUTHENTICATED
            made = problem(spec.failure(surface="service", params={
                "path": self.path, "problem": "unknown key"}))
            # a careless service echoes what it was sent: the client must not keep it
            body = {**made.body, "status": status, "code": code,
                    "detail": f"unknown key {given.removeprefix('Bearer ')}"}
            self._answer(status, body, made.headers)
            return
        with service.lock:
            scripted = service.answers.pop(0) if service.answers else None
        if scripted == "503":
            self._problem(FC.SVC_RATE_LIMITED.failure(surface="service", params={
                "limit": 1, "window_s": 1, "retry_after_s": service.retry_after}), 503,
                {"Retry-After": str(service.retry_after)})
            return
        body = (gzip.decompress(raw) if self.headers.get("Content-Encoding") == "gzip"
                else raw)
        if service.max_body is not None and len(body) > service.max_body:
            self._problem(FC.SVC_TOO_LARGE.failure(surface="service", params={
                "problem": f"{len(body)} bytes, at most {service.max_body}"}), 413)
            return
        lines = [line for line in body.split(b"\n") if line]
        new = duplicates = 0
        problems: list[dict[str, Any]] = []
        with service.lock:
            service.requests.append(Request(dict(self.headers.items()), len(raw), lines))
            for number, line in enumerate(lines, 1):
                try:
                    event = Event.from_json(line)
                except ValueError as exc:
                    problems.append({"line": number, "problem": str(exc)})
                    continue
                service.received[event.event_id] += 1
                if event.event_id in service.stored:
                    duplicates += 1
                else:
                    service.stored.add(event.event_id)
                    new += 1
        if scripted == "lose":  # stored, but the answer never reaches the client
            self.close_connection = True
            return
        self._answer(200, {"received": len(lines), "new": new, "duplicates": duplicates,
                           "rejected": len(problems), "problems": problems})


@pytest.fixture
def service() -> Iterator[Service]:
    running = Service()
    running.start()
    yield running
    if running.hold is not None:
        running.hold.set()
    running.stop()


@pytest.fixture
def sinks() -> Iterator[Callable[..., RemoteSink]]:
    """Makes sinks (short exit timeout by default) and closes them after the test."""
    made: list[RemoteSink] = []

    def make(url: str, key: str = KEY, **options: Any) -> RemoteSink:
        options.setdefault("exit_timeout_s", 0.5)
        sink = RemoteSink(url, key, **options)
        made.append(sink)
        return sink

    yield make
    for sink in made:
        sink.close()


def _events(count: int, *, session: str = "s", detail: str | None = None) -> list[Event]:
    failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"},
                                       detail=detail)
    return [failure_event(failure, event="command.failed", session=session, step=i)
            for i in range(count)]


def _settled(sink: RemoteSink) -> bool:
    stats = sink.stats
    return stats.emitted == stats.sent + stats.rejected + stats.dropped + stats.pending


def _wait_for(condition: Callable[[], bool], *, timeout_s: float = 30.0) -> None:
    """Wait until ``condition()`` holds (a generous bound: it fails only when it never does)."""
    end = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > end:
            pytest.fail("the condition never held")
        time.sleep(0.01)


def _dead_port() -> int:
    """A port of 127.0.0.1 on which nothing listens (a server started there, then stopped)."""
    probe = Service()
    probe.start()
    probe.stop()
    return probe.port


# ---------------------------------------------------------------------------------------------
# delivery


class TestDelivery:
    def test_every_event_is_delivered_once(self, service: Service,
                                           sinks: Callable[..., RemoteSink]) -> None:
        """Events emitted from many threads all arrive, each once, with the contract's
        headers; the stats count them as sent and new."""
        sink = sinks(service.url)
        batches = [_events(50, session=f"t{n}") for n in range(4)]
        threads = [threading.Thread(target=lambda b=b: [sink.emit(e) for e in b])
                   for b in batches]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sink.flush(timeout_s=30)
        emitted = {event.event_id for batch in batches for event in batch}
        assert service.ids() == emitted
        assert set(service.received.values()) == {1}
        stats = sink.stats
        assert (stats.emitted, stats.sent, stats.new, stats.duplicates) == (200, 200, 200, 0)
        assert (stats.pending, stats.dropped, stats.rejected, stats.retries) == (0, 0, 0, 0)
        for request in service.requests:
            assert request.headers["Content-Type"] == "application/x-ndjson"
            assert request.headers["Authorization"] == f"Bearer {KEY}"
            assert request.headers["User-Agent"] == f"failcode/{failcode.__version__}"

    def test_batches_hold_at_most_batch_events(self, service: Service,
                                               sinks: Callable[..., RemoteSink]) -> None:
        """No request carries more than ``batch`` events, and together they carry all."""
        sink = sinks(service.url, batch=10)
        for event in _events(35):
            sink.emit(event)
        assert sink.flush(timeout_s=30)
        sizes = [len(request.lines) for request in service.requests]
        assert max(sizes) <= 10
        assert sum(sizes) == 35
        assert len(sizes) >= 4

    def test_a_partial_batch_goes_after_the_interval(self, service: Service,
                                                     sinks: Callable[..., RemoteSink]) -> None:
        """Without a flush, a batch smaller than ``batch`` is sent once its first event has
        waited ``flush_interval_s``."""
        sink = sinks(service.url, flush_interval_s=0.05)
        (event,) = _events(1)
        sink.emit(event)
        _wait_for(lambda: service.ids() == {event.event_id})
        _wait_for(lambda: sink.stats.sent == 1)

    def test_bodies_over_1_kib_are_gzipped(self, service: Service,
                                           sinks: Callable[..., RemoteSink]) -> None:
        """A body up to GZIP_ABOVE bytes goes as is; a longer one gzip-compressed (and the
        service reads both)."""
        sink = sinks(service.url)
        small, *many = _events(11)
        assert len(small.to_json()) + 1 <= GZIP_ABOVE
        sink.emit(small)
        assert sink.flush(timeout_s=30)
        for event in many:
            sink.emit(event)
        assert sink.flush(timeout_s=30)
        first, second = service.requests
        assert "Content-Encoding" not in first.headers
        assert second.headers["Content-Encoding"] == "gzip"
        assert second.raw_size < sum(len(line) + 1 for line in second.lines)
        assert service.ids() == {small.event_id} | {event.event_id for event in many}

    def test_the_sink_is_a_sink(self, service: Service,
                                sinks: Callable[..., RemoteSink]) -> None:
        """RemoteSink implements the Sink protocol; report_to makes one."""
        sink = report_to(service.url, KEY, exit_timeout_s=0.5)
        try:
            assert isinstance(sink, Sink)
            assert isinstance(sink, RemoteSink)
            assert failcode.report_to is report_to
            assert failcode.RemoteSink is RemoteSink
        finally:
            sink.close()

    def test_a_rejected_line_is_counted(self, service: Service,
                                        sinks: Callable[..., RemoteSink]) -> None:
        """Lines the service rejects in a 200 answer count as rejected, never as sent."""
        sink = sinks(service.url)
        good, spoiled = _events(2)
        sink.emit(good)
        sink._link.emit(spoiled.to_json().replace(b'"version":1', b'"version":99') + b"\n")
        assert sink.flush(timeout_s=30)
        stats = sink.stats
        assert (stats.sent, stats.rejected) == (1, 1)
        assert stats.last_failure is not None
        assert stats.last_failure.code == FC.DATA_INVALID_INPUT.value
        assert _settled(sink)


# ---------------------------------------------------------------------------------------------
# transient failures


class TestRetrying:
    def test_503_then_recovery(self, service: Service,
                               sinks: Callable[..., RemoteSink]) -> None:
        """Two 503 answers with Retry-After, then success: everything arrives once, the two
        retries are counted and the last failure carries the server's delay."""
        service.answers = ["503", "503"]
        service.retry_after = 1
        sink = sinks(service.url, max_delay_s=5)
        events = _events(5)
        for event in events:
            sink.emit(event)
        assert sink.flush(timeout_s=60)
        assert service.ids() == {event.event_id for event in events}
        assert set(service.received.values()) == {1}
        stats = sink.stats
        assert stats.retries == 2
        assert stats.sent == 5
        assert stats.last_failure is not None
        assert stats.last_failure.metadata["retry_after_s"] == service.retry_after

    def test_a_lost_answer_is_sent_again_and_stored_once(
            self, service: Service, sinks: Callable[..., RemoteSink]) -> None:
        """A batch the service stored but whose answer was lost is sent again; the service
        stores nothing twice and reports the second copy as duplicates."""
        service.answers = ["lose"]
        sink = sinks(service.url, max_delay_s=0.1)
        events = _events(4)
        for event in events:
            sink.emit(event)
        assert sink.flush(timeout_s=30)
        assert service.ids() == {event.event_id for event in events}
        assert set(service.received.values()) == {2}
        stats = sink.stats
        assert (stats.sent, stats.new, stats.duplicates, stats.retries) == (4, 0, 4, 1)

    def test_service_down_at_start_then_up(self, sinks: Callable[..., RemoteSink]) -> None:
        """With nothing listening the events wait (flush times out, the failure is the
        classified refused connection); once the service is up they are all delivered."""
        port = _dead_port()
        sink = sinks(f"http://127.0.0.1:{port}", max_delay_s=0.1)
        events = _events(20)
        for event in events:
            sink.emit(event)
        assert not sink.flush(timeout_s=0.3)
        stats = sink.stats
        assert stats.pending == 20
        assert stats.retries >= 1
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        except OSError as exc:
            refused = classify(exc)
        else:
            pytest.fail("something listens on the dead port")
        assert stats.last_failure is not None
        assert isinstance(refused, failcode.Failure)
        assert stats.last_failure.code == refused.code
        later = Service()
        later.port = port
        later.start()
        try:
            assert sink.flush(timeout_s=30)
            assert later.ids() == {event.event_id for event in events}
            assert sink.stats.sent == 20
        finally:
            later.stop()

    def test_flush_times_out_while_the_service_is_down(
            self, sinks: Callable[..., RemoteSink]) -> None:
        """flush returns False when its timeout passes first, and keeps the events."""
        sink = sinks(f"http://127.0.0.1:{_dead_port()}", max_delay_s=0.05)
        for event in _events(3):
            sink.emit(event)
        assert sink.flush(timeout_s=0.2) is False
        assert sink.stats.pending == 3
        assert sink.stats.dropped == 0

    def test_close_makes_one_last_attempt_at_once(
            self, service: Service, sinks: Callable[..., RemoteSink],
            capsys: pytest.CaptureFixture[str]) -> None:
        """A close during a long retry wait (Retry-After: 30) does not wait it out: the
        batch is sent at once, and nothing is lost."""
        service.answers = ["503"]
        service.retry_after = 30
        sink = sinks(service.url, max_delay_s=30, exit_timeout_s=20, flush_interval_s=0.05)
        (event,) = _events(1)
        sink.emit(event)
        assert not sink.flush(timeout_s=0)
        _wait_for(lambda: sink.stats.retries == 1)  # the sender now waits 30 s
        sink.close()
        assert service.ids() == {event.event_id}
        assert (sink.stats.sent, sink.stats.dropped) == (1, 0)
        assert capsys.readouterr().err == ""

    def test_the_delay_is_the_servers_capped_at_max_delay(self) -> None:
        """After a 503 with Retry-After the sink waits the server's delay, never more than
        max_delay_s; a decision not to retry waits max_delay_s."""
        failure = classify_http(503, None, {"Retry-After": "3"})
        history = History(operation="events.remote")
        decision = decide(failure, history, _policy(30.0))
        assert decision.action is Action.RETRY
        assert _retry_delay(decision, 30.0) == 3.0
        assert _retry_delay(decide(failure, history, _policy(2.0)), 2.0) == 2.0
        spent = decide(failure, history, _policy(30.0), Budget(0.0, 500.0))
        assert spent.action is not Action.RETRY
        assert _retry_delay(spent, 30.0) == 30.0


# ---------------------------------------------------------------------------------------------
# the buffer and the caller


class TestBuffer:
    def test_a_full_buffer_drops_the_oldest(self, sinks: Callable[..., RemoteSink]) -> None:
        """While the service is down, events past ``buffer`` push out the oldest ones, which
        are counted as dropped; the newest are delivered once it is back."""
        port = _dead_port()
        sink = sinks(f"http://127.0.0.1:{port}", batch=5, buffer=10, max_delay_s=0.05)
        events = _events(25)
        for event in events:
            sink.emit(event)
        stats = sink.stats
        assert (stats.emitted, stats.pending, stats.dropped) == (25, 10, 15)
        # two more failed attempts: every request from now on starts after the last emit
        _wait_for(lambda: sink.stats.retries >= stats.retries + 2)
        later = Service()
        later.port = port
        later.start()
        try:
            assert sink.flush(timeout_s=30)
            assert later.ids() == {event.event_id for event in events[-10:]}
        finally:
            later.stop()
        stats = sink.stats
        assert (stats.sent, stats.dropped, stats.pending) == (10, 15, 0)
        assert _settled(sink)

    def test_emit_never_waits_for_the_service(self, service: Service,
                                              sinks: Callable[..., RemoteSink]) -> None:
        """While the service holds a request, emit returns for every event (the thread is
        the one waiting) and flush with a timeout returns False; once released, all arrive."""
        service.hold = threading.Event()
        sink = sinks(service.url, batch=10, timeout_s=60)
        first, *rest = _events(101)
        sink.emit(first)
        assert not sink.flush(timeout_s=0.05)
        assert service.entered.wait(timeout=30)  # the sender is inside a request
        for event in rest:
            sink.emit(event)
        assert not service.hold.is_set()  # every emit returned while the request was held
        assert sink.stats.pending == 101
        assert not sink.flush(timeout_s=0.05)
        service.hold.set()
        assert sink.flush(timeout_s=30)
        assert service.ids() == {first.event_id} | {event.event_id for event in rest}

    def test_413_splits_the_batch(self, service: Service,
                                  sinks: Callable[..., RemoteSink]) -> None:
        """A batch refused as too large is sent in halves down to one event; an event too
        large alone is dropped and counted; every other event arrives once."""
        normal = _events(8)
        line = len(normal[0].to_json()) + 1
        (huge,) = _events(1, detail="x" * (4 * line))
        assert len(huge.to_json()) + 1 > 3 * line
        service.max_body = 3 * line
        sink = sinks(service.url, batch=16)
        for event in [*normal[:4], huge, *normal[4:]]:
            sink.emit(event)
        assert sink.flush(timeout_s=30)
        assert service.ids() == {event.event_id for event in normal}
        assert set(service.received.values()) == {1}
        assert all(len(r.lines) <= 3 for r in service.requests)
        stats = sink.stats
        assert (stats.sent, stats.dropped) == (8, 1)
        assert stats.last_failure is not None
        assert stats.last_failure.code == FC.SVC_TOO_LARGE.value
        assert _settled(sink)

    def test_emit_after_close_raises_and_close_twice_is_harmless(
            self, service: Service, sinks: Callable[..., RemoteSink]) -> None:
        """A closed sink refuses events (misuse); a second close does nothing."""
        sink = sinks(service.url)
        (event,) = _events(1)
        sink.emit(event)
        sink.close()
        sink.close()
        assert service.ids() == {event.event_id}
        with pytest.raises(ValueError, match="is closed"):
            sink.emit(event)
        with pytest.raises(TypeError, match="expected an Event"):
            sinks(service.url).emit({"event": "tool.failed"})  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# the key


class TestKey:
    @pytest.mark.parametrize(("status", "code"), [(401, "FC-SVC-001"), (403, "FC-SVC-002")])
    def test_a_refused_key_stops_sending_and_says_so_once(
            self, status: int, code: str, service: Service,
            sinks: Callable[..., RemoteSink], capsys: pytest.CaptureFixture[str]) -> None:
        """401/403: sending stops for good, everything is counted as dropped, one line on
        stderr names the URL and the service's code; the key appears nowhere, not even the
        copy the service echoed back."""
        service.refuse = (status, code)
        secret = "wrong-key-Zx81SECRET"
        sink = sinks(service.url, secret)
        for event in _events(3):
            sink.emit(event)
        assert sink.flush(timeout_s=30)
        for event in _events(2):
            sink.emit(event)
        assert sink.flush(timeout_s=0)
        stats = sink.stats
        assert stats.stopped
        assert (stats.emitted, stats.dropped, stats.sent, stats.pending) == (5, 5, 0, 0)
        assert stats.last_failure is not None
        assert stats.last_failure.code == code
        assert len(service.requests) == 0
        err = capsys.readouterr().err
        lines = err.splitlines()
        assert len(lines) == 1
        assert sink.url in lines[0]
        assert code in lines[0]
        shown = [err, repr(sink), str(sink), repr(stats), msgspec.json.encode(stats).decode(),
                 str(stats.last_failure.detail), stats.last_failure.message]
        assert not [text for text in shown if secret in text]
        sink.close()
        assert secret not in capsys.readouterr().err

    @pytest.mark.parametrize("url", ["ftp://example.com", "example.com:8000", "http://",
                                     "https://", "file://host/events"])
    def test_a_url_that_is_not_http_is_refused(self, url: str) -> None:
        """ValueError at construction, naming the URL."""
        with pytest.raises(ValueError, match="url=") as caught:
            RemoteSink(url, KEY)
        assert url in str(caught.value)

    def test_credentials_in_the_url_are_refused_unshown(self) -> None:
        """A URL with a password is refused and its password is not in the message."""
        with pytest.raises(ValueError, match="no credentials") as caught:
            RemoteSink("https://agent:pw-Secret99@example.com", KEY)
        assert "pw-Secret99" not in str(caught.value)

    @pytest.mark.parametrize("key", ["", "two words-Secret77", "tab\tSecret77", "é-Secret77"])
    def test_a_bad_key_is_refused_unshown(self, key: str) -> None:
        """An empty key, or one with spaces or other characters, is a ValueError naming the
        key and never its text."""
        with pytest.raises(ValueError, match="key") as caught:
            RemoteSink("https://example.com", key)
        assert not key or "Secret77" not in str(caught.value)

    @pytest.mark.parametrize(("option", "value"), [
        ("batch", 0), ("batch", 2.5), ("buffer", -1), ("flush_interval_s", 0.0),
        ("timeout_s", float("nan")), ("max_delay_s", 0), ("exit_timeout_s", -1.0),
        ("batch", True)])
    def test_an_option_out_of_range_is_refused(self, option: str, value: object) -> None:
        """ValueError naming the option and its value."""
        with pytest.raises(ValueError, match=f"{option}={value!r}"):
            RemoteSink("https://example.com", KEY, **{option: value})  # type: ignore[arg-type]

    def test_repr_names_the_endpoint_only(self) -> None:
        """repr shows the endpoint URL, never the key."""
        sink = RemoteSink("https://example.com/team/", KEY)
        try:
            assert repr(sink) == "RemoteSink('https://example.com/team/v1/events', open, pending=0)"
            assert KEY not in repr(sink)
        finally:
            sink.close()


# ---------------------------------------------------------------------------------------------
# exit and fork (child processes)


def _python(code: str, url: str, **more: object) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(code).format(url=url, key=KEY, **more)
    return subprocess.run([sys.executable, "-c", script], cwd=REPO, env=ENV,
                          capture_output=True, text=True, timeout=120, check=False)


_EXIT = """
    import json, failcode
    from failcode import FC
    from failcode.events import failure_event

    sink = failcode.report_to({url!r}, {key!r})
    failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={{"program": "cargo"}})
    ids = []
    for step in range(300):
        event = failure_event(failure, event="command.failed", session="exit", step=step)
        sink.emit(event)
        ids.append(event.event_id)
    print(json.dumps(ids))
"""


class TestProcesses:
    def test_a_normal_exit_delivers_everything(self, service: Service) -> None:
        """A process that emits and exits (no flush, no close) loses nothing."""
        result = _python(_EXIT, service.url)
        assert result.returncode == 0, result.stderr
        assert result.stderr == ""
        assert service.ids() == set(json.loads(result.stdout))

    def test_an_exit_while_the_service_is_down_says_what_was_lost(self) -> None:
        """With nothing listening, exit waits at most exit_timeout_s, exits normally and says
        on stderr how many events were not delivered."""
        script = _EXIT.replace("failcode.report_to({url!r}, {key!r})",
                               "failcode.report_to({url!r}, {key!r}, exit_timeout_s=0.3)")
        result = _python(script, f"http://127.0.0.1:{_dead_port()}")
        assert result.returncode == 0, result.stderr
        (line,) = result.stderr.splitlines()
        assert "300 events not delivered" in line
        assert "at exit" in line

    def test_a_forked_child_sends_its_own_events(self, service: Service) -> None:
        """After fork the child starts empty, with a sender of its own; parent and child both
        deliver what they emit."""
        result = _python("""
            import json, os, failcode
            from failcode import FC
            from failcode.events import failure_event

            sink = failcode.report_to({url!r}, {key!r})
            failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={{"program": "x"}})
            def emit(session, count):
                events = [failure_event(failure, event="command.failed", session=session,
                                        step=i) for i in range(count)]
                for event in events:
                    sink.emit(event)
                return [event.event_id for event in events]
            ids = emit("parent", 3)
            assert sink.flush(30)
            pid = os.fork()
            if pid == 0:
                child = emit("child", 4)
                ok = sink.flush(30)
                stats = sink.stats
                print(json.dumps({{"child": child, "ok": ok, "emitted": stats.emitted,
                                   "sent": stats.sent}}), flush=True)
                os._exit(0)
            os.waitpid(pid, 0)
            ids += emit("parent", 2)
            assert sink.flush(30)
            print(json.dumps({{"parent": ids, "sent": sink.stats.sent}}), flush=True)
        """, service.url)
        assert result.returncode == 0, result.stderr
        child, parent = (json.loads(line) for line in result.stdout.splitlines())
        assert (child["ok"], child["emitted"], child["sent"]) == (True, 4, 4)
        assert parent["sent"] == 5
        assert service.ids() == set(child["child"]) | set(parent["parent"])

    def test_import_does_not_load_the_client(self) -> None:
        """``import failcode`` and ``import failcode.events`` load neither the client nor the
        HTTP library; the first use of report_to does."""
        code = ("import sys, failcode, failcode.events\n"
                "print('failcode.events._remote' in sys.modules, 'http.client' in sys.modules)\n"
                "failcode.report_to\n"
                "print('failcode.events._remote' in sys.modules)\n")
        result = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=ENV,
                                capture_output=True, text=True, timeout=60, check=True)
        assert result.stdout.split() == ["False", "False", "True"]


# ---------------------------------------------------------------------------------------------
# the integrations


class TestIntegrations:
    def test_the_logging_handler_feeds_the_service(self, service: Service,
                                                   sinks: Callable[..., RemoteSink]) -> None:
        """A log record carrying a failure reaches the service through EventHandler; the
        handler's flush is the sink's."""
        sink = sinks(service.url)
        handler = EventHandler(sink)
        logger = logging.getLogger("failcode.tests.remote")
        logger.addHandler(handler)
        logger.propagate = False
        try:
            failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})
            logger.error("cargo is missing", extra={"failure": failure})
            logger.error("no failure here")
            handler.flush()
        finally:
            logger.removeHandler(handler)
            logger.propagate = True
        (request,) = service.requests
        (line,) = request.lines
        event = Event.from_json(line)
        assert (event.event, event.source) == ("tool.failed", "logging")
        assert event.failure is not None
        assert event.failure.code == failure.code

    def test_the_retry_hook_feeds_the_service(self, service: Service,
                                              sinks: Callable[..., RemoteSink]) -> None:
        """Every failed attempt of a retried call reaches the service through failure_hook,
        with its decision."""
        sink = sinks(service.url)
        calls = []

        @failcode.retry("default", on_failure=failure_hook(sink))
        def fetch() -> None:
            calls.append(1)
            raise ConnectionRefusedError(111, "Connection refused")

        with set_testing(True, attempts=2), contextlib.suppress(ConnectionRefusedError):
            fetch()
        assert sink.flush(timeout_s=30)
        events = [Event.from_json(line) for request in service.requests
                  for line in request.lines]
        assert len(events) == sink.stats.emitted >= 1
        assert all(event.decision is not None for event in events)
        assert service.ids() == {event.event_id for event in events}
