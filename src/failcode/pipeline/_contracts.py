"""Agent-boundary contracts: AgentInput, AgentOutput, AgentError and their codes.

Contracts are frozen pydantic models that reject unknown fields; invalid values fail at
construction (a :class:`pydantic.ValidationError`) instead of entering the pipeline.

An :class:`AgentError` crosses into failcode's taxonomy losslessly: :func:`agent_error_to_failure`
builds the record through the code's spec (FC-LIFE-001..005), and
:func:`agent_error_from_failure` reads it back. Any other :class:`~failcode.Failure` maps to an
agent code and transient flag through :data:`AGENT_CODE_TABLE` (first matching row wins).
"""

from __future__ import annotations

import random
import time
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Final, NamedTuple

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    StringConstraints,
    field_validator,
    model_validator,
)

from failcode.codes._build import _param_budget, clean_detail, clean_text
from failcode.codes._catalog import FC
from failcode.policy._decide import DEFAULT_POLICY, Budget, Decision, History, Policy, decide
from failcode.record._axes import Category, Kind, Retryability, Severity

if TYPE_CHECKING:
    from collections.abc import Callable

    from failcode.record._failure import Failure

__all__ = [
    "AGENT_CODE_TABLE",
    "AGENT_MESSAGE_CHARS",
    "CONTRACT_VERSION",
    "DISPOSITIONS",
    "AgentCodeRow",
    "AgentError",
    "AgentErrorCode",
    "AgentFailure",
    "AgentInput",
    "AgentOutput",
    "agent_code_for",
    "agent_error_from_failure",
    "agent_error_to_failure",
    "decide_agent_error",
]

CONTRACT_VERSION: Final = "1.0"
"""The current agent contract version; outputs (and inputs) carry it in ``metadata``."""

NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
Unit = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Scalar = StrictStr | StrictInt | StrictBool | None


