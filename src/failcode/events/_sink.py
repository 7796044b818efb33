"""Sinks: where events go. One small protocol, a JSONL file sink, and a fast JSONL reader.

A :class:`Sink` has three methods: ``emit`` (take one event; it may be buffered), ``flush``
(make everything emitted so far durable) and ``close`` (flush and release). The JSONL sink, the
SQLite and PostgreSQL stores and ``failcode.testing.MemorySink`` implement it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Final,
    Literal,
    NamedTuple,
    Protocol,
    TypeAlias,
    cast,
    runtime_checkable,
)

import msgspec

from failcode import FC, FailureError, redact
from failcode.events._event import EVENT_VERSION, MAX_STEP, Event, redact_event
from failcode.record._frozen import is_clean, replace_surrogates

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from types import TracebackType
    from typing import BinaryIO

    from failcode import Failure

__all__ = ["EventProblem", "JsonlSink", "Sink", "read_events", "write_events"]


@runtime_checkable
class Sink(Protocol):
    """Where events go: ``emit`` one (possibly buffered), ``flush`` them durably, ``close``."""

    def emit(self, event: Event) -> None:
        """Take one event; it is durable after the next :meth:`flush` at the latest."""

    def flush(self) -> object:
        """Make every event emitted so far durable (what it returns is the sink's own: a
        :class:`~failcode.events.RemoteSink` says whether it finished in time)."""

    def close(self) -> None:
        """Flush and release the sink; emitting afterwards is an error."""


_ENCODER: Final = msgspec.json.Encoder(order="deterministic")

if sys.platform == "win32":  # no flock: each batch is still one appending write
    _flock: Callable[[int, int], None] | None = None
    _LOCK_EX, _LOCK_UN = 2, 8
else:
    from fcntl import LOCK_EX as _LOCK_EX
    from fcntl import LOCK_UN as _LOCK_UN
    from fcntl import flock as _flock

_NO_SPACE: Final = frozenset(code for code in (
    getattr(errno, name, None) for name in ("ENOSPC", "EDQUOT", "EFBIG")) if code is not None)
"""The errors of a write that mean "no room" (FC-STORE-006); any other is FC-STORE-011."""


@contextlib.contextmanager
def _locked(fd: int) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``fd`` (where the OS has one: not on Windows), so the
    JsonlSinks of every process on the file write one at a time."""
    if _flock is None:
        yield
        return
    locked = True
    try:
        _flock(fd, _LOCK_EX)
    except OSError:  # a file system without locks: appends stay atomic as one write each
        locked = False
    try:
        yield
    finally:
        if locked:
            with contextlib.suppress(OSError):
                _flock(fd, _LOCK_UN)


