"""Gemini CLI's headless output: ``gemini -p ... --output-format stream-json`` (JSON Lines events,
what CI jobs keep) and ``--output-format json`` (one JSON object).

Rules (about the format and the tool; built from the lab's pinned ``@google/gemini-cli``
0.61.0, whose bundle keeps its sources' paths: ``packages/core/src/output/types.ts`` (the
``JsonStreamEventType`` names), ``output/stream-json-formatter.ts`` and
``output/json-formatter.ts`` (the writers), ``packages/cli/src/nonInteractiveCli.ts`` and
``nonInteractiveCliAgentSession.ts`` (what is written when), ``packages/cli/src/utils/errors.ts``
(how an error ends the run, its exit code), ``packages/core/src/tools/shell.ts`` (the shell
tool's display text), ``packages/core/src/tools/tool-error.ts`` (the ``ToolErrorType`` values),
``packages/core/src/utils/errors.ts`` (the ``Fatal*Error`` classes and their exit codes); and
the lab's runs of it, ``tests/lab/fixtures/gemini-cli/*/stream.jsonl``):

- Detection, stream-json: a line whose object is ``{"type": "init", ..., "session_id"}`` (the
  first line Gemini CLI writes; lines before it that are not JSON, such as Gemini CLI's own
  warnings when a job keeps stderr with stdout, are passed over). Claude Code's init is
  ``"type": "system"`` with a ``subtype``, never ``"type": "init"``.
- Detection, json: a line that opens an object (``{``, or ``[ERROR] {`` as Gemini CLI's
  feedback prints it again on stderr) whose first member is ``session_id`` followed by
  ``response``, ``stats``, ``error`` or ``warnings`` (``JsonFormatter.format``'s order), or,
  as versions before ``session_id`` wrote it, an input that starts with ``response`` and has
  the telemetry ``stats`` (``{"models": ...}``) in its first 64 KiB. Whichever of an
  ``init`` event and such an object comes first decides.
- Stream events: ``init`` (``session_id``, ``model``) starts a session (a new ``init`` starts
  another: runs appended to one file); ``message`` (``role`` ``user`` or ``assistant``, the
  model's text in ``delta`` chunks); ``tool_use`` (``tool_name``, ``tool_id``,
  ``parameters``); ``tool_result`` (``tool_id``, ``status`` ``success`` or ``error``,
  ``output``: the tool's display text when it is a string, ``error``: ``{type, message}`` with
  a ``ToolErrorType``); ``error`` (``severity`` ``warning`` or ``error``, ``message``); and
  ``result`` (``status`` ``success`` or ``error``, ``error`` ``{type, message}`` when an
  error ended the run, ``stats``). Lines of another ``type`` are passed over; a line that
  starts like JSON and is not (a cut last line) is FC-DATA-003, what came before kept.
- A step is one ``tool_use``, numbered from 0 in the order the model asked for them (the
  chat recording's ``toolCalls`` order); it is read when its ``tool_result`` comes, and one
  with no result (a run cut off) is a step of no event.
- A ``run_shell_command`` result's ``output`` is what Gemini CLI shows, not what the model
  read: the command's own output when it printed something, with no exit status (Gemini CLI
  marks every command that ran ``success``, a failed one included). So a command's status is
  the one the display states where it states one, read with the chat recording's rules
  (:func:`~failcode.triage.readers._gemini.tool_call`): ``Command exited with code: N`` (a
  command that printed nothing), ``Command terminated by signal: N`` (128+N), the model's
  ``Output: ... Exit Code: N`` text (``--debug`` shows it whole), a timeout, a command moved
  to the background (still running), ``Command cancelled by user.`` (a cancelled outcome).
  Otherwise the stream holds no status: when the output shows a failure in a shell's or a
  tool's words (``_swe_agent.shell_failed``: a missing program, a missing file, a test run's
  ``1 failed``, a compiler's ``file:line: error:``) the command failed with no status (None:
  triage classifies it from its output alone, so ``diff``'s missing file is not read as
  ``diff`` finding differences), else its status is 0 (triage's masking rules still read the
  output of a command that hides a status); a nonzero status whose output shows no failure
  those words name (``diff``'s and ``cmp``'s differences) is lost, as it is on the terminal.
- A ``tool_result`` with ``status`` ``error``: ``policy_violation`` (``Tool execution denied by
  policy.``: a deny rule, ``--yolo`` or not) is a rejected action, as is any other error of a
  call that never ran (invalid parameters, a path outside the workspace); a shell's
  ``shell_execute_error`` (the shell could not run it) is a failed command; another tool's
  error is a rejected action naming its ``file_path`` (the chat recording's rule); a
  ``write_file`` or ``replace`` that succeeded wrote its ``file_path``.
- How the session ended is its ``result``: ``success`` is ``submitted``. ``error`` is read
  from its ``error``: ``FatalTurnLimitedError`` (exit 53; ``maxSessionTurns``) is the turn
  limit; ``FatalCancellationError`` (exit 130, Ctrl+C) ends ``unknown``; a message that is a
  model API's error (``[API Error: ...]``, an HTTP or RPC status, quota, rate limit; the chat
  recording's rule, its status read the same way) is ``provider_error``; any other
  (``FatalToolExecutionError`` 54 such as a full disk, ``FatalAuthenticationError`` 41,
  ``FatalInputError`` 42, ``FatalConfigError`` 52, an unknown error) is Gemini CLI stopping on
  an error of its own, ``unknown`` with that error (source ``harness``). A ``result`` with
  status ``error`` and no ``error`` (an invalid model response: empty, only thoughts, blocked)
  takes the last ``error`` event's message: a provider error (with none, ``unknown``). An
  ``error`` event of severity ``error`` saying ``Maximum session turns exceeded`` (Gemini
  CLI's own turn cap) is the turn limit, whatever ``result`` follows; any other (a model API's
  error such as a quota, a response Gemini CLI found invalid) is a provider error at the step
  the request was for, the session's end when nothing answers after it; a ``warning`` (a loop
  detected, a hook's block) changes nothing. No ``result`` (the run was cut off) is
  ``unknown``, or ``provider_error`` when a provider's error was its last word.
- The single json object holds no step: ``response`` (the model's last text), ``stats``
  (``SessionMetrics``: ``models``, ``tools.totalCalls``, ...), ``error`` ``{type, message,
  code}`` and ``warnings``. Its session is named by ``session_id``, has ``tools.totalCalls``
  steps (none of them read), its model is the one of ``stats.models`` with the most requests,
  and it ends by ``error`` as a stream's ``result`` does (a ``code`` of 100..599 is that HTTP
  status; the others are exit codes), by a ``Maximum session turns exceeded`` warning as the
  turn limit, else ``submitted``. Gemini CLI 0.61.0 writes the object of an error that stops
  the run (``handleError``, ``FatalTurnLimitedError``) to stderr, after its warnings and a
  failed request's traces, and often twice (the second time after ``[ERROR] ``); the others
  to stdout. The text around an object is passed over, an object of the session just read is
  read once, and ``JSON.stringify``'s indented form is taken as written (it opens with a line
  ``{`` and closes with a line ``}``); an object cut short is FC-DATA-003.
- Time: each event's ``timestamp`` (UTC ISO 8601, ``_text``'s rules).
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
    cancelled,
)
from failcode.triage.readers._gemini import _API_ERROR, _TIMED_OUT, _http_status, tool_call
from failcode.triage.readers._jsonstream import loads
from failcode.triage.readers._lines import _not_json, lines
from failcode.triage.readers._swe_agent import shell_failed
from failcode.triage.readers._text import (
    EXIT_MAX,
    as_dict,
    as_str,
    exit_in_text,
    first_line,
    http_status,
    iso_time,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

__all__ = ["GeminiStreamReader"]

_SHELL: Final = ("run_shell_command", "shell")
_INIT: Final = re.compile(rb'(?m)^\{[^\n]*"type": ?"init"[^\n]*"session_id"')
_OBJECT: Final = re.compile(
    rb'(?m)^(?:\[ERROR\] )?\{\s*"session_id"\s*:\s*"[^"\\\n]*"\s*,\s*'
    rb'"(?:response|stats|error|warnings)"\s*:')
"""The json output's object, where it starts: ``JsonFormatter.format``'s first two members."""
_OLD_OBJECT: Final = re.compile(rb'\A\{\s*"response"\s*:')
_STATS: Final = re.compile(rb'"stats"\s*:\s*\{\s*"models"\s*:')
_OBJECT_MAX: Final = 64 * 1024 * 1024
_FIRST_MEMBERS: Final = ('"session_id"', '"response"')
_SESSION_ID: Final = lazy(r'\A\{\s*"session_id"\s*:\s*"([^"\\]*)"')
_EXITED: Final = lazy(r"\ACommand exited with code: (-?\d+)\s*\Z")
_SIGNALLED: Final = lazy(r"\ACommand terminated by signal: (\d+)\s*\Z")
_SPAWN_FAILED: Final = "Command failed: "
_USER_CANCELLED: Final = "Command cancelled by user."
_BACKGROUND: Final = ("Command moved to background (PID", "Background process started with PID")
_RAN: Final = lazy(r"\AOutput: ", re.MULTILINE)
"""The model's own text of a shell call (shown whole under ``--debug``): the chat recording's."""
_MAX_TURNS: Final = "Maximum session turns exceeded"
_TURN_LIMIT: Final = "FatalTurnLimitedError"
_CANCELLED: Final = "FatalCancellationError"
_DENIED: Final = "policy_violation"
_SHELL_ERROR: Final = "shell_execute_error"


class _Session:
    """One session being read."""

    __slots__ = ("answered", "calls", "end", "ended_by", "name", "resolved", "steps")

    def __init__(self, name: str | None) -> None:
        self.name = name
        self.steps = 0
        self.calls: dict[str, tuple[int, str, dict[str, Any]]] = {}
        """Each ``tool_id`` asked for: its step, tool name and parameters."""
        self.end = "unknown"
        self.ended_by: ErrorText | None = None
        self.resolved = False
        """A ``result`` has said how the run ended."""
        self.answered = False

    def close(self) -> SessionEnd:
        if self.ended_by is not None and self.ended_by.limit is not None:
            return SessionEnd(self.steps, "limit", self.name, self.ended_by)
        if not self.resolved:  # cut off before its result
            if self.ended_by is not None and self.ended_by.source == "provider":
                return SessionEnd(self.steps, "provider_error", self.name, self.ended_by)
            return SessionEnd(self.steps, "unknown", self.name, said=self.answered)
        return SessionEnd(self.steps, self.end, self.name, self.ended_by, said=self.answered)


class GeminiStreamReader:
    """Reader for Gemini CLI's ``-p`` stream-json and json output."""

    name = "gemini-stream-json"

    def sniff(self, head: bytes) -> bool:
        """An ``init`` event with a ``session_id``, or the json output's object."""
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        return (_INIT.search(text) is not None or _OBJECT.search(text) is not None
                or (_OLD_OBJECT.match(text) is not None and _STATS.search(text) is not None))

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """The events line by line, or the json output's objects."""
        head = stream.peek()  # type: ignore[attr-defined]
        found = _INIT.search(head)
        if found is not None and ((start := _OBJECT.search(head)) is None
                                  or found.start() < start.start()):
            yield from _events(stream)
        else:
            yield from _objects(stream)


