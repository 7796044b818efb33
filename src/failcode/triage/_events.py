"""What a reader yields: the steps of a session as plain, format-free events.

A reader turns one input into a stream of events, session by session, without building the
whole log in memory. Triage (``_analyze``) classifies them; a reader never calls a classifier,
so every rule in a reader is about the format or the tool that wrote it.

Event order per session: :class:`SessionStart`, then any of :class:`Command`,
:class:`ErrorText`, :class:`Rejected`, :class:`Recorded`, :class:`RecordedOutcome`,
:class:`Wrote`, :class:`About`, then exactly one :class:`SessionEnd`. ``Recorded`` and
``RecordedOutcome`` carry what was classified when it happened (failcode's own events): triage
takes them as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

# at run time, not only for type checkers: a resumable reader's state holds these events, and
# the triage cache decodes it with msgspec, which resolves their annotations
from failcode import Failure, NonErrorOutcome  # noqa: TC001
from failcode.record._outcomes import SESSION_STATUSES

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from typing import BinaryIO

__all__ = [
    "END_STATUSES",
    "SOURCES",
    "VERDICTS",
    "About",
    "Command",
    "ErrorText",
    "Event",
    "InputError",
    "PathReader",
    "Reader",
    "Recorded",
    "RecordedOutcome",
    "Rejected",
    "ResumableReader",
    "SessionEnd",
    "SessionStart",
    "Usage",
    "Wrote",
    "cancelled",
]

SOURCES: Final = ("command", "provider", "tool", "agent", "harness")
"""Where a failure came from: a shell command, the model provider, a tool's own failure, the
agent itself (its limits, a crash), the harness or runtime around it."""

END_STATUSES: Final = SESSION_STATUSES
VERDICTS: Final = ("passed", "partial", "failed", "ungraded")
"""A verifier's grade: full reward, some reward, none, or no valid reward (the verifier or
its sandbox failed, so the reward measures nothing)."""


@dataclass(frozen=True, slots=True)
class SessionStart:
    """A new session begins (formats with one session per file yield it once)."""

    name: str | None = None
    """The session's name when the format gives it up front (else :class:`SessionEnd` may)."""


@dataclass(frozen=True, slots=True)
class Command:
    """A shell command the agent ran, with its result as far as the format records it."""

    step: int | None
    command: str
    exit_code: int | None
    """None when the format records no exit status (the reader then decides from the output
    whether the command failed, and passes 1 when it did)."""
    output: str = ""
    timestamp: float | None = None
    timed_out: bool = False
    running: bool = False
    """Still running when the log was written (OpenHands' exit code -1): not a failure."""
    source: str = "command"
    purpose: str | None = None
    """The command's purpose when the format says (aider's lint step, ``/test``); else
    triage infers it from the command."""
    actor: str | None = None
    """Who ran it, in a team of agents: the agent that took the step (AG2's message ``name``,
    AutoGen's ``source``); None when the format has no agents of its own."""


@dataclass(frozen=True, slots=True)
class ErrorText:
    """An exception known only as text: a provider error, a harness traceback, a tool error."""

    step: int | None
    source: str
    """One of :data:`SOURCES`."""
    type_name: str
    message: str
    traceback: str | None = None
    evidence: str | None = None
    """What lets a person find it; default ``type_name: first line of message``."""
    timestamp: float | None = None
    repeats: int = 1
    """How many times the format logged this same failure for the step."""
    limit: str | None = None
    """For the agent giving up: which limit (``iteration``, ``cost``, ``time``)."""
    context_window: bool = False
    """The format itself says the model's context window was exceeded (SWE-agent's
    ``exit_context``, mini-swe-agent's ``ContextWindowExceeded``), whatever the text."""
    tool: str | None = None
    """For a tool's own crash (source ``tool``): the tool whose code raised."""
    actor: str | None = None
    """The agent that took the step, in a team of agents (see :attr:`Command.actor`)."""


@dataclass(frozen=True, slots=True)
class Rejected:
    """A model-proposed action the tool refused and fed back (an outcome, never a failure)."""

    step: int | None
    action: str
    reason: str
    timestamp: float | None = None
    actor: str | None = None
    """The agent that proposed it, in a team of agents (see :attr:`Command.actor`)."""


@dataclass(frozen=True, slots=True)
class Recorded:
    """A failure classified when it happened (a failcode event): triage keeps it as it is."""

    step: int | None
    source: str
    """One of :data:`SOURCES`."""
    evidence: str
    failure: Failure
    timestamp: float | None = None
    repeats: int = 1
    masked: bool = False
    """Triage found it in the output of a command that exited 0 (``_masking``)."""
    actor: str | None = None
    """The agent that took the step, in a team of agents (see :attr:`Command.actor`)."""


@dataclass(frozen=True, slots=True)
class RecordedOutcome:
    """A non-error outcome recorded when it happened (a failcode event)."""

    step: int | None
    source: str
    evidence: str
    outcome: NonErrorOutcome
    timestamp: float | None = None
    actor: str | None = None
    """The agent that took the step, in a team of agents (see :attr:`Command.actor`)."""


