"""Run the installed `failcode` console script (the entry point users run), not `python -m`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

SCRIPT = shutil.which("failcode", path=str(Path(sys.executable).parent)) or "failcode"
"""The console script of the environment running the tests."""


def failcode(*args: str, cwd: Path | None = None, stdin: str | None = None,
             env: dict[str, str] | None = None, timeout: float = 120,
             ) -> subprocess.CompletedProcess[str]:
    """Run `failcode ARGS` as a real process, output captured (so: not a terminal)."""
    environment = {**os.environ, **(env or {})}
    environment.pop("FORCE_COLOR", None)
    return subprocess.run([SCRIPT, *args], cwd=cwd, input=stdin, capture_output=True, text=True,
                          check=False, timeout=timeout, env=environment)
