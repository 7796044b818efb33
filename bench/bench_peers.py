"""failcode triage beside two peer tools, whole process, on the same files (issue 37, item 2).

Every candidate is a fresh process per round; rounds are interleaved (the order rotates each
round, ``_timing.interleaved``), one untimed warm-up round checks each command's output, and
every ratio is the median of per-round ratios peer time / failcode time (> 1: failcode faster).

1. ccusage (npm ``ccusage@20.0.24`` with its native binary ``@ccusage/ccusage-<os>-<arch>``,
   installed by this bench under the user's cache folder, ``failcode/bench/peers/npm``): usage
   reports from the Claude Code, Codex, Gemini CLI, Qwen Code and Copilot CLI files of a home,
   run as ``HOME=<home> ccusage daily --json --offline`` (its exit status and the agents its
   JSON names are checked). Beside it, on the same home: ``failcode triage --json --no-cache``
   of the agents' folders and ``failcode triage --home --json --no-cache`` (cold: every file
   read), and ``failcode triage --home --json`` warm (its cache, in a temp folder, filled by
   one run before the rounds). Two homes: the real sessions of ../shared/data/agent-sessions
   and agent-sessions-2 copied where each agent keeps them (a temp folder), and the generated
   home of bench_triage_scale.py section 6 (``--home-mb``, default 64; the issue's figure is
   1024), kept under the user's cache folder (``failcode/bench/home-<MB>``).
2. agent-trajviz (PyPI ``agent-trajviz==0.3.0``, installed by this bench into its own venv,
   ``failcode/bench/peers/trajviz-venv``): one trajectory per process, ``agent-trajviz --json
   FILE -o DIR``. Its own loader is asked first (one process over every corpus file) which
   files it accepts and as which format; then per set of accepted files (one corpus folder)
   ``failcode triage --json --no-cache FILES`` (one process) beside trajviz on each file (one
   process per file, as its command reads one; the total), and per single file (the largest
   it reads) so that neither side gains from how its command takes files.

A peer that cannot be installed (no npm or no registry, no venv or no pip) or run is skipped
with a line that says why. The last lines say, per peer, whether failcode was faster than it
on every corpus it reads.

    python bench/bench_peers.py [--rounds 3] [--home-mb 64] [--only ccusage|trajviz]
    python bench/bench_peers.py --quick        # a small home (16 MB), 1 round
    nice -n 19 python bench/bench_peers.py     # on a shared machine
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _timing import interleaved, median_ratio
from bench_triage_scale import _HOME_AGENTS, _HOME_ENV, DATA, DATA_2, _home_dir, make_home
from failcode.triage._discover import default_locations

CCUSAGE_VERSION = "20.0.24"
TRAJVIZ_VERSION = "0.3.0"
INSTALL_TIMEOUT = 600

# The agents both read, by failcode's name and ccusage's; where each keeps its sessions under
# a home is failcode's own table (``triage --home``'s default_locations).
_CCUSAGE_NAMES = {"claude-code": "claude", "codex": "codex", "gemini-cli": "gemini",
                  "qwen-code": "qwen", "copilot-cli": "copilot"}
_PEER_ENV = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_DIR", "QWEN_DIR", "COPILOT_DIR",
             "CCUSAGE_DATA_DIR", "OPENCODE_DATA_DIR")

# Run in the trajviz venv: which files its loader (the one ``--json`` uses) accepts, and as
# what format; one JSON line per file.
_PROBE = """
import json, logging, sys
logging.disable(logging.CRITICAL)
from agent_trajviz import plugins
from agent_trajviz.api import FORMATS, load
plugins.load_plugins()
print(json.dumps({"formats": dict(FORMATS)}))
for path in sys.argv[1:]:
    try:
        run = load(path)
    except Exception as exc:  # what the command would print and exit 1 on
        print(json.dumps({"path": path, "error": f"{type(exc).__name__}: {exc}"[:160]}))
        continue
    fmt = getattr(run, "format", None) or getattr(getattr(run, "meta", None), "format", None)
    print(json.dumps({"path": path, "format": str(fmt)}))
"""


class SkipError(Exception):
    """A peer or an input that cannot be measured; its message says why."""


def _cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "failcode" / "bench"


def _mb(size: int) -> float:
    return size / 1e6


def _size(paths: list[Path]) -> int:
    total = 0
    for path in paths:
        if path.is_file():
            total += path.stat().st_size
        else:
            total += sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return total


def _relative(path: Path) -> str:
    """A path as printed: relative to the current folder where it can be, else its name."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return path.name


