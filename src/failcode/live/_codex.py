"""Codex CLI's hooks (0.171; evidence: the pinned binary's strings and hook schemas,
docs/live.md).

- Settings: ``$CODEX_HOME/hooks.json`` (``~/.codex/hooks.json``) or a project's
  ``.codex/hooks.json``, Claude Code's shape; timeouts in seconds. Codex runs a hook only once
  a person trusted it (its hooks review in the TUI: "New hook - review required", then Trust),
  or for one run with ``--dangerously-bypass-hook-trust``.
- Inputs: ``PostToolUse`` for every call, failed or not (``tool_name`` ``Bash`` for a
  command, ``tool_input.command``, ``tool_response``: the command's output, with no exit
  status), ``SessionStart``, ``Stop`` (a turn finished); ``session_id``, ``cwd``,
  ``tool_use_id``. With no status, a
  command's result is read by the rule triage applies to every log that records none
  (``shell_failed``: the output in the tool's own words says whether and how it failed);
  a failure whose output says nothing of it reads as a success.
- Answers: ``hookSpecificOutput.additionalContext`` tells the model. ``continue: false``
  after a call does not stop ``codex exec`` (measured in the live lab: the next call runs),
  and ``PreToolUse`` refuses it ("unsupported continue:false"), so a stop is told to the model
  at once and answered at the session's next ``PreToolUse`` with ``permissionDecision:
  deny`` and its reason: that call does not run, and the model reads why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from failcode.live._advice import Verdict
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

    from failcode.live._advice import Advice

__all__ = ["CODEX"]


def read(event: str, data: Mapping[str, Any]) -> ToolCall:
    if event != "PostToolUse":
        return not_a_result(event, data, before="PreToolUse", ends={"Stop": "submitted"})
    from failcode.triage._events import Command  # noqa: PLC0415
    from failcode.triage.readers._swe_agent import shell_failed  # noqa: PLC0415

    tool = as_str(data.get("tool_name"))
    tool_input = as_dict(data.get("tool_input"))
    command = as_str(tool_input.get("command"))
    response = data.get("tool_response")
    text = response if isinstance(response, str) else as_str(as_dict(response).get("output"))
    found = (Command(0, command, shell_failed(text) or 0, text)
             if tool in ("Bash", "shell", "exec_command") and command else None)
    return ToolCall(session_of(data), as_str(data.get("tool_use_id")) or None,
                    as_str(data.get("cwd")) or None, action_of(tool, tool_input), found)


def answer(event: str, advice: Advice) -> dict[str, Any]:
    """A stop is a denied ``PreToolUse`` (Codex takes no ``continue: false`` there)."""
    if event == "PreToolUse":
        if advice.verdict is not Verdict.STOP:
            return {}
        return {"hookSpecificOutput": {"hookEventName": event, "permissionDecision": "deny",
                                       "permissionDecisionReason": advice.text}}
    return common_answer(event, advice)


CODEX = AgentHooks(
    "codex", "Codex CLI", ".codex/hooks.json", ".codex/hooks.json",
    ("PreToolUse", "PostToolUse", "SessionStart", "Stop"), read, answer, frozenset({"PreToolUse"}),
    home_env="CODEX_HOME", statuses=False,
    note=("Codex runs a hook only once you trust it: start codex and trust failcode's hooks "
          "when it asks for a review (or from its hooks list); automation may pass "
          "--dangerously-bypass-hook-trust instead."))
