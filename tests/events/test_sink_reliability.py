"""Sinks lose nothing (issue 23, item 9): JsonlSink at exit, after a kill -9, on a full disk and
next to a torn line; read_events racing a writer and on a line longer than its limit.

Every test runs real parts: child processes that exit or are killed, a real tmpfs filled up,
real files appended to by another writer while they are read.
"""

from __future__ import annotations

import errno
import gc
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from failcode import FC, FailureError
from failcode.events import Event, EventProblem, JsonlSink, failure_event, read_events
from failcode.events._sink import MAX_LINE
from tests._needs import missing

if TYPE_CHECKING:
    from collections.abc import Iterator

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}


def _events(count: int, *, session: str = "s", start: int = 0) -> list[Event]:
    failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})
    return [failure_event(failure, event="command.failed", session=session, step=start + i)
            for i in range(count)]


def _read(path: Path) -> tuple[list[Event], list[EventProblem]]:
    items = list(read_events(path))
    return ([item for item in items if isinstance(item, Event)],
            [item for item in items if isinstance(item, EventProblem)])


def _child(code: str) -> subprocess.Popen[str]:
    """A Python child running ``code`` with this failcode, its stdout a pipe."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


_EMIT = """
    import os, signal, sys, time
    from failcode import FC
    from failcode.events import JsonlSink, failure_event
    failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})
    def events(n, start=0):
        return [failure_event(failure, event="command.failed", session="s", step=start + i)
                for i in range(n)]
    sink = JsonlSink(sys.argv[1] if len(sys.argv) > 1 else PATH, buffer=100_000)
