"""The axes of the taxonomy and the per-kind defaults, as data.

Every axis is a :class:`~enum.StrEnum` whose string values are the wire format (snake_case,
kept verbatim). The per-kind defaults live in one table,
:data:`KIND_DEFAULTS`; nothing else in failcode branches on a kind with an if-chain.
"""

from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "CATEGORY_RETRYABILITIES",
    "KIND_DEFAULTS",
    "SEED_003_CATEGORIES",
    "Category",
    "Kind",
    "KindDefaults",
    "Outcome",
    "Retryability",
    "Route",
    "Severity",
]


class Kind(StrEnum):
    """What failed (the 22 error kinds)."""

    USER_ERROR = "user_error"
    PROJECT_ERROR = "project_error"
    ENV_ERROR = "env_error"
    DEPENDENCY_ERROR = "dependency_error"
    PERMISSION_ERROR = "permission_error"
    TOOL_ERROR = "tool_error"
    COMMAND_ERROR = "command_error"
    BUILD_ERROR = "build_error"
    TEST_ERROR = "test_error"
    STATIC_ANALYSIS_ERROR = "static_analysis_error"
    DEBUG_ERROR = "debug_error"
    PROVIDER_ERROR = "provider_error"
    MODEL_CAPABILITY_ERROR = "model_capability_error"
    CONTEXT_ERROR = "context_error"
    AGENT_ERROR = "agent_error"
    SCHEDULER_ERROR = "scheduler_error"
    WORKSPACE_ERROR = "workspace_error"
    MERGE_ERROR = "merge_error"
    ARCHITECTURE_ERROR = "architecture_error"
    POLICY_ERROR = "policy_error"
    SYSTEM_ERROR = "system_error"
    UNKNOWN_ERROR = "unknown_error"

    @property
    def defaults(self) -> KindDefaults:
        """The defaults for this kind (:data:`KIND_DEFAULTS`)."""
        return KIND_DEFAULTS[self]


class Category(StrEnum):
    """Who must act: user, transient, environment, defect, plus ``task`` for work that failed
    and needs another approach."""

    USER = "user"
    TRANSIENT = "transient"
    ENVIRONMENT = "environment"
    DEFECT = "defect"
    TASK = "task"

    @property
    def needs_remedy(self) -> bool:
        """Whether a failure of this category must carry a remedy (user, environment)."""
        return self in _REMEDY_CATEGORIES

    @property
    def retryabilities(self) -> tuple[Retryability, ...]:
        """The retryabilities a code of this category may have; the first is the default."""
        return CATEGORY_RETRYABILITIES[self]

    def allows(self, retryability: Retryability) -> bool:
        """Whether a code of this category may have ``retryability``."""
        return retryability in CATEGORY_RETRYABILITIES[self]


_REMEDY_CATEGORIES = frozenset({Category.USER, Category.ENVIRONMENT})


class Severity(StrEnum):
    """How visible a failure is. Severity never implies retryability."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"
    FATAL = "fatal"


class Retryability(StrEnum):
    """Whether the same attempt may succeed."""

    RETRYABLE = "retryable"
    RETRYABLE_AFTER_CHANGE = "retryable_after_change"
    NOT_RETRYABLE = "not_retryable"
    UNKNOWN = "unknown"


class Route(StrEnum):
    """Who a failure is routed to (the default routes, as one enum)."""

    MAIN_AGENT = "main_agent"
    DOCTOR = "doctor"
    PERMISSION_ENGINE = "permission_engine"
    SCHEDULER = "scheduler"
    DEBUGGER = "debugger"
    EXECUTOR = "executor"
    REVIEWER = "reviewer"
    PROVIDER_LAYER = "provider_layer"
    PROVIDER_SELECTOR = "provider_selector"
    CONTEXT_ASSEMBLER = "context_assembler"
    COMPACTOR = "compactor"
    ARCHITECTURE_DESIGNER = "architecture_designer"
    USER = "user"
    DEVELOPER = "developer"


class Outcome(StrEnum):
    """The status a task ends with after a failure (the WorkerResult statuses)."""

    FAILED = "failed"
    BLOCKED = "blocked"
    CANCELLED = "cancelled"


CATEGORY_RETRYABILITIES: Mapping[Category, tuple[Retryability, ...]] = MappingProxyType({
    # who acts fixes the recovery family; retryability refines it within the family
    Category.TRANSIENT: (Retryability.RETRYABLE,),
    Category.USER: (Retryability.NOT_RETRYABLE, Retryability.RETRYABLE_AFTER_CHANGE),
    Category.ENVIRONMENT: (Retryability.RETRYABLE_AFTER_CHANGE, Retryability.NOT_RETRYABLE),
    Category.TASK: (Retryability.RETRYABLE_AFTER_CHANGE, Retryability.UNKNOWN),
    Category.DEFECT: (Retryability.NOT_RETRYABLE,),
})
"""Category -> the retryabilities a code of it may declare, the default first.

