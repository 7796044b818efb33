"""Readers: one module per format, each turning one input into plain events, and the registry
that detection walks (:data:`READERS`, tried in order on the input's first bytes).

A new format is one new module here with a class following
:class:`~failcode.triage._events.Reader`, one row in :data:`READERS`, its lab or corpus fixtures
and one row in docs/triage.md. ``_jsonstream``, ``_lines`` and ``_text`` are what the readers
share (streamed JSON, bounded lines, statuses and times). Readers import the event model only,
never the analysis or the renderers (the ``triage-flow`` import-linter contract).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from failcode.triage.readers._registry import FORMATS, READERS, detect

__all__ = ["FORMATS", "HEAD_BYTES", "READERS", "detect"]

HEAD_BYTES: Final = 64 * 1024
"""How many leading bytes detection reads."""


def __getattr__(name: str) -> Any:
    """``READERS``, ``FORMATS`` and ``detect`` come from ``_registry``, imported on first use
    (importing one reader module imports no other)."""
    if name not in ("READERS", "FORMATS", "detect"):
        raise AttributeError(f"module 'failcode.triage.readers' has no attribute {name!r}")
    value = getattr(importlib.import_module("failcode.triage.readers._registry"), name)
    globals()[name] = value
    return value
