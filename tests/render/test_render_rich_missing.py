"""render_rich without rich installed fails with the extra to install."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
sys.modules["rich"] = sys.modules["rich.panel"] = sys.modules["rich.text"] = None  # not installed
from failcode import FC, render_rich
failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})
try:
    render_rich(failure)
except ImportError as exc:
    print(exc)
"""


def test_render_rich_without_rich_names_the_extra() -> None:
    """An ImportError that says `pip install 'failcode[rich]'`, not a bare ModuleNotFoundError."""
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                          check=True, timeout=60)
    assert "pip install 'failcode[rich]'" in done.stdout
