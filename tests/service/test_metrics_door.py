"""``POST /v1/metrics``: OTLP metrics are accepted as ``/v1/logs`` accepts logs, then dropped.

What the exporters send is sent: the OpenTelemetry Python SDK's own ``OTLPMetricExporter``
(protobuf, plain and gzip) against the running service, and the metrics requests the lab
recorded from the agents (tests/otlp/fixtures): Gemini CLI's and Qwen Code's OTLP/JSON as they
came, Claude Code's and Codex CLI's protobuf encoded again from their recording. Each is a 200
with the empty export response in its own media type, and the project's store is unchanged.
Keys, bad bodies, encodings and sizes are answered exactly as on ``/v1/logs``.
"""

from __future__ import annotations

import gzip
import http.client
import json
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import pytest

from failcode import FC
from tests._needs import need_module
from tests.conftest import BACKENDS
from tests.otlp.capture import FIXTURES
from tests.service.conftest import Served, running

if TYPE_CHECKING:
    from collections.abc import Iterator

MIB: Final = 1024 * 1024
_KINDS: Final = ("gauge", "sum", "histogram", "exponentialHistogram", "summary")


@pytest.fixture(scope="module", params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
            ) -> Iterator[Served]:
    """One service per backend for this module."""
    with running(request.param, tmp_path_factory.mktemp(f"metrics-{request.param}")) as served:
        yield served


def _stored(served: Served) -> dict[str, Any]:
    status, body = served.json("GET", "/v1/project", key=served.keys["read"])
    assert status == 200, body
    stats: dict[str, Any] = body["stats"]
    return stats


def _recorded(media: str) -> list[tuple[str, dict[str, Any]]]:
    """The recorded metrics requests that came as ``media``: (agent/scenario, OTLP/JSON)."""
    found = []
    for meta_path in sorted(FIXTURES.glob("*/*/meta.json")):
        meta = json.loads(meta_path.read_text())
        for entry in meta["otlp"]:
            if entry["path"] == "/v1/metrics" and entry["content_type"] == media:
                run = meta_path.parent
                found.append((f"{run.parent.name}/{run.name}/{entry['file']}",
                              json.loads((run / entry["file"]).read_text())))
    return found


def _points(export: dict[str, Any]) -> int:
    """The data points of an OTLP/JSON metrics export (what X-Failcode-Received counts)."""
    return sum(len(metric[kind].get("dataPoints", ()))
               for resource in export.get("resourceMetrics", ())
               for scope in resource.get("scopeMetrics", ())
               for metric in scope.get("metrics", ())
               for kind in _KINDS if kind in metric)


JSON_RECORDED: Final = _recorded("application/json")
PROTOBUF_RECORDED: Final = _recorded("application/x-protobuf")


def _sdk_metrics() -> Any:
    """What an instrumented agent's MeterProvider collects: a counter, an up-down counter, a
    histogram and an observable gauge, with attributes (the SDK's ``MetricsData``)."""
    from opentelemetry.metrics import CallbackOptions, Observation
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.resources import Resource

    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader], resource=Resource.create({
        "service.name": "gemini-cli", "service.version": "0.61.0"}))
    meter = provider.get_meter("gemini-cli")
    calls = meter.create_counter("gemini_cli.tool.call.count")
    calls.add(3, {"function_name": "run_shell_command", "success": True})
    calls.add(1, {"function_name": "run_shell_command", "success": False})
    meter.create_up_down_counter("gemini_cli.session.active").add(1)
    latency = meter.create_histogram("gemini_cli.api.request.latency", unit="ms")
    for value in (120, 480, 3000):
        latency.record(value, {"model": "gemini-2.5-flash"})

    def memory(_options: CallbackOptions) -> list[Observation]:
        return [Observation(52_000_000, {"memory_type": "heap_used"})]

    meter.create_observable_gauge("gemini_cli.memory.usage", callbacks=[memory], unit="By")
    data = reader.get_metrics_data()
    provider.shutdown()
    return data


def _sdk_points(data: Any) -> int:
    return sum(len(metric.data.data_points) for resource in data.resource_metrics
               for scope in resource.scope_metrics for metric in scope.metrics)


def _exporter(served: Served, key: str, *, compressed: bool) -> Any:
    need_module("opentelemetry.exporter.otlp.proto.http")
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter(
        endpoint=f"{served.url}/v1/metrics", headers={"Authorization": f"Bearer {key}"},
        compression=Compression.Gzip if compressed else Compression.NoCompression, timeout=10)


def _protobuf(data: Any) -> bytes:
    from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics

    return bytes(encode_metrics(data).SerializeToString())


