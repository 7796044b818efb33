"""failcode triage at scale: throughput per core, --jobs, peak memory and start-up, in one run.

1. Throughput per core beside ``json.loads`` of the same bytes (interleaved rounds, in one
   process): the real sessions of ../shared/data/agent-sessions that are JSON (every format
   but aider's Markdown; the peer decodes a JSON document whole and JSON lines line by line),
   aider's history on its own (its peer: splitting the bytes into lines), and a generated
   mini-swe-agent trajectory (``--big-mb``, default 100). Ratio = json.loads time / triage
   time (goal >= 0.5x, issue 37); the text logs' MB/s beside the JSON sessions' (goal: no
   slower per byte). ``corpus2``: the same on ../shared/data/agent-sessions-2 (issue 32's
   formats: headless streams, ATIF trials, Cline, Qwen Code...). ``formats``: per format, on
   the lab's fixtures, the multi-agent transcripts and the Harbor trials (issue 33).
2. ``failcode triage --json`` with ``--jobs 2`` beside ``--jobs 1`` on a generated folder (the
   real sessions copied ``--copies`` times, default 4), fresh processes, interleaved; speedup
   = jobs-1 wall / jobs-2 wall (goal >= 1.7x on an idle 2-core machine).
3. Peak RSS (``ru_maxrss`` of the child) of ``failcode triage --json`` and of the terminal
   summary on a generated mini-swe-agent trajectory of ``--rss-mb`` (default 256; the issue's
   figure is ``--rss-mb 1024``), beside the same triage holding its whole result and building
   the whole ``--json`` document (what the command did before streaming). Goal < 256 MB.
4. Start-up: ``failcode triage FILE`` on one small real file beside ``python -c pass``, fresh
   processes with bytecode cached (as an installed package has it; the cache goes to a temp
   dir, never into the repository), medians of ``--rounds`` interleaved runs. Goal < 0.15 s.
   And ``python -c "import failcode"`` beside ``python -c pass``: the import's own cost
   (goal < 100 ms).
6. Incremental runs (issue 37): ``failcode triage --home`` on a generated home of
   ``--home-mb`` (default 1024) of several agents' real sessions where each agent keeps them
   (Claude Code, Codex, Gemini CLI, Qwen Code, Copilot CLI: the second corpus's files copied
   under new names until the size is reached), fresh processes with a fresh triage cache:
   the cold run (reading everything, filling the cache), then the median of ``--rounds``
   warm runs over the unchanged home, and their ratio; the documents are checked identical
   (error ids masked). Goal: warm < 1 s. The home is generated once and kept under the
   user's cache folder (``failcode/bench/home-<MB>``; ``--home-dir`` elsewhere).
7. A session that grew (issue 37): a generated Claude Code transcript of ``--grown-mb``
   (default 100; the largest real one's lines again and again, its tool call ids made unique
   per pass) read once with the cache; then, ``--rounds`` times, 1 MB of lines is appended
   and ``failcode triage --cache --json FILE`` (read from where the last run stopped) is timed
   beside ``--no-cache`` (the whole file), fresh processes; their documents are checked
   identical (error ids masked).

The generated trajectories are real mini-swe-agent steps: the messages of the real
trajectories one after another, again and again; from the second pass on, each observation
starts with a line naming the pass, so no two outputs are the same (the commands are: agents
run the same commands again). Everything generated goes to a temp dir.

    python bench/bench_triage_scale.py [--big-mb 100] [--rss-mb 256] [--copies 4] [--rounds 5]
    python bench/bench_triage_scale.py --profile   # add a cProfile of the real sessions
    python bench/bench_triage_scale.py --only memory --rss-mb 1024   # the issue's 1 GB file
    python bench/bench_triage_scale.py --only corpus2   # the second corpus's formats
    python bench/bench_triage_scale.py --only formats   # each format of the lab (issue 33)
    python bench/bench_triage_scale.py --only harbor    # a Harbor job of 494 trials
    python bench/bench_triage_scale.py --only warm      # the warm cache on a 1 GB home
    python bench/bench_triage_scale.py --only warm --quick   # the same on a 64 MB home
    python bench/bench_triage_scale.py --only grown     # a 100 MB session that grew
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _timing import interleaved, median_ratio
from failcode.triage import triage
from failcode.triage.analysis._analyze import triage_file

DATA = Path(__file__).parents[1] / ".." / "shared" / "data" / "agent-sessions"
DATA_2 = Path(__file__).parents[1] / ".." / "shared" / "data" / "agent-sessions-2"


def _files() -> list[Path]:
    return sorted(p for p in DATA.rglob("*") if p.is_file() and p.name != "SOURCES.md")


def _json_floor(data: bytes) -> object:
    """json.loads of the same bytes: the document whole, else JSON lines one by one."""
    try:
        return json.loads(data)
    except ValueError:
        return [json.loads(line) for line in data.splitlines() if line.strip()]


def _is_json(data: bytes) -> bool:
    try:
        _json_floor(data)
    except ValueError:
        return False
    return True


def _lines_floor(data: bytes) -> object:
    return data.decode("utf-8", "replace").split("\n")


def _steps() -> tuple[list[Any], dict[str, Any]]:
    """The messages after the task of every real mini-swe-agent trajectory, and one's info."""
    messages: list[Any] = []
    info: dict[str, Any] = {}
    for path in sorted((DATA / "mini-swe-agent").rglob("*.traj.json")):
        document = json.loads(path.read_bytes())
        messages.extend(document.get("messages", [])[2:])
        info = info or document.get("info", {})
    return [m for m in messages if m.get("role") != "exit"], info


