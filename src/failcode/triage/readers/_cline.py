"""Cline task messages (``ui_messages.json`` of the VS Code extension, one file per task).

Rules (about the format and the tool, from Cline's own code: the ``ClineMessage`` union of
``say``/``ask`` messages its webview shows, and the texts ``formatResponse`` in
``src/core/prompts/responses.ts`` feeds back to the model):

- Detection: a JSON array whose first object carries ``ts`` (milliseconds) and ``type``
  ``say`` or ``ask``.
- One file is one task, one session: named after its folder when the folder is the task's id
  (digits: ``tasks/<id>/ui_messages.json``), else after the first message's ``ts``.
- A step is one ``tool`` or ``command`` message (``say`` or ``ask``), numbered from 0 in file
  order. Its result is what the next ``api_req_started`` request sends the model: the block
  ``[<tool> for '<target>'] Result:\\n...`` (``Command executed.\\nOutput:\\n...`` for
  ``execute_command``), the ``command_output`` messages in between for a command.
- Cline records no exit status: a command failed when its output shows it: a missing
  program, a traceback or a shell's failure (``swe_agent.shell_failed``, aider's rule), else
  it is read as exiting 0, so that a failure in a tool's own words (a compiler's, a test
  runner's) is still found, marked ``masked`` (its status was not recorded); a command still
  running in the user's terminal is nothing yet.
- Refusals fed back to the model are rejected actions: "The tool execution failed with the
  following error", a SEARCH block that did not match (``diffError``: "This is likely because
  the SEARCH block content doesn't match exactly"), ".clineignore" blocks, "Tool [x] was not
  executed because a tool has already been used", a missing parameter. "The user denied this
  operation." is a person's refusal: cancelled.
- An edit saved with "New problems detected after saving the file:" (the editor's
  diagnostics Cline appends, ``[ts Error] Line N: ...``) is a static-analysis failure of that
  step, read as a linter's output is (aider's lint block), from the edit tool (source
  ``tool``): no command ran, so the step is no :class:`Command` (its ``editedExistingFile``
  is Cline's name for the edit, not a program).
- Provider errors are the model requests' own (``api_req_failed``, and an
  ``api_req_started`` whose ``streamingFailedMessage`` says why): provider failures with no
  step; one that nothing answered after ends the session ``provider_error``.
- A call offered for the person's approval (an ``ask``) that no result followed before the
  task was resumed or the file ends never ran: cancelled.
- How the session ended: ``completion_result`` last (said, or asked for the user's verdict)
  is ``submitted``; a provider error last is ``provider_error``; anything else (a task left
  to resume, a question pending) is ``unknown``.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Final

from failcode.triage._events import (
    About,
    Command,
    ErrorText,
    Recorded,
    Rejected,
    SessionEnd,
    SessionStart,
    cancelled,
)
from failcode.triage.readers._jsonstream import JsonStream
from failcode.triage.readers._swe_agent import shell_failed
from failcode.triage.readers._text import as_dict, as_str, first_line

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

    from failcode.triage._events import Event

__all__ = ["ClineReader", "ClineSessionReader", "cli_result"]

_RESULT: Final = re.compile(r"\[(?P<tool>\w+)(?: for '(?P<target>[^\n]*?)')?\] Result:\n")
_NEW_PROBLEMS: Final = "New problems detected after saving the file:"
_DENIED: Final = "The user denied this operation."
_REFUSALS: Final = (
    "The tool execution failed with the following error",
    "This is likely because the SEARCH block content doesn't match exactly",
    "is blocked by the .clineignore file settings",
    "was not executed because a tool has already been used",
    "Missing value for required parameter",
    "This tool cannot be used in PLAN MODE",
)
_OUTPUT: Final = re.compile(r"\ACommand executed\.(?:\nOutput:\n(?P<out>.*))?", re.DOTALL)
_STILL_RUNNING: Final = "Command is still running in the user's terminal"
_STATUS: Final = re.compile(r'(?:\bstatus(?: code)?:? |"statusCode\\?":\s*)([1-5]\d\d)\b')
_NODE_ERRNO: Final = re.compile(r"E[A-Z]+(?:_[A-Z]+)?")
"""Node's system error codes (``ECONNRESET``, ``ENOTFOUND``, ``EAI_AGAIN``...): the request
never got an answer; never Node's own ``ERR_*`` codes."""
_TIMED_OUT: Final = frozenset({"ETIMEDOUT", "ESOCKETTIMEDOUT"})
_CONTEXT: Final = re.compile(r"\n*<environment_details>.*\Z", re.DOTALL)


class _Step:
    def __init__(self, index: int, kind: str, action: str, stamp: float | None, *,
                 asked: bool) -> None:
        self.index, self.kind, self.action, self.stamp = index, kind, action, stamp
        self.asked = asked
        """Offered for the person's approval (an ``ask``), not run on its own."""
        self.output: list[str] = []


