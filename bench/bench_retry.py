"""Benchmark: failcode's retry helper overhead against tenacity, and decide() alone.

One command: ``python bench/bench_retry.py`` (options: ``--rounds N --n N``).

Targets (issue 5), all measured in the same run, interleaved:

* per failed attempt, the helper's own overhead <= 0.15x tenacity's per-attempt overhead. The
  wrapped function raises a FailureError carrying a prebuilt Failure (pre-classified, so no
  classification is timed) 3 times, then returns; time per attempt = time per call / 4. The
  peer is a reused ``tenacity.Retrying`` with ``wait_exponential_jitter``, retrying on the same
  exception, with sleep stubbed (as in the baseline bench_c_retry.py). Both include the raise.
* on a call that succeeds first time, <= 0.1x tenacity.
* ``decide`` alone (a retryable failure, rule 4 with jitter and budget) <= 2 us per call.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tenacity

from _timing import interleaved, median_ratio
from failcode import FC, FailureError
from failcode.policy._decide import (
    Budget,
    BudgetPolicy,
    History,
    Policy,
    RetryClass,
    SharedBudget,
    decide,
)
from failcode.policy._retry import retry

FAILS = 3
MAX = 10
FAILURE = FC.PROV_SERVER_ERROR.failure(surface="llm.complete", params={"provider": "OpenAI"},
                                       metadata={"http_status": 503})
POLICY = Policy(classes={"bench": RetryClass(max_attempts=MAX, initial_delay_s=0.1,
                                             max_delay_s=5.0, deadline_s=1e9)},
                budget=BudgetPolicy(capacity=1e18, retry_cost=1.0))


def no_sleep(_: float) -> None:
    """The stubbed sleep."""


class Flaky:
    """Raises the prebuilt FailureError ``n`` times, then returns."""

    __slots__ = ("i", "n")

    def __init__(self, n: int) -> None:
        self.n = n
        self.i = 0

    def __call__(self) -> int:
        self.i += 1
        if self.i <= self.n:
            raise FailureError(FAILURE)
        return 42


def candidates(fails: int, n: int) -> dict[str, Any]:
    """Name -> zero-argument callable running ``n`` calls of ``fails`` failures each."""
    helper = retry("bench", policy=POLICY, budget=SharedBudget(POLICY), sleep=no_sleep)
    wrapped = helper(lambda f: f())
    peer = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(MAX),
        wait=tenacity.wait_exponential_jitter(initial=0.1, max=5),
        retry=tenacity.retry_if_exception_type(FailureError), reraise=True, sleep=no_sleep)

    def run_failcode() -> None:
        call = wrapped
        for _ in range(n):
            call(Flaky(fails))

    def run_tenacity() -> None:
        call = peer
        for _ in range(n):
            call(Flaky(fails))

    def run_bare() -> None:
        for _ in range(n):
            f = Flaky(fails)
            for _ in range(MAX):
                try:
                    f()
                    break
                except FailureError:
                    continue

    return {"failcode": run_failcode, "tenacity [peer]": run_tenacity,
            "bare try/except loop [floor]": run_bare}


def bench_decide(n: int, rounds: int) -> float:
    """Median us per decide() call for a retryable failure with jitter and budget."""
    history = History(operation="bench", started_at=0.0)
    budget = Budget.full(POLICY)
    clock = time.monotonic
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            decide(FAILURE, history, POLICY, budget, clock=clock)
        times.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(times)


def main() -> int:
    """Run every measurement; exit 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--n", type=int, default=3000)
    args = parser.parse_args()
    ok = True
    for fails, target in ((FAILS, 0.15), (0, 0.10)):
        cands = candidates(fails, args.n)
        times = interleaved(cands, args.rounds)
        attempts = fails + 1
        label = f"fails {fails}x then succeeds" if fails else "succeeds first time"
        print(f"\n## {label} ({attempts} attempt(s) per call), median of {args.rounds} rounds")
        for name, ts in times.items():
            per = statistics.median(ts) / args.n / attempts * 1e6
            ratio = median_ratio(times, name, "tenacity [peer]")
            print(f"  {name:32s} {per:8.2f} us/attempt   {ratio:5.3f}x tenacity")
        ratio = median_ratio(times, "failcode", "tenacity [peer]")
        verdict = "ok" if ratio <= target else "MISSED"
        ok &= ratio <= target
        print(f"  target failcode <= {target}x tenacity: {ratio:.3f}x {verdict}")
    per_decide = bench_decide(args.n * 10, args.rounds)
    verdict = "ok" if per_decide <= 2.0 else "MISSED"
    ok &= per_decide <= 2.0
    print(f"\n## decide() alone: {per_decide:.2f} us/call (target <= 2 us) {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
