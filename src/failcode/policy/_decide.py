"""What happens after a failure: :func:`decide` and its seven ordered rules.

``decide(failure, history, policy, budget) -> Decision`` is pure: it never sleeps and does no
I/O; the clock and the random source are arguments, so equal inputs with the same seeded random
source give the same :class:`Decision`. All values are immutable: the :class:`History` of the
operation and the :class:`Budget` state go in, and the spent budget comes out as
``Decision.budget`` (the same object when nothing was spent). The caller keeps both: it records
the failure with ``history.after(failure)`` and stores ``decision.budget`` where the session's
budget lives (:class:`SharedBudget` does that for threads and tasks).

The rules, first match wins (``Decision.rule`` says which fired). The category says who acts
and so fixes the recovery family (a code's retryability always lies inside its category's family,
see :data:`~failcode.CATEGORY_RETRYABILITIES`); the retryability refines it:

1. ``severity == fatal`` -> ``abort``, outcome ``blocked``, routed to the kind's primary owner.
2. ``policy_error`` -> ``block`` (never retried); ``architecture_error`` -> ``block``, routed to
   the architecture designer.
3. The same signature again with nothing changed since the last failure -> the stuck ladder,
   ``retry`` -> ``retry_after_change`` -> ``escalate`` (route to the owner) -> ``block``.
   Where a failure enters the ladder follows from its retryability:

   * ``retryable`` enters on ``retry``; that rung lasts the retries its operation class grants
     (``max_attempts - 1`` attempts with this signature) and while on it rule 4 decides (the
     backoff, budget, deadline and server delay apply): transient failures retry with backoff,
     up to a bounded count, then climb the stuck ladder.
   * ``retryable_after_change`` enters on ``retry_after_change`` (a plain retry without a change
     is exactly what rule 5 forbids).
   * ``unknown`` enters on ``escalate`` (rule 7: a repeated unknown escalates).
   * ``not_retryable`` failures and defects are not on the ladder: rule 6 stops them at once,
     every time.

   ``retry_after_change`` lasts ``policy.ladder.change_repeats`` repeats, ``escalate``
   ``policy.ladder.route_repeats``; after that, ``block``.
4. ``retryable`` -> ``retry`` after exponential backoff with full jitter
   (``U(0, min(max_delay_s, initial_delay_s * multiplier ** (attempt - 1)))``), bounded by the
   operation class (``history.operation``), its deadline and the retry budget. A server-directed
   delay (``metadata["retry_after_s"]``) is honoured up to ``policy.retry_after_ceiling_s`` (the
   delay is then ``max(server delay, backoff)``, not capped by ``max_delay_s``: ignoring a
   server's delay is bad client behaviour); above the ceiling the decision fails fast
   (``escalate``, hint ``server_delay_refused``). ``metadata["should_retry"] is False``
   (x-should-retry: false) -> no retry. Otherwise, when attempts, deadline or budget run out ->
   ``escalate``.
5. ``retryable_after_change`` -> ``retry`` when the history records a change; else
   ``retry_after_change`` routed to the owner, outcome ``failed`` for task and transient
   categories, ``blocked`` for user and environment.
6. ``not_retryable``, and every ``defect`` whatever its retryability -> user: ``block`` (pause
   and wait, outcome blocked); defect: ``abort`` (fail loudly and report, outcome failed; the
   record keeps what reproduces it), or ``skip`` on a non-critical path when
   ``policy.continue_noncritical_defects`` (default: stop); environment and others: ``block``.
   A defect is never retried: it means an assumption of the code is false, and retrying acts on
   a state the system does not understand.
7. ``unknown`` -> the first time: ``retry`` routed to the debugger (diagnose, one retry); repeated
   (or past the class's attempt bound) -> ``escalate``.

An unknown tool failure is retried once for diagnosis, and a defect is never retried. Both
hold, because the category decides: ``tool_error`` defaults to the
``defect`` category (not_retryable), so a tool whose implementation is wrong aborts at once; a
tool failure whose cause is not known is classified ``task`` with retryability ``unknown``
(``command_error``, ``unknown_error``, ``FC-SYS-001``) and gets the one diagnostic retry of rule
7. Nothing in the ``defect`` category is ever retried, whatever a record's retryability says.

Outcomes. When an operation stops, a user or environment failure is ``blocked`` (someone outside
the agent must act) and a task or transient one ``failed`` (the scheduler may retry or skip). A
provider or model-capability failure depends on whether a fallback exists:
``failed`` when ``policy.fallback_models`` names one (the scheduler can switch), ``blocked`` when
none does.

``decide`` never returns ``cancel``: a cancellation is not a Failure (it is a
:class:`~failcode.Cancelled` outcome) and the retry helpers let it through untouched. The action
exists for schedulers that map a refused policy decision to a cancellation.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

import msgspec

from failcode.record._axes import (
    KIND_DEFAULTS,
    Category,
    Kind,
    Outcome,
    Retryability,
    Route,
    Severity,
)
from failcode.record._failure import Failure, expect_failure
from failcode.record._outcomes import NoMatch, RejectedAction

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "DEFAULT_CLASSES",
    "Action",
    "Budget",
    "BudgetPolicy",
    "Change",
    "Decision",
    "Hint",
    "History",
    "LadderPolicy",
    "MonitorPolicy",
    "NoProgressMonitor",
    "Policy",
    "RetryClass",
    "Rule",
    "SharedBudget",
    "StuckReport",
    "decide",
]


class Action(StrEnum):
    """What to do next."""

    RETRY = "retry"
    RETRY_AFTER_CHANGE = "retry_after_change"
    BLOCK = "block"
    SKIP = "skip"
    CANCEL = "cancel"
    ABORT = "abort"
    ESCALATE = "escalate"


class Rule(IntEnum):
    """Which of the seven ordered decision rules of :func:`decide` fired."""

    FATAL = 1
    POLICY_OR_ARCHITECTURE = 2
    STUCK_LADDER = 3
    RETRYABLE = 4
    RETRYABLE_AFTER_CHANGE = 5
    NOT_RETRYABLE = 6
    UNKNOWN = 7


class Change(StrEnum):
    """What may change between attempts; recorded in :class:`History`."""

    MODEL = "model"
    CONTEXT = "context"
    COMMAND = "command"
    PERMISSION = "permission"
    ENV = "env"
    WORKSPACE = "workspace"
    POLICY = "policy"
    """A policy or profile change."""
    USER_APPROVAL = "user_approval"
    TASK_REDESIGN = "task_redesign"


class Hint(StrEnum):
    """Machine-readable advice carried by a Decision."""

    POLICY_MAY_AUTO_ALLOW = "policy_may_auto_allow"
    FALLBACK_MODEL_EXISTS = "fallback_model_exists"
    RETRY_SERIALLY_OR_REPAIR_WORKSPACE = "retry_serially_or_repair_workspace"
    OPEN_DOCTOR_FIX_TASK = "open_doctor_fix_task"
    SERVER_DELAY_REFUSED = "server_delay_refused"
    """The server asked for a delay above the policy's ceiling; failing fast instead."""
    SERVER_SAID_NO_RETRY = "server_said_no_retry"
    """The server said not to retry (x-should-retry: false)."""
    RETRY_BUDGET_EXHAUSTED = "retry_budget_exhausted"
    DEADLINE_EXCEEDED = "deadline_exceeded"


