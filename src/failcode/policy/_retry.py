"""Retry helpers over :func:`~failcode.decide`: a decorator and an attempt loop, sync and async.

One compiled object, :class:`Retrying`, holds the policy, the operation class, the shared budget
and the hooks; :func:`retry` and :func:`retrying` build it once (at decoration time, never per
call). The decorator, the ``for attempt in ...: with attempt:`` loop and their async forms all
run the same core, :meth:`Retrying._failed`: classify the exception, decide, call the hook, and
either give a delay to sleep or stop.

What the caller sees when the helper stops: the ORIGINAL exception, re-raised with its own type,
traceback and cause chain (so ``except httpx.HTTPStatusError`` keeps working), with a PEP 678
note naming the code and the decision, and the Failure and Decision reachable through
:func:`decision_of`. Pass ``wrap=True`` to get a :class:`~failcode.FailureError` instead, raised
``from`` the original exception.

Exceptions that are not :class:`Exception` (KeyboardInterrupt, asyncio.CancelledError,
SystemExit) are never caught; an exception the classifier maps to a non-error outcome (a
cancellation, say) is re-raised at once without a decision.
"""

from __future__ import annotations

import functools
import inspect
import random
import time
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

from failcode.policy._decide import DEFAULT_POLICY, Action, History, Policy, SharedBudget, decide
from failcode.record._failure import Failure, FailureError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
    from types import TracebackType

    from failcode.policy._decide import Decision

__all__ = [
    "Attempt",
    "Retrying",
    "decision_of",
    "retry",
    "retrying",
    "shared_budget",
]

F = TypeVar("F", bound="Callable[..., Any]")

_RETRY = Action.RETRY
_DECISION_ATTR: Final = "__failcode_decision__"


# ---------------------------------------------------------------------------------------------
# testing mode (failcode.testing sets it): no sleeping, a fixed number of attempts



async def _asyncio_sleep(delay: float) -> None:
    """``asyncio.sleep``, imported on first use: asyncio costs ~25 ms at ``import failcode``."""
    import asyncio  # noqa: PLC0415 - only async callers pay for it

    await asyncio.sleep(delay)

class _TestingState:
    __slots__ = ("attempts", "on")

    def __init__(self) -> None:
        self.on = False
        self.attempts = 1


TESTING: Final = _TestingState()


# ---------------------------------------------------------------------------------------------
# classification: the classification layer when it is there, else a pass-through with SYS_UNKNOWN

_classifier: Callable[[BaseException, str | None], Failure | None] | None = None


def _fallback_classify(exc: BaseException, surface: str | None) -> Failure | None:
    from failcode.codes._catalog import FC  # noqa: PLC0415 - only needed on this path

    if isinstance(exc, FailureError):
        return exc.failure
    return FC.SYS_UNKNOWN.failure(surface=surface or "python.call",
                                  params={"exception": type(exc).__name__}, cause=exc)


def _resolve_classifier() -> Callable[[BaseException, str | None], Failure | None]:
    global _classifier  # noqa: PLW0603 - resolved once, on the first failure
    try:
        from failcode.classification._classify import classify  # noqa: PLC0415 - imported lazily by design
    except ModuleNotFoundError as exc:
        if exc.name != "failcode.classification._classify":
            raise
        _classifier = _fallback_classify
        return _classifier

    def via_classify(exc: BaseException, surface: str | None) -> Failure | None:
        result = classify(exc, surface=surface)
        return result if isinstance(result, Failure) else None

    _classifier = via_classify
    return _classifier


def classify_exception(exc: BaseException, surface: str | None = None) -> Failure | None:
    """The Failure for ``exc`` (a FailureError's own, else the classifier's); None for a
    non-error outcome such as a cancellation."""
    if exc.__class__ is FailureError:
        return exc.failure
    classifier = _classifier or _resolve_classifier()
    return classifier(exc, surface)


# ---------------------------------------------------------------------------------------------
# the shared budgets: one per policy object, process-wide, unless a call passes its own

_budgets: dict[int, tuple[Policy, SharedBudget]] = {}


