"""OpenHands' own v0 event models as the oracle for failcode's v0 reading (issue 32).

On every v0 event array and ``output.jsonl`` of both real corpora (the lab's OpenHands is V1),
``openhands-ai`` 0.62.0 (the last release with ``openhands.events``; the lab's oracle,
``tests/lab/oracles.toml``) parses every event with ``event_from_dict``, and failcode reads the
same sessions and steps: one per observation that answers an action, numbered alike; every
command failcode reads at a step is the models' ``CmdOutputObservation`` there, with the same
command and ``exit_code`` (-1: still running, or timed out when the note says so); every
non-zero ``exit_code`` the models read is a command failcode reads.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests._needs import missing
from tests.lab.oracles import oracles
from tests.triage._data import session_files, sessions_2_dir, sessions_dir
from tests.triage.oracles._failcode_side import read_sessions, reader_name
from tests.triage.oracles._lab_python import HERE

if TYPE_CHECKING:
    from pathlib import Path

    from tests.triage.oracles._failcode_side import Session


def _v0_files() -> list[Path]:
    """OpenHands files that hold v0 events: event arrays and output records."""
    found = []
    for root in (sessions_dir(), sessions_2_dir()):
        for path in session_files(root):
            if reader_name(path) != "openhands":
                continue
            with path.open("rb") as stream:
                head = stream.read(4096).lstrip()
            if head.startswith(b"[") or (head.startswith(b"{") and b'"instance_id"' in head):
                found.append(path)
    assert len(found) >= 2, found
    return found


def _mismatches(path: Path, theirs: list[dict[str, Any]]) -> list[str]:
    ours: list[Session] = read_sessions(path, "openhands")
    if len(ours) != len(theirs):
        return [f"{path}: {len(ours)} sessions, the models read {len(theirs)}"]
    out: list[str] = []
    for mine, session in zip(ours, theirs, strict=True):
        steps = session["steps"]
        where = f"{path} session {mine.name}"
        if mine.steps != len(steps):
            out.append(f"{where}: {mine.steps} steps, the models read {len(steps)}")
            continue
        read = {c.step for c in mine.commands}
        for command in mine.commands:
            if command.step is None:
                continue
            step = steps[command.step]
            code = -1 if command.timed_out else command.exit_code
            if step["observation"] != "CmdOutputObservation":
                continue  # an IPython cell's traceback: a command of another observation
            if (command.command, code) != (step["command"], step["exit_code"]):
                out.append(f"{where} step {command.step}: {command.command!r} exit "
                           f"{command.exit_code}, the models' {step['command']!r} exit "
                           f"{step['exit_code']}")
        for number, step in enumerate(steps):
            if step["exit_code"] not in (None, 0) and number not in read:
                out.append(f"{where} step {number}: the models read exit {step['exit_code']} "
                           f"of {step['command']!r}, failcode reads nothing")
    return out


def test_openhands_v0_reads_the_steps_openhands_reads() -> None:
    oracle = oracles()["openhands-ai"]
    if not oracle.installed():
        missing(f"the lab's openhands-ai {oracle.version} oracle is not installed "
                "(python -m tests.lab install)")
    files = _v0_files()
    result = json.loads(oracle.run(HERE / "openhands_v0_events.py", *map(str, files)))
    assert result["openhands-ai"] == oracle.version
    mismatches = [m for path in files for m in _mismatches(path, result[str(path)])]
    assert not mismatches, "\n".join(mismatches)
