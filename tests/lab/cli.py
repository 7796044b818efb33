"""``python -m tests.lab``: install the agents, run scenarios, change a pin, score, report.

::

    python -m tests.lab install [AGENT...]          # the pinned agents (and oracles), cached
    python -m tests.lab run [-a AGENT] [-s SCENARIO] [--out DIR] [--jobs N] [--keep DIR]
    python -m tests.lab pin AGENT VERSION           # new pin, install, regenerate its fixtures
    python -m tests.lab score [--fixtures DIR]      # triage every fixture, shares per agent
    python -m tests.lab report                      # what each agent's log keeps (Markdown)

``run`` writes into ``tests/lab/fixtures/`` unless ``--out`` says otherwise, and prints one
line per run; an agent that cannot be installed or driven is skipped with the reason (and
``run`` exits 1 when ``CI=true``).
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

from tests.lab.agents import AgentUnavailableError, agents, set_pin
from tests.lab.runner import FIXTURES, run_and_save
from tests.lab.scenario import load_all


def _select(names: list[str] | None, known: list[str], what: str) -> list[str]:
    if not names:
        return known
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown {what} {', '.join(unknown)}; known: {', '.join(known)}")
    return names


INSTALL_JOBS: Final = 4
"""Installs at once: npm's are mostly waiting on the disk, pip's on one core each."""


def cmd_install(names: list[str]) -> int:
    """Install the agents named (all, and the oracles, with none named), a few at once; one
    line each, in the table's order. An oracle that is an agent's install (``lab_agent``)
    waits for that agent's; every other oracle starts beside the agents, so the slowest
    install (OpenHands', minutes) does not hold the oracles back."""
    table = agents()
    items: list[Any] = [table[name] for name in _select(names, list(table), "agent")]
    if not names:  # then the oracles' packages (tests/lab/oracles.toml; some are an agent's)
        from tests.lab.oracles import oracles

        items += oracles().values()

    def install(item: Any) -> tuple[str, bool]:
        oracle = not hasattr(item, "executable")
        label = f"oracle {item.name} {item.version}" if oracle else f"{item.name} {item.version}"
        try:
            item.install()
        except AgentUnavailableError as exc:
            return f"{label}: cannot install: {exc}", False
        return f"{label}: {item.python if oracle else item.executable}", True

    failed = 0
    with ThreadPoolExecutor(max_workers=INSTALL_JOBS) as pool:
        started = {id(item): pool.submit(install, item) for item in items
                   if getattr(item, "lab_agent", None) is None}
        for item in items:
            if id(item) not in started:  # an agent's install: after that agent's, never beside
                agent = table[item.lab_agent]
                if id(agent) in started:
                    started[id(agent)].result()
                started[id(item)] = pool.submit(install, item)
            line, done = started[id(item)].result()
            failed += not done
            print(line, file=sys.stdout if done else sys.stderr, flush=True)
    return 1 if failed and os.environ.get("CI") == "true" else 0


def cmd_run(agent_names: list[str] | None, scenario_names: list[str] | None, out: Path,
            jobs: int, keep: Path | None) -> int:
    table = agents()
    scenarios = {s.name: s for s in load_all()}
    chosen = _select(agent_names, list(table), "agent")
    wanted = _select(scenario_names, list(scenarios), "scenario")
    unavailable = []
    for name in chosen:
        try:
            table[name].install()
        except AgentUnavailableError as exc:
            unavailable.append(name)
            print(f"{name}: skipped, cannot install: {exc}", file=sys.stderr)
    pairs = [(table[a], scenarios[s]) for a in chosen if a not in unavailable for s in wanted]

    def one(pair: tuple) -> str:  # type: ignore[type-arg]
        agent, scenario = pair
        result, target = run_and_save(agent, scenario, out, keep=keep)
        if result.skipped:
            return f"{agent.name:15} {scenario.name:28} skipped: {result.skipped}"
        steps = sum(1 for r in result.log if r.get("calls"))
        return (f"{agent.name:15} {scenario.name:28} exit={result.exit_code} "
                f"{'TIMEOUT ' if result.timed_out else ''}{result.seconds:5.1f}s "
                f"tool-calls={steps} files={len(result.files)} -> {target}")

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for line in pool.map(one, pairs):
            print(line, flush=True)
    return 1 if unavailable and os.environ.get("CI") == "true" else 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.lab", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    install = sub.add_parser("install", help="install the pinned agents into the cache")
    install.add_argument("agents", nargs="*")
    runp = sub.add_parser("run", help="run scenarios through agents, write fixtures")
    runp.add_argument("-a", "--agent", action="append")
    runp.add_argument("-s", "--scenario", action="append")
    runp.add_argument("--out", type=Path, default=FIXTURES)
    runp.add_argument("--jobs", type=int, default=2)
    runp.add_argument("--keep", type=Path, default=None,
                      help="leave each run's temporary folder under this folder")
    pin = sub.add_parser("pin", help="pin an agent to a version and regenerate its fixtures")
    pin.add_argument("agent")
    pin.add_argument("version")
    score = sub.add_parser("score", help="triage every fixture against the ground truth")
    score.add_argument("--fixtures", type=Path, default=FIXTURES)
    sub.add_parser("report", help="what each agent's log keeps, as a Markdown table")
    args = parser.parse_args(argv)
    if args.command == "install":
        raise SystemExit(cmd_install(args.agents))
    if args.command == "run":
        raise SystemExit(cmd_run(args.agent, args.scenario, args.out, args.jobs, args.keep))
    if args.command == "pin":
        if args.agent not in agents():
            raise SystemExit(f"unknown agent {args.agent}; known: {', '.join(agents())}")
        set_pin(args.agent, args.version)
        status = cmd_run([args.agent], None, FIXTURES, 2, None)
        print("then: python -m tests.lab report (the table in docs/triage.md) and "
              "python -m tests.lab score (tests/lab/floors.toml)")
        raise SystemExit(status)
    if args.command == "score":
        from tests.lab.score import print_scores, score_fixtures

        print_scores(score_fixtures(args.fixtures))
        raise SystemExit(0)
    if args.command == "report":
        from tests.lab.report import records_table

        print(records_table(FIXTURES))
        raise SystemExit(0)
