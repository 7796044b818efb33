"""One command, one failure: the API, ``failcode run`` and triage agree.

For every failing command of the lab's scenarios, run for real in a fresh project by
``failcode run --json`` (no ``--purpose``), the API (:func:`failcode.from_command` without a
purpose) over the same command, status and output, and triage over a trajectory holding that
step give the same kind and the same signature. A session file names no working directory,
so triage is compared with the API given none (a location outside the command's folder is
then not known), ``failcode run`` with the API given the folder it ran in.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from failcode import Failure, from_command
from failcode.triage import triage
from tests.lab.agents import tool_env
from tests.lab.runner import prepare_project
from tests.lab.scenario import load_all
from tests.lab.test_scenarios import _needs

if TYPE_CHECKING:
    from tests.lab.scenario import Scenario

SCENARIOS = [s for s in load_all() if any(
    step.action == "run" and step.exit not in (0, None) for step in s.steps)]


def _run_all(scenario: Scenario, root: Path) -> list[tuple[str, dict[str, Any], str]]:
    """Each run step through ``failcode run --json -- bash -c CMD``, in order: the command,
    failcode's JSON document and the command's own output (stdout and stderr as it came)."""
    (root / "home").mkdir()
    (root / "tmp").mkdir()
    (root / "home" / ".gitconfig").write_text(
        "[user]\n\tname = lab\n\temail = lab@example.invalid\n[init]\n\tdefaultBranch = main\n")
    prepare_project(scenario, root / "project")
    env = tool_env(root / "home", root / "tmp")
    ran = []
    for step in scenario.steps:
        if step.action == "edit":
            target = root / "project" / step.path
            text = target.read_text() if target.exists() else ""
            if step.old in text:
                target.write_text(text.replace(step.old, step.new, 1))
            continue
        if step.action != "run" or step.timeout_s is not None:
            continue
        done = subprocess.run([sys.executable, "-m", "failcode", "run", "--json", "--", "bash",
                               "-c", step.command], cwd=root / "project", env=env,
                              capture_output=True, text=True, check=False, timeout=300)
        ran.append((step.command, json.loads(done.stdout), done.stderr))
    return ran


def _trajectory(path: Path, command: str, code: int, output: str) -> Path:
    """A mini-swe-agent 2 trajectory of one step."""
    messages = [{"role": "system", "content": "x"},
                {"role": "assistant", "content": "", "tool_calls": [{
                    "id": "c0", "function": {"name": "bash",
                                             "arguments": json.dumps({"command": command})}}]},
                {"role": "tool", "tool_call_id": "c0",
                 "content": f"<returncode>{code}</returncode><output>{output}</output>",
                 "extra": {"returncode": code, "raw_output": output}}]
    path.write_text(json.dumps({"info": {"exit_status": "Submitted", "mini_version": "2"},
                                "messages": messages, "instance_id": "demo",
                                "trajectory_format": "mini-swe-agent-1.1"}))
    return path


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_run_api_and_triage_give_one_kind_and_signature(scenario: Scenario) -> None:
    """Every failing command: ``failcode run``, ``from_command`` and triage agree."""
    _needs(scenario)
    with tempfile.TemporaryDirectory(prefix="failcode-consistency-") as raw:
        root = Path(raw)
        disagreements = []
        for command, document, output in _run_all(scenario, root):
            if document["result"] != "failure":
                continue
            code = document["returncode"]
            run = (document["failure"]["kind"], document["failure"]["signature"])
            api = from_command(command, code, "", output, cwd=root / "project")
            # a session file names no working directory: triage is the API without one
            blind = from_command(command, code, "", output)
            assert isinstance(api, Failure), (command, api)
            assert isinstance(blind, Failure), (command, blind)
            session = triage([_trajectory(root / "s.traj.json", command, code, output)]
                             ).sessions[0]
            failures = [(str(e.failure.kind), e.failure.signature) for e in session.failures]
            if not (run == (str(api.kind), api.signature)
                    and failures == [(str(blind.kind), blind.signature)]
                    and blind.kind == api.kind):
                disagreements.append((command, run, (str(api.kind), api.signature), failures))
        assert not disagreements, disagreements
