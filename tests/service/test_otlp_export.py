"""The OpenTelemetry Python SDK's own OTLP/HTTP exporters, pointed at the running service.

This is the whole setup an agent needs: ``OTLPLogExporter`` / ``OTLPSpanExporter`` with the
service's URL and an ``Authorization`` header (what ``OTEL_EXPORTER_OTLP_ENDPOINT`` and
``OTEL_EXPORTER_OTLP_HEADERS`` configure). Log records shaped as Claude Code's documented
events and GenAI spans go out as protobuf, gzip-compressed and not, through the SDK's batch
processors; the service stores the failures as findings, an export retried stores nothing
twice, and a wrong key is refused (the exporter reports failure, nothing is stored).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import pytest

from tests._needs import need_module

if TYPE_CHECKING:
    from tests.service.conftest import Served


def _exporters(served: Served, key: str, *, compressed: bool) -> tuple[Any, Any]:
    need_module("opentelemetry.exporter.otlp.proto.http")
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    headers = {"Authorization": f"Bearer {key}"}
    compression = Compression.Gzip if compressed else Compression.NoCompression
    return (OTLPLogExporter(endpoint=f"{served.url}/v1/logs", headers=headers,
                            compression=compression, timeout=10),
            OTLPSpanExporter(endpoint=f"{served.url}/v1/traces", headers=headers,
                             compression=compression, timeout=10))


def _emit(log_exporter: Any, span_exporter: Any, *, session: str) -> tuple[Any, Any]:
    """Send what a Claude Code session and a GenAI-instrumented agent export; returns the
    SDK's captured records and spans, to send them again."""
    from opentelemetry._logs import SeverityNumber
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.trace import Status, StatusCode

    resource = Resource.create({"service.name": "claude-code", "service.version": "2.0.14"})
    logs = LoggerProvider(resource=resource)
    logs.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
    logger = logs.get_logger("com.anthropic.claude_code.events")
    base = {"session.id": session, "event.timestamp": "2026-12-01T10:00:00.000Z"}

    def record(name: str, **attributes: Any) -> None:
        logger.emit(body=f"claude_code.{name}", severity_number=SeverityNumber.INFO,
                    timestamp=time.time_ns(), attributes={"event.name": name, **base,
                                                          **attributes})

    # with OTEL_LOG_TOOL_DETAILS=1 Claude Code adds the command as tool_parameters
    record("tool_result", tool_name="Bash", success="false", duration_ms="12",
           error="Exit code 127\n/bin/sh: 1: cargo: not found",
           tool_parameters=json.dumps({"bash_command": "cargo", "full_command": "cargo build",
                                       "description": "Build the project"}))
    record("tool_result", tool_name="Read", success="true", duration_ms="3")
    record("api_error", model="claude-sonnet-4-5", error="Request timed out",
           status_code="undefined", duration_ms="60000", attempt="3")
    logs.shutdown()

    traces = TracerProvider(resource=Resource.create({"service.name": "my-agent",
                                                      "service.version": "0.4.1"}))
    traces.add_span_processor(SimpleSpanProcessor(span_exporter))
    tracer = traces.get_tracer("agent")
    with tracer.start_as_current_span("invoke_agent builder") as agent:
        agent.set_attribute("gen_ai.operation.name", "invoke_agent")
        agent.set_attribute("gen_ai.conversation.id", session + "-agent")
        with tracer.start_as_current_span("execute_tool run_tests") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "run_tests")
            tool.set_attribute("gen_ai.conversation.id", session + "-agent")
            tool.set_attribute("error.type", "ModuleNotFoundError")
            try:
                raise ModuleNotFoundError("No module named 'pytest_asyncio'")
            except ModuleNotFoundError as exc:
                tool.record_exception(exc)
                tool.set_status(Status(StatusCode.ERROR, str(exc)))
        with tracer.start_as_current_span("execute_tool read_file") as fine:
            fine.set_attribute("gen_ai.operation.name", "execute_tool")
            fine.set_attribute("gen_ai.tool.name", "read_file")
    traces.shutdown()
    return logs, traces


