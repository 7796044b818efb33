"""Bounded redaction for the integrations: a log record or an event costs its capped part.

Logging and Sentry hooks run on whatever an application hands them, a 10 MB message included.
Each string is cut before it is redacted, so the work is bounded by the cap, not by the input;
redaction sees :data:`WINDOW` characters past the cut, so a secret that straddles the cut is
still recognized whole and neither half survives. Nested containers are walked to
:data:`MAX_DEPTH` levels; deeper values are replaced by a note, never recursed into.
"""

from __future__ import annotations

from typing import Any, Final

from failcode.signature._redact import redact

__all__ = ["MAX_CHARS", "MAX_DEPTH", "WINDOW", "bounded_redact", "bounded_redact_tree"]

MAX_CHARS: Final = 16 * 1024
"""The longest string a log record or an event field keeps (the rest is cut, and said so)."""
WINDOW: Final = 4096
"""Characters past the cut that redaction still reads (longer than any secret it recognizes,
PEM bodies aside, which run to the end of the text)."""
MAX_DEPTH: Final = 32
"""The deepest level of nested dicts, lists and tuples walked."""


def bounded_redact(text: str, limit: int = MAX_CHARS) -> str:
    """``text`` redacted and cut to ``limit`` characters, with a note of how much was cut."""
    if len(text) <= limit:
        return redact(text)
    kept = redact(text[: limit + WINDOW])[:limit]
    return f"{kept} …[{len(text) - limit} characters cut]"


def bounded_redact_tree(value: Any, limit: int = MAX_CHARS, depth: int = 0) -> Any:
    """:func:`bounded_redact` applied to every string inside nested dicts, lists and tuples (a
    Sentry event, a structlog event dict); other values are returned as they are."""
    if isinstance(value, str):
        return bounded_redact(value, limit)
    if isinstance(value, (dict, list, tuple)):
        if depth >= MAX_DEPTH:
            return f"<nested deeper than {MAX_DEPTH} levels>"
        if isinstance(value, dict):
            return {key: bounded_redact_tree(item, limit, depth + 1)
                    for key, item in value.items()}
        items = [bounded_redact_tree(item, limit, depth + 1) for item in value]
        return items if isinstance(value, list) else type(value)(items)
    return value
