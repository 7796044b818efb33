"""Running a node script with an agent's own JavaScript: the lab's pinned npm installs."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from failcode import Cancelled
from failcode.triage._events import (
    Command,
    Recorded,
    RecordedOutcome,
    Rejected,
    SessionEnd,
    SessionStart,
)
from failcode.triage.readers import HEAD_BYTES, READERS, detect
from tests._needs import missing, need_tool
from tests.lab.agents import Agent, AgentUnavailableError, agents, cache_dir

if TYPE_CHECKING:
    from failcode.triage._events import Event

HERE: Final = Path(__file__).resolve().parent

QWEN_CODE: Final = Agent(name="qwen-code", package="@qwen-code/qwen-code", installer="npm",
                         binary="qwen", version="0.24.4")
"""Qwen Code's pin: not a lab agent (the lab does not drive it), only its session loading
code, installed into the lab cache the same way (``<cache>/qwen-code-<version>``)."""


def gemini_bundle() -> Path:
    """The bundle folder of the lab's Gemini CLI (``python -m tests.lab install``); a missing
    install fails under CI=true, else skips."""
    agent = agents()["gemini-cli"]
    if not agent.installed():
        missing(f"the lab's gemini-cli {agent.version} is not installed "
                "(python -m tests.lab install)")
    return agent.install_dir / "node_modules" / "@google" / "gemini-cli" / "bundle"


def qwen_package() -> Path:
    """Qwen Code's package folder, installed into the lab cache when it is not there."""
    try:
        QWEN_CODE.install()
    except AgentUnavailableError as exc:
        missing(f"Qwen Code {QWEN_CODE.version} cannot be installed: {exc}")
    return QWEN_CODE.install_dir / "node_modules" / "@qwen-code" / "qwen-code"


COPILOT_CLI: Final = ("@github/copilot", "1.0.60")
"""Copilot CLI's pin for its strings: the corpus's version, the last whose npm package holds
its JavaScript (``app.js``); later ones ship a native binary."""


def npm_packed(package: str, version: str) -> Path:
    """``package@version``'s files (``npm pack``, unpacked into the lab cache; nothing is
    installed or run), fetched when they are not there."""
    target = cache_dir() / f"{package.rsplit('/', 1)[-1]}-pack-{version}"
    if (target / ".complete").exists():
        return target / "package"
    npm = shutil.which("npm")
    if npm is None:
        missing("npm is not installed")
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    done = subprocess.run([npm, "pack", "--silent", f"{package}@{version}"], cwd=target,
                          capture_output=True, text=True, check=False, timeout=900)
    if done.returncode != 0:
        missing(f"npm pack {package}@{version} failed: {done.stderr.strip()[-300:]}")
    (tarball,) = target.glob("*.tgz")
    with tarfile.open(tarball) as archive:
        archive.extractall(target, filter="data")
    tarball.unlink()
    (target / ".complete").touch()
    return target / "package"


def run_node(script: str, *args: Path) -> dict[str, Any]:
    """What ``script`` (a file beside this one, run with node) prints for ``args``: one JSON
    object keyed by each file as given."""
    node = need_tool("node")
    done = subprocess.run([node, str(HERE / script), *map(str, args)], capture_output=True,
                          text=True, check=False, timeout=900)
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@dataclass
class Read:
    """One session as failcode's reader yields it: its name, step count and events by step."""

    name: str | None = None
    steps: int = 0
    by_step: dict[int, list[Event]] = field(default_factory=dict)


def read(path: Path, format_name: str) -> list[Read]:
    """The sessions failcode's reader ``format_name`` yields for ``path``, in order."""
    reader = next(r for r in READERS if r.name == format_name)
    out: list[Read] = []
    with path.open("rb") as stream:
        for event in reader.read(stream, str(path)):  # type: ignore[arg-type]
            if isinstance(event, SessionStart):
                out.append(Read(event.name))
            elif isinstance(event, SessionEnd):
                out[-1].steps = event.steps
            elif (step := getattr(event, "step", None)) is not None:
                out[-1].by_step.setdefault(step, []).append(event)
    return out


SHELL: Final = ("run_shell_command", "shell")
"""The shell tool's names (Gemini CLI, Qwen Code)."""


def recorded_exit(step: dict[str, Any]) -> int | None:
    """The exit status the tool's text records: its ``Exit Code``, else 128 + its signal."""
    if step["exit"] is not None:
        return int(step["exit"])
    return 128 + int(step["signal"]) if step["signal"] else None


def is_cancelled(event: Event) -> bool:
    return isinstance(event, RecordedOutcome) and isinstance(event.outcome, Cancelled)


def is_failure(event: Event) -> bool:
    return (isinstance(event, Recorded)
            or (isinstance(event, Command) and event.exit_code not in (0, None)))


def step_mismatches(number: int, step: dict[str, Any], events: list[Event]) -> list[str]:
    """How failcode's events for one step differ from what the agent's code loaded."""
    where = f"step {number} ({step['name']}, {step['status']})"
    if step["status"] is None:  # no result: it never ran
        return [] if not events else [f"{where}: events for a call that never ran"]
    if step["status"] == "cancelled":
        return [] if any(map(is_cancelled, events)) else [f"{where}: not a cancelled outcome"]
    if step["name"] not in SHELL:
        if step["status"] == "error" and not any(isinstance(e, Rejected) for e in events):
            return [f"{where}: not a rejected action"]
        if step["status"] == "success" and any(map(is_failure, events)):
            return [f"{where}: a failure for a call that succeeded"]
        return []
    commands = [e for e in events if isinstance(e, Command)]
    expected = recorded_exit(step)
    if not commands:
        refused = step["status"] == "error" and expected is None
        if refused and any(isinstance(e, Rejected) for e in events):
            return []  # refused before it ran: no command, no exit status
        if any(map(is_cancelled, events)):
            return []  # the text says the person stopped it
        return [f"{where}: no command"]
    command = commands[0]
    out = []
    if command.command != step["command"]:
        out.append(f"{where}: command {command.command!r}, the agent {step['command']!r}")
    if expected is not None and command.exit_code != expected:
        out.append(f"{where}: exit {command.exit_code}, recorded {expected}")
    if expected is None and step["status"] == "success" and command.exit_code not in (0, None):
        out.append(f"{where}: exit {command.exit_code} where none is recorded")
    return out


def mismatches(path: Path, loaded: dict[str, Any] | None, format_name: str) -> list[str]:
    """How failcode's reading of ``path`` differs from what the agent's own code loaded
    (``{sessionId, steps}`` as the node scripts print it), one line per difference."""
    with path.open("rb") as stream:
        reader = detect(stream.read(HEAD_BYTES))
    if reader is None or reader.name != format_name:
        return [f"{path}: detected as {reader and reader.name}"]
    if loaded is None:
        return [f"{path}: the agent's code loads nothing from it"]
    sessions = read(path, format_name)
    if len(sessions) != 1:
        return [f"{path}: {len(sessions)} sessions"]
    ours, out = sessions[0], []
    if ours.name != loaded["sessionId"]:
        out.append(f"{path}: session {ours.name!r}, the agent {loaded['sessionId']!r}")
    if ours.steps != len(loaded["steps"]):
        out.append(f"{path}: {ours.steps} steps, the agent {len(loaded['steps'])}")
    for number, step in enumerate(loaded["steps"]):
        out += [f"{path}: {m}" for m in step_mismatches(number, step, ours.by_step.get(number, []))]
    return out