# ---------------------------------------------------------------------------------------------
# policy: plain frozen dataclasses, built once (from failcode.toml or in code) and read by decide


@dataclass(frozen=True, slots=True)
class RetryClass:
    """The retry bounds of one operation class (a device timeout and a page fetch differ).

    Attributes:
        max_attempts: attempts in all, the first included (1 = never retry).
        initial_delay_s: the backoff base of the first retry.
        max_delay_s: the cap of the backoff (server-directed delays have their own ceiling).
        multiplier: the exponential growth factor.
        deadline_s: the longest an operation may take, from its first attempt; a retry whose
            delay would end past it is refused.
    """

    max_attempts: int = 3
    initial_delay_s: float = 0.5
    max_delay_s: float = 8.0
    multiplier: float = 2.0
    deadline_s: float = 60.0


DEFAULT_CLASSES: Final[Mapping[str, RetryClass]] = MappingProxyType({
    "default": RetryClass(),
    # provider calls: a few slow retries (the SDKs' own retries should be off, pain point 8)
    "provider": RetryClass(max_attempts=4, initial_delay_s=1.0, max_delay_s=20.0,
                           deadline_s=120.0),
    # a local device answers fast or not at all: many quick retries, short deadline
    "device": RetryClass(max_attempts=6, initial_delay_s=0.05, max_delay_s=1.0, deadline_s=10.0),
    # a page load: few retries, a longer cap
    "page_fetch": RetryClass(max_attempts=3, initial_delay_s=1.0, max_delay_s=30.0,
                             deadline_s=90.0),
})
"""The built-in operation classes; ``default`` applies to any class a policy does not list."""


