"""OpenCode sessions as ``opencode export <session id>`` prints them (one JSON per session).

Rules (from OpenCode's own code, ``opencode-ai`` 1.18.33: the ``SessionV1`` schemas of its
session, messages and parts, the shell tool and the session processor; the lab's runs of it):

- Where sessions live: since 1.2 OpenCode keeps them in a SQLite database
  (``$XDG_DATA_HOME/opencode/opencode.db``, write-ahead logged: what a run wrote may still be
  in ``opencode.db-wal``); ``opencode export <session id>`` prints one session from it as
  JSON, ``{"info": <session>, "messages": [{"info": <message>, "parts": [<part>, ...]}]}``,
  the same shapes the database's ``message`` and ``part`` rows (and the JSON files of the
  versions before 1.2, ``storage/message/`` and ``storage/part/``) hold. That export is what
  this reader reads; the database itself is :mod:`._opencode_db`'s, which feeds its rows to
  the same :class:`Session`.
- Detection: a JSON object whose first member is ``info``, an object whose first member is an
  ``id`` starting ``ses_``.
- One file is one session, named by ``info.id``; the agent's version is ``info.version``, the
  model each assistant message's ``modelID``. Times are milliseconds since the epoch.
- A step is one part of ``type`` ``tool`` of an assistant message, numbered from 0 in message
  and part order. Its ``state``: ``completed`` with ``input``, ``output`` and ``metadata``;
  ``error`` with ``error`` (a text); ``pending`` or ``running`` (never finished).
- The shell tool (``bash``): a completed call is a command, ``input.command``, its exit status
  ``metadata.exit`` (a number; null when the command was killed), its output ``output`` (the
  tool appends ``<shell_metadata>`` notes to it). ``shell tool terminated command after
  exceeding timeout`` in those notes is a timeout; ``User aborted the command`` a cancelled
  outcome.
- A failed call (``error``): ``Tool execution aborted`` (or ``metadata.interrupted``, the
  processor's mark on the calls it stops) is cancelled; ``The user rejected permission to use
  this specific tool call`` is a person declining: cancelled; ``The user has specified a rule
  which prevents you from using this specific tool call`` (a ``deny`` permission rule) and any
  other tool error fed back to the model (a wrong argument, an edit whose ``oldString`` is not
  in the file, a file not found) is a rejected action. A call left ``pending`` or ``running``
  in an aborted message was stopped: cancelled; elsewhere it never ran: a step with no event.
- A completed ``edit`` or ``write`` is a file written (``filePath``, ``newString`` or
  ``content``).
- Provider errors are an assistant message's ``error``, a named error: ``APIError``
  (``message``, ``statusCode``, ``isRetryable``, ``responseBody``), ``ProviderAuthError``,
  ``ContextOverflowError``, ``ContentFilterError``, ``MessageOutputLengthError``,
  ``StructuredOutputError``, ``UnknownError``; ``MessageAbortedError`` is the person
  interrupting the turn: a cancelled outcome, never a failure. A ``retry`` part (an
  ``APIError`` OpenCode retried, with its ``attempt``) is one failed request that the turn went
  on after: a provider failure of the step it happened at.
- How the session ended: a provider error on the last assistant message is
  ``provider_error``; an interrupted last message, or one still running (no
  ``time.completed``) is ``unknown``; a last assistant message that finished (``finish``) with
  no tool part is ``submitted``; else ``unknown``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from failcode._lazy_re import lazy
from failcode.triage._events import (
    About,
    Command,
    ErrorText,
    Rejected,
    SessionEnd,
    SessionStart,
    Wrote,
    cancelled,
)
from failcode.triage.readers._jsonstream import JsonStream
from failcode.triage.readers._text import (
    as_dict,
    as_list,
    as_str,
    epoch_time,
    first_line,
    http_status,
    stated_exit,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

    from failcode.triage._events import Event

__all__ = ["OpenCodeReader", "Session"]

_HEAD: Final = lazy(r'^\{\s*"info"\s*:\s*\{\s*"id"\s*:\s*"ses_[^"]*"')
_TIMED_OUT: Final = "shell tool terminated command after exceeding timeout"
_USER_ABORTED: Final = "User aborted the command"
_METADATA: Final = lazy(r"\n*<shell_metadata>.*?(?:</shell_metadata>|\Z)", re.DOTALL)
_ABORTED_TOOL: Final = "Tool execution aborted"
_DECLINED: Final = "The user rejected permission to use this specific tool call"
_DENIED: Final = "The user has specified a rule which prevents you from using"
_ABORTED: Final = "MessageAbortedError"
_TIMEOUT_TEXT: Final = lazy(r"(?i)timed? ?out|timeout")
_CONNECTION_TEXT: Final = lazy(
    r"(?i)cannot connect|connection (?:refused|reset|error)|ECONNREFUSED|ECONNRESET|"
    r"fetch failed|socket hang up|network")
_WRITES: Final = {"edit": "newString", "write": "content"}

_NAMED: Final = {
    "ProviderAuthError": "openai.AuthenticationError",
    "ContentFilterError": "openai.ContentFilterFinishReasonError",
    "MessageOutputLengthError": "openai.LengthFinishReasonError",
}
"""OpenCode's named provider errors as the SDK class the classifier knows them by."""


