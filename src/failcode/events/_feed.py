"""One-line feeds into a sink: the retry helpers' ``on_failure``, Python logging and structlog.

::

    @retry("provider", on_failure=failure_hook(sink, event="tool.failed"))
    logging.getLogger().addHandler(EventHandler(sink))
    structlog.configure(processors=[event_processor(sink), ...])
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

from failcode import Failure, FailureError
from failcode.events._event import failure_event

if TYPE_CHECKING:
    from collections.abc import Callable, MutableMapping

    from failcode import Decision
    from failcode.events._sink import Sink

__all__ = ["EventHandler", "event_processor", "failure_hook"]


def failure_hook(sink: Sink, *, event: str = "tool.failed", session: str | None = None,
                 source: str = "retry") -> Callable[[Failure, Decision], None]:
    """An ``on_failure`` hook for :func:`failcode.retry` / :class:`failcode.Retrying` that
    emits each failed attempt, with its decision, as a failure event into ``sink``."""

    def hook(failure: Failure, decision: Decision) -> None:
        sink.emit(failure_event(failure, event=event, session=session, source=source,
                                decision=decision))

    return hook


def _failure_of(candidate: object) -> Failure | None:
    if isinstance(candidate, Failure):
        return candidate
    if isinstance(candidate, FailureError):
        return candidate.failure
    if isinstance(candidate, tuple) and len(candidate) == 3:
        return _failure_of(candidate[1])
    return None


class EventHandler(logging.Handler):
    """A logging handler that emits a failure event for every record carrying a failure
    (``extra={"failure": f}`` or ``exc_info`` with a FailureError); other records are ignored.

    Args:
        sink: where the events go.
        event: the event name (default ``tool.failed``).
        source: the events' source (default ``logging``).
        level: the lowest level handled.
    """

    def __init__(self, sink: Sink, *, event: str = "tool.failed", source: str = "logging",
                 level: int = logging.NOTSET) -> None:
        super().__init__(level)
        self.sink = sink
        self.event = event
        self.source = source

    def emit(self, record: logging.LogRecord) -> None:
        """Emit the record's failure, if it carries one."""
        failure = _failure_of(getattr(record, "failure", None)) or _failure_of(record.exc_info)
        if failure is None:
            return
        try:
            self.sink.emit(failure_event(failure, event=self.event, source=self.source))
        except Exception:  # noqa: BLE001 - logging never raises into the caller
            self.handleError(record)

    def flush(self) -> None:
        """Flush the sink. Like every logging handler it never raises (``logging.shutdown``
        flushes it at exit): a sink that cannot write (a full disk) keeps its events for the
        next flush, and this prints one line naming the problem on stderr."""
        try:
            self.sink.flush()
        except FailureError as exc:
            print(f"failcode: EventHandler could not flush its sink: {exc.failure.message}",
                  file=sys.stderr)


def event_processor(sink: Sink, *, event: str = "tool.failed",
                    source: str = "structlog") -> Callable[..., MutableMapping[str, Any]]:
    """A structlog processor emitting a failure event for every log call that carries a
    failure (the ``failure`` key, or ``exc_info``); the event dict passes through unchanged."""

    def processor(logger: Any, method_name: str,
                  event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        del logger, method_name  # the processor protocol passes them
        exc_info = event_dict.get("exc_info")
        if exc_info is True:
            exc_info = sys.exc_info()
        failure = _failure_of(event_dict.get("failure")) or _failure_of(exc_info)
        if failure is not None:
            sink.emit(failure_event(failure, event=event, source=source))
        return event_dict

    return processor