@dataclass(frozen=True, slots=True)
class BudgetPolicy:
    """The retry token bucket (botocore's retry quota, gRPC retryThrottling).

    Attributes:
        capacity: tokens in a full bucket.
        retry_cost: tokens one rule-4 retry spends; with none left the retry is refused.
        success_refund: tokens a success puts back (never above ``capacity``).
    """

    capacity: float = 500.0
    retry_cost: float = 5.0
    success_refund: float = 1.0


@dataclass(frozen=True, slots=True)
class LadderPolicy:
    """How long each rung of the stuck ladder lasts, in repeats of one signature."""

    change_repeats: int = 1
    """Repeats decided ``retry_after_change`` before routing to the owner."""
    route_repeats: int = 1
    """Repeats routed to the owner (``escalate``) before ``block``."""


@dataclass(frozen=True, slots=True)
class MonitorPolicy:
    """When :class:`NoProgressMonitor` calls a session stuck (any threshold reached)."""

    signature_repeats: int = 3
    """Occurrences of one signature since the last progress."""
    rejected_actions: int = 5
    """Rejected actions since the last progress."""
    no_matches: int = 5
    """No-match probes since the last progress."""


def _hint_table(fallbacks: bool) -> dict[Kind, tuple[Hint, ...]]:
    table: dict[Kind, tuple[Hint, ...]] = dict.fromkeys(Kind, ())
    table[Kind.PERMISSION_ERROR] = (Hint.POLICY_MAY_AUTO_ALLOW,)
    table[Kind.MERGE_ERROR] = table[Kind.WORKSPACE_ERROR] = (
        Hint.RETRY_SERIALLY_OR_REPAIR_WORKSPACE,)
    table[Kind.ENV_ERROR] = table[Kind.DEPENDENCY_ERROR] = (Hint.OPEN_DOCTOR_FIX_TASK,)
    if fallbacks:
        table[Kind.PROVIDER_ERROR] = table[Kind.MODEL_CAPABILITY_ERROR] = (
            Hint.FALLBACK_MODEL_EXISTS,)
    return table


@dataclass(frozen=True, slots=True)
class Policy:
    """Everything :func:`decide` reads besides the failure, the history and the budget.

    Build it in code or load it with :func:`failcode.load_config`. It is compiled once (its
    per-kind hint table is precomputed), so build it at start-up, not per call.

    Attributes:
        classes: operation class -> bounds; ``default`` is used for unlisted classes (and
            :data:`DEFAULT_CLASSES` fills ``default`` when missing).
        budget: the retry token bucket.
        ladder: the stuck ladder's thresholds.
        retry_after_ceiling_s: the longest server-directed delay honoured; above it, fail fast.
        continue_noncritical_defects: a not-retryable defect on a path marked non-critical
            (``History.critical=False``) is skipped instead of aborting (default: stop).
        fallback_models: models a scheduler may switch to; non-empty adds the
            ``fallback_model_exists`` hint to provider and model-capability failures, and such
            a failure that stops its operation is ``failed`` (the scheduler can switch); with
            none it is ``blocked``.
        monitor: the no-progress thresholds.
    """

    classes: Mapping[str, RetryClass] = field(default_factory=lambda: DEFAULT_CLASSES)
    budget: BudgetPolicy = field(default_factory=BudgetPolicy)
    ladder: LadderPolicy = field(default_factory=LadderPolicy)
    retry_after_ceiling_s: float = 60.0
    continue_noncritical_defects: bool = False
    fallback_models: tuple[str, ...] = ()
    monitor: MonitorPolicy = field(default_factory=MonitorPolicy)
    _hints: dict[Kind, tuple[Hint, ...]] = field(init=False, repr=False, compare=False)
    _fallback_outcome: Outcome = field(init=False, repr=False, compare=False)
    _classes: dict[str, RetryClass] = field(init=False, repr=False, compare=False)
    _default: RetryClass = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        classes = dict(self.classes)
        classes.setdefault("default", DEFAULT_CLASSES["default"])
        object.__setattr__(self, "classes", MappingProxyType(classes))
        object.__setattr__(self, "_classes", classes)  # a plain dict reads faster
        object.__setattr__(self, "fallback_models", tuple(self.fallback_models))
        object.__setattr__(self, "_hints", _hint_table(bool(self.fallback_models)))
        object.__setattr__(self, "_fallback_outcome",
                           Outcome.FAILED if self.fallback_models else Outcome.BLOCKED)
        object.__setattr__(self, "_default", classes["default"])

    def retry_class(self, operation: str) -> RetryClass:
        """The bounds of ``operation``, or of ``default`` when the policy does not list it."""
        return self._classes.get(operation) or self._default


