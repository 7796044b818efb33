"""Codex CLI's hooks (0.171; evidence: the pinned binary's strings and hook schemas,
docs/live.md).

- Settings: ``$CODEX_HOME/hooks.json`` (``~/.codex/hooks.json``) or a project's
  ``.codex/hooks.json``, Claude Code's shape; timeouts in seconds. Codex runs a hook only once
  a person trusted it (its hooks review in the TUI: "New hook - review required", then Trust),
  or for one run with ``--dangerously-bypass-hook-trust``.
- Inputs: ``PostToolUse`` for every call, failed or not (``tool_name`` ``Bash`` for a
  command, ``tool_input.command``, ``tool_response``: the command's output, with no exit
  status), ``SessionStart``, ``Stop`` (a turn finished); ``session_id``, ``cwd``,
  ``tool_use_id``, ``transcript_path``. The exit status is the one Codex wrote for the call in
  its transcript before it ran the hook (:func:`recorded_exit`: the Codex reader's record of
  an execution). Without it (a transcript that cannot be read, another version), a command's
  result is read by the rule triage applies to every log that records none (``shell_failed``:
  the output in the tool's own words says whether and how it failed); a failure whose output
  says nothing of it then reads as a success.
- Answers: ``hookSpecificOutput.additionalContext`` tells the model. ``continue: false``
  after a call does not stop ``codex exec`` (measured in the live lab: the next call runs),
  and ``PreToolUse`` refuses it ("unsupported continue:false"), so a stop is told to the model
  at once and answered at the session's next ``PreToolUse`` with ``permissionDecision:
  deny`` and its reason: that call does not run, and the model reads why.
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
    transcript_span,
    transcript_version,
)
from failcode.triage.readers._text import as_dict, as_str

if TYPE_CHECKING:
    from collections.abc import Mapping

    from failcode.live._advice import Advice

__all__ = ["CODEX"]


TAIL: Final = 1024 * 1024
"""How much of the end of Codex's transcript is read for a call's exit status."""


def recorded_exit(transcript: str, call: str) -> int | None:
    """The exit status Codex recorded for ``call`` in its transcript (the rollout file the
    hook input names), read as the Codex reader reads an executor's record: the call's
    ``item_completed`` ``CommandExecution`` (``exit_code``; ``declined``: none) or its
    ``exec_command_end``. Codex writes it before it runs ``PostToolUse``; only the last
    :data:`TAIL` bytes are read. None when it is not there (or the file cannot be read)."""
    import json  # noqa: PLC0415

    from failcode.triage.readers._text import stated_exit  # noqa: PLC0415

    tail = transcript_span(transcript, TAIL, head=False)
    if tail is None:
        return None
    needle = json.dumps(call).encode()
    for line in reversed(tail.splitlines()):
        if needle not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        payload = as_dict(as_dict(record).get("payload"))
        item = as_dict(payload.get("item")) if payload.get("type") == "item_completed" \
            else payload if payload.get("type") == "exec_command_end" else {}
        if as_str(item.get("id") or item.get("call_id")) != call:
            continue
        if item.get("status") == "declined":
            return None
        return stated_exit(item.get("exit_code"), "Codex's transcript")
    return None


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
    call = as_str(data.get("tool_use_id")) or None
    found = None
    if tool in ("Bash", "shell", "exec_command") and command:
        transcript = as_str(data.get("transcript_path"))
        status = recorded_exit(transcript, call) if transcript and call else None
        found = Command(0, command, shell_failed(text) or 0 if status is None else status, text)
    return ToolCall(session_of(data), call, as_str(data.get("cwd")) or None,
                    action_of(tool, tool_input), found)


def answer(event: str, advice: Advice) -> dict[str, Any]:
    """A stop is a denied ``PreToolUse`` (Codex takes no ``continue: false`` there)."""
    if event == "PreToolUse":
        if advice.verdict is not Verdict.STOP:
            return {}
        return {"hookSpecificOutput": {"hookEventName": event, "permissionDecision": "deny",
                                       "permissionDecisionReason": advice.text}}
    return common_answer(event, advice)


def version(data: Mapping[str, Any]) -> str | None:
    """Codex writes its ``cli_version`` in the transcript's first record (``session_meta``)."""
    return transcript_version(data, "cli_version", head=True)


CODEX = AgentHooks(
    "codex", "Codex CLI", ".codex/hooks.json", ".codex/hooks.json",
    ("PreToolUse", "PostToolUse", "SessionStart", "Stop"), read, answer, frozenset({"PreToolUse"}),
    home_env="CODEX_HOME", statuses=False, version=version,
    note=("Codex runs a hook only once you trust it: start codex and trust failcode's hooks "
          "when it asks for a review (or from its hooks list); automation may pass "
          "--dangerously-bypass-hook-trust instead."))
