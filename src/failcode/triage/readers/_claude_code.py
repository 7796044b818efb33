"""Claude Code session transcripts (JSON lines under ``~/.claude/projects/``).

Rules (about the format and the tool; the 0.2.x to 2.x CLI writes the same JSON lines, newer
versions add fields and record types that are ignored when not named here):

- Detection: JSON lines whose objects carry ``type`` (``user``, ``assistant``, ``summary``,
  ``system``, ``queue-operation``) and ``sessionId``.
- A session is one ``sessionId``; a file may hold several, one after another. Lines without
  one before the first (``summary`` lines of a resumed session, file snapshots) start none.
  Sidechain (subagent) messages belong to the session they are in.
- A step is one ``tool_result`` block, numbered from 0 in file order; its tool call is the
  ``tool_use`` block with the same id. Its content is a string or a list of text blocks.
- A ``Bash`` result reads ``Exit code N`` (after ``Error: `` in some versions) then the output:
  a command that exited N; a result without that line and not ``is_error`` exited 0 (its
  output may still show a failure a pipe hid: ``_masking``), unless the line's
  ``toolUseResult`` has a ``returnCodeInterpretation`` ("No matches found" for ``grep``,
  "Condition is false" for ``test``): Claude Code 2.x records such an exit 1 as a success, and
  its text ``(Bash completed with no output)`` is no output. ``Command timed out after
  ...`` (alone in 1.x, after ``Exit code 143``/``255`` in 2.x) is a timeout; a command
  Claude Code moved to the background is still running, not a failure (2.1.3xx never kills
  one at its timeout: "Command did not complete within its Ns timeout and was moved to the
  background", "Command was moved to the background (ID: X) after running for Ns", "...
  so that a message that arrived while it was running can reach you", "Command was manually
  backgrounded by user", and ``run_in_background``'s "Command running in background"). A
  bare long ``sleep`` that Claude Code refuses to run (2.1.x: ``<tool_use_error>Blocked:
  standalone sleep N. To wait for a condition, use Monitor ...``, or ``sleep N followed by:
  ...``) is a rejected action, as every ``<tool_use_error>`` below. An error result without
  the exit-code line is a failed command (exit 1 unless its output says 127). The status is
  the line's digits; one outside -2**31..2**32-1 is FC-DATA-003 naming the transcript's line
  and the value (``_text``'s rules; the sessions before it are kept).
- Claude Code's own refusals (``<tool_use_error>...``: a file not read before writing, an
  unknown parameter), a ``PreToolUse`` hook blocking it (``PreToolUse:Bash hook returned
  blocking error``, ``PreToolUse:Bash hook blocking error from command: ...``; in 2.x ``Hook
  PreToolUse:Bash denied this tool``), its permission rules refusing it (``Claude requested
  permissions to use Bash, but you haven't granted it yet.`` when nobody can approve it,
  ``Permission to use Bash with command ... has been denied.``, "This Bash command contains
  multiple operations. The following parts require approval: ...", all in an ``is_error``
  result) and other tools' errors (a string to replace not found) are fed back to the model:
  rejected actions, never a failed command, whatever the tool. The permission texts are the
  2.1.x binary's own (``strings`` on the pinned package): ``Permission to use|edit|read X
  ... has been denied`` (a deny rule, or "don't ask" mode), ``Permission for this action
  has been denied. Reason: ...`` and ``... was denied by the Claude Code auto mode
  classifier``, ``Permission denied by hook``, ``Hook denied tool use for X``, "File is in a
  directory that is denied by your permission settings", ``Agent type 'X' has been denied by
  permission rule``, and every ``Claude requested permissions to use|read from|write
  to|edit|glob X ...`` (not granted yet, a sensitive file, a UNC or automount path: nobody
  approved it; the same texts in 1.x's ``cli.js``). A call that never ran or was stopped is
  cancelled, neither a failure nor part of a loop: Claude Code cancels the parallel calls
  beside one that failed
  (``<tool_use_error>Sibling tool call errored</tool_use_error>``; 2.1.x: ``Cancelled:
  parallel tool call X(...) errored``, and any ``<tool_use_error>Cancelled: ...``, the class
  its own renderer tells apart), a person rejected it ("The user doesn't want to proceed with
  this tool use", "The user doesn't want to take this action right now", or with their
  reason: "Permission for this tool use was denied. The tool use was rejected ...") or
  interrupted it (``[Request interrupted by user...``, or an error result that is the
  abort signal's own message, ``This operation was aborted``). A non-shell tool whose own
  helper program could not start (Node's ``spawn PATH EACCES`` / ``EPERM`` / ``ENOENT``, e.g.
  the ripgrep Claude Code ships for ``Glob`` and ``Grep``) failed in its environment: a tool
  failure (permission denied, a missing file), not a refusal. A session whose last word is
  an interrupt is not ``submitted`` (the agent's answer was cut off): ``unknown``.
- An assistant line marked ``isApiErrorMessage`` (text ``API Error: ...``; newer versions add
  ``apiErrorStatus`` and an ``error`` code such as ``rate_limit``) is a provider error; when
  it is the session's last word the session ended on it. Each ``system`` line of subtype
  ``api_error`` is one failed try of a request Claude Code retries (``retryAttempt`` of
  ``maxRetries``, ``retryInMs``; 2.1.3xx adds ``source``: ``request_retry``,
  ``connection_retry``, ``cut_retry``): a provider error of the session at no step (the step
  the request led to is its own), never how the session ended. Its ``error`` is what the
  binary keeps of the failed request (2.1.1xx to 2.1.3xx: ``message``, ``status``,
  ``formatted``, ``connection`` ``{code, message, isSSLError}``, ``isNetworkDown``,
  ``rateLimits``; 2.1.3xx adds ``noResponse``; older lines only ``status`` and ``message``,
  or the body under ``error.error``), and its kind is read from those fields by the
  classification layer's provider rules: an HTTP ``status`` decides (408 a timeout, 429 a
  rate limit, 529 overloaded, other 5xx a server error, the body's ``error.type`` where the
  message carries it); without one, ``noResponse`` or a ``connection.code`` Claude Code's own
  renderer calls a timeout (``ETIMEDOUT``, ``ConnectionIdle``, ``StreamNoResponse``) is a
  timeout, any other ``connection.code`` (``ECONNRESET``, ``ECONNREFUSED``, a TLS error) or
  ``isNetworkDown`` a connection error, and a bare message is read by its words. An HTTP
  status (``apiErrorStatus``, ``error.status``) is read when it is an integer in 100..599,
  else the error is kept without one.
- Time: each line's ``timestamp`` (Claude Code writes UTC with ``Z``; one without a zone would
  be read as UTC, ``_text``'s rules).
- How a session ended (the transcript has no end record): an ``attachment`` line of type
  ``max_turns_reached`` is the agent stopped at its turn limit (``limit``); a provider error
  that is the session's last word ended it (``provider_error``); a last main-chain assistant
  message that answers in text with no tool call pending (``stop_reason`` ``end_turn`` in 2.x,
  none in older versions) is the agent's final answer (``submitted``); anything else (a tool
  result or a prompt never answered, an interrupt) is ``unknown``. Subagent (sidechain) lines
  and bookkeeping lines (``system``, ``summary``, ``last-prompt``, snapshots) change nothing.
- The model is the assistant lines' ``message.model`` (``<synthetic>``, Claude Code's own
  error lines, aside), the agent's version each line's ``version``.
- Tokens: each assistant line's ``message.usage`` (``input_tokens``, ``output_tokens``,
  ``cache_read_input_tokens``, ``cache_creation_input_tokens``). Claude Code writes one line
  per content block of an API message, each with the message's usage so far (the output count
  grows): a message counts the most each field reached over its lines with its
  ``message.id`` (:func:`turn_usage`), yielded as a :class:`~failcode.triage._events.Usage`
  after the step whose result the turn reads: the last of the user line before it, none after
  a user line without a tool result (a prompt starts new work).
- Files the agent writes (``Write``'s ``content``, ``Edit``'s and ``MultiEdit``'s
  ``new_string``, ``NotebookEdit``'s ``new_source``, with ``file_path``/``notebook_path``) are
  yielded as :class:`~failcode.triage._events.Wrote`: what the session's repository provides.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

import msgspec

from failcode._lazy_re import lazy
from failcode.triage._events import (
    About,
    Command,
    ErrorText,
    Event,
    Rejected,
    SessionEnd,
    SessionStart,
    Usage,
    Wrote,
    cancelled,
)
from failcode.triage.readers._lines import json_objects
from failcode.triage.readers._swe_agent import shell_failed
from failcode.triage.readers._text import (
    as_dict,
    as_str,
    exit_in_text,
    first_line,
    http_status,
    iso_time,
)

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator
    from typing import BinaryIO

__all__ = ["ClaudeCodeReader", "ClaudeCodeState", "about_change", "api_error", "files_written",
           "provider_error_kind", "record_calls", "retried_api_error", "text_of", "tool_result",
           "tool_results", "turn_usage"]

_TYPES: Final = (b'"type":"user"', b'"type":"assistant"', b'"type":"queue-operation"',
                 b'"type":"summary"', b'"type":"system"', b'"type": "user"',
                 b'"type": "assistant"')
_EXIT: Final = lazy(r"^(?:Error: )?Exit code (-?\d+)\n?")
_TIMED_OUT: Final = lazy(r"^(?:Error: )?Command timed out after ")
_BACKGROUND: Final = lazy(r"^Command (?:did not complete within .{0,80}moved to the background"
                          r"|was moved to the background|was manually backgrounded"
                          r"|running in background)")
_USER_REJECTED: Final = ("The user doesn't want to proceed with this tool use",
                         "The user doesn't want to take this action right now",
                         "Permission for this tool use was denied. The tool use was rejected")
_ABORTED: Final = lazy(r"^(?:Error: )?(?:This|The) operation was aborted\.?\s*$")
_INTERRUPTED: Final = "[Request interrupted by user"
_HOOK: Final = lazy(r"^(?:Error: )?(?:(?:PreToolUse|PermissionRequest):\S+ hook "
                          r"(?:returned blocking error|blocking error|error|blocked)"
                          r"|Hook (?:PreToolUse|PermissionRequest):\S+ denied this tool)")
_PERMISSION: Final = lazy(
    r"^(?:Error: )?(?:\S+ requested permissions to (?:use|read from|write to|edit|glob) "
    r"|Permission to (?:use|edit|read|write) .{0,4000}?has been denied"
    r"|Permission for this action (?:has been|was) denied"
    r"|Permission denied by (?:\S+ )?hook|Hook denied tool use for "
    r"|File is in a directory that is denied by your permission settings"
    r"|Agent type .{0,200}? has been denied by permission rule"
    r"|This \S+ command .{0,200}?requires? approval)", re.DOTALL)
_SIBLING: Final = lazy(r"(?i)^(?:sibling tool call errored|cancelled: parallel tool call)")
_REFUSAL: Final = lazy(r"<tool_use_error>(.*?)</tool_use_error>", re.DOTALL)
_NO_OUTPUT: Final = lazy(r"^\((?:Bash )?completed with no output\)\s*$")
_SPAWN: Final = lazy(r"^(?:Error: )?spawn \S+ (EACCES|EPERM|ENOENT)\s*$")
_ERRNO: Final = {"EACCES": "PermissionError", "EPERM": "PermissionError",
                 "ENOENT": "FileNotFoundError"}
_API_ERROR: Final = lazy(r"API Error:?\s*(?:(\d{3})\s*)?(.*)", re.DOTALL)


def text_of(content: object) -> str:
    """A message's or result's content as text (a string, or its text blocks joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


class ClaudeCodeState(msgspec.Struct):
    """Where reading a transcript got to (a :class:`ResumableReader`'s state): the session
    being read, its steps, the tool calls waiting for their results, how it ends so far."""

    session: str | None = None
    steps: int = 0
    uses: dict[str, tuple[str, dict[str, Any]]] = msgspec.field(default_factory=dict)
    last_error: ErrorText | None = None
    end: str = "unknown"
    started: bool = False
    about: About = msgspec.field(default_factory=About)
    main_seen: bool = False
    side_end: str = "unknown"
    usage: dict[str, tuple[int, int, int, int, int]] = msgspec.field(default_factory=dict)
    """The tokens counted so far of each API message, and the step it read
    (:func:`turn_usage`)."""
    read: int = -1
    """The step whose result the next turn reads (-1: none, or a prompt came after it)."""


class ClaudeCodeReader:
    """Reader for Claude Code transcripts."""

    name = "claude-code"

    def sniff(self, head: bytes) -> bool:
        """JSON lines with Claude Code's ``type`` values and a ``sessionId``."""
        first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
        return first.startswith(b"{") and b'"sessionId"' in head and any(
            marker in head for marker in _TYPES)

    state_type = ClaudeCodeState

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """One pass over the lines; sessions change when ``sessionId`` does."""
        state = ClaudeCodeState()
        yield from self.lines(stream, label, state)
        yield from self.finish(state)

    def lines(self, stream: BinaryIO, label: str, state: ClaudeCodeState, *,  # noqa: PLR0915
              first_line: int = 0) -> Iterator[Event]:
        """The events of the lines (after ``first_line`` read before, whose reading left
        ``state``); ``state`` is brought up to date once every line was read."""
        # locals in the loop (the hot path), the state only at its ends
        session, steps, uses, last_error = state.session, state.steps, state.uses, state.last_error
        end, started, about = state.end, state.started, state.about
        main_seen, side_end, seen, read = state.main_seen, state.side_end, state.usage, state.read
        for number, entry in json_objects(stream, first_line=first_line):
            sid = entry.get("sessionId")
            if isinstance(sid, str) and sid != session:
                if started:
                    yield self._end(steps, session, last_error,
                                    end if main_seen or end != "unknown" else side_end)
                session, steps, uses, last_error, started, about, end = (
                    sid, 0, {}, None, True, About(), "unknown")
                main_seen, side_end, read = False, "unknown", -1
                yield SessionStart(sid)
            elif not started:
                continue  # a summary or snapshot line before the session's first message
            stamp = iso_time(entry.get("timestamp"))
            message = as_dict(entry.get("message"))
            about = yield from about_change(entry, message, about)
            content = message.get("content")
            kind = entry.get("type")
            if kind == "system" and entry.get("subtype") == "api_error":
                yield retried_api_error(entry, stamp)  # one failed try of a retried request
                continue
            if kind == "attachment" and as_dict(entry.get("attachment")).get(
                    "type") == "max_turns_reached":
                last_error, end = ErrorText(None, "agent", "MaxTurnsReached",
                                            "the agent reached its turn limit",
                                            timestamp=stamp, limit="turn"), "limit"
                continue
            answered = False  # a user line: a prompt or a tool result not answered yet
            if kind == "assistant":
                if entry.get("isApiErrorMessage"):
                    last_error = api_error(steps, text_of(content), stamp,
                                           entry.get("apiErrorStatus"), entry.get("error"))
                    end = "provider_error"
                    yield last_error
                    continue
                last_error = None
                usage = turn_usage(message, seen, stamp, read)
                if usage is not None:
                    yield usage
                answered = record_calls(content, uses, message.get("stop_reason"))
                yield from files_written(content)
            if kind in ("assistant", "user"):
                now = "submitted" if answered else "unknown"
                if entry.get("isSidechain"):
                    side_end = now
                else:
                    end, main_seen = now, True
            if kind == "user":
                before = steps
                steps = yield from tool_results(steps, content, uses, stamp,
                                                detail=as_dict(entry.get("toolUseResult")),
                                                where=f"line {number}")
                last_error = None if steps != before else last_error
                # the next turn reads these results; a line with none is a prompt: new work
                read = steps - 1 if steps != before else -1
        state.session, state.steps, state.uses, state.last_error = session, steps, uses, last_error
        state.read = read
        state.end, state.started, state.about = end, started, about
        state.main_seen, state.side_end = main_seen, side_end

    def finish(self, state: ClaudeCodeState) -> Iterator[Event]:
        """The last session's end (the transcript has no end record: the module's rules)."""
        if state.started:
            yield self._end(state.steps, state.session, state.last_error,
                            state.end if state.main_seen or state.end != "unknown"
                            else state.side_end)

    @staticmethod
    def _result(step: int, block: dict[str, Any],
                uses: dict[str, tuple[str, dict[str, Any]]], stamp: float | None, *,
                detail: dict[str, Any] | None = None, where: str = "") -> Event | None:
        """:func:`tool_result` (the Harbor ATIF reader calls it by this name)."""
        return tool_result(step, block, uses, stamp, detail=detail, where=where)

    @staticmethod
    def _end(steps: int, session: str | None, last_error: ErrorText | None,
             end: str) -> SessionEnd:
        if last_error is not None:
            return SessionEnd(steps, end if end == "limit" else "provider_error", session,
                              last_error)
        return SessionEnd(steps, end, session)


_INPUT_READ: Final = ("command", "file_path", "path")
"""The fields of a tool call's input that :func:`tool_result` reads."""


def _tokens(value: object) -> int:
    """A token count: a non-negative integer (anything else counts nothing)."""
    return value if type(value) is int and 0 <= value < 1 << 53 else 0


def turn_usage(message: dict[str, Any], seen: dict[str, tuple[int, int, int, int, int]],
               stamp: float | None, after: int = -1) -> Usage | None:
    """The tokens an assistant line's ``message.usage`` adds (input, output, cache read,
    cache write): Claude Code writes one line per content block of an API message, each with
    that message's usage so far, so a message counts the most each field reached over its
    lines (by ``message.id``, as ccusage counts them); None when it adds nothing. ``after``:
    the step whose result came last (-1: none yet); a message keeps its first line's (a tool
    it called may answer before its next block is written)."""
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None
    now = (_tokens(usage.get("input_tokens")), _tokens(usage.get("output_tokens")),
           _tokens(usage.get("cache_read_input_tokens")),
           _tokens(usage.get("cache_creation_input_tokens")))
    key = as_str(message.get("id"))
    before = seen.get(key, (0, 0, 0, 0, after)) if key else (0, 0, 0, 0, after)
    top = (max(before[0], now[0]), max(before[1], now[1]), max(before[2], now[2]),
           max(before[3], now[3]), before[4])
    if key:
        seen[key] = top
    if top == before:
        return None
    model = as_str(message.get("model"))
    return Usage(top[0] - before[0], top[1] - before[1], top[2] - before[2],
                 top[3] - before[3], model if model and not model.startswith("<") else None,
                 stamp, top[4])


def record_calls(content: object, uses: dict[str, tuple[str, dict[str, Any]]],
                 stop_reason: object) -> bool:
    """Record an assistant message's tool calls in ``uses``; True when it is an answer
    in text with no call pending (see the module's rules on how a session ended)."""
    calls = False
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "tool_use":
            calls = True
            tool_input = block.get("input")
            # only what tool_result reads: a Write's content is no part of the reader's state
            kept = {name: tool_input[name] for name in _INPUT_READ if name in tool_input
                    } if isinstance(tool_input, dict) else {}
            uses[str(block.get("id"))] = (str(block.get("name", "")), kept)
    return not calls and bool(text_of(content).strip()) and stop_reason in (
        None, "end_turn", "stop_sequence")

def tool_results(step: int, content: object, uses: dict[str, tuple[str, dict[str, Any]]],
                 stamp: float | None, *, detail: dict[str, Any], where: str,
                 ) -> Generator[Event, None, int]:
    """The events of a user message's ``tool_result`` blocks, numbered from ``step``
    (``detail``, the line's ``toolUseResult``, belongs to a lone result); returns the next
    step's number."""
    blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
              ] if isinstance(content, list) else []
    for block in blocks:
        event = tool_result(step, block, uses, stamp,
                            detail=detail if len(blocks) == 1 else {}, where=where)
        if event is not None:
            yield event
        step += 1
    return step