DEFAULT_POLICY: Final = Policy()


# ---------------------------------------------------------------------------------------------
# the per-call values: budget, history, decision (msgspec Structs: built per attempt, cheaply)


class Budget(msgspec.Struct, frozen=True, gc=False):
    """A retry token bucket's state: immutable; :func:`decide` returns the spent one.

    Start with ``Budget.full(policy)``; after a success, ``budget.refunded(policy)``.
    """

    tokens: float
    capacity: float

    @classmethod
    def full(cls, policy: Policy = DEFAULT_POLICY) -> Budget:
        """A full bucket for ``policy``."""
        return cls(policy.budget.capacity, policy.budget.capacity)

    def refunded(self, policy: Policy = DEFAULT_POLICY) -> Budget:
        """The bucket after a success: ``success_refund`` tokens back, never above capacity."""
        tokens = self.tokens + policy.budget.success_refund
        if tokens >= self.capacity:  # noqa: PLR1730 - cheaper than min() per call
            tokens = self.capacity
        return Budget(tokens, self.capacity) if tokens != self.tokens else self


_NO_COUNTS: Mapping[str, int] = MappingProxyType({})
_NO_CHANGES: frozenset[Change] = frozenset()


class History(msgspec.Struct, frozen=True):
    """What happened before this failure, for one operation (immutable).

    Attributes:
        operation: the operation class naming the retry bounds (``provider``, ``device``...).
        critical: False marks a non-critical path (see ``Policy.continue_noncritical_defects``).
        started_at: the clock reading when the operation's first attempt started (``None``: no
            deadline is applied).
        attempts: failed attempts before this one.
        signatures: signature -> how many times it failed before.
        changes: what changed since the last failure (cleared by :meth:`after`).
    """

    operation: str = "default"
    critical: bool = True
    started_at: float | None = None
    attempts: int = 0
    signatures: Mapping[str, int] = _NO_COUNTS
    changes: frozenset[Change] = _NO_CHANGES

    def after(self, failure: Failure) -> History:
        """This history with ``failure`` recorded (changes cleared: they preceded it)."""
        signatures = self.signatures
        # a proxy's copy() is a C-level dict copy, 5x faster than dict(proxy)
        counts = (signatures.copy() if type(signatures) is MappingProxyType
                  else dict(signatures))
        signature = failure.signature
        counts[signature] = counts.get(signature, 0) + 1
        return History(self.operation, self.critical, self.started_at, self.attempts + 1,
                       MappingProxyType(counts), _NO_CHANGES)

    def changed(self, *changes: Change) -> History:
        """This history with ``changes`` recorded since the last failure."""
        return History(self.operation, self.critical, self.started_at, self.attempts,
                       self.signatures, self.changes | frozenset(Change(c) for c in changes))

    def count(self, signature: str) -> int:
        """How many times ``signature`` failed before."""
        return self.signatures.get(signature, 0)


class Decision(msgspec.Struct, frozen=True, gc=False):
    """What :func:`decide` concluded.

    Attributes:
        action: what to do next.
        delay_s: seconds to wait before retrying (0 unless the action is ``retry``).
        route: who acts on it.
        outcome: the task status if the operation stops here.
        reason: one sentence naming the rule and what decided it.
        rule: which of the seven rules fired.
        hints: machine-readable advice.
        budget: the retry budget after this decision (spent by a rule-4 retry).
        server_delay_s: the server-directed delay the failure carried, honoured or refused.
    """

    action: Action
    delay_s: float
    route: Route
    outcome: Outcome
    reason: str
    rule: Rule
    hints: tuple[Hint, ...]
    budget: Budget
    server_delay_s: float | None = None

    @property
    def retries(self) -> bool:
        """Whether the action is an immediate ``retry``."""
        return self.action is Action.RETRY


