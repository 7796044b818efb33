"""Mutation score of the modules whose rules the tests must pin down (issue 16).

    python bench/mutation.py                    # every module in [tool.mutmut] only_mutate
    python bench/mutation.py policy._decide     # one module (or several)
    python bench/mutation.py classification._command --sample-digit 7   # a 1-in-10 sample

Runs mutmut (``pip install mutmut``) over the modules listed in ``pyproject.toml``'s
``[tool.mutmut]`` table: each mutant (a flipped comparison, a changed constant, a dropped
argument, ...) runs against the tests that cover it, and a mutant the tests do not notice
"survived". Prints, per module, the mutants killed (a test failed or timed out) out of all
mutants, and the share; "no tests" mutants count as survived. The run is slow (tens of minutes
for every module on 2 cores) and is not part of the test suite.

``--sample-digit D`` runs only the mutants whose number ends in ``D``: a one-in-ten sample spread
over every function of the module (mutmut numbers each function's mutants from 1), for modules
whose full run takes hours; the score is then the sample's, and says so.

Hypothesis is pinned to one seed (``HYPOTHESIS_SEED=0``) so the clean run and every mutant
see the same examples, and ``FAILCODE_SHARED_DIR`` points the tests at the shared data folder
beside the repository (mutmut runs the tests in a copy under ``mutants/``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KILLED = {"killed", "timeout"}


def _modules() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    paths = config["tool"]["mutmut"]["only_mutate"]
    return [p.removeprefix("src/").removesuffix(".py").replace("/", ".") for p in paths]


def _results(env: dict[str, str], digit: str | None = None) -> dict[str, Counter[str]]:
    out = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all", "true"],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
    per_module: dict[str, Counter[str]] = defaultdict(Counter)
    for line in out.splitlines():
        match = re.match(r"\s*(\S+)__mutmut_(\d+): (.+)$", line)
        if match is None or (digit is not None and not match.group(2).endswith(digit)):
            continue
        name, _number, status = match.groups()
        module = name.rsplit(".", 1)[0]
        per_module[module][status.strip()] += 1
    return per_module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*",
                        help="modules under failcode to mutate (default: all configured)")
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument("--sample-digit", choices=list("0123456789"), default=None,
                        help="run only the mutants whose number ends in this digit (1 in 10)")
    args = parser.parse_args()
    if shutil.which("mutmut") is None and subprocess.run(
            [sys.executable, "-c", "import mutmut"], check=False).returncode:
        print("mutmut is not installed: pip install mutmut", file=sys.stderr)
        return 2
    configured = _modules()
    wanted = [f"failcode.{m}" if not m.startswith("failcode.") else m for m in args.modules]
    unknown = sorted(set(wanted) - set(configured))
    if unknown:
        print(f"not configured in [tool.mutmut] only_mutate: {', '.join(unknown)}",
              file=sys.stderr)
        return 2
    env = {**os.environ, "HYPOTHESIS_SEED": "0", "FAILCODE_MUTATION_RUN": "1",
           "FAILCODE_SHARED_DIR": str(ROOT.parent / "shared")}
    env.pop("CI", None)
    shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    suffix = f"*__mutmut_*{args.sample_digit}" if args.sample_digit else "*"
    names = [f"{m}.{suffix}" for m in wanted]
    run = subprocess.run([sys.executable, "-m", "mutmut", "run",
                          "--max-children", str(args.max_children), *names],
                         cwd=ROOT, env=env, check=False)
    if run.returncode:
        print(f"mutmut run exited {run.returncode}", file=sys.stderr)
        return run.returncode
    results = _results(env, args.sample_digit)
    if args.sample_digit:
        print(f"\nsample: the mutants whose number ends in {args.sample_digit} (about 1 in 10)")
    print(f"\n{'module':42} {'killed':>7} {'total':>6} {'score':>7}  survivors by status")
    for module in wanted or configured:
        counts = results.get(module, Counter())
        total = sum(counts.values())
        killed = sum(n for status, n in counts.items() if status in KILLED)
        rest = ", ".join(f"{s} {n}" for s, n in sorted(counts.items()) if s not in KILLED)
        score = f"{killed / total:.1%}" if total else "-"
        print(f"{module:42} {killed:7d} {total:6d} {score:>7}  {rest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
