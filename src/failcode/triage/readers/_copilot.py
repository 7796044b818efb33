"""GitHub Copilot CLI session events (``~/.copilot/session-state/<session-id>/events.jsonl``).

The session lab cannot drive Copilot CLI (it needs a GitHub sign-in), so this reader is built
from the format's documentation and from public sources, not from a run of our own:

- the event schema Copilot's own SDK is generated from: ``github/copilot-sdk``,
  ``nodejs/src/generated/session-events.ts`` (``session-events.schema.json``): the envelope
  ``{type, data, id, timestamp, parentId, agentId?, ephemeral?}`` and the data of
  ``session.start``, ``session.error`` (``errorType``, ``message``, ``statusCode``),
  ``session.shutdown`` (``shutdownType`` ``routine``/``error``, ``errorReason``),
  ``session.task_complete``, ``user.message``, ``assistant.message`` (``toolRequests``),
  ``tool.execution_start``, ``tool.execution_complete`` (``success``, ``result.content``,
  ``result.detailedContent``, ``result.contents`` blocks of type ``shell_exit`` with
  ``exitCode``, ``error.code``/``error.message``), ``abort`` (``reason``) and
  ``model.call_failure``;
- how VS Code's Copilot extension reads the same events: ``microsoft/vscode-copilot-chat``,
  ``src/extension/agents/copilotcli/common/copilotCLITools.ts`` (the shell tools ``bash``
  and ``powershell``, the ``<exited with exit code N>`` last line of a shell result, a call
  with ``error.code`` ``rejected`` or ``denied`` as one the user did not confirm), and the
  recorded events of Copilot CLI 0.0.354 under
  ``src/extension/agents/copilotcli/node/test/fixtures/``;
- the events of a Copilot CLI 1.0.78 run published verbatim in ``WildChildForLife/lantern``,
  ``fixtures/copilot-home/session-state/*/events.jsonl`` (a refused tool call is
  ``success: false`` with ``error: {"message": "\\"path\\": Required", "code": "failure"}``;
  ``assistant.turn_end`` and ``session.shutdown`` follow the last answer);
- GitHub's documentation, https://docs.github.com/en/copilot/concepts/agents/copilot-cli/chronicle
  (each session's files in ``~/.copilot/session-state/`` are "a complete record of the
  session"); ``sortie-ai/sortie``, ``docs/copilot-adapter-notes.md`` (``copilot -p
  --output-format json`` prints the same events on stdout, then a ``result`` line with the
  ``sessionId``); ``tenequm/pond`` issue 206 (the one-document
  ``~/.copilot/history-session-state/<id>.json`` of versions before 0.0.342, which this reader
  does not read).

Rules (about the format and the tool):

- Detection: JSON lines whose first object is an event envelope: a dotted lower-case ``type``
  (``session.start``, ``session.info``...), a ``data`` object, an ``id`` and a ``parentId``.
- One file is one session (a resumed session appends ``session.resume`` and goes on), named
  by ``session.start``'s ``sessionId`` (or the ``result`` line's), else by the session's
  folder: the file itself is always ``events.jsonl``.
- A step is one tool call, numbered from 0 in the order the calls first appear (an
  ``assistant.message``'s ``toolRequests``, else ``tool.execution_start``); its result is the
  ``tool.execution_complete`` with the same ``toolCallId``. Calls of a sub-agent (events with
  ``agentId`` or ``parentToolCallId``) are steps of the session too.
- A shell call (``bash``, ``powershell``) runs ``arguments.command``. Its ``success`` is never
  read as the command's exit status: it says whether the tool ran, and Copilot marks a command
  that exited 1 as a success. The exit status is the runtime's own record, a ``shell_exit``
  (or the older ``terminal``) block of ``result.contents`` with its ``exitCode``; else the
  ``<exited with exit code N>`` line that ends the text the model saw (``result.content``,
  then ``detailedContent``). The output is that text without the line. A shell result with
  neither is a command moved to the background (async, or still running when its wait
  expired): still running, not a failure. A status is a JSON integer or the line's digits
  (another type is none); one outside -2**31..2**32-1 is FC-DATA-003 naming the file's line
  and the value (``_text``'s rules; what was read before it is kept).
- A call that ``success: false`` names with ``error.code`` ``rejected`` or ``denied`` was
  not run for want of permission (Copilot CLI 1.0.60's own texts, ``@github/copilot``
  ``app.js``): one a permission rule, a ``PermissionRequest`` hook or the organization refused
  ("Permission to run this tool was denied due to the following rules: ...", "Permission
  denied and could not request permission from user" when no one could be asked, "Access
  denied: ... is excluded by organization") is a rejected action; any other ("The user
  rejected this tool call", "Permission denied by user", "The pending permission request was
  cancelled ...") the person declining it: a cancelled outcome. ``error.code``
  ``interrupted`` ("The execution of this tool, or a previous tool was interrupted.", written
  for a call a resumed session found unfinished) or ``cancelled`` is a cancelled outcome. A
  call still pending when an ``abort`` arrives (the user pressed Ctrl+C, a remote stop) was
  cancelled, whatever its completion says. A ``permission.completed`` whose ``result.kind``
  is a denial settles its call at once (Copilot writes no completion for it when the person
  then stops the turn): ``denied-interactively-by-user`` is the person declining (cancelled);
  ``denied-by-rules``, ``denied-by-permission-request-hook``,
  ``denied-by-content-exclusion-policy`` and
  ``denied-no-approval-rule-and-could-not-request-from-user`` are rejected actions. None of
  these is a failure. Any other ``success:
  false`` (arguments the tool refused, a file that does not exist, a shell command the tool
  would not run) was fed back to the model: a rejected action.
- ``session.error`` is a provider error when its ``errorType`` is the model provider's
  (``authentication``, ``authorization``, ``quota``, ``rate_limit``, ``context_limit``,
  ``query``, ``model_call``) or it carries an HTTP ``statusCode``; the status is that code, or
  the one the type stands for (401, 403, 402, 429), and ``context_limit`` is the context window.
  A ``statusCode`` is read when it is an integer in 100..599. With no status (``query``,
  ``model_call``) the message decides, as the type ``APIError`` (the classifier's wording rules;
  the closest provider code when it names no cause); a message Copilot kept as
  ``JSON.stringify`` of a string is read as that string.
  Any other ``session.error``, and a ``session.shutdown`` of type ``error``, is Copilot's own
  runtime failing (harness). ``model.call_failure`` (a failed model call, in ``--output-format
  json`` output) is a provider error too. Errors are counted at the next step; one repeated
  (a retried call) counts as repeats.
- How the session ended, from the main agent's records (sub-agent records and bookkeeping such
  as ``assistant.turn_end``, ``session.idle``, ``session.info`` or a routine
  ``session.shutdown`` change nothing): a provider error that nothing followed ended it
  (``provider_error``); a last ``assistant.message`` that answers in text with no tool
  request, or a ``session.task_complete`` not marked unsuccessful, with no call pending, is
  the agent's answer (``submitted``); anything else (a tool result or a prompt never answered,
  an abort, a runtime error) is ``unknown``. A message or a tool call after an error means the
  session went on: the error did not end it.
- Time: each event's ``timestamp`` (Copilot writes UTC with ``Z``; one without a zone is read
  as UTC, ``_text``'s rules, whatever the machine's zone).
- A file in this format with neither a message nor a tool call nor an error (a session
  started and closed without a prompt) holds no session: it is an FC-DATA-002 input error,
  never an empty session.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from failcode._lazy_re import lazy
from failcode.triage._events import (
    Command,
    ErrorText,
    Event,
    InputError,
    Rejected,
    SessionEnd,
    SessionStart,
    cancelled,
)
from failcode.triage.readers._jsonstream import loads
from failcode.triage.readers._lines import json_objects
from failcode.triage.readers._text import (
    as_dict,
    as_key,
    as_list,
    as_str,
    exit_in_text,
    first_line,
    http_status,
    iso_time,
    stated_exit,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

__all__ = ["CopilotCliReader"]

_SHELLS: Final = ("bash", "powershell")
_EVENT_TYPE: Final = lazy(r"[a-z][a-z_]*(?:\.[a-z_]+)+")
_LONG_FIRST: Final = re.compile(rb'\{"type":\s*"[a-z][a-z_]*(?:\.[a-z_]+)+",\s*"data":\s*\{')
_EXITED: Final = lazy(r"\n?<exited with exit code (-?\d+)>\s*\Z")
_DECLINED: Final = ("rejected", "denied")
_STOPPED: Final = ("interrupted", "cancelled")
_BY_RULE: Final = lazy(
    r"(?i)denied due to the following rules|permission denied by rules|could not request "
    r"permission from user|PermissionRequest hook|permission denied by hook|excluded by "
    r"organization")
_PROVIDER_TYPES: Final = {"authentication": 401, "authorization": 403, "quota": 402,
                          "rate_limit": 429, "context_limit": None, "query": None,
                          "model_call": None}


def _root(entry: dict[str, Any], data: dict[str, Any]) -> bool:
    """An event of the main agent (sub-agent events carry ``agentId`` or
    ``parentToolCallId``)."""
    return not entry.get("agentId") and not data.get("parentToolCallId")


def _folder_name(label: str) -> str | None:
    """The session's folder name for ``.../<session-id>/events.jsonl``, else None."""
    parts = label.replace("\\", "/").rsplit("/", 2)
    if len(parts) == 3 and parts[2] == "events.jsonl" and parts[1]:
        return parts[1]
    return None


