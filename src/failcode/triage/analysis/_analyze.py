"""Triage: read inputs with the format's reader, classify each failing step, find loops.

Rules (about failures, whatever the format):

- A command is classified by :func:`failcode.from_command` with its purpose inferred by the
  API's own rule (:func:`failcode.infer_purpose`: the command, then its output); exit 0 is
  no failure, a probe that found nothing or a cancellation is an outcome, a command still
  running is nothing yet.
- An exception known only as text goes through :func:`failcode.classify_text`: provider
  errors as provider errors; the harness's failures as ``FC-SYS-003`` unless they name a
  system condition (disk full, out of memory...); the agent reaching a limit as
  ``FC-LIFE-009``.
- The same failure (same signature) logged more than once for one step is one failure whose
  ``repeats`` counts the logs.
- A loop is a root cause that fails again and again (:mod:`failcode.triage.analysis._loops`): the
  same signature at three or more steps of one session or at two consecutive steps, or the
  same cause (a timeout whatever the command, a missing module or program whatever its name,
  one error class at one location whatever the message, else the signature) at three or more
  steps or two consecutive steps with no step between them failing of another cause only.

Rules (about bad input: one input never costs the others):

- Any error raised while reading one input, the readers' own or not (``RecursionError``,
  ``MemoryError``, a decoder's exception, a bug), is that input's FC-DATA-003 naming the file
  and where reading got to (the line, or the character of the JSON value); the sessions read
  before it are kept and the other inputs are read as if it were not there.
- Only regular files are opened: a FIFO, socket or device named is FC-DATA-005 ("a FIFO, not
  a regular file") and is never opened, so triage never blocks on one; found by walking a
  folder it is skipped and counted. A file is opened non-blocking and checked again once
  open, so one replaced by a FIFO in between cannot block either.
- A folder that cannot be listed while walking (permission denied, a name too long, gone in
  the meantime) is an input of its own with FC-DATA-005 naming it, never dropped; a symlink
  loop is FC-DATA-005 too.
- A file is binary (FC-DATA-002, not read) when its first 64 KiB hold a NUL byte or more than
  1 in 20 bytes that are not UTF-8; a text file with a few invalid bytes is read, and is
  FC-DATA-003 at the first of them, keeping what comes before. A binary file a by-path reader
  detects (``reads_path``: OpenCode's SQLite database) is read by that reader from its path;
  found by walking a folder it is an input only when the reader ``owns`` it.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeGuard

import msgspec

from failcode import (
    FC,
    Failure,
    Kind,
    RejectedAction,
    redact,
)
from failcode.classification._command import as_local_module
from failcode.classification._purpose import infer_purpose
from failcode.triage._events import (
    About,
    Command,
    ErrorText,
    InputError,
    Recorded,
    RecordedOutcome,
    Rejected,
    SessionEnd,
    SessionStart,
    Usage,
    Wrote,
)
from failcode.triage._result import (
    FailureEntry,
    InputResult,
    Loop,
    OutcomeEntry,
    SessionResult,
    Tokens,
    TriageResult,
)
from failcode.triage.analysis._cost import charge, recorded, settle, turn
from failcode.triage.analysis._loops import find_loops
from failcode.triage.analysis._provided import listed_apps, modules_of_command, modules_of_file
from failcode.triage.analysis._resume import Checkpoint, ReadingState, SessionState, edges
from failcode.triage.analysis._step import classify_command, classify_error, harness_failure
from failcode.triage.readers import FORMATS, HEAD_BYTES, READERS, detect
from failcode.triage.readers._atif import read_with_trajectory
from failcode.triage.readers._jsonstream import Position, loads
from failcode.triage.readers._text import first_line

if TYPE_CHECKING:
    import io
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from failcode.triage._events import PathReader, Reader, ResumableReader

__all__ = ["infer_purpose", "triage"]

EVIDENCE_CHARS: Final = 200

_SYSTEM_KINDS: Final = frozenset({Kind.SYSTEM_ERROR, Kind.ENV_ERROR, Kind.PERMISSION_ERROR})


def _evidence(text: str) -> str:
    return redact(first_line(text, 1000))[:EVIDENCE_CHARS]


class _Session:
    """One session being read: its failures by (step, signature), its outcomes."""

    def __init__(self, name: str | None) -> None:
        self.name = name
        self.failures: dict[tuple[int | None, str], FailureEntry] = {}
        self.outcomes: list[OutcomeEntry] = []
        self.provided: set[str] = set()
        """Module names the session's repository provides (:mod:`._provided`)."""
        self.model: str | None = None
        self.agent_version: str | None = None
        self.tokens: Tokens | None = None
        """Every model turn's tokens; None until the log records one (:mod:`._cost`)."""
        self.at_step: dict[int, FailureEntry] = {}
        """The first failure recorded at each step: the one its turns are charged to."""
        self.unrecovered: list[FailureEntry] = []
        """Failures no step has succeeded after yet."""
        self.started: float | None = None
        """The earliest time of any of its events."""

    def about(self, event: About) -> None:
        self.model = event.model or self.model
        self.agent_version = event.agent_version or self.agent_version

    def wrote(self, event: Wrote) -> None:
        self.provided |= modules_of_file(event.path) | listed_apps(event.text)

    def add_failure(self, step: int | None, source: str, evidence: str, failure: Failure, *,
                    repeats: int, timestamp: float | None, masked: bool = False,
                    actor: str | None = None) -> FailureEntry:
        key = (step, failure.signature)
        entry = self.failures.get(key)
        if entry is None:
            entry = FailureEntry(step, source, evidence, failure, repeats, timestamp, masked,
                                 _clean(actor))
            self.failures[key] = entry
            if step is not None:
                self.at_step.setdefault(step, entry)
            if timestamp is not None:
                self.unrecovered.append(entry)
        else:
            entry.repeats += repeats
        return entry

    def command(self, event: Command) -> None:
        if "INSTALLED_APPS" in event.command or ".py" in event.command:
            self.provided |= modules_of_command(event.command)
        if event.source == "harness" and not event.running and (
                event.exit_code != 0 or event.timed_out):
            failure = harness_failure(ErrorText(event.step, "harness", "HarnessError",
                                                event.output))
            self.add_failure(event.step, "harness", _evidence(event.command or "(no command)"),
                             failure, repeats=1, timestamp=event.timestamp, actor=event.actor)
            return
        result, masked = classify_command(event)
        if not isinstance(result, Failure) and event.timestamp is not None and not (
                event.running or event.timed_out):
            self.recovered(event.timestamp)
        if result is None:
            return
        evidence = _evidence(event.command or "(no command)")
        if isinstance(result, Failure):
            self.add_failure(event.step, event.source, evidence, result, repeats=1,
                             timestamp=event.timestamp, masked=masked, actor=event.actor)
        else:
            self.outcomes.append(OutcomeEntry(event.step, event.source, evidence, result,
                                              _clean(event.actor)))

    def recovered(self, now: float) -> None:
        """A step succeeded at ``now``: the failures before it recovered (:mod:`._cost`)."""
        for entry in self.unrecovered:
            if entry.timestamp is not None:
                entry.recovery_s = max(0.0, now - entry.timestamp)
        self.unrecovered.clear()

    def usage(self, event: Usage, step: int) -> None:
        """One model turn, after the result of ``step`` (-1: before any): the session's, and
        the failure's at that step (:mod:`._cost`)."""
        tokens = turn(event)
        if self.tokens is None:
            self.tokens = Tokens()
        self.tokens.add(tokens)
        entry = self.at_step.get(step)
        if entry is not None:
            charge(entry, tokens, event.model or self.model, recorded(event))

    def error(self, event: ErrorText) -> Failure | None:
        failure = classify_error(event)
        if failure is None:
            return None
        evidence = event.evidence or f"{event.type_name}: {first_line(event.message)}"
        entry = self.add_failure(event.step, event.source, redact(evidence)[:EVIDENCE_CHARS],
                                 failure, repeats=event.repeats, timestamp=event.timestamp,
                                 actor=event.actor)
        return entry.failure

    def end(self, event: SessionEnd, path: str, fmt: str, default: str) -> SessionResult:
        ended: Failure | None = event.failure
        if ended is None and event.error is not None:
            failure = classify_error(event.error)
            if failure is not None:
                same = [e for e in self.failures.values()
                        if e.failure.signature == failure.signature]
                ended = same[-1].failure if same else self.error(event.error)
        failures = sorted(self.failures.values(),
                          key=lambda e: (e.step is None, e.step or 0))
        settle(failures, self.tokens)
        if self.provided:
            for entry in failures:
                entry.failure = as_local_module(entry.failure, self.provided)
        name = redact(event.name or self.name or default)  # a name may quote a secret
        return SessionResult(name, path, fmt, event.steps,
                             event.status, ended, failures, self.outcomes, _loops(failures),
                             _clean(self.model), _clean(self.agent_version),
                             event.verdict, event.reward, self.tokens, self.started,
                             event.recorded_usd)


