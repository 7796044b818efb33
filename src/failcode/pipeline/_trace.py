"""Versioned JSON traces of pipeline runs and their validation.

A trace records every phase, decision, agent error, failure artifact and model call, with the
model call's replay fields (provider, model, temperature, seed, contract version, input
digest), and the run's final status. :func:`load_trace` and :func:`validate_trace` reject, each
with its own exception type, error class and message:

=========================  ==============================  =========================================
exception                  error class (FC-LIFE-007)       what
=========================  ==============================  =========================================
UnknownTraceVersionError   ``unknown_version``             ``trace_version`` is not one this reads
TraceSchemaError           ``malformed``                   not JSON, or not the trace schema
MissingReplayFieldError    ``missing_replay_field``        a model call lacks a replay field
NonZeroTemperatureError    ``nonzero_temperature``         a replayable model call with temperature
                                                           above zero
MissingPhaseError          ``missing_phase``               no phases, a skipped phase, no start or
                                                           no terminal phase
InvalidOrderingError       ``invalid_ordering``            a phase out of order, an event outside
                                                           its phase or after the end
InconsistentFinalError     ``inconsistent_final``          the final status contradicts the events
                                                           (a vetoed run reported as success)
=========================  ==============================  =========================================

All are :class:`TraceValidationError` (a :class:`~failcode.FailureError` and a ValueError), so
a boundary reports them as an invalid input (exit 2, HTTP 400 VALIDATION_ERROR).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from failcode.codes._catalog import FC
from failcode.pipeline._artifacts import FailureArtifact, FinalStatus, Verdict
from failcode.pipeline._contracts import AgentError, NonEmpty
from failcode.pipeline._lifecycle import CANONICAL_GRAPH, PhaseGraph
from failcode.record._failure import FailureError

if TYPE_CHECKING:
    from pathlib import Path

    from pydantic import BaseModel as _Model


__all__ = [
    "MAX_SCHEMA_PROBLEMS",
    "REPLAY_FIELDS",
    "TRACE_VERSION",
    "AgentErrorEvent",
    "DecisionEvent",
    "FailureEvent",
    "InconsistentFinalError",
    "InvalidOrderingError",
    "MissingPhaseError",
    "MissingReplayFieldError",
    "ModelCallEvent",
    "NonZeroTemperatureError",
    "PhaseEvent",
    "Trace",
    "TraceEvent",
    "TraceRejection",
    "TraceSchemaError",
    "TraceValidationError",
    "UnknownTraceVersionError",
    "input_digest",
    "load_trace",
    "load_trace_file",
    "validate_trace",
]

TRACE_VERSION: Final = 1
"""The trace format this version of failcode writes and reads."""

REPLAY_FIELDS: Final = ("provider", "model", "temperature", "seed", "contract_version",
                        "input_digest")
"""The fields a model call needs to be replayed."""


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PhaseEvent(_Event):
    """The run entered ``phase`` (in ``iteration``, counting loop-backs from 0)."""

    type: Literal["phase"] = "phase"
    phase: NonEmpty
    iteration: Annotated[int, Field(ge=0)] = 0


class ModelCallEvent(_Event):
    """One model call with its replay fields.

    ``replayable`` claims the call can be replayed: it needs a seed and temperature 0.
    """

    type: Literal["model_call"] = "model_call"
    phase: NonEmpty
    agent: NonEmpty
    attempt: Annotated[int, Field(ge=1)] = 1
    provider: NonEmpty
    model: NonEmpty
    temperature: Annotated[float, Field(ge=0.0, allow_inf_nan=False)]
    seed: int | None
    contract_version: NonEmpty
    input_digest: Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]
    replayable: bool = True


class DecisionEvent(_Event):
    """A pass or veto decision, by whom and why."""

    type: Literal["decision"] = "decision"
    phase: NonEmpty
    verdict: Verdict
    by: NonEmpty
    reason: NonEmpty


class AgentErrorEvent(_Event):
    """An agent call failed; ``action`` is what followed (``retry`` or ``artifact``)."""

    type: Literal["agent_error"] = "agent_error"
    phase: NonEmpty
    agent: NonEmpty
    attempt: Annotated[int, Field(ge=1)] = 1
    error: AgentError
    action: Literal["retry", "artifact"]
    delay_s: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] = 0.0


class FailureEvent(_Event):
    """A failure artifact was recorded."""

    type: Literal["failure"] = "failure"
    artifact: FailureArtifact

    @property
    def phase(self) -> str:
        """The artifact's phase."""
        return self.artifact.phase


