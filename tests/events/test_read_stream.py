"""read_events on a binary stream: the same events and problems as on the file."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from failcode import FC
from failcode.events import EventProblem, failure_event, read_events, write_events

if TYPE_CHECKING:
    from pathlib import Path


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "events.jsonl"
    failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})
    write_events(path, [failure_event(failure, event="command.failed", session="s", step=i)
                        for i in range(3)])
    data = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(data[0] + b'{"version": 1, "event": "command.fai\n' + b"".join(data[1:]))
    return path


def test_a_stream_reads_like_the_file(tmp_path: Path) -> None:
    """Reading the bytes from a stream yields the events and the problem the path does."""
    path = _file(tmp_path)
    from_path = list(read_events(path, name="x"))
    from_stream = list(read_events(io.BytesIO(path.read_bytes()), name="x"))
    assert from_stream == from_path
    assert [item.line for item in from_stream if isinstance(item, EventProblem)] == [2]


def test_a_stream_problem_names_the_given_name(tmp_path: Path) -> None:
    """A bad line of a stream is reported under the name given, with its line number."""
    items = list(read_events(io.BytesIO(_file(tmp_path).read_bytes()), name="run-7.jsonl"))
    problem = next(item for item in items if isinstance(item, EventProblem))
    assert (problem.file, problem.line) == ("run-7.jsonl", 2)
    assert problem.failure().code == "FC-STORE-008"
