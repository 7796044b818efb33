"""Retry helpers, failcode.testing and the tenacity/stamina adapters (the real libraries)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from failcode import (
    FC,
    Action,
    BudgetPolicy,
    Decision,
    Failure,
    FailureError,
    Policy,
    RetryClass,
    SharedBudget,
    decision_of,
    retry,
    retrying,
    stamina_hook,
    tenacity_strategies,
)
from failcode.testing import is_testing, set_testing
from tests._needs import need_module

POLICY = Policy(classes={"fast": RetryClass(max_attempts=4, initial_delay_s=0.5,
                                            max_delay_s=2.0)})
TIMEOUT = FC.OS_TIMEOUT.failure(surface="dev.read", params={"operation": "read"})
BAD = FC.DATA_INVALID_INPUT.failure(surface="dev.read", params={"problem": "x"})


class Flaky:
    """Fails with ``exc`` ``times`` times, then returns 42."""

    def __init__(self, times: int, exc: BaseException) -> None:
        self.times = times
        self.exc = exc
        self.calls = 0

    def __call__(self) -> int:
        self.calls += 1
        if self.calls <= self.times:
            raise self.exc
        return 42


def helper(**kwargs: Any) -> Any:
    """A retry helper with a private budget and a recording sleep."""
    slept: list[float] = []
    kwargs.setdefault("budget", SharedBudget(POLICY))
    return retry("fast", policy=POLICY, sleep=slept.append, **kwargs), slept


def test_decorator_retries_then_returns() -> None:
    """A retryable failure is retried after the decided delays, then the result returns."""
    rt, slept = helper()
    flaky = Flaky(2, FailureError(TIMEOUT))
    assert rt(flaky)() == 42
    assert flaky.calls == 3
    assert len(slept) == 2
    assert all(0 <= s <= 2.0 for s in slept)


def test_decorator_stops_at_the_class_bound_and_reraises_the_original() -> None:
    """After the bound, the original exception (type, object) propagates with its decision."""
    rt, _ = helper()
    original = ConnectionResetError("peer reset")
    cause = FailureError(TIMEOUT)
    original.__cause__ = cause

    def always() -> None:
        raise FailureError(TIMEOUT) from original

    with pytest.raises(FailureError) as caught:
        rt(always)()
    found = decision_of(caught.value)
    assert found is not None
    assert found[1].action is not Action.RETRY
    assert caught.value.__cause__ is original
    assert any("failcode: [FC-OS-006]" in note for note in caught.value.__notes__)


def test_original_exception_type_can_be_caught() -> None:
    """A non-failcode exception is re-raised as itself, so the caller's except still matches."""
    rt, _ = helper(classify=lambda exc, surface: BAD)
    with pytest.raises(KeyError, match="missing"):
        rt(Flaky(5, KeyError("missing")))()


def test_wrap_raises_failure_error_from_the_original() -> None:
    """wrap=True raises FailureError with the original exception as __cause__."""
    rt, _ = helper(classify=lambda exc, surface: BAD, wrap=True)
    with pytest.raises(FailureError) as caught:
        rt(Flaky(5, KeyError("missing")))()
    assert isinstance(caught.value.__cause__, KeyError)
    assert caught.value.failure.code == BAD.code
    assert decision_of(caught.value) is not None


def test_on_failure_hook_sees_every_failed_attempt() -> None:
    """on_failure(failure, decision) is called once per failed attempt."""
    seen: list[tuple[Failure, Decision]] = []
    rt, _ = helper(on_failure=lambda f, d: seen.append((f, d)))
    rt(Flaky(3, FailureError(TIMEOUT)))()
    assert [d.action for _, d in seen] == [Action.RETRY] * 3
    assert all(f.code == TIMEOUT.code for f, _ in seen)


def test_not_retryable_stops_at_once() -> None:
    """A not-retryable failure is not retried."""
    rt, slept = helper()
    flaky = Flaky(1, FailureError(BAD))
    with pytest.raises(FailureError):
        rt(flaky)()
    assert (flaky.calls, slept) == (1, [])