def tool_result(step: int, block: dict[str, Any],
                uses: dict[str, tuple[str, dict[str, Any]]], stamp: float | None, *,
                detail: dict[str, Any] | None = None, where: str = "") -> Event | None:
    """The event of one ``tool_result`` block (see the module's rules), or None."""
    name, tool_input = uses.get(str(block.get("tool_use_id")), ("", {}))
    text = text_of(block.get("content"))
    command = as_str(tool_input.get("command"))
    refusal = _REFUSAL.search(text)
    if refusal is not None:
        reason = refusal.group(1).strip()
        if _SIBLING.match(reason):
            return cancelled(step, command or name, "a sibling call failed", stamp)
        if reason.startswith("Cancelled: "):  # Claude Code's own class of a stopped call
            return cancelled(step, command or name, first_line(reason[11:]), stamp)
        return Rejected(step, name, first_line(refusal.group(1)), stamp)
    head = text.lstrip()
    if head.startswith(_USER_REJECTED):
        return cancelled(step, command or name, "the user rejected the tool use", stamp)
    if head.startswith(_INTERRUPTED) or (block.get("is_error") and _ABORTED.match(head)):
        return cancelled(step, command or name, "interrupted by the user", stamp)
    if _HOOK.match(head) or (block.get("is_error") and _PERMISSION.match(head)):
        return Rejected(step, command or name, first_line(head), stamp)
    if name == "Bash" or command:
        found = _EXIT.match(text)
        rest = text[found.end():] if found is not None else text
        if _TIMED_OUT.match(rest.lstrip()):
            return Command(step, command, None, rest, stamp, timed_out=True)
        if _BACKGROUND.match(rest.lstrip()):
            return None  # still running in the background
        if found is not None:
            return Command(step, command, exit_in_text(found.group(1), where), rest, stamp)
        if block.get("is_error"):  # an error without the exit-code line (older versions)
            body = text.removeprefix("Error: ")
            return Command(step, command, shell_failed(body) or 1, body, stamp)
        if as_str((detail or {}).get("returnCodeInterpretation")):
            # exit 1 that Claude Code read as a normal answer ("No matches found",
            # "Condition is false"): the status is 1, what it means is triage's to say
            return Command(step, command, 1, _NO_OUTPUT.sub("", text), stamp)
        return Command(step, command, 0, text, stamp)  # a success (or a masked failure)
    if block.get("is_error"):
        if "interrupted" in text.lower():
            return None
        spawn = _SPAWN.match(head)
        if spawn is not None:  # the tool's own helper program could not start
            return ErrorText(step, "tool", _ERRNO[spawn.group(1)], first_line(head),
                             evidence=f"{name}: {first_line(head)}", timestamp=stamp,
                             tool=name)
        target = tool_input.get("file_path") or tool_input.get("path") or ""
        return Rejected(step, f"{name} {target}".strip(), first_line(text), stamp)
    return None


