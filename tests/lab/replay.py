"""Ground truth by construction: run a scenario's commands without any agent.

Each ``run`` step goes through ``bash -c`` in a fresh copy of the scenario's project, in
order, in the environment the agents' commands get (:func:`tests.lab.agents.tool_env`), under
``timeout`` when the step sets one. The tests compare what happened with the scenario's
``exit`` and ``output``, so a scenario whose stated truth is wrong fails before any agent runs.
A ``refused`` step runs in a copy of the project, which it cannot change: in the agents' runs
it never runs.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tests.lab.agents import tool_env
from tests.lab.runner import prepare_project

if TYPE_CHECKING:
    from tests.lab.scenario import Scenario


@dataclass(frozen=True, slots=True)
class Replayed:
    """One command as it ran: its exit status and whether it printed anything."""

    command: str
    exit: int
    output: bool
    text: str


def replay(scenario: Scenario) -> list[Replayed]:
    """Run every ``run`` step of ``scenario`` in a temporary project, in order; ``edit``
    steps change the files between them as the agent's edit tool does (an edit whose ``old``
    text is not in the file is refused and changes nothing). ``scenario.obeyed()`` replays
    what a model that follows failcode's instructions runs."""
    out = []
    with tempfile.TemporaryDirectory(prefix="failcode-lab-replay-") as raw:
        root = Path(raw)
        (root / "home").mkdir()
        (root / "tmp").mkdir()
        (root / "home" / ".gitconfig").write_text(
            "[user]\n\tname = lab\n\temail = lab@example.invalid\n[init]\n\tdefaultBranch = main\n")
        prepare_project(scenario, root / "project")
        env = tool_env(root / "home", root / "tmp")
        for step in scenario.steps:
            if step.action == "edit":
                target = root / "project" / step.path
                text = target.read_text() if target.exists() else ""
                if step.old in text:
                    target.write_text(text.replace(step.old, step.new, 1))
                continue
            if step.action != "run":
                continue
            argv = ["bash", "-c", step.command]
            if step.timeout_s is not None:
                argv = ["timeout", str(step.timeout_s), *argv]
            cwd = root / "project"
            if step.refused:  # it never runs in the agents' runs: its truth on a copy
                cwd = root / "refused"
                shutil.rmtree(cwd, ignore_errors=True)
                shutil.copytree(root / "project", cwd, symlinks=True)
            done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True,
                                  text=True, check=False, timeout=300)
            text = done.stdout + done.stderr
            out.append(Replayed(step.command, done.returncode, bool(text.strip()), text))
    return out
