"""failcode inside the agent's loop: hooks that classify each failed tool call as it happens.

``failcode hooks install AGENT`` registers ``failcode hook AGENT EVENT`` in the agent's
settings (:mod:`._settings`); the agent runs it after each tool call with the call as JSON on
stdin (:mod:`._agents` reads each agent's contract); :mod:`._hook` classifies the step as triage
does, keeps the session's history (:mod:`._history`), decides with :func:`failcode.decide` and
answers with :func:`advise`'s table (:mod:`._advice`). Failures may also go to a failcode service
(:mod:`._send`). See docs/live.md.
"""

from __future__ import annotations

from failcode.live._advice import MARK, Advice, Verdict, advise
from failcode.live._agents import AGENTS, AgentHooks, ToolCall
from failcode.live._hook import run_hook
from failcode.live._settings import SettingsError, install, installed, settings_file, uninstall

__all__ = [
    "AGENTS",
    "MARK",
    "Advice",
    "AgentHooks",
    "SettingsError",
    "ToolCall",
    "Verdict",
    "advise",
    "install",
    "installed",
    "run_hook",
    "settings_file",
    "uninstall",
]
