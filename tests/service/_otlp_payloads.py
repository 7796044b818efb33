"""OTLP request bodies made by the real OpenTelemetry Python SDK, for the OTLP door's tests.

Log records go through a ``LoggerProvider`` with the SDK's in-memory exporter, spans through
a ``TracerProvider`` with its in-memory exporter; the finished batch is encoded by the OTLP
exporters' own encoders (``encode_logs``, ``encode_spans``). The protobuf body is that message
serialized; the JSON body is ``MessageToDict`` of it with the ids turned from base64 into hex,
as the OTLP/JSON encoding requires.
"""

from __future__ import annotations

import base64
import contextlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from google.protobuf.message import Message
    from opentelemetry.trace import Span, Tracer

Encoding = Literal["protobuf", "json"]
ENCODINGS: tuple[Encoding, ...] = ("protobuf", "json")
CONTENT_TYPES: dict[Encoding, str] = {"protobuf": "application/x-protobuf",
                                      "json": "application/json"}

T0 = 1_760_000_000_000_000_000
"""A fixed record time (ns), so tests can name "later" records."""

CLAUDE = {"service.name": "claude-code", "service.version": "2.1.30"}
CODEX = {"service.name": "codex_cli_rs", "service.version": "0.58.0"}
GEMINI = {"service.name": "gemini-cli", "service.version": "0.61.0"}


@dataclass(frozen=True)
class Record:
    """One log record as an agent emits it."""

    attributes: Mapping[str, Any]
    body: Any = None
    event_name: str | None = None
    time_ns: int | None = T0


@dataclass
class Payload:
    """An export request and its two wire forms."""

    message: Message
    signal: Literal["logs", "traces"]

    def body(self, encoding: Encoding) -> bytes:
        if encoding == "protobuf":
            return self.message.SerializeToString()
        return json.dumps(self.json_dict()).encode()

    def json_dict(self) -> dict[str, Any]:
        return _hex_ids(MessageToDict(self.message))

    def content_type(self, encoding: Encoding) -> str:
        return CONTENT_TYPES[encoding]


def _hex_ids(value: Any) -> Any:
    """``MessageToDict`` writes bytes as base64; OTLP/JSON writes trace and span ids as hex."""
    if isinstance(value, dict):
        return {key: (base64.b64decode(item).hex()
                      if key in ("traceId", "spanId", "parentSpanId") and isinstance(item, str)
                      else _hex_ids(item))
                for key, item in value.items()}
    if isinstance(value, list):
        return [_hex_ids(item) for item in value]
    return value


def logs(records: Sequence[Record], resource: Mapping[str, Any] = CLAUDE,
         scope: str = "agent.events") -> Payload:
    """An ``ExportLogsServiceRequest`` of ``records``, emitted by the SDK in this order."""
    provider = LoggerProvider(resource=Resource.create(dict(resource)))
    exporter = InMemoryLogRecordExporter()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    logger = provider.get_logger(scope)
    for record in records:
        logger.emit(body=record.body, attributes=dict(record.attributes),
                    event_name=record.event_name, timestamp=record.time_ns)
    message = encode_logs(exporter.get_finished_logs())
    provider.shutdown()
    return Payload(message, "logs")


class Spans:
    """A ``TracerProvider`` whose finished spans become one ``ExportTraceServiceRequest``."""

    def __init__(self, resource: Mapping[str, Any] | None = None) -> None:
        self.provider = TracerProvider(resource=Resource.create(dict(resource or {
            "service.name": "support-agent", "service.version": "1.4.0"})))
        self.exporter = InMemorySpanExporter()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer: Tracer = self.provider.get_tracer("agent.framework")

    @contextlib.contextmanager
    def span(self, name: str, attributes: Mapping[str, Any] | None = None, *,
             error: str | None = None, ok: bool = False,
             raises: BaseException | None = None) -> Iterator[Span]:
        """A span (ended on exit): ``error`` sets status ERROR with that description, ``ok``
        status OK; ``raises`` is raised inside it, so the SDK itself records the exception
        and sets ERROR, and is then swallowed (the spans around it do not see it)."""
        try:
            with self.tracer.start_as_current_span(name, attributes=dict(attributes or {})) \
                    as span:
                yield span
                if error is not None:
                    span.set_status(Status(StatusCode.ERROR, error))
                elif ok:
                    span.set_status(Status(StatusCode.OK))
                if raises is not None:
                    raise raises
        except BaseException as exc:
            if raises is None or exc is not raises:
                raise

    def payload(self) -> Payload:
        message = encode_spans(self.exporter.get_finished_spans())
        self.provider.shutdown()
        return Payload(message, "traces")
