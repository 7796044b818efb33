"""OpenAI Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Rules (about the format and the tool; the shapes are those of the session lab's pinned Codex
CLI 0.171.0, ``tests/lab/fixtures/codex/``, and of the older generations Codex's own rollout
recorder wrote, which readers of the format document):

- Detection: JSON lines whose first object is ``{"type": "session_meta", "payload": ...}``
  (0.2x and newer: every line is ``{timestamp, type, payload}``), or an older rollout whose
  first object is the session header ``{"id", "timestamp", "instructions"}`` followed by bare
  response items (``{"type": "message" | "function_call" | ...}``).
- One file is one session, named by ``session_meta.payload.id`` (or the header's ``id``).
- The agent's version is ``session_meta.payload.cli_version``, the model each
  ``turn_context``'s ``payload.model``.
- A step is one tool call of the model, numbered from 0 in file order: a ``function_call``,
  ``custom_tool_call`` or ``local_shell_call`` response item. Its result is the item with the
  same ``call_id``.
- A shell step's command is the ``cmd`` (``exec_command``) or the last element of the
  ``command`` array (``shell``: ``["bash", "-lc", "..."]``, ``local_shell_call``'s
  ``action.command``) of its arguments.
- Which exit status is trusted, in order: the executor's own record of the run — a
  ``CommandExecution`` item of an ``item_completed`` event (0.17x: ``exit_code``,
  ``aggregated_output``) or an ``exec_command_end`` event (0.2x to 0.16x: ``exit_code``,
  ``aggregated_output`` or ``stdout``/``stderr``); else the tool output the model saw: the
  text ``Process exited with code N`` (0.17x) or ``Exit code: N`` (the ``shell`` tool's text
  output), or the JSON ``{"output", "metadata": {"exit_code"}}`` of older versions. Codex's
  ``status: "failed"`` only restates a non-zero status, so it is never read on its own. A
  status is a JSON integer or the text's digits (another type is none); one outside
  -2**31..2**32-1 is FC-DATA-003 naming the rollout's line and the value (``_text``'s rules;
  what was read before it is kept).
- Output that says the command was stopped at its time limit (``command timed out``) is a
  timeout.
- A non-shell tool whose output is an error (``apply_patch`` verification failed, an unknown
  tool: ``unsupported call: NAME`` or ``unsupported custom tool call: NAME``, arguments that
  do not parse, a non-zero ``exit_code`` in the JSON output's ``metadata``) is fed back to the
  model: a rejected action. A ``function_call_output``'s ``output`` is a string or an array of
  content items (``input_text`` ``text``).
- The executor's record of a tool's end is trusted over the text the model saw, where Codex
  persisted it (``codex-rs/rollout/src/policy.rs``: ``patch_apply_end`` and
  ``mcp_tool_call_end`` in every mode, ``exec_command_end`` in extended mode): a
  ``patch_apply_end`` with ``success: false`` is a rejected action (its ``stderr``), or a
  cancelled call when its ``status`` is ``declined``; an ``mcp_tool_call_end`` whose
  ``result`` is ``{"Err": text}`` or ``{"Ok": {..., "isError": true}}`` is a rejected action;
  a command execution (``exec_command_end``, ``CommandExecution``) with ``status: declined``
  never ran (its ``exit_code`` -1 is no status): a cancelled call.
- A call that never ran or was stopped is cancelled, neither a failure nor a rejected action:
  its output is ``exec command rejected by user`` or ``patch rejected by user`` (the
  approval was declined), is ``aborted by user after Ns`` or ends in the line ``aborted by
  user`` or ``command aborted by user`` (the user interrupted it), or is Codex's synthetic
  ``aborted`` or ``aborted before dispatch``; a call still waiting for its output when a
  ``turn_aborted`` arrives was cut off by the abort. A patch the approval settings refused
  without asking anyone (``writing is blocked by read-only sandbox; rejected by user approval
  settings``, ``writing outside of the project; rejected by ...``) is a rejected action, and
  so is a command an execpolicy rule (``~/.codex/rules/*.rules``, ``prefix_rule(...,
  decision="forbidden")``) refused before it ran: its output names it ```CMD` rejected:
  policy forbids commands starting with ...`` (or ``rejected: blocked by policy``), with no
  exit status.
  These texts are the 0.171.0 binary's own (``strings`` on the pinned package); the older
  ones are in the real rollouts of both corpora.
- An ``apply_patch`` call (its ``input`` is the patch: ``*** Add File: path`` and ``*** Update
  File: path`` sections whose ``+`` lines are the new text) writes those files: each is a
  :class:`~failcode.triage._events.Wrote`, what the session's repository provides.
- How the session ended: ``task_complete`` with an ``error`` is a provider error (its
  ``codex_error_info`` names the HTTP status where Codex kept it: ``http_status_code``, or
  ``internal_server_error`` for a 500 whose own text Codex replaced by a generic one;
  ``context_window_exceeded`` is the context window); an ``event_msg`` of type ``error`` is
  one too, except one whose ``codex_error_info`` is ``sandbox_error`` or
  ``thread_rollback_failed``: Codex's own failure (harness), which ends it as ``unknown``;
  ``turn_aborted`` ends it as ``unknown`` (``reason`` ``interrupted``, ``replaced``,
  ``review_ended``), or at the agent's limit when its ``reason`` is ``budget_limited`` (the
  run's token budget ran out); ``task_complete`` with a last agent message and no error is
  ``submitted``. Rollouts that hold no ``task_complete`` (the interactive CLI's of 0.6x to
  0.8x) end on their last word as Claude Code's transcripts do: an assistant ``message`` with
  no call waiting for its output is ``submitted``; a call, or a user message (a prompt, the
  ``<turn_aborted>`` note) after it, is ``unknown``.
  Retried provider faults are not in the rollout (``codex exec --json`` prints them only).
  An ``http_status_code`` is read when it is an integer in 100..599.
- Time: each line's ``timestamp`` (Codex writes UTC with ``Z``; one without a zone would be
  read as UTC, ``_text``'s rules).
- Tokens: an ``event_msg`` of type ``token_count`` carries the session's running totals
  (``info.total_token_usage``: ``input_tokens`` with ``cached_input_tokens`` inside it,
  ``output_tokens`` with reasoning inside it); each event's rise over the last is a
  :class:`~failcode.triage._events.Usage` of the session's model (``info`` null, or the same
  totals again, adds nothing).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final

import msgspec

from failcode._lazy_re import lazy
from failcode.triage._events import (
    About,
    Command,
    ErrorText,
    Event,
    RecordedOutcome,
    Rejected,
    SessionEnd,
    SessionStart,
    Usage,
    Wrote,
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

__all__ = ["CodexReader", "CodexState"]

_CALLS: Final = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS: Final = ("function_call_output", "custom_tool_call_output")
_SHELLS: Final = ("exec_command", "shell", "container.exec", "local_shell", "shell_command")
_EXITED: Final = lazy(r"^(?:Process exited with code|Exit code:)\s*(-?\d+)\s*$", re.MULTILINE)
_OUTPUT_MARK: Final = lazy(r"^Output:\n", re.MULTILINE)
_TIMED_OUT: Final = lazy(r"(?i)command timed out|timed out after \d")
_ERROR_OUTPUT: Final = lazy(
    r"(?i)^(?:error|failed|apply_patch verification failed|unsupported (?:custom tool )?call|"
    r"failed to parse function arguments)\b")
_DECLINED: Final = lazy(r"^(?:exec command|patch) rejected by user")
_ABORTED: Final = lazy(r"^aborted by user after \S+$|(?:^|\n)(?:command )?aborted by user\s*\Z"
                       r"|^aborted(?: before dispatch)?\s*\Z")
_POLICY: Final = lazy(r"^(?:writing is blocked by read-only sandbox|writing outside of the "
                      r"project); rejected by user approval settings")
_EXEC_POLICY: Final = lazy(r"` rejected: ((?:policy forbids|blocked by policy)[^\"\\]*)")
_GENERIC_STATUS: Final = {"internal_server_error": 500, "server_overloaded": 503,
                          "usage_limit_exceeded": 429, "rate_limit_exceeded": 429,
                          "context_window_exceeded": 400, "bad_request": 400,
                          "unauthorized": 401}
_CODEX_OWN: Final = ("sandbox_error", "thread_rollback_failed")


def _command_text(value: object) -> str:
    """A command as text: a string as it is, an argv array by its last element when it runs
    a shell (``bash -lc CMD``), else joined."""
    if isinstance(value, str):
        return value
    argv = [part for part in as_list(value) if isinstance(part, str)]
    if len(argv) >= 3 and argv[-2] in ("-c", "-lc", "-ic"):
        return argv[-1]
    return " ".join(argv)


def _arguments(call: dict[str, Any]) -> dict[str, Any]:
    raw = call.get("arguments", call.get("input"))
    if isinstance(raw, str):
        try:
            raw = loads(raw)
        except ValueError:
            return {}
    return as_dict(raw)


_PATCH_FILE: Final = lazy(r"^\*\*\* (?:Add|Update) File: (.+)$")


def _patched(payload: dict[str, Any]) -> Iterator[Wrote]:
    """The files an ``apply_patch`` call writes: each ``*** Add File:`` / ``*** Update File:``
    section of its patch, with the section's added (``+``) lines as the new text."""
    raw = payload.get("input", payload.get("arguments"))
    patch = as_str(_arguments(payload).get("input")) or (raw if isinstance(raw, str) else "")
    path: str | None = None
    added: list[str] = []
    for line in [*patch.splitlines(), "*** End Patch"]:
        found = _PATCH_FILE.match(line)
        if found is not None or line.startswith("*** "):
            if path is not None:
                yield Wrote(path, "\n".join(added))
            path, added = (found.group(1).strip(), []) if found else (None, [])
        elif path is not None and line.startswith("+"):
            added.append(line[1:])


