"""Growth ratios for linear-time tests: never an absolute time, always large against small.

A linear pass over 16 times the input costs about 16 times as much; a quadratic one 256 times.
:func:`growth` times both sizes in the same process (best of a few rounds, each call repeated
until it takes a measurable time), so machine load hits both alike.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

KIB64 = 64 * 1024
MIB = 1024 * 1024
KIB4 = 4 * 1024
LIMIT = 20.0
"""The most a 16x larger input may cost, relative to the smaller one (linear: ~16x)."""


def fill(unit: str, size: int) -> str:
    """``unit`` repeated whole to at most ``size`` characters (at least once)."""
    return unit * max(1, size // len(unit))


def _per_call(call: Callable[[], object], floor: float = 0.02) -> float:
    repeats = 1
    while True:
        start = time.perf_counter()
        for _ in range(repeats):
            call()
        elapsed = time.perf_counter() - start
        if elapsed >= floor or repeats >= 1 << 12:
            return elapsed / repeats
        repeats *= 4


def growth(function: Callable[[str], object], small: str, large: str, rounds: int = 3) -> float:
    """How many times more ``function(large)`` costs than ``function(small)`` (best of rounds)."""
    function(small)  # warm caches and lazy compiles
    small_cost = min(_per_call(lambda: function(small)) for _ in range(rounds))
    large_cost = min(_per_call(lambda: function(large), floor=0.0) for _ in range(rounds))
    return large_cost / small_cost