def _arguments(value: object) -> dict[str, Any]:
    """A call's arguments: an object, or the JSON text of one."""
    if isinstance(value, str):
        try:
            value = loads(value)
        except ValueError:
            return {}
    return as_dict(value)


def _exit_line(text: str, where: str) -> tuple[int | None, str]:
    """The status an ``<exited with exit code N>`` last line states, and the text before it."""
    found = _EXITED.search(text)
    if found is None:
        return None, text
    return exit_in_text(found.group(1), where), text[:found.start()]


def _shell_status(result: dict[str, Any], error: dict[str, Any], where: str,
                  ) -> tuple[int | None, str]:
    """A shell call's exit status and output: the runtime's record, else the text's last line."""
    status: int | None = None
    preview = ""
    for block in as_list(result.get("contents")):
        item = as_dict(block)
        if item.get("type") not in ("shell_exit", "terminal"):
            continue
        code = stated_exit(item.get("exitCode"), where)
        if code is not None:
            status = code
            preview = as_str(item.get("outputPreview")) or as_str(item.get("text"))
    texts = (as_str(result.get("content")), as_str(result.get("detailedContent")),
             as_str(error.get("message")))
    for text in texts:
        stated, _ = _exit_line(text, where)
        if status is None and stated is not None:
            status = stated
    # the whole output where Copilot kept it (``content`` may be cut for the model)
    _, output = _exit_line(texts[1] or texts[0] or texts[2], where)
    return status, (output or preview)