_TIMEOUT_CODES: Final = frozenset({"ETIMEDOUT", "ConnectionIdle", "StreamNoResponse"})
"""The ``connection.code`` values Claude Code's own renderer calls a timeout ("Request timed
out", "No response from API"); every other code is a failed connection."""
_ANTHROPIC: Final = "anthropic."


def provider_error_kind(status: int | None, connection_code: str, *, no_response: bool,
                        network_down: bool) -> str:
    """The Anthropic SDK error class a failed request's own fields make it (the names the
    classification layer's provider rules know): an HTTP status is an ``APIStatusError``
    (the status decides); no status and no answer in time an ``APITimeoutError``; no status
    and a failed connection an ``APIConnectionError``; else an ``APIStatusError`` without a
    status (its words decide)."""
    if status is not None:
        return _ANTHROPIC + "APIStatusError"
    if no_response or connection_code in _TIMEOUT_CODES:
        return _ANTHROPIC + "APITimeoutError"
    if connection_code or network_down:
        return _ANTHROPIC + "APIConnectionError"
    return _ANTHROPIC + "APIStatusError"


def retried_api_error(entry: dict[str, Any], stamp: float | None) -> ErrorText:
    """A ``system`` ``api_error`` line: one failed try of a request Claude Code retries, at
    no step (see the module's rules)."""
    error = as_dict(entry.get("error"))
    inner = as_dict(error.get("error"))
    connection = as_dict(error.get("connection"))
    code = as_str(connection.get("code"))
    status = http_status(error.get("status"))
    message = (as_str(error.get("message")) or as_str(inner.get("message"))
               or as_str(as_dict(inner.get("error")).get("message"))
               or as_str(error.get("formatted")) or as_str(connection.get("message"))
               or as_str(entry.get("content")) or "API error")
    if code and code not in message:
        message = f"{message} ({code})"
    text = f"Error code: {status} - {message}" if status is not None else message
    kind = provider_error_kind(status, code, no_response=bool(error.get("noResponse")),
                               network_down=error.get("isNetworkDown") is True)
    attempt, most = entry.get("retryAttempt"), entry.get("maxRetries")
    tries = f"{attempt} of {most}" if isinstance(most, int) else f"{attempt or '?'}"
    return ErrorText(None, "provider", kind, text,
                     evidence=f"API error (retry {tries}): {first_line(text)}",
                     timestamp=stamp)