"""


# ---------------------------------------------------------------------------------------------
# 1. what a normal exit, a kill -9 and a flush leave in the file


@pytest.mark.parametrize("ending", ["", "sys.exit(3)", "raise RuntimeError('agent crashed')"])
def test_a_normal_exit_writes_what_the_sink_holds(tmp_path: Path, ending: str) -> None:
    """A process that emits into a large buffer and exits without close() (the script ends,
    sys.exit, an uncaught exception) leaves every event in the file."""
    path = tmp_path / "events.jsonl"
    child = _child(f"PATH = {str(path)!r}\n" + textwrap.dedent(_EMIT) + textwrap.dedent(f"""
        for event in events(500):
            sink.emit(event)
        {ending}
    """))
    _, err = child.communicate(timeout=120)
    assert child.returncode == (0 if not ending else 3 if "exit" in ending else 1), err
    found, problems = _read(path)
    assert problems == []
    assert [event.step for event in found] == list(range(500))


def test_a_collected_sink_writes_its_buffer_and_is_not_kept_alive(tmp_path: Path) -> None:
    """The exit hook holds the file, not the sink: a dropped sink is collected, and writes
    its buffer then."""
    path = tmp_path / "events.jsonl"
    sink = JsonlSink(path, buffer=1000)
    written = _events(10)
    for event in written:
        sink.emit(event)
    alive = weakref.ref(sink)
    del sink
    gc.collect()
    assert alive() is None
    assert _read(path) == (written, [])


def test_a_forked_child_does_not_write_its_parents_buffer(tmp_path: Path) -> None:
    """A child forked with events in the buffer exits normally without writing them twice."""
    path = tmp_path / "events.jsonl"
    child = _child(f"PATH = {str(path)!r}\n" + textwrap.dedent(_EMIT) + textwrap.dedent("""
        for event in events(3):
            sink.emit(event)
        pid = os.fork()
        if pid == 0:
            sys.exit(0)  # the child's exit runs the exit hooks it inherited
        os.waitpid(pid, 0)
    """))
    _, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    found, problems = _read(path)
    assert (len(found), problems) == (3, [])


def test_flush_is_seen_from_outside_and_survives_kill_9(tmp_path: Path) -> None:
    """The docstring's promise: once flush() returns, another process reading the file sees
    the events (before any close), and a kill -9 then loses none of them; what was emitted
    after the flush is lost, and nothing else."""
    path = tmp_path / "events.jsonl"
    child = _child(f"PATH = {str(path)!r}\n" + textwrap.dedent(_EMIT) + textwrap.dedent("""
        for event in events(200):
            sink.emit(event)
        sink.flush()
        for event in events(50, start=200):
            sink.emit(event)  # buffered, never flushed
        print("flushed", flush=True)
        time.sleep(120)
    """))
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "flushed\n"
        seen = [json.loads(line)["step"] for line in path.read_text().splitlines()]
        assert seen == list(range(200))  # a plain open() sees the flush at once
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        child.kill()
        child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL
    found, problems = _read(path)
    assert problems == []
    assert [event.step for event in found] == list(range(200))


def test_a_failed_write_at_exit_is_said_on_stderr() -> None:
    """At exit nothing can catch an error: a write that fails then names the file and the
    events it could not write on stderr, in one line, with no traceback."""
    if not Path("/dev/full").exists():
        missing("no /dev/full on this system")
    child = _child("PATH = '/dev/full'\n" + textwrap.dedent(_EMIT) + textwrap.dedent("""
        for event in events(5):
            sink.emit(event)
    """))
    _, err = child.communicate(timeout=120)
    assert child.returncode == 0
    assert ("failcode: 5 events not written at exit: The store /dev/full is full; the batch "
            "was not written. (write: No space left on device (ENOSPC))") in err
    assert "Traceback" not in err


# ---------------------------------------------------------------------------------------------
# 2. a failed write: classified, kept, written once; never a torn line glued to the next


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 64 KiB tmpfs, unmounted afterwards."""
    if os.geteuid() != 0:
        missing("mounting a tmpfs needs root")
    mount = shutil.which("mount")
    umount = shutil.which("umount")
    if mount is None or umount is None:
        missing("mount and umount are not installed")
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run([mount, "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        missing(f"cannot mount a tmpfs: {done.stderr.strip()}")
    try:
        yield disk
    finally:
        gc.collect()  # a sink left open by a failing test closes its file
        if subprocess.run([umount, str(disk)], capture_output=True, check=False).returncode:
            subprocess.run([umount, "-l", str(disk)], capture_output=True, check=False)


def _fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` up, then free ``leave`` bytes; the filler file."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        with pytest.raises(OSError, match="No space left") as caught:  # noqa: PT012 - to full
            while True:
                os.write(fd, b"\0" * 4096)
    finally:
        os.close(fd)
    assert caught.value.errno == errno.ENOSPC
    os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler


def test_a_full_disk_raises_store_006_keeps_the_batch_and_writes_it_once(
        small_disk: Path) -> None:
    """A flush on a full tmpfs raises FC-STORE-006 naming the file and the reason; the batch
    stays buffered (another flush on the full disk neither loses nor doubles it); once space
    is freed the next flush writes every event exactly once, with no malformed line."""
    path = small_disk / "events.jsonl"
    sink = JsonlSink(path, buffer=100_000)
    first = _events(10)
    for event in first:
        sink.emit(event)
    sink.flush()
    filler = _fill(small_disk, leave=8192)  # room for part of the next batch only
    batch = _events(40, start=10)
    for event in batch:
        sink.emit(event)
    with pytest.raises(FailureError) as caught:
        sink.flush()
    failure = caught.value.failure
    assert failure.code == "FC-STORE-006"
    assert path.name in failure.message
    assert failure.detail is not None
    assert "No space left on device (ENOSPC)" in failure.detail
    assert "are kept" in failure.detail
    size = path.stat().st_size
    assert path.read_bytes().endswith(b"\n")  # the first flush's lines; no half line
    with pytest.raises(FailureError):  # still full: nothing more is written, nothing lost
        sink.flush()
    assert path.stat().st_size == size
    # a reader meanwhile: the events written so far, and at most the cut line as unfinished
    found, problems = _read(path)
    assert [event.step for event in found] == list(range(len(found)))
    assert all(problem.kind == "unfinished" for problem in problems)
    with pytest.raises(FailureError) as caught:  # closing fails too, and keeps the sink open
        sink.close()
    assert caught.value.failure.code == "FC-STORE-006"
    filler.unlink()
    sink.flush()
    sink.close()
    found, problems = _read(path)
    assert problems == []
    assert found == first + batch


def test_a_batch_cut_short_on_a_full_disk_leaves_nothing_for_another_writer(
        small_disk: Path) -> None:
    """When the disk filled in the middle of a batch, the file is cut back to where the batch
    began (no half line is left), so another writer appending before the retry starts on a
    line of its own; every event of both writers is read once and no line is bad."""
    path = small_disk / "events.jsonl"
    sink = JsonlSink(path, buffer=100_000)
    filler = _fill(small_disk, leave=8192)
    ours = _events(40, session="ours")
    for event in ours:
        sink.emit(event)
    with pytest.raises(FailureError):
        sink.flush()
    assert path.read_bytes() == b""  # nothing of the failed batch is left behind
    filler.unlink()
    theirs = _events(3, session="theirs")
    with JsonlSink(path) as other:
        for event in theirs:
            other.emit(event)
    sink.close()
    found, problems = _read(path)
    assert sorted((e.session or "", e.step) for e in found) == sorted(
        (e.session or "", e.step) for e in ours + theirs)
    assert len(found) == len({e.event_id for e in found})  # each once
    assert problems == []


def test_any_other_os_error_is_store_011_naming_the_reason(tmp_path: Path) -> None:
    """A write the OS refuses for another reason (here: the file descriptor is gone) raises
    FC-STORE-011 with the OS's reason in its message; the events stay buffered."""
    path = tmp_path / "events.jsonl"
    sink = JsonlSink(path, buffer=100)
    sink.emit(_events(1)[0])
    fd = sink._file.fd
    assert fd is not None
    os.close(fd)
    with pytest.raises(FailureError) as caught:
        sink.flush()
    assert caught.value.failure.code == "FC-STORE-011"
    assert path.name in caught.value.failure.message
    assert "Bad file descriptor (EBADF)" in caught.value.failure.message
    assert sink._file.count == 1
    sink._file.fd = None  # already closed above; nothing more to release
    sink._finalizer.detach()


def test_a_full_device_is_classified_without_root() -> None:
    """/dev/full refuses every write with ENOSPC: flush raises FC-STORE-006 and keeps the
    batch for the next flush."""
    if not Path("/dev/full").exists():
        missing("no /dev/full on this system")
    sink = JsonlSink("/dev/full", buffer=100)
    sink.emit(_events(1)[0])
    for _ in range(2):
        with pytest.raises(FailureError) as caught:
            sink.flush()
        assert caught.value.failure.code == "FC-STORE-006"
        assert sink._file.count == 1
    sink._file.body.clear()  # give up on it, so closing succeeds
    sink.close()


def test_a_logging_handler_on_a_full_device_never_raises(
        capsys: pytest.CaptureFixture[str]) -> None:
    """EventHandler.flush (which logging.shutdown calls at exit, catching only OSError and
    ValueError) prints one line on stderr instead of raising; the sink keeps the batch."""
    import logging

    from failcode import FC
    from failcode.events import EventHandler

    if not Path("/dev/full").exists():
        missing("no /dev/full on this system")
    sink = JsonlSink("/dev/full", buffer=100)
    handler = EventHandler(sink)
    logger = logging.getLogger("failcode.test.full")
    logger.addHandler(handler)
    try:
        logger.error("no cargo", extra={"failure": FC.CMD_NOT_FOUND.failure(
            surface="shell.run", params={"program": "cargo"})})
        handler.flush()
    finally:
        logger.removeHandler(handler)
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "EventHandler could not flush its sink" in err
    assert "full" in err
    assert sink._file.count == 1
    sink._file.body.clear()
    sink.close()


def test_a_sink_on_a_pipe_writes_as_before(tmp_path: Path) -> None:
    """A pipe (no end to look at, no offset) is written to as it comes: every event, once."""
    del tmp_path
    read_end, write_end = os.pipe()
    try:
        written = _events(5)
        with JsonlSink(f"/dev/fd/{write_end}", buffer=2) as sink:
            for event in written:
                sink.emit(event)
        os.close(write_end)
        write_end = -1
        with os.fdopen(read_end, "rb") as stream:
            read_end = -1
            assert list(read_events(stream)) == written
    finally:
        for fd in (read_end, write_end):
            if fd >= 0:
                os.close(fd)


@pytest.mark.parametrize("when", ["before_open", "between_flushes"])
def test_a_torn_line_is_never_glued_to_the_next_event(tmp_path: Path, when: str) -> None:
    """Half a line in the file (another writer cut short) is ended before the sink's next
    write: a reader sees it as one bad line and every event the sink wrote."""
    path = tmp_path / "events.jsonl"
    before, after = _events(2), _events(3, start=2)
    half = before[0].to_json()[:40]
    if when == "before_open":
        path.write_bytes(before[1].to_json() + b"\n" + half)
        sink = JsonlSink(path)
        expected = [before[1], *after]
    else:
        sink = JsonlSink(path)
        sink.emit(before[1])
        sink.flush()
        with path.open("ab") as other:
            other.write(half)
        expected = [before[1], *after]
    for event in after:
        sink.emit(event)
    sink.close()
    found, problems = _read(path)
    assert found == expected
    assert [(p.line, p.kind) for p in problems] == [(2, "malformed")]


def test_a_file_ending_with_a_newline_gets_no_blank_line(tmp_path: Path) -> None:
    """The torn-line check adds nothing when the file ends where a line ends."""
    path = tmp_path / "events.jsonl"
    for start in (0, 2, 4):
        with JsonlSink(path) as sink:
            for event in _events(2, start=start):
                sink.emit(event)
    assert path.read_bytes().count(b"\n") == 6
    assert b"\n\n" not in path.read_bytes()


# ---------------------------------------------------------------------------------------------
# 3. the last line without its newline; a reader racing a writer


def test_the_last_line_without_a_newline(tmp_path: Path) -> None:
    """A whole event on the last line is read; a cut one is ``unfinished`` ("ends early") with
    its number, never ``malformed``; JSON that is no event is ``malformed`` as anywhere."""
    good = _events(2)
    path = tmp_path / "events.jsonl"
    path.write_bytes(good[0].to_json() + b"\n" + good[1].to_json())
    assert _read(path) == (good, [])
    path.write_bytes(good[0].to_json() + b"\n" + good[1].to_json()[:-30])
    found, problems = _read(path)
    assert found == good[:1]
    assert [(p.line, p.kind) for p in problems] == [(2, "unfinished")]
    assert "ends early" in problems[0].problem
    assert "unfinished" in problems[0].failure().message
    assert problems[0].failure().code == "FC-STORE-008"
    path.write_bytes(good[0].to_json() + b'\n{"version": 1}')
    assert [(p.line, p.kind) for p in _read(path)[1]] == [(2, "malformed")]


class _SlowWriter(threading.Thread):
    """Appends events one line at a time, each in two writes: half the line, a pause for a
    reader to come by, then the rest, as a writer does when the OS writes it in pieces."""

    def __init__(self, path: Path, events: list[Event], *, read_between: threading.Event |
                 None = None, reader_done: threading.Event | None = None) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.events = events
        self.half_written = read_between
        self.reader_done = reader_done

    def run(self) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            for event in self.events:
                line = event.to_json() + b"\n"
                os.write(fd, line[: len(line) // 2])
                if self.half_written is not None and self.reader_done is not None:
                    self.reader_done.clear()
                    self.half_written.set()
                    self.reader_done.wait(30)
                else:
                    threading.Event().wait(0.002)
                os.write(fd, line[len(line) // 2:])
        finally:
            os.close(fd)


def test_whole_file_readers_racing_a_writer_never_say_malformed(tmp_path: Path) -> None:
    """Read again and again while each line is half written: the unfinished last line is
    only ever ``unfinished`` (and only as the last line); every whole line is an event."""
    path = tmp_path / "events.jsonl"
    written = _events(30)
    half, read_done = threading.Event(), threading.Event()
    writer = _SlowWriter(path, written, read_between=half, reader_done=read_done)
    writer.start()
    for count in range(len(written)):
        assert half.wait(30)
        half.clear()
        items = list(read_events(path))
        read_done.set()
        assert [type(item) for item in items] == [Event] * count + [EventProblem]
        last = items[-1]
        assert isinstance(last, EventProblem)
        assert (last.line, last.kind) == (count + 1, "unfinished")
    writer.join(30)
    assert _read(path) == (written, [])


def test_a_following_reader_never_sees_the_unfinished_line(tmp_path: Path) -> None:
    """read_events(..., follow=S) racing a writer holds the writer's unfinished line back
    until its newline arrives: every event, and no problem at all."""
    path = tmp_path / "events.jsonl"
    path.touch()
    written = _events(60)
    writer = _SlowWriter(path, written)
    writer.start()
    items = list(read_events(path, follow=2.0))
    writer.join(30)
    assert items == written


def test_a_following_reader_of_a_stream(tmp_path: Path) -> None:
    """A stream followed from where it is: the same rule as a path."""
    path = tmp_path / "events.jsonl"
    path.touch()
    written = _events(20)
    writer = _SlowWriter(path, written)
    with path.open("rb") as stream:
        writer.start()
        items = list(read_events(stream, follow=2.0))
    writer.join(30)
    assert items == written


def test_follow_ends_on_a_line_left_unfinished(tmp_path: Path) -> None:
    """A writer that stopped in the middle of a line: following ends after the idle time and
    reports the line as unfinished."""
    path = tmp_path / "events.jsonl"
    good = _events(2)
    path.write_bytes(good[0].to_json() + b"\n" + good[1].to_json()[:-5])
    items = list(read_events(path, follow=0.1))
    assert items[0] == good[0]
    assert isinstance(items[1], EventProblem)
    assert items[1].kind == "unfinished"
    with pytest.raises(ValueError, match="follow"):
        list(read_events(path, follow=-1))


# ---------------------------------------------------------------------------------------------
# 4. a line longer than the limit: one problem, bounded memory, the next line read


def test_a_line_over_the_limit_is_one_problem_in_bounded_memory(tmp_path: Path) -> None:
    """A 50 MB line between two events: read_events holds at most about one limit's worth
    of it (measured with tracemalloc in a fresh process), reports it as one problem naming
    its length and the limit, and reads the event after it."""
    good = _events(2)
    path = tmp_path / "events.jsonl"
    size = 50 * 1000 * 1000
    with path.open("wb") as handle:
        handle.write(good[0].to_json() + b"\n")
        handle.write(b'{"event": "' + b"x" * (size - 13) + b'"}\n')
        handle.write(good[1].to_json() + b"\n")
    child = _child(f"""
        import json, tracemalloc
        from failcode.events import Event, read_events
        tracemalloc.start()
        items = list(read_events({str(path)!r}))
        peak = tracemalloc.get_traced_memory()[1]
        print(json.dumps({{"peak": peak, "items": [
            {{"event": item.step}} if isinstance(item, Event) else
            {{"line": item.line, "kind": item.kind, "problem": item.problem}}
            for item in items]}}))
    """)
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    result = json.loads(out)
    assert result["items"][0] == {"event": 0}
    assert result["items"][2] == {"event": 1}
    problem = result["items"][1]
    assert (problem["line"], problem["kind"]) == (2, "malformed")
    assert f"{size:,} bytes" in problem["problem"]
    assert "32 MiB" in problem["problem"]
    assert result["peak"] < 2 * MAX_LINE, f"peak {result['peak'] / 2**20:.1f} MiB"


@pytest.mark.parametrize("chunk", [7, 256, 4096, 256 * 1024])
def test_long_lines_at_every_chunk_boundary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                            chunk: int) -> None:
    """With a small limit, lines under and over it, across chunk boundaries (or inside one
    chunk) and as the unterminated last line: each over-long line is one problem, every
    other line is read, and the line numbers stay right."""
    import failcode.events._sink as sink_module

    monkeypatch.setattr(sink_module, "MAX_LINE", 1000)
    monkeypatch.setattr(sink_module, "_CHUNK", chunk)
    good = _events(3)
    short = good[0].to_json()
    assert len(short) < 1000
    long = b'{"x": "' + b"y" * 1200 + b'"}'
    lines = [short, long, good[1].to_json(), long + long, b"", good[2].to_json(), long]
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\n".join(lines))
    items = list(read_events(path))
    assert [item for item in items if isinstance(item, Event)] == good
    problems = [item for item in items if isinstance(item, EventProblem)]
    assert [(p.line, p.kind) for p in problems] == [(2, "malformed"), (4, "malformed"),
                                                    (7, "malformed")]
    assert f"{len(long):,} bytes" in problems[0].problem
    assert f"{2 * len(long):,} bytes" in problems[1].problem
    assert f"{len(long):,} bytes" in problems[2].problem
    with path.open("rb") as stream:  # a stream reads the same
        assert list(read_events(stream, name=str(path))) == items


@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=12),
       st.booleans(), st.integers(1, 64), st.integers(0, 30))
def test_lines_are_the_split_whatever_the_chunks(lines: list[bytes], ended: bool, chunk: int,
                                                 limit: int) -> None:
    """The reader's lines are the input split at newlines, whatever the chunk size: a line
    over the limit is its length, the last line without a newline is marked as such."""
    from failcode.events._sink import _Cut, _Line, _lines, _Long

    data = b"\n".join(lines) + (b"\n" if ended and lines else b"")
    stream = io.BytesIO(data)
    got: list[_Line] = [line for batch in _lines(lambda _: stream.read(chunk), limit, None)
                        for line in batch]
    pieces = data.split(b"\n")
    tail = pieces.pop()
    expected: list[object] = [_Long(len(p)) if len(p) > limit else p for p in pieces]
    if tail:
        expected.append(_Long(len(tail)) if len(tail) > limit else _Cut(tail))
    assert [bytes(x) if isinstance(x, bytearray) else x for x in got] == [
        _Cut(bytes(x.data)) if isinstance(x, _Cut) else x for x in expected]
