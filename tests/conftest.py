"""Test configuration shared by every test module."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# The machines are shared and noisy: Hypothesis' per-example deadline is a timing assertion.
settings.register_profile("failcode", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("failcode"), derandomize=True,
                          print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "failcode")

DEEP_EXAMPLES = int(os.environ.get("FAILCODE_DEEP_EXAMPLES", "2000"))
"""Examples of a property test marked ``deep``: CI runs those in their own job
(``pytest -m deep``) so the derandomized default profile's 100 fixed examples are not all a
property ever sees."""
