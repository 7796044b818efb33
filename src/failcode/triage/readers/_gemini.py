"""Gemini CLI chat recordings (``~/.gemini/tmp/<project>/chats/session-*.jsonl`` and ``.json``).

Rules (about the format and the tool; the JSONL shape is the session lab's pinned Gemini CLI
0.61.0, ``tests/lab/fixtures/gemini-cli/``; the one-document shape is what earlier versions'
``ChatRecordingService`` wrote, ``{sessionId, projectHash, startTime, lastUpdated,
messages}``):

- Detection: a first JSON object with ``sessionId`` and ``projectHash`` (the JSONL header
  ``{sessionId, projectHash, startTime, kind}``, or the whole chat as one object).
- One file is one session, named by ``sessionId``. A damaged file (not UTF-8, cut, not JSON
  from some point on) is the session its records before the damage make, ending ``unknown``.
- Records are ``{id, timestamp, type, content, toolCalls?}``; ``type`` is ``user``,
  ``gemini`` (the model), ``info``, ``warning`` or ``error``. A record id written again
  replaces the earlier record (Gemini CLI writes a model turn first without its tool calls,
  then with them); a ``{"$set": {...}}`` line patches the session, and a ``$set`` of
  ``messages`` replaces every record read before it with its own list. A record is a line
  with a string ``id`` (``loadConversationRecord``'s test). The records are taken in the
  order their ids first appear. A ``{"$rewindTo": id}`` line (the person rewound the chat) removes
  that record and every record after it, as Gemini CLI does when it loads the chat; an id it
  names that is not there removes them all.
- A step is one entry of a model record's ``toolCalls``, numbered from 0 in that order.
- A ``run_shell_command`` call's status is never trusted: Gemini CLI marks every command that
  ran ``success``, exit 127 included. Its exit status is the ``Exit Code: N`` line of the
  tool's output text (inside ``<untrusted_context>``), absent when the command exited 0; a
  ``Signal: N`` line is a command killed by that signal. The output is the ``Output:`` section
  (``(empty)`` is none), or ``Stdout:`` and ``Stderr:`` in older versions. An exit status
  outside -2**31..2**32-1, or a signal whose 128+N is, is FC-DATA-003 naming the record
  (``line N`` of a JSONL recording, ``messages[i]`` of a one-document chat) and the value
  (``_text``'s rules; the records before it make the session so far).
- A shell call's text that has no ``Exit Code`` line may say the command never finished:
  "Command was automatically cancelled because it exceeded the timeout of N minutes without
  output" is a timeout; "Command was cancelled by user before it could complete" (or "could
  start") is a cancelled outcome; "Command moved to background (PID: N)" is still running,
  not a failure. A command the person stopped with Ctrl+C in the tool's terminal is a
  cancelled outcome too: exit status 0xC000013A (Windows' STATUS_CONTROL_C_EXIT, 3221225786
  or -1073741510), or 130 (SIGINT) when the output ends with the terminal's ``^C`` echo.
  A shell call with ``status: "error"`` and no ``Exit Code`` line did not run to an exit
  status: with an ``Output`` section (the shell started it and could not run it) it is a failed
  command (exit 1, 127 when the output says a program was not found); with neither (the
  command was refused before it ran: empty, not allowed, denied by a policy) it is a
  rejected action.
- Any other tool whose call has ``status: "error"`` (a string to replace not found, a file to
  read that does not exist, arguments the tool refused) was fed back to the model: a rejected
  action; so is a call a policy refused ("Tool execution denied by policy."). A
  ``cancelled`` call never ran: a cancelled outcome, no failure, whose reason is the text's
  ``[Operation Cancelled] Reason: ...`` ("User denied execution." when the person declined
  the approval: declined by the user).
- An ``error`` record names what went wrong outside a tool (a provider error after Gemini CLI
  gave up retrying, in versions that record it): a provider error when it names an API error
  or an HTTP status, and the session ended on it when no model or user record followed. Its
  text is ``[API Error: <message>]``, or ``[API Error: <message> (Status: <code>)]`` with a
  Google RPC status name, read as its HTTP status (``RESOURCE_EXHAUSTED`` 429,
  ``UNAVAILABLE`` 503, ``INTERNAL`` 500, ``DEADLINE_EXCEEDED`` 504, ``UNAUTHENTICATED`` 401,
  ``PERMISSION_DENIED`` 403, ``INVALID_ARGUMENT`` 400, ``NOT_FOUND`` 404) when the text
  names no HTTP status itself.
- ``info`` records are the interactive CLI's notes. "The session has reached the maximum
  number of turns: N" is the agent stopped at its turn limit: the session ended ``limit``
  when no model or user record followed. "Request cancelled." and "User cancelled the
  request." are the person stopping the turn. Other notes (compression, citations) change
  nothing.
- A session whose last record is a model answer without tool calls ended ``submitted``; one
  that stops after a tool result, a prompt, or a cancelled turn ended ``unknown`` (Gemini CLI
  0.61 headless writes neither a fatal provider error nor its turn limit into the chat).
- The model is each model record's ``model``.
- Tokens: a ``gemini`` record's ``tokens`` (``input`` with ``cached`` inside it, ``output``,
  ``thoughts``, ``tool``) are that turn's :class:`~failcode.triage._events.Usage`, before its
  tool calls; a record written again counts once (the last version, like every record).
- Time: each record's ``timestamp`` (Gemini CLI writes UTC with ``Z``; one without a zone is
  read as UTC, ``_text``'s rules, whatever the machine's zone).
- A ``write_file`` (``content``) or ``replace`` (``new_string``) call that succeeded wrote
  ``file_path``: a :class:`~failcode.triage._events.Wrote`, what the session's repository
  provides (its step is still counted).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from failcode._lazy_re import lazy
from failcode.triage._events import (
    About,
    Command,
    ErrorText,
    Event,
    InputError,
    Rejected,
    SessionEnd,
    SessionStart,
    Usage,
    Wrote,
    cancelled,
)
from failcode.triage.readers._jsonstream import JsonStream, loads
from failcode.triage.readers._lines import json_objects
from failcode.triage.readers._swe_agent import shell_failed
from failcode.triage.readers._text import (
    EXIT_MAX,
    as_dict,
    as_list,
    as_str,
    exit_in_text,
    first_line,
    iso_time,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import BinaryIO

__all__ = ["GeminiCliReader"]

_SHELL: Final = ("run_shell_command", "shell")
_WRITES: Final = {"write_file": "content", "replace": "new_string", "edit": "new_string"}
_EXIT: Final = lazy(r"^Exit Code: (-?\d+)\s*$", re.MULTILINE)
_SIGNAL: Final = lazy(r"^Signal: (\d+)\s*$", re.MULTILINE)
_SECTION: Final = lazy(
    r"^(Output|Stdout|Stderr|Error|Exit Code|Signal|Background PIDs|Process Group PGID|"
    r"Command|Directory): ?", re.MULTILINE)
_API_ERROR: Final = lazy(r"(?i)api error|\b[45]\d\d\b|quota|rate limit|unavailable")
_STATUS: Final = lazy(r"\b([45]\d\d)\b")
_RPC_STATUS: Final = lazy(r"\(Status: ([A-Z_]+)\)")
_RPC_HTTP: Final = {"RESOURCE_EXHAUSTED": "429", "UNAVAILABLE": "503", "INTERNAL": "500",
                    "DEADLINE_EXCEEDED": "504", "UNAUTHENTICATED": "401",
                    "PERMISSION_DENIED": "403", "INVALID_ARGUMENT": "400", "NOT_FOUND": "404"}
_TIMED_OUT: Final = lazy(r"^Command was automatically cancelled because it exceeded the timeout")
_USER_CANCELLED: Final = lazy(r"^Command was cancelled by user before it could (?:complete|start)")
_BACKGROUND: Final = lazy(r"^Command moved to background \(PID")
_CANCEL_REASON: Final = lazy(r"\[Operation Cancelled\] (?:Reason: )?(.*)")
_DECLINED: Final = lazy(r"(?i)user denied execution|user did not allow tool call")
_CONTROL_C_EXIT: Final = (0xC000013A, 0xC000013A - 2**32)
_CANCELLED_TURN: Final = ("Request cancelled.", "User cancelled the request.")
_MAX_TURNS: Final = "The session has reached the maximum number of turns"


def _response_text(call: dict[str, Any]) -> str:
    """The text the tool gave back: its ``output``, else its ``error``."""
    parts = []
    for item in as_list(call.get("result")):
        response = as_dict(as_dict(as_dict(item).get("functionResponse")).get("response"))
        parts.append(as_str(response.get("output")) or as_str(response.get("error")))
    text = "\n".join(p for p in parts if p)
    if not text:
        display = call.get("resultDisplay")
        text = display if isinstance(display, str) else ""
    return text.replace("<untrusted_context>", "").replace("</untrusted_context>", "")


def _text_of(record: dict[str, Any]) -> str:
    """A record's ``content``: a string, or the ``text`` of its parts."""
    content = record.get("content")
    if isinstance(content, str):
        return content
    return "".join(as_str(as_dict(part).get("text")) for part in as_list(content))