# ---------------------------------------------------------------------------------------------
# decide

_A, _O, _R = Action, Outcome, Rule
_FATAL = Severity.FATAL
_RETRYABLE = Retryability.RETRYABLE
_AFTER_CHANGE = Retryability.RETRYABLE_AFTER_CHANGE
_NOT_RETRYABLE = Retryability.NOT_RETRYABLE
_DEFECT = Category.DEFECT
_INF: Final = float("inf")
_FLOAT_MAX: Final = sys.float_info.max
_OWNER: Final = {kind: d.routes[0] for kind, d in KIND_DEFAULTS.items()}
_WAITS: Final = frozenset({Category.USER, Category.ENVIRONMENT})
"""Categories whose failures block (someone outside the agent must act); others fail."""
_FALLBACK_KINDS: Final = frozenset({Kind.PROVIDER_ERROR, Kind.MODEL_CAPABILITY_ERROR})
"""Kinds whose stop outcome depends on whether a fallback model exists."""


def _stop_outcome(failure: Failure, policy: Policy) -> Outcome:
    if failure.kind in _FALLBACK_KINDS:
        return policy._fallback_outcome
    return _O.BLOCKED if failure.category in _WAITS else _O.FAILED


def _ladder(  # noqa: PLR0917 - private hot path; positional calls are cheaper
        failure: Failure, n: int, policy: Policy, budget: Budget,
            hints: tuple[Hint, ...], retry_rung: int) -> Decision | None:
    """Rule 3 for a failure whose signature failed ``n`` times before, nothing changed."""
    retryability = failure.retryability
    ladder = policy.ladder
    if retryability is _RETRYABLE:
        position = n - retry_rung
        if position <= 0:
            return None  # still on the retry rung: rule 4 decides
    elif retryability is _AFTER_CHANGE:
        position = n
    else:  # unknown enters on the escalate rung
        position = n + ladder.change_repeats
    owner = _OWNER[failure.kind]
    seen = n + 1
    if position <= ladder.change_repeats:
        return Decision(_A.RETRY_AFTER_CHANGE, 0.0, owner, _stop_outcome(failure, policy),
                        f"rule 3 (stuck ladder): the same failure {seen} times with nothing "
                        "changed; retry only after a change", _R.STUCK_LADDER, hints, budget)
    if position <= ladder.change_repeats + ladder.route_repeats:
        return Decision(_A.ESCALATE, 0.0, owner, _stop_outcome(failure, policy),
                        f"rule 3 (stuck ladder): the same failure {seen} times with nothing "
                        f"changed; routed to the owner ({owner})", _R.STUCK_LADDER, hints, budget)
    return Decision(_A.BLOCK, 0.0, owner, _O.BLOCKED,
                    f"rule 3 (stuck ladder): the same failure {seen} times with nothing changed; "
                    "blocked", _R.STUCK_LADDER, hints, budget)


def _check_types(failure: object, history: object, policy: object, budget: object) -> None:
    """Raise the TypeError that names the first argument of the wrong type (subclasses pass)."""
    expect_failure(failure, "decide")
    for argument, value, expected in (("history", history, History), ("policy", policy, Policy),
                                      ("budget", budget, Budget)):
        if not isinstance(value, expected) and not (argument == "budget" and value is None):
            msg = (f"decide() expects {argument} to be a failcode.{expected.__name__}, got "
                   f"{type(value).__name__}")
            raise TypeError(msg)


def _defect(failure: Failure, history: History, policy: Policy, hints: tuple[Hint, ...],
            budget: Budget) -> Decision:
    """Rule 6 for a defect, whatever its retryability: abort and report, never retry."""
    owner = _OWNER[failure.kind]
    if not history.critical and policy.continue_noncritical_defects:
        return Decision(_A.SKIP, 0.0, owner, _O.FAILED,
                        "rule 6 (defect): skipped, because the path is non-critical and the "
                        "policy continues past such defects", _R.NOT_RETRYABLE, hints, budget)
    return Decision(_A.ABORT, 0.0, owner, _O.FAILED,
                    "rule 6 (defect): an assumption of the code is false; aborted and reported "
                    "with the evidence to reproduce it, never retried", _R.NOT_RETRYABLE, hints,
                    budget)


