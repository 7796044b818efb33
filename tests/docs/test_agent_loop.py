"""examples/agent_loop.py runs end to end: each step's failure is classified and decided."""

from __future__ import annotations

import subprocess
import sys

from tests._paths import REPO


def test_agent_loop_example_runs() -> None:
    """The loop meets a no-match, a missing program, failing tests and a rate limit, and ends
    with every step succeeded after the recorded changes and the honoured server delay."""
    result = subprocess.run([sys.executable, str(REPO / "examples" / "agent_loop.py")],
                            capture_output=True, text=True, check=False, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    # the scenario fixes what must happen: grep finds nothing in a fresh project, the linter
    # does not exist, the test script fails on the planted bug, the stub answers 429 once
    expected_in_order = [
        "[probe] nothing found by grep",
        "[lint] FC-CMD-001 command_not_found: retry_after_change",
        "[lint] changed command:",
        "[lint] ok:",
        "[test] FC-TEST-",
        "[test] changed workspace:",
        "[test] ok:",
        "[model] FC-PROV-003 rate_limit: retry",
        "[model] ok: The tests pass now.",
        "done: 4 of 4 steps succeeded",
    ]
    position = 0
    for wanted in expected_in_order:
        found = next((i for i in range(position, len(lines)) if lines[i].startswith(wanted)),
                     None)
        assert found is not None, f"{wanted!r} not found after line {position}:\n{result.stdout}"
        position = found + 1
    assert "(the server asked for 0.2 s)" in result.stdout  # retry-after-ms: 200 was read