class ClineReader:
    """Reader for Cline's ``ui_messages.json``."""

    name = "cline"

    def sniff(self, head: bytes) -> bool:
        """A JSON array of ``{"ts": ..., "type": "say"|"ask"}`` messages."""
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        return (text.startswith(b"[") and b'"ts"' in head[:200]
                and (b'"type": "say"' in head or b'"type":"say"' in head
                     or b'"type": "ask"' in head or b'"type":"ask"' in head))

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """The messages one at a time; each step's result from the next request."""
        folder = PurePath(label).parent.name
        task = _Task(folder if folder.isdigit() else None)
        for message in JsonStream(stream).items():
            if isinstance(message, dict):
                yield from task.message(message)
        yield from _unapproved(task.pending)
        if task.started:
            yield SessionEnd(task.steps, task.end, task.name, task.ended_by, said=True)



class _Task:
    """One task being read: its steps waiting for their results, and how it stands."""

    def __init__(self, name: str | None) -> None:
        self.name = name
        self.pending: list[_Step] = []
        self.steps = 0
        self.model: str | None = None
        self.end = "unknown"
        self.ended_by: ErrorText | None = None
        self.started = False

    def message(self, message: dict[str, Any]) -> Iterator[Event]:
        """The events of one message (see the module's rules)."""
        if not self.started:
            self.started = True
            first = message.get("ts")
            self.name = self.name or (str(first) if isinstance(first, int) else None)
            yield SessionStart(self.name)
        said = as_str(message.get("say") or message.get("ask"))
        text = as_str(message.get("text"))
        stamp = _stamp(message.get("ts"))
        model = as_str(as_dict(message.get("modelInfo")).get("modelId"))
        if model and model != self.model:
            self.model = model
            yield About(model)
        if said in ("tool", "command"):
            self.pending.append(_Step(self.steps, said, _action(said, text), stamp,
                                      asked=message.get("type") == "ask"))
            self.steps += 1
        elif said == "command_output" and self.pending:
            self.pending[-1].output.append(text)
        elif said == "api_req_started":
            yield from _results(self.pending, _request(text))
            self.pending = []
            failed = as_str(_json(text).get("streamingFailedMessage"))
            self.end, self.ended_by = "unknown", None
            if failed:
                yield from self._provider(failed, stamp)
        elif said == "api_req_failed":
            yield from self._provider(text, stamp)  # Cline's {"message", "code", ...}
        elif said == "completion_result":
            self.end, self.ended_by = "submitted", None
        elif said in ("resume_task", "resume_completed_task", "followup", "user_feedback"):
            self.end = "submitted" if said == "resume_completed_task" else "unknown"
            if said.startswith("resume"):  # the task was left with a call never approved
                yield from _unapproved(self.pending)
                self.pending = []

    def _provider(self, text: str, stamp: float | None) -> Iterator[Event]:
        self.ended_by = _provider(None, text, stamp)
        self.end = "provider_error"
        yield self.ended_by


def _results(pending: list[_Step], request: str) -> Iterator[Event]:
    """Each pending step with its result in ``request`` (in order, one block each)."""
    blocks = _blocks(request)
    for step in pending:
        body = blocks.pop(0) if blocks else ""
        yield from _outcome(step, body)


def _unapproved(pending: list[_Step]) -> Iterator[Event]:
    """Calls offered for approval that no result followed (the task was left, or resumed:
    Cline tells the model to "assume the tool use was not successful"): they never ran."""
    for step in pending:
        if step.asked:
            yield cancelled(step.index, step.action, "never approved: the task was left",
                            step.stamp)


def _outcome(step: _Step, body: str) -> Iterator[Event]:
    head = body.lstrip()
    if head.startswith(_DENIED):
        yield cancelled(step.index, step.action, "the user denied the operation", step.stamp)
        return
    if any(refusal in head[:400] for refusal in _REFUSALS):
        yield Rejected(step.index, step.action, first_line(head), step.stamp)
        return
    if step.kind == "command":
        if head.startswith(_STILL_RUNNING):
            return
        found = _OUTPUT.match(head)
        output = (found.group("out") or "") if found else "\n".join(step.output) or head
        # no status recorded: a missing program or a shell's failure the output shows, else
        # 0, so that triage's masking rules still find a failure in a tool's own words
        yield Command(step.index, step.action, shell_failed(output) or 0, output, step.stamp)
        return
    problems = head.find(_NEW_PROBLEMS)
    if problems >= 0:
        yield from _new_problems(step, head[problems:])


