"""Triage and the store at two versions of the code, in one run: did a change slow them?

    python bench/bench_versions.py --base REV [--rounds 5] [--events 100000] [--only NAME]

The base revision's ``src/`` is exported with ``git archive`` into a temp dir (the working
tree is not touched); each case then runs in fresh processes, once with the base's code and
once with this checkout's (``PYTHONPATH``), alternating for ``--rounds`` rounds, and prints
the medians and the ratio ``this / base`` (above 1: slower now). Both use this virtual
environment's dependencies.

Cases:

1. ``failcode triage --json`` of the real sessions in ../shared/data/agent-sessions (one
   process, ``--jobs 1``), output discarded.
2. ``failcode triage --json`` of the session lab's fixtures (many small inputs).
3. ``failcode triage --store sqlite:///...`` of the real sessions into a fresh store (reading
   and recording).
4. ``Store.append`` of ``--events`` failure events in batches of 1,000 into a fresh SQLite
   store (the events are built before the clock starts).
5. ``read_events`` of a JSONL file of ``--events`` events written by ``JsonlSink``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SESSIONS = ROOT.parent / "shared" / "data" / "agent-sessions"
LAB = ROOT / "tests" / "lab" / "fixtures"

_EVENTS = """
import sys
from failcode import FC
from failcode.events import failure_event
programs = [f"tool{i}" for i in range(40)]
failures = [FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": p})
            for p in programs]
def events(n):
    return [failure_event(failures[i % 40], event="tool.failed", session=f"s{i % 500}",
                          step=i // 500, event_id=f"01J{i:023d}")
            for i in range(n)]
"""

_APPEND = _EVENTS + """
import time
from failcode.store import open_store
batch = events(int(sys.argv[1]))
store = open_store("sqlite:///" + sys.argv[2])
start = time.perf_counter()
for at in range(0, len(batch), 1000):
    store.append(batch[at:at + 1000])
store.close()
print(time.perf_counter() - start)
"""

_READ = _EVENTS + """
import os, time
from failcode.events import JsonlSink, read_events
path = sys.argv[2]
if not os.path.exists(path):
    sink = JsonlSink(path, buffer=1000)
    for event in events(int(sys.argv[1])):
        sink.emit(event)
    sink.close()
start = time.perf_counter()
count = sum(1 for _ in read_events(path))
print(time.perf_counter() - start)
"""


def _export(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "archive", rev, "src"], cwd=ROOT, check=True,
                             capture_output=True).stdout
    tar = into / "base.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as handle:
        handle.extractall(into, filter="data")
    return into / "src"


def _timed(src: Path, command: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    run = subprocess.run(command, env=env, capture_output=True, check=False, text=True)
    wall = time.perf_counter() - start
    if run.returncode not in (0, 2):  # 2: an input could not be read (the real data has some)
        sys.exit(f"{' '.join(command[:4])}... failed ({run.returncode}): {run.stderr[-400:]}")
    if command[1] == "-c":  # the script timed itself
        return float(run.stdout.split()[-1])
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the revision to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    args = parser.parse_args()
    if not SESSIONS.is_dir():
        sys.exit(f"the real sessions are not at {SESSIONS}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        trees = {"base": _export(args.base, work), "this": ROOT / "src"}
        py = sys.executable
        labs = [str(p) for p in sorted(LAB.glob("*/*/session"))]
        cases = {
            "triage --json, real sessions": lambda _tree, _n: [
                py, "-m", "failcode", "triage", "--json", "--jobs", "1", str(SESSIONS)],
            "triage --json, lab fixtures": lambda _tree, _n: [
                py, "-m", "failcode", "triage", "--json", "--jobs", "1", *labs],
            "triage --store, real sessions": lambda tree, n: [
                py, "-m", "failcode", "triage", "--jobs", "1", "--store",
                f"sqlite:///{work / f'triage-{tree}-{n}.db'}", str(SESSIONS)],
            f"Store.append, {args.events:,} events": lambda tree, n: [
                py, "-c", _APPEND, str(args.events), str(work / f"append-{tree}-{n}.db")],
            f"read_events, {args.events:,} events": lambda tree, _n: [
                py, "-c", _READ, str(args.events), str(work / f"events-{tree}.jsonl")],
        }
        print(f"base {args.base} vs this checkout, {args.rounds} rounds, medians (seconds)")
        print(f"{'case':<36} {'base':>8} {'this':>8} {'this/base':>10}")
        for name, command in cases.items():
            if args.only not in name:
                continue
            times: dict[str, list[float]] = {"base": [], "this": []}
            for n in range(args.rounds):
                order = ("base", "this") if n % 2 == 0 else ("this", "base")
                for tree in order:
                    times[tree].append(_timed(trees[tree], command(tree, n)))
            base, this = (statistics.median(times[t]) for t in ("base", "this"))
            print(f"{name:<36} {base:>8.3f} {this:>8.3f} {this / base:>9.2f}x", flush=True)


if __name__ == "__main__":
    main()