def _clean(value: str | None) -> str | None:
    """A model name or version as a report shows it: one line, redacted, at most 120
    characters; None when empty."""
    if not value:
        return None
    return redact(first_line(value, 120)).strip() or None


def _loops(failures: Iterable[FailureEntry]) -> list[Loop]:
    """The session's loops by root cause (the rules: :mod:`failcode.triage.analysis._loops`)."""
    return find_loops(failures)


class _Counting:
    """A binary stream that reports how many bytes were read; ``peek`` gives the head;
    ``position`` is where reading got to
    (:class:`~failcode.triage.readers._jsonstream.Position`)."""

    def __init__(self, raw: Any, report: Callable[[int], None] | None, head: bytes,
                 position: Position) -> None:
        self._raw = raw
        self._report = report
        self._head = head
        self.position = position
        self.offset = 0
        """Bytes of the input before what is read next."""
        self.ended_line = False
        """The input was read to its end, and its last byte is a line break."""
        self._tail = b""

    def read(self, size: int = -1) -> bytes:
        data: bytes = self._raw.read(size)
        if data:
            self.offset += len(data)
            self._tail = data[-1:]
            if self._report is not None:
                self._report(len(data))
        elif size != 0:
            self.ended_line = self._tail == b"\n"
        return data

    def skip(self, offset: int, lines: int) -> None:
        """Go on reading at byte ``offset``, after ``lines`` lines (counted as read)."""
        self._raw.seek(offset)
        self.offset = offset
        self._tail = b"\n"
        self.position.line = lines
        if self._report is not None:
            self._report(offset)

    def fileno(self) -> int:
        """The open file's descriptor."""
        return int(self._raw.fileno())

    def readline(self, size: int = -1) -> bytes:
        data: bytes = self._raw.readline(size)
        if data:
            self.offset += len(data)
            self._tail = data[-1:]
            if self._report is not None:
                self._report(len(data))
        return data

    def peek(self, size: int = 0) -> bytes:
        """The input's first bytes (up to 64 KiB), whatever has been read since."""
        return self._head