def _vary(message: dict[str, Any], rep: int) -> dict[str, Any]:
    if rep == 0 or message.get("role") not in {"tool", "user"}:
        return message
    varied = dict(message)
    content = varied.get("content")
    if isinstance(content, str):
        varied["content"] = content.replace("<output>", f"<output>pass {rep}\n", 1) if (
            "<output>" in content) else f"pass {rep}\n{content}"
    extra = varied.get("extra")
    if isinstance(extra, dict) and isinstance(extra.get("raw_output"), str):
        varied["extra"] = {**extra, "raw_output": f"pass {rep}\n{extra['raw_output']}"}
    return varied


def make_trajectory(path: Path, target: int) -> int:
    """Write a mini-swe-agent trajectory of about ``target`` bytes; its size."""
    steps, info = _steps()
    first = json.loads(next((DATA / "mini-swe-agent").rglob("*.traj.json")).read_bytes())
    with path.open("w", encoding="utf-8") as out:
        out.write('{"info": ' + json.dumps(info) + ', "messages": [')
        out.write(", ".join(json.dumps(m) for m in first["messages"][:2]))
        size, rep = 0, 0
        while size < target:
            for message in steps:
                chunk = ", " + json.dumps(_vary(message, rep))
                out.write(chunk)
                size += len(chunk)
                if size >= target:
                    break
            rep += 1
        out.write('], "trajectory_format": "mini-swe-agent-1.1", "instance_id": "big"}')
    return path.stat().st_size


def _mb(size: float) -> str:
    return f"{size / 1e6:.1f} MB"


def _measure(name: str, paths: list[Path], floor: Any, rounds: int, goal: str = "") -> float:
    """One row of section 1: triage of ``paths`` beside ``floor`` of their bytes; triage's
    MB/s."""
    blobs = [p.read_bytes() for p in paths]
    size = sum(len(b) for b in blobs)
    runs = interleaved({"triage": lambda: triage(paths),
                        "peer": lambda: [floor(b) for b in blobs]}, rounds=rounds)
    t, j = statistics.median(runs["triage"]), statistics.median(runs["peer"])
    print(f"   {name}: {len(paths)} files, {_mb(size)}; triage {size / 1e6 / t:.1f} MB/s, "
          f"peer {size / 1e6 / j:.1f} MB/s; triage / peer throughput = "
          f"{median_ratio(runs, 'peer', 'triage'):.2f}x{goal}")
    return size / 1e6 / t