def _findings(served: Served) -> dict[str, Any]:
    status, body = served.json("GET", "/v1/findings?limit=100", key=served.keys["read"])
    assert status == 200, body
    return body


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_the_sdk_exporters_report_to_the_service(served: Served, compressed: bool) -> None:
    from opentelemetry.sdk.trace.export import SpanExportResult

    log_exporter, span_exporter = _exporters(served, served.keys["ingest"],
                                             compressed=compressed)
    sent_logs: list[Any] = []
    sent_spans: list[Any] = []
    real_log_export, real_span_export = log_exporter.export, span_exporter.export  # wrapped

    def log_export(batch: Any) -> Any:
        sent_logs.append(list(batch))
        result = real_log_export(batch)
        assert result.name == "SUCCESS"
        return result

    def span_export(batch: Any) -> Any:
        sent_spans.append(list(batch))
        result = real_span_export(batch)
        assert result == SpanExportResult.SUCCESS
        return result

    log_exporter.export, span_exporter.export = log_export, span_export
    _emit(log_exporter, span_exporter, session="cc-session-1")
    assert sum(map(len, sent_logs)) == 3
    assert sum(map(len, sent_spans)) == 3
    first = _findings(served)
    by_code: dict[str, dict[str, Any]] = {f["code"]: f for f in first["findings"]}
    # the failed Bash command (exit 127: cargo missing), the provider timeout, the failed tool
    # span with its exception; the successful Read and read_file and the agent span: nothing
    assert "FC-CMD-001" in by_code, by_code
    assert any(code.startswith("FC-PROV-") for code in by_code), by_code
    assert "FC-CMD-002" in by_code or any(
        "pytest_asyncio" in f["message"] for f in first["findings"]), by_code
    assert first["total"] == 3, by_code
    detail_status, detail = served.json("GET", f"/v1/findings/{by_code['FC-CMD-001']['id']}",
                                        key=served.keys["read"])
    assert detail_status == 200
    assert [(v["agent"], v["version"]) for v in detail["versions"]] == [
        ("claude-code", "2.0.14")]
    assert detail["occurrences"][0]["session"] == "cc-session-1"
    # an exporter sends a batch again when it thinks it failed: the same records, from a
    # fresh exporter (the first one is shut down with its provider), store nothing new
    retry_logs, retry_spans = _exporters(served, served.keys["ingest"], compressed=compressed)
    for batch in sent_logs:
        assert retry_logs.export(batch).name == "SUCCESS"
    for batch in sent_spans:
        assert retry_spans.export(batch) == SpanExportResult.SUCCESS
    again = _findings(served)
    assert [(f["id"], f["count"]) for f in again["findings"]] == [
        (f["id"], f["count"]) for f in first["findings"]]


def test_a_wrong_key_is_refused_and_stores_nothing(served: Served) -> None:
    log_exporter, span_exporter = _exporters(
        served, served.keys["read"] + "x", compressed=False)
    results: list[Any] = []
    real = log_exporter.export
    log_exporter.export = lambda batch: results.append(real(batch)) or results[-1]
    _emit(log_exporter, span_exporter, session="cc-refused")
    assert results
    assert all(r.name == "FAILURE" for r in results)
    assert _findings(served)["total"] == 0
    # a read key is a valid key of the wrong scope: refused too
    read_exporter, _ = _exporters(served, served.keys["read"], compressed=False)
    results.clear()
    real_read = read_exporter.export
    read_exporter.export = lambda batch: results.append(real_read(batch)) or results[-1]
    _emit(read_exporter, span_exporter, session="cc-refused-2")
    assert all(r.name == "FAILURE" for r in results)
    assert _findings(served)["total"] == 0