class _Contract(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _current_version() -> dict[str, Scalar]:
    return {"contract_version": CONTRACT_VERSION}


def _check_version(metadata: dict[str, Scalar]) -> dict[str, Scalar]:
    version = metadata.get("contract_version")
    if version != CONTRACT_VERSION:
        msg = (f"metadata.contract_version must be {CONTRACT_VERSION!r} (the current contract "
               f"version), got {version!r}")
        raise ValueError(msg)
    return metadata


class AgentInput(_Contract):
    """What an agent is asked to do.

    Attributes:
        task_goal: the goal, non-empty (surrounding white space is stripped).
        context_id: the identifier of the context the agent works in, non-empty.
        parameters: scalar arguments of the task.
        metadata: scalar metadata; ``contract_version`` must be :data:`CONTRACT_VERSION`.
    """

    task_goal: NonEmpty
    context_id: NonEmpty
    parameters: dict[str, Scalar] = Field(default_factory=dict)
    metadata: dict[str, Scalar] = Field(default_factory=_current_version)

    _version = field_validator("metadata")(_check_version)


class AgentOutput(_Contract):
    """What an agent returned.

    Attributes:
        text: the result text, non-empty.
        confidence: the agent's confidence in [0, 1].
        score: the result's score in [0, 1].
        metadata: scalar metadata; ``contract_version`` must be :data:`CONTRACT_VERSION`.
    """

    text: NonEmpty
    confidence: Unit
    score: Unit
    metadata: dict[str, Scalar] = Field(default_factory=_current_version)

    _version = field_validator("metadata")(_check_version)


class AgentErrorCode(StrEnum):
    """The stable agent failure codes (SECURITY: declared critical by policy)."""

    TIMEOUT = "TIMEOUT"
    """A bounded operation exceeded its deadline: retry only while policy allows."""
    TRANSIENT = "TRANSIENT"
    """The operation may succeed without changing the request: retry with the configured delay."""
    VALIDATION_ERROR = "VALIDATION_ERROR"
    """Input or output breaks its contract: correct the data; never retry unchanged input."""
    FATAL = "FATAL"
    """Execution cannot safely continue: abort the run."""
    SECURITY = "SECURITY"
    """A security policy declared critical at the workflow-graph boundary: abort the run."""


DISPOSITIONS: Final[dict[AgentErrorCode, str]] = {
    AgentErrorCode.TIMEOUT: "retry only while policy allows",
    AgentErrorCode.TRANSIENT: "retry with the configured delay",
    AgentErrorCode.VALIDATION_ERROR: "correct the data; do not retry unchanged input",
    AgentErrorCode.FATAL: "abort the run",
    AgentErrorCode.SECURITY: "abort the run (declared critical at the graph boundary)",
}
"""Each code's normal disposition; :func:`decide_agent_error` applies them."""

_FC_OF: Final = {
    AgentErrorCode.TIMEOUT: FC.LIFE_AGENT_TIMEOUT,
    AgentErrorCode.TRANSIENT: FC.LIFE_AGENT_TRANSIENT,
    AgentErrorCode.VALIDATION_ERROR: FC.LIFE_AGENT_CONTRACT,
    AgentErrorCode.FATAL: FC.LIFE_AGENT_FATAL,
    AgentErrorCode.SECURITY: FC.LIFE_AGENT_SECURITY,
}
_AGENT_OF: Final = {fc.value: code for code, fc in _FC_OF.items()}

AGENT_MESSAGE_CHARS: Final = min(_param_budget(fc.spec.message) for fc in _FC_OF.values())
"""The longest AgentError message: the room the FC-LIFE templates leave for it."""

_TRANSIENT_ONLY: Final = frozenset({AgentErrorCode.TRANSIENT})
_NEVER_TRANSIENT: Final = frozenset({AgentErrorCode.VALIDATION_ERROR, AgentErrorCode.FATAL,
                                     AgentErrorCode.SECURITY})


class AgentError(_Contract):
    """A failed agent call at the single-agent boundary.

    The message and the detail are cleaned at construction exactly as a Failure's would be
    (secrets redacted, the message collapsed to one line of at most
    :data:`AGENT_MESSAGE_CHARS` characters), so ``AgentError -> Failure -> AgentError`` is
    lossless.

    Attributes:
        code: the stable code.
        message: what failed, one line, non-empty.
        detail: optional developer detail.
        transient: whether the failed call may succeed unchanged. Defaults to True for
            TIMEOUT and TRANSIENT, False otherwise; TRANSIENT is always transient and
            VALIDATION_ERROR, FATAL and SECURITY never are.
    """

    code: AgentErrorCode
    message: str
    detail: str | None = None
    transient: bool = False

    @model_validator(mode="before")
    @classmethod
    def _default_transient(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("transient") is None and "code" in data:
            try:
                code = AgentErrorCode(data["code"])
            except ValueError:
                return data  # the field validator names the bad code
            data = {**data, "transient": code in {AgentErrorCode.TIMEOUT,
                                                  AgentErrorCode.TRANSIENT}}
        return data

    @field_validator("message")
    @classmethod
    def _clean_message(cls, value: str) -> str:
        cleaned = clean_text(value, AGENT_MESSAGE_CHARS)
        if not cleaned:
            msg = "message must be non-empty text"
            raise ValueError(msg)
        return cleaned

    @field_validator("detail")
    @classmethod
    def _clean_detail(cls, value: str | None) -> str | None:
        return clean_detail(value) or None

    @model_validator(mode="after")
    def _flag_matches_code(self) -> AgentError:
        if self.code in _TRANSIENT_ONLY and not self.transient:
            msg = f"a {self.code.value} error is transient by definition; transient=False given"
            raise ValueError(msg)
        if self.code in _NEVER_TRANSIENT and self.transient:
            msg = f"a {self.code.value} error is never transient; transient=True given"
            raise ValueError(msg)
        return self


class AgentFailure(Exception):  # noqa: N818 - it carries an AgentError; "Error" would repeat
    """Raised by an agent function to report an :class:`AgentError`."""

    def __init__(self, error: AgentError) -> None:
        super().__init__(error)
        self.error = error

    def __str__(self) -> str:
        return f"{self.error.code.value}: {self.error.message}"


def agent_error_to_failure(error: AgentError, *, surface: str = "agent.call",
                           context: dict[str, Any] | None = None) -> Failure:
    """The Failure of an AgentError, built through its FC-LIFE code.

    Kind, category, templates and severity come from the code's spec; a transient error is
    ``retryable``, a non-transient TIMEOUT ``not_retryable``. ``metadata`` keeps the agent code
    and the flag so :func:`agent_error_from_failure` restores them.
    """
    fc = _FC_OF[error.code]
    retryability = None
    if fc.spec.effective_retryability is Retryability.RETRYABLE and not error.transient:
        retryability = Retryability.NOT_RETRYABLE
    return fc.failure(
        surface=surface, params={"message": error.message}, detail=error.detail,
        retryability=retryability, context=context,
        metadata={"agent_code": error.code.value, "transient": error.transient})


class AgentCodeRow(NamedTuple):
    """One row of :data:`AGENT_CODE_TABLE`; None keys match anything."""

    condition: str
    code: AgentErrorCode
    transient: bool | None
    """The flag; None: the failure's retryability is ``retryable``."""
    critical_security: bool | None = None
    severity: Severity | None = None
    kind: Kind | None = None
    error_classes: frozenset[str] | None = None
    category: Category | None = None
    retryability: Retryability | None = None

    def matches(self, failure: Failure, critical_security: bool) -> bool:
        """Whether ``failure`` has every key of this row."""
        return ((self.critical_security is None or self.critical_security == critical_security)
                and (self.severity is None or failure.severity is self.severity)
                and (self.kind is None or failure.kind is self.kind)
                and (self.error_classes is None or failure.error_class in self.error_classes)
                and (self.category is None or failure.category is self.category)
                and (self.retryability is None or failure.retryability is self.retryability))


_A = AgentErrorCode
AGENT_CODE_TABLE: Final[tuple[AgentCodeRow, ...]] = (
    AgentCodeRow("a policy refusal where security is declared critical", _A.SECURITY, False,
                 critical_security=True, kind=Kind.POLICY_ERROR),
    AgentCodeRow("a fatal failure", _A.FATAL, False, severity=Severity.FATAL),
    AgentCodeRow("a policy refusal (security not declared critical): change the request",
                 _A.VALIDATION_ERROR, False, kind=Kind.POLICY_ERROR),
    AgentCodeRow("a deadline exceeded", _A.TIMEOUT, None, error_classes=frozenset({"timeout"})),
    AgentCodeRow("a retryable failure", _A.TRANSIENT, True,
                 retryability=Retryability.RETRYABLE),
    AgentCodeRow("malformed or invalid data", _A.VALIDATION_ERROR, False,
                 error_classes=frozenset({"validation", "malformed_json", "agent_contract"})),
    AgentCodeRow("a failure the user must fix", _A.VALIDATION_ERROR, False,
                 category=Category.USER),
    AgentCodeRow("a defect", _A.FATAL, False, category=Category.DEFECT),
    AgentCodeRow("a broken environment", _A.FATAL, False, category=Category.ENVIRONMENT),
    AgentCodeRow("a task failure that needs a change", _A.VALIDATION_ERROR, False,
                 retryability=Retryability.RETRYABLE_AFTER_CHANGE),
    AgentCodeRow("anything else (unknown retryability): not safe to continue", _A.FATAL, False),
)
"""How any Failure maps to an agent code and transient flag; the first matching row wins.
A Failure built from an AgentError (FC-LIFE-001..005) keeps its own code and flag."""


def agent_code_for(failure: Failure, *, critical_security: bool = False,
                   ) -> tuple[AgentErrorCode, bool]:
    """The agent code and transient flag of any Failure.

    Args:
        failure: the record.
        critical_security: whether the pipeline's policy declares security critical at the
            graph boundary (policy refusals then map to SECURITY and abort the run).
    """
    own = _AGENT_OF.get(failure.code)
    flag = failure.metadata.get("transient")
    if own is not None and isinstance(flag, bool):
        return own, flag
    for row in AGENT_CODE_TABLE:
        if row.matches(failure, critical_security):
            transient = (failure.retryability is Retryability.RETRYABLE
                         if row.transient is None else row.transient)
            return row.code, transient
    msg = "AGENT_CODE_TABLE has a catch-all last row"  # pragma: no cover - table invariant
    raise AssertionError(msg)


def agent_error_from_failure(failure: Failure, *, critical_security: bool = False,
                             ) -> AgentError:
    """The AgentError of a Failure: the inverse of :func:`agent_error_to_failure`.

    A Failure built from an AgentError gives that AgentError back; any other Failure takes its
    code and flag from :data:`AGENT_CODE_TABLE` and its message from the record.
    """
    code, transient = agent_code_for(failure, critical_security=critical_security)
    message = failure.params.get("message") if failure.code in _AGENT_OF else None
    text = message if isinstance(message, str) and message else failure.message
    return AgentError(code=code, message=text, detail=failure.detail, transient=transient)


def decide_agent_error(  # noqa: PLR0917 - decide's own arguments, passed through
    error: AgentError,
    history: History | None = None,
    policy: Policy = DEFAULT_POLICY,
    budget: Budget | None = None,
    clock: Callable[[], float] = time.monotonic,
    rand: Callable[[], float] = random.random,
) -> Decision:
    """What happens after an AgentError, by :func:`failcode.decide` over its Failure.

    The dispositions follow: a transient TIMEOUT or TRANSIENT is ``retryable`` (rule 4: retried
    with backoff within the operation class's attempts, deadline and the retry budget, then
    ``escalate``); a non-transient TIMEOUT is not retried; VALIDATION_ERROR is
    ``retryable_after_change`` (retried only when ``history`` records a change); FATAL and
    SECURITY are fatal (``abort``). Pure, like :func:`failcode.decide`.
    """
    return decide(agent_error_to_failure(error), history or History(), policy, budget,
                  clock, rand)
