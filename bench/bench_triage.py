"""failcode triage: wall time on the real agent sessions, and throughput beside json.loads.

1. ``failcode triage --json`` on all of ../shared/data/agent-sessions/ (30 files, 14.5 MB) as a
   fresh process, interpreter start included (target: under 3 s), median of 5 runs; then the
   time per format (in-process, median of 5).
2. Throughput on a large generated mini-swe-agent trajectory (about 100 MB) beside a plain
   ``json.loads`` of the same bytes, interleaved rounds; the ratio is triage / json.loads.

    python bench/bench_triage.py
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import interleaved
from failcode.triage import triage
from failcode.triage.analysis._analyze import triage_file

DATA = Path(__file__).parents[1] / ".." / "shared" / "data" / "agent-sessions"


def _files() -> list[Path]:
    return sorted(p for p in DATA.rglob("*") if p.is_file() and p.name != "SOURCES.md")


def _wall(files: list[Path]) -> float:
    times = []
    for _ in range(5):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "failcode", "triage", "--json", *map(str, files)],
                       check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _per_format(files: list[Path]) -> dict[str, tuple[int, int, float]]:
    by_format: dict[str, list[Path]] = defaultdict(list)
    for path in files:
        item, _ = triage_file(path, str(path))
        by_format[item.format or "?"].append(path)
    out = {}
    for name, paths in sorted(by_format.items()):
        times = []
        for _ in range(5):
            start = time.perf_counter()
            triage(paths)
            times.append(time.perf_counter() - start)
        out[name] = (len(paths), sum(p.stat().st_size for p in paths), statistics.median(times))
    return out


def _big(path: Path, target: int = 100 * 1024 * 1024) -> int:
    """A mini-swe-agent trajectory of real-looking steps: passes, failures and probes."""
    steps = [("ls -la", 0, "total 8\n" + "drwxr-xr-x 2 u u 4096 a\n" * 20),
             ("python -m pytest tests/test_x.py -q", 1,
              ("F.\n=== FAILURES ===\nE   assert 1 == 2\ntests/test_x.py:3: AssertionError\n"
              "1 failed, 1 passed in 0.02s\n")),
             ("grep -rn absent src", 1, ""),
             ("gcc -o app main.c", 1, ("main.c:3:5: error: 'count' undeclared (first use in "
                                      "this function)\n"))]
    with path.open("w") as out:
        out.write('{"info": {"exit_status": "Submitted", "mini_version": "bench"}, "messages": [')
        size, index = 0, 0
        while size < target:
            command, code, output = steps[index % len(steps)]
            body = output + "x" * 2000
            call = json.dumps({"role": "assistant", "content": "thinking " * 50, "tool_calls": [
                {"id": f"c{index}", "function": {"name": "bash",
                                                 "arguments": json.dumps({"command": command})}}]})
            tool = json.dumps({"role": "tool", "tool_call_id": f"c{index}",
                               "content": f"<returncode>{code}</returncode><output>{body}</output>",
                               "extra": {"returncode": code, "raw_output": body}})
            chunk = ("," if index else "") + call + "," + tool
            out.write(chunk)
            size += len(chunk)
            index += 1
        out.write('], "trajectory_format": "mini-swe-agent-1.1", "instance_id": "big"}')
    return path.stat().st_size


def main() -> None:
    files = _files()
    if not files:
        sys.exit(f"no data under {DATA}")
    total = sum(p.stat().st_size for p in files)
    wall = _wall(files)
    print(f"all sessions: {len(files)} files, {total / 1e6:.1f} MB, `failcode triage --json` "
          f"wall {wall:.2f} s (median of 5, interpreter start included; target < 3 s)")
    for name, (count, size, seconds) in _per_format(files).items():
        print(f"  {name:15} {count:3} files {size / 1e6:6.2f} MB  {seconds * 1000:7.1f} ms  "
              f"{size / 1e6 / max(seconds, 1e-9):6.1f} MB/s")
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.traj.json"
        size = _big(big)
        raw = big.read_bytes()
        runs = interleaved({"triage": lambda: triage([big]),
                            "json.loads": lambda: json.loads(raw)}, rounds=3)
        ratios = [t / j for t, j in zip(runs["triage"], runs["json.loads"], strict=True)]
        t_med, j_med = statistics.median(runs["triage"]), statistics.median(runs["json.loads"])
        print(f"large input: {size / 1e6:.0f} MB; triage {size / 1e6 / t_med:.0f} MB/s, "
              f"json.loads {size / 1e6 / j_med:.0f} MB/s; triage / json.loads = "
              f"{statistics.median(ratios):.2f}x (median of per-round ratios)")


if __name__ == "__main__":
    main()
