"""Interleaved timing for benchmarks that compare candidates in the same run.

Candidates run in rounds (A B C, then B C A, ...), so machine noise hits every
candidate alike and order effects cancel. Report the median per candidate and
compute ratios per round, not as a ratio of medians.
"""

from __future__ import annotations

import statistics
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


def interleaved(
    candidates: dict[str, Callable[[], object]], rounds: int, *, warmup: int = 1
) -> dict[str, list[float]]:
    """Time each candidate once per round, rotating the order every round.

    Args:
        candidates: name -> zero-argument callable doing one unit of work.
        rounds: how many timed rounds to run (>= 1).
        warmup: untimed rounds run first (caches, imports, lazy compiles).

    Returns:
        name -> wall-clock seconds of each timed round, in round order.
    """
    names = list(candidates)
    for _ in range(warmup):
        for name in names:
            candidates[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            t0 = time.perf_counter()
            candidates[name]()
            times[name].append(time.perf_counter() - t0)
    return times


def median_ratio(times: dict[str, list[float]], name: str, ref: str) -> float:
    """Median over rounds of ``times[name][i] / times[ref][i]``."""
    return statistics.median(a / b for a, b in zip(times[name], times[ref], strict=True))
