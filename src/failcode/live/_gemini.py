"""Gemini CLI's hooks (0.61; evidence: the pinned bundle, docs/live.md).

- Settings: ``hooks`` in ``~/.gemini/settings.json`` or a project's
  ``.gemini/settings.json`` (project hooks run only in a trusted folder); timeouts in
  milliseconds; a matcher ``*`` matches every tool.
- Inputs: ``AfterTool`` for every call, failed or not (``tool_name``, ``tool_input``,
  ``tool_response``: ``{llmContent, returnDisplay, error?}``), ``BeforeTool``,
  ``SessionStart``; ``session_id`` and ``cwd``; no call id. A result is read by the Gemini CLI
  reader's own ``tool_call`` rules, as a recorded call whose function response is
  ``llmContent`` (a shell call's ``Exit Code: N`` line is its status).
- Answers: ``hookSpecificOutput.additionalContext`` is appended to the tool's result for the
  model (``<hook_context>``); ``continue: false`` with ``stopReason`` stops the agent
  ("Agent execution stopped by hook").
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
from failcode.triage.readers._text import as_dict, as_str

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["GEMINI_CLI", "recorded_call"]


def recorded_call(tool: str, tool_input: Mapping[str, Any], text: str, *, failed: bool,
                  display: object = None) -> dict[str, Any]:
    """A call in the shape Gemini CLI records it (the reader's ``tool_call`` input)."""
    return {"name": tool, "args": dict(tool_input), "status": "error" if failed else "success",
            "result": [{"functionResponse": {"response": {"output": text}}}],
            "resultDisplay": display}


def content_text(content: object) -> str:
    """``llmContent``: a string, or a list of parts with text."""
    if isinstance(content, list):
        return "\n".join(as_str(as_dict(part).get("text")) for part in content)
    return as_str(content)


def read(event: str, data: Mapping[str, Any]) -> ToolCall:
    if event != "AfterTool":
        return not_a_result(event, data, before="BeforeTool", ends={"AfterAgent": "submitted"})
    from failcode.triage.readers._gemini import tool_call  # noqa: PLC0415

    tool = as_str(data.get("tool_name"))
    tool_input = as_dict(data.get("tool_input"))
    response = as_dict(data.get("tool_response"))
    error = response.get("error")
    text = content_text(response.get("llmContent"))
    if error and not text:
        text = as_str(as_dict(error).get("message")) or as_str(error)
    found = tool_call(0, recorded_call(tool, tool_input, text, failed=bool(error),
                                       display=response.get("returnDisplay")),
                      None, "the hook's input")
    return ToolCall(session_of(data), None, as_str(data.get("cwd")) or None,
                    action_of(tool, tool_input), found)


GEMINI_CLI = AgentHooks(
    "gemini-cli", "Gemini CLI", ".gemini/settings.json", ".gemini/settings.json",
    ("AfterTool", "SessionStart", "AfterAgent"), read, common_answer, frozenset({"AfterTool"}),
    timeout_unit=0.001)