transient -> retryable (backoff, bounded, then the stuck ladder); user -> not_retryable or
retryable_after_change (after the user acted); environment -> retryable_after_change (after the
fix) or not_retryable; task -> retryable_after_change or unknown (diagnosed once, a repeat
escalates); defect -> not_retryable (fail loudly, keep what reproduces it, do not continue).
"""


def derived_retryability(category: Category, kind: Kind) -> Retryability:
    """The retryability of a code that declares none: the kind's default when the category
    allows it, else the category's own default (the first of its allowed retryabilities)."""
    allowed = CATEGORY_RETRYABILITIES[category]
    preferred = KIND_DEFAULTS[kind].retryability
    return preferred if preferred in allowed else allowed[0]


class KindDefaults(NamedTuple):
    """The defaults of one kind; a classifier may set a more precise value."""

    meaning: str
    category: Category
    retryability: Retryability
    routes: tuple[Route, ...]
    """Ordered: the first route is the primary owner."""
    outcome: Outcome
    outcome_note: str
    """The seed's fuller wording of the task outcome (e.g. 'blocked unless policy auto-allows')."""


_K, _C, _R, _T, _O = Kind, Category, Retryability, Route, Outcome

KIND_DEFAULTS: Mapping[Kind, KindDefaults] = MappingProxyType({
    _K.USER_ERROR: KindDefaults(
        "invalid or contradictory user input, or a cancelled decision",
        _C.USER, _R.NOT_RETRYABLE, (_T.MAIN_AGENT,),
        _O.BLOCKED, "blocked (a cancelled decision: cancelled)"),
    _K.PROJECT_ERROR: KindDefaults(
        "project structure or configuration issue",
        _C.USER, _R.RETRYABLE_AFTER_CHANGE, (_T.MAIN_AGENT, _T.DOCTOR),
        _O.BLOCKED, "blocked"),
    _K.ENV_ERROR: KindDefaults(
        "local environment missing or broken",
        _C.ENVIRONMENT, _R.RETRYABLE_AFTER_CHANGE, (_T.DOCTOR,),
        _O.BLOCKED, "blocked or doctor fix task"),
    _K.DEPENDENCY_ERROR: KindDefaults(
        "missing or incompatible dependency",
        _C.ENVIRONMENT, _R.RETRYABLE_AFTER_CHANGE, (_T.DOCTOR, _T.PERMISSION_ENGINE),
        _O.BLOCKED, "blocked or doctor fix task"),
    _K.PERMISSION_ERROR: KindDefaults(
        "action denied or needs confirmation",
        _C.USER, _R.RETRYABLE_AFTER_CHANGE, (_T.PERMISSION_ENGINE, _T.MAIN_AGENT),
        _O.BLOCKED, "blocked unless policy auto-allows"),
    _K.TOOL_ERROR: KindDefaults(
        "tool implementation or validation failure",
        _C.DEFECT, _R.NOT_RETRYABLE, (_T.SCHEDULER, _T.DEBUGGER),
        _O.FAILED, "failed"),
    _K.COMMAND_ERROR: KindDefaults(
        "shell process failed outside build/test classification",
        _C.TASK, _R.UNKNOWN, (_T.SCHEDULER, _T.DEBUGGER),
        _O.FAILED, "failed"),
    _K.BUILD_ERROR: KindDefaults(
        "build, configure, compile or link failure",
        _C.TASK, _R.RETRYABLE_AFTER_CHANGE, (_T.EXECUTOR, _T.DEBUGGER),
        _O.FAILED, "failed, then retry/debug"),
    _K.TEST_ERROR: KindDefaults(
        "test command failed or an assertion failed",
        _C.TASK, _R.RETRYABLE_AFTER_CHANGE, (_T.EXECUTOR, _T.DEBUGGER),
        _O.FAILED, "failed, then retry/debug"),
    _K.STATIC_ANALYSIS_ERROR: KindDefaults(
        "static analysis found an issue or the tool failed",
        _C.TASK, _R.RETRYABLE_AFTER_CHANGE, (_T.REVIEWER, _T.DEBUGGER),
        _O.FAILED, "failed, then retry/debug"),
    _K.DEBUG_ERROR: KindDefaults(
        "debugger or instrumentation failed",
        _C.TASK, _R.RETRYABLE_AFTER_CHANGE, (_T.DEBUGGER, _T.SCHEDULER),
        _O.FAILED, "failed"),
    _K.PROVIDER_ERROR: KindDefaults(
        "provider API, network, auth or rate failure",
        _C.TRANSIENT, _R.RETRYABLE, (_T.PROVIDER_LAYER, _T.MAIN_AGENT),
        _O.FAILED, "failed or blocked depending on fallback availability"),
    _K.MODEL_CAPABILITY_ERROR: KindDefaults(
        "the selected model lacks a required feature",
        _C.ENVIRONMENT, _R.RETRYABLE_AFTER_CHANGE, (_T.SCHEDULER, _T.PROVIDER_SELECTOR),
        _O.FAILED, "failed or blocked depending on fallback availability"),
    _K.CONTEXT_ERROR: KindDefaults(
        "context assembly, compaction or retrieval failure",
        _C.TASK, _R.RETRYABLE_AFTER_CHANGE, (_T.CONTEXT_ASSEMBLER, _T.COMPACTOR),
        _O.FAILED, "failed"),
    _K.AGENT_ERROR: KindDefaults(
        "worker protocol, crash or result validation issue",
        _C.TASK, _R.RETRYABLE_AFTER_CHANGE, (_T.SCHEDULER,),
        _O.FAILED, "failed or fatal blocked"),
    _K.SCHEDULER_ERROR: KindDefaults(
        "graph, dispatch or recovery internal issue",
        _C.DEFECT, _R.NOT_RETRYABLE, (_T.MAIN_AGENT, _T.DEVELOPER),
        _O.BLOCKED, "fatal blocked"),
    _K.WORKSPACE_ERROR: KindDefaults(
        "worktree, copy or workspace setup failure",
        _C.ENVIRONMENT, _R.RETRYABLE_AFTER_CHANGE, (_T.SCHEDULER,),
        _O.FAILED, "failed, retry serial/repair, or blocked"),
    _K.MERGE_ERROR: KindDefaults(
        "merge or patch conflict, or copy-back failure",
        _C.TASK, _R.RETRYABLE_AFTER_CHANGE,
        (_T.SCHEDULER, _T.DEBUGGER, _T.ARCHITECTURE_DESIGNER),
        _O.FAILED, "failed, retry serial/repair, or blocked"),
    _K.ARCHITECTURE_ERROR: KindDefaults(
        "design or interface mismatch, or an invalid plan",
        _C.USER, _R.NOT_RETRYABLE, (_T.ARCHITECTURE_DESIGNER,),
        _O.BLOCKED, "blocked and routed to the architecture designer"),
    _K.POLICY_ERROR: KindDefaults(
        "safety, security or policy violation",
        _C.USER, _R.NOT_RETRYABLE, (_T.MAIN_AGENT, _T.PERMISSION_ENGINE),
        _O.BLOCKED, "blocked or cancelled"),
    _K.SYSTEM_ERROR: KindDefaults(
        "unexpected OS, resource or filesystem failure",
        _C.ENVIRONMENT, _R.RETRYABLE_AFTER_CHANGE, (_T.SCHEDULER, _T.DOCTOR),
        _O.FAILED, "failed or fatal blocked"),
    _K.UNKNOWN_ERROR: KindDefaults(
        "insufficient classification evidence",
        _C.TASK, _R.UNKNOWN, (_T.SCHEDULER, _T.DEBUGGER),
        _O.FAILED, "failed"),
})


SEED_003_CATEGORIES: Final = frozenset(
    {Category.USER, Category.TRANSIENT, Category.ENVIRONMENT, Category.DEFECT})
"""The four categories user, transient, environment and defect (no ``task``); a catalog
declared with these cannot declare a task code."""