def _install(argv: list[str], what: str) -> None:
    print(f"  installing {what}: {' '.join(argv)}", flush=True)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SkipError(f"installing {what} failed: {exc}") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()] or ["(no message)"]
        errors = [line for line in lines if "error" in line.lower() and "log of" not in line]
        said = "; ".join(errors[:3]) if errors else lines[-1]
        raise SkipError(f"installing {what} failed (exit {done.returncode}): {said[:300]}")


# ----------------------------------------------------------------------------- peers


def ccusage_binary() -> Path:
    """The native ccusage binary, installed under the user's cache folder when missing."""
    system = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(sys.platform)
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower())
    if not system or not arch:
        raise SkipError(f"ccusage ships no native binary for {sys.platform}/"
                        f"{platform.machine()}")
    package = f"@ccusage/ccusage-{system}-{arch}"
    prefix = _cache_root() / "peers" / "npm"
    folder = prefix / "node_modules" / package
    binary = folder / "bin" / ("ccusage.exe" if system == "win32" else "ccusage")
    try:
        version = json.loads((folder / "package.json").read_text()).get("version")
    except (OSError, ValueError):
        version = None
    if version != CCUSAGE_VERSION or not binary.is_file():
        npm = shutil.which("npm")
        if not npm:
            raise SkipError("npm is not installed (it installs ccusage)")
        prefix.mkdir(parents=True, exist_ok=True)
        _install([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                  f"ccusage@{CCUSAGE_VERSION}", f"{package}@{CCUSAGE_VERSION}"],
                 f"ccusage {CCUSAGE_VERSION}")
        if not binary.is_file():
            raise SkipError(f"npm installed no {package} binary (the registry may lack it)")
    binary.chmod(0o755)  # the package ships it without the bit; ccusage's wrapper sets it too
    return binary


def trajviz_command() -> Path:
    """agent-trajviz in its own venv under the user's cache folder, installed when missing."""
    venv = _cache_root() / "peers" / "trajviz-venv"
    scripts = venv / ("Scripts" if sys.platform == "win32" else "bin")
    python, command = scripts / "python", scripts / "agent-trajviz"
    check = [str(python), "-c",
             "import importlib.metadata as m; print(m.version('agent-trajviz'))"]
    found = (subprocess.run(check, capture_output=True, text=True, check=False).stdout.strip()
             if python.is_file() else "")
    if found != TRAJVIZ_VERSION or not command.is_file():
        if not python.is_file():
            _install([sys.executable, "-m", "venv", str(venv)], "a venv for agent-trajviz")
        _install([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                  f"agent-trajviz=={TRAJVIZ_VERSION}"], f"agent-trajviz {TRAJVIZ_VERSION}")
        if not command.is_file():
            raise SkipError("pip installed no agent-trajviz command")
    return command


# ----------------------------------------------------------------------------- inputs


def real_home(folder: Path) -> Path:
    """The real sessions of both corpora copied where each agent keeps them under a home.

    The second corpus keeps each file under its upstream path (``<agent>/<repo>/.codex/...``):
    the path from the agent's dot folder on is where it goes. The first corpus's Claude Code
    transcripts go to a project folder of their own each.
    """
    for agent in _HOME_AGENTS:
        for repo in sorted(p for p in (DATA_2 / agent).glob("*") if p.is_dir()):
            for path in sorted(p for p in repo.rglob("*") if p.is_file()):
                parts = path.relative_to(repo).parts
                dots = [i for i, part in enumerate(parts) if part.startswith(".")]
                if not dots:
                    continue
                target = folder.joinpath(*parts[dots[0]:])
                if target.exists():  # the same project name in two repositories
                    target = target.with_name(f"{repo.name}-{target.name}")
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
    for path in sorted((DATA / "claude-code").rglob("*.jsonl")):
        project = "-".join(path.relative_to(DATA / "claude-code").parts[:-1])
        target = folder / ".claude" / "projects" / f"-agent-sessions-{project}" / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return folder


