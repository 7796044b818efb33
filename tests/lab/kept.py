"""Logs a lab run keeps beside its session files, and the steps any log gives.

An agent whose stdout is a log format of its own (Claude Code's, Gemini CLI's ``stream-json``,
Codex's ``exec --json``) keeps it as ``meta.json``'s ``stdout``; OpenCode keeps its database as
``meta.json``'s ``databases``. The tests that score those logs and compare them step by step
with the session files of the same run share what is here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from failcode.triage._events import Command, RecordedOutcome, Rejected
from failcode.triage.readers import HEAD_BYTES, detect
from tests.lab.score import fixtures

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from failcode.triage._events import Event
    from tests.lab.score import Fixture


def kept_logs(agent: str, key: str = "stdout") -> list[tuple[Fixture, Path]]:
    """Each fixture of ``agent`` with the log it keeps under ``meta.json``'s ``key``
    (``stdout``: one file name; ``databases``: a list of them); at least one."""
    found: list[tuple[Fixture, Path]] = []
    for fixture in fixtures():
        if fixture.agent != agent:
            continue
        names = fixture.meta.get(key) or []
        found += [(fixture, fixture.path / name)
                  for name in ([names] if isinstance(names, str) else names)]
    assert found, f"no {agent} fixture keeps its {key}: python -m tests.lab run -a {agent}"
    return found


def _events(path: Path) -> Iterator[Event]:
    reader = detect(path.read_bytes()[:HEAD_BYTES])
    assert reader is not None, path
    read_path = getattr(reader, "read_path", None)
    if read_path is not None:  # a database, read by path
        yield from read_path(path, str(path))
        return
    with path.open("rb") as stream:
        yield from reader.read(stream, str(path))


def log_steps(path: Path) -> list[tuple[Any, ...]]:
    """``(step, kind, ...)`` of each command, rejection and outcome a log gives, in order."""
    out: list[tuple[Any, ...]] = []
    for event in _events(path):
        if isinstance(event, Command):
            out.append((event.step, "command", event.command, event.exit_code, event.timed_out))
        elif isinstance(event, Rejected):
            out.append((event.step, "rejected", event.action))
        elif isinstance(event, RecordedOutcome):
            out.append((event.step, type(event.outcome).__name__))
    return out


def session_steps(fixture: Fixture) -> list[tuple[Any, ...]]:
    """:func:`log_steps` of the run's session files, one after another."""
    return [step for name in fixture.meta["files"] for step in log_steps(fixture.path / name)]