def _http_status(text: str) -> str | None:
    """The HTTP status an error record's text names: its own, else its RPC status's."""
    found = _STATUS.search(text)
    if found is not None:
        return found.group(1)
    rpc = _RPC_STATUS.search(text)
    return _RPC_HTTP.get(rpc.group(1)) if rpc is not None else None


def _sections(text: str) -> dict[str, str]:
    """``Output: ...`` / ``Exit Code: N`` ... sections of a shell tool's text."""
    found: dict[str, str] = {}
    marks = list(_SECTION.finditer(text))
    for number, mark in enumerate(marks):
        end = marks[number + 1].start() if number + 1 < len(marks) else len(text)
        found[mark.group(1)] = text[mark.end():end].strip("\n")
    return found


class _Session:
    """One chat being read: its records in the order their ids first appeared."""

    __slots__ = ("name", "order", "records", "where")

    def __init__(self, name: str | None) -> None:
        self.name = name
        self.order: list[str] = []
        self.records: dict[str, dict[str, Any]] = {}
        self.where: dict[str, str] = {}
        """Where each record's last version is in the input (for an error naming it)."""

    def add(self, record: dict[str, Any], where: str) -> None:
        key = as_str(record.get("id")) or f"#{len(self.order)}"
        if key not in self.records:
            self.order.append(key)
        self.records[key] = record
        self.where[key] = where

    def rewind(self, key: str | None) -> None:
        """Drop the record ``key`` and every record after it (all of them when it is not
        there, or ``key`` is None)."""
        cut = self.order.index(key) if key is not None and key in self.records else 0
        for gone in self.order[cut:]:
            del self.records[gone], self.where[gone]
        del self.order[cut:]