def _agent_locations(home: Path) -> list[tuple[str, Path]]:
    """(ccusage's name, folder) of each agent both read whose folder exists under ``home``."""
    return [(_CCUSAGE_NAMES[found.agent], found.folder)
            for found in default_locations({}, home, home)
            if found.agent in _CCUSAGE_NAMES and found.folder.is_dir()]


def _agent_folders(home: Path) -> list[Path]:
    return [folder for _, folder in _agent_locations(home)]


def _expected_agents(home: Path) -> set[str]:
    return {name for name, _ in _agent_locations(home)}


# ----------------------------------------------------------------------------- running


class Command:
    """One candidate: a command run as a fresh process, its output kept and checked."""

    def __init__(self, label: str, argv: list[str], out: Path, *, env: dict[str, str],
                 ok: tuple[int, ...] = (0,), outputs: list[tuple[list[str], Path]] | None = None,
                 ) -> None:
        self.label, self.env, self.ok = label, env, ok
        self.runs = outputs or [(argv, out)]  # several processes for a per-file peer
        self.cpu: list[float] = []  # user + system seconds of each call, the warm-up's first

    def __call__(self) -> None:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        for argv, out in self.runs:
            with out.open("wb") as handle:
                done = subprocess.run(argv, stdout=handle, stderr=subprocess.PIPE,
                                      env=self.env, check=False)
            if done.returncode not in self.ok:
                tail = (done.stderr.decode("utf-8", "replace").strip().splitlines()
                        or ["(no message)"])[-1]
                raise SkipError(f"{self.label} exited {done.returncode}: {tail[:200]}")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)

    def cpu_median(self) -> float:
        return statistics.median(self.cpu[1:] or self.cpu)


def _env(home: Path | None = None, cache: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _HOME_ENV + _PEER_ENV}
    if home is not None:
        env["HOME"] = str(home)
    if cache is not None:
        env["FAILCODE_CACHE_DIR"] = str(cache)
    return env


def _failcode(*args: str) -> list[str]:
    return [sys.executable, "-m", "failcode", "triage", *args]


def _failcode_document(out: Path) -> dict[str, Any]:
    try:
        document = json.loads(out.read_bytes())
    except ValueError:
        raise SkipError(f"failcode printed no JSON document ({out.name})") from None
    return document


def _measure(candidates: dict[str, Command], rounds: int) -> dict[str, list[float]]:
    return interleaved(dict(candidates), rounds, warmup=1)


# command, failcode s, peer s, ratio, MB read, failcode CPU s, peer CPU s
Row = tuple[str, float, float, float, float, float, float]


def _table(title: str, rows: list[Row]) -> None:
    print(f"\n{title}")
    print("| command | failcode s | peer s | peer/failcode | MB read | CPU s failcode / peer |")
    print("|---|---|---|---|---|---|")
    for label, ours, theirs, ratio, size, our_cpu, their_cpu in rows:
        print(f"| {label} | {ours:.2f} | {theirs:.2f} | {ratio:.2f}x | {size:.1f} | "
              f"{our_cpu:.2f} / {their_cpu:.2f} |")


# ----------------------------------------------------------------------------- ccusage


