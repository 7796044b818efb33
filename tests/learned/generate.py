"""Run the examples for real and write them as JSON lines (see :mod:`tests.learned`).

Each example runs in a fresh temporary project: its files are written, its setup script runs
(``bash -c``), then its command (``bash -c``) in the environment of the lab's scenario
commands (:func:`tests.lab.agents.tool_env`: offline, a private HOME and TMPDIR), under the
case's time limit. An example whose command does not exit as its case states (or whose setup
fails, whose output lacks what its case says it prints, or that overruns its time limit) is
left out and reported, never written with a label
that may be wrong.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tests.lab.agents import tool_env
from tests.learned.catalogue import CASES, Case, Example, cases_hash, load_all

if TYPE_CHECKING:
    from collections.abc import Callable

KEEP_CHARS: Final = 16 * 1024
"""Of each stream, the last this many characters are kept (the end says why it failed)."""

GITCONFIG: Final = ("[user]\n\tname = learned\n\temail = learned@example.invalid\n"
                    "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n")


@dataclass(frozen=True, slots=True)
class Ran:
    """One example as it ran: its record when it exited as stated, else why it was left out."""

    example: Example
    record: dict[str, Any] | None
    problem: str | None


def cache_dir() -> Path:
    """``FAILCODE_LEARNED_CACHE``, else ``$XDG_CACHE_HOME`` (else ``~/.cache``)
    ``/failcode/learned``: outside the repository, like the lab's agents."""
    chosen = os.environ.get("FAILCODE_LEARNED_CACHE")
    if chosen:
        return Path(chosen)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "failcode" / "learned"


def output_path(folder: Path, only: str | None, cases: Path = CASES) -> Path:
    """The examples file for the case files as they are now (one ecosystem's with ``only``)."""
    label = f"{only}-" if only else ""
    return folder / f"examples-{label}{cases_hash(cases, only)}.jsonl"


def _tail(data: bytes) -> tuple[str, bool]:
    text = data.decode("utf-8", errors="replace")
    return text[-KEEP_CHARS:], len(text) > KEEP_CHARS


def _run(argv: list[str], cwd: Path, env: dict[str, str],
         timeout_s: float) -> tuple[int | None, bytes, bytes]:
    """Run ``argv`` in its own process group; on overrunning, kill the group (exit None)."""
    with subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            return None, out, err
        return proc.returncode, out, err


def learned_env() -> dict[str, str]:
    """What the examples' environment adds to the lab's: Go's build cache, shared (else every
    example compiles the standard library again; the output does not depend on it), and pytest
    without the plugins of the repository's environment (a bare pytest, as a project has it,
    and 20 times faster to start)."""
    return {"GOCACHE": str(cache_dir() / "go-build"), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def missing_tools(case: Case, env: dict[str, str]) -> list[str]:
    """The programs the case needs that are not on the examples' PATH."""
    return [tool for tool in case.tools if shutil.which(tool, path=env["PATH"]) is None]


def run_example(example: Example) -> Ran:
    """Run one example in a fresh temporary project; its record, or why it is left out."""
    case = example.case
    with tempfile.TemporaryDirectory(prefix="failcode-learned-") as raw:
        root = Path(raw)
        home, tmp, project = root / "home", root / "tmp", root / "project"
        for folder in (home, tmp, project):
            folder.mkdir()
        (home / ".gitconfig").write_text(GITCONFIG)
        env = tool_env(home, tmp) | learned_env()
        absent = missing_tools(case, env)
        if absent:
            return Ran(example, None, f"not installed: {', '.join(absent)}")
        for rel, text in example.files.items():
            target = project / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        if example.setup.strip():
            status, out, err = _run(["bash", "-ec", example.setup], project, env, case.timeout_s)
            if status != 0:
                said = _tail(out + err)[0][-400:]
                return Ran(example, None, f"setup exited {status}: {said}")
        argv = ["bash", "-c", example.command]
        started = time.monotonic()
        status, out, err = _run(argv, project, env, case.timeout_s)
        seconds = round(time.monotonic() - started, 3)
    if status is None:
        return Ran(example, None, f"overran its time limit of {case.timeout_s:g} s")
    if status != case.exit:
        said = _tail(out + err)[0][-400:]
        return Ran(example, None, f"exited {status}, not {case.exit}: {said}")
    if example.says and not re.search(example.says, _tail(out + err)[0]):
        said = _tail(out + err)[0][-400:]
        return Ran(example, None, f"exited {status}, but its output lacks /{example.says}/: {said}")
    stdout, stdout_cut = _tail(out)
    stderr, stderr_cut = _tail(err)
    record = {
        "id": example.id, "case": case.id, "ecosystem": case.ecosystem,
        "program": case.program, "command": example.command, "argv": argv,
        "params": example.values, "exit": status, "stdout": stdout, "stderr": stderr,
        "stdout_truncated": stdout_cut, "stderr_truncated": stderr_cut,
        "kind": case.kind, "class": case.error_class, "seconds": seconds,
    }
    return Ran(example, record, None)


def generate(cases: list[Case], out: Path, *, jobs: int = 2,
             progress: Callable[[int, int], None] | None = None,
             ) -> tuple[list[dict[str, Any]], list[Ran]]:
    """Run every example of ``cases`` (``jobs`` at once) and write the ones that exited as
    stated to ``out`` (atomically: a run cut short leaves no file). ``progress(done, total)``
    is called after each example. Returns the records and the examples left out."""
    examples = [example for case in cases for example in case.examples()]
    ran = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for done, result in enumerate(pool.map(run_example, examples), start=1):
            ran.append(result)
            if progress is not None:
                progress(done, len(examples))
    records = [r.record for r in ran if r.record is not None]
    left_out = [r for r in ran if r.record is None]
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_suffix(".partial")
    with partial.open("w") as handle:
        for record in records:
            handle.write(json.dumps(record, sort_keys=True) + "\n")
    partial.replace(out)
    left = [{"id": r.example.id, "case": r.example.case.id, "problem": r.problem}
            for r in left_out]
    out.with_suffix(".left-out.json").write_text(json.dumps(left, indent=1) + "\n")
    return records, left_out


def read_examples(path: Path) -> list[dict[str, Any]]:
    """The records of an examples file."""
    with path.open() as handle:
        return [json.loads(line) for line in handle if line.strip()]


def summary(records: list[dict[str, Any]]) -> str:
    """Examples per program, per kind and per class, and how many programs."""
    lines = [f"{len(records)} examples from {len({r['program'] for r in records})} programs"]
    for title, key in (("program", "program"), ("kind", "kind"), ("class", "class"),
                       ("ecosystem", "ecosystem")):
        counts = Counter(str(r[key]) for r in records)
        lines.append(f"\nper {title} ({len(counts)}):")
        lines += [f"  {count:6d}  {name}" for name, count in sorted(
            counts.items(), key=lambda item: (-item[1], item[0]))]
    return "\n".join(lines)


def load_cases(only: str | None) -> list[Case]:
    return load_all(CASES, only)
