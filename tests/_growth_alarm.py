"""Growth ratios for linear-time tests: never an absolute time, always large against small.

The hostile-input suite's variant: a fixed bound, the large call interrupted by an alarm
(``tests/_growth.py`` scales its bound by a reference scan instead).

A linear pass over 16 times the input costs about 16 times as much; a quadratic one 256 times.
:func:`growth` times both sizes in the same process (best of a few rounds, each call repeated
until it takes a measurable time), so machine load hits both alike, in this process's CPU
time (:func:`time.process_time`): time spent waiting while other processes run is not counted.
"""

from __future__ import annotations

import gc
import math
import signal
import time
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

T = TypeVar("T")

KIB64 = 64 * 1024
MIB = 1024 * 1024
KIB4 = 4 * 1024
LIMIT = 32.0
"""The most a 16x larger input may cost, relative to the smaller one. A linear pass costs ~16x
(measured 13-28x on a loaded 2-core machine, once the large input outgrows the CPU caches),
n log n ~20x, a quadratic one ~256x: the bound keeps 8 to 1 between linear and quadratic."""


def fill(unit: str, size: int) -> str:
    """``unit`` repeated whole to at most ``size`` characters (at least once)."""
    return unit * max(1, size // len(unit))


def _per_call(call: Callable[[], object], floor: float = 0.02) -> float:
    repeats = 1
    while True:
        start = time.process_time()
        for _ in range(repeats):
            call()
        elapsed = time.process_time() - start
        if elapsed >= floor or repeats >= 1 << 12:
            return elapsed / repeats
        repeats *= 4


class _TooSlowError(Exception):
    pass


def _on_alarm(_signum: int, _frame: object) -> None:
    raise _TooSlowError


RETRIES = 3
"""Measurements more of a growth over :data:`LIMIT` (the lowest counts)."""


def growth(function: Callable[[T], object], small: T, large: T, rounds: int = 3) -> float:
    """How many times more ``function(large)`` costs than ``function(small)``.

    Each round times the small call, then the large one, each repeated until it has cost a
    measurable time; the best of each over the rounds gives the ratio. Interleaved, a burst of
    load from another process (the other test worker beside this one) meets both sizes, not
    only the large calls of one short window. The large call is interrupted (SIGALRM, where the
    platform has it) once it has cost 50 times the limit, or 10 s, whichever is more; the ratio
    is then ``inf``, so a quadratic pass fails in seconds rather than minutes. A ratio over
    :data:`LIMIT` is measured again, up to :data:`RETRIES` times, and the lowest counts: load
    only ever adds time, so one measurement within the bound shows linear growth, while a
    quadratic pass (about 256x) is over it every time. One remeasurement was not enough: an
    idle CI run's deep step, its two workers side by side, measured a linear redaction run
    (16x alone) at 33x twice.
    """
    function(small)  # warm caches and lazy compiles
    gc.collect()
    gc.disable()  # the collector's pauses depend on the heap, not on the function measured
    try:
        ratio = _growth(function, small, large, rounds)
        for _ in range(RETRIES):
            if not LIMIT < ratio < math.inf:
                break
            ratio = min(ratio, _growth(function, small, large, rounds))
        return ratio
    finally:
        gc.enable()


def _growth(function: Callable[[T], object], small: T, large: T, rounds: int) -> float:
    small_costs: list[float] = []
    large_costs: list[float] = []
    for _ in range(rounds):
        small_costs.append(_per_call(lambda: function(small)))
        budget = max(10.0, min(small_costs) * LIMIT * 50)
        large_cost = _large_cost(function, large, budget)
        if large_cost == math.inf:
            return math.inf
        large_costs.append(large_cost)
    return min(large_costs) / min(small_costs)


def _large_cost(function: Callable[[T], object], large: T, budget: float) -> float:
    """One large measurement, or ``inf`` when it runs past ``budget`` seconds."""
    if not hasattr(signal, "setitimer"):
        return _per_call(lambda: function(large))
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, budget)
        return _per_call(lambda: function(large))
    except _TooSlowError:
        return math.inf
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
