"""Benchmark: a learned suggestion against the rules' classification of the same failure.

One command: ``python bench/bench_suggest.py`` (options: ``--rounds N``, ``--loads N``).

The inputs are real: a dozen commands that fail (a missing file, an unbound variable, a missing
module, a command not found, an uncaught exception, a compiler error when a compiler is
installed) run once at the start, plus one 1 MiB output. Each round times, interleaved,
``failcode.learned.suggest`` and ``failcode.from_command`` (the floor: the rules, which a
suggestion comes after) on every input; the ratio is the median of per-round ratios. Also the
model's load time (its first use), in fresh processes, beside ``python -c "import failcode"``.

No target in the issue; the figure says what asking for a suggestion adds to classifying.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import failcode
from _timing import interleaved, median_ratio
from failcode.learned import suggest
from failcode.learned._model import load

COMMANDS = [
    "cat missing.txt", "ls no-such-dir", "bash -uc 'echo $UNSET_NAME'", "sh -c 'frobnicate'",
    "python3 -c 'import no_such_module'", "python3 -c 'raise ValueError(\"bad\")'",
    "python3 -c 'def f(:'", "head -n 3 absent.log", "grep -r needle missing/",
    "tar xf nothing.tar", "gcc -c missing.c", "node -e 'require(\"leftpadz\")'",
]


def real_failures() -> list[tuple[list[str], int, str, str]]:
    """(argv, exit, stdout, stderr) of each command that fails here (run in a temp folder)."""
    out = []
    with tempfile.TemporaryDirectory() as folder:
        for command in COMMANDS:
            program = command.split()[0]
            if shutil.which(program) is None:
                continue
            argv = ["bash", "-c", command]
            done = subprocess.run(argv, cwd=folder, capture_output=True, text=True,
                                  timeout=60, check=False)
            if done.returncode != 0:
                out.append((argv, done.returncode, done.stdout, done.stderr))
    return out


def load_time(loads: int) -> tuple[float, float]:
    """Median seconds of a fresh process that imports failcode and makes one suggestion, and
    of one that only imports failcode."""
    suggestion = ("import failcode.learned as l, failcode; "
                  "l.suggest('make', 2, '', 'error: missing')")
    times: dict[str, list[float]] = {"suggest": [], "import": []}
    for _ in range(loads):
        for name, code in (("suggest", suggestion), ("import", "import failcode")):
            began = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            times[name].append(time.perf_counter() - began)
    return statistics.median(times["suggest"]), statistics.median(times["import"])


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--loads", type=int, default=5, help="fresh processes for load time")
    args = parser.parse_args()

    inputs = real_failures()
    inputs.append((["bash", "-c", "tool run"], 1, "", ("x" * 200 + "\n") * 5000 + "error: no"))
    print(f"{len(inputs)} inputs ({len(inputs) - 1} real failures, one 1 MiB output)")
    began = time.perf_counter()
    model = load()
    print(f"model load in this process: {(time.perf_counter() - began) * 1000:.0f} ms "
          f"({model.version})")

    def learned() -> None:
        for argv, code, stdout, stderr in inputs:
            suggest(argv, code, stdout, stderr)

    def rules() -> None:
        for argv, code, stdout, stderr in inputs:
            failcode.from_command(argv, code, stdout, stderr)

    times = interleaved({"suggest": learned, "from_command": rules}, args.rounds)
    n = len(inputs)
    for name in ("suggest", "from_command"):
        per = statistics.median(times[name]) / n * 1000
        print(f"{name:14s} {per:8.3f} ms per failure")
    print(f"suggest / from_command: {median_ratio(times, 'suggest', 'from_command'):.2f}x")
    with_model, import_only = load_time(args.loads)
    print(f"fresh process, import + first suggestion: {with_model * 1000:.0f} ms; "
          f"import failcode alone: {import_only * 1000:.0f} ms; "
          f"the model's load: {(with_model - import_only) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