def _ms(value: object) -> float | None:
    seconds = epoch_time(value)
    return None if seconds is None else seconds / 1000


def provider_error(error: dict[str, Any], step: int | None,
                   stamp: float | None) -> ErrorText:
    """One of OpenCode's named errors (``{name, data}``) as a provider error."""
    name = as_str(error.get("name")) or "UnknownError"
    data = as_dict(error.get("data"))
    text = as_str(data.get("message")) or name
    evidence = f"{name}: {first_line(text)}"
    if name == "ContextOverflowError":
        return ErrorText(step, "provider", name, text, evidence=evidence, timestamp=stamp,
                         context_window=True)
    if name in _NAMED:
        return ErrorText(step, "provider", _NAMED[name], text, evidence=evidence,
                         timestamp=stamp)
    status = http_status(data.get("statusCode"))
    if status is not None:
        return ErrorText(step, "provider", "openai.APIStatusError",
                         f"Error code: {status} - {text}", evidence=evidence, timestamp=stamp)
    if _TIMEOUT_TEXT.search(text):
        type_name = "openai.APITimeoutError"
    elif _CONNECTION_TEXT.search(text):
        type_name = "openai.APIConnectionError"
    else:
        type_name = "openai.APIError"
    return ErrorText(step, "provider", type_name, text, evidence=evidence, timestamp=stamp)


def _shell(step: int, state: dict[str, Any], stamp: float | None, where: str) -> Event:
    """A completed ``bash`` call: a command (see the module's rules)."""
    command = as_str(as_dict(state.get("input")).get("command"))
    output = as_str(state.get("output"))
    notes = "\n".join(found.group(0) for found in _METADATA.finditer(output))
    body = _METADATA.sub("", output).rstrip("\n")
    if body == "(no output)":
        body = ""
    code = stated_exit(as_dict(state.get("metadata")).get("exit"), where)
    if _TIMED_OUT in notes:
        return Command(step, command, code, body, stamp, timed_out=True)
    if _USER_ABORTED in notes:
        return cancelled(step, command or "bash", "interrupted by the user", stamp)
    return Command(step, command, code, body, stamp)


def _failed(step: int, tool: str, state: dict[str, Any], stamp: float | None) -> Event:
    """A call whose state is ``error``: cancelled or a rejected action."""
    args = as_dict(state.get("input"))
    action = (as_str(args.get("command")) if tool == "bash" else
              f"{tool} {as_str(args.get('filePath'))}".strip()) or tool
    error = as_str(state.get("error"))
    if error.startswith(_ABORTED_TOOL) or as_dict(state.get("metadata")).get("interrupted"):
        return cancelled(step, action, "interrupted by the user", stamp)
    if error.startswith(_DECLINED):
        return cancelled(step, action, "declined by the user", stamp)
    return Rejected(step, action, first_line(error) or "the tool failed", stamp)


