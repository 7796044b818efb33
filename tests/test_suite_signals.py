"""The suite sees the signal dispositions a terminal gives, whatever started it: run from a
shell's background job (SIGINT and SIGQUIT ignored, and inherited as ignored by every command
a test starts), a command that interrupts itself is still interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parents[1]


def _ignore_like_a_background_job() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGQUIT, signal.SIG_IGN)


def test_a_suite_started_with_sigint_ignored_still_sees_commands_interrupted() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/classification/test_command_tools.py", "-k", "interrupted"],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False, env=env,
        preexec_fn=_ignore_like_a_background_job)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "2 passed" in done.stdout