def api_error(step: int, text: str, stamp: float | None, status_field: object = None,
              code: object = None) -> ErrorText:
    """An assistant message Claude Code wrote for a failed request (``API Error: ...``)."""
    found = _API_ERROR.search(text)
    status, rest = (found.group(1), found.group(2).strip()) if found else (None, text)
    if status is None and http_status(status_field) is not None:
        status = str(status_field)
    if not rest and isinstance(code, str):
        rest = code.replace("_", " ")  # newer versions: "API Error" and error="rate_limit"
    message = f"Error code: {status} - {rest}" if status else rest
    return ErrorText(step, "provider", "anthropic.APIStatusError", message,
                     evidence=first_line(text), timestamp=stamp)


_WRITE_TOOLS: Final = {"Write": "content", "Edit": "new_string", "MultiEdit": "edits",
                       "NotebookEdit": "new_source"}


def files_written(content: object) -> Iterator[Wrote]:
    """The files an assistant message's ``Write``/``Edit``/``MultiEdit``/``NotebookEdit`` calls
    write: their ``file_path`` (``notebook_path``) and new text."""
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            continue
        field = _WRITE_TOOLS.get(str(block.get("name", "")))
        tool_input = as_dict(block.get("input"))
        path = as_str(tool_input.get("file_path")) or as_str(tool_input.get("notebook_path"))
        if field is None or not path:
            continue
        value = tool_input.get(field)
        if isinstance(value, list):  # MultiEdit: a list of {old_string, new_string}
            value = "\n".join(as_str(as_dict(edit).get("new_string")) for edit in value)
        yield Wrote(path, value if isinstance(value, str) else "")


_writes: Final = files_written  # the name the Harbor ATIF reader imports


def about_change(entry: dict[str, Any], message: dict[str, Any],
           last: About) -> Generator[About, None, About]:
    """An :class:`About` when the line names a model or version the session had not yet."""
    model = as_str(message.get("model")) if entry.get("type") == "assistant" else ""
    now = About(model if model and not model.startswith("<") else last.model,
                as_str(entry.get("version")) or last.agent_version)
    if now != last:
        yield now
    return now