def throughput(big_mb: int, rounds: int, tmp: Path) -> None:
    files = [p for p in _files() if triage_file(p, str(p))[0].format is not None]
    json_files = [p for p in files if _is_json(p.read_bytes())]
    text_files = [p for p in files if p not in json_files]
    big = tmp / "big.traj.json"
    make_trajectory(big, big_mb * 1024 * 1024)
    print("1. throughput per core (in one process; json.loads of the same bytes as the peer)")
    speeds = [_measure(name, paths, floor, rounds, goal) for name, paths, floor, goal in (
        ("real JSON sessions", json_files, _json_floor, " (goal >= 0.5x)"),
        ("real text logs (aider, OpenHands logs; peer: lines)", text_files, _lines_floor, ""),
        ("generated mini-swe-agent trajectory", [big], _json_floor, " (goal >= 0.5x)"))]
    print(f"   text logs per byte / JSON sessions per byte = {speeds[1] / speeds[0]:.2f}x "
          f"(goal >= 1x: no slower)")


def throughput_second(rounds: int) -> None:
    """Section 1 on the second corpus (issue 32): the files triage reads (headless streams,
    ATIF trials, Cline, Qwen Code, interactive Claude Code and Codex...), JSON beside
    ``json.loads``, aider's Markdown beside splitting lines."""
    read = [p for p in sorted(DATA_2.rglob("*")) if p.is_file() and p.name != "SOURCES.md"
            and triage_file(p, str(p))[0].error_code is None]
    json_files = [p for p in read if _is_json(p.read_bytes())]
    text_files = [p for p in read if p not in json_files]
    print("1b. throughput per core, second corpus (../shared/data/agent-sessions-2)")
    _measure("JSON sessions", json_files, _json_floor, rounds)
    _measure("text logs (aider; peer: lines)", text_files, _lines_floor, rounds)


def throughput_formats(rounds: int) -> None:
    """Section 1 per format (issue 33): every JSON file triage reads among the lab's fixtures
    (tests/lab/fixtures: each agent's session files and kept headless stdout), the multi-agent
    transcripts (tests/fixtures/multiagent) and the second corpus's Harbor trials, grouped by
    the format detected, each group beside ``json.loads`` of the same bytes."""
    repo = Path(__file__).parents[1]
    roots = [repo / "tests" / "lab" / "fixtures", repo / "tests" / "fixtures" / "multiagent",
             DATA_2 / "harbor-atif"]
    groups: dict[str, list[Path]] = {}
    for root in roots:
        for path in sorted(root.rglob("*")) if root.is_dir() else []:
            if not path.is_file() or path.name in {"meta.json", "SOURCES.md"}:
                continue
            row = triage_file(path, str(path))[0]
            if row.format is not None and row.error_code is None and _is_json(path.read_bytes()):
                groups.setdefault(row.format, []).append(path)
    print("1c. throughput per core, per format (lab fixtures, multi-agent transcripts, Harbor "
          "trials)")
    for name, paths in sorted(groups.items()):
        _measure(name, paths, _json_floor, rounds)