def _events(stream: BinaryIO) -> Iterator[Event]:
    current: _Session | None = None
    for number, line in lines(stream):
        text = line.strip()
        if not text.startswith("{"):
            continue  # stderr kept with stdout (Gemini CLI's warnings), a blank line
        try:
            entry = loads(text)
        except ValueError as exc:  # the events before it are kept: triage ends it here
            raise InputError("FC-DATA-003", _not_json(number, line, exc)) from None
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        if kind == "init":
            if current is not None:
                yield current.close()
            current = _Session(as_str(entry.get("session_id")) or None)
            yield SessionStart(current.name)
            if as_str(entry.get("model")):
                yield About(as_str(entry.get("model")))
        elif current is not None:
            yield from _event(current, kind, entry, f"line {number}")
    if current is not None:
        yield current.close()


def _event(state: _Session, kind: object, entry: dict[str, Any], where: str,
           ) -> Iterator[Event]:
    stamp = iso_time(entry.get("timestamp"))
    if kind == "message" and entry.get("role") == "assistant":
        state.answered = True
        if state.ended_by is not None and state.ended_by.limit is None:
            state.ended_by = None  # the model answered after an error
    elif kind == "tool_use":
        state.calls[as_str(entry.get("tool_id"))] = (
            state.steps, as_str(entry.get("tool_name")), as_dict(entry.get("parameters")))
        state.steps += 1
        if state.ended_by is not None and state.ended_by.limit is None:
            state.ended_by = None
    elif kind == "tool_result":
        call = state.calls.pop(as_str(entry.get("tool_id")), None)
        if call is not None:
            event = _tool_result(call, entry, stamp, where)
            if event is not None:
                yield event
    elif kind == "error" and entry.get("severity") == "error":
        message = as_str(entry.get("message"))
        if message.startswith(_MAX_TURNS):
            state.ended_by = _turn_limit(message, stamp)
        else:  # a model API's error, or a response Gemini CLI found invalid
            state.ended_by = _provider(state.steps, message, stamp)
            yield state.ended_by
    elif kind == "result":
        state.resolved = True
        error = as_dict(entry.get("error"))
        if entry.get("status") == "success" and not error:
            if state.ended_by is None or state.ended_by.limit is None:
                state.end, state.ended_by = "submitted", None
            return
        if error:
            state.end, state.ended_by = _ending(state.steps, error, stamp)
            if state.end == "provider_error" and state.ended_by is not None:
                yield state.ended_by
        elif state.ended_by is not None and state.ended_by.limit is None:
            state.end = "provider_error"  # what the error event before it named
        else:
            state.end, state.ended_by = "unknown", None