def bench_ccusage(homes: list[tuple[str, Path]], rounds: int, tmp: Path) -> dict[str, list[float]]:
    """Per home: the three failcode runs beside ccusage; ratios per failcode run."""
    print("\n== ccusage", CCUSAGE_VERSION, "==", flush=True)
    binary = ccusage_binary()
    print(f"  ccusage: {_relative(binary)}")
    ratios: dict[str, list[float]] = {}
    for name, home in homes:
        folders = _agent_folders(home)
        files = [p for p in home.rglob("*") if p.is_file() and p.name != ".complete"]
        home_mb = _mb(sum(p.stat().st_size for p in files))
        paths_mb = _mb(_size(folders))
        work = tmp / f"ccusage-{name}"
        work.mkdir()
        cache = work / "triage-cache"
        fill = subprocess.run(_failcode("--home", "--json"), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=_env(home, cache), check=False)
        if fill.returncode not in (0, 2):
            print(f"  skipped {name}: filling failcode's cache exited {fill.returncode}")
            continue
        candidates = {
            "paths": Command("failcode triage --json --no-cache PATHS",
                             _failcode("--json", "--no-cache", *map(str, folders)),
                             work / "paths.json", env=_env(home, work / "unused-cache"),
                             ok=(0, 2)),
            "home-cold": Command("failcode triage --home --json --no-cache",
                                 _failcode("--home", "--json", "--no-cache"),
                                 work / "home-cold.json", env=_env(home, work / "unused-cache"),
                                 ok=(0, 2)),
            "home-warm": Command("failcode triage --home --json",
                                 _failcode("--home", "--json"), work / "home-warm.json",
                                 env=_env(home, cache), ok=(0, 2)),
            "ccusage": Command("ccusage daily --json --offline",
                               [str(binary), "daily", "--json", "--offline"],
                               work / "ccusage.json", env=_env(home)),
        }
        try:
            times = _measure(candidates, rounds)
            report = json.loads((work / "ccusage.json").read_bytes())
            named = {agent for day in report.get("daily", [])
                     for agent in day.get("metadata", {}).get("agents", [])}
            documents = {key: _failcode_document(work / f"{key}.json")
                         for key in ("paths", "home-cold", "home-warm")}
        except SkipError as exc:
            print(f"  skipped {name}: {exc}")
            continue
        except ValueError:
            print(f"  skipped {name}: ccusage printed no JSON report")
            continue
        expected = _expected_agents(home)
        missing = sorted(expected - named)
        warm = documents["home-warm"]
        print(f"\n  input {name}: {len(files)} files, {home_mb:.1f} MB "
              f"({', '.join(sorted(expected))}); ccusage named {', '.join(sorted(named))}"
              + (f"; MISSING {', '.join(missing)}" if missing else "")
              + f"; failcode read {len(documents['paths'].get('inputs', []))} inputs from "
              f"the folders, {len(documents['home-cold'].get('inputs', []))} with --home "
              f"({warm.get('cached_inputs')} of {len(warm.get('inputs', []))} warm from the "
              f"cache)")
        peer = statistics.median(times["ccusage"])
        rows = []
        for key, label, size in (
                ("paths", "`failcode triage --json --no-cache PATHS` (cold)", paths_mb),
                ("home-cold", "`failcode triage --home --json --no-cache` (cold)", home_mb),
                ("home-warm", "`failcode triage --home --json` (warm cache)", home_mb)):
            ratio = median_ratio(times, "ccusage", key)
            ratios.setdefault(key, []).append(ratio)
            rows.append((label, statistics.median(times[key]), peer, ratio, size,
                         candidates[key].cpu_median(), candidates["ccusage"].cpu_median()))
        _table(f"ccusage daily --json --offline, HOME = {name} (medians of {rounds} rounds)",
               rows)
    return ratios


# ----------------------------------------------------------------------------- trajviz


def _corpus_files() -> list[Path]:
    return sorted(p for root in (DATA, DATA_2) if root.is_dir() for p in root.rglob("*")
                  if p.is_file() and p.name != "SOURCES.md")


def _set_name(path: Path) -> str:
    for root in (DATA, DATA_2):
        if path.is_relative_to(root):
            return f"{root.name}/{path.relative_to(root).parts[0]}"
    return path.parent.name


