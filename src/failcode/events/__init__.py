"""Failure events and sinks: every failure, outcome, decision and remedy as one versioned record.

::

    from failcode.events import JsonlSink, failure_event, open_store

    with open_store("sqlite:///failcode.db") as store:      # or postgresql://...
        store.emit(failure_event(failure, event="tool.failed", session="s-42"))

``open_store`` loads :mod:`failcode.store` on first use; ``import failcode.events`` does not.
:class:`RemoteSink` and :func:`report_to` (the client of a failcode service) load their module,
and the HTTP client, on first use too.

It may use every layer up to the boundaries (record, signature, codes, classification, policy,
render, boundary), never the store, triage, the pipeline or the CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from failcode.events._event import (
    DECISION_EVENTS,
    EVENT_VERSION,
    FAILURE_EVENTS,
    MAX_STEP,
    OUTCOME_EVENTS,
    REMEDY_EVENT,
    Event,
    EventDecision,
    RemedyAttempt,
    decision_event,
    event_json_schema,
    failure_event,
    outcome_event,
    redact_event,
    remedy_event,
)
from failcode.events._feed import EventHandler, event_processor, failure_hook
from failcode.events._ids import derived_event_id, event_id_time_ms, new_event_id
from failcode.events._sink import EventProblem, JsonlSink, Sink, read_events, write_events

if TYPE_CHECKING:
    import os

    from failcode.events._remote import RemoteSink, report_to
    from failcode.store import Store

# names whose module loads on first use (PEP 562): the HTTP client stays out of the import
_LAZY: dict[str, str] = {
    "RemoteSink": "failcode.events._remote",
    "report_to": "failcode.events._remote",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'failcode.events' has no attribute {name!r}"
        raise AttributeError(msg)
    import importlib  # noqa: PLC0415 - only when a lazy name is first used

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def open_store(url: str | os.PathLike[str] | None = None, **options: Any) -> Store:
    """Open (creating and migrating as needed) the event store at ``url``.

    ``sqlite:///path/failcode.db``, a plain path or a :class:`pathlib.Path`: the embedded
    store; ``postgresql://...``: the team store. None: ``$FAILCODE_STORE``, else the embedded
    store in the user data directory. See :func:`failcode.store.open_store` for the options.

    Raises:
        failcode.store.StoreError: a FailureError with an FC-STORE code (bad URL, unreachable
            server, locked, corrupt or read-only store, a schema newer than this failcode).
    """
    from failcode.store import open_store as _open  # noqa: PLC0415 - the store loads lazily

    return _open(url, **options)


__all__ = [
    "DECISION_EVENTS",
    "EVENT_VERSION",
    "FAILURE_EVENTS",
    "MAX_STEP",
    "OUTCOME_EVENTS",
    "REMEDY_EVENT",
    "Event",
    "EventDecision",
    "EventHandler",
    "EventProblem",
    "JsonlSink",
    "RemedyAttempt",
    "RemoteSink",
    "Sink",
    "decision_event",
    "derived_event_id",
    "event_id_time_ms",
    "event_json_schema",
    "event_processor",
    "failure_event",
    "failure_hook",
    "new_event_id",
    "open_store",
    "outcome_event",
    "read_events",
    "redact_event",
    "remedy_event",
    "report_to",
    "write_events",
]