def _output_text(payload: dict[str, Any], where: str) -> tuple[str, int | None]:
    """The tool output the model saw, and the exit status it states (if any)."""
    output = payload.get("output")
    if isinstance(output, dict):  # some versions write the object itself
        output = json.dumps(output)
    elif isinstance(output, list):  # content items: the text ones are what the model read
        output = "\n".join(as_str(as_dict(item).get("text")) for item in output
                            if as_str(as_dict(item).get("text")))
    text = as_str(output)
    if text.startswith("{"):
        try:
            parsed = loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and "output" in parsed:
            code = stated_exit(as_dict(parsed.get("metadata")).get("exit_code"), where)
            return as_str(parsed.get("output")), code
    found = _EXITED.search(text)
    status = exit_in_text(found.group(1), where) if found else None
    mark = _OUTPUT_MARK.search(text)
    return (text[mark.end():] if mark else text), status


class _Call(msgspec.Struct):
    """One tool call waiting for its result."""

    step: int
    name: str
    command: str
    stamp: float | None
    exit_code: int | None = None
    output: str | None = None
    rejected: Rejected | None = None
    cancelled: RecordedOutcome | None = None

    @property
    def outcome(self) -> Event | None:
        """What the executor's record says the call came to (rejected, cancelled)."""
        return self.rejected if self.rejected is not None else self.cancelled

    @outcome.setter
    def outcome(self, value: Rejected | RecordedOutcome) -> None:
        if isinstance(value, Rejected):
            self.rejected, self.cancelled = value, None
        else:
            self.rejected, self.cancelled = None, value