TraceEvent = Annotated[
    PhaseEvent | ModelCallEvent | DecisionEvent | AgentErrorEvent | FailureEvent,
    Field(discriminator="type")]


class Trace(BaseModel):
    """A run's versioned trace. Build it with :class:`~failcode.pipeline.PipelineRun`, read it
    with :func:`load_trace` (which validates); ``to_json()`` writes it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    trace_version: Literal[1] = TRACE_VERSION
    run_id: NonEmpty
    graph: PhaseGraph = CANONICAL_GRAPH
    events: tuple[TraceEvent, ...]
    final: FinalStatus

    def to_json(self, *, indent: int | None = 2) -> str:
        """The trace as JSON text."""
        return self.model_dump_json(indent=indent)

    @property
    def phases(self) -> list[str]:
        """The phases entered, in order."""
        return [event.phase for event in self.events if isinstance(event, PhaseEvent)]


class TraceRejection(StrEnum):
    """Why a trace was rejected (the error class of its FC-LIFE-007 Failure)."""

    UNKNOWN_VERSION = "unknown_version"
    MALFORMED = "malformed"
    MISSING_REPLAY_FIELD = "missing_replay_field"
    NONZERO_TEMPERATURE = "nonzero_temperature"
    MISSING_PHASE = "missing_phase"
    INVALID_ORDERING = "invalid_ordering"
    INCONSISTENT_FINAL = "inconsistent_final"


class TraceValidationError(FailureError, ValueError):
    """A rejected trace: FC-LIFE-007 with the rejection as its error class."""

    reason: ClassVar[TraceRejection] = TraceRejection.MALFORMED

    def __init__(self, problem: str, *, source: str | None = None) -> None:
        where = f"{source}: " if source else ""
        super().__init__(FC.LIFE_TRACE_INVALID.failure(
            surface="pipeline.trace", params={"problem": f"{where}{problem}"},
            error_class=self.reason.value))
        self.problem = problem
        self.source = source

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (type(self), self.problem, self.source))


def _rebuild(cls: type[TraceValidationError], problem: str, source: str | None,
             ) -> TraceValidationError:
    return cls(problem, source=source)


class UnknownTraceVersionError(TraceValidationError):
    """The trace's ``trace_version`` is missing or not one this failcode reads."""

    reason = TraceRejection.UNKNOWN_VERSION


class TraceSchemaError(TraceValidationError):
    """The text is not JSON, or not the trace schema."""

    reason = TraceRejection.MALFORMED


class MissingReplayFieldError(TraceValidationError):
    """A model call lacks a replay field."""

    reason = TraceRejection.MISSING_REPLAY_FIELD


class NonZeroTemperatureError(TraceValidationError):
    """A model call claims to be replayable with a temperature above zero."""

    reason = TraceRejection.NONZERO_TEMPERATURE


class MissingPhaseError(TraceValidationError):
    """A phase is missing: none at all, a skipped one, the start or a terminal phase."""

    reason = TraceRejection.MISSING_PHASE


class InvalidOrderingError(TraceValidationError):
    """A phase or an event is out of order."""

    reason = TraceRejection.INVALID_ORDERING


class InconsistentFinalError(TraceValidationError):
    """The final status contradicts the events (e.g. a vetoed run reported as success)."""

    reason = TraceRejection.INCONSISTENT_FINAL


def input_digest(value: _Model | Any) -> str:
    """``sha256:<hex>`` of a contract (or any JSON value) in canonical JSON form."""
    data = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _schema_problem(error: ValidationError, prefix: str = "") -> str:
    parts = []
    items = error.errors(include_url=False, include_context=False, include_input=False)
    for item in items[:3]:
        where = ".".join([prefix, *(str(p) for p in item.get("loc", ()))] if prefix else
                         [str(p) for p in item.get("loc", ())]) or "trace"
        parts.append(f"{where}: {item.get('msg')}")
    more = len(items) - 3
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


