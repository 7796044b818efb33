"""Did the fix work, in the lab: a scenario before and after failcode's instruction is applied.

Each agent runs ``missing-program`` :data:`RUNS` times; ``failcode triage --fix-file FILE
--apply`` writes the instruction for what those sessions hit into the agent's own instruction
file (CLAUDE.md, AGENTS.md, GEMINI.md), committed to a git repository; the agent runs the
scenario :data:`RUNS` times more with that file in its project. The agent sends the file with
its requests, as it does for any project; the scripted model, told to obey, plays the step's
``instead`` when a request carries failcode's block with the instruction's words (and the
step itself otherwise, as in the runs before). Then ``failcode triage BEFORE AFTER
--changed-at FILE`` must find the finding gone after the file's commit, by more than noise.

What this proves is the chain, with real agents: triage's finding, the instruction's words,
the file written where the agent reads it, the agent carrying it to the model, and the
comparison split at the file's commit. A real model's obedience is not what it measures.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Any, Final

import pytest

from tests._needs import missing
from tests.lab.agents import agents
from tests.lab.runner import run
from tests.lab.scenario import SCENARIOS, load
from tests.lab.stub import OBEYING

if TYPE_CHECKING:
    from pathlib import Path

    from tests.lab.agents import Launch, RunContext

INSTRUCTION_FILES: Final = {"claude-code": "CLAUDE.md", "codex": "AGENTS.md",
                            "gemini-cli": "GEMINI.md"}
"""Each agent's own instruction file in a project (its documentation's name)."""
RUNS: Final = 3
"""Sessions on each side: 3 of 3 against 0 of 3 is beyond noise by the comparison's rule."""
SCENARIO: Final = "missing-program"
CODE: Final = "FC-CMD-001"


def _triage(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "failcode", "triage", *args, "--no-cache"],
                          capture_output=True, text=True, check=False, cwd=cwd,
                          env={**os.environ, "NO_COLOR": "1"})


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=lab", "-c", "user.email=lab@example.invalid",
                    *args], cwd=repo, check=True, capture_output=True)


def _sessions(name: str, tmp_path: Path, label: str, *, instructions: Path | None,
              ) -> tuple[list[str], list[list[dict[str, Any]]]]:
    """The session files of :data:`RUNS` runs, and what the stub answered in each."""
    agent = agents()[name]
    scenario = load(SCENARIOS / f"{SCENARIO}.toml")

    def prepare(ctx: RunContext, launch: Launch) -> None:
        del launch
        if instructions is not None:
            shutil.copy(instructions, ctx.project / instructions.name)

    files: list[str] = []
    logs = []
    for number in range(RUNS):
        result, ctx = run(agent, scenario, keep=tmp_path / f"{label}-{number}", obey=True,
                          prepare=prepare)
        if result.skipped:
            missing(f"{name}: {result.skipped}")
        assert ctx is not None
        assert not result.timed_out, result.stderr[-2000:]
        assert result.files, result.stderr[-2000:]
        files += [str(path) for path in result.files]
        logs.append(result.log)
    return files, logs


def _played(log: list[dict[str, Any]]) -> list[str]:
    """The texts the stub answered when it played the scenario's first step (its first 60
    characters, as the log keeps them)."""
    return [entry["text"] for entry in log if entry.get("plays") == 0]


@pytest.mark.parametrize("name", sorted(INSTRUCTION_FILES))
def test_a_finding_is_gone_after_its_instruction_is_applied(name: str, tmp_path: Path) -> None:
    agent = agents()[name]
    if not agent.installed():
        missing(f"{name} {agent.version} is not installed (python -m tests.lab install)")
    before, before_logs = _sessions(name, tmp_path, "before", instructions=None)
    found = json.loads(_triage(*before, "--json").stdout)
    assert [f["sessions"] for f in found["findings"] if f["code"] == CODE] == [RUNS]

    repo = tmp_path / "project"
    repo.mkdir()
    _git(repo, "init", "-q")
    instructions = repo / INSTRUCTION_FILES[name]
    wrote = _triage(*before, "--fix-file", str(instructions), "--apply")
    assert wrote.returncode == 0, wrote.stderr
    text = instructions.read_text()
    assert "<!-- failcode:begin -->" in text
    assert "`nonexistent-tool` is not installed or not on PATH here" in text
    _git(repo, "add", instructions.name)
    _git(repo, "commit", "-q", "-m", "failcode's instructions")

    after, after_logs = _sessions(name, tmp_path, "after", instructions=instructions)
    # the model obeyed in every run after, only there: where the agent carried the file to it
    for log in before_logs:
        assert _played(log)
        assert not any(OBEYING in text for text in _played(log))
    for log in after_logs:
        assert _played(log)
        assert all(OBEYING in text for text in _played(log))
    found = json.loads(_triage(*after, "--json").stdout)
    assert [f for f in found["findings"] if f["code"] == CODE] == []

    compared = _triage(*before, *after, "--changed-at", str(instructions), "--json")
    assert compared.returncode == 0, compared.stderr
    comparison = json.loads(compared.stdout)["comparison"]
    assert f"the last commit of {instructions.name}" in comparison["title"]
    assert (comparison["baseline_sessions"], comparison["new_sessions"]) == (RUNS, RUNS)
    [change] = [c for c in comparison["changes"] if c["code"] == CODE]
    assert change["status"] == "gone"
    assert change["significant"] is True
    terminal = _triage(*before, *after, "--changed-at", str(instructions)).stdout
    assert "gone" in terminal