class _Call:
    """One tool call waiting for its result."""

    __slots__ = ("args", "name", "stamp", "step")

    def __init__(self, step: int, name: str, args: dict[str, Any], stamp: float | None) -> None:
        self.step, self.name, self.args, self.stamp = step, name, args, stamp


class _State:
    """One session being read."""

    __slots__ = ("calls", "ended_by", "last", "name", "started", "steps", "talked")

    def __init__(self, name: str | None) -> None:
        self.name = name
        self.steps = 0
        self.calls: dict[str, _Call] = {}
        self.talked = False
        """A message or a tool call was seen (the file holds a session)."""
        self.started = False
        self.last = "none"
        """The main agent's last record: ``prompt``, ``answer``, ``tool``, ``error``,
        ``abort`` or ``none``."""
        self.ended_by: ErrorText | None = None
        """The last error, while nothing has followed it."""

    def call(self, call_id: str, name: str, args: object, stamp: float | None) -> None:
        """A tool call, numbered the first time its id appears."""
        self.talked = True
        if not call_id:
            self.steps += 1
            return
        known = self.calls.get(call_id)
        if known is None:
            self.calls[call_id] = _Call(self.steps, name, _arguments(args), stamp)
            self.steps += 1
        else:
            known.name = known.name or name
            known.args = known.args or _arguments(args)


