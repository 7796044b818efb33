"""aider's own history parser as the oracle for failcode's aider reader (issue 32, item 2).

On every aider chat history of both real corpora and the lab's fixtures, each session's steps
are aider's own user messages (``aider.utils.split_chat_history_markdown``, run from the lab's
pinned aider): the same number of steps per session, and every command failcode reads (a
``/run``, ``!`` or ``/test`` input, an automatic lint's ``## Running:`` line) stands in the
messages of that step. Aider records no exit status but older aider's ``Command 'CMD' exited
with status N`` (there, the same command and status in that step's messages): any other
status failcode gives comes from the output, so there is none to compare.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from tests.lab.agents import agents
from tests.lab.runner import FIXTURES
from tests.triage._data import session_files, sessions_2_dir, sessions_dir
from tests.triage.oracles._failcode_side import read_sessions, reader_name
from tests.triage.oracles._lab_python import run_oracle

if TYPE_CHECKING:
    from pathlib import Path

_RUN = re.compile(r"^(?:/(?:run|test)\s+|!)(?P<cmd>.+?)\s*$")
_TEST_CMD = "aider --test-cmd"


def _aider_files() -> list[Path]:
    roots = [sessions_dir(), sessions_2_dir(), FIXTURES / "aider"]
    files = [path for root in roots for path in session_files(root)
             if reader_name(path) == "aider"]
    assert len(files) >= 20, files  # 2 + 9 real histories and the lab's
    return files


def _steps(messages: list[dict[str, str]]) -> list[list[dict[str, str]]]:
    """Aider's messages by step: a user message and what follows it up to the next."""
    steps: list[list[dict[str, str]]] = []
    for message in messages:
        if message["role"] == "user":
            steps.append([])
        if steps:
            steps[-1].append(message)
    return steps


def _user_text(step: list[dict[str, str]]) -> str:
    return "\n".join(line.strip() for line in step[0]["content"].splitlines())


def _mismatches(path: Path, sessions: list[dict[str, Any]]) -> list[str]:
    ours = read_sessions(path, "aider")
    out: list[str] = []
    if len(ours) != len(sessions):
        return [f"{path}: {len(ours)} sessions, aider's headings give {len(sessions)}"]
    for mine, theirs in zip(ours, sessions, strict=True):
        steps = _steps(theirs["messages"])
        where = f"{path} session {mine.name}"
        if theirs["heading"] is not None and mine.name != theirs["heading"]:
            out.append(f"{where}: named {mine.name!r}, aider's heading {theirs['heading']!r}")
        if mine.steps != len(steps):
            out.append(f"{where}: {mine.steps} steps, aider reads {len(steps)} user messages")
            continue
        for command in mine.commands:
            if command.step is None or command.command == _TEST_CMD:
                continue
            step = steps[command.step]
            text = _user_text(step)
            found = _RUN.match(text.split("\n", 1)[0])
            shown = "\n".join(m["content"] for m in step)
            if f"Command '{command.command}' exited with status {command.exit_code}" in shown:
                continue  # the status older aider logged for a command it ran
            if command.purpose == "static_analysis":
                if f"## Running: {command.command}" not in shown:
                    out.append(f"{where} step {command.step}: lint {command.command!r} "
                               f"not in aider's messages of that step")
            elif found is None or found.group("cmd") != command.command:
                out.append(f"{where} step {command.step}: command {command.command!r}, "
                           f"aider's input {text[:80]!r}")
    return out


def test_aider_reads_the_steps_aider_reads() -> None:
    files = _aider_files()
    oracle = run_oracle("aider", "aider_history.py", files)
    assert oracle["aider"] == agents()["aider"].version
    mismatches = [m for path in files for m in _mismatches(path, oracle[str(path)])]
    assert not mismatches, "\n".join(mismatches)
