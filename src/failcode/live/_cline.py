"""Cline's hooks (its CLI 3.0; evidence: the pinned bundle, docs/live.md).

- Settings: none; a hook is an executable file named after its event in ``$CLINE_DIR/hooks``
  (``~/.cline/hooks``) or a project's ``.clinerules/hooks``, run with the payload on stdin.
  failcode writes ``PostToolUse``, ``TaskStart`` and the task's ends there (a shell script running
  ``failcode hook cline EVENT``); Cline gives no matcher and no timeout setting (120 s).
- Inputs: ``PostToolUse`` for every call (``hookName: tool_result``; ``taskId``;
  ``tool_result: {id, name, input, output, error}``; ``workspaceRoots``). A ``run_commands``
  call's ``output`` is one entry per command, read by the Cline reader's own rules
  (``[Command exited with code N]`` opening its result); a call of several commands is one
  step here, the first failing command's (or the first's).
- Answers: ``{"contextModification": text}`` is added for the model; ``{"cancel": true,
  "errorMessage": text}`` stops the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from failcode.live._advice import Verdict
from failcode.live._contract import AgentHooks, ToolCall, action_of, not_a_result
from failcode.triage.readers._text import as_dict, as_list, as_str

if TYPE_CHECKING:
    from collections.abc import Mapping

    from failcode.live._advice import Advice

__all__ = ["CLINE"]

ENDS: Final = {"TaskComplete": "submitted", "TaskError": "provider_error"}
"""How a task ended: ``agent_end`` with its turn completed, ``agent_error`` (``error``: the
API error it gave up on, as the Cline reader reads an error left last)."""


def read(event: str, data: Mapping[str, Any]) -> ToolCall:
    from failcode.triage._events import Command, ErrorText  # noqa: PLC0415
    from failcode.triage.readers._cline import cli_result  # noqa: PLC0415

    session = as_str(data.get("taskId")) or as_str(
        as_dict(data.get("sessionContext")).get("rootSessionId")) or "unknown"
    roots = as_list(data.get("workspaceRoots"))
    cwd = as_str(roots[0]) if roots else None
    if event != "PostToolUse":
        return not_a_result(event, data, before="", start="TaskStart", ends=ENDS,
                            session=session, cwd=cwd)
    result = as_dict(data.get("tool_result"))
    tool = as_str(result.get("name"))
    tool_input = as_dict(result.get("input"))
    call = {"name": tool, "input": tool_input, "id": result.get("id")}
    block = {"content": result.get("output"), "is_error": bool(result.get("error"))}
    events = list(cli_result(0, call, None, block))
    failing = [e for e in events if isinstance(e, ErrorText)
               or (isinstance(e, Command) and e.exit_code != 0)]
    found = (failing or events or [None])[0]
    commands = [as_str(c) for c in as_list(tool_input.get("commands"))]
    action = (found.command if isinstance(found, Command)
              else commands[0] if commands else action_of(tool, tool_input))
    return ToolCall(session, as_str(result.get("id")) or None, cwd, action, found)


def answer(_event: str, advice: Advice) -> dict[str, Any]:
    if advice.verdict is Verdict.TELL:
        return {"contextModification": advice.text}
    if advice.verdict is Verdict.STOP:
        return {"cancel": True, "errorMessage": advice.text}
    return {}


CLINE = AgentHooks(
    "cline", "Cline", ".cline/hooks", ".clinerules/hooks", ("PostToolUse", "TaskStart", *ENDS),
    read, answer, frozenset({"PostToolUse"}), kind="files", home_env="CLINE_DIR")