def _reads_path(reader: Reader) -> TypeGuard[PathReader]:
    """A reader of a binary format, read by path (a database and its write-ahead log)."""
    return bool(getattr(reader, "reads_path", False))


def _path_reader(head: bytes) -> PathReader | None:
    """The by-path reader that detects a binary input's head, or None (FC-DATA-002)."""
    return next((reader for reader in READERS if _reads_path(reader) and reader.sniff(head)),
                None)


def _is_binary(head: bytes) -> bool:
    """A NUL byte, or more than 1 in 20 bytes that are not UTF-8 (a text file with a few bad
    bytes is text: reading it reports the first one)."""
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return head.decode("utf-8", "replace").count("\ufffd") * 20 > len(head)
    return False


_KINDS: Final = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                 (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


class NotRegularError(OSError):
    """An input that is not a regular file (a FIFO, socket or device): never read."""

    def __init__(self, mode: int) -> None:
        kind = next((name for test, name in _KINDS if test(mode)), "not a file")
        super().__init__(errno.EINVAL, f"it is {kind}, not a regular file (not opened)")


def open_regular(path: Path) -> io.BufferedReader:
    """``path`` opened for reading in binary, if it is a regular file.

    Checked before opening (a FIFO, socket or device is never opened) and again once open:
    opened non-blocking, so a file replaced by a FIFO in between cannot block.

    Raises:
        OSError: the file cannot be opened; :class:`NotRegularError` when it is not a regular file.
    """
    mode = path.stat().st_mode
    if not stat.S_ISREG(mode):
        raise NotRegularError(mode)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularError(mode)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def is_conversation(path: Path) -> bool:
    """An OpenHands V1 conversation folder (software-agent-sdk): ``base_state.json`` beside an
    ``events/`` folder of ``event-*.json`` files, one event each."""
    try:
        return (path / "base_state.json").is_file() and (path / "events").is_dir()
    except OSError:  # a folder that cannot be searched (walking reports it)
        return False


class _Events:
    """An OpenHands V1 conversation folder read as one JSON array of its events.

    The ``events/event-NNNNN-<id>.json`` files, in name order (their number is their order),
    joined as ``[e0,e1,...]`` and read one file at a time, so memory holds one event; then
    ``base_state.json``'s ``execution_status`` (the conversation's last state: ``finished``,
    ``error``, ``stuck``...) as a ``ConversationStateUpdateEvent``, the event that says it.
    """

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._files = iter(sorted(p for p in (folder / "events").glob("event-*.json")
                                  if p.is_file()))
        self._pending = b"["
        self._first = True
        self._done = False

    def _next(self) -> bytes:
        for path in self._files:
            with open_regular(path) as handle:  # never a FIFO named like an event
                data = handle.read().strip()
            if not data:
                continue
            separator = b"" if self._first else b","
            self._first = False
            return separator + data
        self._done = True
        return self._state() + b"]"

    def _state(self) -> bytes:
        try:
            with open_regular(self._folder / "base_state.json") as handle:
                state = loads(handle.read())
        except (OSError, ValueError):
            return b""  # the events alone; a damaged state file is not the session's end
        status = state.get("execution_status") if isinstance(state, dict) else None
        if not isinstance(status, str):
            return b""
        event = {"kind": "ConversationStateUpdateEvent", "source": "environment",
                 "timestamp": "", "key": "execution_status", "value": status}
        agent = state.get("agent")
        llm = agent.get("llm") if isinstance(agent, dict) else None
        model = llm.get("model") if isinstance(llm, dict) else None
        if isinstance(model, str):  # the model the conversation's agent ran
            event["model"] = model
        return (b"" if self._first else b",") + json.dumps(event).encode()

    def read(self, size: int = -1) -> bytes:
        while not self._done and (size < 0 or len(self._pending) < size):
            self._pending += self._next()
        if size < 0:
            data, self._pending = self._pending, b""
        else:
            data, self._pending = self._pending[:size], self._pending[size:]
        return data

    def readline(self, size: int = -1) -> bytes:
        while not self._done and b"\n" not in self._pending and (
                size < 0 or len(self._pending) < size):
            self._pending += self._next()
        end = self._pending.find(b"\n") + 1 or len(self._pending)
        if size >= 0:
            end = min(end, size)
        data, self._pending = self._pending[:end], self._pending[end:]
        return data

    def __enter__(self) -> _Events:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def triage_file(path: Path, label: str, *, progress: Callable[[int], None] | None = None,
                ) -> tuple[InputResult, list[SessionResult]]:
    """Triage one file (or an OpenHands V1 conversation folder, read as one event array):
    its input row and its sessions (kept even when reading fails).

    Never raises for the input's sake: whatever reading it raises (an ``Exception``) is its
    FC-DATA-003 naming where reading got to (the module's rules)."""
    read = triage_file_from(path, label, progress=progress, checkpoint=False)
    return read.item, read.sessions


class FileRead(NamedTuple):
    """One input read (:func:`triage_file_from`)."""

    item: InputResult
    sessions: list[SessionResult]
    checkpoint: Checkpoint | None = None
    """Where this reading stopped (:mod:`._resume`); None for an input read with an error,
    one that does not end with a line break, or one whose reader cannot resume."""
    resumed: bool = False
    """It went on from where an earlier reading stopped."""


class _Taken:
    """What a resumable reading leaves: its checkpoint, and whether it resumed."""

    __slots__ = ("checkpoint", "resumed")

    def __init__(self) -> None:
        self.checkpoint: Checkpoint | None = None
        self.resumed = False


def triage_file_from(path: Path, label: str, *, progress: Callable[[int], None] | None = None,
                     resume: Checkpoint | None = None, checkpoint: bool = True) -> FileRead:
    """:func:`triage_file` going on from where an earlier reading of the same file stopped
    (``resume``, when its reader can: :mod:`failcode.triage.analysis._resume`), and where
    this one stopped (``checkpoint``)."""
    sessions: list[SessionResult] = []
    position = Position()
    taken = _Taken() if checkpoint or resume is not None else None
    try:
        item = _triage_file(path, label, progress, sessions, position, resume=resume,
                            taken=taken)
    except Exception as exc:  # noqa: BLE001 - one input's failure is its own, never the run's
        return FileRead(_failed(label, None, "FC-DATA-003", unexpected(exc, position), size=0,
                                sessions=len(sessions)), sessions)
    if taken is None:
        return FileRead(item, sessions)
    return FileRead(item, sessions, taken.checkpoint if item.error_code is None else None,
                    taken.resumed)


def unexpected(exc: BaseException, position: Position | None = None) -> str:
    """The problem (FC-DATA-003) of an error no reader expected, and where it happened."""
    at = position.describe() if position is not None else ""
    if isinstance(exc, RecursionError):
        return f"nested too deeply to read{at} (RecursionError)"
    if isinstance(exc, MemoryError):
        return f"too large for the memory available{at} (MemoryError)"
    text = redact(first_line(str(exc), 120))
    return f"reading it failed{at} ({type(exc).__name__}{': ' + text if text else ''})"


def _triage_file(path: Path, label: str, progress: Callable[[int], None] | None,
                 sessions: list[SessionResult], position: Position,
                 *, resume: Checkpoint | None = None, taken: _Taken | None = None,
                 ) -> InputResult:
    try:
        folder = path.is_dir() and is_conversation(path)
        if folder:  # the head from one pass over the events, the reading from another
            size = sum(p.stat().st_size for p in (path / "events").glob("event-*.json"))
            head = _Events(path).read(HEAD_BYTES)
        elif path.is_dir():  # a folder walking could not list (see expand)
            return _failed(label, None, "FC-DATA-005", _unlisted(path), size=0)
        else:
            size = path.stat().st_size
        with (_Events(path) if folder else open_regular(path)) as raw:
            if not isinstance(raw, _Events):
                head = raw.read(HEAD_BYTES)
                raw.seek(0)
            if not head.strip():
                code, problem = ("FC-DATA-004", "") if not head else (
                    "FC-DATA-002", "only white space")
                return _failed(label, None, code, problem, size=size)
            binary = _is_binary(head)
            reader = _path_reader(head) if binary else detect(head)
            if binary and reader is None:
                return _failed(label, None, "FC-DATA-002", "binary data, not a session log",
                               size=size)
            if reader is None:
                problem = "no reader recognises its content; supported: " + ", ".join(FORMATS)
                return _failed(label, None, "FC-DATA-002", problem, size=size)
            try:
                if _reads_path(reader):
                    _read(reader.read_path(path, label), label, reader.name, sessions, position)
                elif taken is not None and not folder and _resumable(reader):
                    stream = _Counting(raw, progress, head, position)
                    _read_resuming(reader, stream, label, sessions, resume=resume, taken=taken)
                else:
                    events = reader.read(_Counting(raw, progress, head, position),  # type: ignore[arg-type]
                                         label)
                    _read(events, label, reader.name, sessions, position)
            except InputError as exc:
                if exc.message is not None:
                    return InputResult(label, reader.name, len(sessions), exc.code,
                                       exc.message, size)
                return _failed(label, reader.name, exc.code, exc.problem, size=size,
                               sessions=len(sessions))
            return InputResult(label, reader.name, len(sessions), size=size)
    except OSError as exc:
        problem = exc.strerror or type(exc).__name__
        return _failed(label, None, "FC-DATA-005", problem if isinstance(exc, NotRegularError)
                       else problem.lower(), size=0, sessions=len(sessions))


def _resumable(reader: Reader) -> TypeGuard[ResumableReader]:
    """A reader that can stop after any line and go on later (:mod:`._resume`)."""
    return hasattr(reader, "state_type")


_STATE_ENCODER: Final = msgspec.msgpack.Encoder()


def _read_resuming(reader: ResumableReader, stream: _Counting, label: str,
                   sessions: list[SessionResult], *, resume: Checkpoint | None,
                   taken: _Taken) -> None:
    """:func:`_read` of a resumable reader, from ``resume`` when it is this reader's and
    decodes (else from the start); ``taken`` says whether it resumed and, when the input ends
    with a line break, where it stopped."""
    reading = _Reading(label, reader.name, sessions, stream.position)
    state: Any = None
    if resume is not None and resume.reader == reader.name:
        try:
            state = msgspec.msgpack.decode(resume.state, type=reader.state_type)
            reading.restore(resume.reading)
        except Exception:  # noqa: BLE001 - a state that does not decode: read it whole
            state = None
            del sessions[reading.first:]
            reading = _Reading(label, reader.name, sessions, stream.position)
        else:
            stream.skip(resume.offset, resume.lines)
            taken.resumed = True
    if state is None:
        state = reader.state_type()
    first = stream.position.line
    reading.feed(reader.lines(stream, label, state, first_line=first))  # type: ignore[arg-type]
    if stream.ended_line:
        with contextlib.suppress(Exception):  # a state msgpack cannot hold: no checkpoint
            taken.checkpoint = Checkpoint(stream.offset, edges(stream.fileno(), stream.offset),
                               stream.position.line, reader.name, _STATE_ENCODER.encode(state),
                               reading.snapshot())
    reading.feed(reader.finish(state))
    reading.close()


def _unlisted(folder: Path) -> str:
    """Why a folder cannot be walked (its listing's error)."""
    try:
        with os.scandir(folder) as entries:
            for _ in entries:
                pass
    except OSError as exc:
        reason = (exc.strerror or type(exc).__name__).lower()
    else:  # readable now (it was not while walking)
        reason = "it could not be listed while walking"
    return f"{reason} (a folder: the session logs in it, if any, are not read)"


def _read(events: Iterator[Any], label: str, fmt: str, out: list[SessionResult],
          position: Position | None = None) -> None:
    """One input's events become its sessions, appended to ``out`` (:class:`_Reading`)."""
    reading = _Reading(label, fmt, out, position)
    reading.feed(events)
    reading.close()


class _Reading:
    """One input's events becoming its sessions, fed in any number of parts; between two,
    :meth:`snapshot` says where it got to and :meth:`restore` goes on from there (incremental
    triage: :mod:`failcode.triage.analysis._resume`)."""

    def __init__(self, label: str, fmt: str, out: list[SessionResult],
                 position: Position | None = None) -> None:
        self.label, self.fmt, self.out, self.position = label, fmt, out, position
        self.default = Path(label).stem
        self.current: _Session | None = None
        self.last_step = -1
        self.first = len(out)
        self.said: set[int] = set()
        """``id`` of the finished sessions that hold messages (kept with no step)."""

    def feed(self, events: Iterator[Any]) -> None:
        """Read ``events``; an error any of them raises is this input's (FC-DATA-003)."""
        label, fmt, default, out = self.label, self.fmt, self.default, self.out
        current, last_step = self.current, self.last_step
        try:
            for event in events:
                if isinstance(event, SessionStart):
                    current, last_step = _Session(event.name), -1
                    continue
                if current is None:
                    current, last_step = _Session(None), -1
                stamp = getattr(event, "timestamp", None)
                if stamp is not None and (current.started is None or stamp < current.started):
                    current.started = stamp
                if isinstance(event, SessionEnd):
                    out.append(current.end(event, label, fmt, default))
                    if event.said:
                        self.said.add(id(out[-1]))
                    current = None
                elif isinstance(event, Command):
                    current.command(event)
                    last_step = max(last_step, event.step if event.step is not None else -1)
                elif isinstance(event, ErrorText):
                    current.error(event)
                    last_step = max(last_step, event.step if event.step is not None else -1)
                elif isinstance(event, Recorded):
                    current.add_failure(event.step, event.source, event.evidence,
                                        event.failure, repeats=event.repeats,
                                        timestamp=event.timestamp, masked=event.masked,
                                        actor=event.actor)
                    last_step = max(last_step, event.step if event.step is not None else -1)
                elif isinstance(event, RecordedOutcome):
                    current.outcomes.append(OutcomeEntry(
                        event.step, event.source, event.evidence, event.outcome,
                        _clean(event.actor)))
                    last_step = max(last_step, event.step if event.step is not None else -1)
                elif isinstance(event, Wrote):
                    current.wrote(event)
                elif isinstance(event, About):
                    current.about(event)
                elif isinstance(event, Usage):
                    current.usage(event, last_step if event.after is None else event.after)
                elif isinstance(event, Rejected):
                    outcome = RejectedAction(
                        action=redact(event.action)[:EVIDENCE_CHARS] or "?",
                        reason=redact(event.reason)[:300] or "?")
                    current.outcomes.append(OutcomeEntry(
                        event.step, "tool", _evidence(event.action or event.reason), outcome,
                        _clean(event.actor)))
                    last_step = max(last_step, event.step if event.step is not None else -1)
        except Exception as exc:  # noqa: BLE001 - whatever it is, it is this input's error
            damage = exc if isinstance(exc, InputError) else InputError(
                "FC-DATA-003", unexpected(exc, self.position))
            if current is not None:  # keep what was read before the damage
                with contextlib.suppress(Exception):  # unless the session is what fails
                    out.append(current.end(SessionEnd(last_step + 1, "unknown"), label, fmt,
                                           default))
            self.current = None
            raise damage from None
        self.current, self.last_step = current, last_step

    def snapshot(self) -> bytes:
        """Where the reading got to, encoded now (later events change the open session)."""
        done = self.out[self.first:]
        current = self.current
        state = ReadingState(
            done,
            None if current is None else SessionState(
                current.name, list(current.failures.values()), current.outcomes,
                sorted(current.provided), current.model, current.agent_version,
                current.tokens, current.started),
            self.last_step,
            [i for i, session in enumerate(done) if id(session) in self.said])
        return _READING_ENCODER.encode(state)

    def restore(self, data: bytes) -> None:
        """Go on from a :meth:`snapshot` (raises when ``data`` does not decode)."""
        state = _READING_DECODER.decode(data)
        self.out.extend(state.sessions)
        self.said = {id(self.out[self.first + i]) for i in state.said}
        self.last_step = state.last_step
        self.current = None
        if state.current is not None:
            current = self.current = _Session(state.current.name)
            current.failures = {(e.step, e.failure.signature): e for e in state.current.failures}
            current.outcomes = state.current.outcomes
            current.provided = set(state.current.provided)
            current.model, current.agent_version = state.current.model, state.current.agent_version
            current.tokens, current.started = state.current.tokens, state.current.started
            for entry in state.current.failures:  # as add_failure left them, in its order
                if entry.step is not None:
                    current.at_step.setdefault(entry.step, entry)
                if entry.timestamp is not None and entry.recovery_s is None:
                    current.unrecovered.append(entry)

    def close(self) -> None:
        """Drop the sessions with nothing in them; FC-DATA-002 when none is left."""
        out, first = self.out, self.first
        # a session with nothing in it (no step, failure, outcome, end or message: a record
        # that names another or an empty session id) is not a session
        kept = [s for s in out[first:] if s.steps or s.failures or s.outcomes
                or s.status != "unknown" or id(s) in self.said]
        out[first:] = kept
        if not kept:  # the reader's detection matched, but nothing in it is a session of it
            raise InputError("FC-DATA-002", f"it looks like a {self.fmt} log but holds no step "
                                            "of a session (no command, tool call, failure or "
                                            "end)")


_READING_ENCODER: Final = msgspec.msgpack.Encoder()
_READING_DECODER: Final = msgspec.msgpack.Decoder(ReadingState)


def _failed(label: str, fmt: str | None, code: str, problem: str, *, size: int,
            sessions: int = 0) -> InputResult:
    failure = FC[_BY_CODE[code]].failure(surface="triage.input",
                                         params={"path": label, "problem": problem[:200]})
    return InputResult(label, fmt, sessions, code, failure.message, size)


_BY_CODE: Final = {"FC-DATA-002": "DATA_UNKNOWN_FORMAT", "FC-DATA-003": "DATA_MALFORMED_INPUT",
                   "FC-DATA-004": "DATA_EMPTY_INPUT", "FC-DATA-005": "DATA_UNREADABLE_INPUT"}


AGENT_LOGS: Final = {
    ".claude": "projects/**/*.jsonl",
    ".codex": "sessions/**/rollout-*.jsonl",
    ".gemini": "tmp/*/chats/session-*.json*",
    ".openhands": "conversations/*",
    ".copilot": "session-state/*/events.jsonl|session-state/*.jsonl",
    ".qwen": "projects/*/chats/*.jsonl",
    ".cline": "data/tasks/*/ui_messages.json|data/sessions/*/*.messages.json",
}
"""The hidden folders agents keep their logs in (under a project or HOME), and where in each
the session logs are (``|`` between alternatives): walking a folder looks there and nowhere
else in them (their other files are settings, caches and histories, not sessions)."""
AGENT_FILES: Final = frozenset({".aider.chat.history.md"})
"""Hidden files that are session logs (aider writes its history into the project)."""


def _agent_logs(folder: Path) -> list[Path]:
    """The session logs in an agent's folder: the paths its :data:`AGENT_LOGS` pattern names
    (``**`` any folders, ``*`` any name), walked only where the pattern can match. A folder on
    the way that cannot be listed is returned as an input (its FC-DATA-005 from
    :func:`triage_file`), never dropped as ``glob`` would; symlinked folders are followed,
    each real folder once."""
    patterns = [pattern.split("/") for pattern in AGENT_LOGS[folder.name].split("|")]
    try:
        with os.scandir(folder) as entries:
            next(entries, None)
    except OSError:
        return [folder]  # its error (FC-DATA-005), from triage_file
    found: list[Path] = []

    def unlisted(error: OSError) -> None:
        found.append(Path(error.filename))

    def matches(names: list[str]) -> bool:
        """``names`` (a relative path) matches a pattern (``**``: zero or more names)."""
        return any(_match(parts, names) for parts in patterns)

    def may_hold(names: list[str]) -> bool:
        """Some path under ``names`` can match a pattern."""
        return any(_may_hold(parts, names) for parts in patterns)

    def _may_hold(parts: list[str], names: list[str]) -> bool:
        for index, name in enumerate(names):
            if index >= len(parts) - 1:
                return False
            if parts[index] == "**":
                return True
            if not fnmatch.fnmatchcase(name, parts[index]):
                return False
        return True

    seen = {_folder_key(folder)}
    for root, dirs, files in os.walk(folder, onerror=unlisted, followlinks=True):
        here = Path(root)
        under = [] if here == folder else list(here.relative_to(folder).parts)
        walk_on: list[str] = []
        for name in sorted(dirs):
            names = [*under, name]
            if matches(names) and is_conversation(here / name):
                found.append(here / name)
            elif may_hold(names) and _first_visit(here / name, seen):
                walk_on.append(name)
        dirs[:] = walk_on
        found.extend(here / name for name in files if matches([*under, name]))
    return sorted(found)  # FIFOs too: skipped and counted


def _match(parts: list[str], names: list[str]) -> bool:
    if not parts:
        return not names
    if parts[0] == "**":
        return any(_match(parts[1:], names[start:]) for start in range(len(names) + 1))
    return bool(names) and fnmatch.fnmatchcase(names[0], parts[0]) and _match(parts[1:],
                                                                              names[1:])


def _folder_key(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def _first_visit(path: Path, seen: set[tuple[int, int] | None]) -> bool:
    """Whether walking should enter ``path``: a folder (or a symlink to one) not entered yet
    (a symlink back up the tree, or two links to one folder, is walked once). A folder whose
    identity cannot be read is entered: listing it reports its error."""
    key = _folder_key(path)
    if key is None:
        return True
    if key in seen:
        return False
    seen.add(key)
    return True


def _is_special(path: Path) -> bool:
    """A FIFO, socket or device (never opened; found by walking, skipped and counted)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False  # its error, from triage_file
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


class Expanded(list[tuple[Path, str]]):
    """The inputs :func:`expand` found (``(path, label)`` pairs, a list), and what it left."""

    def __init__(self) -> None:
        super().__init__()
        self.skipped: list[str] = []
        """Files found by walking a folder that are not session logs (not read, counted)."""
        self.empty: list[str] = []
        """Folders named that hold no session log."""
        self._seen: set[object] = set()

    def append(self, item: tuple[Path, str]) -> None:
        """Add an input once: the same file named twice, or named and found by walking, is
        read once (under the first label it came with).

        The same file is the same device and inode (one ``stat``; resolving every folder of a
        path costs ten times as much on a home of thousands of sessions); a path that cannot be
        stat-ed (missing, a symlink loop: its own error, kept) is itself."""
        try:
            found = item[0].stat()
            key: object = (found.st_dev, found.st_ino)
        except (OSError, ValueError):
            key = str(item[0])
        if key not in self._seen:
            self._seen.add(key)
            super().append(item)

    def extend(self, items: Iterable[tuple[Path, str]]) -> None:
        for item in items:
            self.append(item)


def _is_log(path: Path) -> bool | None:
    """Whether a file found by walking is a session log a reader detects: False for anything
    else (not a regular file, empty, binary, no reader's format); None when it cannot be
    opened, so that triage reports it (FC-DATA-005) instead of dropping it."""
    try:
        with open_regular(path) as handle:  # a FIFO, socket or device is never opened
            head = handle.read(HEAD_BYTES)
    except NotRegularError:
        return False
    except OSError:
        return None
    try:
        if _is_binary(head):
            reader = _path_reader(head)
            return reader is not None and reader.owns(path)
        return bool(head.strip()) and detect(head) is not None
    except Exception:  # noqa: BLE001 - a detection that fails: triage reports it
        return None


def _wanted(relative: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    """``--include``/``--exclude`` globs, matched on the path under the walked folder and on
    the file's name."""
    name = relative.rsplit("/", 1)[-1]

    def hit(patterns: Sequence[str]) -> bool:
        return any(fnmatch.fnmatchcase(relative, g) or fnmatch.fnmatchcase(name, g)
                   for g in patterns)

    return (not include or hit(include)) and not hit(exclude)


def _walk(folder: Path, out: Expanded, include: Sequence[str], exclude: Sequence[str]) -> None:
    def add(path: Path, *, sniff: bool) -> None:
        relative = path.relative_to(folder).as_posix()
        if not _wanted(relative, include, exclude):
            return
        if read_with_trajectory(path) or (_is_log(path) is False if sniff
                                          else _is_special(path)):
            out.skipped.append(str(path))
            return
        out.append((path, str(path)))

    def unlisted(error: OSError) -> None:  # a folder walking cannot list: an input, its error
        out.append((Path(error.filename), str(error.filename)))

    seen = {_folder_key(folder)}
    for root, dirs, files in os.walk(folder, onerror=unlisted, followlinks=True):
        here = Path(root)
        agent = sorted(d for d in dirs if d in AGENT_LOGS)
        dirs[:] = [d for d in sorted(dirs) if not d.startswith(".")
                   and _first_visit(here / d, seen)]
        for name in agent:
            for found in _agent_logs(here / name):
                add(found, sniff=False)
        conversations = [d for d in dirs if is_conversation(here / d)]
        for name in conversations:
            add(here / name, sniff=False)
        dirs[:] = [d for d in dirs if d not in conversations]
        for name in sorted(files):
            if not name.startswith(".") or name in AGENT_FILES:
                add(here / name, sniff=True)


def expand(paths: Iterable[str | os.PathLike[str] | tuple[Path, str]], *,
           include: Sequence[str] = (), exclude: Sequence[str] = ()) -> Expanded:
    """Files to triage: each path, directories walked in sorted order; a file named twice (or
    named and found by walking) is one input.

    A file named is always an input (one that is not a log is its error). Walking a folder,
    hidden names are skipped, except the agents' own logs: :data:`AGENT_FILES`, and in the
    folders of :data:`AGENT_LOGS` (also when one is named itself) the files their pattern
    names; a file no reader detects (notes, settings, binaries, FIFOs...) is skipped and
    counted in :attr:`Expanded.skipped`; ``include``/``exclude`` globs select the walked files
    (on the path under the folder, or the name). A folder that yields no session log is in
    :attr:`Expanded.empty`. A ``(path, label)`` pair names a file in reports by ``label``
    instead of its path. An OpenHands V1 conversation folder (:func:`is_conversation`) is one
    input, not walked.
    """
    out = Expanded()
    for raw in paths:
        if isinstance(raw, tuple):
            out.append(raw)
            continue
        path = Path(raw)
        before = len(out)
        if path.is_dir() and is_conversation(path):
            out.append((path, str(raw)))
        elif path.is_dir() and path.name in AGENT_LOGS:  # ~/.claude named: its logs only
            for found in _agent_logs(path):
                if _is_special(found):
                    out.skipped.append(str(found))
                else:
                    out.append((found, str(found)))
        elif path.is_dir():
            _walk(path, out, include, exclude)
        else:
            out.append((path, str(raw)))
        if path.is_dir() and len(out) == before:
            out.empty.append(str(raw))
    return out


def empty_folder(label: str, skipped: int) -> InputResult:
    """The input row of a folder named that holds no session log: FC-DATA-004 (an empty
    input), its message naming the folder and what was skipped in it."""
    note = (f" ({skipped} file in it is not a session log)" if skipped == 1 else
            f" ({skipped} files in it are not session logs)" if skipped else "")
    return InputResult(label, None, 0, FC.DATA_EMPTY_INPUT.value,
                       f"The folder {label[:200]} holds no session log{note}.", 0)


def triage(paths: Iterable[str | os.PathLike[str] | tuple[Path, str]], *,
           progress: Callable[[int], None] | None = None, jobs: int = 1,
           include: Sequence[str] = (), exclude: Sequence[str] = (),
           cache: bool = False) -> TriageResult:
    """Triage files and directories; see the module docstring for the rules.

    Args:
        paths: files or directories (walked recursively), or ``(path, label)`` pairs.
        progress: called with the number of bytes read, as reading goes (per file when
            files are read in parallel).
        jobs: how many processes read the files (``failcode.triage.analysis._run``); the result is
            the same whatever the number. 1 (the default) reads them in this process.
        include: globs selecting the files found by walking folders (path or name).
        exclude: globs of walked files to leave out.
        cache: take the inputs whose content is unchanged since an earlier run from the
            cache, and keep the others' results in it (:mod:`failcode.triage.analysis._cache`);
            the result is the same as without (``cached_inputs`` says how many came from it).

    Returns:
        A :class:`TriageResult`; inputs that could not be read carry their FC code.
    """
    from failcode.triage.analysis._run import FileResults  # noqa: PLC0415 - it imports this module

    files = expand(paths, include=include, exclude=exclude)
    result = TriageResult(skipped=list(files.skipped))
    store = None
    if cache:
        from failcode.triage.analysis._cache import Cache  # noqa: PLC0415

        store = Cache()
    with FileResults(files, jobs=jobs, progress=progress, cache=store) as results:
        for item, sessions in results:
            result.inputs.append(item)
            result.sessions.extend(sessions)
        result.cached_inputs = results.cached if store is not None else None
        result.resumed_inputs = results.resumed if store is not None else None
    result.inputs.extend(empty_folder(folder, skipped_in(folder, files.skipped))
                         for folder in files.empty)
    return result


def skipped_in(folder: str, skipped: list[str]) -> int:
    """How many of the skipped files are under ``folder``."""
    prefix = str(Path(folder)) + os.sep
    return sum(path.startswith(prefix) for path in skipped)