def harbor_job(copies: int, tmp: Path) -> None:
    """A Harbor job folder of many trials (issue 33): the second corpus's trials copied
    ``copies`` times into a temp folder; ``failcode triage JOB`` beside ``python -c pass``
    (wall and peak RSS of a fresh process), and the summary's Trials table checked to list
    every trial once."""
    trials = sorted({p.parent for p in (DATA_2 / "harbor-atif").rglob("result.json")})
    job = tmp / "job"
    for copy in range(copies):
        for trial in trials:
            shutil.copytree(trial, job / f"{trial.name}-{copy}")
    count = copies * len(trials)
    with tempfile.TemporaryFile("w+") as out:
        wall, rss = _measured([sys.executable, "-m", "failcode", "triage", str(job)],
                              stdout=out)
        out.seek(0)
        rows = sum(1 for line in out if line.startswith("  ") and (
            " failed " in line or " passed " in line or " partial " in line
            or " ungraded " in line))
    floor, _ = _measured([sys.executable, "-c", "pass"])
    print(f"5. a Harbor job of {count} trials: triage {wall:.1f} s ({wall / floor:.0f}x "
          f"python -c pass), peak RSS {rss / 1e6:.0f} MB, {rows} trial lines "
          f"({'one per trial' if rows == count else 'MISMATCH'})")


_LAUNCH = """
import json, os, subprocess, sys, time
argv, report = json.loads(sys.argv[1]), sys.argv[2]
start = time.perf_counter()
child = subprocess.Popen(argv)
_, status, usage = os.wait4(child.pid, 0)
wall = time.perf_counter() - start
with open(report, "w") as out:
    json.dump({"wall": wall, "rss": usage.ru_maxrss * 1024,
               "status": os.waitstatus_to_exitcode(status)}, out)
"""


def _measured(argv: list[str], *, env: dict[str, str] | None = None,
              stdout: Any = subprocess.DEVNULL) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of ``argv`` in a fresh process.

    A small launcher process starts it: the peak RSS of a child counts the process it was
    forked from until it execs, and this benchmark's own process holds large inputs.
    """
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        subprocess.run([sys.executable, "-c", _LAUNCH, json.dumps(argv), report.name],
                       stdout=stdout, stderr=subprocess.DEVNULL, env=env, check=True)
        found = json.loads(Path(report.name).read_text())
    if found["status"] not in (0, 2):
        sys.exit(f"{' '.join(argv)} exited {found['status']}")
    return found["wall"], found["rss"]


def _cli(*args: str, env: dict[str, str] | None = None, stdout: Any = subprocess.DEVNULL,
         ) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of ``python -m failcode ARGS`` in a fresh process."""
    return _measured([sys.executable, "-m", "failcode", *args], env=env, stdout=stdout)


def jobs(copies: int, rounds: int, tmp: Path) -> None:
    folder = tmp / "corpus"
    for index in range(copies):
        shutil.copytree(DATA, folder / f"copy{index}")
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    count = sum(1 for p in folder.rglob("*") if p.is_file())
    out1, out2 = tmp / "jobs1.json", tmp / "jobs2.json"

    def run(jobs: str, out: Path) -> None:
        with out.open("w") as handle:
            _cli("triage", "--json", "--jobs", jobs, str(folder), stdout=handle)

    load = os.getloadavg()[0]
    runs = interleaved({"jobs 1": lambda: run("1", out1), "jobs 2": lambda: run("2", out2)},
                       rounds=rounds)
    load = max(load, os.getloadavg()[0])
    same = _masked(out1.read_text()) == _masked(out2.read_text())
    one, two = statistics.median(runs["jobs 1"]), statistics.median(runs["jobs 2"])
    print(f"2. --jobs on {count} files, {_mb(size)} (the real sessions x{copies}), fresh "
          f"processes: --jobs 1 {one:.2f} s, --jobs 2 {two:.2f} s; speedup "
          f"{median_ratio(runs, 'jobs 1', 'jobs 2'):.2f}x on {os.cpu_count()} cores (load "
          f"average up to {load:.1f} before and after: other work shares the cores); "
          f"documents identical (error ids masked): {same}")


def _masked(text: str) -> str:
    return re.sub(r'"error_id": "fc-[0-9a-f]+-[0-9a-f]+"', '"error_id": ""', text)


_HOLD_ALL = """
import json, sys
from failcode.triage import triage
result = triage([sys.argv[1]])
sys.stdout.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\\n")
"""