class GeminiCliReader:
    """Reader for Gemini CLI chat recordings."""

    name = "gemini-cli"

    def sniff(self, head: bytes) -> bool:
        """A first object with Gemini CLI's ``sessionId`` and ``projectHash``."""
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        return (text.startswith(b"{") and b'"projectHash"' in head
                and b'"sessionId"' in head)

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """The JSONL recording line by line, or the one-document chat item by item."""
        head = stream.peek().lstrip(b"\xef\xbb\xbf \t\r\n")  # type: ignore[attr-defined]
        first = head.split(b"\n", 1)[0]
        session = _Session(None)
        try:
            if self._is_header(first):
                self._lines(stream, session)
            else:
                self._document(stream, session)
        except InputError:  # damaged: the records read before it are the session so far, whose
            yield SessionStart(session.name)  # end is unknown (triage ends it at the damage)
            for event in self._events(session):
                if isinstance(event, SessionEnd):
                    break
                yield event
            raise
        yield SessionStart(session.name)
        yield from self._events(session)

    @staticmethod
    def _is_header(first: bytes) -> bool:
        """True for a JSONL recording's first line: a whole object without ``messages``."""
        try:
            value = loads(first)
        except ValueError:
            return False
        return isinstance(value, dict) and "messages" not in value

    @staticmethod
    def _lines(stream: BinaryIO, session: _Session) -> None:
        header = True
        for number, entry in json_objects(stream):
            if header:
                session.name, header = as_str(entry.get("sessionId")) or None, False
                continue
            patch = entry.get("$set")
            rewind = entry.get("$rewindTo")
            if isinstance(rewind, str):
                session.rewind(rewind)
            elif isinstance(patch, dict):
                if isinstance(patch.get("messages"), list):
                    session.rewind(None)  # the list replaces every record read so far
                for index, record in enumerate(as_list(patch.get("messages"))):
                    if isinstance(record, dict) and isinstance(record.get("id"), str):
                        session.add(record, f"line {number}, $set.messages[{index}]")
            elif isinstance(entry.get("id"), str):
                session.add(entry, f"line {number}")

    @staticmethod
    def _document(stream: BinaryIO, session: _Session) -> None:
        doc = JsonStream(stream)
        for key in doc.members():
            if key == "sessionId":
                value = doc.value()
                session.name = value if isinstance(value, str) else None
            elif key == "messages" and doc.peek() == "[":
                for index, record in enumerate(doc.items()):
                    if isinstance(record, dict):
                        session.add(record, f"messages[{index}]")
            else:
                doc.skip()
        doc.end()

    def _events(self, session: _Session) -> Iterable[Event]:
        steps, read = 0, -1
        last: dict[str, Any] = {}
        ended_by: ErrorText | None = None
        for key in session.order:
            record = session.records[key]
            stamp = iso_time(record.get("timestamp"))
            kind = record.get("type")
            if kind == "gemini":
                ended_by = None
                if as_str(record.get("model")):
                    yield About(as_str(record.get("model")))
                usage = _usage(as_dict(record.get("tokens")), stamp, read)
                if usage is not None:  # the turn that made the calls below
                    yield usage
                for call in as_list(record.get("toolCalls")):
                    if isinstance(call, dict):
                        event = tool_call(steps, call, stamp, session.where[key])
                        if event is not None:
                            yield event
                        steps += 1
                        read = steps - 1  # the next turn reads the calls' results
                last = record
            elif kind == "error":
                text = first_line(as_str(record.get("content")) or "error", 2000)
                if _API_ERROR.search(text):
                    status = _http_status(text)
                    message = f"Error code: {status} - {text}" if status else text
                    ended_by = ErrorText(steps, "provider", "google.genai.errors.APIError",
                                         message, evidence=text[:200], timestamp=stamp)
                    yield ended_by
                last = record
            elif kind == "user":
                ended_by, last = None, record  # the session went on after an error
                read = -1  # a prompt: the turns after it are new work
            elif kind == "info":
                note = _text_of(record).strip()
                if note in _CANCELLED_TURN:
                    last = record
                elif note.startswith(_MAX_TURNS):
                    ended_by = ErrorText(None, "agent", "MaxSessionTurns",
                                         "the agent reached its turn limit",
                                         evidence=first_line(note), timestamp=stamp,
                                         limit="turn")
                    last = record
        if ended_by is not None:
            status = "limit" if ended_by.limit is not None else "provider_error"
            yield SessionEnd(steps, status, session.name, ended_by)
        elif last.get("type") == "gemini" and not as_list(last.get("toolCalls")):
            yield SessionEnd(steps, "submitted", session.name)
        else:  # a chat with no tool call is a session too (said)
            yield SessionEnd(steps, "unknown", session.name, said=bool(last))


