"""Sinks: where events go. One small protocol, a JSONL file sink, and a fast JSONL reader.

A :class:`Sink` has three methods: ``emit`` (take one event; it may be buffered), ``flush``
(make everything emitted so far durable) and ``close`` (flush and release). The JSONL sink, the
SQLite and PostgreSQL stores and ``failcode.testing.MemorySink`` implement it.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, Protocol, runtime_checkable

import msgspec

from failcode import FC, FailureError, redact
from failcode.events._event import EVENT_VERSION, MAX_STEP, Event, redact_event
from failcode.record._frozen import is_clean, replace_surrogates

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from types import TracebackType
    from typing import BinaryIO

    from failcode import Failure

__all__ = ["EventProblem", "JsonlSink", "Sink", "read_events", "write_events"]


@runtime_checkable
class Sink(Protocol):
    """Where events go: ``emit`` one (possibly buffered), ``flush`` them durably, ``close``."""

    def emit(self, event: Event) -> None:
        """Take one event; it is durable after the next :meth:`flush` at the latest."""

    def flush(self) -> None:
        """Make every event emitted so far durable."""

    def close(self) -> None:
        """Flush and release the sink; emitting afterwards is an error."""


_ENCODER: Final = msgspec.json.Encoder(order="deterministic")


class JsonlSink:
    """Appends events to a JSON Lines file, one event per line (:func:`read_events` reads it).

    Lines are buffered and written with one ``write`` per flush on a file opened for
    appending, so several processes may append to one file without interleaving lines.

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
        self._buffer: list[bytes] = []
        self._size = max(1, buffer)
        self._fsync = fsync
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                                           0o644)
        except OSError as exc:
            raise FailureError(FC.STORE_READ_ONLY.failure(
                surface="events.jsonl", params={"url": str(self.path),
                                                "problem": exc.strerror or str(exc)})) from None

    def emit(self, event: Event) -> None:
        """Buffer one event; written when the buffer is full, on flush and on close."""
        line = _ENCODER.encode(event)
        with self._lock:
            if self._fd is None:
                msg = f"JsonlSink({self.path}) is closed"
                raise ValueError(msg)
            self._buffer.append(line)
            if len(self._buffer) >= self._size:
                self._write()

    def _write(self) -> None:
        if not self._buffer or self._fd is None:
            return
        data = b"\n".join(self._buffer) + b"\n"
        self._buffer.clear()
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def flush(self) -> None:
        """Write the buffered lines (and fsync when asked)."""
        with self._lock:
            self._write()
            if self._fsync and self._fd is not None:
                os.fsync(self._fd)

    def close(self) -> None:
        """Flush and close the file; closing twice is harmless."""
        with self._lock:
            self._write()
            if self._fd is not None:
                if self._fsync:
                    os.fsync(self._fd)
                os.close(self._fd)
                self._fd = None

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
        kind: ``malformed`` (not JSON, or not a valid event) or ``unknown_version``.
        problem: what was wrong, naming the field's path (``$.failure.kind``); redacted (it
            may quote the line), so a secret in a bad line never reaches an output.
        found: the version the line declared (``unknown_version`` only).
    """

    file: str
    line: int
    kind: Literal["malformed", "unknown_version"]
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


def _problem(file: str, number: int, line: bytes, exc: Exception) -> EventProblem:
    try:
        probe = _PROBE(line)
    except (msgspec.ValidationError, msgspec.DecodeError):
        probe = None
    if (probe is not None and probe.version is not None and probe.version != EVENT_VERSION
            and 0 <= probe.version <= MAX_STEP):  # a version beyond that is malformed
        return EventProblem(file=file, line=number, kind="unknown_version",
                            problem=f"event version {probe.version}", found=probe.version)
    text = str(exc).rstrip(".")
    # msgspec's ValidationError is a DecodeError too: only a syntax error is "not JSON"
    if isinstance(exc, msgspec.DecodeError) and not isinstance(exc, msgspec.ValidationError):
        text = f"not JSON ({text})"
    return EventProblem(file=file, line=number, kind="malformed",
                        problem=redact(text)[:200])  # redacted whole, then cut


MAX_LINE: Final = 32 * 1024 * 1024
"""The longest line :func:`read_events` holds when it reads a stream (bytes): 32 MiB."""


def _stream_lines(stream: BinaryIO, max_line: int) -> Iterator[bytes | None]:
    """The stream's lines; None for a line over ``max_line`` bytes (skipped to its end)."""
    while True:
        line = stream.readline(max_line + 1)
        if not line:
            return
        if len(line) > max_line and not line.endswith(b"\n"):
            while True:  # drop the rest of the long line, a bounded piece at a time
                rest = stream.readline(max_line)
                if not rest or rest.endswith(b"\n"):
                    break
            yield None
        else:
            yield line


def read_events(source: str | os.PathLike[str] | BinaryIO, *,
                name: str | None = None, redacted: bool = False,
                ) -> Iterator[Event | EventProblem]:
    """Read a JSONL event file: each valid line as an :class:`Event`, each bad one as an
    :class:`EventProblem` naming its line; blank lines are skipped.

    Decoding is msgspec's typed decoder, one line at a time, with every record validated.

    Args:
        source: a path, or a binary stream with ``readline`` (read from where it is; a line
            over 32 MiB is reported as malformed and skipped, so memory stays bounded).
        name: how problems name the input (default: the path; ``<stream>`` for a stream).
        redacted: redact every event as the factories do (:func:`~failcode.events.redact_event`)
            before yielding it: for files another program wrote, whose events reach an output.
            An event whose secret sits where redaction cannot rewrite it (a failure's surface,
            which its signature repeats) is reported as that line's problem instead.

    Raises:
        OSError: the file cannot be opened.
    """
    if hasattr(source, "readline"):
        yield from _decode_lines(_stream_lines(source, MAX_LINE),  # type: ignore[arg-type]
                                 name or "<stream>", redacted=redacted)
        return
    with Path(source).open("rb") as handle:
        yield from _decode_lines(handle, name or os.fspath(source), redacted=redacted)


def _decode_lines(lines: Iterable[bytes | None], name: str, *,
                  redacted: bool = False) -> Iterator[Event | EventProblem]:
    decode = _DECODE
    for number, line in enumerate(lines, start=1):
        if line is None:
            yield EventProblem(file=name, line=number, kind="malformed",
                               problem=f"a line longer than {MAX_LINE // (1024 * 1024)} MiB")
            continue
        try:
            event = decode(line)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            if line.strip():
                yield _problem(name, number, line, exc)
            continue
        if redacted:
            try:
                event = redact_event(event)
            except ValueError as exc:
                yield EventProblem(file=name, line=number, kind="malformed", problem=str(exc))
                continue
        yield event