_RETRY_AFTER_BACKOFF: Final = "rule 4 (retryable): retry after a full-jitter backoff"
_RETRY_AFTER_SERVER: Final = "rule 4 (retryable): retry after the server-directed delay"


def _escalate(  # noqa: PLR0917 - private; positional calls are cheaper
        failure: Failure, policy: Policy, reason: str, hints: tuple[Hint, ...], budget: Budget,
        server_delay: float | None = None) -> Decision:
    return Decision(_A.ESCALATE, 0.0, _OWNER[failure.kind], _stop_outcome(failure, policy),
                    reason, _R.RETRYABLE, hints, budget, server_delay)


def decide(  # noqa: PLR0917 - clock and rand positional: cheaper on the hot path
    failure: Failure,
    history: History,
    policy: Policy = DEFAULT_POLICY,
    budget: Budget | None = None,
    clock: Callable[[], float] = time.monotonic,
    rand: Callable[[], float] = random.random,
) -> Decision:
    """Decide what happens after ``failure``: seven ordered rules, first match wins.

    Pure: no sleeping, no I/O. ``clock`` is read only to test a deadline (when
    ``history.started_at`` is set); ``rand`` draws the jitter (pass ``random.Random(seed).random``
    for reproducible decisions).

    The server delay ``failure.metadata["retry_after_s"]`` (seconds, an int or a float; a
    bool is not one) comes bounded from the record: its mapping refuses NaN, infinities and
    integers outside 64 bits when a record is built or decoded (``InvalidFailureError``,
    ``FailureDecodeError``, naming the key and the rule). Past that, a negative delay is no
    server delay (ignored: the backoff alone decides), and one beyond the largest float counts
    as infinite (above every ceiling: fail fast), so no value raises ``OverflowError`` here.

    Args:
        failure: the failure that just happened.
        history: what happened before it in this operation (not including it).
        policy: the decision policy.
        budget: the session's retry budget; ``None`` means a full one.
        clock: seconds, on the same clock as ``history.started_at``.
        rand: a float in [0, 1) per call.

    Returns:
        The decision; ``decision.budget`` is the budget after it (spent only by a rule-4 retry).

    Raises:
        TypeError: an argument is not of its type (a non-error outcome such as ``NoMatch`` is
            never decided: it is counted by :class:`NoProgressMonitor`).
    """
    if (failure.__class__ is not Failure or history.__class__ is not History
            or policy.__class__ is not Policy
            or (budget is not None and budget.__class__ is not Budget)):
        _check_types(failure, history, policy, budget)
    if budget is None:
        budget = Budget(policy.budget.capacity, policy.budget.capacity)
    kind = failure.kind
    hints = policy._hints[kind]
    # rule 1
    if failure.severity is _FATAL:
        return Decision(_A.ABORT, 0.0, _OWNER[kind], _O.BLOCKED,
                        "rule 1 (fatal): the session cannot safely continue; aborted",
                        _R.FATAL, hints, budget)
    # rule 2
    if kind is Kind.POLICY_ERROR:
        return Decision(_A.BLOCK, 0.0, _OWNER[kind], _O.BLOCKED,
                        "rule 2 (policy): a policy error is never retried; it needs approval, "
                        "a profile change, a redesign or a refusal", _R.POLICY_OR_ARCHITECTURE,
                        hints, budget)
    if kind is Kind.ARCHITECTURE_ERROR:
        return Decision(_A.BLOCK, 0.0, Route.ARCHITECTURE_DESIGNER, _O.BLOCKED,
                        "rule 2 (architecture): blocked until the architecture designer decides",
                        _R.POLICY_OR_ARCHITECTURE, hints, budget)
    category = failure.category
    if category is _DEFECT:
        return _defect(failure, history, policy, hints, budget)
    retryability = failure.retryability
    signatures = history.signatures
    n = signatures.get(failure.signature, 0) if signatures else 0
    changed = not not history.changes  # noqa: SIM208 - cheaper than bool() on the hot path
    bounds = policy._classes.get(history.operation) or policy._default
    # rule 3 (a retryable failure stays on the retry rung while its class grants retries)
    if (n and not changed and retryability is not _NOT_RETRYABLE
            and (retryability is not _RETRYABLE or n > bounds.max_attempts - 2)):
        laddered = _ladder(failure, n, policy, budget, hints,
                           max(bounds.max_attempts - 2, 0))
        if laddered is not None:
            return laddered
    # rule 4 (inline: the hot path of every retry loop)
    if retryability is _RETRYABLE:
        metadata = failure.metadata
        server: float | None = None
        if metadata:
            if metadata.get("should_retry") is False:
                return _escalate(failure, policy, "rule 4 (retryable): the server said not to "
                                 "retry (x-should-retry: false)",
                                 (*hints, Hint.SERVER_SAID_NO_RETRY), budget)
            value = metadata.get("retry_after_s")
            if (value is not None and (value.__class__ is float or value.__class__ is int)
                    and value >= 0):  # a negative (or NaN) delay is no server delay
                # beyond any float (only a record built around FrozenDict's bounds): infinite
                server = float(value) if value <= _FLOAT_MAX else _INF
        attempt = history.attempts + 1
        if attempt >= bounds.max_attempts:
            return _escalate(failure, policy, f"rule 4 (retryable): attempt {attempt} of "
                             f"{bounds.max_attempts} for operation class "
                             f"{history.operation!r} failed; no attempts left", hints, budget,
                             server)
        backoff = bounds.initial_delay_s * bounds.multiplier ** (attempt - 1 if attempt < 64
                                                                 else 64)
        if backoff > bounds.max_delay_s:  # noqa: PLR1730 - cheaper than min() on the hot path
            backoff = bounds.max_delay_s
        delay = rand() * backoff
        if server is not None:
            if server > policy.retry_after_ceiling_s:
                return _escalate(failure, policy, f"rule 4 (retryable): the server asked to wait "
                                 f"{server:g} s, above the {policy.retry_after_ceiling_s:g} s "
                                 "ceiling; failing fast", (*hints, Hint.SERVER_DELAY_REFUSED),
                                 budget, server)
            if server > delay:  # noqa: PLR1730 - cheaper than max() on the hot path
                delay = server
        started = history.started_at
        if started is not None and clock() + delay - started > bounds.deadline_s:
            return _escalate(failure, policy, f"rule 4 (retryable): waiting {delay:.3g} s would "
                             f"pass the {bounds.deadline_s:g} s deadline of operation class "
                             f"{history.operation!r}", (*hints, Hint.DEADLINE_EXCEEDED), budget,
                             server)
        cost = policy.budget.retry_cost
        tokens = budget.tokens
        if tokens < cost:
            return _escalate(failure, policy, f"rule 4 (retryable): the retry budget is exhausted "
                             f"({tokens:g} of {budget.capacity:g} tokens left, a retry costs "
                             f"{cost:g})", (*hints, Hint.RETRY_BUDGET_EXHAUSTED), budget, server)
        return Decision(_A.RETRY, delay, _OWNER[kind],
                        policy._fallback_outcome if kind in _FALLBACK_KINDS else _O.FAILED,
                        _RETRY_AFTER_BACKOFF if server is None else _RETRY_AFTER_SERVER,
                        _R.RETRYABLE, hints, Budget(tokens - cost, budget.capacity), server)
    owner = _OWNER[kind]
    # rule 5
    if retryability is _AFTER_CHANGE:
        if changed:
            what = ", ".join(sorted(history.changes))
            return Decision(_A.RETRY, 0.0, owner, _O.FAILED,
                            f"rule 5 (retryable after change): retry, since {what} changed",
                            _R.RETRYABLE_AFTER_CHANGE, hints, budget)
        return Decision(_A.RETRY_AFTER_CHANGE, 0.0, owner, _stop_outcome(failure, policy),
                        "rule 5 (retryable after change): nothing changed since the failure; "
                        f"routed to the owner ({owner}) to change something first",
                        _R.RETRYABLE_AFTER_CHANGE, hints, budget)
    # rule 6
    if retryability is _NOT_RETRYABLE:
        if category is Category.USER:
            return Decision(_A.BLOCK, 0.0, owner, _O.BLOCKED,
                            "rule 6 (not retryable, user): paused until the user acts; "
                            "retrying would fail identically", _R.NOT_RETRYABLE, hints, budget)
        return Decision(_A.BLOCK, 0.0, owner, _O.BLOCKED,
                        f"rule 6 (not retryable, {category.value}): blocked until someone acts",
                        _R.NOT_RETRYABLE, hints, budget)
    # rule 7
    if n == 0 and history.attempts + 1 < bounds.max_attempts:
        return Decision(_A.RETRY, 0.0, Route.DEBUGGER, _O.FAILED,
                        "rule 7 (unknown): first occurrence; diagnose with the debugger and "
                        "retry once", _R.UNKNOWN, hints, budget)
    return Decision(_A.ESCALATE, 0.0, owner, _stop_outcome(failure, policy),
                    "rule 7 (unknown): an unclassified failure again; escalated to the owner "
                    f"({owner})", _R.UNKNOWN, hints, budget)


