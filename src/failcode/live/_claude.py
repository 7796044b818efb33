"""Claude Code's hooks (2.1.x; evidence: the pinned binary's strings, docs/live.md).

- Settings: ``hooks`` in ``~/.claude/settings.json`` or a project's ``.claude/settings.json``;
  timeouts in seconds.
- Inputs: ``PostToolUse`` (``tool_name``, ``tool_input``, ``tool_response``: for ``Bash``
  ``{stdout, stderr, interrupted, returnCodeInterpretation?}``), ``PostToolUseFailure``
  (``error``: the text the model reads, ``Exit code N`` then the output for ``Bash``;
  ``is_interrupt``), ``PreToolUse``, ``SessionStart``; every one with ``session_id``, ``cwd``,
  and the call's ``tool_use_id``. A result is read by the Claude Code reader's own
  ``tool_result`` rules, as a transcript's ``tool_result`` block with that text.
- Answers: ``hookSpecificOutput.additionalContext`` tells the model; ``continue: false`` with
  ``stopReason`` stops the agent, which ``PostToolUseFailure`` ignores (its runner reads only
  the message, a blocking error and the context): a stop decided there is told to the model
  and answered at the session's next ``PreToolUse``, with ``permissionDecision: deny`` so that
  call does not run first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from failcode.live._advice import Verdict
from failcode.live._contract import (
    AgentHooks,
    ToolCall,
    action_of,
    common_answer,
    not_a_result,
    session_of,
    transcript_version,
)
from failcode.triage.readers._text import as_dict, as_str

if TYPE_CHECKING:
    from collections.abc import Mapping

    from failcode.live._advice import Advice

__all__ = ["CLAUDE_CODE"]

ENDS: Final = {"Stop": "submitted", "StopFailure": "provider_error"}
"""A turn's end: ``Stop`` (it finished), ``StopFailure`` (an API error ended it; ``error`` names
it)."""


def read(event: str, data: Mapping[str, Any]) -> ToolCall:
    if event not in ("PostToolUse", "PostToolUseFailure"):
        return not_a_result(event, data, before="PreToolUse", ends=ENDS)
    from failcode.triage.readers._claude_code import tool_result  # noqa: PLC0415

    session, cwd = session_of(data), as_str(data.get("cwd")) or None
    tool = as_str(data.get("tool_name"))
    tool_input = as_dict(data.get("tool_input"))
    call = as_str(data.get("tool_use_id")) or None
    detail: dict[str, Any] = {}
    if event == "PostToolUseFailure":
        if data.get("is_interrupt") is True:
            return ToolCall(session, call, cwd, action_of(tool, tool_input), None)
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
    return ToolCall(session, call, cwd, action_of(tool, tool_input), found)


def answer(event: str, advice: Advice) -> dict[str, Any]:
    """A stop at ``PreToolUse`` also denies the call, so the tool does not run first."""
    fields = common_answer(event, advice)
    if event == "PreToolUse" and advice.verdict is Verdict.STOP:
        fields["hookSpecificOutput"] = {"hookEventName": event, "permissionDecision": "deny",
                                        "permissionDecisionReason": advice.text}
    return fields


def version(data: Mapping[str, Any]) -> str | None:
    """Claude Code writes its ``version`` on every transcript record."""
    return transcript_version(data, "version", head=False)


CLAUDE_CODE = AgentHooks(
    "claude-code", "Claude Code", ".claude/settings.json", ".claude/settings.json",
    ("PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart", *ENDS), read, answer,
    frozenset({"PreToolUse", "PostToolUse"}), version=version)
