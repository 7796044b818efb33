"""failcode inside the agent's loop: hooks that classify each failed tool call as it happens.

``failcode hooks install AGENT`` registers ``failcode hook AGENT EVENT`` in the agent's
settings (:mod:`._settings`); the agent runs it after each tool call with the call as JSON on
stdin (:mod:`._agents` reads each agent's contract); :mod:`._hook` classifies the step as triage
does, keeps the session's history (:mod:`._history`), decides with :func:`failcode.decide` and
answers with :func:`advise`'s table (:mod:`._advice`). Failures may also go to a failcode service
(:mod:`._send`). See docs/live.md.

The names below are imported on first use: the agent waits for every hook call, and the call
needs none of the installer's code.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from failcode.live._advice import MARK, Advice, Verdict, advise
    from failcode.live._agents import AGENTS, AgentHooks, ToolCall
    from failcode.live._hook import run_hook
    from failcode.live._settings import (
        SettingsError,
        install,
        installed,
        settings_file,
        uninstall,
    )

_WHERE = {
    **dict.fromkeys(("MARK", "Advice", "Verdict", "advise"), "_advice"),
    **dict.fromkeys(("AGENTS", "AgentHooks", "ToolCall"), "_agents"),
    "run_hook": "_hook",
    **dict.fromkeys(("SettingsError", "install", "installed", "settings_file", "uninstall"),
                    "_settings"),
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'failcode.live' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"failcode.live.{where}"), name)
    globals()[name] = value
    return value


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
