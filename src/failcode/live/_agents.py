"""The agents failcode's hooks go into: where each keeps its hooks, which events failcode
registers, how a hook's input reads as a step, and how an answer is written.

Each agent's contract comes from its pinned version's own code (``tests/lab/pins.toml``; the
evidence is in docs/live.md) and its payloads as the lab recorded them
(``tests/live/fixtures/``). A hook's input is read with the agent's triage reader's rules for
a tool result (:mod:`failcode.triage.readers._claude_code`'s ``tool_result``,
:mod:`failcode.triage.readers._gemini`'s ``tool_call``), so a status and an output mean what
they mean in triage.

- **Claude Code** (``~/.claude/settings.json``; a project's ``.claude/settings.json``):
  ``PostToolUse`` (``tool_name``, ``tool_input``, ``tool_response``: for ``Bash``
  ``{stdout, stderr, interrupted, returnCodeInterpretation?}``), ``PostToolUseFailure``
  (``error``: the text the model reads, ``Exit code N`` then the output for ``Bash``;
  ``is_interrupt``), ``PreToolUse``, ``SessionStart``. Telling the model is
  ``hookSpecificOutput.additionalContext``; stopping is ``continue: false`` with
  ``stopReason`` (shown to the person), which ``PostToolUseFailure`` ignores (its runner reads
  only the message, a blocking error and the context): a stop decided there is told to the
  model and answered at the session's next ``PreToolUse`` (with ``permissionDecision: deny``,
so that call does not run first). Timeouts are in seconds.
- **Gemini CLI** (``~/.gemini/settings.json``; a project's ``.gemini/settings.json``):
  ``AfterTool`` (``tool_name``, ``tool_input``, ``tool_response``: ``{llmContent,
  returnDisplay, error?}``), ``SessionStart``; the same answer fields as Claude Code.
  Timeouts are in milliseconds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from failcode.live._advice import Verdict
from failcode.triage.readers._text import as_dict, as_str

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from failcode.live._advice import Advice
    from failcode.triage._events import Event

__all__ = ["AGENTS", "AgentHooks", "ToolCall"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One hook input, read: the session, the call's id, what ran and the step's event (None:
    a tool call that succeeded, or an input that is not a tool call)."""

    session: str
    call: str | None
    cwd: str | None
    action: str
    event: Event | None
    phase: str = "after"
    """``after`` a tool call, ``before`` one (the agent asks whether to run it), ``start`` of a
    session, ``other``."""


@dataclass(frozen=True, slots=True)
class AgentHooks:
    """One agent's hook contract (see the module's list)."""

    name: str
    title: str
    user_settings: str
    """The user settings file, relative to the home folder."""
    project_settings: str
    """The project settings file, relative to the project's root."""
    events: tuple[str, ...]
    """The events failcode registers, in the agent's own names."""
    timeout_unit: float
    """The settings' timeout unit in seconds (1 for seconds, 0.001 for milliseconds)."""
    read: Callable[[str, Mapping[str, Any]], ToolCall]
    answer_fields: Callable[[str, Advice], dict[str, Any]]
    can_stop: frozenset[str]
    """The events whose answer can stop the agent; a stop decided at another one is told to
    the model at once and answered at the session's next ``before`` event."""

    def answer(self, event: str, advice: Advice) -> str:
        """What the hook prints on stdout for ``advice`` (empty: nothing)."""
        fields = self.answer_fields(event, advice)
        return json.dumps(fields) if fields else ""


def _session(data: Mapping[str, Any]) -> str:
    return as_str(data.get("session_id")) or "unknown"


def _not_a_result(event: str, data: Mapping[str, Any], before: str) -> ToolCall:
    phase = "before" if event == before else "start" if event == "SessionStart" else "other"
    return ToolCall(_session(data), None, as_str(data.get("cwd")) or None, "", None, phase)


def _action(tool: str, tool_input: Mapping[str, Any]) -> str:
    command = as_str(tool_input.get("command"))
    if command:
        return command
    target = as_str(tool_input.get("file_path") or tool_input.get("path"))
    return f"{tool} {target}".strip()


