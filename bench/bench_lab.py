"""The session lab: what one live run of a scenario costs per agent, beside its floor.

For each pinned agent (installed with ``python -m tests.lab install``), the wall time of one run
of a scenario through the agent against the scripted model (agent start, every request, every
command, the session file normalized), beside the floor measured in the same run: the same
commands replayed with no agent (``tests.lab.replay``). The ratio is what driving the real agent
adds; the sum over agents is what the live subset adds to a CI run. Then the triage of every
committed fixture (``failcode.triage`` on each ``session/`` folder), beside reading the same
files' bytes.

    python bench/bench_lab.py [--scenario mixed-session] [--rounds 2] [--agent NAME ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))
from tests.lab.agents import agents
from tests.lab.replay import replay
from tests.lab.runner import FIXTURES, run_and_save
from tests.lab.scenario import SCENARIOS, load
from tests.lab.score import fixtures

from failcode.triage import triage


def _median_wall(action: object, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        action()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenario", default="mixed-session")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--agent", action="append")
    args = parser.parse_args()
    scenario = load(SCENARIOS / f"{args.scenario}.toml")
    floor = _median_wall(lambda: replay(scenario), args.rounds)
    print(f"scenario {scenario.name}: commands alone (replay) {floor:.2f} s")
    print(f"{'agent':16} {'version':9} {'run s':>7} {'ratio':>7}")
    total = 0.0
    for name, agent in agents().items():
        if args.agent and name not in args.agent:
            continue
        if not agent.installed():
            print(f"{name:16} {agent.version:9} not installed (python -m tests.lab install)")
            continue
        with tempfile.TemporaryDirectory() as out:
            wall = _median_wall(lambda: run_and_save(agent, scenario, Path(out)),  # noqa: B023
                                args.rounds)
        total += wall
        print(f"{name:16} {agent.version:9} {wall:7.2f} {wall / floor:6.1f}x")
    print(f"live subset (one run per agent): {total:.1f} s")
    found = fixtures(FIXTURES)
    paths = [str(f.session_dir) for f in found]
    files = [p for f in found for p in f.session_dir.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    read = _median_wall(lambda: [p.read_bytes() for p in files], 3)
    triaged = _median_wall(lambda: triage(paths), 3)
    print(f"triage of {len(found)} fixtures ({len(files)} files, {size / 1e6:.1f} MB): "
          f"{triaged:.2f} s; reading their bytes {read:.3f} s; ratio {triaged / read:.0f}x")


if __name__ == "__main__":
    main()