MAX_SCHEMA_PROBLEMS: Final = 100
"""Invalid events after which reading a trace stops: a huge broken trace costs its first
problems, not one error object per event."""
_EVENT_ADAPTER: Final[TypeAdapter[Any]] = TypeAdapter(TraceEvent)


def _validated_events(events: list[Any], source: str | None) -> list[Any]:
    """The events, each validated on its own; stops after :data:`MAX_SCHEMA_PROBLEMS` bad ones
    and reports the first three."""
    validated: list[Any] = []
    shown: list[str] = []
    bad = 0
    for index, event in enumerate(events):
        try:
            validated.append(_EVENT_ADAPTER.validate_python(event))
        except ValidationError as exc:
            bad += 1
            if len(shown) < 3:
                shown.append(_schema_problem(exc, f"events.{index}"))
            if bad >= MAX_SCHEMA_PROBLEMS:
                shown.append(f"stopped after {bad} invalid events")
                break
    if shown:
        if bad > len(shown) and bad < MAX_SCHEMA_PROBLEMS:
            shown.append(f"{bad} invalid events in all")
        raise TraceSchemaError("; ".join(shown), source=source)
    return validated


def _check_replay_fields(data: dict[str, Any], source: str | None) -> None:
    events = data.get("events")
    if not isinstance(events, list):
        return
    for index, event in enumerate(events):
        if not isinstance(event, dict) or event.get("type") != "model_call":
            continue
        missing = [name for name in REPLAY_FIELDS if name not in event
                   or (event[name] is None and (name != "seed" or event.get("replayable", True)))]
        if missing:
            fields = ", ".join(missing)
            problem = f"event {index} (model_call) lacks the replay field(s) {fields}"
            raise MissingReplayFieldError(problem, source=source)


def load_trace(text: str | bytes | dict[str, Any], *, source: str | None = None) -> Trace:
    """Parse and validate a trace.

    Args:
        text: JSON text, or the decoded object.
        source: where it came from (a file name), named in error messages.

    Returns:
        The valid trace.

    Raises:
        TraceValidationError: a subclass per rejection reason (see the module docstring); text
            that is not UTF-8, nested too deeply or holds an integer of over 4300 digits is a
            :class:`TraceSchemaError`, and reading stops after :data:`MAX_SCHEMA_PROBLEMS`
            invalid events. Nothing else.
    """
    data: Any = text
    if isinstance(text, (str, bytes)):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            problem = f"not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
            raise TraceSchemaError(problem, source=source) from None
        except UnicodeDecodeError as exc:
            raise TraceSchemaError(f"not UTF-8 text (byte {exc.start})", source=source) from None
        except RecursionError:
            raise TraceSchemaError("not a trace: JSON nested too deeply",
                                   source=source) from None
        except ValueError as exc:  # an integer of more digits than int() converts (4300)
            raise TraceSchemaError(f"not JSON: {str(exc).split(';', 1)[0]}",
                                   source=source) from None
    if not isinstance(data, dict):
        raise TraceSchemaError(f"a trace is a JSON object, got {type(data).__name__}",
                               source=source)
    version = data.get("trace_version")
    if version != TRACE_VERSION or isinstance(version, bool):
        problem = (f"trace_version {version!r} is not supported; this failcode reads version "
                   f"{TRACE_VERSION}")
        raise UnknownTraceVersionError(problem, source=source)
    _check_replay_fields(data, source)
    if isinstance(data.get("events"), list):
        data = {**data, "events": _validated_events(data["events"], source)}
    try:
        trace = Trace.model_validate(data)
    except ValidationError as exc:
        raise TraceSchemaError(_schema_problem(exc), source=source) from None
    except RecursionError:
        raise TraceSchemaError("not a trace: nested too deeply", source=source) from None
    return validate_trace(trace, source=source)