# -- what the exporters see ---------------------------------------------------------------------


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_the_sdk_metric_exporter_succeeds(service: Served, compressed: bool) -> None:
    """The Python SDK's OTLPMetricExporter reports SUCCESS, and nothing is stored."""
    from opentelemetry.sdk.metrics.export import MetricExportResult

    before = _stored(service)
    exporter = _exporter(service, service.keys["ingest"], compressed=compressed)
    try:
        assert exporter.export(_sdk_metrics()) == MetricExportResult.SUCCESS
    finally:
        exporter.shutdown()
    assert _stored(service) == before


def test_protobuf_answer_is_an_empty_export_response(service: Served) -> None:
    """A protobuf export is answered 200 with an empty ExportMetricsServiceResponse (no
    partial success) and the data points read counted in X-Failcode-Received."""
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceResponse,
    )

    data = _sdk_metrics()
    status, headers, body = service.request(
        "POST", "/v1/metrics", key=service.keys["ingest"], body=_protobuf(data),
        headers={"Content-Type": "application/x-protobuf"})
    assert status == 200, body
    assert headers["content-type"] == "application/x-protobuf"
    assert not ExportMetricsServiceResponse.FromString(body).HasField("partial_success")
    assert int(headers["x-failcode-received"]) == _sdk_points(data) > 0
    assert (headers["x-failcode-new"], headers["x-failcode-duplicates"]) == ("0", "0")


@pytest.mark.parametrize(("name", "export"), JSON_RECORDED, ids=[n for n, _ in JSON_RECORDED])
def test_recorded_json_exports_are_answered_with_an_empty_object(
        service: Served, name: str, export: dict[str, Any]) -> None:
    """Gemini CLI's and Qwen Code's OTLP/JSON metrics: 200 ``{}`` as JSON, nothing stored."""
    before = _stored(service)
    status, headers, body = service.request(
        "POST", "/v1/metrics", key=service.keys["ingest"], body=json.dumps(export).encode(),
        headers={"Content-Type": "application/json"})
    assert status == 200, (name, body[:300])
    assert headers["content-type"] == "application/json"
    assert json.loads(body) == {}
    assert int(headers["x-failcode-received"]) == _points(export)
    assert _stored(service) == before


def test_the_recordings_hold_json_and_protobuf_metrics() -> None:
    """The fixtures this module sends include Gemini CLI's JSON and another agent's protobuf."""
    assert any(name.startswith("gemini-cli/") for name, _ in JSON_RECORDED)
    assert PROTOBUF_RECORDED


@pytest.mark.parametrize(("name", "export"), PROTOBUF_RECORDED,
                         ids=[n for n, _ in PROTOBUF_RECORDED])
def test_recorded_protobuf_exports_are_accepted(service: Served, name: str,
                                                export: dict[str, Any]) -> None:
    """Claude Code's and Codex CLI's metrics, encoded again as the protobuf they sent: 200
    with an empty protobuf answer, every data point counted."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )

    message = json_format.ParseDict(export, ExportMetricsServiceRequest())
    status, headers, body = service.request(
        "POST", "/v1/metrics", key=service.keys["ingest"],
        body=message.SerializeToString(), headers={"Content-Type": "application/x-protobuf"})
    assert (status, body) == (200, b""), name
    assert int(headers["x-failcode-received"]) == _points(export)


def test_gzip_json_is_accepted(service: Served) -> None:
    """A gzip-compressed OTLP/JSON export (Content-Encoding: gzip) is read like a plain one."""
    _name, export = JSON_RECORDED[0]
    status, headers, body = service.request(
        "POST", "/v1/metrics", key=service.keys["ingest"],
        body=gzip.compress(json.dumps(export).encode()),
        headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert (status, json.loads(body)) == (200, {})
    assert int(headers["x-failcode-received"]) == _points(export)


# -- keys ---------------------------------------------------------------------------------------


def test_the_sdk_exporter_fails_with_a_wrong_key(service: Served) -> None:
    """An unknown key: the exporter reports FAILURE (the service answered 401)."""
    from opentelemetry.sdk.metrics.export import MetricExportResult

    exporter = _exporter(service, "fc_ingest_not-a-key", compressed=False)
    try:
        assert exporter.export(_sdk_metrics()) == MetricExportResult.FAILURE
    finally:
        exporter.shutdown()


@pytest.mark.parametrize(("key", "query", "status", "code"), [
    (None, "", 401, FC.SVC_UNAUTHENTICATED),
    ("fc_ingest_not-a-key", "", 401, FC.SVC_UNAUTHENTICATED),
    ("read", "", 403, FC.SVC_FORBIDDEN),
    ("other", "?project=web", 403, FC.SVC_FORBIDDEN),
], ids=["no-key", "unknown-key", "read-scope", "another-project"])
def test_keys_are_checked_as_on_logs(service: Served, key: str | None, query: str,
                                     status: int, code: FC) -> None:
    """No or an unknown key 401, a read key or another project's key 403: as /v1/logs."""
    presented = service.keys.get(key, key) if key is not None else None
    body = _protobuf(_sdk_metrics())
    for path in ("/v1/logs", "/v1/metrics"):
        got, headers, answer = service.request(
            "POST", path + query, key=presented, body=body,
            headers={"Content-Type": "application/x-protobuf"})
        assert got == status, (path, answer[:300])
        assert headers["content-type"].startswith("application/problem+json")
        assert json.loads(answer)["code"] == code.value, path


