"""Observability: OpenTelemetry spans, logging and structlog fields, Sentry events, artifacts."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pytest

from failcode import FC, FailureError
from tests._needs import need_module

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

RATE = FC.PROV_RATE_LIMIT.failure(surface="llm.complete", params={"provider": "OpenAI"})


# -- OpenTelemetry ------------------------------------------------------------------------------


@pytest.fixture
def spans() -> Iterator[tuple[Any, Any]]:
    """A tracer of a real SDK provider and its in-memory exporter."""
    need_module("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider.get_tracer("failcode-test"), exporter
    provider.shutdown()


def test_failed_span_has_error_status_and_code(spans: tuple[Any, Any]) -> None:
    """A FailureError escaping the span sets status ERROR, error.type = code, failcode attrs."""
    from opentelemetry.trace import StatusCode

    from failcode.integrations.otel import failure_span

    tracer, exporter = spans
    with pytest.raises(FailureError), failure_span(tracer, "llm.complete"):
        raise FailureError(RATE)
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "FC-PROV-003"
    assert span.attributes["failcode.kind"] == "provider_error"
    assert span.attributes["failcode.category"] == "transient"
    assert span.attributes["failcode.signature"] == RATE.signature
    assert not span.events  # no exception event (not recommended; messages may hold secrets)


def test_successful_span_has_no_error_type(spans: tuple[Any, Any]) -> None:
    """A span that succeeds keeps status UNSET and no error.type."""
    from opentelemetry.trace import StatusCode

    from failcode.integrations.otel import failure_span

    tracer, exporter = spans
    with failure_span(tracer, "llm.complete"):
        pass
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.UNSET
    assert "error.type" not in span.attributes


def test_retried_then_handled_failure_is_not_the_span_failure(spans: tuple[Any, Any]) -> None:
    """A failure that was retried and then succeeded is counted, not recorded as an error."""
    from opentelemetry.trace import StatusCode

    from failcode.integrations.otel import failure_span

    tracer, exporter = spans
    with failure_span(tracer, "llm.complete") as attempt:
        for number in range(3):
            try:
                if number < 2:
                    raise FailureError(RATE)
            except FailureError as exc:
                attempt.handled(exc.failure)
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.UNSET
    assert "error.type" not in span.attributes
    assert span.attributes["failcode.handled_failures"] == 2


def test_unclassified_exception_is_other(spans: tuple[Any, Any]) -> None:
    """A plain exception sets error.type to the convention's _OTHER."""
    from failcode.integrations.otel import failure_span

    tracer, exporter = spans
    with pytest.raises(ValueError, match="x"), failure_span(tracer, "op"):
        raise ValueError("x")
    (span,) = exporter.get_finished_spans()
    assert span.attributes["error.type"] == "_OTHER"


# -- logging and structlog ----------------------------------------------------------------------


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.lines.append(self.format(record))


@pytest.fixture
def capture() -> Iterator[tuple[logging.Logger, _Capture]]:
    """A logger whose handler carries the failcode filter."""
    from failcode.integrations.logs import FailcodeLogFilter

    logger = logging.getLogger("failcode.test.observe")
    handler = _Capture()
    handler.addFilter(FailcodeLogFilter())
    handler.setFormatter(logging.Formatter("%(failcode_code)s %(message)s"))
    logger.addHandler(handler)
    logger.propagate = False
    yield logger, handler
    logger.removeHandler(handler)


def test_log_filter_adds_fields_from_extra(capture: tuple[logging.Logger, _Capture]) -> None:
    """extra={'failure': ...} adds code, kind, category and signature to the record."""
    logger, handler = capture
    logger.error("step failed", extra={"failure": RATE})
    record = handler.records[0]
    assert (record.failcode_code, record.failcode_kind, record.failcode_category,  # type: ignore[attr-defined]
            record.failcode_signature) == (  # type: ignore[attr-defined]
        "FC-PROV-003", "provider_error", "transient", RATE.signature)
    assert handler.lines[0] == "FC-PROV-003 step failed"


def test_log_filter_reads_exc_info(capture: tuple[logging.Logger, _Capture]) -> None:
    """A FailureError logged with exc_info gives its fields."""
    logger, handler = capture
    try:
        raise FailureError(RATE)
    except FailureError:
        logger.exception("call failed")
    assert handler.records[0].failcode_code == "FC-PROV-003"  # type: ignore[attr-defined]


def test_log_filter_sets_empty_fields_without_failure(
        capture: tuple[logging.Logger, _Capture]) -> None:
    """A record without a failure still formats (fields empty)."""
    logger, handler = capture
    logger.warning("all good")
    assert handler.lines[0] == " all good"


def test_structlog_processor_adds_fields() -> None:
    """The structlog processor adds the fields in a real structlog pipeline."""
    structlog = need_module("structlog")
    from failcode.integrations.logs import failcode_processor

    with structlog.testing.capture_logs(processors=[failcode_processor]) as logs:
        structlog.get_logger().error("step failed", failure=RATE)
    assert logs[0]["failcode_code"] == "FC-PROV-003"
    assert logs[0]["failcode_signature"] == RATE.signature
    assert logs[0]["failure"]["code"] == "FC-PROV-003"


# -- Sentry -------------------------------------------------------------------------------------


@pytest.fixture
def sentry_events() -> Iterator[list[dict[str, Any]]]:
    """sentry-sdk initialised with failcode's before_send and a capturing transport."""
    sentry_sdk = need_module("sentry_sdk")
    from sentry_sdk.transport import Transport

    from failcode.integrations.sentry import before_send

    events: list[dict[str, Any]] = []

    class Capturing(Transport):
        def capture_envelope(self, envelope: Any) -> None:
            events.extend(item.payload.json for item in envelope.items if item.type == "event")

    sentry_sdk.init(dsn="http://public@127.0.0.1:9/1", transport=Capturing,
                    before_send=before_send, default_integrations=False, shutdown_timeout=0)
    yield events
    sentry_sdk.get_client().close(timeout=0)


def test_sentry_fingerprint_is_the_signature(sentry_events: list[dict[str, Any]]) -> None:
    """An event of a FailureError is grouped by the signature and tagged with code and kind."""
    import sentry_sdk

    try:
        raise FailureError(RATE)
    except FailureError:
        sentry_sdk.capture_exception()
    sentry_sdk.flush(timeout=5)
    (event,) = sentry_events
    assert event["fingerprint"] == [RATE.signature]
    assert event["tags"]["failcode.code"] == "FC-PROV-003"
    assert event["tags"]["failcode.kind"] == "provider_error"


# -- encrypted artifacts ------------------------------------------------------------------------


def test_artifact_round_trips_and_needs_the_key(tmp_path: Path) -> None:
    """An encrypted artifact decrypts with its key, and not with another."""
    need_module("cryptography")
    from failcode.integrations.artifact import (
        ArtifactError,
        generate_key,
        read_artifact,
        write_artifact,
    )

    key = generate_key()
    failure = FC.PROV_CONTENT_FILTERED.failure(surface="llm", params={"provider": "Azure"})
    ref = write_artifact(failure, tmp_path, key, sensitive={"prompt": "the flagged text"})
    path = tmp_path / ref.id
    assert ref.type == "encrypted_artifact"
    assert b"flagged" not in path.read_bytes()
    data = read_artifact(path, key)
    assert data["sensitive"] == {"prompt": "the flagged text"}
    assert data["failure"]["code"] == "FC-PROV-013"
    assert "signature:" in data["developer_detail"]
    with pytest.raises(ArtifactError, match="cannot decrypt"):
        read_artifact(path, generate_key())