def _new_problems(step: _Step, diagnostics: str) -> Iterator[Event]:
    """The editor's diagnostics after the edit was saved: a static-analysis failure the edit
    tool reported, classified as a linter's failing output is (the tool and its file name the
    step, as they do in the report); no command ran."""
    from failcode import Failure, from_command, redact  # noqa: PLC0415 - loaded with triage

    failure = from_command(step.action, 1, diagnostics, purpose="static_analysis")
    if isinstance(failure, Failure):
        evidence = redact(first_line(step.action, 1000))[:200]
        yield Recorded(step.index, "tool", evidence, failure, step.stamp)


def _action(kind: str, text: str) -> str:
    """What the step did, as a report names it: the command, or the tool and its path."""
    if kind == "command":
        return text.strip()
    tool = _json(text)
    return f"{as_str(tool.get('tool')) or 'tool'} {as_str(tool.get('path'))}".strip()


def _blocks(request: str) -> list[str]:
    """The tool results a request sends, in order, each without Cline's environment details."""
    found = list(_RESULT.finditer(request))
    out = []
    for index, match in enumerate(found):
        end = found[index + 1].start() if index + 1 < len(found) else len(request)
        out.append(_CONTEXT.sub("", request[match.end():end]))
    return out


def _request(text: str) -> str:
    return as_str(_json(text).get("request"))


def _json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text) if text.lstrip().startswith("{") else None
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _provider(step: int | None, text: str, stamp: float | None) -> ErrorText:
    """A model request's failure: Cline's JSON ``{"message", "code", ...}`` (or plain text),
    read as the SDK error it wraps: an HTTP status (``status 400``, ``"statusCode":400``) is a
    status error, a system error code a connection error (``ETIMEDOUT`` a timeout), anything
    else is read by its wording."""
    error = _json(text)
    message = as_str(error.get("message")) or text or "the model request failed"
    code = as_str(error.get("code"))
    status = _STATUS.search(text)
    if status is not None:
        return ErrorText(step, "provider", "APIStatusError",
                         f"Error code: {status.group(1)} - {message}",
                         evidence=first_line(message), timestamp=stamp)
    if _NODE_ERRNO.fullmatch(code) and not code.startswith("ERR_"):
        kind = "APITimeoutError" if code in _TIMED_OUT else "APIConnectionError"
        return ErrorText(step, "provider", kind, f"{message} ({code})",
                         evidence=first_line(f"{message} ({code})"), timestamp=stamp)
    return ErrorText(step, "provider", "ClineApiError", message,
                     evidence=first_line(message), timestamp=stamp)


def _stamp(value: object) -> float | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 253402300800000:
        return value / 1000
    return None


# -- Cline's CLI (3.x): sessions/<id>/<id>.messages.json ---------------------------------------
_ABORTED: Final = re.compile(r"\A(?:Command failed: )?Command was aborted\.?\Z")
"""A command the run's abort signal stopped (the CLI's own text, ``Error("Command was aborted")``
when its AbortSignal fires: the person, or Cline itself after repeated failing calls): a
cancellation, never the tool's failure."""
_EXITED: Final = re.compile(r"\A\[Command exited with code (-?\d+)\]\n?")
"""How the CLI's ``run_commands`` opens a failed command's ``result`` (its ``error`` is
``Command exited with code N``)."""
_COMMANDS: Final = frozenset({"run_commands", "bash"})