def _tool_result(call: tuple[int, str, dict[str, Any]], entry: dict[str, Any],
                 stamp: float | None, where: str) -> Event | None:
    """One tool call's event, by the module's rules."""
    step, name, args = call
    status = as_str(entry.get("status"))
    error = as_dict(entry.get("error"))
    text = as_str(entry.get("output"))
    if name not in _SHELL:
        detail = as_str(error.get("message")) or text
        return tool_call(step, {"name": name, "args": args, "status": status,
                                "resultDisplay": detail}, stamp, where)
    command = as_str(args.get("command"))
    if status == "error":
        message = as_str(error.get("message")) or text
        if as_str(error.get("type")) == _SHELL_ERROR:
            body = text.removeprefix(_SPAWN_FAILED) or message
            return Command(step, command, shell_failed(body) or 1, body, stamp)
        return Rejected(step, command or name, first_line(message) or "refused", stamp)
    head = text.strip()
    if _RAN.match(head):  # the model's text, ``--debug``: the chat recording's rules
        return tool_call(step, {"name": name, "args": args, "status": status,
                                "resultDisplay": text}, stamp, where)
    if head.startswith(_USER_CANCELLED):
        return cancelled(step, command or name, "cancelled by the user", stamp)
    if head.startswith(_BACKGROUND):
        return Command(step, command, None, head, stamp, running=True)
    exited = _EXITED.match(head)
    if exited is not None:
        return Command(step, command, exit_in_text(exited.group(1), where), "", stamp)
    signal = _SIGNALLED.match(head)
    if signal is not None:
        number = exit_in_text(signal.group(1), where, what="the signal", low=0,
                              high=EXIT_MAX - 128)
        return Command(step, command, 128 + number, "", stamp)
    if head.startswith(_SPAWN_FAILED):
        body = head.removeprefix(_SPAWN_FAILED)
        return Command(step, command, shell_failed(body) or 1, body, stamp)
    if _TIMED_OUT.match(head):
        return Command(step, command, None, head, stamp, timed_out=True)
    return Command(step, command, None if shell_failed(text) else 0, text, stamp)


