"""The recording OTLP/HTTP endpoint: what it accepts, answers and keeps."""

from __future__ import annotations

import gzip
import json
import threading
import time
import urllib.error
import urllib.request
from typing import TYPE_CHECKING

import pytest
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.logs.v1 import logs_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from tests.otlp.record import Recorder

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    with Recorder() as server:
        yield server


def post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, str]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read(), response.headers["Content-Type"]
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers["Content-Type"]


def log_request() -> logs_service_pb2.ExportLogsServiceRequest:
    record = logs_pb2.LogRecord(
        time_unix_nano=1_767_225_600_000_000_001,
        body=common_pb2.AnyValue(string_value="claude_code.tool_result"),
        attributes=[common_pb2.KeyValue(key="success",
                                        value=common_pb2.AnyValue(string_value="false"))])
    return logs_service_pb2.ExportLogsServiceRequest(resource_logs=[logs_pb2.ResourceLogs(
        scope_logs=[logs_pb2.ScopeLogs(log_records=[record])])])


def test_protobuf_gzip_is_kept_as_otlp_json(recorder: Recorder) -> None:
    """A gzip protobuf log request is kept in OTLP/JSON form, 64-bit times as strings."""
    body = gzip.compress(log_request().SerializeToString())
    status, answer, kind = post(f"{recorder.url}/v1/logs", body, {
        "Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"})
    assert status == 200
    assert kind == "application/x-protobuf"
    assert logs_service_pb2.ExportLogsServiceResponse.FromString(answer) == \
        logs_service_pb2.ExportLogsServiceResponse()
    kept = recorder.received[0]
    assert (kept.signal, kept.encoding, kept.status) == ("logs", "gzip", 200)
    record = kept.body["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]  # type: ignore[index]
    assert record["timeUnixNano"] == "1767225600000000001"
    assert record["attributes"] == [{"key": "success", "value": {"stringValue": "false"}}]


def test_span_ids_are_hex_and_enums_integers(recorder: Recorder) -> None:
    """A protobuf span's ids come out as hex and its kind and status as integers."""
    span = trace_pb2.Span(trace_id=bytes(range(16)), span_id=bytes(range(8)), name="llm_call",
                          kind=trace_pb2.Span.SPAN_KIND_CLIENT,
                          status=trace_pb2.Status(code=trace_pb2.Status.STATUS_CODE_ERROR))
    body = trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
        scope_spans=[trace_pb2.ScopeSpans(spans=[span])])]).SerializeToString()
    assert post(f"{recorder.url}/v1/traces", body,
                {"Content-Type": "application/x-protobuf"})[0] == 200
    kept = recorder.received[0].body["resourceSpans"][0]["scopeSpans"][0]["spans"][0]  # type: ignore[index]
    assert kept["traceId"] == bytes(range(16)).hex()
    assert kept["spanId"] == bytes(range(8)).hex()
    assert (kept["kind"], kept["status"]) == (3, {"code": 2})


def test_json_is_kept_as_sent_and_answered_in_json(recorder: Recorder) -> None:
    """An OTLP/JSON metrics request is kept as sent and answered with an empty JSON object."""
    sent = {"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"name": "m"}]}]}]}
    status, answer, kind = post(f"{recorder.url}/v1/metrics", json.dumps(sent).encode(),
                                {"Content-Type": "application/json; charset=utf-8"})
    assert (status, json.loads(answer), kind) == (200, {}, "application/json")
    assert recorder.received[0].body == sent


def test_authorization_is_not_kept(recorder: Recorder) -> None:
    """The authorization header is dropped; only that one came is kept."""
    post(f"{recorder.url}/v1/logs", log_request().SerializeToString(),
         {"Content-Type": "application/x-protobuf", "Authorization": "Bearer secret"})
    kept = recorder.received[0]
    assert kept.authorized
    assert "authorization" not in kept.headers
    assert "secret" not in json.dumps(kept.headers)


@pytest.mark.parametrize(("path", "kind", "body", "status"), [
    ("/v1/profiles", "application/x-protobuf", b"", 404),
    ("/v1/logs", "text/plain", b"hello", 415),
    ("/v1/logs", "application/x-protobuf", b"\xff\xff\xff", 400),
    ("/v1/logs", "application/json", b"[1, 2]", 400),
])
def test_refusals_are_recorded(recorder: Recorder, path: str, kind: str, body: bytes,
                               status: int) -> None:
    """A wrong path, type or body is refused with its status, and recorded with it."""
    assert post(f"{recorder.url}{path}", body, {"Content-Type": kind})[0] == status
    assert recorder.received[0].status == status
    assert recorder.received[0].error


def test_wait_quiet_returns_once_quiet_since_the_last_request(recorder: Recorder) -> None:
    """wait_quiet returns True no sooner than quiet_s after the last request arrived."""
    post(f"{recorder.url}/v1/logs", log_request().SerializeToString(),
         {"Content-Type": "application/x-protobuf"})
    assert recorder.wait_quiet(quiet_s=0.3, bound_s=10.0)
    assert time.monotonic() - recorder.received[-1].at >= 0.3


def test_wait_quiet_is_bounded(recorder: Recorder) -> None:
    """wait_quiet gives up at its bound when it cannot go quiet in time, whatever arrives
    meanwhile: a quiet period longer than the bound never ends before it (with requests
    arriving all along, waking the wait; how fast they come is the machine's business, so
    quiet_s > bound_s is what makes the outcome certain)."""
    stop = threading.Event()

    def keep_sending() -> None:
        while not stop.is_set():
            post(f"{recorder.url}/v1/logs", log_request().SerializeToString(),
                 {"Content-Type": "application/x-protobuf"})

    sender = threading.Thread(target=keep_sending)
    sender.start()
    try:
        start = time.monotonic()
        assert not recorder.wait_quiet(quiet_s=30.0, bound_s=1.0)
        assert time.monotonic() - start >= 1.0  # it waited out its bound, no less
    finally:
        stop.set()
        sender.join()
    assert recorder.received