# ---------------------------------------------------------------------------------------------
# the shared budget and the no-progress monitor: the two stateful pieces, kept out of decide


class SharedBudget:
    """A retry budget shared by every call of a session or process (thread- and task-safe).

    The retry helpers read :attr:`state`, call :func:`decide` and store the spent budget under
    a lock, so concurrent calls never spend the same tokens twice.
    """

    __slots__ = ("_lock", "policy", "state")

    def __init__(self, policy: Policy = DEFAULT_POLICY, state: Budget | None = None) -> None:
        self.policy = policy
        self.state = state if state is not None else Budget.full(policy)
        self._lock = threading.Lock()

    def decide(self, failure: Failure, history: History, policy: Policy,
               clock: Callable[[], float], rand: Callable[[], float]) -> Decision:
        """:func:`decide` against this budget, storing the spent state."""
        with self._lock:
            decision = decide(failure, history, policy, self.state, clock, rand)
            self.state = decision.budget
        return decision

    def refund(self) -> None:
        """Record a success (tokens back, up to capacity)."""
        state = self.state
        if state.tokens < state.capacity:
            with self._lock:
                self.state = self.state.refunded(self.policy)

    def reset(self) -> None:
        """Fill the bucket again."""
        with self._lock:
            self.state = Budget.full(self.policy)


