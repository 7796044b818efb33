"""Qwen Code's hooks (0.24; evidence: the pinned bundle and the hooks guide it ships,
docs/live.md). Claude Code's contract with Gemini CLI's tools.

- Settings: ``hooks`` in ``~/.qwen/settings.json`` or a project's ``.qwen/settings.json``
  (project hooks run only in a trusted folder); timeouts in seconds.
- Inputs: ``PostToolUse`` (``tool_response``: ``{llmContent, returnDisplay}``),
  ``PostToolUseFailure`` (``error``: the tool's text, ``Command: ... Exit Code: N`` for a
  shell call; ``is_interrupt``), ``PreToolUse``, ``SessionStart``; ``session_id``, ``cwd``,
  ``tool_use_id`` and the model's ``tool_call_id``. A result is read by the Gemini CLI reader's
  ``tool_call`` rules, as the Qwen Code reader reads its own chats.
- Answers: Claude Code's fields. ``PostToolUseFailure``'s runner reads only the context, so
  a stop decided there is answered at the next ``PreToolUse`` with ``continue: false``
  alone (a ``deny`` there would only refuse the call: Qwen Code reads it first).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from failcode.live._contract import (
    AgentHooks,
    ToolCall,
    action_of,
    common_answer,
    not_a_result,
    session_of,
)
from failcode.live._gemini import content_text, recorded_call
from failcode.triage.readers._text import as_dict, as_str

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["QWEN_CODE"]


def read(event: str, data: Mapping[str, Any]) -> ToolCall:
    if event not in ("PostToolUse", "PostToolUseFailure"):
        return not_a_result(event, data, before="PreToolUse", ends={"Stop": "submitted"})
    from failcode.triage.readers._gemini import tool_call  # noqa: PLC0415

    session, cwd = session_of(data), as_str(data.get("cwd")) or None
    tool = as_str(data.get("tool_name"))
    tool_input = as_dict(data.get("tool_input"))
    call = as_str(data.get("tool_call_id") or data.get("tool_use_id")) or None
    if event == "PostToolUseFailure":
        if data.get("is_interrupt") is True:
            return ToolCall(session, call, cwd, action_of(tool, tool_input), None)
        recorded = recorded_call(tool, tool_input, as_str(data.get("error")), failed=True)
    else:
        response = as_dict(data.get("tool_response"))
        recorded = recorded_call(tool, tool_input, content_text(response.get("llmContent")),
                                 failed=False, display=response.get("returnDisplay"))
    found = tool_call(0, recorded, None, "the hook's input")
    return ToolCall(session, call, cwd, action_of(tool, tool_input), found)


QWEN_CODE = AgentHooks(
    "qwen-code", "Qwen Code", ".qwen/settings.json", ".qwen/settings.json",
    ("PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart", "Stop"), read,
    common_answer,
    frozenset({"PreToolUse", "PostToolUse"}))