class Session:
    """One session being read, whatever it is read from (``opencode export``'s JSON or the
    database's rows, :mod:`._opencode_db`): :meth:`start` with the session's info,
    :meth:`message` with each message (``{"info": ..., "parts": [...]}``) in order, then
    :meth:`end`. It keeps the steps and how the last assistant message stands."""

    def __init__(self, name: str | None) -> None:
        self.name = name
        self.steps = 0
        self.last: dict[str, Any] | None = None
        self.last_tools = False
        self.said = False

    @classmethod
    def start(cls, info: dict[str, Any]) -> tuple[Session, list[Event]]:
        """The session of ``info`` (its ``id`` and ``version``) and the events that open it."""
        session = cls(as_str(info.get("id")) or None)
        return session, [SessionStart(session.name),
                         About(None, as_str(info.get("version")) or None)]

    def message(self, message: dict[str, Any], index: int) -> Iterator[Event]:
        info = as_dict(message.get("info"))
        parts = [as_dict(part) for part in as_list(message.get("parts"))]
        if info.get("role") != "assistant":
            self.said = self.said or bool(parts)
            return
        self.said = True
        stamp = _ms(as_dict(info.get("time")).get("created"))
        yield About(as_str(info.get("modelID")) or None, None)
        error = as_dict(info.get("error"))
        aborted = as_str(error.get("name")) == _ABORTED
        tools = False
        for number, part in enumerate(parts):
            kind = part.get("type")
            if kind == "retry":
                when = _ms(as_dict(part.get("time")).get("created")) or stamp
                yield provider_error(as_dict(part.get("error")), self.steps, when)
            if kind != "tool":
                continue
            tools = True
            step = self.steps
            self.steps += 1
            tool = as_str(part.get("tool"))
            state = as_dict(part.get("state"))
            status = as_str(state.get("status"))
            when = _ms(as_dict(state.get("time")).get("start")) or stamp
            where = f"message {index}, part {number}"
            if status == "completed":
                if tool == "bash":
                    yield _shell(step, state, when, where)
                elif tool in _WRITES:
                    args = as_dict(state.get("input"))
                    if path := as_str(args.get("filePath")):
                        yield Wrote(path, as_str(args.get(_WRITES[tool])))
            elif status == "error":
                yield _failed(step, tool, state, when)
            elif aborted:  # pending or running when the person stopped the turn
                command = as_str(as_dict(state.get("input")).get("command"))
                yield cancelled(step, command or tool, "interrupted by the user", when)
        if aborted:
            yield cancelled(None, "the model's turn", "interrupted by the user", stamp)
        self.last = info
        self.last_tools = tools

    def end(self) -> SessionEnd:
        info = self.last
        if info is None:
            return SessionEnd(self.steps, "unknown", self.name, said=self.said)
        error = as_dict(info.get("error"))
        stamp = _ms(as_dict(info.get("time")).get("completed"))
        if error and as_str(error.get("name")) != _ABORTED:
            failure = provider_error(error, self.steps, stamp)
            return SessionEnd(self.steps, "provider_error", self.name, failure, stamp,
                              said=True)
        done = not error and info.get("finish") and as_dict(info.get("time")).get("completed")
        status = "submitted" if done and not self.last_tools else "unknown"
        return SessionEnd(self.steps, status, self.name, timestamp=stamp, said=True)


class OpenCodeReader:
    """Reader for ``opencode export`` sessions."""

    name = "opencode"

    def sniff(self, head: bytes) -> bool:
        """An object whose ``info`` opens with a session id (``ses_...``)."""
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n").decode("utf-8", "replace")
        return bool(_HEAD.match(text))

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """The session's info, then its messages one at a time."""
        doc = JsonStream(stream)
        session: Session | None = None
        for key in doc.members():
            if key == "info" and session is None:
                session, opening = Session.start(as_dict(doc.value()))
                yield from opening
            elif key == "messages" and session is not None:
                for index, message in enumerate(doc.items()):
                    if isinstance(message, dict):
                        yield from session.message(message, index)
            else:
                doc.skip()
        doc.end()
        if session is not None:
            yield session.end()
