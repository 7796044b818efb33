"""Sentry: a ``before_send`` hook that groups by the failcode signature and tags code and kind.

::

    sentry_sdk.init(dsn=..., before_send=before_send)

For an event whose exception is a :class:`~failcode.FailureError` (or that carries a Failure in
``hint["failure"]``), the fingerprint becomes ``[signature]``, so Sentry's issues follow
failcode's grouping, and the tags ``failcode.code``, ``failcode.kind`` and ``failcode.category``
are set. Every string in the event is cut to 16 KiB and then redacted (so a huge event costs its
capped part), nested values 32 levels deep at most: Sentry's own scrubber works by key names and
does not look inside exception messages. Needs the ``sentry`` extra only to send events; the hook
itself imports nothing from sentry-sdk.
"""

from __future__ import annotations

from typing import Any

from failcode.integrations._bounded import bounded_redact_tree
from failcode.record._failure import Failure, FailureError

__all__ = ["before_send", "failure_of_hint"]


def failure_of_hint(hint: dict[str, Any] | None) -> Failure | None:
    """The Failure behind a Sentry event hint: ``hint["failure"]`` or the exc_info exception."""
    if not hint:
        return None
    candidate = hint.get("failure")
    if isinstance(candidate, Failure):
        return candidate
    exc_info = hint.get("exc_info")
    if exc_info and isinstance(exc_info[1], FailureError):
        return exc_info[1].failure
    return None


def before_send(event: dict[str, Any], hint: dict[str, Any] | None) -> dict[str, Any]:
    """Set the fingerprint and tags of a failcode failure and redact every string of the event.

    Returns the event (never drops one).
    """
    event = bounded_redact_tree(event)
    failure = failure_of_hint(hint)
    if failure is not None:
        event["fingerprint"] = [failure.signature]
        tags = event.get("tags")
        if not isinstance(tags, dict):
            tags = {}
        tags.update({"failcode.code": failure.code, "failcode.kind": failure.kind.value,
                     "failcode.category": failure.category.value})
        event["tags"] = tags
    return event