def _tokens(value: object) -> int:
    """A token count: a non-negative integer (anything else counts nothing)."""
    return value if type(value) is int and 0 <= value < 1 << 53 else 0


def _usage(tokens: dict[str, Any], stamp: float | None, after: int) -> Usage | None:
    """A ``gemini`` record's ``tokens`` (the API's usage metadata: ``input`` with ``cached``
    inside it, ``thoughts`` and ``tool`` apart) as a turn's usage; None when it has none."""
    if not tokens:
        return None
    prompt, cached = _tokens(tokens.get("input")), _tokens(tokens.get("cached"))
    cached = min(cached, prompt)
    usage = Usage(prompt - cached + _tokens(tokens.get("tool")),
                  _tokens(tokens.get("output")) + _tokens(tokens.get("thoughts")), cached, 0,
                  None, stamp, after)
    return usage if usage.input or usage.output or usage.cache_read else None


def _cancel_reason(text: str) -> str:
    """Why a ``cancelled`` call never ran, in the agent's words when its text gives them
    (``[Operation Cancelled] Reason: User denied execution.``)."""
    found = _CANCEL_REASON.search(text)
    reason = found.group(1).strip() if found is not None else ""
    if _DECLINED.search(reason):
        return f"declined by the user ({first_line(reason, 120)})"
    return first_line(reason, 160) or "cancelled before it ran"