class CodexState(msgspec.Struct):
    """Where reading a rollout got to (a :class:`ResumableReader`'s state): the session, its
    steps, the calls waiting for their results, how it ends so far."""

    started: bool = False
    session: str | None = None
    steps: int = 0
    calls: dict[str, _Call] = msgspec.field(default_factory=dict)
    status: str = "unknown"
    ended_by: ErrorText | None = None
    tokens: tuple[int, int, int] = (0, 0, 0)
    """The session's token totals so far (input, cached input, output): :func:`_usage`."""
    read: int = -1
    """The step whose output came last (-1: none yet, or a prompt came after it): what the
    next turn reads."""


def _tokens(value: object) -> int:
    """A token count: a non-negative integer (anything else counts nothing)."""
    return value if type(value) is int and 0 <= value < 1 << 53 else 0


def _usage(state: CodexState, info: dict[str, Any], stamp: float | None) -> Usage | None:
    """The tokens a ``token_count`` event adds: the rise of ``total_token_usage`` since the
    last one (Codex repeats an event with the same totals: nothing), or the totals whole when
    they fell (a counter that restarted). Input counts ``cached_input_tokens`` in it; output
    counts reasoning in it."""
    total = as_dict(info.get("total_token_usage"))
    if not total:
        return None
    now = (_tokens(total.get("input_tokens")), _tokens(total.get("cached_input_tokens")),
           _tokens(total.get("output_tokens")))
    before = state.tokens
    state.tokens = now
    if all(n >= b for n, b in zip(now, before, strict=True)):
        now = (now[0] - before[0], now[1] - before[1], now[2] - before[2])
    if not any(now):
        return None
    cached = min(now[1], now[0])
    return Usage(now[0] - cached, now[2], cached, 0, None, stamp, state.read)


