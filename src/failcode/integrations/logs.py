"""Python logging and structlog: add the code, kind, category and signature; redact the message.

No SDK is needed: the logging filter uses the standard library, and the structlog processor is
a plain callable (structlog calls it with ``(logger, method_name, event_dict)``).

::

    handler.addFilter(FailcodeLogFilter())
    log.error("step failed", extra={"failure": failure})      # or exc_info with a FailureError

    structlog.configure(processors=[failcode_processor, ...])
    log.error("step failed", failure=failure)
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any, Final

from failcode.integrations._bounded import bounded_redact, bounded_redact_tree
from failcode.record._failure import Failure, FailureError

if TYPE_CHECKING:
    from collections.abc import MutableMapping

__all__ = ["FIELDS", "FailcodeLogFilter", "failcode_processor", "failure_fields"]

FIELDS: Final = ("failcode_code", "failcode_kind", "failcode_category", "failcode_signature")
"""The attributes the filter sets on a record (and the keys the processor adds)."""


def failure_fields(failure: Failure) -> dict[str, str]:
    """The four log fields of a failure."""
    return {
        "failcode_code": failure.code,
        "failcode_kind": failure.kind.value,
        "failcode_category": failure.category.value,
        "failcode_signature": failure.signature,
    }


def _failure_of(candidate: object) -> Failure | None:
    if isinstance(candidate, Failure):
        return candidate
    if isinstance(candidate, FailureError):
        return candidate.failure
    if isinstance(candidate, tuple) and len(candidate) == 3:
        return _failure_of(candidate[1])
    return None


class FailcodeLogFilter(logging.Filter):
    """A filter that adds :data:`FIELDS` and redacts the message; it never drops a record.

    The failure is taken from ``extra={"failure": ...}`` (a Failure or FailureError) or from the
    record's ``exc_info``. The message is rendered (``msg % args``), cut to 16 KiB and redacted
    (the cut comes first, so a huge message costs its capped part); an exception's traceback is
    formatted once, bounded and redacted into ``exc_text``, which formatters print instead of
    formatting it again. Records without a failure get the fields set to ``""`` so a
    format string that names them never fails.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        failure = _failure_of(getattr(record, "failure", None)) or _failure_of(record.exc_info)
        fields = failure_fields(failure) if failure else dict.fromkeys(FIELDS, "")
        for key, value in fields.items():
            setattr(record, key, value)
        record.msg = bounded_redact(record.getMessage())
        record.args = None
        if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
            from failcode.render._render import format_traceback  # noqa: PLC0415 - only with exc_info

            record.exc_text = format_traceback(None, record.exc_info[1])
        if record.exc_text:
            record.exc_text = bounded_redact(record.exc_text)
        return True


def failcode_processor(
    logger: Any, method_name: str, event_dict: MutableMapping[str, Any],
) -> MutableMapping[str, Any]:
    """A structlog processor: add the failure's fields, replace it by its code, redact strings
    (each cut to 16 KiB first; containers walked 32 levels deep).

    The failure comes from the ``failure`` key (a Failure or FailureError) or from ``exc_info``
    (an exception or a triple). The ``failure`` key is replaced by the record's canonical dict
    so renderers that cannot serialize a Failure still work.
    """
    del logger, method_name  # the processor protocol passes them; the fields do not depend on them
    exc_info = event_dict.get("exc_info")
    if exc_info is True:  # structlog's "the exception being handled"
        exc_info = sys.exc_info()
    failure = _failure_of(event_dict.get("failure")) or _failure_of(exc_info)
    if failure is not None:
        event_dict.update(failure_fields(failure))
        if "failure" in event_dict:
            event_dict["failure"] = failure.to_dict()
    for key, value in list(event_dict.items()):
        if key != "exc_info":
            event_dict[key] = bounded_redact_tree(value)
    return event_dict
