"""The team path in the lab: what a real `failcode serve` holds after a real agent's run, scored
against the scenario's ground truth beside triage of the same run's log.

``python -m tests.otlp.team [--agent A] [--scenario S] [--no-hooks]`` starts ``failcode serve``
(SQLite, a project ``web`` and its keys, as docs/team.md sets one up) on 127.0.0.1; for each
agent and scenario, runs the agent with its OpenTelemetry export pointed at the service as
docs/team.md says (:data:`tests.otlp.capture.CONFIGURE`, with the project's ingest key) and,
unless ``--no-hooks``, failcode's hooks installed with ``FAILCODE_URL`` and ``FAILCODE_KEY``
(``failcode hooks install AGENT`` in the run's HOME). Once the hooks' outbox is empty and the
project's store has stopped growing, the project's events for the run's session are rebuilt
into a triage document (:func:`failcode.triage._record.result_from_store`) and scored with the
lab's own checks (:func:`tests.lab.score.check_fixture`), beside the same checks on triage of
the session log the agent wrote. Each run gets a fresh project, so one run's findings never
score another's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from failcode.live._agents import AGENTS
from failcode.service._findings import session_end
from failcode.service._otlp import parse_otlp
from failcode.store import open_store
from failcode.triage._record import result_from_store
from tests.lab.agents import agents
from tests.lab.runner import run, save
from tests.lab.scenario import SCENARIOS, load
from tests.lab.score import Fixture, check_fixture, seen_of
from tests.otlp import capture
from tests.service.conftest import failcode, make_served

if TYPE_CHECKING:
    from failcode.events import Event
    from tests.lab.agents import Launch, RunContext
    from tests.lab.score import Check
    from tests.service.conftest import Served

TEAM_AGENTS: Final = ("claude-code", "codex", "gemini-cli")
"""The agents docs/team.md sets up."""
TEAM_SCENARIOS: Final = ("pytest-failure", "missing-module", "missing-program",
                         "loop-same-failure", "provider-retried", "provider-fatal-500",
                         "mixed-session", "permission-denied")
FIXTURES: Final = Path(__file__).parent / "fixtures"
LIVE_FIXTURES: Final = Path(__file__).parents[1] / "live" / "fixtures"
QUIET_S: Final = 2.0
BOUND_S: Final = 60.0


@dataclass(slots=True)
class TeamRun:
    """One run: the checks the service's events pass, and the same checks on triage of the
    log."""

    agent: str
    scenario: str
    service: list[Check]
    triage: list[Check]
    events: int

    @staticmethod
    def passed(checks: list[Check]) -> tuple[int, int]:
        counted = [c for c in checks if c.observable]
        return sum(c.passed for c in counted), len(counted)


def _project(served: Served, name: str) -> tuple[str, str]:
    """A fresh project of ``served`` and its ingest key; the project's own store URL."""
    failcode("project", "create", name, store=served.store)
    key = failcode("token", "create", "--project", name, "--scope", "ingest",
                   store=served.store).splitlines()[-1]
    control = served.store.removeprefix("sqlite:///")
    path = Path(control)
    return key, "sqlite:///" + str(path.with_name(path.stem + ".projects") / f"{name}.db")


def export_records(agent: str) -> dict[str, str]:
    """What reaches the service of the agent's runs, in the lab's record columns (the ones
    the service's checks depend on), from the committed recordings of its export
    (``tests/otlp/fixtures``) and of its hooks (``tests/live/fixtures``):

    - ``retried 429``, ``retried 500``: ``lost`` when no request of its export's
      ``provider-retried`` run maps to a provider failure (the hooks see no provider call);
    - ``fatal end``: ``lost`` when neither its ``provider-fatal-500`` export nor the hook calls
      of that run say the session ended (a ``session.ended`` the hooks send at an end event).

    Checks of what the channel loses are not counted, as a log that loses something does not
    count against triage."""
    records = {}
    events = _export(agent, "provider-retried")
    if events is not None:
        kept = any(e.failure is not None and e.failure.code.startswith("FC-PROV-")
                   for e in events)
        records["retried 429"] = records["retried 500"] = "kept" if kept else "lost"
    events = _export(agent, "provider-fatal-500")
    hooks = LIVE_FIXTURES / agent / "provider-fatal-500"
    if events is not None or hooks.is_dir():
        said = any(session_end(e) is not None for e in events or ())
        said |= any(AGENTS[agent].read(path.stem.split("-", 1)[1],
                                       json.loads(path.read_text())).phase == "end"
                    for path in sorted(hooks.glob("[0-9]*-*.json")))
        records["fatal end"] = "kept" if said else "lost"
    return records


def _export(agent: str, scenario: str) -> list[Event] | None:
    """The events the service maps a recorded run's export to (None: no such recording)."""
    run = FIXTURES / agent / scenario
    if not run.is_dir():
        return None
    meta = json.loads((run / "meta.json").read_text())
    events: list[Event] = []
    for entry in meta["otlp"]:
        signal = entry["path"].rsplit("/", 1)[1]
        if entry["status"] == 200 and signal in ("logs", "traces"):
            events += parse_otlp(signal, (run / entry["file"]).read_bytes(),
                                 content_type="application/json").events
    return events


