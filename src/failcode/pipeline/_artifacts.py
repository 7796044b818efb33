"""Failure artifacts, decisions, stop reasons and the final status of a pipeline run.

Pipeline failures use a richer taxonomy than agent errors: a :class:`FailureArtifact` records
the class, how it was detected, the message, the lifecycle phase, recoverability and the nature
(operational or epistemic; the pipeline model calls it the category). :data:`FAILURE_PROFILES` is
normative: every class has exactly one profile, the nature must match it, and only a retryable
class may be marked recoverable.

``recoverable`` authorizes a policy decision (the orchestrator *may* retry or resume); it does
not promise that the external model or tool call is idempotent. A caller that retries a
recoverable artifact must still make the side effects safe to repeat.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final, NamedTuple

from pydantic import BaseModel, ConfigDict, model_validator

# pydantic resolves field annotations at run time: these imports must stay real
from failcode.pipeline._contracts import AgentError, NonEmpty

__all__ = [
    "FAILURE_PROFILES",
    "STOP_CLASSES",
    "DetectionMode",
    "FailureArtifact",
    "FailureClass",
    "FailureProfile",
    "FinalStatus",
    "Nature",
    "StopReason",
    "Verdict",
]


class Nature(StrEnum):
    """Whether a failure is about the machinery or about knowledge (the pipeline model's
    category)."""

    OPERATIONAL = "operational"
    EPISTEMIC = "epistemic"


class FailureClass(StrEnum):
    """The nine pipeline failure classes."""

    USER_INTERRUPTION = "user_interruption"
    EPISTEMIC_UNCERTAINTY = "epistemic_uncertainty"
    VERIFICATION_VETO = "verification_veto"
    BUDGET_EXCEEDED = "budget_exceeded"
    MAX_ITERATIONS = "max_iterations"
    FATAL_FAILURE = "fatal_failure"
    EXECUTION_ERROR = "execution_error"
    VALIDATION_ERROR = "validation_error"
    RESOURCE_EXHAUSTION = "resource_exhaustion"


class FailureProfile(NamedTuple):
    """A class's normative profile."""

    nature: Nature
    retryable: bool
    replayable: bool
    """Whether the trace is retained as replayable stop evidence (else: abort without a
    replay claim)."""


_OP, _EP = Nature.OPERATIONAL, Nature.EPISTEMIC
_FC = FailureClass
FAILURE_PROFILES: Final[dict[FailureClass, FailureProfile]] = {
    _FC.USER_INTERRUPTION: FailureProfile(_OP, retryable=False, replayable=True),
    _FC.EPISTEMIC_UNCERTAINTY: FailureProfile(_EP, retryable=False, replayable=True),
    _FC.VERIFICATION_VETO: FailureProfile(_OP, retryable=False, replayable=True),
    _FC.BUDGET_EXCEEDED: FailureProfile(_OP, retryable=False, replayable=True),
    _FC.MAX_ITERATIONS: FailureProfile(_OP, retryable=False, replayable=True),
    _FC.FATAL_FAILURE: FailureProfile(_OP, retryable=False, replayable=False),
    _FC.EXECUTION_ERROR: FailureProfile(_OP, retryable=True, replayable=False),
    _FC.VALIDATION_ERROR: FailureProfile(_OP, retryable=False, replayable=True),
    _FC.RESOURCE_EXHAUSTION: FailureProfile(_OP, retryable=True, replayable=False),
}
"""The normative table: class -> (nature, retryable, replayable)."""


