"""A readable timeline of a pipeline trace: phases, model calls, retries, vetoes, the stop.

:func:`format_timeline` is what ``failcode pipeline show TRACE`` prints; it reads a validated
:class:`~failcode.pipeline.Trace` and never changes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from failcode.pipeline._trace import (
    AgentErrorEvent,
    DecisionEvent,
    FailureEvent,
    ModelCallEvent,
    PhaseEvent,
)

if TYPE_CHECKING:
    from failcode.pipeline._trace import Trace

__all__ = ["format_timeline"]


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def format_timeline(trace: Trace) -> str:
    """The trace as a timeline, one line per event, grouped under the phase it happened in.

    Each phase entered gets a numbered line (with its iteration when above zero); under it come
    the model calls, agent errors with what was done about them (a retry and its delay, or a
    failure artifact), pass and veto decisions, and failure artifacts. The last lines give the
    outcome (success, or the stop reason, failure class and whether the trace is replayable)
    and a count of retries, vetoes, artifacts and model calls.

    Args:
        trace: a trace, as :func:`~failcode.pipeline.load_trace_file` returns it.

    Returns:
        The timeline as text, ending with a newline.
    """
    final = trace.final
    outcome = "success" if final.success else f"stopped ({final.stop_reason})"
    lines = [f"run {trace.run_id} (trace version {trace.trace_version}): {outcome}"]
    number = 0
    indent = " " * 7
    retries = vetoes = artifacts = calls = 0
    for event in trace.events:
        if isinstance(event, PhaseEvent):
            number += 1
            label = event.phase + (f" (iteration {event.iteration + 1})" if event.iteration
                                   else "")
            lines.append(f"{number:>3}  {label}")
            continue
        if isinstance(event, ModelCallEvent):
            calls += 1
            text = (f"{event.agent} called {event.provider}/{event.model} "
                    f"(attempt {event.attempt}, temperature {event.temperature:g})")
        elif isinstance(event, AgentErrorEvent):
            error = event.error
            if event.action == "retry":
                retries += 1
                then = f"retry after {event.delay_s:.3g} s"
            else:
                then = "failure artifact"
            text = f"{event.agent} failed: {error.code} {error.message} -> {then}"
        elif isinstance(event, DecisionEvent):
            if event.verdict == "veto":
                vetoes += 1
            text = f"{event.verdict.upper()} by {event.by}: {event.reason}"
        elif isinstance(event, FailureEvent):
            artifacts += 1
            artifact = event.artifact
            recoverable = "recoverable" if artifact.recoverable else "not recoverable"
            text = (f"failure artifact {artifact.failure_class} ({artifact.nature}, "
                    f"{recoverable}): {artifact.message}")
        else:  # pragma: no cover - the event union is closed
            continue
        lines.append(f"{indent}{text}")
    if final.success:
        lines.append(f"outcome: success in phase {final.phase}")
    else:
        details = [f"phase {final.phase}"]
        if final.failure_class is not None:
            details.append(f"failure class {final.failure_class}")
        details.append("replayable" if final.replayable else "not replayable")
        reason = f": {final.message}" if final.message else ""
        lines.append(f"stop: {final.stop_reason} ({', '.join(details)}){reason}")
    lines.append(f"counts: {_count(retries, 'retry', 'retries')}, "
                 f"{_count(vetoes, 'veto', 'vetoes')}, {_count(artifacts, 'failure artifact')}, "
                 f"{_count(calls, 'model call')}")
    return "\n".join(lines) + "\n"
