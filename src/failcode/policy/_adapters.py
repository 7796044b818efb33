"""Adapters: tenacity and stamina users keep their retry loop and get failcode's decision.

* tenacity: ``tenacity.Retrying(**tenacity_strategies("provider"), reraise=True)`` — a
  ``retry=``/``wait=``/``stop=`` trio built from :func:`~failcode.decide`. ``retry`` decides
  (storing the Decision on tenacity's RetryCallState), ``wait`` returns its delay and ``stop``
  agrees with it. Keep ``reraise=True`` so the caller catches the original exception type.
* stamina: ``stamina.retry(on=hook, attempts=..., timeout=None)`` with ``hook =
  stamina_hook("provider")`` — stamina's ``on=`` predicate returning failcode's backoff (a float)
  or False. stamina's predicate sees only the exception, so the attempt history lives in a
  context variable: run each call inside ``with hook.scope():`` or decorate with
  ``hook.retry(...)``, which does it for you. Without a scope, every failure is decided as a
  first failure and stamina's own ``attempts`` bounds the loop.

Neither library is imported by these functions: tenacity calls plain callables and stamina
accepts any callable as ``on``; :meth:`StaminaHook.retry` imports stamina when called.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import random
import time
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar, cast

from failcode.policy._decide import DEFAULT_POLICY, Action, History, Policy, SharedBudget
from failcode.policy._retry import TESTING, classify_exception, shared_budget

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from failcode.policy._decide import Decision
    from failcode.record._failure import Failure

__all__ = ["StaminaHook", "stamina_hook", "tenacity_strategies"]

F = TypeVar("F", bound="Callable[..., Any]")
_HISTORY_ATTR = "_failcode_history"
_DECISION_ATTR = "_failcode_decision"


def tenacity_strategies(
    operation: str = "default",
    *,
    policy: Policy | None = None,
    budget: SharedBudget | None = None,
    on_failure: Callable[[Failure, Decision], object] | None = None,
    surface: str | None = None,
    critical: bool = True,
    rand: Callable[[], float] = random.random,
) -> dict[str, Callable[[Any], Any]]:
    """``retry=``, ``wait=`` and ``stop=`` for ``tenacity.Retrying`` (or ``@tenacity.retry``).

    The history starts at tenacity's ``start_time`` (``time.monotonic``), so the operation
    class's deadline applies. In failcode's test mode the wait is 0.

    Returns:
        ``{"retry": ..., "wait": ..., "stop": ...}``, to pass as keyword arguments.
    """
    chosen = policy if policy is not None else DEFAULT_POLICY
    shared = budget if budget is not None else shared_budget(chosen)

    def retry(state: Any) -> bool:
        outcome = state.outcome
        if outcome is None or not outcome.failed:
            shared.refund()
            return False
        exc = outcome.exception()
        if not isinstance(exc, Exception):
            return False
        failure = classify_exception(exc, surface)
        if failure is None:
            return False
        history: History = getattr(state, _HISTORY_ATTR, None) or History(
            operation, critical, state.start_time)
        decision = shared.decide(failure, history, chosen, time.monotonic, rand)
        setattr(state, _DECISION_ATTR, decision)
        setattr(state, _HISTORY_ATTR, history.after(failure))
        if on_failure:
            on_failure(failure, decision)
        return decision.action is Action.RETRY

    def wait(state: Any) -> float:
        decision: Decision | None = getattr(state, _DECISION_ATTR, None)
        if decision is None or TESTING.on:
            return 0.0
        return decision.delay_s

    def stop(state: Any) -> bool:
        decision: Decision | None = getattr(state, _DECISION_ATTR, None)
        return decision is None or decision.action is not Action.RETRY

    return {"retry": retry, "wait": wait, "stop": stop}


_stamina_history: ContextVar[History | None] = ContextVar("failcode_stamina_history",
                                                          default=None)


class StaminaHook:
    """stamina's ``on=`` predicate deciding with failcode; see :func:`stamina_hook`."""

    __slots__ = ("budget", "critical", "on_failure", "operation", "policy", "rand", "surface")

    def __init__(self, operation: str, policy: Policy, budget: SharedBudget, *,
                 on_failure: Callable[[Failure, Decision], object] | None,
                 surface: str | None, critical: bool, rand: Callable[[], float]) -> None:
        self.operation = operation
        self.policy = policy
        self.budget = budget
        self.on_failure = on_failure
        self.surface = surface
        self.critical = critical
        self.rand = rand

    def __call__(self, exc: Exception) -> bool | float:
        """The backoff in seconds when failcode says retry, else False."""
        failure = classify_exception(exc, self.surface)
        if failure is None:
            return False
        current = _stamina_history.get()
        history = current or History(self.operation, self.critical, time.monotonic())
        decision = self.budget.decide(failure, history, self.policy, time.monotonic, self.rand)
        if current is not None:  # inside a scope: remember; outside: each failure is a first
            _stamina_history.set(history.after(failure))
        if self.on_failure:
            self.on_failure(failure, decision)
        if decision.action is not Action.RETRY:
            return False
        return decision.delay_s

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        """One operation: a fresh attempt history for the stamina loop run inside."""
        token = _stamina_history.set(History(self.operation, self.critical, time.monotonic()))
        try:
            yield
        finally:
            _stamina_history.reset(token)

    def retry(self, **stamina_kwargs: Any) -> Callable[[F], F]:
        """``stamina.retry(on=self, ...)`` with a fresh history per call.

        failcode decides when to stop, so ``attempts`` defaults to 100 and ``timeout`` to None
        (stamina's own bounds stay as a backstop when given).
        """
        import stamina  # noqa: PLC0415 - optional dependency, imported when used

        stamina_kwargs.setdefault("attempts", 100)
        stamina_kwargs.setdefault("timeout", None)

        def decorate(fn: F) -> F:
            inner = stamina.retry(on=self, **stamina_kwargs)(fn)
            if inspect.iscoroutinefunction(fn):
                @functools.wraps(fn)
                async def run_async(*args: Any, **kwargs: Any) -> Any:
                    with self.scope():
                        return await inner(*args, **kwargs)
                return cast("F", run_async)

            @functools.wraps(fn)
            def run(*args: Any, **kwargs: Any) -> Any:
                with self.scope():
                    return inner(*args, **kwargs)
            return cast("F", run)

        return decorate


def stamina_hook(
    operation: str = "default",
    *,
    policy: Policy | None = None,
    budget: SharedBudget | None = None,
    on_failure: Callable[[Failure, Decision], object] | None = None,
    surface: str | None = None,
    critical: bool = True,
    rand: Callable[[], float] = random.random,
) -> StaminaHook:
    """A stamina ``on=`` predicate returning failcode's backoff (or False to stop).

    Returns:
        A :class:`StaminaHook`; use ``hook.retry(...)`` as a decorator, or pass ``on=hook`` to
        ``stamina.retry``/``stamina.retry_context`` inside ``with hook.scope():``.
    """
    chosen = policy if policy is not None else DEFAULT_POLICY
    return StaminaHook(operation, chosen,
                       budget if budget is not None else shared_budget(chosen),
                       on_failure=on_failure, surface=surface, critical=critical, rand=rand)