def _count(url: str) -> int:
    path = Path(url.removeprefix("sqlite:///"))
    if not path.exists():
        return 0
    with open_store(url, read_only=True) as store:
        return int(store.fetch("SELECT COUNT(*) FROM events")[0][0])


def _settled(url: str, outbox: Path) -> int:
    """The store's event count once the hooks' outbox is empty and nothing arrived for
    ``QUIET_S`` (bounded by ``BOUND_S``)."""
    deadline = time.monotonic() + BOUND_S
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        pending = outbox.is_dir() and any(outbox.iterdir())
        count = _count(url)
        if count != last or pending:
            last, since = count, time.monotonic()
        elif time.monotonic() - since >= QUIET_S:
            break
        time.sleep(0.2)
    return last


def team_run(agent_name: str, scenario_name: str, served: Served, work: Path, *,
             hooks: bool = True) -> TeamRun:
    """One run through ``served`` (see the module's description)."""
    agent = agents()[agent_name]
    agent.install()
    scenario = load(SCENARIOS / f"{scenario_name}.toml")
    project = f"{agent_name}-{scenario_name}".replace("_", "-")[:60]
    key, project_url = _project(served, project)
    state: dict[str, Path] = {}

    def prepare(ctx: RunContext, launch: Launch) -> None:
        capture.CONFIGURE[agent_name](ctx, launch, served.url, key=key)
        state["dir"] = ctx.root / "failcode-state"
        launch.env |= {"FAILCODE_STATE_DIR": str(state["dir"]), "FAILCODE_URL": served.url,
                       "FAILCODE_KEY": key}
        if hooks:
            env = {**os.environ, "HOME": str(ctx.home),
                   **{k: launch.env[k] for k in ("CODEX_HOME",) if k in launch.env}}
            subprocess.run([sys.executable, "-m", "failcode", "hooks", "install", agent_name],
                           cwd=ctx.project, env=env, check=True, capture_output=True,
                           timeout=60)
            if agent_name == "codex":
                launch.argv.insert(launch.argv.index("exec") + 1,
                                   "--dangerously-bypass-hook-trust")

    result, ctx = run(agent, scenario, keep=work, prepare=prepare)
    if ctx is None:
        raise RuntimeError(f"{agent_name} does not run {scenario_name}: {result.skipped}")
    events = _settled(project_url, state["dir"] / "outbox")
    target = save(result, ctx, work / "fixtures", agent.install_dir, agent.stdout_file(),
                  databases=agent.databases(ctx))
    fixture = Fixture(target, _meta(target))
    if Path(project_url.removeprefix("sqlite:///")).exists():
        with open_store(project_url, read_only=True) as store:
            document = result_from_store(store).to_dict()
    else:  # nothing was sent: the service holds no event of the run
        document = {"sessions": []}
    service = check_fixture(fixture, scenario, seen_of(document), export_records(agent_name))
    triaged = check_fixture(fixture, scenario)
    shutil.rmtree(ctx.root, ignore_errors=True)
    return TeamRun(agent_name, scenario_name, service, triaged, events)


def _meta(target: Path) -> dict[str, Any]:
    return dict(json.loads((target / "meta.json").read_text()))


@contextlib.contextmanager
def serving(work: Path) -> Any:
    """``failcode serve`` on a fresh SQLite store in ``work``."""
    served = make_served("sqlite:///" + str(work / "control.db"), work)
    served.start()
    try:
        yield served
    finally:
        served.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.otlp.team",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", action="append", choices=TEAM_AGENTS)
    parser.add_argument("--scenario", action="append")
    parser.add_argument("--no-hooks", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="failcode-team-") as folder:
        work = Path(folder)
        totals: dict[str, list[int]] = {}
        with serving(work) as served:
            for agent in args.agent or TEAM_AGENTS:
                for scenario in args.scenario or TEAM_SCENARIOS:
                    try:
                        done = team_run(agent, scenario, served, work, hooks=not args.no_hooks)
                    except RuntimeError as exc:
                        print(f"{agent:12} {scenario:20} skipped: {exc}", flush=True)
                        continue
                    service, triaged = TeamRun.passed(done.service), TeamRun.passed(done.triage)
                    for name, (ok, total) in (("service", service), ("triage", triaged)):
                        totals.setdefault(f"{agent} {name}", [0, 0])
                        totals[f"{agent} {name}"][0] += ok
                        totals[f"{agent} {name}"][1] += total
                    missed = [f"{c.name}@{c.step}" for c in done.service
                              if c.observable and not c.passed]
                    print(f"{agent:12} {scenario:20} service {service[0]}/{service[1]} "
                          f"triage {triaged[0]}/{triaged[1]} events {done.events} "
                          f"missed: {', '.join(missed[:8]) or '-'}", flush=True)
        for name, (ok, total) in totals.items():
            print(f"{name:24} {ok}/{total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
