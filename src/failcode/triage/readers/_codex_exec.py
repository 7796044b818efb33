"""OpenAI Codex CLI's headless output: ``codex exec --json`` (JSON Lines on stdout, what CI jobs
and the TypeScript SDK keep).

Rules (about the format and the tool; the event and item types are those Codex declares in
``codex-rs/exec/src/exec_events.rs`` and its TypeScript SDK publishes as ``ThreadEvent`` and
``ThreadItem`` (``@openai/codex-sdk`` 0.163.0, ``dist/index.d.ts``); how they are printed is
``codex-rs/exec/src/event_processor_with_jsonl_output.rs``; the texts quoted are the pinned
0.171.0 binary's own (``strings`` on the lab's package) and its lab runs,
``tests/lab/fixtures/codex/*/exec.jsonl``):

- Detection: JSON lines whose first object is ``{"type": "thread.started", "thread_id"}``
  (``session.created`` with ``session_id`` in the first, experimental 0.4x output), or whose
  first object is a ``turn.*`` or ``item.*`` event of an item numbered ``item_N`` (a stream
  whose first line was cut off).
- A session is one ``thread_id``; a new one starts a new session (``codex exec resume``
  printed into the same file continues it). Lines before the first are read as one session
  with no name.
- Events: ``thread.started``, ``turn.started``, ``turn.completed`` (``usage``),
  ``turn.failed`` (``error.message``), ``item.started`` / ``item.updated`` /
  ``item.completed`` (``item``: ``id`` and ``type``), ``error`` (``message``); the others
  (``item.plan.delta``, ``request_user_input``) change nothing. A line that is not JSON is
  FC-DATA-003 naming it (the events before it are kept: ``_lines``' rules).
- A step is one item that is a tool call of the model, numbered from 0 in the order its id
  first appears: ``command_execution``, ``file_change``, ``mcp_tool_call`` and
  ``collab_tool_call``. What the stream does not show is no step: a tool call Codex turned
  into no item (``update_plan``'s ``todo_list`` is one running item per turn, ``write_stdin``
  polls, ``view_image``, a command an execpolicy rule forbade before it ran: 0.171.0 prints
  nothing for it), so from there the numbering runs behind the rollout's
  (:mod:`~failcode.triage.readers._codex`). ``agent_message``, ``reasoning``, ``web_search``
  and ``todo_list`` are no steps.
- A ``command_execution`` (``command``, ``aggregated_output``, ``exit_code``, ``status``
  ``in_progress`` | ``completed`` | ``failed`` | ``declined``) is read when it completes. Its
  ``command`` is the argv Codex ran, shell-quoted into one string (``/bin/bash -c '...'``,
  ``bash -lc '...'``; 0.4x joined it with spaces): the script of a shell's ``-c`` / ``-lc``
  is the command, as the rollout reader unwraps the argv. ``exit_code`` is the status
  (``_text``'s rules: a JSON integer, one out of range is FC-DATA-003); ``status: failed``
  only restates a non-zero one. ``declined`` never ran (an approval was declined): a
  cancelled call, whatever its ``exit_code``. Output that says the command was stopped at its
  time limit (``command timed out``) with a non-zero status is a timeout. With no status,
  output naming an execpolicy refusal (```CMD` rejected: policy forbids commands starting
  with ...``) is a rejected action; anything else with no status (a command still running
  when the stream ended, one that could not start) is nothing.
- A ``file_change`` (``changes``: ``path``, ``kind`` ``add`` | ``delete`` | ``update``,
  ``diff`` in newer versions) with ``status: failed`` is a rejected action (the patch did not
  apply; Codex prints a declined patch as failed too); a completed one writes its added and
  updated files (:class:`~failcode.triage._events.Wrote`, with the ``+`` lines of the
  ``diff`` where it is given). An ``mcp_tool_call`` (``server``, ``tool``, ``error.message``)
  or ``collab_tool_call`` with ``status: failed`` is a rejected action.
- An ``error`` item is a non-fatal notice (a config warning, a deprecation, a model reroute,
  ``Model metadata for ... not found``): nothing.
- An ``error`` event is a provider error. ``Reconnecting... N/M (TEXT)`` (``stream error: TEXT;
  retrying N/M in DELAY…`` in older versions: ``codex-rs/core``'s ``notify_stream_error``) is
  one failed try Codex retries: a provider error at no step. Any other is the error the turn
  stops on: a provider error at the step the request would have led to (the rollout reader's
  rule), yielded once with the ``turn.failed`` that repeats it. The HTTP status is read from
  the text: ``unexpected status NNN``, ``last status: NNN``, or Codex's own text for a status
  it replaced (``... currently experiencing high demand ...`` for a 500, ``Selected model is at
  capacity`` for a 503, ``You've hit your usage limit`` for a 429: the ``codex_error_info`` the
  rollout keeps beside the same text); ``Codex ran out of room in the model's context window``
  is the context window. Codex's own failures (``internal error; agent loop died
  unexpectedly``, ``sandbox error: ...``) are the harness's, and end the session ``unknown``.
- How the session ended: the last ``turn.completed`` is ``submitted`` when an
  ``agent_message`` answered after the turn's last step, else ``unknown``; ``turn.failed`` is
  ``provider_error`` (``unknown`` for Codex's own failure). Items after a turn's end reopen
  the session. No turn end after the last item (an interrupted turn prints none, a cut stream
  has none) is ``unknown``, or ``provider_error`` when the turn's error was the last word.
- Time: the stream has none.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Any, Final

from failcode._lazy_re import lazy
from failcode.triage._events import (
    Command,
    ErrorText,
    Event,
    Rejected,
    SessionEnd,
    SessionStart,
    Wrote,
    cancelled,
)
from failcode.triage.readers._codex import _command_text
from failcode.triage.readers._lines import json_objects
from failcode.triage.readers._text import as_dict, as_list, as_str, first_line, stated_exit

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

__all__ = ["COMMAND_STATUSES", "EVENTS", "ITEMS", "CodexExecReader", "unwrap"]

_FIRST: Final = re.compile(rb'^\{[^\n]*?"type"\s*:\s*"(thread\.started|session\.created|turn\.'
                           rb'(?:started|completed|failed)|item\.(?:started|updated|completed))"')
_ITEM_ID: Final = re.compile(rb'"id"\s*:\s*"item_\d+"')
_STEPS: Final = ("command_execution", "file_change", "mcp_tool_call", "collab_tool_call")
ITEMS: Final = (*_STEPS, "agent_message", "assistant_message", "reasoning", "plan", "web_search",
                "todo_list", "error")
"""Every item ``type`` the reader knows: the steps, then those that are none (a test keeps
this complete against the SDK's ``ThreadItem``)."""
EVENTS: Final = ("thread.started", "session.created", "turn.started", "turn.completed",
                 "turn.failed", "item.started", "item.updated", "item.completed", "error",
                 "item.plan.delta", "request_user_input")
"""Every event ``type`` the reader knows, those it reads and those that change nothing (a test
keeps this complete against the SDK's ``ThreadEvent``)."""
COMMAND_STATUSES: Final = ("in_progress", "completed", "failed", "declined")
"""Every ``command_execution`` ``status`` the reader knows (``exec_events.rs``)."""
_SHELLS: Final = frozenset(("bash", "sh", "zsh", "dash", "/bin/bash", "/bin/sh", "/bin/zsh",
                            "/usr/bin/bash", "/usr/bin/zsh", "/bin/dash"))
_RETRY: Final = lazy(r"^(?:Reconnecting\.\.\. \d+/\d+ \((.*)\)|stream error: (.*); retrying "
                     r"(?:\d+/\d+ )?in .*)\s*$", re.DOTALL)
_STATUS: Final = lazy(r"(?:unexpected status|last status:)\s*(\d{3})\b")
_TIMED_OUT: Final = lazy(r"(?i)command timed out|timed out after \d")
_EXEC_POLICY: Final = lazy(r"` rejected: ((?:policy forbids|blocked by policy)[^\"\\\n]*)")
_OWN_STATUS: Final = (("currently experiencing high demand", 500),
                      ("Selected model is at capacity", 503),
                      ("hit your usage limit", 429))
"""Codex's own texts for a status it replaced (its ``codex_error_info`` in the rollout)."""
_CONTEXT: Final = "ran out of room in the model's context window"
_HARNESS: Final = ("internal error; agent loop died", "sandbox error")


def unwrap(command: str) -> str:
    """The script of a shell's ``-c`` / ``-lc`` in Codex's shell-quoted argv, else the text."""
    try:
        argv = shlex.split(command)
    except ValueError:  # quoting cut short: the text as it is
        return command
    if len(argv) >= 3 and argv[-3] in _SHELLS:
        return _command_text(argv)
    for flag in (" -lc ", " -c ", " -ic "):  # 0.4x joined the argv with spaces
        shell, found, script = command.partition(flag)
        if found and shell in _SHELLS:
            return script
    return command


def _diff_added(diff: str) -> str:
    """The added lines of a unified diff (``+`` lines, the ``+++`` header aside)."""
    return "\n".join(line[1:] for line in diff.splitlines()
                     if line.startswith("+") and not line.startswith("+++"))


def _provider(step: int | None, message: str, evidence: str | None = None) -> ErrorText:
    """The error Codex printed, as the rollout reader words the same error."""
    if any(text in message for text in _HARNESS):
        return ErrorText(step, "harness", "CodexError", message,
                         evidence=evidence or first_line(message))
    if _CONTEXT in message:
        return ErrorText(step, "provider", "ContextWindowExceeded", message,
                         evidence=evidence or first_line(message), context_window=True)
    found = _STATUS.search(message)
    status = int(found.group(1)) if found and 100 <= int(found.group(1)) <= 599 else None
    if status is None:
        status = next((code for text, code in _OWN_STATUS if text in message), None)
    text = f"Error code: {status} - {message}" if status is not None else message
    return ErrorText(step, "provider", "openai.APIStatusError", text,
                     evidence=evidence or first_line(message))


class _Session:
    """One thread being read."""

    __slots__ = ("answered", "ended_by", "ids", "name", "resolved", "status", "steps")

    def __init__(self, name: str | None) -> None:
        self.name = name
        self.steps = 0
        self.ids: dict[str, int] = {}
        """Step number by item id."""
        self.status = "unknown"
        self.ended_by: ErrorText | None = None
        self.answered = False
        """An agent message came after the turn's last step."""
        self.resolved = False
        """A turn end said how the run ended, and no item came after it."""

    def step(self, item_id: str) -> int:
        """The step of a tool-call item, numbered on first sight."""
        if item_id not in self.ids:
            self.ids[item_id] = self.steps
            self.steps += 1
        return self.ids[item_id]

    def close(self) -> SessionEnd:
        if self.resolved or self.status == "provider_error":
            return SessionEnd(self.steps, self.status, self.name, self.ended_by)
        return SessionEnd(self.steps, "unknown", self.name, self.ended_by)


class CodexExecReader:
    """Reader for ``codex exec --json`` output."""

    name = "codex-exec-json"

    def sniff(self, head: bytes) -> bool:
        """A first line that is a ``thread.started`` event, or a turn or item event of an
        ``item_N`` item."""
        first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
        found = _FIRST.match(first)
        if found is None:
            return False
        if found.group(1) in (b"thread.started", b"session.created"):
            return b'"thread_id"' in first or b'"session_id"' in first
        return _ITEM_ID.search(head) is not None

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """One pass over the events; a step's event is yielded when its item completes."""
        current: _Session | None = None
        for number, entry in json_objects(stream):
            kind = entry.get("type")
            if kind in ("thread.started", "session.created"):
                name = as_str(entry.get("thread_id") or entry.get("session_id")) or None
                if current is not None and name == current.name:
                    continue
                if current is not None:
                    yield current.close()
                current = _Session(name)
                yield SessionStart(name)
                continue
            if current is None:
                current = _Session(None)
                yield SessionStart(None)
            yield from self._event(current, entry, kind, f"line {number}")
        if current is not None:
            yield current.close()

    def _event(self, state: _Session, entry: dict[str, Any], kind: object, where: str,
               ) -> Iterator[Event]:
        if kind == "turn.started":
            state.answered = False
        elif kind in ("item.started", "item.updated", "item.completed"):
            item = as_dict(entry.get("item"))
            item_type = item.get("type")
            if item_type in _STEPS:
                step = state.step(as_str(item.get("id")))
                state.resolved, state.answered = False, False
                state.status, state.ended_by = "unknown", None
                if kind == "item.completed":
                    yield from self._completed(step, item, where)
            elif item_type in ("agent_message", "assistant_message") and (
                    kind == "item.completed"):
                state.resolved, state.answered = False, True
                state.status, state.ended_by = "unknown", None
        elif kind == "error":
            message = as_str(entry.get("message")) or "error"
            retried = _RETRY.match(message)
            if retried is not None:  # one failed try, retried: no step of its own
                inner = retried.group(1) or retried.group(2) or message
                yield _provider(None, inner, evidence=first_line(message))
                return
            state.ended_by = _provider(state.steps, message)
            state.status = "provider_error" if state.ended_by.source == "provider" else "unknown"
            yield state.ended_by
        elif kind == "turn.failed":
            message = as_str(as_dict(entry.get("error")).get("message")) or "turn failed"
            if state.ended_by is None or state.ended_by.message != _provider(
                    state.steps, message).message:
                state.ended_by = _provider(state.steps, message)
                yield state.ended_by
            state.status = "provider_error" if state.ended_by.source == "provider" else "unknown"
            state.resolved = True
        elif kind == "turn.completed":
            state.status = "submitted" if state.answered else "unknown"
            state.ended_by = None
            state.resolved = True

    @staticmethod
    def _completed(step: int, item: dict[str, Any], where: str) -> Iterator[Event]:
        """What a completed tool-call item came to (see the module's rules)."""
        item_type, status = item.get("type"), item.get("status")
        if item_type == "command_execution":
            command = unwrap(as_str(item.get("command")))
            output = as_str(item.get("aggregated_output"))
            if status == "declined":  # never ran: its exit_code is no status
                reason = first_line(output) or "declined"
                yield cancelled(step, command or "command_execution", reason)
                return
            code = stated_exit(item.get("exit_code"), where)
            if code is None:
                policy = _EXEC_POLICY.search(output[:4096])
                if policy is not None:
                    yield Rejected(step, command, first_line(policy.group(1)))
                return
            if code != 0 and _TIMED_OUT.search(output[:4096]):
                yield Command(step, command, None, output, timed_out=True)
                return
            yield Command(step, command, code, output)
        elif item_type == "file_change":
            changes = [as_dict(change) for change in as_list(item.get("changes"))]
            if status == "failed":
                paths = ", ".join(as_str(c.get("path")) for c in changes if c.get("path"))
                yield Rejected(step, "apply_patch",
                               f"the patch did not apply{f' ({paths})' if paths else ''}")
                return
            if status == "completed":
                for change in changes:
                    if change.get("kind") in ("add", "update") and as_str(change.get("path")):
                        yield Wrote(as_str(change.get("path")),
                                    _diff_added(as_str(change.get("diff"))))
        elif status == "failed":  # an MCP or collab tool call
            if item_type == "mcp_tool_call":
                action = ".".join(part for part in (as_str(item.get("server")),
                                                    as_str(item.get("tool"))) if part)
                reason = first_line(as_str(as_dict(item.get("error")).get("message")))
            else:
                action = f"collab.{as_str(item.get('tool')) or 'tool'}"
                reason = ""
            yield Rejected(step, action or str(item_type), reason or "the tool call failed")
