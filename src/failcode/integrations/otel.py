"""OpenTelemetry: a failed operation's span gets status ERROR and ``error.type`` = the code.

Semantic conventions (recording-errors): ``error.type`` is low-cardinality and predictable, so
it is the failcode code, never a message; it is not set on success; an error that was retried or
handled is not recorded as the operation's failure. Exceptions are not recorded as span events
(``RecordException`` is not recommended, and an exception message may hold secrets): the span
carries the code, ``failcode.kind``, ``failcode.category`` and ``failcode.signature`` instead.
Needs the ``otel`` extra (``opentelemetry-api``).

::

    with failure_span(tracer, "llm.complete") as attempt:
        for _ in range(3):
            try:
                return call()
            except FailureError as exc:
                attempt.handled(exc.failure)   # retried: not the operation's failure
        ...
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

try:
    from opentelemetry.trace import Status, StatusCode
except ImportError as exc:  # pragma: no cover - depends on the environment
    msg = "failcode.integrations.otel needs OpenTelemetry: pip install 'failcode[otel]'"
    raise ImportError(msg) from exc

from failcode.record._failure import Failure, FailureError
from failcode.signature._redact import redact

if TYPE_CHECKING:
    from collections.abc import Iterator

    from opentelemetry.trace import Span, Tracer

__all__ = ["ERROR_TYPE", "FailureSpan", "failure_attributes", "failure_span", "record_failure"]

ERROR_TYPE: Final = "error.type"
OTHER: Final = "_OTHER"
"""The convention's fallback ``error.type`` for an exception failcode did not classify."""


def failure_attributes(failure: Failure) -> dict[str, str]:
    """The span attributes of a failure: ``error.type`` and the ``failcode.*`` keys."""
    return {
        ERROR_TYPE: failure.code,
        "failcode.kind": failure.kind.value,
        "failcode.category": failure.category.value,
        "failcode.signature": failure.signature,
    }


def record_failure(span: Span, failure: Failure) -> None:
    """Mark ``span``'s operation as failed with ``failure``: status ERROR, ``error.type``, attrs.

    The status description is the code and the redacted message.
    """
    span.set_attributes(failure_attributes(failure))
    span.set_status(Status(StatusCode.ERROR, redact(f"[{failure.code}] {failure.message}")))


class FailureSpan:
    """The handle :func:`failure_span` yields: the span and a count of handled failures."""

    __slots__ = ("handled_count", "span")

    def __init__(self, span: Span) -> None:
        self.span = span
        self.handled_count = 0

    def handled(self, failure: Failure) -> None:
        """Note a failure that was retried or otherwise handled: counted, never the span's error.

        Only ``failcode.handled_failures`` changes; status and ``error.type`` stay unset.
        """
        del failure  # the record is not the operation's outcome; only the count is kept
        self.handled_count += 1
        self.span.set_attribute("failcode.handled_failures", self.handled_count)

    def fail(self, failure: Failure) -> None:
        """Record ``failure`` as the operation's failure (the span ends failed)."""
        record_failure(self.span, failure)


@contextmanager
def failure_span(tracer: Tracer, name: str, **attributes: Any) -> Iterator[FailureSpan]:
    """Start a span for one operation; a FailureError escaping it marks the span failed.

    Any other exception sets status ERROR and ``error.type`` = ``_OTHER`` (no message, no
    exception event). The exception is re-raised. Success leaves the status unset.
    """
    with tracer.start_as_current_span(name, attributes=attributes or None,
                                      record_exception=False,
                                      set_status_on_exception=False) as span:
        handle = FailureSpan(span)
        try:
            yield handle
        except FailureError as exc:
            record_failure(span, exc.failure)
            raise
        except Exception:
            span.set_attribute(ERROR_TYPE, OTHER)
            span.set_status(Status(StatusCode.ERROR))
            raise
