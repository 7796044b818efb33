"""The texts the readers take for a refusal, a declined approval or an interrupt are the agents'
own: each is found in the pinned package's code, and the reader turns a call carrying it into
the outcome it means (Gemini CLI 0.61.0 and Qwen Code 0.24.4 from their lab installs, Copilot
CLI 1.0.60's ``app.js`` by ``npm pack``)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any, Final

import pytest

from failcode import Cancelled
from failcode.triage._events import RecordedOutcome, Rejected
from failcode.triage.readers._copilot import CopilotCliReader, _Call
from failcode.triage.readers._gemini import tool_call
from tests.triage.oracles._node import COPILOT_CLI, gemini_bundle, npm_packed, qwen_package

if TYPE_CHECKING:
    from pathlib import Path

    from failcode.triage._events import Event


@cache
def source(agent: str) -> str:
    """Every JavaScript file of the agent's pinned package, as one text."""
    roots: dict[str, Path] = {}
    if agent == "gemini-cli":
        roots[agent] = gemini_bundle()
    elif agent == "qwen-code":
        roots[agent] = qwen_package() / "chunks"
    else:
        roots[agent] = npm_packed(*COPILOT_CLI)
    files = sorted(roots[agent].glob("*.js"))
    assert files, f"no JavaScript under {roots[agent]}"
    return "\n".join(path.read_text(errors="replace") for path in files)


def _shell(text: str, status: str) -> dict[str, Any]:
    """A shell call in Gemini CLI's ``toolCalls`` shape (Qwen Code's calls are read as one)."""
    return {"name": "run_shell_command", "args": {"command": "rm -rf build"}, "status": status,
            "result": [{"functionResponse": {"response": {"error": text}}}]}


def _copilot(text: str, code: str) -> Event | None:
    call = _Call(0, "bash", {"command": "rm -rf build"}, None)
    return CopilotCliReader._result(call, {"success": False, "error": {
        "message": text, "code": code}}, "line 1")


def kind(event: Event | None) -> str:
    """``cancelled``, ``declined`` (cancelled by the person), ``rejected`` or what else."""
    if isinstance(event, RecordedOutcome) and isinstance(event.outcome, Cancelled):
        return "declined" if "declined by the user" in str(event.outcome) else "cancelled"
    if isinstance(event, Rejected):
        return "rejected"
    return type(event).__name__


CASES: Final = [
    # agent, the text in the package, how the text reaches the chat, what the reader makes of it
    ("gemini-cli", "User denied execution.", lambda t: tool_call(
        0, _shell(f"[Operation Cancelled] Reason: {t}", "cancelled"), None, ""), "declined"),
    ("gemini-cli", "Tool execution denied by policy.", lambda t: tool_call(
        0, _shell(t, "error"), None, ""), "rejected"),
    ("gemini-cli", "Command was cancelled by user before it could complete.", lambda t: tool_call(
        0, _shell(t, "success"), None, ""), "cancelled"),
    ("gemini-cli", "Command was cancelled by user before it could start.", lambda t: tool_call(
        0, _shell(t, "success"), None, ""), "cancelled"),
    ("qwen-code", "User did not allow tool call", lambda t: tool_call(
        0, _shell(f"[Operation Cancelled] Reason: {t}", "cancelled"), None, ""), "declined"),
    ("qwen-code", "Command was cancelled by user before it could complete.", lambda t: tool_call(
        0, _shell(t, "success"), None, ""), "cancelled"),
    ("copilot-cli", "The user rejected this tool call", lambda t: _copilot(t, "rejected"),
     "declined"),
    ("copilot-cli", "Permission denied by user", lambda t: _copilot(t, "rejected"), "declined"),
    ("copilot-cli", ("The pending permission request was cancelled before the tool could "
                     "continue."), lambda t: _copilot(t, "rejected"), "declined"),
    ("copilot-cli", "Permission to run this tool was denied due to the following rules",
     lambda t: _copilot(t, "denied"), "rejected"),
    ("copilot-cli", "Permission denied and could not request permission from user",
     lambda t: _copilot(t, "denied"), "rejected"),
    ("copilot-cli", "Permission denied by a PermissionRequest hook",
     lambda t: _copilot(t, "denied"), "rejected"),
    ("copilot-cli", "The execution of this tool, or a previous tool was interrupted.",
     lambda t: _copilot(t, "interrupted"), "cancelled"),
]


@pytest.mark.parametrize(("agent", "text", "record", "meaning"), CASES,
                         ids=[f"{c[0]}: {c[1][:40]}" for c in CASES])
def test_each_refusal_text_is_the_agents_own(agent: str, text: str, record: Any,
                                              meaning: str) -> None:
    """The text is in the agent's pinned code, and the reader gives it its meaning."""
    assert text in source(agent), f"{agent}'s pinned package no longer writes {text!r}"
    assert kind(record(text)) == meaning


@pytest.mark.parametrize(("agent", "fragment"), [
    ("gemini-cli", "[Operation Cancelled] Reason: ${reason}"),
    ("qwen-code", "[Operation Cancelled] Reason: ${reason}"),
    ("copilot-cli", 'resultType:"rejected"'),
    ("copilot-cli", 'resultType:"denied"'),
    ("copilot-cli", '"interrupted")'),
])
def test_the_codes_and_templates_the_readers_parse_are_written(agent: str, fragment: str) -> None:
    """The cancellation template and the result codes the readers key on are in the code."""
    assert fragment in source(agent)