def memory(rss_mb: int, tmp: Path) -> None:
    big = tmp / "rss.traj.json"
    size = make_trajectory(big, rss_mb * 1024 * 1024)
    wall, streamed = _cli("triage", "--json", str(big))
    _, summary = _cli("triage", str(big))
    held_wall, held = _measured([sys.executable, "-c", _HOLD_ALL, str(big)])
    print(f"3. peak RSS on a {_mb(size)} mini-swe-agent trajectory (one session): "
          f"`triage --json` {streamed / 2**20:.0f} MiB in {wall:.1f} s, the "
          f"summary {summary / 2**20:.0f} MiB; holding the result and the whole document "
          f"(before) {held / 2**20:.0f} MiB in {held_wall:.1f} s (goal < 256 MB)")


def startup(rounds: int, tmp: Path) -> None:
    small = min((p for p in _files() if p.suffix in {".traj", ".json"}),
                key=lambda p: p.stat().st_size)
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(tmp / "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    floor_env = dict(env)
    _cli("triage", str(small), env=env)  # write the bytecode cache once

    walls: dict[str, list[float]] = {"pass": [], "triage": []}
    candidates = {"pass": lambda: [sys.executable, "-c", "pass"],
                  "triage": lambda: [sys.executable, "-m", "failcode", "triage", str(small)]}
    interleaved({name: lambda name=name: walls[name].append(
        _measured(candidates[name](), env=floor_env if name == "pass" else env)[0])
        for name in candidates}, rounds=max(rounds, 9), warmup=0)
    t, p = statistics.median(walls["triage"]), statistics.median(walls["pass"])
    print(f"4. start-up: `failcode triage {small.name}` ({small.stat().st_size // 1024} KiB) "
          f"{t * 1000:.0f} ms, `python -c pass` {p * 1000:.0f} ms (median of "
          f"{max(rounds, 9)}, bytecode cached; goal < 150 ms)")
    imports: dict[str, list[float]] = {"pass": [], "import": []}
    code = {"pass": "pass", "import": "import failcode"}
    interleaved({name: lambda name=name: imports[name].append(
        _measured([sys.executable, "-c", code[name]], env=env)[0]) for name in code},
        rounds=max(rounds, 9), warmup=1)
    own = statistics.median(i - q for i, q in zip(imports["import"], imports["pass"],
                                                  strict=True))
    print(f"   `import failcode`: {statistics.median(imports['import']) * 1000:.0f} ms in a "
          f"fresh process, {own * 1000:.0f} ms more than `python -c pass` (median of "
          f"{max(rounds, 9)}; goal: the import < 100 ms)")


def _old_lines(stream: Any, *, max_line: int = 32 << 20, strict: bool = True) -> Any:
    """The line reader before chunks: one ``readline`` per line."""
    from failcode.triage._events import InputError

    number = 0
    while raw := stream.readline(1 << 20):
        number += 1
        if not raw.endswith(b"\n") and len(raw) == 1 << 20:
            parts, size = [raw], len(raw)
            while not parts[-1].endswith(b"\n"):
                piece = stream.readline(1 << 20)
                if not piece:
                    break
                size += len(piece)
                if size > max_line:
                    raise InputError("FC-DATA-003", f"line {number} is too long")
                parts.append(piece)
            raw = b"".join(parts)
        try:
            text = raw.decode("utf-8", "strict" if strict else "replace")
        except UnicodeDecodeError:
            raise InputError("FC-DATA-003", f"line {number} is not UTF-8") from None
        if number == 1 and text.startswith("\ufeff"):
            text = text[1:]
        yield number, text.rstrip("\r\n")


def _old_operators(command: str) -> list[tuple[int, str]]:
    """The operator scan before the regular expression: one character at a time."""
    found: list[tuple[int, str]] = []
    quote, index = "", 0
    while index < len(command):
        char = command[index]
        if quote:
            if char == "\\" and quote == '"':
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "\\":
            index += 1
        elif command.startswith(("||", "&&"), index):
            found.append((index, command[index:index + 2]))
            index += 1
        elif char in "|;":
            found.append((index, char))
        index += 1
    return found


def changes(rounds: int) -> None:
    """This change's reading and lexing beside the code before it, in the same run: the
    same triage with the old line reader, operator scan and shlex lexing patched back in."""
    import shlex

    from failcode.classification import _command, _lex
    from failcode.triage.analysis import _masking
    from failcode.triage.readers import _aider, _lines, _openhands

    files = [p for p in _files() if triage_file(p, str(p))[0].format is not None]
    size = sum(p.stat().st_size for p in files)
    new = (_lines.lines, _aider.lines, _openhands.lines, _masking._operators, _command.split_words)
    old = (_old_lines, _old_lines, _old_lines, _old_operators, shlex.split)

    def run(chosen: tuple[Any, ...]) -> None:
        (_lines.lines, _aider.lines, _openhands.lines, _masking._operators,
         _command.split_words) = chosen
        _lex._split.cache_clear()
        triage(files)

    try:
        runs = interleaved({"before": lambda: run(old), "after": lambda: run(new)},
                           rounds=rounds)
    finally:
        run(new)
    before, after = statistics.median(runs["before"]), statistics.median(runs["after"])
    print(f"5. this change's reading and lexing, same run, all {len(files)} real sessions "
          f"({_mb(size)}): before {before * 1000:.0f} ms ({size / 1e6 / before:.1f} MB/s), "
          f"after {after * 1000:.0f} ms ({size / 1e6 / after:.1f} MB/s); "
          f"{median_ratio(runs, 'before', 'after'):.2f}x")


_HOME_AGENTS = ("claude-code", "codex", "gemini-cli", "qwen-code", "copilot-cli")
_HOME_ENV = ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME",
             "GEMINI_CLI_HOME", "MSWEA_GLOBAL_CONFIG_DIR", "OPENCODE_DB", "QWEN_HOME",
             "COPILOT_HOME")