class StuckReport(msgspec.Struct, frozen=True):
    """Why :class:`NoProgressMonitor` calls the session stuck."""

    signal: str
    """``repeated_signature``, ``rejected_actions`` or ``no_matches``."""
    count: int
    threshold: int
    reason: str


class NoProgressMonitor:
    """Counts the no-progress signals of a session and says when it is stuck.

    Feed it every Failure, :class:`~failcode.RejectedAction` and :class:`~failcode.NoMatch`
    (other values are ignored) with :meth:`observe`; call :meth:`progress` when the session makes
    progress (a step succeeded), which clears the counts. Not thread-safe: one per session.
    """

    __slots__ = ("_no_matches", "_rejected", "_signatures", "thresholds")

    def __init__(self, policy: Policy = DEFAULT_POLICY) -> None:
        self.thresholds = policy.monitor
        self._signatures: dict[str, int] = {}
        self._rejected = 0
        self._no_matches = 0

    def observe(self, item: object) -> StuckReport | None:
        """Count ``item``; return a report when a threshold is now reached, else None."""
        if isinstance(item, RejectedAction):
            self._rejected += 1
        elif isinstance(item, NoMatch):
            self._no_matches += 1
        else:
            signature = getattr(item, "signature", None)
            if isinstance(signature, str):
                self._signatures[signature] = self._signatures.get(signature, 0) + 1
        return self.stuck

    def progress(self) -> None:
        """The session made progress: clear every count."""
        self._signatures.clear()
        self._rejected = 0
        self._no_matches = 0

    @property
    def counts(self) -> Mapping[str, int]:
        """The current counts: the most repeated signature, rejected actions, no-matches."""
        top = max(self._signatures.values(), default=0)
        return MappingProxyType({"repeated_signature": top, "rejected_actions": self._rejected,
                                 "no_matches": self._no_matches})

    @property
    def stuck(self) -> StuckReport | None:
        """A report naming the first threshold reached, or None while progress is possible."""
        limits = self.thresholds
        top = max(self._signatures.values(), default=0)
        if top >= limits.signature_repeats:
            return StuckReport("repeated_signature", top, limits.signature_repeats,
                               f"the same failure signature occurred {top} times without "
                               "progress")
        if self._rejected >= limits.rejected_actions:
            return StuckReport("rejected_actions", self._rejected, limits.rejected_actions,
                               f"{self._rejected} proposed actions were rejected without "
                               "progress")
        if self._no_matches >= limits.no_matches:
            return StuckReport("no_matches", self._no_matches, limits.no_matches,
                               f"{self._no_matches} probes found nothing without progress")
        return None
