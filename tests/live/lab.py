"""Loop scenarios through real agents with failcode's hooks installed, and what the model saw.

``python -m tests.live.lab [--agent A] [--scenario S]`` runs each live scenario
(``tests/live/scenarios/``) through each agent failcode has hooks for, three ways: without the
hooks, with them, and with them and a scripted model that stops when told (``heed``). The
hooks are installed the way a person installs them: ``failcode hooks install AGENT`` with the
run's HOME, after the agent's own settings are written. The stub counts failcode's messages
(``[failcode]``) in every request it receives, so a run shows the step at which the model was
first told, and the steps a heeding model did not take.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tests.lab.agents import agents
from tests.lab.runner import run
from tests.lab.scenario import load_all

if TYPE_CHECKING:
    from tests.lab.agents import Launch, RunContext
    from tests.lab.scenario import Scenario

SCENARIOS: Final = Path(__file__).parent / "scenarios"
HOOKED: Final = ("claude-code", "gemini-cli", "qwen-code", "codex", "cline")
"""The lab agents failcode installs hooks in."""
_SETTINGS: Final = {"claude-code": ".claude/settings.json", "gemini-cli": ".gemini/settings.json",
                    "qwen-code": ".qwen/settings.json", "codex": ".codex/hooks.json",
                    "cline": ".cline/hooks"}
"""Where each agent's user hooks go in the run's HOME (the lab's launches write some of these
files themselves; Cline's is a folder of hook files)."""
TELL_AFTER: Final = 2
"""``[live] tell_after``'s default: the loop step at which the model is told."""


@dataclass(slots=True)
class LiveRun:
    """What one run showed: the steps the model asked for, where it was told, the hook log."""

    agent: str
    scenario: str
    hooks: bool
    heed: bool
    requests: list[dict[str, Any]]
    hook_log: str
    settings_restored: bool | None
    """Whether ``failcode hooks uninstall`` after the run gave back the agent's own settings
    (:func:`_restored`; None: no hooks were installed)."""
    exit_code: int | None
    timed_out: bool
    stdout: str
    ran_commands: int = 0
    """The tool calls that ran, as the hooks' history counted them (0 without hooks)."""

    @property
    def played(self) -> list[int]:
        """The scenario steps the stub played, in order (each once)."""
        return sorted({r["plays"] for r in self.requests if r.get("plays") is not None})

    @property
    def told_at(self) -> list[int]:
        """The steps of the requests that carried a message of failcode's."""
        return sorted({r["step"] for r in self.requests if r.get("told")})

    @property
    def first_told(self) -> int | None:
        told = self.told_at
        return told[0] if told else None


def expected_tell_step(scenario: Scenario, tell_after: int = TELL_AFTER) -> int:
    """The request step at which the model must first read failcode's message: the one after
    the scenario's first loop reaches ``tell_after`` failing steps (the ground truth's own
    loop, not failcode's)."""
    return scenario.loops[0][tell_after - 1] + 1


def _homes(home: Path, agent_env: dict[str, str]) -> dict[str, str]:
    """HOME, and the variables that move an agent's settings folder, as the agent has them."""
    return {"HOME": str(home), **{k: agent_env[k] for k in ("CODEX_HOME", "CLINE_DIR")
                                  if k in agent_env}}


def _snapshot(path: Path) -> dict[str, bytes] | None:
    """A settings file's bytes, or a hook folder's files (None: not there)."""
    if path.is_dir():
        return {p.name: p.read_bytes() for p in sorted(path.iterdir())}
    return {"": path.read_bytes()} if path.exists() else None


def _restored(before: dict[str, bytes] | None, after: dict[str, bytes] | None) -> bool:
    """Whether uninstall gave the settings back: byte for byte, or, for an agent that
    rewrites its own settings file while it runs (Qwen Code adds ``$version``), every key the
    file had before install with its value, ``hooks`` included."""
    if before == after:
        return True
    if before is None or after is None or set(before) != {""} or set(after) != {""}:
        return False
    old, new = json.loads(before[""]), json.loads(after[""])
    return all(new.get(key) == value for key, value in old.items()) and \
        new.get("hooks") == old.get("hooks")


def install_hooks(agent: str, home: Path, project: Path, agent_env: dict[str, str]) -> str:
    """``failcode hooks install AGENT`` as a person runs it, in the agent's HOME."""
    env = {**os.environ, **_homes(home, agent_env)}
    done = subprocess.run([sys.executable, "-m", "failcode", "hooks", "install", agent],
                          cwd=project, env=env, capture_output=True, text=True, check=True,
                          timeout=60)
    return done.stdout


def run_live(agent_name: str, scenario: Scenario, *, hooks: bool = True, heed: bool = False,
             keep: Path | None = None) -> LiveRun:
    """One run of ``scenario`` through the agent, with failcode's hooks or without; with them,
    ``failcode hooks uninstall`` afterwards, checked against the settings file before."""
    agent = agents()[agent_name]
    agent.install()
    state: dict[str, Any] = {}
    settings_file = _SETTINGS[agent_name]

    def prepare(ctx: RunContext, launch: Launch) -> None:
        state["dir"] = ctx.root / "failcode-state"
        state["env"] = launch.env
        launch.env["FAILCODE_STATE_DIR"] = str(state["dir"])
        if hooks:
            path = ctx.home / settings_file
            state["before"] = _snapshot(path)
            install_hooks(agent_name, ctx.home, ctx.project, launch.env)
            if agent_name == "codex":  # what automation passes: the hooks are not trusted yet
                launch.argv.insert(launch.argv.index("exec") + 1,
                                   "--dangerously-bypass-hook-trust")

    with tempfile.TemporaryDirectory(prefix="failcode-live-", dir=keep) as folder:
        result, ctx = run(agent, scenario, keep=Path(folder), prepare=prepare, heed=heed)
        if ctx is None:
            raise RuntimeError(f"{agent_name} does not run {scenario.name}: {result.skipped}")
        log_path = state["dir"] / "hook.log"
        hook_log = log_path.read_text() if log_path.exists() else ""
        history = state["dir"] / "live.db"
        ran = 0
        if history.exists():
            with contextlib.closing(sqlite3.connect(history)) as db:
                ran = int(db.execute("SELECT COUNT(*) FROM steps").fetchone()[0])
        restored = None
        if hooks:
            env = {**os.environ, **_homes(ctx.home, state["env"])}
            subprocess.run([sys.executable, "-m", "failcode", "hooks", "uninstall", agent_name],
                           cwd=ctx.project, env=env, capture_output=True, check=True,
                           timeout=60)
            restored = _restored(state["before"], _snapshot(ctx.home / settings_file))
    requests = [r for r in result.log if r.get("api") and r.get("fault") is None]
    return LiveRun(agent_name, scenario.name, hooks, heed, requests, hook_log, restored,
                   result.exit_code, result.timed_out, result.stdout, ran)


def _summary(runs: list[LiveRun]) -> dict[str, Any]:
    plain, hooked, heeded = runs
    return {"agent": plain.agent, "scenario": plain.scenario,
            "steps without hooks": len(plain.played), "first told (hooks)": hooked.first_told,
            "told without hooks": plain.told_at, "steps with hooks": len(hooked.played),
            "commands run with hooks": hooked.ran_commands,
            "steps when the model heeds": len(heeded.played),
            "steps saved": len(plain.played) - len(heeded.played)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", action="append", choices=HOOKED)
    parser.add_argument("--scenario", action="append")
    args = parser.parse_args(argv)
    scenarios = [s for s in load_all(SCENARIOS) if not args.scenario or s.name in args.scenario]
    for agent in args.agent or HOOKED:
        for scenario in scenarios:
            runs = [run_live(agent, scenario, hooks=False),
                    run_live(agent, scenario),
                    run_live(agent, scenario, heed=True)]
            print(json.dumps(_summary(runs)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