class ClineSessionReader:
    """Reader for a session of Cline's CLI 3.x (``<id>.messages.json``).

    Rules (from the CLI's own strings: its session store writes ``<sessionId>.messages.json``
    beside a manifest ``<sessionId>.json`` in ``sessions/<sessionId>/``):

    - Detection: a JSON object with ``sessionId``, ``origin`` and ``messages`` (the manifest
      has ``session_id`` and no messages: not read).
    - The messages are Anthropic-shaped (``tool_use`` blocks in the assistant's, its
      ``tool_result`` blocks in the next user message, by ``tool_use_id``). A step is one
      command of a ``run_commands`` call (its ``commands`` array, one result entry each:
      ``{"query", "result", "success", "error"}``) or one other tool call, numbered from 0.
    - A command's status: ``[Command exited with code N]`` opening its ``result`` (the
      output follows), else 0 when ``success`` is true; a failed entry without a code is the
      tool's error (its ``error`` text), except ``Command was aborted`` (the CLI's own text when
      the run's abort signal stops a command: the person, or Cline's own stop after repeated
      failing calls), a cancelled outcome. Another tool's entry with ``success`` false (or a
      ``tool_result`` marked ``is_error``) is a failure of that tool.
    - A failed model request is an assistant message with ``metadata.displayRole`` ``"error"``
      (its text the provider's message): a provider error of no step; one nothing followed
      ends the session ``provider_error``.
    - How the session ended: an assistant answer with no tool call last is ``submitted``; a
      provider error last is ``provider_error``; anything else is ``unknown``.
    """

    name = "cline-cli"

    def sniff(self, head: bytes) -> bool:
        """A JSON object naming its ``sessionId`` and ``origin`` before its ``messages``."""
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        start = text[:600]
        return (text.startswith(b"{") and b'"sessionId"' in start and b'"origin"' in start
                and b'"messages"' in head)

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """The session's messages in order; each call's result from its ``tool_result``."""
        del label
        try:
            document = json.loads(stream.read())
        except ValueError as exc:
            from failcode.triage._events import InputError  # noqa: PLC0415

            raise InputError("FC-DATA-003", f"not valid JSON: {exc}") from exc
        session = as_dict(document)
        name = as_str(session.get("sessionId")) or None
        yield SessionStart(name)
        steps, pending = 0, {}
        end, ended_by, model = "unknown", None, None
        said = False
        for raw in session.get("messages") or []:
            message = as_dict(raw)
            stamp = _stamp(message.get("ts"))
            role = as_str(message.get("role"))
            found = as_str(as_dict(message.get("modelInfo")).get("id"))
            if found and found != model:
                model = found
                yield About(model)
            blocks = [as_dict(b) for b in message.get("content") or []
                      if isinstance(b, dict)]
            if role == "assistant" and as_dict(message.get("metadata")).get(
                    "displayRole") == "error":
                text = "\n".join(as_str(b.get("text")) for b in blocks).strip()
                ended_by = _provider(None, text, stamp)
                end = "provider_error"
                yield ended_by
                continue
            if role == "assistant":
                said = True
                calls = [b for b in blocks if b.get("type") == "tool_use"]
                for call in calls:
                    first, steps = steps, steps + _width(call)
                    pending[as_str(call.get("id"))] = (first, call, stamp)
                end, ended_by = ("unknown" if calls else "submitted"), None
            elif role == "user":
                for block in blocks:
                    if block.get("type") == "tool_result":
                        entry = pending.pop(as_str(block.get("tool_use_id")), None)
                        if entry is not None:
                            yield from cli_result(*entry, block)
        yield SessionEnd(steps, end, name, ended_by, said=said)


def _width(call: dict[str, Any]) -> int:
    """How many steps a call is: one per command of a ``run_commands`` call, else one."""
    if as_str(call.get("name")) in _COMMANDS:
        commands = as_dict(call.get("input")).get("commands")
        if isinstance(commands, list) and commands:
            return len(commands)
    return 1


def _cli_action(call: dict[str, Any]) -> str:
    """A tool call as a report names it: the tool and its path(s)."""
    args = as_dict(call.get("input"))
    paths = [as_str(as_dict(f).get("path")) for f in args.get("files") or []
             if isinstance(f, dict)]
    target = as_str(args.get("path")) or ", ".join(p for p in paths if p)
    return f"{as_str(call.get('name')) or 'tool'} {target}".strip()


def cli_result(first: int, call: dict[str, Any], stamp: float | None,
               block: dict[str, Any]) -> Iterator[Event]:
    """The events of one tool call's result (``block``'s ``content``: the result entries),
    its steps numbered from ``first`` (the reader's rules; the live hooks read Cline's hook
    input with them too)."""
    content = block.get("content")
    entries = [as_dict(e) for e in content] if isinstance(content, list) else []
    name = as_str(call.get("name"))
    if name in _COMMANDS:
        commands = [as_str(c) for c in as_dict(call.get("input")).get("commands") or []]
        for offset, asked in enumerate(commands or [""]):
            entry = entries[offset] if offset < len(entries) else {}
            command = asked or as_str(entry.get("query"))
            output = as_str(entry.get("result"))
            exited = _EXITED.match(output)
            if exited is not None:
                yield Command(first + offset, command, int(exited.group(1)),
                              output[exited.end():], stamp)
            elif entry.get("success") is True:
                yield Command(first + offset, command, 0, output, stamp)
            elif entry:
                error = as_str(entry.get("error")) or output
                if _ABORTED.search(error):  # stopped by the abort signal
                    yield cancelled(first + offset, command, "the run was aborted", stamp)
                    continue
                yield ErrorText(first + offset, "tool", "ClineToolError", error,
                                evidence=first_line(error), timestamp=stamp, tool=name)
        return
    failed = [e for e in entries if e.get("success") is False]
    if failed or block.get("is_error") is True:
        error = (as_str(failed[0].get("error")) or as_str(failed[0].get("result"))
                 if failed else _text_of(content))
        yield ErrorText(first, "tool", "ClineToolError", error or "the tool failed",
                        evidence=first_line(error or "the tool failed"), timestamp=stamp,
                        tool=_cli_action(call))


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(as_str(as_dict(b).get("text")) for b in content)
    return ""
