"""The JSONL sink and reader under faults (issue 36, item 9): a line nested too deep, a
byte-order mark, eight processes appending to one file, a write cut short by a full disk.

Every test runs real parts: real files, real child processes appending at once, a real file
size limit (RLIMIT_FSIZE) standing in for a full disk.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

import pytest

from failcode.events import Event, EventProblem, JsonlSink, read_events
from tests.events.test_sink_reliability import ENV, REPO, _events

if TYPE_CHECKING:
    from pathlib import Path


def _split(items: list[Event | EventProblem]) -> tuple[list[Event], list[EventProblem]]:
    return ([item for item in items if isinstance(item, Event)],
            [item for item in items if isinstance(item, EventProblem)])


# ---------------------------------------------------------------------------------------------
# reading


@pytest.mark.parametrize("deep", [
    b'{"version": 1, "event": "x", "params": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5001,
    b'{"a": ' * 5000 + b"1" + b"}" * 5000,
])
@pytest.mark.parametrize("last", [False, True])
def test_a_line_nested_too_deep_is_that_lines_problem(tmp_path: Path, deep: bytes,
                                                      last: bool) -> None:
    """JSON nested thousands of levels deep is one ``malformed`` problem naming its line (never
    a RecursionError); the lines around it are read, from a file and from a stream."""
    good = _events(2)
    lines = [good[0].to_json(), deep] if last else [good[0].to_json(), deep, good[1].to_json()]
    data = b"\n".join(lines) + (b"" if last else b"\n")
    path = tmp_path / "events.jsonl"
    path.write_bytes(data)
    for items in (list(read_events(path)), list(read_events(io.BytesIO(data)))):
        found, problems = _split(items)
        assert found == good[:1] if last else good
        assert [(p.line, p.kind) for p in problems] == [(2, "malformed")]
        assert problems[0].failure().code == "FC-STORE-008"


def test_a_byte_order_mark_before_the_first_line_is_skipped(tmp_path: Path) -> None:
    """A UTF-8 byte-order mark before line 1 (as some editors save) is no part of the event;
    one anywhere else is still that line's problem."""
    good = _events(3)
    path = tmp_path / "events.jsonl"
    bom = b"\xef\xbb\xbf"
    path.write_bytes(bom + good[0].to_json() + b"\n" + good[1].to_json() + b"\n"
                     + bom + good[2].to_json() + b"\n")
    found, problems = _split(list(read_events(path)))
    assert found == good[:2]
    assert [(p.line, p.kind) for p in problems] == [(3, "malformed")]
    path.write_bytes(bom + good[0].to_json())  # one line, no newline: still an event
    assert list(read_events(path)) == good[:1]


# ---------------------------------------------------------------------------------------------
# eight writers at once

_WRITER = """
    import sys
    from failcode import FC
    from failcode.events import JsonlSink, failure_event
    path, session, buffer, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})
    print("ready", flush=True)
    sys.stdin.readline()  # every writer starts at once
    with JsonlSink(path, buffer=buffer) as sink:
        for step in range(count):
            sink.emit(failure_event(failure, event="command.failed", session=session,
                                    step=step))
"""


@pytest.mark.parametrize("buffer", [1, 7])
def test_eight_processes_appending_to_one_file_tear_no_line(tmp_path: Path,
                                                            buffer: int) -> None:
    """Eight processes, each with its own JsonlSink on one file, append 1,500 events each at
    once: every line of the file is one whole event (no torn line, no blank line), none is
    lost and none doubled."""
    path = tmp_path / "events.jsonl"
    count = 1500
    children = [subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_WRITER), str(path), f"w{k}", str(buffer),
         str(count)], cwd=REPO, env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True) for k in range(8)]
    for child in children:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    for child in children:
        _, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
    lines = path.read_bytes().split(b"\n")
    assert lines.pop() == b""  # the file ends with a newline
    assert len(lines) == 8 * count
    decoded = [json.loads(line) for line in lines]  # every line whole, no blank one
    assert sorted((d["session"], d["step"]) for d in decoded) == sorted(
        (f"w{k}", step) for k in range(8) for step in range(count))
    found, problems = _split(list(read_events(path)))
    assert problems == []
    assert len(found) == 8 * count


# ---------------------------------------------------------------------------------------------
# a write cut short by a full disk

_LIMITED = """
    import os, resource, signal, sys
    from failcode import FC, FailureError
    from failcode.events import JsonlSink, failure_event
    path, retry = sys.argv[1], sys.argv[2] == "retry"
    failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})
    def events(n, start):
        return [failure_event(failure, event="command.failed", session="s", step=start + i)
                for i in range(n)]
    sink = JsonlSink(path, buffer=100_000)
    for event in events(10, 0):
        sink.emit(event)
    sink.flush()
    size = os.path.getsize(path)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 3000, hard))  # room for a few lines
    for event in events(40, 10):
        sink.emit(event)
    try:
        sink.flush()
    except FailureError as exc:
        print(exc.failure.code, flush=True)
    data = open(path, "rb").read()
    print("whole" if data.endswith(b"\\n") else "torn", len(data) - size, flush=True)
    if not retry:
        os._exit(0)  # the process dies with its batch (a kill -9): nothing more is written
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # the disk is freed
    sink.close()
    print("closed", flush=True)
"""


@pytest.mark.parametrize("retry", [False, True])
def test_a_write_cut_short_by_a_full_disk_leaves_no_half_line(tmp_path: Path,
                                                              retry: bool) -> None:
    """A flush that fills the disk (a file size limit, SIGXFSZ ignored) in the middle of its
    batch raises FC-STORE-006 and leaves the file ending with its last whole line: no half
    line is left behind. When the process dies then, the next writer's events follow the
    last whole line and a reader sees no bad line; when the same sink retries once the disk
    is freed, every event is in the file exactly once."""
    if not hasattr(os, "fork"):  # resource limits are POSIX
        pytest.skip("RLIMIT_FSIZE is POSIX only")
    path = tmp_path / "events.jsonl"
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_LIMITED), str(path),
         "retry" if retry else "die"], cwd=REPO, env=ENV, capture_output=True, text=True,
        timeout=120, check=False)
    assert child.returncode == 0, child.stderr
    out = child.stdout.splitlines()
    assert out[0] == "FC-STORE-006"
    state, grown = out[1].split()
    assert (state, grown) == ("whole", "0")  # nothing of the failed batch is left
    if retry:
        assert out[2] == "closed"
        found, problems = _split(list(read_events(path)))
        assert problems == []
        assert [(e.session, e.step) for e in found] == [("s", step) for step in range(50)]
        return
    later = _events(3, session="later")
    with JsonlSink(path) as sink:  # the next writer, once the disk is freed
        for event in later:
            sink.emit(event)
    found, problems = _split(list(read_events(path)))
    assert problems == []
    assert [(e.session, e.step) for e in found] == [("s", step) for step in range(10)] + [
        ("later", step) for step in range(3)]
    assert b"\n\n" not in path.read_bytes()
