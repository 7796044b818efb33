"""What every agent's hook contract is made of: :class:`AgentHooks` (where its hooks live, the
events failcode registers, how an input reads and an answer is written) and :class:`ToolCall`,
one hook input read. Each agent's module (``_claude``, ``_gemini``, ``_qwen``, ``_codex``,
``_cline``) fills one in; :mod:`._agents` lists them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from failcode.live._advice import Verdict
from failcode.triage.readers._text import as_str

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from failcode.live._advice import Advice
    from failcode.triage._events import Event

__all__ = ["AgentHooks", "ToolCall", "action_of", "common_answer", "not_a_result", "session_of",
           "transcript_span", "transcript_version"]


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
    session, ``end`` of one (or of a turn), ``other``."""
    ended: str | None = None
    """At an ``end``: how the session ended (one of
    :data:`~failcode.record._outcomes.SESSION_STATUSES`)."""
    reason: str | None = None
    """At an ``end``: what the agent said of it (its error name, its stop reason)."""


@dataclass(frozen=True, slots=True)
class AgentHooks:
    """One agent's hook contract."""

    name: str
    title: str
    user_settings: str
    """The user's settings file (a folder of hook files for ``files``), relative to the home
    folder, or to ``$<home_env>`` when that variable is set."""
    project_settings: str
    """The project's settings file (or hook folder), relative to the project's root."""
    events: tuple[str, ...]
    """The events failcode registers, in the agent's own names."""
    read: Callable[[str, Mapping[str, Any]], ToolCall]
    answer_fields: Callable[[str, Advice], dict[str, Any]]
    can_stop: frozenset[str]
    """The events whose answer can stop the agent; a stop decided at another one is told to
    the model at once and answered at the session's next ``before`` event."""
    timeout_unit: float = 1.0
    """The settings' timeout unit in seconds (1 for seconds, 0.001 for milliseconds)."""
    kind: str = "settings"
    """``settings``: entries in a JSON settings file's ``hooks`` table; ``files``: one
    executable file per event in a folder."""
    home_env: str | None = None
    """A variable that moves the user's settings folder (Codex's ``CODEX_HOME``)."""
    note: str = ""
    """What else the person must do before the agent runs the hooks (said after install)."""
    version: Callable[[Mapping[str, Any]], str | None] | None = None
    """The agent's own version for a hook input, where the agent writes it where the hook can
    read it (its transcript), so the service can say which version failed."""
    statuses: bool = True
    """Whether a tool result says how the call ended (a command's exit status): then the
    hooks see every failed call the agent's export does, and a service takes the session's
    calls from the hooks alone. Codex's ``PostToolUse`` has the output only (its hook reads
    the status from Codex's transcript, which may fail): its export's records are kept."""

    def answer(self, event: str, advice: Advice) -> str:
        """What the hook prints on stdout for ``advice`` (empty: nothing)."""
        fields = self.answer_fields(event, advice)
        return json.dumps(fields) if fields else ""


_SPAN: Final = 64 * 1024


def transcript_span(path: str, size: int, *, head: bool) -> bytes | None:
    """The first (``head``) or last ``size`` bytes of the transcript at ``path``, read once;
    None when it cannot be read."""
    try:
        with open(path, "rb") as file:  # noqa: PTH123 - one bounded read
            if not head:
                file.seek(0, 2)
                file.seek(max(0, file.tell() - size))
            return file.read(size)
    except (OSError, ValueError):
        return None


def transcript_version(data: Mapping[str, Any], field: str, *, head: bool) -> str | None:
    """The last (``head``: the first) ``"field": "..."`` string in the first or last 64 KiB of
    the transcript the hook input names (``transcript_path``): where Claude Code (``version``
    on every record) and Codex (``cli_version`` in its ``session_meta``) write their version.
    None when there is none or the file cannot be read."""
    import re  # noqa: PLC0415

    path = as_str(data.get("transcript_path"))
    text = transcript_span(path, _SPAN, head=head) if path else None
    if text is None:
        return None
    found = re.findall(rb'"' + re.escape(field.encode()) + rb'"\s*:\s*"([0-9A-Za-z.+-]{1,40})"',
                       text)
    if not found:
        return None
    return str((found[0] if head else found[-1]).decode())


def session_of(data: Mapping[str, Any]) -> str:
    return as_str(data.get("session_id")) or "unknown"


def action_of(tool: str, tool_input: Mapping[str, Any]) -> str:
    """The call as the model wrote it: its command, else the tool and its file."""
    command = as_str(tool_input.get("command"))
    if command:
        return command
    target = as_str(tool_input.get("file_path") or tool_input.get("path"))
    return f"{tool} {target}".strip()


def not_a_result(event: str, data: Mapping[str, Any], *, before: str,
                 start: str = "SessionStart", ends: Mapping[str, str] | None = None,
                 session: str | None = None, cwd: str | None = None) -> ToolCall:
    """An input that reports no tool result: ``before`` a call, a session's ``start``, its
    end (``ends``: the agent's end events and how each says the session ended)."""
    session = session or session_of(data)
    cwd = cwd or as_str(data.get("cwd")) or None
    if ends and event in ends:
        error = data.get("error")
        reason = (as_str(error.get("message")) if isinstance(error, dict) else as_str(error)
                  ) or as_str(data.get("reason"))
        return ToolCall(session, None, cwd, "", None, "end", ends[event], reason[:300] or None)
    phase = "before" if event == before else "start" if event == start else "other"
    return ToolCall(session, None, cwd, "", None, phase)


def common_answer(event: str, advice: Advice) -> dict[str, Any]:
    """The answer of the agents that took Claude Code's hook output: context for the model
    (``hookSpecificOutput.additionalContext``), or a stop (``continue: false`` with
    ``stopReason``, ``systemMessage`` for the person)."""
    if advice.verdict is Verdict.TELL:
        return {"hookSpecificOutput": {"hookEventName": event,
                                       "additionalContext": advice.text}}
    if advice.verdict is Verdict.STOP:
        return {"continue": False, "stopReason": advice.text, "systemMessage": advice.text}
    return {}