def _write_error(path: Path, exc: OSError, *, doing: str, kept: int) -> FailureError:
    """The FailureError of a failed write, fsync or stat of an event file: FC-STORE-006 when
    the disk (or quota) is full, else FC-STORE-011; both name the file and the OS's reason."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    name = errno.errorcode.get(exc.errno or 0)
    problem = f"{doing}: {reason} ({name})" if name else f"{doing}: {reason}"
    spec = FC.STORE_DISK_FULL if exc.errno in _NO_SPACE else FC.STORE_WRITE_FAILED
    detail = (f"{kept} buffered events are kept; the next flush writes them once" if kept
              else "the events were written but may not be on disk; nothing is kept")
    return FailureError(spec.failure(surface="events.jsonl", params={
        "url": str(path), "problem": problem}, detail=f"{path}: {problem}; {detail}"))


def _wrote(count: int) -> int:
    """What ``os.write`` returned; a write of nothing (which would loop) is an error."""
    if count <= 0:
        raise OSError(errno.EIO, "the OS accepted none of the bytes written")
    return count


class _File:
    """A sink's open file and the batch not yet in it.

    It is apart from the sink so that the exit hook (a ``weakref.finalize`` of the sink) can
    flush it without keeping the sink alive. ``body`` holds whole lines, each ending in a
    newline. ``end`` is where the file ended after this sink's last write, -1 when unknown.
    On a pipe, after a short write, the first ``partial`` bytes of ``body`` are already out.
    """

    __slots__ = ("body", "count", "end", "fd", "fsync", "lock", "partial", "path", "pid",
                 "readable", "seekable")

    def __init__(self, path: Path, fd: int, *, readable: bool, fsync: bool) -> None:
        self.path = path
        self.fd: int | None = fd
        self.readable = readable and hasattr(os, "pread")  # (no pread on Windows)
        self.fsync = fsync
        self.body = bytearray()
        self.count = 0
        self.partial = 0
        try:  # a pipe or a terminal has no end to look at: it is written as it comes
            os.lseek(fd, 0, os.SEEK_END)
            self.seekable = True
        except OSError:
            self.seekable = False
        self.end = -1 if self.seekable else 0
        self.lock = threading.Lock()
        self.pid = os.getpid()

    def _ends_line(self, fd: int, size: int) -> bool:
        """Whether the file's last byte is a newline (False when it cannot be read: a newline
        too many is a blank line, which readers skip; one too few glues two lines)."""
        if not self.readable:
            return False
        try:
            return os.pread(fd, 1, size - 1) == b"\n"
        except OSError:
            return False

    def write(self) -> None:
        """Write the batch; the lock is held.

        A file is written under an exclusive ``flock`` (every JsonlSink on the file takes it,
        in any process), as one ``write`` unless the OS writes less: no other sink's line
        lands between the check of the file's last byte and the batch, so no line is torn and
        no blank line added. When a write fails part way (a full disk), the file is cut back
        to where the batch began, so no half line is left behind; the batch stays in ``body``.
        A pipe is written as it comes (see :meth:`_write_stream`).

        Raises:
            FailureError: FC-STORE-006 / FC-STORE-011; what is not in the file stays in
                ``body`` for the next call.
        """
        if self.fd is None or not self.body:
            return
        if not self.seekable:
            self._write_stream()
            return
        body, fd = self.body, self.fd
        with _locked(fd):
            try:
                start = os.lseek(fd, 0, os.SEEK_END)
                # the file as found, or another writer's: is its last line whole?
                if start != self.end and start and not self._ends_line(fd, start):
                    _wrote(os.write(fd, b"\n"))  # close the torn line, never glue to it
                    start += 1
            except OSError as exc:
                self.count = body.count(b"\n")
                raise _write_error(self.path, exc, doing="write", kept=self.count) from None
            done = 0
            try:
                with memoryview(body) as view:
                    while done < len(body):
                        with view[done:] as rest:
                            done += _wrote(os.write(fd, rest))
            except OSError as exc:
                self.end = -1
                if done:
                    self._cut(fd, start, start + done)
                self.count = body.count(b"\n")
                raise _write_error(self.path, exc, doing="write", kept=self.count) from None
            self.end = start + done
            body.clear()
            self.count = 0

    def _cut(self, fd: int, start: int, end: int) -> None:
        """Cut the file back to ``start``, where the failed batch began, when it still ends
        at ``end`` (a writer that takes no lock may have appended after the fragment: then the
        fragment stays, and the next write ends it with a newline)."""
        with contextlib.suppress(OSError):
            if os.lseek(fd, 0, os.SEEK_END) == end:
                os.ftruncate(fd, start)

    def _write_stream(self) -> None:
        """Write the batch to a pipe or terminal, going on where a short write stopped."""
        body, fd = self.body, self.fd
        if fd is None:
            return
        try:
            while body:
                with memoryview(body) as view, view[self.partial:] as rest:
                    written = _wrote(os.write(fd, rest))
                done = self.partial + written
                if done == len(body):
                    body.clear()
                    self.count = self.partial = 0
                    return
                cut = body.rfind(b"\n", 0, done) + 1  # a short write: keep what is not out
                del body[:cut]
                self.partial = done - cut
        except OSError as exc:
            self.count = body.count(b"\n")
            raise _write_error(self.path, exc, doing="write", kept=self.count) from None

    def sync(self) -> None:
        if self.fsync and self.fd is not None:
            try:
                os.fsync(self.fd)
            except OSError as exc:
                raise _write_error(self.path, exc, doing="fsync", kept=0) from None

    def close(self) -> None:
        """Write, sync and close; the lock is held. When writing fails the file stays open
        with its batch (FailureError), so a later close or flush can still write it."""
        if self.fd is None:
            return
        self.write()
        try:
            self.sync()
        finally:
            os.close(self.fd)
            self.fd = None


def _close_at_exit(file: _File) -> None:
    """The exit hook (and the collected sink's): write what the sink still holds."""
    if file.pid != os.getpid():
        return  # a forked child holds a copy of its parent's batch: the parent writes it
    if not file.lock.acquire(timeout=5):  # a daemon thread stuck in a write holds it
        _say(f"failcode: events not written at exit to {file.path}: another thread held "
             "the sink for 5 s")
        return
    try:
        file.close()
    except FailureError as exc:  # nothing can catch it any more: say what was lost
        _say(f"failcode: {file.count} events not written at exit: {exc.failure.message} "
             f"({exc.failure.params.get('problem')})")
    finally:
        file.lock.release()


def _say(line: str) -> None:
    with contextlib.suppress(Exception):  # stderr may be closed at exit
        print(line, file=sys.stderr)


class JsonlSink:
    """Appends events to a JSON Lines file, one event per line (:func:`read_events` reads it).

    Lines are buffered and written with one ``write`` per flush on a file opened for
    appending, under an exclusive ``flock`` of the file (POSIX; every JsonlSink takes it), so
    several processes may append to one file: every line stays whole, none is lost, and no
    blank line is added between their batches.

    What survives what:

    - A flush that returned has put its events in the file: another process reading it sees
      them at once, and a kill -9 of this process after that loses none of them.
    - A kill -9 (or anything else that ends the process without running Python's exit: a
      signal without a handler, such as SIGTERM's default, ``os._exit``, a crash of the
      interpreter) loses the events emitted since the last flush (fewer than ``buffer``,
      plus a batch whose write failed), and nothing flushed.
    - A normal exit (the main module ends, ``sys.exit``, an uncaught exception) writes what
      the sink holds, as does the sink being garbage collected; an exit hook cannot raise,
      so a write that fails then is reported on stderr. A forked child never writes its
      parent's buffered events.
    - With ``fsync=False`` an OS crash or power loss may also lose what the OS had not yet
      written to disk; with ``fsync=True`` every flush returns once its events are on disk.

    A write that fails (a full disk, an I/O error) raises FailureError and keeps the events
    not written, so the next flush writes them, each exactly once. A write cut short (the
    disk filled in the middle of it) is undone: the file is cut back to its last whole line,
    where the batch began, so no half line is left behind even when the process dies before
    it retries. A file found ending in the middle of a line (another program's torn write)
    gets a newline before the next batch, so it is one malformed line to a reader and the
    next event is never glued to it.

    Args:
        path: the file (created with its parent directories when missing).
        buffer: events kept before a write (1: write every event at once).
        fsync: ``flush`` also asks the OS to put the data on disk.

    Raises:
        FailureError: FC-STORE-005 when the file cannot be created or opened for writing.
    """

    def __init__(self, path: str | os.PathLike[str], *, buffer: int = 64,
                 fsync: bool = False) -> None:
        self.path = Path(path)
        self._size = max(1, buffer)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            flags = os.O_APPEND | os.O_CREAT
            try:  # readable too, to see whether the file ends in the middle of a line
                fd, readable = os.open(self.path, flags | os.O_RDWR, 0o644), True
            except PermissionError:  # a write-only file
                fd, readable = os.open(self.path, flags | os.O_WRONLY, 0o644), False
        except OSError as exc:
            raise FailureError(FC.STORE_READ_ONLY.failure(
                surface="events.jsonl", params={"url": str(self.path),
                                                "problem": exc.strerror or str(exc)})) from None
        self._file = _File(self.path, fd, readable=readable, fsync=fsync)
        # at exit (or when collected), a sink still open writes its buffer; the hook holds the
        # file, not the sink, so the sink is collected as usual
        self._finalizer = weakref.finalize(self, _close_at_exit, self._file)

    def emit(self, event: Event) -> None:
        """Buffer one event; written when the buffer is full, on flush, on close and at exit.

        Raises:
            FailureError: the buffer was full and writing it failed (as :meth:`flush`); the
                event is kept with the rest of the batch.
            ValueError: the sink is closed.
        """
        file = self._file
        with file.lock:
            if file.fd is None:
                msg = f"JsonlSink({self.path}) is closed"
                raise ValueError(msg)
            body = file.body
            length = len(body)
            try:
                _ENCODER.encode_into(event, body, -1)
            except BaseException:
                del body[length:]
                raise
            body.append(0x0A)
            file.count += 1
            if file.count >= self._size:
                file.write()

    def flush(self) -> None:
        """Write the buffered lines (and fsync when asked); once it returns they are in the
        file, for every reader.

        Raises:
            FailureError: FC-STORE-006 (the disk or quota is full) or FC-STORE-011 (another
                OS error), naming the file and the OS's reason. The events not written stay
                buffered and the next flush writes them, each exactly once. An fsync that
                fails keeps nothing: its events were written, but may not be on disk.
        """
        file = self._file
        with file.lock:
            file.write()
            file.sync()

    def close(self) -> None:
        """Flush and close the file; closing twice is harmless.

        Raises:
            FailureError: as :meth:`flush`; when the write failed the sink stays open with its
                batch, so another ``close`` (or the exit hook) can still write it.
        """
        file = self._file
        with file.lock:
            file.close()
        self._finalizer.detach()

    def __enter__(self) -> JsonlSink:
        return self

    def __exit__(self, typ: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def write_events(path: str | os.PathLike[str], events: Iterable[Event]) -> int:
    """Append ``events`` to a JSONL file; returns how many were written."""
    count = 0
    with JsonlSink(path, buffer=1024) as sink:
        for event in events:
            sink.emit(event)
            count += 1
    return count


# ---------------------------------------------------------------------------------------------
# reading


class EventProblem(msgspec.Struct, frozen=True, kw_only=True):
    """A line of an event file that is not a valid event of this version; it was skipped.

    Attributes:
        file: the file, as given.
        line: its 1-based line number.
        kind: ``malformed`` (not JSON, not a valid event, or a line over :data:`MAX_LINE`),
            ``unknown_version``, or ``unfinished``: the file's last line ends early, without
            its newline and not a whole event (its writer stopped in the middle of it, or is
            still writing it; see :func:`read_events`).
        problem: what was wrong, naming the field's path (``$.failure.kind``); redacted (it
            may quote the line), so a secret in a bad line never reaches an output.
        found: the version the line declared (``unknown_version`` only).
    """

    file: str
    line: int
    kind: Literal["malformed", "unknown_version", "unfinished"]
    problem: str
    found: int | None = None

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "problem", redact(self.problem))
        if not is_clean(self.file):
            msgspec.structs.force_setattr(self, "file", replace_surrogates(self.file))

    def failure(self) -> Failure:
        """The problem as a classified Failure (FC-STORE-008 or FC-STORE-009)."""
        if self.kind == "unknown_version":
            return FC.STORE_EVENT_VERSION.failure(surface="events.read", params={
                "file": self.file, "line": self.line, "found": self.found,
                "supported": EVENT_VERSION})
        return FC.STORE_EVENT_MALFORMED.failure(surface="events.read", params={
            "file": self.file, "line": self.line, "problem": self.problem})


class _VersionProbe(msgspec.Struct):
    version: int | None = None


_DECODE: Final = msgspec.json.Decoder(Event).decode
_PROBE: Final = msgspec.json.Decoder(_VersionProbe).decode


def _problem(file: str, number: int, line: bytes | bytearray,
             exc: Exception) -> EventProblem:
    try:
        probe = _PROBE(line)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        probe = None
    if (probe is not None and probe.version is not None and probe.version != EVENT_VERSION
            and 0 <= probe.version <= MAX_STEP):  # a version beyond that is malformed
        return EventProblem(file=file, line=number, kind="unknown_version",
                            problem=f"event version {probe.version}", found=probe.version)
    if isinstance(exc, RecursionError):
        return EventProblem(file=file, line=number, kind="malformed", problem=(
            f"JSON nested too deep to read ({len(line):,} bytes; {exc})"))
    text = str(exc).rstrip(".")
    # msgspec's ValidationError is a DecodeError too: only a syntax error is "not JSON"
    if isinstance(exc, msgspec.DecodeError) and not isinstance(exc, msgspec.ValidationError):
        text = f"not JSON ({text})"
    return EventProblem(file=file, line=number, kind="malformed",
                        problem=redact(text)[:200])  # redacted whole, then cut


MAX_LINE: Final = 32 * 1024 * 1024
"""The longest line :func:`read_events` holds (bytes): 32 MiB; a longer one is skipped."""

_BOM: Final = b"\xef\xbb\xbf"
"""The UTF-8 byte-order mark some editors write before a file's first line; it is skipped."""

_CHUNK: Final = 256 * 1024
_POLL_S: Final = 0.05

class _Long(NamedTuple):
    """A line longer than the limit, skipped: its length in bytes."""

    length: int


class _Cut(NamedTuple):
    """The input's last line, which no newline ends."""

    data: bytes | bytearray


_Line: TypeAlias = "bytes | bytearray | _Long | _Cut"
"""A line without its newline (``bytes``, or a ``bytearray`` when it spanned chunks), a line
too long to hold, or the last line when no newline ends it."""


def _lines(read: Callable[[int], bytes], max_line: int,
           follow: float | None) -> Iterator[list[_Line]]:
    """The lines ``read`` gives, a chunk's worth at a time, holding at most ``max_line`` bytes
    of one line (a longer one is counted to its end); with ``follow``, waiting at the end of
    the input for more until nothing came for ``follow`` seconds."""
    carry = bytearray()  # the start of a line that runs past the chunk
    skipped = -1  # >= 0: the length so far of a line too long to hold
    idle = 0.0
    while True:
        chunk = read(_CHUNK)
        if not chunk:
            if follow is None:
                break
            now = time.monotonic()
            idle = idle or now
            if now - idle >= follow:
                break
            time.sleep(min(_POLL_S, follow))
            continue
        idle = 0.0
        split = chunk.split(b"\n")
        last = split.pop()
        first = split[0] if split else b""
        pieces = cast("list[_Line]", split)  # bytes, until a piece is replaced below
        if len(chunk) > max_line:  # a piece may be too long
            pieces = [_Long(len(piece)) if len(piece) > max_line else piece
                      for piece in split]
        if split and (carry or skipped >= 0):  # the first piece ends the carried line
            length = (skipped if skipped >= 0 else len(carry)) + len(first)
            if skipped < 0 and length <= max_line:
                carry += first
                pieces[0] = carry
            else:
                pieces[0] = _Long(length)
            carry, skipped = bytearray(), -1
        if pieces:
            yield pieces
        if skipped >= 0:
            skipped += len(last)
        elif len(carry) + len(last) > max_line:
            skipped, carry = len(carry) + len(last), bytearray()
        elif last:
            carry += last
    if skipped >= 0:
        yield [_Long(skipped)]
    elif carry:
        yield [_Cut(carry)]


def read_events(source: str | os.PathLike[str] | BinaryIO, *,
                name: str | None = None, redacted: bool = False, follow: float | None = None,
                ) -> Iterator[Event | EventProblem]:
    """Read a JSONL event file: each valid line as an :class:`Event`, each bad one as an
    :class:`EventProblem` naming its line; blank lines are skipped.

    Decoding is msgspec's typed decoder, one line at a time, with every record validated.
    Memory stays bounded: at most one line of up to :data:`MAX_LINE` (32 MiB) is held; a
    longer line is one ``malformed`` problem giving its length and the limit, and reading goes
    on with the next line.

    The last line of the input, when no newline ends it: the writer may have stopped in the
    middle of it (killed, or a full disk), or may still be writing it. When it is a whole
    event it is read as one (a file whose last newline is missing); when it is not JSON it is
    the ``unfinished`` problem "ends early" with its line number, never ``malformed``; when
    it is JSON but not a valid event it is ``malformed`` as any other line. To read a file
    that is still being written without ever seeing its writer's unfinished line, pass
    ``follow``: at the end of the input, reading waits for more, holding the unfinished line
    back until its newline arrives, and ends once nothing new came for ``follow`` seconds (a
    line still unfinished then is judged as above).

    Args:
        source: a path, or a binary stream (``read1`` or ``read``; read from where it is).
        name: how problems name the input (default: the path; ``<stream>`` for a stream).
        redacted: redact every event as the factories do (:func:`~failcode.events.redact_event`)
            before yielding it: for files another program wrote, whose events reach an output.
            An event whose secret sits where redaction cannot rewrite it (a failure's surface,
            which its signature repeats) is reported as that line's problem instead.
        follow: seconds without new data after which reading of a growing input ends; None
            (the default): end at the end of the input.

    Raises:
        OSError: the file cannot be opened.
    """
    if follow is not None and follow < 0:
        msg = f"follow must be >= 0 seconds, not {follow}"
        raise ValueError(msg)
    if hasattr(source, "readline"):
        stream: BinaryIO = source  # type: ignore[assignment]
        read = getattr(stream, "read1", None) or stream.read
        yield from _decode_lines(_lines(read, MAX_LINE, follow), name or "<stream>",
                                 redacted=redacted)
        return
    with Path(source).open("rb", buffering=0) as handle:  # whole chunks, no second buffer
        yield from _decode_lines(_lines(handle.read, MAX_LINE, follow),
                                 name or os.fspath(source), redacted=redacted)


def _decode_lines(batches: Iterable[list[_Line]], name: str, *,
                  redacted: bool = False) -> Iterator[Event | EventProblem]:
    decode = _DECODE
    number = 0
    for batch in batches:
        for item in batch:
            number += 1
            line: bytes | bytearray
            if type(item) is bytes:  # nearly every line
                line = item
            elif isinstance(item, _Long):
                yield EventProblem(file=name, line=number, kind="malformed", problem=(
                    f"a line of {item.length:,} bytes, longer than the limit of "
                    f"{MAX_LINE // (1024 * 1024)} MiB ({MAX_LINE:,} bytes); skipped"))
                continue
            elif isinstance(item, _Cut):
                line = item.data
            else:  # a line that spanned chunks
                line = item
            if number == 1 and line.startswith(_BOM):  # a UTF-8 byte-order mark: not data
                line = line[len(_BOM):]
            try:
                event = decode(line)
            except (msgspec.ValidationError, msgspec.DecodeError, RecursionError) as exc:
                if not line.strip():
                    continue
                if isinstance(item, _Cut) and not isinstance(exc, (msgspec.ValidationError,
                                                                RecursionError)):
                    yield EventProblem(file=name, line=number, kind="unfinished", problem=(
                        f"the last line ends early: {len(line):,} bytes with no newline and "
                        "not a whole event (unfinished: its writer stopped in the middle of "
                        "it, or is still writing it)"))
                else:
                    yield _problem(name, number, line, exc)
                continue
            if redacted:
                try:
                    event = redact_event(event)
                except ValueError as exc:
                    yield EventProblem(file=name, line=number, kind="malformed",
                                       problem=str(exc))
                    continue
            yield event