class CodexReader:
    """Reader for Codex CLI rollouts."""

    name = "codex"

    def sniff(self, head: bytes) -> bool:
        """A first line that is a Codex ``session_meta`` record or an old rollout header."""
        first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
        if not first.startswith(b"{"):
            return False
        if b'"type":"session_meta"' in first or b'"type": "session_meta"' in first:
            return True
        return (b'"instructions"' in first and b'"id"' in first and b'"timestamp"' in first
                and (b'"type":"function_call"' in head or b'"type": "function_call"' in head
                     or b'"type":"message"' in head or b'"type": "message"' in head))

    state_type = CodexState

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """One pass over the lines; a call's event is yielded when its result arrives."""
        state = CodexState()
        yield from self.lines(stream, label, state)
        yield from self.finish(state)

    def lines(self, stream: BinaryIO, label: str, state: CodexState, *, first_line: int = 0,
              ) -> Iterator[Event]:
        """The events of the lines (after ``first_line`` read before, whose reading left
        ``state``), ``state`` kept up to date."""
        for number, entry in json_objects(stream, first_line=first_line):
            kind = entry.get("type")
            payload = as_dict(entry.get("payload")) if "payload" in entry else entry
            if not state.started:
                state.started, state.session = True, as_str(payload.get("id")) or None
                yield SessionStart(state.session)
                if kind == "session_meta" or "instructions" in entry:
                    yield About(as_str(payload.get("model")) or None,
                                as_str(payload.get("cli_version")) or None)
                    continue
            if kind == "turn_context" and as_str(payload.get("model")):
                yield About(as_str(payload.get("model")))
                continue
            stamp = iso_time(entry.get("timestamp"))
            if kind == "event_msg" and payload.get("type") == "token_count":
                usage = _usage(state, as_dict(payload.get("info")), stamp)
                if usage is not None:
                    yield usage
                continue
            where = f"line {number}"
            event = (self._event(state, payload, stamp, where) if kind == "event_msg"
                     else self._item(state, payload, stamp, where))
            if event is not None:
                yield event
            if payload.get("name") == "apply_patch" and payload.get("type") in _CALLS:
                yield from _patched(payload)

    def finish(self, state: CodexState) -> Iterator[Event]:
        """The calls whose output line never came (a cut file), then the session's end."""
        if not state.started:
            return
        for call in state.calls.values():
            if call.outcome is not None:
                yield call.outcome
            elif call.exit_code is not None:
                yield Command(call.step, call.command, call.exit_code, call.output or "",
                              call.stamp)
        yield SessionEnd(state.steps, state.status, state.session, state.ended_by)

    def _item(self, state: CodexState, payload: dict[str, Any], stamp: float | None, where: str,
              ) -> Event | None:
        """A response item (a bare one in the oldest rollouts): a call or its result."""
        item_type = payload.get("type")
        if item_type in _CALLS:
            call = self._call(state.steps, payload, stamp)
            state.calls[as_key(payload.get("call_id") or payload.get("id"))] = call
            state.steps += 1
            state.status, state.ended_by = "unknown", None  # a call waiting for its result
        elif item_type in _OUTPUTS:
            found = state.calls.pop(as_key(payload.get("call_id")), None)
            if found is not None:
                state.read = max(state.read, found.step)
                return self._result(found, payload, where)
        elif item_type == "message" and payload.get("role") in ("assistant", "user"):
            # the last word: the agent's answer with no call pending, or a prompt (or an
            # interrupt's note) not answered yet
            answered = payload.get("role") == "assistant" and not state.calls
            state.status, state.ended_by = ("submitted" if answered else "unknown"), None
            if payload.get("role") == "user":
                state.read = -1  # a prompt: the turns after it are new work
        return None

    def _event(self, state: CodexState, payload: dict[str, Any], stamp: float | None, where: str,
               ) -> Event | None:
        """An ``event_msg``: an executor's record, or how the task ended."""
        item_type = payload.get("type")
        if item_type == "item_completed":
            self._execution(state.calls, as_dict(payload.get("item")), where)
        elif item_type == "exec_command_end":
            self._execution(state.calls, {**payload, "id": payload.get("call_id"),
                                          "type": "exec_command_end"}, where)
        elif item_type == "patch_apply_end":
            self._patch_end(state.calls, payload)
        elif item_type == "mcp_tool_call_end":
            self._mcp_end(state.calls, payload)
        elif item_type == "task_complete":
            error = as_dict(payload.get("error"))
            if error:
                state.status, state.ended_by = "provider_error", self._provider(
                    state.steps, error, stamp)
                return state.ended_by
            if payload.get("last_agent_message"):
                state.status, state.ended_by = "submitted", None
        elif item_type == "error":
            ended = self._provider(state.steps, payload, stamp)
            state.status = "provider_error" if ended.source == "provider" else "unknown"
            state.ended_by = ended
            return ended
        elif item_type == "turn_aborted":
            for call in state.calls.values():  # cut off by the abort before its output came
                if call.outcome is None and call.exit_code is None:
                    call.outcome = cancelled(call.step, call.command or call.name,
                                             "interrupted by the user", call.stamp)
            state.status, state.ended_by = "unknown", None
            if payload.get("reason") == "budget_limited":
                state.status, state.ended_by = "limit", ErrorText(
                    None, "agent", "BudgetLimited", "the run's token budget ran out",
                    timestamp=stamp, limit="token budget")
        return None

    @staticmethod
    def _call(step: int, payload: dict[str, Any], stamp: float | None) -> _Call:
        name = as_str(payload.get("name")) or as_str(payload.get("type"))
        args = _arguments(payload)
        command = _command_text(args.get("cmd", args.get("command")))
        if payload.get("type") == "local_shell_call":
            command = _command_text(as_dict(payload.get("action")).get("command"))
        return _Call(step, name, command, stamp)

    @staticmethod
    def _execution(calls: dict[str, _Call], item: dict[str, Any], where: str) -> None:
        """The executor's own record of a command run: its status and output win."""
        call = calls.get(as_key(item.get("id")))
        if call is None or item.get("type", "CommandExecution") not in (
                "CommandExecution", "exec_command_end"):
            return
        if not call.command:
            call.command = _command_text(item.get("command"))
        if item.get("status") == "declined":  # never ran: its exit_code -1 is no status
            reason = first_line(as_str(item.get("aggregated_output"))) or "declined"
            call.outcome = cancelled(call.step, call.command or call.name, reason, call.stamp)
            return
        code = stated_exit(item.get("exit_code"), where)
        if code is not None:
            call.exit_code = code
        output = item.get("aggregated_output")
        if not isinstance(output, str):
            output = as_str(item.get("stdout")) + as_str(item.get("stderr"))
        call.output = output

    @staticmethod
    def _patch_end(calls: dict[str, _Call], payload: dict[str, Any]) -> None:
        """A ``patch_apply_end``: whether the patch applied, was refused or declined."""
        call = calls.get(as_key(payload.get("call_id")))
        if call is None or payload.get("success") is not False:
            return
        reason = (first_line(as_str(payload.get("stderr")))
                  or first_line(as_str(payload.get("stdout"))) or "the patch did not apply")
        if payload.get("status") == "declined":
            call.outcome = cancelled(call.step, call.name or "apply_patch", reason, call.stamp)
        else:
            call.outcome = Rejected(call.step, call.name or "apply_patch", reason, call.stamp)

    @staticmethod
    def _mcp_end(calls: dict[str, _Call], payload: dict[str, Any]) -> None:
        """An ``mcp_tool_call_end``: an error result (``Err``, or ``Ok`` with ``isError``)."""
        call = calls.get(as_key(payload.get("call_id")))
        result = as_dict(payload.get("result"))
        if call is None or not result:
            return
        if "Err" in result:
            reason = first_line(as_str(result.get("Err"))) or "the tool call failed"
        else:
            ok = as_dict(result.get("Ok"))
            if ok.get("isError") is not True:
                return
            texts = [as_str(as_dict(block).get("text")) for block in as_list(ok.get("content"))]
            reason = first_line("\n".join(t for t in texts if t)) or "the tool reported an error"
        invocation = as_dict(payload.get("invocation"))
        action = ".".join(part for part in (as_str(invocation.get("server")),
                                            as_str(invocation.get("tool"))) if part)
        call.outcome = Rejected(call.step, action or call.name, reason, call.stamp)

    @staticmethod
    def _result(call: _Call, payload: dict[str, Any], where: str) -> Event | None:
        if call.outcome is not None:
            return call.outcome
        text, stated = _output_text(payload, where)
        head = text.strip()
        action = call.command or call.name
        if _DECLINED.match(head):
            return cancelled(call.step, action, first_line(head), call.stamp)
        if _POLICY.match(head):  # the approval policy refused it: nobody was asked
            return Rejected(call.step, action, first_line(head), call.stamp)
        policy = _EXEC_POLICY.search(head[:4096])
        if policy is not None and call.exit_code is None and stated is None:
            return Rejected(call.step, action, first_line(policy.group(1)), call.stamp)
        if _ABORTED.search(head) and call.exit_code is None and stated is None:
            return cancelled(call.step, action, "interrupted by the user", call.stamp)
        shell = call.name in _SHELLS or call.name == "local_shell_call" or bool(call.command)
        if not shell:
            if _ERROR_OUTPUT.match(text.lstrip()) or stated not in (0, None):
                return Rejected(call.step, call.name, first_line(text) or "failed",
                                call.stamp)
            return None
        status = call.exit_code if call.exit_code is not None else stated
        output = call.output if call.output is not None else text
        if _TIMED_OUT.search(output[:4096]) and status not in (0, None):
            return Command(call.step, call.command, None, output, call.stamp, timed_out=True)
        if status is None:
            return None  # a session still running (exec_command yields before the end)
        return Command(call.step, call.command, status, output, call.stamp)

    @staticmethod
    def _provider(step: int, error: dict[str, Any], stamp: float | None) -> ErrorText:
        message = as_str(error.get("message")) or "provider error"
        info = error.get("codex_error_info")
        if info in _CODEX_OWN:
            return ErrorText(step, "harness", "CodexError", message,
                             evidence=first_line(message), timestamp=stamp)
        if info == "context_window_exceeded":
            return ErrorText(step, "provider", "ContextWindowExceeded", message,
                             evidence=first_line(message), timestamp=stamp,
                             context_window=True)
        status: int | None = None
        if isinstance(info, dict):
            for value in info.values():
                code = http_status(as_dict(value).get("http_status_code"))
                if code is not None:
                    status = code
        elif isinstance(info, str):
            status = _GENERIC_STATUS.get(info)
        text = f"Error code: {status} - {message}" if status is not None else message
        return ErrorText(step, "provider", "openai.APIStatusError", text,
                         evidence=first_line(message), timestamp=stamp)