def _turn_limit(message: str, stamp: float | None) -> ErrorText:
    return ErrorText(None, "agent", "MaxSessionTurns", "the agent reached its turn limit",
                     evidence=first_line(message), timestamp=stamp, limit="turn")


def _provider(step: int | None, message: str, stamp: float | None,
              status: int | None = None) -> ErrorText:
    """A model API's error as the chat recording reads its error record."""
    text = first_line(message or "error", 2000)
    code = str(status) if status is not None else _http_status(text)
    shown = f"Error code: {code} - {text}" if code else text
    return ErrorText(step, "provider", "google.genai.errors.APIError", shown,
                     evidence=text[:200], timestamp=stamp)


def _ending(step: int | None, error: dict[str, Any], stamp: float | None,
            ) -> tuple[str, ErrorText | None]:
    """How an ``error`` of a ``result`` (or of the json object, ``step`` None: it keeps no
    step) ended the run."""
    kind = as_str(error.get("type"))
    message = as_str(error.get("message"))
    status = http_status(error.get("code"))
    if kind == _TURN_LIMIT:
        return "limit", _turn_limit(message, stamp)
    if kind == _CANCELLED:
        return "unknown", None
    if status is not None or _API_ERROR.search(message):
        return "provider_error", _provider(step, message, stamp, status)
    detail = message or kind or "Gemini CLI stopped on an error"
    return "unknown", ErrorText(None, "harness", kind or "GeminiCliError", detail,
                                evidence=first_line(detail), timestamp=stamp)


