"""Running a script with an agent's own code: the lab's pinned install of that agent."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests._needs import missing
from tests.lab.agents import agents

HERE = Path(__file__).resolve().parent


def agent_python(name: str) -> Path:
    """The Python of the lab's install of agent ``name`` (``python -m tests.lab install``);
    a missing install fails under CI=true, else skips."""
    agent = agents()[name]
    if not agent.installed():
        missing(f"the lab's {name} {agent.version} is not installed (python -m tests.lab install)")
    return agent.install_dir / "bin" / "python"


def run_oracle(name: str, script: str, paths: list[Path]) -> dict[str, Any]:
    """What ``script`` (a file beside this one, run with the agent's Python) prints for
    ``paths``: one JSON object keyed by each path as given."""
    done = subprocess.run([str(agent_python(name)), str(HERE / script), *map(str, paths)],
                          capture_output=True, text=True, check=False, timeout=900)
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout)  # type: ignore[no-any-return]