class CopilotCliReader:
    """Reader for GitHub Copilot CLI session events."""

    name = "copilot-cli"

    def sniff(self, head: bytes) -> bool:
        """A first line that is a Copilot event envelope: ``{type, data, id, parentId}``."""
        first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0].rstrip(b"\r")
        if not first.startswith(b"{"):
            return False
        try:
            value = loads(first)
        except ValueError:  # not whole: a first line longer than the head, or a cut file
            whole = b"\n" in head.lstrip(b"\xef\xbb\xbf \t\r\n")
            return not whole and bool(_LONG_FIRST.match(first))
        if not isinstance(value, dict):
            return False
        kind = value.get("type")
        return (isinstance(kind, str) and bool(_EVENT_TYPE.fullmatch(kind))
                and isinstance(value.get("data"), dict) and "id" in value
                and "parentId" in value)

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """One pass over the lines; a call's event is yielded when its result arrives."""
        state = _State(None)
        for number, entry in json_objects(stream):
            for event in self._entry(state, entry, f"line {number}"):
                if not state.started:
                    state.started = True
                    yield SessionStart(state.name or _folder_name(label))
                yield event
        if not state.started:
            if not state.talked:
                raise InputError("FC-DATA-002", "Copilot CLI session events without a message, "
                                                "a tool call or an error: no session to triage")
            yield SessionStart(state.name or _folder_name(label))
        name = state.name or _folder_name(label)
        if state.last == "error" and state.ended_by is not None:
            status = "provider_error" if state.ended_by.source == "provider" else "unknown"
            yield SessionEnd(state.steps, status, name, state.ended_by)
        elif state.last == "answer" and not state.calls:
            yield SessionEnd(state.steps, "submitted", name)
        else:
            yield SessionEnd(state.steps, "unknown", name)

    def _entry(self, state: _State, entry: dict[str, Any], where: str) -> Iterator[Event]:
        """The events one record gives, and what it changes in the session's state."""
        kind = entry.get("type")
        data = as_dict(entry.get("data"))
        stamp = iso_time(entry.get("timestamp"))
        root = _root(entry, data)
        if kind == "session.start":
            state.name = state.name or as_str(data.get("sessionId")) or None
        elif kind == "result":
            state.name = state.name or as_str(entry.get("sessionId")) or None
        elif kind == "user.message":
            state.talked = True
            if root:
                state.last, state.ended_by = "prompt", None
        elif kind == "assistant.message":
            state.talked = True
            requests = [as_dict(r) for r in as_list(data.get("toolRequests"))]
            for request in requests:
                state.call(as_key(request.get("toolCallId")), as_str(request.get("name")),
                           request.get("arguments"), stamp)
            if root:
                state.ended_by = None
                state.last = ("tool" if requests else
                              "answer" if as_str(data.get("content")).strip() else "none")
        elif kind in ("tool.execution_start", "tool.user_requested"):
            state.call(as_key(data.get("toolCallId")), as_str(data.get("toolName")),
                       data.get("arguments"), stamp)
            if root:
                state.last, state.ended_by = "tool", None
        elif kind == "tool.execution_complete":
            call = state.calls.pop(as_key(data.get("toolCallId")), None)
            if call is not None:
                call.name = call.name or as_str(data.get("toolName"))
                event = self._result(call, data, where)
                if event is not None:
                    yield event
            if root:
                state.last, state.ended_by = "tool", None
        elif kind == "permission.completed":
            event = self._permission(state, data)
            if event is not None:
                yield event
        elif kind == "abort":
            reason = as_str(data.get("reason")) or "abort"
            for call in sorted(state.calls.values(), key=lambda c: c.step):
                yield cancelled(call.step, _action(call), f"interrupted ({reason})", call.stamp)
            state.calls.clear()  # their completions that follow change nothing
            if root:
                state.last, state.ended_by = "abort", None
        elif kind == "session.task_complete":
            if root and data.get("success") is not False:
                state.last, state.ended_by = "answer", None
        elif kind in ("session.error", "model.call_failure", "session.shutdown"):
            yield from self._error(state, kind, data, stamp, root=root)

    def _error(self, state: _State, kind: object, data: dict[str, Any], stamp: float | None,
               *, root: bool) -> Iterator[Event]:
        """A session error, a failed model call, or a shutdown on an error."""
        if kind == "session.shutdown":
            if data.get("shutdownType") != "error" or (
                    state.last == "error" and state.ended_by is not None):
                return  # a routine end, or the error that ended it was already read
            reason = as_str(data.get("errorReason")) or "the session ended on an error"
            error = ErrorText(state.steps, "harness", "CopilotShutdownError", reason,
                              evidence=first_line(reason), timestamp=stamp)
        elif kind == "session.error":
            error = self._session_error(state.steps, data, stamp)
        else:
            error = self._call_failure(state.steps, data, stamp)
        yield error
        if root and data.get("source") in (None, "top_level"):
            state.last, state.ended_by = "error", error

    @staticmethod
    def _permission(state: _State, data: dict[str, Any]) -> Event | None:
        """A permission request's answer: a denial settles the call it was for (Copilot
        writes no completion for it when the turn is aborted next)."""
        verdict = as_str(as_dict(data.get("result")).get("kind"))
        if not verdict.startswith("denied"):
            return None
        call = state.calls.pop(as_key(data.get("toolCallId")), None)
        if call is None:
            return None
        if verdict == "denied-interactively-by-user":
            return cancelled(call.step, _action(call), "declined by the user", call.stamp)
        return Rejected(call.step, _action(call), f"permission {verdict}", call.stamp)

    @staticmethod
    def _result(call: _Call, data: dict[str, Any], where: str) -> Event | None:
        success = data.get("success") is True
        error = as_dict(data.get("error"))
        code, message = as_str(error.get("code")), as_str(error.get("message"))
        if not success and code in _STOPPED:
            return cancelled(call.step, _action(call), first_line(message) or code, call.stamp)
        if not success and code in _DECLINED:
            if _BY_RULE.search(message):  # a permission rule, hook or policy refused it
                return Rejected(call.step, _action(call), first_line(message), call.stamp)
            reason = f"declined by the user ({first_line(message, 120)})" if message else (
                "declined by the user")
            return cancelled(call.step, _action(call), reason, call.stamp)
        result = as_dict(data.get("result"))
        if call.name in _SHELLS:
            command = as_str(call.args.get("command"))
            status, output = _shell_status(result, error, where)
            if status is not None:
                return Command(call.step, command, status, output, call.stamp)
            if success:
                return Command(call.step, command, None, output, call.stamp, running=True)
            reason = first_line(as_str(error.get("message")) or output) or "refused"
            return Rejected(call.step, f"{call.name} {command}".strip(), reason, call.stamp)
        if success:
            return None
        target = as_str(call.args.get("path")) or as_str(call.args.get("file_path"))
        reason = (first_line(as_str(error.get("message")))
                  or first_line(as_str(result.get("content"))) or "failed")
        return Rejected(call.step, f"{call.name or 'tool'} {target}".strip(), reason,
                        call.stamp)

    @staticmethod
    def _session_error(step: int, data: dict[str, Any], stamp: float | None) -> ErrorText:
        error_type = as_str(data.get("errorType"))
        message = _unquoted(as_str(data.get("message"))) or error_type or "session error"
        code = http_status(data.get("statusCode"))
        status = code if code is not None else _PROVIDER_TYPES.get(error_type)
        if error_type not in _PROVIDER_TYPES and status is None:
            return ErrorText(step, "harness", "CopilotSessionError", message,
                             evidence=first_line(message), timestamp=stamp)
        return _provider(step, message, status, stamp,
                         context_window=error_type == "context_limit")

    @staticmethod
    def _call_failure(step: int, data: dict[str, Any], stamp: float | None) -> ErrorText:
        message = (_unquoted(as_str(data.get("errorMessage"))) or as_str(data.get("errorCode"))
                   or "model call failed")
        return _provider(step, message, http_status(data.get("statusCode")), stamp)


