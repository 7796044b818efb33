"""Test configuration shared by every test module."""

from __future__ import annotations

import os
import random

from hypothesis import HealthCheck, settings

# The machines are shared and noisy: Hypothesis' per-example deadline is a timing assertion.
settings.register_profile("failcode", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("failcode"), derandomize=True,
                          print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "failcode")

# Invariants that must hold for every input (idempotency, never raising) also explore in CI:
# tests marked @EXPLORE run with a seed that varies per run, printed in the header so a failure
# replays with FAILCODE_HYPOTHESIS_SEED=<seed>, and a larger example budget.
EXPLORE_SEED = int(os.environ.get("FAILCODE_HYPOTHESIS_SEED")
                   or random.SystemRandom().randrange(2**32))
settings.register_profile("explore", parent=settings.get_profile("failcode"), derandomize=False,
                          max_examples=1000, print_blob=True)


def pytest_report_header() -> str:
    """Print the explore seed so any failure can be replayed."""
    return (f"hypothesis explore seed: {EXPLORE_SEED} "
            f"(replay: FAILCODE_HYPOTHESIS_SEED={EXPLORE_SEED})")