def load_trace_file(path: str | Path) -> Trace:
    """Read and validate a trace file.

    Raises:
        FailureError: FC-LIFE-008 when the file does not exist (a missing replay trace).
        TraceValidationError: the file is not a valid trace.
    """
    from pathlib import Path  # noqa: PLC0415 - only file readers need it

    file = Path(path)
    try:
        text = file.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise FailureError(FC.LIFE_REPLAY_TRACE_MISSING.failure(
            surface="pipeline.replay", params={"path": str(path)})) from None
    return load_trace(text, source=str(path))


def _check_temperature(trace: Trace, source: str | None) -> None:
    for index, event in enumerate(trace.events):
        if isinstance(event, ModelCallEvent) and event.replayable:
            if event.temperature != 0:
                problem = (f"event {index} (model_call {event.agent}) claims to be replayable "
                           f"with temperature {event.temperature}; replay needs 0")
                raise NonZeroTemperatureError(problem, source=source)
            if event.seed is None:  # pragma: no cover - the replay-field check catches it
                raise MissingReplayFieldError(f"event {index} lacks a seed", source=source)


def _check_phases(trace: Trace, source: str | None) -> list[str]:
    graph = trace.graph
    phases = trace.phases
    if not phases:
        raise MissingPhaseError("the trace records no phase", source=source)
    first = phases[0]
    if first != graph.start:
        if first in graph.reachable(graph.start):
            raise MissingPhaseError(f"the trace starts in {first}, without the start phase "
                                    f"{graph.start}", source=source)
        raise InvalidOrderingError(f"the trace starts in {first}, which cannot follow the start "
                                   f"phase {graph.start}", source=source)
    for previous, current in itertools.pairwise(phases):
        if graph.allows(previous, current):
            continue
        path = graph.reachable(previous).get(current)
        if path is not None and graph.position(current) > graph.position(previous):
            missing = ", ".join(path)
            raise MissingPhaseError(f"the phase(s) {missing} between {previous} and {current} "
                                    f"are missing", source=source)
        raise InvalidOrderingError(f"phase {current} cannot follow {previous}", source=source)
    if phases[-1] not in graph.terminal:
        raise MissingPhaseError(f"the trace ends in {phases[-1]} without a terminal phase "
                                f"({graph.success} or {graph.abort})", source=source)
    current_phase: str | None = None
    ended = False
    for index, event in enumerate(trace.events):
        if ended:
            raise InvalidOrderingError(f"event {index} ({event.type}) comes after the terminal "
                                       f"phase", source=source)
        if isinstance(event, PhaseEvent):
            current_phase = event.phase
            ended = event.phase in graph.terminal
            continue
        if event.phase != current_phase:
            raise InvalidOrderingError(
                f"event {index} ({event.type}) says phase {event.phase} but the run was in "
                f"{current_phase or 'no phase yet'}", source=source)
    return phases


def _check_final(trace: Trace, phases: list[str], source: str | None) -> None:
    final, graph = trace.final, trace.graph
    if final.phase != phases[-1]:
        raise InconsistentFinalError(f"the final status says phase {final.phase} but the last "
                                     f"phase is {phases[-1]}", source=source)
    if final.success != (final.phase == graph.success):
        raise InconsistentFinalError(
            f"a run ending in {final.phase} cannot have success={final.success}", source=source)
    decisions = [e for e in trace.events if isinstance(e, DecisionEvent)]
    if final.success and decisions and decisions[-1].verdict is Verdict.VETO:
        raise InconsistentFinalError("the last decision is a veto, yet the run is reported as "
                                     "success", source=source)
    if final.failure_class is not None:
        classes = {e.artifact.failure_class for e in trace.events if isinstance(e, FailureEvent)}
        if final.failure_class not in classes:
            raise InconsistentFinalError(
                f"the final status names {final.failure_class.value} but no such failure "
                f"artifact is recorded", source=source)


def validate_trace(trace: Trace, *, source: str | None = None) -> Trace:
    """Check a trace's semantics: temperatures, phase order, events in place, final status.

    Returns:
        ``trace`` itself.

    Raises:
        TraceValidationError: a subclass per rejection reason (see the module docstring).
    """
    _check_temperature(trace, source)
    phases = _check_phases(trace, source)
    _check_final(trace, phases, source)
    return trace

