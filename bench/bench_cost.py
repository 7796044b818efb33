"""What pricing costs triage (issue 38): the same run with genai-prices and without it.

Every candidate is a fresh ``failcode triage --json --no-cache`` process over the real sessions
that record tokens per turn (the Claude Code, Codex, Gemini CLI, stream-json, mini-swe-agent
and OpenHands folders of ../shared/data/agent-sessions and agent-sessions-2), rounds
interleaved (``_timing.interleaved``), one untimed warm-up round. The floor is the same run with
genai-prices hidden from the process (every dollar unknown: nothing imported, nothing priced);
the ratio is the median of per-round ratios priced / floor (1.0: pricing costs nothing). A
warm-up round checks that the priced run has dollars and the floor has none, so the two runs
differ only in pricing. The bench also prints how many model turns the run priced.

    python bench/bench_cost.py [--rounds 5]
    nice -n 19 python bench/bench_cost.py     # on a shared machine
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _timing import interleaved, median_ratio
from bench_triage_scale import DATA, DATA_2

FOLDERS = ("claude-code", "codex", "gemini-cli", "claude-stream-json", "mini-swe-agent",
           "openhands")
HIDE = ("import sys, importlib.abc\n"
        "class _Hide(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'genai_prices' or name.startswith('genai_prices.'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, _Hide())\n")
RUN = "from failcode.cli import main\nmain(sys.argv[1:], prog_name='failcode')\n"


def _argv(hide: bool, paths: list[str]) -> list[str]:
    program = "import sys\n" + (HIDE if hide else "") + RUN
    return [sys.executable, "-c", program, "triage", "--json", "--no-cache", *paths]


def _run(argv: list[str]) -> dict[str, Any]:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 2):
        raise SystemExit(f"bench_cost: triage failed ({done.returncode}): {done.stderr[-500:]}")
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    paths = [str(root / name) for root in (DATA, DATA_2) for name in FOLDERS
             if (root / name).is_dir()]
    if not paths:
        raise SystemExit("bench_cost: no session folder found under ../shared/data")
    priced, floor = _run(_argv(False, paths)), _run(_argv(True, paths))
    dollars = [e["usd"] for s in priced["sessions"] for e in s["failures"] if e["usd"]]
    assert dollars, "the priced run priced nothing: is genai-prices installed?"
    assert priced.get("prices"), "the priced run names no price table"
    recorded = sum(1 for s in floor["sessions"] for e in s["failures"]
                   if e["usd"] and ", recorded by " in (e.get("priced_as") or ""))
    assert all(not e["usd"] or ", recorded by " in (e.get("priced_as") or "")  # 0: no turn
               for s in floor["sessions"] for e in s["failures"]), "the floor priced a turn"
    turns = sum((s["tokens"] or {}).get("turns", 0) for s in priced["sessions"])
    failures = sum(len(s["failures"]) for s in priced["sessions"])
    print(f"{len(priced['sessions'])} sessions, {turns:,} model turns, {failures:,} failures; "
          f"priced: {len(dollars):,} failures (table: {priced['prices']}); "
          f"floor: {recorded:,} failures priced as their log recorded")
    times = interleaved({"priced": lambda: _run(_argv(False, paths)),
                         "floor": lambda: _run(_argv(True, paths))}, args.rounds)
    for name, values in times.items():
        print(f"  {name:<7} median {sorted(values)[len(values) // 2]:.2f} s  "
              f"({', '.join(f'{v:.2f}' for v in values)})")
    print(f"priced / floor: {median_ratio(times, 'priced', 'floor'):.2f}x "
          "(the median of per-round ratios; 1.00: pricing costs nothing)")


if __name__ == "__main__":
    main()