def test_keyboard_interrupt_is_never_caught() -> None:
    """BaseException outside Exception (KeyboardInterrupt) goes straight through."""
    rt, _ = helper()
    flaky = Flaky(1, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        rt(flaky)()
    assert flaky.calls == 1


def test_budget_is_shared_between_helpers() -> None:
    """Two helpers sharing a budget stop retrying once it is spent."""
    policy = Policy(classes=POLICY.classes, budget=BudgetPolicy(capacity=10, retry_cost=5))
    shared = SharedBudget(policy)
    first = retry("fast", policy=policy, budget=shared, sleep=lambda s: None)
    second = retry("fast", policy=policy, budget=shared, sleep=lambda s: None)
    assert first(Flaky(2, FailureError(TIMEOUT)))() == 42
    flaky = Flaky(2, FailureError(TIMEOUT))
    with pytest.raises(FailureError) as caught:
        second(flaky)()
    assert flaky.calls == 1
    found = decision_of(caught.value)
    assert found is not None
    assert "budget" in found[1].reason


def test_attempt_loop_sync() -> None:
    """for attempt in retrying(...): with attempt: retries like the decorator."""
    slept: list[float] = []
    flaky = Flaky(2, FailureError(TIMEOUT))
    for attempt in retrying("fast", policy=POLICY, budget=SharedBudget(POLICY),
                            sleep=slept.append):
        with attempt:
            result = flaky()
    assert (result, flaky.calls, len(slept), attempt.number) == (42, 3, 2, 3)


def test_attempt_loop_sync_reraises_when_stopping() -> None:
    """The loop lets the original exception through when the decision is to stop."""
    flaky = Flaky(9, FailureError(BAD))

    def loop() -> None:
        for attempt in retrying("fast", policy=POLICY, budget=SharedBudget(POLICY)):
            with attempt:
                flaky()

    with pytest.raises(FailureError):
        loop()
    assert flaky.calls == 1


def test_async_decorator_and_loop_share_the_core() -> None:
    """The async decorator and async loop retry with the async sleep."""
    slept: list[float] = []

    async def asleep(delay: float) -> None:
        slept.append(delay)

    async def run() -> tuple[int, int]:
        calls = {"n": 0}

        @retry("fast", policy=POLICY, budget=SharedBudget(POLICY), asleep=asleep)
        async def fetch() -> int:
            calls["n"] += 1
            if calls["n"] < 3:
                raise FailureError(TIMEOUT)
            return 7

        value = await fetch()
        flaky = Flaky(1, FailureError(TIMEOUT))
        async for attempt in retrying("fast", policy=POLICY, budget=SharedBudget(POLICY),
                                      asleep=asleep):
            with attempt:
                value += flaky()
        return value, calls["n"]

    assert asyncio.run(run()) == (49, 3)
    assert len(slept) == 3


def test_async_cancellation_is_not_retried() -> None:
    """asyncio.CancelledError passes through the async helper untouched."""
    rt, _ = helper()

    async def cancelled() -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(rt(cancelled)())


def test_testing_mode_never_sleeps_and_caps_attempts() -> None:
    """set_testing(True, attempts=2): two attempts, no sleep; the context form restores."""
    rt, slept = helper()
    flaky = Flaky(5, FailureError(TIMEOUT))
    with set_testing(True, attempts=2):
        assert is_testing()
        with pytest.raises(FailureError):
            rt(flaky)()
    assert not is_testing()
    assert (flaky.calls, slept) == (2, [])


def test_set_testing_rejects_zero_attempts() -> None:
    """attempts must be at least 1."""
    with pytest.raises(ValueError, match="attempts=0"):
        set_testing(True, attempts=0)


# -- adapters, with the real tenacity and stamina ----------------------------------------------

def test_tenacity_trio_follows_the_decision() -> None:
    """tenacity.Retrying with failcode's retry/wait/stop retries retryables, stops at the bound."""
    tenacity = need_module("tenacity")
    slept: list[float] = []
    decisions: list[Decision] = []
    trio = tenacity_strategies("fast", policy=POLICY, budget=SharedBudget(POLICY),
                               on_failure=lambda f, d: decisions.append(d))
    retrying_ = tenacity.Retrying(sleep=slept.append, reraise=True, **trio)
    assert retrying_(Flaky(2, FailureError(TIMEOUT))) == 42
    assert len(slept) == 2
    assert [d.delay_s for d in decisions] == slept
    flaky = Flaky(9, FailureError(TIMEOUT))
    with pytest.raises(FailureError):
        retrying_(flaky)
    assert flaky.calls == 4  # the "fast" class allows 4 attempts
    bad = Flaky(9, FailureError(BAD))
    with pytest.raises(FailureError):
        retrying_(bad)
    assert bad.calls == 1


def test_stamina_hook_follows_the_decision() -> None:
    """stamina.retry(on=hook) retries as failcode decides; the scope keeps the history."""
    stamina = need_module("stamina")
    waits: list[float] = []
    hook = stamina_hook("fast", policy=POLICY, budget=SharedBudget(POLICY),
                        on_failure=lambda f, d: waits.append(d.delay_s))
    with stamina.set_testing(True, attempts=50, cap=True):  # stamina never sleeps in tests
        flaky = Flaky(9, FailureError(TIMEOUT))
        with pytest.raises(FailureError):
            hook.retry(wait_initial=0.01)(flaky)()
        assert flaky.calls == 4
        ok = Flaky(1, FailureError(TIMEOUT))
        assert hook.retry()(ok)() == 42
        bad = Flaky(9, FailureError(BAD))
        with pytest.raises(FailureError):
            hook.retry()(bad)()
        assert bad.calls == 1
    assert len(waits) == 4 + 1 + 1


def test_stamina_hook_returns_the_backoff_as_a_float() -> None:
    """The predicate returns failcode's delay (a float) to retry and False to stop."""
    hook = stamina_hook("fast", policy=POLICY, budget=SharedBudget(POLICY), rand=lambda: 0.5)
    with hook.scope():
        assert hook(FailureError(TIMEOUT)) == pytest.approx(0.25)
        assert hook(FailureError(BAD)) is False
