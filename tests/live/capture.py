"""Capture the hook payloads the agents really send, as fixtures for ``failcode hook``.

::

    python -m tests.live.capture [--agent A ...] [--scenario S ...] [--keep DIR]

Each run is a lab run (:func:`tests.lab.runner.run`) with a recording hook installed before
the agent starts, in the agent's own user settings under the run's HOME (merged into what the
agent's launch wrote): ``<python> -m tests.live.record EVENT`` for every after-tool,
session-start and stop event the agent has (:data:`EVENTS`). The hook writes each payload,
unchanged, into the run's ``capture/`` folder; the payloads are then normalized like the lab's
session fixtures (:class:`tests.lab.normalize.Normalizer`, the same replacements as
:func:`tests.lab.runner.save`) and written, pretty, to
``tests/live/fixtures/<agent>/<scenario>/<nn>-<event>.json`` beside ``meta.json`` (agent,
version, scenario, exit status, the events in order, what the stub answered). The agent's own
stdout and stderr go to ``<lab cache>/logs/live-<agent>-<scenario>.log``, outside the
repository.

How each agent is given the hook (read from the pinned agents' own code):

- Claude Code: ``hooks`` in ``~/.claude/settings.json``.
- Gemini CLI: ``hooks`` in ``~/.gemini/settings.json`` (timeouts in milliseconds).
- Codex: ``$CODEX_HOME/hooks.json`` and ``--dangerously-bypass-hook-trust`` (user hooks run
  only once trusted, else).
- Qwen Code: ``hooks`` in ``~/.qwen/settings.json``.
- Cline: one executable file per event, named after it, in ``$CLINE_DIR/hooks/``.
- OpenHands: ``~/.openhands/hooks.json`` (Claude Code's shape).
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tests.lab.agents import PROMPT, REPO, AgentUnavailableError, agents, cache_dir
from tests.lab.runner import run, run_normalizer
from tests.lab.scenario import load_all

if TYPE_CHECKING:
    from tests.lab.agents import Agent, Launch, RunContext
    from tests.lab.scenario import Scenario

FIXTURES: Final = Path(__file__).parent / "fixtures"
SCENARIOS: Final = (
    "loop-same-failure", "missing-module", "missing-program", "permission-denied",
    "read-missing-file", "edit-string-not-found", "command-timeout", "pytest-failure",
    "refused-command", "provider-fatal-500",
)
EVENTS: Final[dict[str, tuple[str, ...]]] = {
    "claude-code": ("SessionStart", "PostToolUse", "PostToolUseFailure", "PermissionDenied",
                    "Stop", "StopFailure", "SessionEnd"),
    "gemini-cli": ("SessionStart", "AfterTool", "AfterAgent", "SessionEnd"),
    "codex": ("SessionStart", "PostToolUse", "Stop"),
    "qwen-code": ("SessionStart", "PostToolUse", "PostToolUseFailure", "PermissionDenied",
                  "Stop", "StopFailure", "SessionEnd"),
    "cline": ("TaskStart", "PostToolUse", "TaskComplete", "TaskError", "TaskCancel",
              "SessionShutdown"),
    "openhands": ("SessionStart", "PostToolUse", "Stop", "SessionEnd"),
}
"""Per agent with command hooks, the events recorded, in the order a run meets them."""
HOOK_TIMEOUT_S: Final = 30
SETTLE_S: Final = 2.0
"""How long the capture folder must stay unchanged after the run before it is read (Cline
runs its start, end and error hooks detached: they may finish after the agent)."""


def hook_command(folder: Path, event: str) -> str:
    """The shell command of the recording hook for ``event``: the capture folder and the
    repository are given on the command line, so no agent's environment filtering loses
    them."""
    return " ".join([
        "env", shlex.quote(f"PYTHONPATH={REPO}"), shlex.quote(f"FAILCODE_CAPTURE={folder}"),
        shlex.quote(sys.executable), "-m", "tests.live.record", shlex.quote(event)])


def _read_json(path: Path) -> dict[str, Any]:
    if path.is_file() and path.read_text().strip():
        loaded = json.loads(path.read_text())
        if isinstance(loaded, dict):
            return loaded
    return {}


def merge_hooks(path: Path, events: dict[str, list[dict[str, Any]]]) -> None:
    """Add matcher groups to the ``hooks`` object of the JSON settings file ``path`` (created
    when missing), keeping everything the file held."""
    settings = _read_json(path)
    hooks = settings.setdefault("hooks", {})
    for event, groups in events.items():
        hooks.setdefault(event, []).extend(groups)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n")


def _groups(folder: Path, events: tuple[str, ...], timeout: int,
            ) -> dict[str, list[dict[str, Any]]]:
    """One matcher group per event, no matcher (every tool, every source)."""
    return {event: [{"hooks": [{"type": "command", "command": hook_command(folder, event),
                                "timeout": timeout}]}] for event in events}


def install_hooks(agent: str, ctx: RunContext, launch: Launch, folder: Path) -> None:
    """Install the recording hook of every event of ``agent`` in its user settings under
    the run's HOME."""
    events = EVENTS[agent]
    if agent == "claude-code":
        merge_hooks(ctx.home / ".claude" / "settings.json",
                    _groups(folder, events, HOOK_TIMEOUT_S))
    elif agent == "gemini-cli":  # Gemini's hook timeout is in milliseconds
        merge_hooks(ctx.home / ".gemini" / "settings.json",
                    _groups(folder, events, HOOK_TIMEOUT_S * 1000))
    elif agent == "qwen-code":
        merge_hooks(ctx.home / ".qwen" / "settings.json",
                    _groups(folder, events, HOOK_TIMEOUT_S))
    elif agent == "codex":
        codex_home = Path(launch.env.get("CODEX_HOME", ctx.home / ".codex"))
        merge_hooks(codex_home / "hooks.json", _groups(folder, events, HOOK_TIMEOUT_S))
        if "--dangerously-bypass-hook-trust" not in launch.argv:
            launch.argv.insert(launch.argv.index("exec") + 1, "--dangerously-bypass-hook-trust")
    elif agent == "openhands":  # the CLI loads it (HookConfig.load) when no project file is
        merge_hooks(ctx.home / ".openhands" / "hooks.json",
                    _groups(folder, events, HOOK_TIMEOUT_S))
    elif agent == "cline":
        hooks = Path(launch.env.get("CLINE_DIR", ctx.home / ".cline")) / "hooks"
        hooks.mkdir(parents=True, exist_ok=True)
        for event in events:
            script = hooks / f"{event}.sh"
            script.write_text(f"#!/bin/bash\nexec {hook_command(folder, event)}\n")
            script.chmod(0o755)
    else:
        raise KeyError(f"{agent}: no command hooks known")


