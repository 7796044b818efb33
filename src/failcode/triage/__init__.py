"""``failcode triage``: read what agents left behind and learn why they fail.

:func:`triage` reads session logs (failcode's own events, mini-swe-agent, SWE-agent, OpenHands,
Aider, Claude Code, Codex CLI, Gemini CLI), detected by content and streamed, classifies every
failing step with failcode's classifiers, tells outcomes (probes that found nothing, rejected
actions) apart from failures, finds loops and says how each session ended. The
:class:`TriageResult` it returns is what the terminal summary, ``--json`` and ``--html``
render; ``failcode triage --store`` records it in an event store and ``failcode report``
rebuilds it from one (``_record``).

The folder shows the flow: ``readers/`` (one module per format) yield the events of
``_events``; ``analysis/`` turns them into the result model (``_result``, ``_findings``);
``report/`` renders it; ``_cli``, ``_record`` (the store) and ``_discover`` (``--home``) sit on
top. The ``triage-flow`` import-linter contract keeps each layer from importing the ones above.

``import failcode`` does not import this package; the terminal summary imports rich only when
it renders.

It may use the events and store layers and everything below them, never the CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from failcode.triage._events import InputError, Reader
    from failcode.triage._result import (
        FORMAT_VERSION,
        FailureEntry,
        InputResult,
        Loop,
        OutcomeEntry,
        SessionResult,
        TriageResult,
    )
    from failcode.triage.analysis._analyze import infer_purpose, triage
    from failcode.triage.readers import FORMATS, READERS, detect
    from failcode.triage.report._terminal import sample_paths

_WHERE = {
    "InputError": "_events", "Reader": "_events",
    **dict.fromkeys(("FORMAT_VERSION", "FailureEntry", "InputResult", "Loop", "OutcomeEntry",
                     "SessionResult", "TriageResult"), "_result"),
    "infer_purpose": "analysis._analyze", "triage": "analysis._analyze",
    "FORMATS": "readers", "READERS": "readers", "detect": "readers",
    "sample_paths": "report._terminal",
}
"""Where each public name lives: imported on first use, so that one reader (the live hooks
read one tool result with the Claude Code reader's rules) does not import every reader."""


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'failcode.triage' has no attribute {name!r}")
    import importlib  # noqa: PLC0415 - only on first use of a name

    value = getattr(importlib.import_module(f"failcode.triage.{where}"), name)
    globals()[name] = value
    return value


__all__ = [
    "FORMATS",
    "FORMAT_VERSION",
    "READERS",
    "FailureEntry",
    "InputError",
    "InputResult",
    "Loop",
    "OutcomeEntry",
    "Reader",
    "SessionResult",
    "TriageResult",
    "detect",
    "infer_purpose",
    "sample_paths",
    "triage",
]
