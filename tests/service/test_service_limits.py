"""Issue 36, items 5 and 7: a gzip body is read whole or refused, and connections are bounded.

Against a real ``failcode serve`` (its own process, on 127.0.0.1):

- A gzip body of two members is read whole, as :func:`gzip.decompress` reads it, on every door
  that inflates a body (events, OTLP logs, traces and metrics); bytes after the stream that
  begin no member are a 400 FC-DATA-001 naming where; the classify door, whose JSON FastAPI
  reads itself, refuses any gzip body (415) rather than reading part of it.
- A client that sends half a request line, or a head and half its body, is disconnected within
  the read timeout; with the connection cap reached a request is answered 503, and the service
  serves again once connections close.
"""

from __future__ import annotations

import gzip
import json
import socket
import time
from typing import TYPE_CHECKING

import pytest

from failcode import FC, Failure, classify_text
from failcode.events import failure_event
from tests.service.conftest import running
from tests.service.test_access import otlp_export

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.service.conftest import Served

@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running("sqlite", tmp_path_factory.mktemp("limits")) as served:
        yield served


def _members(body: bytes) -> bytes:
    """``body`` as two gzip members, split in its middle."""
    half = len(body) // 2
    return gzip.compress(body[:half]) + gzip.compress(body[half:])


def _events(count: int) -> bytes:
    """``count`` real failcode events (fresh ids) of a classified failure."""
    failure = classify_text("TimeoutError", "read timed out")
    assert isinstance(failure, Failure)
    lines = [failure_event(failure, event="command.failed", session="limits").to_json()
             for _ in range(count)]
    return b"\n".join(lines) + b"\n"


def _post(service: Served, path: str, body: bytes, content_type: str,
          ) -> tuple[int, dict[str, str], bytes]:
    return service.request("POST", path, key=service.keys["ingest"], body=body, headers={
        "Content-Type": content_type, "Content-Encoding": "gzip"})


OTLP = [("/v1/logs", "logs"), ("/v1/traces", "traces"), ("/v1/metrics", "logs")]


def test_two_gzip_members_of_events_are_both_read(service: Served) -> None:
    """Two members, one event each: both are stored."""
    one, two = _events(1), _events(1)
    status, _headers, body = _post(service, "/v1/events",
                                   gzip.compress(one) + gzip.compress(two),
                                   "application/x-ndjson")
    assert status == 200, body
    assert json.loads(body)["new"] == 2


@pytest.mark.parametrize(("path", "signal"), OTLP)
def test_two_gzip_members_of_otlp_are_both_read(service: Served, path: str,
                                                signal: str) -> None:
    """An OTLP export split across two members is read whole (its first half alone is no
    message): answered as the same export in one member is."""
    export = otlp_export(signal) if path != "/v1/metrics" else _metrics_export()
    split = _post(service, path, _members(export), "application/x-protobuf")
    whole = _post(service, path, gzip.compress(export), "application/x-protobuf")
    assert split[0] == whole[0] == 200, (split, whole)


def _metrics_export() -> bytes:
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )
    from opentelemetry.proto.metrics.v1.metrics_pb2 import Gauge, Metric, NumberDataPoint

    request = ExportMetricsServiceRequest()
    scope = request.resource_metrics.add().scope_metrics.add()
    for index in range(20):
        scope.metrics.append(Metric(name=f"failcode.test.gauge{index}", gauge=Gauge(
            data_points=[NumberDataPoint(as_int=index, time_unix_nano=1)])))
    return bytes(request.SerializeToString())


@pytest.mark.parametrize("tail", [b"garbage after the stream", b"\x00\x00junk", b"\x1f"])
@pytest.mark.parametrize("path", ["/v1/events", "/v1/logs", "/v1/traces", "/v1/metrics"])
def test_bytes_after_the_gzip_stream_are_400(service: Served, path: str, tail: bytes) -> None:
    """Bytes after the last member that begin no member (or a member cut short): 400
    FC-DATA-001 naming the byte offset, nothing read."""
    if path == "/v1/events":
        body, kind = _events(1), "application/x-ndjson"
    else:
        body = _metrics_export() if path == "/v1/metrics" else otlp_export(path[4:])
        kind = "application/x-protobuf"
    stream = gzip.compress(body)
    status, _headers, answer = _post(service, path, stream + tail, kind)
    assert status == 400, answer
    problem = json.loads(answer)
    assert problem["code"] == FC.DATA_INVALID_INPUT.value
    offset = len(stream) + len(tail) - len(tail.lstrip(b"\x00"))
    assert f"byte {offset}" in json.dumps(problem), problem