def _common_answer(event: str, advice: Advice) -> dict[str, Any]:
    """Claude Code's and Gemini CLI's answer: context for the model, or a stop."""
    if advice.verdict is Verdict.TELL:
        return {"hookSpecificOutput": {"hookEventName": event,
                                       "additionalContext": advice.text}}
    if advice.verdict is Verdict.STOP:
        return {"continue": False, "stopReason": advice.text, "systemMessage": advice.text}
    return {}


# -- Claude Code -----------------------------------------------------------------------------
def _claude_answer(event: str, advice: Advice) -> dict[str, Any]:
    """A stop at ``PreToolUse`` also denies the call, so the tool does not run first."""
    fields = _common_answer(event, advice)
    if event == "PreToolUse" and advice.verdict is Verdict.STOP:
        fields["hookSpecificOutput"] = {"hookEventName": event, "permissionDecision": "deny",
                                        "permissionDecisionReason": advice.text}
    return fields


def _claude_code(event: str, data: Mapping[str, Any]) -> ToolCall:
    from failcode.triage.readers._claude_code import tool_result  # noqa: PLC0415

    if event not in ("PostToolUse", "PostToolUseFailure"):
        return _not_a_result(event, data, "PreToolUse")
    session, cwd = _session(data), as_str(data.get("cwd")) or None
    tool = as_str(data.get("tool_name"))
    tool_input = as_dict(data.get("tool_input"))
    call = as_str(data.get("tool_use_id")) or None
    detail: dict[str, Any] = {}
    if event == "PostToolUseFailure":
        if data.get("is_interrupt") is True:
            return ToolCall(session, call, cwd, _action(tool, tool_input), None)
        text, failed = as_str(data.get("error")), True
    else:
        response = data.get("tool_response")
        if isinstance(response, dict):
            detail = response
            text = "\n".join(t for t in (as_str(response.get("stdout")),
                                         as_str(response.get("stderr"))) if t)
        else:
            text = as_str(response)
        failed = False
    block = {"tool_use_id": call or "call", "content": text, "is_error": failed}
    found = tool_result(0, block, {call or "call": (tool, dict(tool_input))}, None,
                        detail=detail, where="the hook's input")
    return ToolCall(session, call, cwd, _action(tool, tool_input), found)


# -- Gemini CLI ------------------------------------------------------------------------------
def _gemini_cli(event: str, data: Mapping[str, Any]) -> ToolCall:
    from failcode.triage.readers._gemini import tool_call  # noqa: PLC0415

    if event != "AfterTool":
        return _not_a_result(event, data, "BeforeTool")
    session, cwd = _session(data), as_str(data.get("cwd")) or None
    tool = as_str(data.get("tool_name"))
    tool_input = as_dict(data.get("tool_input"))
    response = as_dict(data.get("tool_response"))
    error = response.get("error")
    text = as_str(response.get("llmContent"))
    if not text and isinstance(response.get("llmContent"), list):
        text = "\n".join(as_str(as_dict(p).get("text")) for p in response["llmContent"])
    if error and not text:
        text = as_str(as_dict(error).get("message")) or as_str(error)
    recorded = {"name": tool, "args": dict(tool_input), "status": "error" if error else "success",
                "result": [{"functionResponse": {"response": {"output": text}}}],
                "resultDisplay": response.get("returnDisplay")}
    found = tool_call(0, recorded, None, "the hook's input")
    call = as_str(data.get("tool_call_id") or data.get("call_id")) or None
    return ToolCall(session, call, cwd, _action(tool, tool_input), found)


AGENTS: Final[dict[str, AgentHooks]] = {
    "claude-code": AgentHooks(
        "claude-code", "Claude Code", ".claude/settings.json", ".claude/settings.json",
        ("PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart"), 1.0, _claude_code,
        _claude_answer, frozenset({"PreToolUse", "PostToolUse"})),
    "gemini-cli": AgentHooks(
        "gemini-cli", "Gemini CLI", ".gemini/settings.json", ".gemini/settings.json",
        ("AfterTool", "SessionStart"), 0.001, _gemini_cli, _common_answer,
        frozenset({"AfterTool"})),
}
"""The agents whose pinned version runs command hooks, by the name the CLI takes."""
