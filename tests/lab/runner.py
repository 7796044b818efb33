"""Run a scenario through a real agent against the stub, and keep what the agent wrote.

One run: a temporary root with ``home/``, ``tmp/`` and ``project/`` (the scenario's files and
setup script), a stub server on a free port of 127.0.0.1 playing the scenario, every proxy
variable pointed at a closed port of 127.0.0.1 (so any other connection fails at once), the
agent started in ``project/`` with a clean environment, bounded by its timeout (the whole
process group is killed then). The session files the agent wrote are normalized
(:mod:`tests.lab.normalize`) into ``<out>/<agent>/<scenario>/session/``, at their paths under
HOME without leading dots (``.claude/projects/...`` is ``claude/projects/...``: triage skips
hidden names below the folder it is given), beside ``meta.json``: the agent
and version, the scenario, the agent's exit status, whether it timed out, and what the stub
answered to each request (the ground truth of faults and retries). The agent's stdout and
stderr go to ``<cache>/logs/<agent>-<scenario>.log``, outside the repository (they name the
machine); an agent whose stdout is a log format of its own (Claude Code's ``-p
--output-format stream-json``) also keeps it, normalized like the session files, beside
``meta.json`` (``meta.json``'s ``stdout`` names it); an agent that keeps its sessions in a
SQLite database (OpenCode) also keeps a normalized copy of it there (``meta.json``'s
``databases``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tests.lab.agents import PROMPT, REPO, AgentUnavailableError, RunContext, cache_dir
from tests.lab.databases import keep_database
from tests.lab.normalize import Normalizer
from tests.lab.stub import serve

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from tests.lab.agents import Agent, Launch
    from tests.lab.scenario import Scenario

FIXTURES: Final = Path(__file__).parent / "fixtures"


@dataclass(slots=True)
class RunResult:
    """What one run produced."""

    agent: str
    version: str
    scenario: str
    exit_code: int | None
    timed_out: bool
    seconds: float
    files: list[Path]
    log: list[dict[str, Any]]
    skipped: str | None = None
    stdout: str = ""
    stderr: str = ""


def closed_port() -> int:
    """A port of 127.0.0.1 nobody listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def prepare_project(scenario: Scenario, project: Path) -> None:
    """Write the scenario's files into ``project`` and run its setup script there."""
    project.mkdir(parents=True, exist_ok=True)
    for relative, text in scenario.files.items():
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if text.startswith("#!"):
            path.chmod(0o755)
    if scenario.setup:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(project.parent),
               "GIT_AUTHOR_NAME": "lab", "GIT_AUTHOR_EMAIL": "lab@example.invalid",
               "GIT_COMMITTER_NAME": "lab", "GIT_COMMITTER_EMAIL": "lab@example.invalid",
               "GIT_CONFIG_NOSYSTEM": "1", "LANG": "C.UTF-8"}
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", scenario.setup], cwd=project,
                              env=env, capture_output=True, text=True, check=False, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{scenario.name}: setup failed ({done.returncode}): "
                               f"{done.stderr.strip()[-500:]}")


def _git_identity(home: Path) -> None:
    (home / ".gitconfig").write_text(
        "[user]\n\tname = lab\n\temail = lab@example.invalid\n[init]\n\tdefaultBranch = main\n"
        "[advice]\n\tdetachedHead = false\n")