class DetectionMode(StrEnum):
    """How a failure was detected."""

    AGENT_ERROR = "agent_error"
    """An agent call reported an AgentError (or raised)."""
    CONTRACT = "contract"
    """A contract check rejected an input or output."""
    JUDGMENT = "judgment"
    """The JUDGE phase concluded it."""
    VERIFICATION = "verification"
    """The VERIFY phase concluded it."""
    LIMIT = "limit"
    """An iteration, budget or resource limit was reached."""
    SIGNAL = "signal"
    """The user interrupted the run."""
    EXCEPTION = "exception"
    """An unexpected exception."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FailureArtifact(_Record):
    """A pipeline failure with its lifecycle context.

    Attributes:
        failure_class: one of the nine classes.
        detection: how it was detected.
        message: what failed, non-empty.
        phase: the lifecycle phase it happened in.
        recoverable: whether policy may resume or retry (only a retryable class). It
            authorizes a policy decision; it does not promise the external call is idempotent.
        nature: operational or epistemic; defaults to the class's profile and must match it.
        agent_error: the agent-level error it came from, if any.

    Raises:
        pydantic.ValidationError: the nature does not match the class's profile, or a class
            that is not retryable is marked recoverable.
    """

    failure_class: FailureClass
    detection: DetectionMode
    message: NonEmpty
    phase: NonEmpty
    recoverable: bool = False
    nature: Nature = Nature.OPERATIONAL
    """Filled from the class's profile when not given."""
    agent_error: AgentError | None = None

    @model_validator(mode="before")
    @classmethod
    def _default_nature(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("nature") is None:
            try:
                profile = FAILURE_PROFILES[FailureClass(str(data.get("failure_class")))]
            except ValueError:
                return data  # the field validator names the bad class
            data = {**data, "nature": profile.nature}
        return data

    @model_validator(mode="after")
    def _matches_profile(self) -> FailureArtifact:
        profile = FAILURE_PROFILES[self.failure_class]
        if self.nature is not profile.nature:
            msg = (f"a {self.failure_class.value} failure is {profile.nature.value} "
                   f"(its normative profile), not {self.nature.value}")
            raise ValueError(msg)
        if self.recoverable and not profile.retryable:
            msg = (f"a {self.failure_class.value} failure is not retryable, so it cannot be "
                   f"recoverable")
            raise ValueError(msg)
        return self

    @property
    def profile(self) -> FailureProfile:
        """The class's normative profile."""
        return FAILURE_PROFILES[self.failure_class]

    @property
    def replayable(self) -> bool:
        """Whether the run's trace is retained as replayable evidence."""
        return self.profile.replayable


class Verdict(StrEnum):
    """The canonical decision values."""

    PASS = "pass"  # noqa: S105 - a verdict, not a password
    VETO = "veto"


class StopReason(StrEnum):
    """Why a run ended without success."""

    MAX_ITERATIONS = "max_iterations"
    BUDGET_EXHAUSTED = "budget_exhausted"
    USER_INTERRUPTION = "user_interruption"
    CONVERGENCE = "convergence"
    """A non-success stop without a failure class (the run converged on no result)."""
    VERIFICATION_VETO = "verification_veto"
    FATAL_FAILURE = "fatal_failure"
    """A failure artifact ended the run (fatal, execution, resource, validation, epistemic)."""

    @property
    def outcome(self) -> str:
        """The boundary table's outcome name (a user interruption is a ``cancelled``)."""
        return _OUTCOME_OF.get(self, self.value)


_OUTCOME_OF: Final = {StopReason.VERIFICATION_VETO: "veto",
                      StopReason.USER_INTERRUPTION: "cancelled"}

STOP_CLASSES: Final[dict[StopReason, frozenset[FailureClass]]] = {
    StopReason.MAX_ITERATIONS: frozenset({_FC.MAX_ITERATIONS}),
    StopReason.BUDGET_EXHAUSTED: frozenset({_FC.BUDGET_EXCEEDED, _FC.RESOURCE_EXHAUSTION}),
    StopReason.USER_INTERRUPTION: frozenset({_FC.USER_INTERRUPTION}),
    StopReason.CONVERGENCE: frozenset(),
    StopReason.VERIFICATION_VETO: frozenset({_FC.VERIFICATION_VETO}),
    StopReason.FATAL_FAILURE: frozenset({_FC.FATAL_FAILURE, _FC.EXECUTION_ERROR,
                                         _FC.RESOURCE_EXHAUSTION, _FC.VALIDATION_ERROR,
                                         _FC.EPISTEMIC_UNCERTAINTY}),
}
"""The failure classes each stop reason may carry (convergence carries none)."""


class FinalStatus(_Record):
    """How a run ended; it is part of the trace.

    Attributes:
        success: True only for a run that reached its success phase with no veto.
        phase: the terminal phase.
        stop_reason: None exactly when ``success``.
        failure_class: the artifact's class that stopped the run; None on success and for a
            convergence stop.
        replayable: whether the trace is retained as replayable evidence (from the class's
            profile; True on success and convergence).
        message: why the run stopped.

    Raises:
        pydantic.ValidationError: any inconsistency between those fields.
    """

    success: bool
    phase: NonEmpty
    stop_reason: StopReason | None = None
    failure_class: FailureClass | None = None
    replayable: bool = True
    message: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> FinalStatus:
        problem = None
        if self.success:
            if self.stop_reason is not None or self.failure_class is not None:
                problem = "a successful run has no stop reason and no failure class"
            elif not self.replayable:
                problem = "a successful run is replayable"
        elif self.stop_reason is None:
            problem = "a run that did not succeed needs a stop reason"
        elif self.stop_reason is StopReason.CONVERGENCE:
            if self.failure_class is not None:
                problem = "a convergence stop has no failure class"
            elif not self.replayable:
                problem = "a convergence stop is replayable"
        elif self.failure_class not in STOP_CLASSES[self.stop_reason]:
            allowed = ", ".join(sorted(STOP_CLASSES[self.stop_reason]))
            problem = (f"stop reason {self.stop_reason.value} needs a failure class among "
                       f"{allowed}, got {self.failure_class}")
        elif self.replayable != FAILURE_PROFILES[self.failure_class].replayable:
            problem = (f"a {self.failure_class.value} stop is "
                       f"{'' if not self.replayable else 'not '}replayable by its profile")
        if problem:
            raise ValueError(problem)
        return self

    @property
    def outcome(self) -> str:
        """The boundary table's outcome name: ``success``, ``veto``, ``convergence``..."""
        return "success" if self.stop_reason is None else self.stop_reason.outcome