def _unquoted(text: str) -> str:
    """A model call's error as Copilot wrote it: the SDK keeps ``JSON.stringify(error)``, so a
    string error is kept as a quoted JSON string (``"400 400 Bad Request\\n"`` with its
    quotes); its text."""
    if len(text) >= 2 and text.startswith('"') and text.endswith('"'):
        try:
            value = loads(text)
        except ValueError:
            return text
        if isinstance(value, str):
            return value.strip()
    return text


def _action(call: _Call) -> str:
    """What a call tried: the tool and its command or path."""
    target = (as_str(call.args.get("command")) or as_str(call.args.get("path"))
              or as_str(call.args.get("file_path")))
    return f"{call.name or 'tool'} {target}".strip()


def _provider(step: int, message: str, status: int | None, stamp: float | None, *,
              context_window: bool = False) -> ErrorText:
    """A model provider's error, with its HTTP status where Copilot kept it."""
    if context_window:
        return ErrorText(step, "provider", "ContextWindowExceeded", message,
                         evidence=first_line(message), timestamp=stamp, context_window=True)
    if status is not None:
        return ErrorText(step, "provider", "APIStatusError", f"Error code: {status} - {message}",
                         evidence=first_line(message), timestamp=stamp)
    return ErrorText(step, "provider", "APIError", message, evidence=first_line(message),
                     timestamp=stamp)