def _home_copy(relative: Path, agent: str, copy: int) -> Path:
    """Where copy ``copy`` of a session goes in the home: under a renamed project (or, for
    Codex, a renamed rollout), so each copy is a session of its own where the agent keeps it."""
    parts = list(relative.parts)
    if agent == "codex" or len(parts) == 3:  # a file kept right in the agent's folder (Codex,
        # Copilot CLI's session-state/<id>.jsonl): the copy's mark before the extension
        name = Path(parts[-1])
        parts[-1] = f"{name.stem}-c{copy}{name.suffix}"
    else:
        parts[2] = f"{parts[2]}-c{copy}"
    return Path(*parts)


_HOME_MARK = "{} MB, layout 2\n"
"""The marker of a complete home (layout 2: Copilot CLI copies named ``<id>-cN.jsonl``)."""


def make_home(folder: Path, target_mb: int) -> tuple[int, int]:
    """A home of about ``target_mb`` MB of real sessions of several agents, written once
    (a marker file says it is complete); its size and file count."""
    done = folder / ".complete"
    if not done.is_file() or done.read_text() != _HOME_MARK.format(target_mb):
        shutil.rmtree(folder, ignore_errors=True)
        sources = [(agent, path.relative_to(repo), path)
                   for agent in _HOME_AGENTS if (DATA_2 / agent).is_dir()
                   for repo in sorted((DATA_2 / agent).iterdir()) if repo.is_dir()
                   for path in sorted(repo.rglob("*")) if path.is_file()
                   and path.relative_to(repo).parts[0].startswith(".")]
        size, copy = 0, 0
        while size < target_mb * 1_000_000:
            for agent, relative, path in sources:
                target = folder / _home_copy(relative, agent, copy)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
                size += target.stat().st_size
            copy += 1
        done.write_text(_HOME_MARK.format(target_mb))
    files = [p for p in folder.rglob("*") if p.is_file() and p != done]
    return sum(p.stat().st_size for p in files), len(files)