def _interrupted(status: int | None, output: str) -> bool:
    """A command the person stopped with Ctrl+C in the tool's terminal: Windows'
    STATUS_CONTROL_C_EXIT (0xC000013A, either sign), or 130 (SIGINT) after the terminal's
    ``^C`` echo."""
    if status in _CONTROL_C_EXIT:
        return True
    return status == 130 and "^C" in output.rstrip()[-40:]


def tool_call(step: int, call: dict[str, Any], stamp: float | None, where: str,
              ) -> Event | None:
    """The event of one tool call in Gemini CLI's ``toolCalls`` shape (``name``, ``args``,
    ``status``, ``result`` function responses, ``resultDisplay``): a command, a rejected
    action, a cancelled outcome, a file written, or None. Qwen Code's calls, joined with their
    responses, take the same shape (:mod:`failcode.triage.readers._qwen`)."""
    name = as_str(call.get("name"))
    status = as_str(call.get("status"))
    text = _response_text(call)
    if status == "cancelled":
        command = as_str(as_dict(call.get("args")).get("command"))
        return cancelled(step, command or name, _cancel_reason(text), stamp)
    if name in _SHELL:
        command = as_str(as_dict(call.get("args")).get("command"))
        head = text.strip()
        if _TIMED_OUT.match(head):
            return Command(step, command, None, head, stamp, timed_out=True)
        if _USER_CANCELLED.match(head):
            return cancelled(step, command or name, "cancelled by the user", stamp)
        if _BACKGROUND.match(head):
            return Command(step, command, None, head, stamp, running=True)
        parts = _sections(text)
        output = "\n".join(v for k, v in parts.items() if k in ("Output", "Stdout", "Stderr")
                           and v.strip() != "(empty)")
        if parts.get("Error") and parts["Error"].strip() not in ("(none)", ""):
            output = f"{output}\n{parts['Error']}".strip()
        found = _EXIT.search(text)
        if found is not None:
            code = exit_in_text(found.group(1), where)
            if _interrupted(code, output):
                return cancelled(step, command or name, "interrupted by the user (Ctrl+C)", stamp)
            return Command(step, command, code, output, stamp)
        signal = _SIGNAL.search(text)
        if signal is not None and signal.group(1) not in ("0", "(none)"):
            number = exit_in_text(signal.group(1), where, what="the signal", low=0,
                                  high=EXIT_MAX - 128)
            return Command(step, command, 128 + number, output, stamp)
        if status == "error":  # it never reached an exit status
            if not {"Output", "Stdout", "Stderr"} & parts.keys():  # refused, never ran
                return Rejected(step, command or name, first_line(head), stamp)
            body = output or head
            return Command(step, command, shell_failed(body) or 1, body, stamp)
        return Command(step, command, 0, output, stamp)  # exit 0 (or a masked failure)
    if status == "error":
        target = as_str(as_dict(call.get("args")).get("file_path"))
        return Rejected(step, f"{name} {target}".strip(), first_line(text), stamp)
    args = as_dict(call.get("args"))
    if name in _WRITES and (path := as_str(args.get("file_path"))):
        return Wrote(path, as_str(args.get(_WRITES[name])))
    return None