def run(agent: Agent, scenario: Scenario, *, keep: Path | None = None,
        prepare: Callable[[RunContext, Launch], None] | None = None, heed: bool = False,
        obey: bool = False) -> tuple[RunResult, RunContext | None]:
    """Run ``scenario`` through ``agent`` (a skipped run has no context); ``keep`` puts the
    temporary root under that folder; ``prepare`` is called once the agent's own settings are
    written, just before it starts (to install hooks in its HOME or project, write an
    instruction file, or change its environment); ``heed`` makes the scripted model stop when
    told, ``obey`` follow failcode's instructions it reads (:func:`serve`)."""
    reason = agent.supports(scenario)
    if reason is not None:
        return RunResult(agent.name, agent.version, scenario.name, None, False, 0.0, [], [],
                         skipped=reason), None
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="failcode-lab-", dir=keep))
    home, tmp, project = root / "home", root / "tmp", root / "project"
    for folder in (home, tmp):
        folder.mkdir()
    _git_identity(home)
    prepare_project(scenario, project)
    with serve(scenario, project, heed=heed, obey=obey) as server:
        ctx = RunContext(root=root, home=home, tmp=tmp, project=project, url=server.url,
                         scenario=scenario, proxy=f"http://127.0.0.1:{closed_port()}")
        launch = agent.launch(ctx)
        if prepare is not None:
            prepare(ctx, launch)
        started = time.monotonic()
        process = subprocess.Popen(
            launch.argv, cwd=project, env=launch.env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, text=True)
        timed_out = False
        try:
            stdout, stderr = process.communicate(launch.stdin or "", timeout=agent.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
        finally:
            with contextlib.suppress(ProcessLookupError):  # helpers it left behind
                os.killpg(process.pid, signal.SIGKILL)
        seconds = time.monotonic() - started
        log = list(server.model.log)
    files = agent.sessions(ctx)
    return RunResult(agent.name, agent.version, scenario.name, process.returncode, timed_out,
                     seconds, files, log, stdout=stdout, stderr=stderr), ctx


def run_normalizer(ctx: RunContext, agent_dir: Path) -> Normalizer:
    """What a run's kept files are normalized with: its folders, this Python, the agent's
    install and the user's home as ``/lab/...`` paths, the stub's port as a fixed one."""
    python = Path(sys.executable).resolve().parent
    return Normalizer(paths={
        str(agent_dir): "/lab/agent", str(REPO): "/lab/repo",
        str(ctx.project): "/lab/project", str(ctx.home): "/lab/home", str(ctx.tmp): "/lab/tmp",
        str(ctx.root): "/lab", str(Path(sys.prefix)): "/lab/python",
        str(python.parent): "/lab/python", str(Path.home()): "/lab/user",
        os.path.realpath(ctx.root): "/lab",
    }, port=int(ctx.url.rsplit(":", 1)[1]))


def save(result: RunResult, ctx: RunContext, out: Path, agent_dir: Path,
         stdout_file: str | None = None, *, databases: Sequence[Path] = ()) -> Path:
    """Normalize the run's session files into ``out/<agent>/<scenario>/`` with ``meta.json``;
    ``stdout_file`` names the file beside them that keeps the agent's stdout (normalized with
    the session files), for the agents whose stdout is a log format of its own; each of
    ``databases`` (an agent's SQLite session database) is kept beside them under its own name
    (:mod:`tests.lab.databases`; ``meta.json``'s ``databases`` names them)."""
    target = out / result.agent / result.scenario
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    normalizer = run_normalizer(ctx, agent_dir)
    sources: list[tuple[str, Path]] = []
    for found in result.files:
        if found.is_dir():
            sources += [(str(p.relative_to(ctx.home)), p) for p in sorted(found.rglob("*"))
                        if p.is_file() and p.stat().st_size > 0]  # not empty lock files
        else:
            sources.append((str(found.relative_to(ctx.home)), found))
    raw = [path.read_text(errors="surrogateescape") for _, path in sources]
    if stdout_file is not None:
        raw.append(result.stdout)
    texts = normalizer.texts(raw)
    if stdout_file is not None:
        (target / stdout_file).write_text(texts.pop(), errors="surrogateescape")
    written = []
    for (relative, _), text in zip(sources, texts, strict=True):
        name = "/".join(part.lstrip(".") or part for part in
                        normalizer.name(relative).split("/"))
        path = target / "session" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, errors="surrogateescape")
        written.append(str(path.relative_to(target)))
    for database in databases:
        keep_database(database, target / database.name, normalizer)
    meta = {
        "agent": result.agent, "version": result.version, "scenario": result.scenario,
        "exit_code": result.exit_code, "timed_out": result.timed_out,
        "files": written, "prompt": PROMPT,
        **({"stdout": stdout_file} if stdout_file is not None else {}),
        **({"databases": [d.name for d in databases]} if databases else {}),
        "requests": [{k: v for k, v in entry.items() if k != "text"} for entry in result.log],
    }
    (target / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return target


def run_and_save(agent: Agent, scenario: Scenario, out: Path, *,
                 keep: Path | None = None) -> tuple[RunResult, Path | None]:
    """One run, saved; a skipped run saves nothing."""
    try:
        agent.install()
        result, ctx = run(agent, scenario, keep=keep)
    except AgentUnavailableError as exc:
        return RunResult(agent.name, agent.version, scenario.name, None, False, 0.0, [], [],
                         skipped=str(exc)), None
    if ctx is None:
        return result, None
    target = save(result, ctx, out, agent.install_dir, agent.stdout_file(),
                  databases=agent.databases(ctx))
    logs = cache_dir() / "logs"  # the agent's own output, for a person debugging a run
    logs.mkdir(parents=True, exist_ok=True)
    (logs / f"{result.agent}-{result.scenario}.log").write_text(
        f"== {result.scenario}: exit {result.exit_code} timed_out={result.timed_out}\n"
        f"-- stdout\n{result.stdout[-20000:]}\n-- stderr\n{result.stderr[-20000:]}\n")
    if keep is None:
        shutil.rmtree(ctx.root, ignore_errors=True)
    return result, target