def _home_dir(target_mb: int) -> Path:
    import platformdirs  # only this section needs it

    return Path(platformdirs.user_cache_dir("failcode")) / "bench" / f"home-{target_mb}"


def warm_cache(target_mb: int, rounds: int, tmp: Path, home: Path | None = None) -> None:
    """Section 6: ``failcode triage --home`` cold, then warm, on a generated home."""
    home = home or _home_dir(target_mb)
    size, count = make_home(home, target_mb)
    cache = tmp / "triage-cache"
    env = {key: value for key, value in os.environ.items() if key not in _HOME_ENV}
    env |= {"HOME": str(home), "FAILCODE_CACHE_DIR": str(cache)}
    shutil.rmtree(cache, ignore_errors=True)
    outputs = [tmp / "cold.json", tmp / "warm.json"]

    def run(out: Path, *args: str) -> tuple[float, float]:
        """Wall and CPU seconds (user + system) of one fresh process."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        with out.open("w") as handle:
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "failcode", "triage", "--home", *args],
                           stdout=handle, stderr=subprocess.DEVNULL, env=env, cwd=home,
                           check=False)
            wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    load = os.getloadavg()[0]
    cold = run(outputs[0], "--json")
    warm = [run(outputs[1], "--json") for _ in range(max(rounds, 3))]
    summary = [run(tmp / "summary.txt") for _ in range(max(rounds, 3))]
    load = max(load, os.getloadavg()[0])
    documents = [json.loads(out.read_text()) for out in outputs]
    cached = [document.pop("cached_inputs", None) for document in documents]
    same = _masked(json.dumps(documents[0])) == _masked(json.dumps(documents[1]))
    entries = sum(p.stat().st_size for p in cache.rglob("*") if p.is_file())
    wall, cpu = (statistics.median(t[0] for t in warm), statistics.median(t[1] for t in warm))
    text_wall = statistics.median(t[0] for t in summary)
    text_cpu = statistics.median(t[1] for t in summary)
    print(f"6. incremental: `failcode triage --home --json` on a generated home of {count} "
          f"files, {_mb(size)} ({', '.join(_HOME_AGENTS)}), fresh processes: cold "
          f"{cold[0]:.2f} s ({cached[0]} from the cache), warm {wall:.2f} s wall, {cpu:.2f} s "
          f"CPU ({cached[1]} from the cache; medians of {len(warm)}); cold/warm "
          f"{cold[0] / wall:.0f}x; the summary (no --json) warm {text_wall:.2f} s wall, "
          f"{text_cpu:.2f} s CPU; the cache holds {_mb(entries)}; documents identical (error "
          f"ids masked): {same}; load average up to {load:.1f} on {os.cpu_count()} cores "
          f"(goal: warm < 1 s)")


def _claude_lines(rep: int, lines: list[dict[str, Any]]) -> bytes:
    """One pass of a Claude Code session's lines, its tool call ids made this pass's own."""
    out = []
    for entry in lines:
        copy = json.loads(json.dumps(entry))
        copy["sessionId"] = "bench-grown"
        content = copy.get("message", {}).get("content") if isinstance(
            copy.get("message"), dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict):
                for field in ("id", "tool_use_id"):
                    if isinstance(block.get(field), str):
                        block[field] = f"{block[field]}-{rep}"
        out.append(json.dumps(copy) + "\n")
    return "".join(out).encode()


def grown(target_mb: int, rounds: int, tmp: Path) -> None:
    """Section 7: a Claude Code session that grew, resumed beside read whole."""
    source = max((DATA_2 / "claude-code").rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    lines = [json.loads(line) for line in source.read_bytes().splitlines() if line.strip()]
    path = tmp / "grown" / "session.jsonl"
    path.parent.mkdir()
    rep = 0
    with path.open("wb") as handle:
        while handle.tell() < target_mb * 1_000_000:
            handle.write(_claude_lines(rep, lines))
            rep += 1
    env = os.environ | {"FAILCODE_CACHE_DIR": str(tmp / "grown-cache")}
    _cli("triage", "--cache", "--json", str(path), env=env)
    resumed: list[float] = []
    whole: list[float] = []
    same = True
    for _ in range(rounds):
        with path.open("ab") as handle:
            added = 0
            while added < 1_000_000:
                added += handle.write(_claude_lines(rep, lines))
                rep += 1
        outs = [tmp / "resumed.json", tmp / "whole.json"]
        for times, out, flag in ((resumed, outs[0], "--cache"), (whole, outs[1], "--no-cache")):
            with out.open("w") as handle:
                times.append(_cli("triage", flag, "--json", str(path), env=env,
                                  stdout=handle)[0])
        documents = [json.loads(out.read_text()) for out in outs]
        same = same and documents[0].pop("resumed_inputs", None) == 1
        documents[0].pop("cached_inputs", None)
        same = same and _masked(json.dumps(documents[0])) == _masked(json.dumps(documents[1]))
    one, all_ = statistics.median(resumed), statistics.median(whole)
    print(f"7. a session that grew: a generated Claude Code transcript of "
          f"{_mb(path.stat().st_size)}, 1 MB appended before each of {rounds} rounds, fresh "
          f"processes: read from where the last run stopped {one:.2f} s, read whole "
          f"{all_:.2f} s (medians); whole/resumed {all_ / one:.1f}x; resumed every time and "
          f"documents identical (error ids masked): {same}")


def profile() -> None:
    files = _files()
    triage(files)
    profiler = cProfile.Profile()
    profiler.enable()
    triage(files)
    profiler.disable()
    for order in ("tottime", "cumulative"):
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats(order).print_stats(25)
        print(f"profile of triage of the real sessions ({order}):")
        print(text.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--big-mb", type=int, default=100)
    parser.add_argument("--rss-mb", type=int, default=256)
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--trial-copies", type=int, default=26,
                        help="copies of the corpus's Harbor trials in the job (--only harbor)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--home-mb", type=int, default=1024,
                        help="the generated home's size for the warm-cache section (MB)")
    parser.add_argument("--home-dir", type=Path,
                        help="where the generated home is kept (default: the user's cache "
                             "folder, failcode/bench/home-MB)")
    parser.add_argument("--grown-mb", type=int, default=100,
                        help="the generated session's size for the grown section (MB)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run of the warm-cache section: a 64 MB home")
    parser.add_argument("--only",
                        default="throughput,corpus2,formats,harbor,jobs,memory,startup,changes,"
                                "warm,grown",
                        help="the sections to run, comma-separated")
    args = parser.parse_args()
    only = set(args.only.split(","))
    if not _files():
        sys.exit(f"no data under {DATA}")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        if "throughput" in only:
            throughput(args.big_mb, args.rounds, tmp)
        if "corpus2" in only and DATA_2.is_dir():
            throughput_second(args.rounds)
        if "formats" in only:
            throughput_formats(args.rounds)
        if "harbor" in only and DATA_2.is_dir():
            harbor_job(args.trial_copies, tmp)
        if "jobs" in only:
            jobs(args.copies, args.rounds, tmp)
        if "memory" in only:
            memory(args.rss_mb, tmp)
        if "startup" in only:
            startup(args.rounds, tmp)
        if "changes" in only:
            changes(args.rounds)
        if "warm" in only and DATA_2.is_dir():
            warm_cache(64 if args.quick else args.home_mb, args.rounds, tmp, args.home_dir)
        if "grown" in only and DATA_2.is_dir():
            grown(args.grown_mb, args.rounds, tmp)
    if args.profile:
        profile()


if __name__ == "__main__":
    main()