def test_zero_padding_after_the_stream_is_read(service: Served) -> None:
    """Zero bytes after the last member are padding, as gzip.decompress reads them."""
    status, _headers, answer = _post(service, "/v1/events",
                                     gzip.compress(_events(1)) + b"\x00" * 8,
                                     "application/x-ndjson")
    assert status == 200, answer
    assert json.loads(answer)["new"] == 1


@pytest.mark.parametrize("tail", [b"", b"trailing bytes"])
def test_classify_refuses_any_gzip_body(service: Served, tail: bytes) -> None:
    """The classify door reads no gzip, two members or one: 415, never half a body."""
    payload = json.dumps({"exception": {"type": "TimeoutError", "message": "slow"}}).encode()
    status, _headers, answer = service.request(
        "POST", "/v1/classify", key=service.keys["ingest"], body=_members(payload) + tail,
        headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert status == 415, answer
    assert json.loads(answer)["code"] == FC.SVC_UNSUPPORTED_MEDIA.value


# -- connections ---------------------------------------------------------------------------


READ_TIMEOUT = 1.0
DEADLINE = 20.0
"""How long a test waits for what it expects (the bound plus a loaded machine's slack)."""


@pytest.fixture(scope="module")
def bounded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running("sqlite", tmp_path_factory.mktemp("bounded"),
                 extra=("--read-timeout", str(READ_TIMEOUT))) as served:
        yield served


def _closed_within(sock: socket.socket, deadline: float) -> bytes | None:
    """What the server sent before closing ``sock``, or None if it is still open at the
    deadline (monotonic)."""
    received = b""
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            chunk = sock.recv(4096)
        except TimeoutError:
            return None
        except ConnectionResetError:
            return received
        if not chunk:
            return received
        received += chunk
    return None


@pytest.mark.parametrize("sent", [
    b"GET /hea",
    b"GET /healthz HTTP/1.1\r\nHost: x\r\n",
    b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789",
], ids=["half-request-line", "half-head", "half-body"])
def test_a_slow_request_is_disconnected(bounded: Served, sent: bytes) -> None:
    """Half a request, then silence: the server closes the connection (after the read timeout,
    within the deadline), unanswered, and goes on serving others."""
    with socket.create_connection(("127.0.0.1", bounded.port), timeout=DEADLINE) as sock:
        sock.sendall(sent)
        answer = _closed_within(sock, time.monotonic() + DEADLINE)
    assert answer is not None, f"still open {DEADLINE} s after {sent!r}"
    assert b"HTTP/1.1 200" not in answer
    status, _headers, _body = bounded.request("GET", "/healthz")
    assert status == 200


def test_a_kept_alive_connection_is_bounded_again(bounded: Served) -> None:
    """After one answer on a connection, half of the next request: closed as well."""
    with socket.create_connection(("127.0.0.1", bounded.port), timeout=DEADLINE) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        first = b""
        while b'"ok"' not in first:
            chunk = sock.recv(4096)
            assert chunk, first
            first += chunk
        assert first.startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /heal")
        assert _closed_within(sock, time.monotonic() + DEADLINE) is not None


CAP = 3


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running("sqlite", tmp_path_factory.mktemp("capped"),
                 extra=("--max-connections", str(CAP))) as served:
        yield served


def _get(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=DEADLINE) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = _closed_within(sock, time.monotonic() + DEADLINE)
    assert answer is not None
    return answer


def test_connections_past_the_cap_are_503_and_the_service_serves_on(capped: Served) -> None:
    """With the cap's connections open (idle), a request is answered 503; once they close, the
    service answers again."""
    idle = [socket.create_connection(("127.0.0.1", capped.port), timeout=DEADLINE)
            for _ in range(CAP - 1)]
    try:
        deadline = time.monotonic() + DEADLINE
        answer = _get(capped.port)
        while not answer.startswith(b"HTTP/1.1 503") and time.monotonic() < deadline:
            answer = _get(capped.port)  # the server may not have accepted the idle ones yet
        assert answer.startswith(b"HTTP/1.1 503"), answer[:200]
    finally:
        for sock in idle:
            sock.close()
    deadline = time.monotonic() + DEADLINE
    answer = _get(capped.port)
    while not answer.startswith(b"HTTP/1.1 200") and time.monotonic() < deadline:
        answer = _get(capped.port)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