def bench_trajviz(rounds: int, tmp: Path, quick: bool) -> list[float]:
    print("\n== agent-trajviz", TRAJVIZ_VERSION, "==", flush=True)
    command = trajviz_command()
    python = command.parent / "python"
    files = _corpus_files()
    probe = subprocess.run([str(python), "-c", _PROBE, *map(str, files)], capture_output=True,
                           text=True, check=False)
    lines = [json.loads(line) for line in probe.stdout.splitlines() if line.startswith("{")]
    if probe.returncode != 0 or not lines:
        raise SkipError(f"its loader could not be asked which files it reads: "
                        f"{probe.stderr[-200:]}")
    formats = lines[0]["formats"]
    accepted = {Path(line["path"]): line["format"] for line in lines[1:] if "format" in line}
    print(f"  formats it reads: {', '.join(formats.values())}")
    sets: dict[str, list[Path]] = {}
    for path in files:
        sets.setdefault(_set_name(path), []).append(path)
    for name, members in sets.items():
        taken = [p for p in members if p in accepted]
        kinds = sorted({accepted[p] for p in taken})
        print(f"  {name}: {len(taken)} of {len(members)} files read"
              + (f" (as {', '.join(kinds)})" if kinds else ""))
    if not accepted:
        raise SkipError("it reads none of the corpus files")
    out = tmp / "trajviz"
    out.mkdir()
    env = _env()

    def trajviz(paths: list[Path], label: str) -> Command:
        runs = [([str(command), "--json", str(p), "-o", str(out / f"{i}.views")],
                 out / f"{i}.stdout") for i, p in enumerate(paths)]
        return Command(label, runs[0][0], runs[0][1], env=env, outputs=runs)

    def failcode(paths: list[Path], label: str) -> Command:
        return Command(label, _failcode("--json", "--no-cache", *map(str, paths)),
                       out / "failcode.json", env=_env(cache=out / "unused-cache"), ok=(0, 2))

    chosen = {name: [p for p in members if p in accepted] for name, members in sets.items()}
    chosen = {name: taken for name, taken in chosen.items() if taken}
    largest = max(accepted, key=lambda p: p.stat().st_size)
    cases = [(f"{name} ({len(taken)} files, {', '.join(sorted({accepted[p] for p in taken}))})",
              taken) for name, taken in chosen.items()]
    cases.append((f"the largest file it reads ({_set_name(largest)}, {accepted[largest]})",
                  [largest]))
    if quick:
        cases = cases[-1:]
    rows: list[Row] = []
    ratios = []
    for label, paths in cases:
        candidates = {"failcode": failcode(paths, "failcode triage --json --no-cache"),
                      "trajviz": trajviz(paths, "agent-trajviz --json")}
        try:
            times = _measure(candidates, rounds)
            _failcode_document(out / "failcode.json")
        except SkipError as exc:
            print(f"  skipped {label}: {exc}")
            continue
        ratio = median_ratio(times, "trajviz", "failcode")
        ratios.append(ratio)
        rows.append((label, statistics.median(times["failcode"]),
                     statistics.median(times["trajviz"]), ratio, _mb(_size(paths)),
                     candidates["failcode"].cpu_median(), candidates["trajviz"].cpu_median()))
    _table("`failcode triage --json --no-cache FILES` (one process) beside `agent-trajviz --json "
           f"FILE -o DIR` (one process per file, the total), medians of {rounds} rounds", rows)
    return ratios


# ----------------------------------------------------------------------------- main


def _verdict(ratios: list[float]) -> str:
    if not ratios:
        return "not measured"
    met = all(r > 1 for r in ratios)
    return (f"{'met' if met else 'MISSED'} ({len([r for r in ratios if r > 1])} of "
            f"{len(ratios)} corpora faster; ratios {', '.join(f'{r:.2f}x' for r in ratios)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--home-mb", type=int, default=64,
                        help="the generated home's size (MB; the issue's figure is 1024)")
    parser.add_argument("--quick", action="store_true",
                        help="a small generated home (16 MB), 1 round, trajviz on one file")
    parser.add_argument("--only", choices=("ccusage", "trajviz"))
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    home_mb = 16 if args.quick else args.home_mb
    if not DATA.is_dir() or not DATA_2.is_dir():
        sys.exit(f"the corpora are missing: {_relative(DATA)}, {_relative(DATA_2)}")
    print(f"bench_peers: {rounds} round(s), load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores", flush=True)
    verdicts: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        if args.only in (None, "ccusage"):
            try:
                homes = [("real sessions", real_home(tmp / "real-home"))]
                generated = _home_dir(home_mb)
                print(f"  generated home: {home_mb} MB ({generated.name}, under the user's "
                      "cache folder; written once)", flush=True)
                make_home(generated, home_mb)
                homes.append((f"generated {generated.name}", generated))
                ratios = bench_ccusage(homes, rounds, tmp)
                verdicts["ccusage"] = "; ".join(
                    f"{label}: {_verdict(ratios.get(key, []))}"
                    for key, label in (("home-cold", "cold --home"), ("paths", "cold PATHS"),
                                       ("home-warm", "warm --home")))
            except SkipError as exc:
                print(f"  skipped ccusage: {exc}")
                verdicts["ccusage"] = f"skipped ({exc})"
        if args.only in (None, "trajviz"):
            try:
                verdicts["trajviz"] = _verdict(bench_trajviz(rounds, tmp, args.quick))
            except SkipError as exc:
                print(f"  skipped agent-trajviz: {exc}")
                verdicts["trajviz"] = f"skipped ({exc})"
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
    print("goal: failcode faster than the peer on every corpus it reads")
    for peer, verdict in verdicts.items():
        print(f"  {peer}: {verdict}")


if __name__ == "__main__":
    main()