def _settled(folder: Path) -> list[Path]:
    """The payload files of ``folder`` once none has appeared or grown for ``SETTLE_S``."""
    def state() -> list[tuple[str, int]]:
        return sorted((p.name, p.stat().st_size) for p in folder.glob("*.json"))

    last, since = state(), time.monotonic()
    deadline = since + 10 * SETTLE_S
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = state()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= SETTLE_S:
            break
    return sorted(folder.glob("*.json"), key=lambda p: int(p.name.split("-", 1)[0]))


def _pretty(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"
    except ValueError:
        return text  # not JSON: kept as the agent sent it


@dataclass(slots=True)
class Capture:
    """What one capture run produced."""

    agent: str
    scenario: str
    exit_code: int | None = None
    timed_out: bool = False
    seconds: float = 0.0
    events: list[str] = field(default_factory=list)
    target: Path | None = None
    skipped: str | None = None


def capture(agent: Agent, scenario: Scenario, out: Path = FIXTURES, *,
            keep: Path | None = None) -> Capture:
    """Run ``scenario`` through ``agent`` with the recording hooks and write its fixture."""
    if agent.name not in EVENTS:
        return Capture(agent.name, scenario.name, skipped="no command hooks")
    try:
        agent.install()
    except AgentUnavailableError as exc:
        return Capture(agent.name, scenario.name, skipped=str(exc))

    def prepare(ctx: RunContext, launch: Launch) -> None:
        folder = ctx.root / "capture"
        folder.mkdir()
        launch.env["FAILCODE_CAPTURE"] = str(folder)
        install_hooks(agent.name, ctx, launch, folder)

    result, ctx = run(agent, scenario, keep=keep, prepare=prepare)
    if ctx is None:
        return Capture(agent.name, scenario.name, skipped=result.skipped)
    try:
        files = _settled(ctx.root / "capture")
        texts = run_normalizer(ctx, agent.install_dir).texts(
            [p.read_text(errors="surrogateescape") for p in files])
        target = out / agent.name / scenario.name
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for path, text in zip(files, texts, strict=True):
            (target / path.name).write_text(_pretty(text), errors="surrogateescape")
        events = [p.name.split("-", 1)[1].removesuffix(".json") for p in files]
        meta = {
            "agent": agent.name, "version": agent.version, "scenario": scenario.name,
            "exit_code": result.exit_code, "timed_out": result.timed_out,
            "prompt": PROMPT, "hooks": list(EVENTS[agent.name]),
            "payloads": [p.name for p in files], "events": events,
            "requests": [{k: v for k, v in entry.items() if k != "text"}
                         for entry in result.log],
        }
        (target / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
        logs = cache_dir() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        (logs / f"live-{agent.name}-{scenario.name}.log").write_text(
            f"== {scenario.name}: exit {result.exit_code} timed_out={result.timed_out}\n"
            f"-- stdout\n{result.stdout[-20000:]}\n-- stderr\n{result.stderr[-20000:]}\n")
    finally:
        if keep is None:
            shutil.rmtree(ctx.root, ignore_errors=True)
    return Capture(agent.name, scenario.name, result.exit_code, result.timed_out,
                   result.seconds, events, target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.live.capture", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", "-a", action="append", choices=sorted(EVENTS))
    parser.add_argument("--scenario", "-s", action="append")
    parser.add_argument("--out", type=Path, default=FIXTURES)
    parser.add_argument("--keep", type=Path, help="keep each run's folder under this one")
    args = parser.parse_args(argv)
    table = agents()
    scenarios = {s.name: s for s in load_all()}
    unknown = [s for s in args.scenario or () if s not in scenarios]
    if unknown:
        parser.error(f"unknown scenario {', '.join(unknown)}")
    for name in args.agent or list(EVENTS):
        for scenario in args.scenario or SCENARIOS:
            done = capture(table[name], scenarios[scenario], args.out, keep=args.keep)
            if done.skipped is not None:
                print(f"{name} {scenario}: skipped: {done.skipped}", flush=True)
            else:
                print(f"{name} {scenario}: exit {done.exit_code}"
                      f"{' (timed out)' if done.timed_out else ''} in {done.seconds:.0f}s, "
                      f"{len(done.events)} payloads: {' '.join(done.events) or '-'}",
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