def test_an_admin_key_may_export(service: Served) -> None:
    """The admin scope covers ingest, so its key may send metrics too."""
    status, _headers, _body = service.request(
        "POST", "/v1/metrics", key=service.keys["admin"], body=b"{}",
        headers={"Content-Type": "application/json"})
    assert status == 200


# -- bad bodies: the same answers as /v1/logs -----------------------------------------------------

class Bad(NamedTuple):
    """A bad request, as sent to /v1/logs and to /v1/metrics, and the status both answer."""

    why: str
    media: str
    extra: dict[str, str]
    logs_body: bytes
    metrics_body: bytes
    status: int


_BOMB: Final = gzip.compress(b"\0" * (33 * MIB))
_GZIP: Final = {"Content-Encoding": "gzip"}
BAD: Final = [
    Bad("protobuf garbage", "application/x-protobuf", {}, b"\xff\xff\xff\xff",
        b"\xff\xff\xff\xff", 400),
    Bad("JSON cut short", "application/json", {}, b'{"resourceLogs": [',
        b'{"resourceMetrics": [', 400),
    Bad("not UTF-8", "application/json", {}, b"\xff\xfe not utf-8", b"\xff\xfe not utf-8", 400),
    Bad("JSON not an object", "application/json", {}, b"[1, 2]", b"[1, 2]", 400),
    Bad("wrong shape", "application/json", {}, b'{"resourceLogs": {}}',
        b'{"resourceMetrics": {}}', 400),
    Bad("another media type", "text/plain", {}, b"hello", b"hello", 415),
    Bad("another encoding", "application/json", {"Content-Encoding": "br"}, b"{}", b"{}", 415),
    Bad("broken gzip", "application/json", _GZIP, b"\x1f\x8b\x08\x00garbage",
        b"\x1f\x8b\x08\x00garbage", 400),
    Bad("gzip bomb", "application/json", _GZIP, _BOMB, _BOMB, 413),
]


@pytest.mark.parametrize("bad", BAD, ids=[row.why for row in BAD])
def test_bad_bodies_are_answered_as_on_logs(service: Served, bad: Bad) -> None:
    """Each bad body gets the status and FC code /v1/logs gives its counterpart; nothing is
    stored."""
    before = _stored(service)
    answers = []
    for path, body in (("/v1/logs", bad.logs_body), ("/v1/metrics", bad.metrics_body)):
        got, headers, answer = service.request(
            "POST", path, key=service.keys["ingest"], body=body,
            headers={"Content-Type": bad.media, **bad.extra})
        assert headers["content-type"].startswith("application/problem+json"), (path, bad.why)
        answers.append((got, json.loads(answer)["code"]))
    assert answers[0] == answers[1], bad.why
    assert answers[1][0] == bad.status, (bad.why, answers)
    assert _stored(service) == before


def test_a_declared_length_over_8_mib_is_413_as_on_logs(service: Served) -> None:
    """Content-Length over 8 MiB: 413 FC-SVC-004 before the body is read, on both doors."""
    for path in ("/v1/logs", "/v1/metrics"):
        connection = http.client.HTTPConnection("127.0.0.1", service.port, timeout=60)
        try:
            connection.putrequest("POST", path)
            connection.putheader("Authorization", f"Bearer {service.keys['ingest']}")
            connection.putheader("Content-Type", "application/x-protobuf")
            connection.putheader("Content-Length", str(8 * MIB + 1))
            connection.endheaders()
            response = connection.getresponse()
            status, answer = response.status, response.read()
        finally:
            connection.close()
        assert status == 413, path
        assert json.loads(answer)["code"] == FC.SVC_TOO_LARGE.value, path


def test_a_wrong_shape_is_named(service: Served) -> None:
    """A JSON body of the wrong shape: 400 whose detail says where."""
    body = {"resourceMetrics": [{"scopeMetrics": [{"metrics": [
        {"name": "ok", "sum": {"dataPoints": []}},
        {"name": "bad", "gauge": {"dataPoints": {"asInt": "1"}}}]}]}]}
    status, problem = service.json("POST", "/v1/metrics", key=service.keys["ingest"],
                                   body=json.dumps(body).encode(),
                                   headers={"Content-Type": "application/json"})
    assert status == 400
    assert problem["code"] == FC.DATA_INVALID_INPUT.value
    assert ("resourceMetrics[0].scopeMetrics[0].metrics[1].gauge.dataPoints: expected a list"
            in problem["detail"]), problem