@dataclass(frozen=True, slots=True)
class About:
    """What the format records of who ran the session: the model and the agent's version (a
    field left None keeps what an earlier ``About`` said). Not a step."""

    model: str | None = None
    agent_version: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """One model turn's tokens, as the log records them (not a step): what the turn after a
    step cost (``failcode.triage.analysis``: charged to the step whose result came last).

    ``input`` is the input not read from or written to the prompt cache (Anthropic's
    ``input_tokens``; OpenAI's and Google's input minus their cached part), ``output`` includes
    reasoning ("thoughts"), ``cache_read`` and ``cache_write`` are the cache's parts of the
    input. ``model`` is the turn's model when the line names it (else the session's)."""

    input: int
    output: int
    cache_read: int = 0
    cache_write: int = 0
    model: str | None = None
    timestamp: float | None = None
    after: int | None = None
    """The step whose result the turn read last (None: the reader does not say, and triage
    takes the last step it saw), so a step that yields no event (a file read that
    succeeded) still ends what the failure before it is charged."""
    usd: float | None = None
    """What the turn cost in US dollars as the log records it (the agent priced it with its
    own table: mini-swe-agent's ``extra.cost``, the increase of OpenHands'
    ``accumulated_cost``); None when the log records no price of the turn, and triage prices it
    from genai-prices. Only ever a turn's own price: a session's total is never one turn's."""
    priced_by: str | None = None
    """Who computed :attr:`usd` (the agent: ``mini-swe-agent``, ``openhands``)."""


@dataclass(frozen=True, slots=True)
class Wrote:
    """A file the agent wrote or edited through a tool (not a shell command): its path and the
    text it put there, as far as the format records it. Not a step and never a failure: what
    the session's own repository provides (:mod:`failcode.triage.analysis._provided`)."""

    path: str
    text: str = ""


@dataclass(frozen=True, slots=True)
class SessionEnd:
    """The session is over: its name, step count and how it ended, where the format says."""

    steps: int
    status: str = "unknown"
    """One of :data:`END_STATUSES`."""
    name: str | None = None
    error: ErrorText | None = None
    """What ended the session, when the format says (a provider error, a limit...)."""
    timestamp: float | None = None
    failure: Failure | None = None
    """What ended the session, already classified (a :class:`Recorded` failure of it)."""
    said: bool = False
    """The session holds messages of a person or the model: it is a session even with no
    step, failure or end (a chat in which no tool ran, a subagent's short answer)."""
    verdict: str | None = None
    """A benchmark harness's grade of the task (one of :data:`VERDICTS`), where the format
    records one: a Harbor trial's verifier. ``failed`` is a failed ending even when every
    step succeeded; how the agent stopped is :attr:`status`."""
    reward: float | None = None
    """The verifier's reward behind :attr:`verdict` (None when it gave none or it is not a
    valid measurement)."""
    recorded_usd: float | None = None
    """What the whole session cost in US dollars as the log records it, where the agent or
    harness writes one total for the session (stream-json's ``total_cost_usd``,
    ``model_stats.instance_cost``, OpenHands' ``accumulated_cost``, ATIF's
    ``total_cost_usd``, aider's ``$N session``); None when it records none, or records 0
    because it could not price the calls. A total of the session, never split over its
    turns: charged to no failure."""


Event = (SessionStart | Command | ErrorText | Rejected | Recorded | RecordedOutcome | Wrote
         | About | Usage | SessionEnd)


def cancelled(step: int | None, action: str, reason: str,
              timestamp: float | None = None) -> RecordedOutcome:
    """A call that never ran or was stopped: a person rejected or interrupted it, or the
    agent cancelled it because a sibling call failed (an outcome, never a failure)."""
    from failcode import Cancelled  # noqa: PLC0415 - the record layer, loaded with triage

    return RecordedOutcome(step, "tool", action[:200] or "tool call", Cancelled(reason=reason),
                           timestamp)


class InputError(Exception):
    """An input cannot be read (further): ``code`` is an FC code, ``problem`` says why.

    Raised by a reader; the events it yielded before are kept. ``message`` is the full
    message when the code is not one of triage's FC-DATA codes (which it builds from
    ``problem``).
    """

    def __init__(self, code: str, problem: str, message: str | None = None) -> None:
        super().__init__(problem)
        self.code = code
        self.problem = problem
        self.message = message


class Reader(Protocol):
    """One log format: detect it from the first bytes, then stream its sessions as events."""

    name: str
    """The format's name in reports (``mini-swe-agent``)."""

    def sniff(self, head: bytes) -> bool:
        """True when ``head`` (the input's first bytes, up to 64 KiB) is in this format."""
        ...

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """Yield the input's events; raise :class:`InputError` where it cannot go on.

        ``label`` is how the input is named in reports (its path); a reader may use its stem
        as a session name when the format carries none. ``stream.peek()`` returns the
        input's first bytes (those ``sniff`` saw), whatever has been read since.
        """
        ...


class ResumableReader(Reader, Protocol):
    """A JSON-lines format whose reading can stop after any whole line and go on from there
    later (incremental triage of a file that only grew): ``read`` is :meth:`lines` over the
    whole input with a fresh state, then :meth:`finish`.

    The state is a ``msgspec.Struct`` of type :attr:`state_type` (encoded into the triage
    cache between runs); ``lines`` leaves in it everything a later call needs, and writes it
    only once every line of the stream was read.
    """

    state_type: type[Any]

    def lines(self, stream: BinaryIO, label: str, state: Any, *, first_line: int = 0,
              ) -> Iterator[Event]:
        """The events of the stream's lines (``first_line`` lines came before its first),
        ``state`` brought up to date when the stream ends."""
        ...

    def finish(self, state: Any) -> Iterator[Event]:
        """The events of the input's end (the session's end; calls never answered)."""
        ...


class PathReader(Reader, Protocol):
    """A format read by path, not as a stream (a SQLite database and the write-ahead log
    beside it): ``reads_path`` is True; detection still sniffs the head (binary data, which
    triage otherwise refuses as FC-DATA-002)."""

    reads_path: bool

    def owns(self, path: Path) -> bool:
        """Whether the file at ``path`` is in this format (walking a folder keeps only those)."""
        ...

    def read_path(self, path: Path, label: str) -> Iterator[Event]:
        """Yield the events of the file at ``path``, as :meth:`Reader.read` does."""
        ...
