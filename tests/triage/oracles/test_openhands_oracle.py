"""The OpenHands SDK's own event models as the oracle for failcode's V1 reading (issue 32).

On every OpenHands V1 conversation folder there is (the lab's fixtures: neither real corpus
holds one), the SDK's ``EventLog`` (run from the lab's pinned OpenHands, ``openhands-sdk``)
parses every event file, and failcode reads the same steps: one per tool result the SDK
yields, numbered alike; every command failcode reads at a step is the SDK's terminal
observation there, with the same command and ``exit_code`` (-1: still running, or timed
out when the SDK's note says so); every
non-zero ``exit_code`` the SDK records is a command failcode reads (or its timeout); a refusal
failcode reads is the SDK's ``UserRejectObservation``, ``AgentErrorEvent`` or an observation
marked ``is_error``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from failcode.triage._events import Command, ErrorText, Rejected
from failcode.triage.analysis._analyze import is_conversation
from tests.lab.runner import FIXTURES
from tests.triage._data import sessions_2_dir, sessions_dir
from tests.triage.oracles._failcode_side import read_sessions
from tests.triage.oracles._lab_python import run_oracle

if TYPE_CHECKING:
    from pathlib import Path

_REFUSALS = frozenset({"UserRejectObservation", "AgentErrorEvent"})


def _folders() -> list[Path]:
    roots = [sessions_dir(), sessions_2_dir(), FIXTURES / "openhands"]
    found = sorted(path for root in roots for path in root.rglob("*")
                   if path.is_dir() and is_conversation(path))
    assert len(found) >= 30, found  # one per lab scenario
    return found


def _mismatches(folder: Path, sdk: list[dict[str, Any]]) -> list[str]:
    sessions = read_sessions(folder, "openhands")
    assert len(sessions) == 1, sessions
    mine = sessions[0]
    where = str(folder)
    if mine.steps != len(sdk):
        return [f"{where}: {mine.steps} steps, the SDK yields {len(sdk)} tool results"]
    out: list[str] = []
    read = {e.step for e in mine.events if isinstance(e, Command | Rejected | ErrorText)}
    for event in mine.events:
        step = getattr(event, "step", None)
        if step is None or isinstance(event, ErrorText):
            continue
        theirs = sdk[step]
        if isinstance(event, Command):
            # a timeout: the SDK's ``timeout``, or -1 with the note that the command timed out
            expected = -1 if event.timed_out and not theirs["timeout"] else event.exit_code
            if theirs["observation"] != "TerminalObservation":
                out.append(f"{where} step {step}: a command, the SDK's {theirs['kind']}")
            elif event.command != theirs["command"] or (
                    not theirs["timeout"] and expected != theirs["exit_code"]):
                out.append(f"{where} step {step}: {event.command!r} exit {event.exit_code}, "
                           f"the SDK's {theirs['command']!r} exit {theirs['exit_code']}")
        elif isinstance(event, Rejected) and not (
                theirs["kind"] in _REFUSALS or theirs["is_error"]):
            out.append(f"{where} step {step}: refused, the SDK's {theirs['kind']} is no refusal")
    for step, theirs in enumerate(sdk):
        if theirs["exit_code"] not in (None, 0) and step not in read:
            out.append(f"{where} step {step}: the SDK records exit {theirs['exit_code']} of "
                       f"{theirs['command']!r}, failcode reads nothing")
        if theirs["kind"] in _REFUSALS and step not in read:
            out.append(f"{where} step {step}: the SDK's {theirs['kind']}, failcode reads nothing")
    return out


def test_openhands_reads_the_steps_the_sdk_reads() -> None:
    folders = _folders()
    oracle = run_oracle("openhands", "openhands_events.py", folders)
    mismatches = [m for folder in folders
                  for m in _mismatches(folder, oracle[str(folder)]["steps"])]
    assert not mismatches, "\n".join(mismatches)