def _objects(stream: BinaryIO) -> Iterator[Event]:
    """Each json output object of the input (the module's rules): an object starts on a line
    of its own (``{``, or ``[ERROR] {`` as Gemini CLI's feedback prints it again) whose first
    member is ``session_id`` or ``response``, and ``JSON.stringify``'s indented form ends it
    at a line that is ``}``; the text around it (Gemini CLI's warnings and traces on stderr)
    is passed over, as is an object of the session just read (one error printed twice)."""
    gathered: list[str] = []
    size = start = 0
    last: str | None = None
    for number, line in lines(stream):
        text = line.rstrip()
        if not gathered:
            opened = text.removeprefix("[ERROR] ")
            if opened == "{":
                gathered, size, start = [opened], 2, number
            elif opened.startswith(("{\"session_id\"", "{\"response\"")):
                yield from _one(opened, number, number, last)
                last = _name(opened)
            continue
        if len(gathered) == 1 and not text.lstrip().startswith(_FIRST_MEMBERS):
            gathered = []  # a brace of something else (a trace's object)
            continue
        gathered.append(text)
        size += len(text) + 1
        if size > _OBJECT_MAX:
            raise InputError("FC-DATA-003", f"the object from line {start} is longer than "
                             f"{_OBJECT_MAX // (1024 * 1024)} MiB; expected Gemini CLI's json")
        if text == "}":
            whole = "\n".join(gathered)
            gathered = []
            yield from _one(whole, start, number, last)
            last = _name(whole)
    if gathered:
        raise InputError("FC-DATA-003", f"the object from line {start} ends early (cut "
                         "short?); expected the rest of Gemini CLI's json output")


def _name(text: str) -> str | None:
    found = _SESSION_ID.search(text[:400])
    return found.group(1) if found is not None else None


def _one(text: str, start: int, end: int, last: str | None) -> Iterator[Event]:
    """The session of one object's text (none when it repeats the session just read)."""
    try:
        value = loads(text)
    except ValueError as exc:
        where = f"line {start}" if start == end else f"lines {start} to {end}"
        raise InputError("FC-DATA-003", f"the object at {where} is not JSON ({exc})") from None
    if isinstance(value, dict) and (last is None or value.get("session_id") != last):
        yield from _object(value)


def _object(value: dict[str, Any]) -> Iterator[Event]:
    """One json output object's session."""
    name = as_str(value.get("session_id")) or None
    response = as_str(value.get("response"))
    stats = as_dict(value.get("stats"))
    error = as_dict(value.get("error"))
    warnings = [as_str(w) for w in value.get("warnings") or () if as_str(w)]
    yield SessionStart(name)
    models = as_dict(stats.get("models"))
    if models:
        yield About(max(models, key=lambda m: _requests(models[m])))
    calls = as_dict(stats.get("tools")).get("totalCalls")
    steps = calls if type(calls) is int and calls >= 0 else 0
    if error:
        end, ended_by = _ending(None, error, None)
        if ended_by is not None and end == "provider_error":
            yield ended_by
        yield SessionEnd(steps, end, name, ended_by, said=bool(response))
    elif limit := next((w for w in warnings if w.startswith(_MAX_TURNS)), None):
        yield SessionEnd(steps, "limit", name, _turn_limit(limit, None), said=bool(response))
    else:
        yield SessionEnd(steps, "submitted", name, said=bool(response))


def _requests(model: object) -> int:
    count = as_dict(as_dict(model).get("api")).get("totalRequests")
    return count if type(count) is int else 0