def shared_budget(policy: Policy = DEFAULT_POLICY) -> SharedBudget:
    """The process-wide retry budget every helper using ``policy`` shares by default."""
    entry = _budgets.get(id(policy))
    if entry is None or entry[0] is not policy:
        entry = (policy, SharedBudget(policy))
        _budgets[id(policy)] = entry
    return entry[1]


def decision_of(exc: BaseException) -> tuple[Failure, Decision] | None:
    """The Failure and the final Decision a retry helper attached to ``exc`` when it stopped.

    Works on the re-raised original exception and on the ``FailureError`` of ``wrap=True``.
    """
    found = getattr(exc, _DECISION_ATTR, None)
    if found is None and isinstance(exc, FailureError) and exc.__cause__ is not None:
        found = getattr(exc.__cause__, _DECISION_ATTR, None)
    return cast("tuple[Failure, Decision] | None", found)


class _Call:
    """The state of one call that failed at least once (allocated on its first failure)."""

    __slots__ = ("delay", "done", "history", "started")

    def __init__(self, started: float) -> None:
        self.started = started
        self.history: History | None = None
        self.delay = 0.0
        self.done = False


class Attempt:
    """One attempt of a ``for attempt in retrying(...)`` loop; use it as ``with attempt:``.

    The same object is yielded for every attempt of a call (no allocation per attempt).
    """

    __slots__ = ("_call", "_core", "number")

    def __init__(self, core: Retrying, call: _Call) -> None:
        self._core = core
        self._call = call
        self.number = 1
        """The attempt's number, from 1."""

    def __enter__(self) -> Attempt:
        return self

    def __exit__(self, typ: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        call = self._call
        if exc is None:
            call.done = True
            self._core._succeeded(call)
            return False
        if not isinstance(exc, Exception):
            call.done = True
            return False
        delay = self._core._failed(call, exc)
        if delay is None:
            call.done = True
            return False  # the original exception propagates
        call.delay = delay
        self.number += 1
        return True


class Retrying:
    """A compiled retry policy: a decorator (sync or async) and an attempt loop, deciding as
    :func:`~failcode.decide` says. :func:`retry` and :func:`retrying` are this class.

    ``@retry("provider")`` above a ``def`` or an ``async def``. The policy is compiled once, here.

    Args:
        operation: the operation class whose bounds apply (``provider``, ``device``...).
        policy: the decision policy (default: failcode's defaults; load yours with
            :func:`failcode.load_config`).
        budget: the retry budget to spend; default: the process-wide one of ``policy``.
        on_failure: called as ``on_failure(failure, decision)`` after every failed attempt.
        surface: passed to the classifier (and used for unclassified failures).
        critical: False marks the path non-critical (see ``Policy.continue_noncritical_defects``).
        wrap: raise a FailureError from the original exception instead of re-raising it.
        classify: ``(exc, surface) -> Failure | None`` replacing failcode's classifier.
        clock: monotonic seconds for the deadline.
        sleep: the sync sleep (tests inject one; :mod:`failcode.testing` turns sleeping off).
        asleep: the async sleep.
        rand: the jitter source, a float in [0, 1) per call.
    """

    __slots__ = ("asleep", "budget", "classify", "clock", "critical", "on_failure", "operation",
                 "policy", "rand", "sleep", "surface", "wrap")

    def __init__(
        self,
        operation: str = "default",
        *,
        policy: Policy | None = None,
        budget: SharedBudget | None = None,
        on_failure: Callable[[Failure, Decision], object] | None = None,
        surface: str | None = None,
        critical: bool = True,
        wrap: bool = False,
        classify: Callable[[BaseException, str | None], Failure | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], object] = time.sleep,
        asleep: Callable[[float], Awaitable[object]] = _asyncio_sleep,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.operation = operation
        self.policy = policy if policy is not None else DEFAULT_POLICY
        self.budget = budget if budget is not None else shared_budget(self.policy)
        self.on_failure = on_failure
        self.surface = surface
        self.critical = critical
        self.wrap = wrap
        self.classify = classify
        self.clock = clock
        self.sleep = sleep
        self.asleep = asleep
        self.rand = rand

    # -- the one core ---------------------------------------------------------------------------

    def _failed(self, call: _Call, exc: Exception) -> float | None:
        """Decide after ``exc``: the delay before the next attempt, or None to stop.

        Raises:
            FailureError: when stopping with ``wrap=True`` (from ``exc``).
        """
        if exc.__class__ is FailureError:
            failure: Failure | None = exc.failure
        elif self.classify is not None:
            failure = self.classify(exc, self.surface)
        else:
            failure = classify_exception(exc, self.surface)
        if failure is None:
            return None  # a non-error outcome (a cancellation...): let it through untouched
        history = call.history
        if history is None:
            history = History(self.operation, self.critical, call.started)
        budget = self.budget
        with budget._lock:  # SharedBudget.decide, inlined: one call less per attempt
            decision = decide(failure, history, self.policy, budget.state, self.clock,
                              self.rand)
            budget.state = decision.budget
        hook = self.on_failure
        if hook:
            hook(failure, decision)
        if decision.action is _RETRY:
            if not TESTING.on:
                call.history = history.after(failure)
                return decision.delay_s
            if history.attempts + 1 < TESTING.attempts:
                call.history = history.after(failure)
                return 0.0
        self._give_up(exc, failure, decision)
        return None

    def _give_up(self, exc: Exception, failure: Failure, decision: Decision) -> None:
        try:
            setattr(exc, _DECISION_ATTR, (failure, decision))
            exc.add_note(f"failcode: [{failure.code}] {decision.action.value}: "
                         f"{decision.reason}")
        except (AttributeError, TypeError):  # pragma: no cover - an exotic exception type
            pass
        if self.wrap:
            raise FailureError(failure) from exc

    def _succeeded(self, call: _Call | None) -> None:
        budget = self.budget
        state = budget.state
        if state.tokens < state.capacity:
            budget.refund()

    # -- decorator ------------------------------------------------------------------------------

    def __call__(self, fn: F) -> F:
        """Wrap ``fn`` (a function or a coroutine function) so failures are retried."""
        if inspect.iscoroutinefunction(fn):
            return cast("F", self._wrap_async(fn))
        return cast("F", self._wrap_sync(fn))

    def _wrap_sync(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        clock = self.clock
        sleep = self.sleep
        failed = self._failed
        budget = self.budget

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            call: _Call | None = None
            started = clock()
            while True:
                try:
                    result = fn(*args, **kwargs)
                except Exception as exc:
                    if call is None:
                        call = _Call(started)
                    delay = failed(call, exc)
                    if delay is None:
                        raise
                    if delay:
                        sleep(delay)
                    continue
                state = budget.state
                if state.tokens < state.capacity:
                    budget.refund()
                return result

        return wrapper

    def _wrap_async(self, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        clock = self.clock
        asleep = self.asleep
        failed = self._failed
        budget = self.budget

        @functools.wraps(fn)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            call: _Call | None = None
            started = clock()
            while True:
                try:
                    result = await fn(*args, **kwargs)
                except Exception as exc:
                    if call is None:
                        call = _Call(started)
                    delay = failed(call, exc)
                    if delay is None:
                        raise
                    if delay:
                        await asleep(delay)
                    continue
                state = budget.state
                if state.tokens < state.capacity:
                    budget.refund()
                return result

        return wrapper

    # -- attempt loops --------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Attempt]:
        """``for attempt in retrying(...): with attempt: ...`` (sleeps with ``sleep``)."""
        call = _Call(self.clock())
        attempt = Attempt(self, call)
        sleep = self.sleep
        while True:
            yield attempt
            if call.done:
                return
            if call.delay:
                sleep(call.delay)
                call.delay = 0.0

    async def __aiter__(self) -> AsyncIterator[Attempt]:
        """``async for attempt in retrying(...): with attempt: ...`` (sleeps with ``asleep``)."""
        call = _Call(self.clock())
        attempt = Attempt(self, call)
        asleep = self.asleep
        while True:
            yield attempt
            if call.done:
                return
            if call.delay:
                await asleep(call.delay)
                call.delay = 0.0


retry = Retrying
"""``@retry("provider")``: build a :class:`Retrying` (see there for the arguments)."""
retrying = retry
"""The same builder, named for the loop form: ``for attempt in retrying("provider"):``."""
