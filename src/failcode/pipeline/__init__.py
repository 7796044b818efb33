"""failcode.pipeline: agent contracts, lifecycle phases, failure artifacts, pass and veto, and
validated traces for agent pipelines.

``import failcode`` does not load this module (pydantic's import cost stays out of the core);
it needs the ``pipeline`` extra: ``pip install 'failcode[pipeline]'``.

- Contracts: :class:`AgentInput`, :class:`AgentOutput`, :class:`AgentError` (frozen pydantic
  models rejecting unknown fields); codes :class:`AgentErrorCode` (TIMEOUT, TRANSIENT,
  VALIDATION_ERROR, FATAL, SECURITY) with :data:`DISPOSITIONS`; ``AgentError -> Failure ->
  AgentError`` is lossless (:func:`agent_error_to_failure`, :func:`agent_error_from_failure`)
  and :data:`AGENT_CODE_TABLE` maps any Failure to a code and transient flag;
  :func:`decide_agent_error` applies :func:`failcode.decide`.
- Lifecycle: :class:`Phase`, :class:`PhaseGraph` (data; :data:`CANONICAL_GRAPH`),
  :class:`LifecycleController`, :class:`InvalidTransitionError` (names both phases).
- Artifacts: :class:`FailureArtifact` with :class:`FailureClass`, :class:`Nature`,
  :class:`DetectionMode` and the normative :data:`FAILURE_PROFILES`. ``recoverable``
  authorizes a policy decision; it does not promise the external call is idempotent.
- Decisions and stops: :class:`Verdict` (pass, veto), :class:`StopReason`,
  :class:`FinalStatus`; :class:`PipelineRun` drives a run and records its :class:`Trace`;
  :class:`PipelineStopped` ends a run without success.
- Traces: versioned JSON, :func:`load_trace`, :func:`load_trace_file`,
  :func:`validate_trace`, one :class:`TraceValidationError` subclass per rejection;
  :func:`format_timeline` prints one as a readable timeline.
- Boundaries: :func:`run_cli`, :func:`read_input`, :func:`dry_run_artifact`,
  :func:`exit_code_for`, :func:`http_result`, :func:`pipeline_response`,
  :func:`install_pipeline_handlers` (all from :data:`failcode.boundary.BOUNDARY_TABLE`).

``failcode pipeline validate TRACE`` (or ``python -m failcode.pipeline validate TRACE``) checks
a trace file; ``failcode pipeline dry-run INPUT`` validates an input and prints the dry-run
artifact; ``failcode pipeline show TRACE`` prints the trace's timeline.

It may use the integrations, events and everything below them, never triage or the CLI.
"""

from __future__ import annotations

try:
    import pydantic  # noqa: F401 - fail early with the install hint
except ImportError as exc:  # pragma: no cover - depends on the environment
    msg = "failcode.pipeline needs pydantic: pip install 'failcode[pipeline]'"
    raise ImportError(msg) from exc

from failcode.pipeline._artifacts import (
    FAILURE_PROFILES,
    STOP_CLASSES,
    DetectionMode,
    FailureArtifact,
    FailureClass,
    FailureProfile,
    FinalStatus,
    Nature,
    StopReason,
    Verdict,
)
from failcode.pipeline._boundary import (
    dry_run_artifact,
    exit_code_for,
    http_result,
    install_pipeline_handlers,
    pipeline_response,
    read_input,
    run_cli,
)
from failcode.pipeline._contracts import (
    AGENT_CODE_TABLE,
    AGENT_MESSAGE_CHARS,
    CONTRACT_VERSION,
    DISPOSITIONS,
    AgentCodeRow,
    AgentError,
    AgentErrorCode,
    AgentFailure,
    AgentInput,
    AgentOutput,
    agent_code_for,
    agent_error_from_failure,
    agent_error_to_failure,
    decide_agent_error,
)
from failcode.pipeline._lifecycle import (
    CANONICAL_GRAPH,
    InvalidTransitionError,
    LifecycleController,
    Phase,
    PhaseGraph,
)
from failcode.pipeline._run import ARTIFACT_CLASS, PipelineRun, PipelineStopped, RunFinishedError
from failcode.pipeline._timeline import format_timeline
from failcode.pipeline._trace import (
    REPLAY_FIELDS,
    TRACE_VERSION,
    AgentErrorEvent,
    DecisionEvent,
    FailureEvent,
    InconsistentFinalError,
    InvalidOrderingError,
    MissingPhaseError,
    MissingReplayFieldError,
    ModelCallEvent,
    NonZeroTemperatureError,
    PhaseEvent,
    Trace,
    TraceEvent,
    TraceRejection,
    TraceSchemaError,
    TraceValidationError,
    UnknownTraceVersionError,
    input_digest,
    load_trace,
    load_trace_file,
    validate_trace,
)

__all__ = [
    "AGENT_CODE_TABLE",
    "AGENT_MESSAGE_CHARS",
    "ARTIFACT_CLASS",
    "CANONICAL_GRAPH",
    "CONTRACT_VERSION",
    "DISPOSITIONS",
    "FAILURE_PROFILES",
    "REPLAY_FIELDS",
    "STOP_CLASSES",
    "TRACE_VERSION",
    "AgentCodeRow",
    "AgentError",
    "AgentErrorCode",
    "AgentErrorEvent",
    "AgentFailure",
    "AgentInput",
    "AgentOutput",
    "DecisionEvent",
    "DetectionMode",
    "FailureArtifact",
    "FailureClass",
    "FailureEvent",
    "FailureProfile",
    "FinalStatus",
    "InconsistentFinalError",
    "InvalidOrderingError",
    "InvalidTransitionError",
    "LifecycleController",
    "MissingPhaseError",
    "MissingReplayFieldError",
    "ModelCallEvent",
    "Nature",
    "NonZeroTemperatureError",
    "Phase",
    "PhaseEvent",
    "PhaseGraph",
    "PipelineRun",
    "PipelineStopped",
    "RunFinishedError",
    "StopReason",
    "Trace",
    "TraceEvent",
    "TraceRejection",
    "TraceSchemaError",
    "TraceValidationError",
    "UnknownTraceVersionError",
    "Verdict",
    "agent_code_for",
    "agent_error_from_failure",
    "agent_error_to_failure",
    "decide_agent_error",
    "dry_run_artifact",
    "exit_code_for",
    "format_timeline",
    "http_result",
    "input_digest",
    "install_pipeline_handlers",
    "load_trace",
    "load_trace_file",
    "pipeline_response",
    "read_input",
    "run_cli",
    "validate_trace",
]
