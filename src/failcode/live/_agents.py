"""The agents failcode's hooks go into, by the name the CLI takes: each one's contract is its
own module (``_claude``, ``_gemini``, ``_qwen``, ``_codex``, ``_cline``), built from its pinned
version's own code (``tests/lab/pins.toml``; the evidence is in docs/live.md) and checked on
its payloads as the lab recorded them (``tests/live/fixtures/``). A hook's input is read with
the agent's triage reader's rules for a tool result, so a status and an output mean what they
mean in triage.

The lab's other agents have no hooks a command can answer: OpenHands 1.16 runs command hooks
but only logs what a ``PostToolUse`` hook says; OpenCode extends itself with JavaScript plugins,
not commands; aider and mini-swe-agent have none.
"""

from __future__ import annotations

from typing import Final

from failcode.live._claude import CLAUDE_CODE
from failcode.live._cline import CLINE
from failcode.live._codex import CODEX
from failcode.live._contract import AgentHooks, ToolCall
from failcode.live._gemini import GEMINI_CLI
from failcode.live._qwen import QWEN_CODE

__all__ = ["AGENTS", "AgentHooks", "ToolCall"]

AGENTS: Final[dict[str, AgentHooks]] = {
    hooks.name: hooks for hooks in (CLAUDE_CODE, GEMINI_CLI, QWEN_CODE, CODEX, CLINE)}
"""The agents whose pinned version runs command hooks failcode can answer."""
