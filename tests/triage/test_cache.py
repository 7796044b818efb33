"""Incremental triage (``failcode.triage.analysis._cache``): a warm run's results are a cold
run's, whatever changed in between; what the cache cannot trust is a miss, never an error.

Every run here sets ``FAILCODE_CACHE_DIR`` to a temporary folder (``tests/conftest.py`` does
so for the whole suite). Real sessions are read in place; the ones a test changes are copied
into a temporary folder first.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import jsonschema
import msgspec
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import failcode
from failcode.cli import main
from failcode.triage import triage
from failcode.triage.analysis import _cache
from failcode.triage.analysis._analyze import expand
from failcode.triage.analysis._cache import cache_dir, code_hash
from failcode.triage.readers import READERS
from tests._paths import REPO
from tests.triage._data import mask_error_ids, sessions_2_dir, sessions_dir

if TYPE_CHECKING:
    from collections.abc import Sequence

    from failcode.triage import TriageResult

FIXTURES = REPO / "tests" / "lab" / "fixtures"
"""The lab's recorded sessions: every agent's logs, OpenHands folders and OpenCode databases."""
BY_PATH = {reader.name for reader in READERS if getattr(reader, "reads_path", False)}


@pytest.fixture
def cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("FAILCODE_CACHE_DIR", str(folder))
    return folder


def _doc(result: TriageResult) -> str:
    """The JSON document with the error ids masked (unique per occurrence, per run)."""
    return mask_error_ids(json.dumps(result.to_dict(), sort_keys=True))


def _cacheable(result: TriageResult, inputs: Sequence[tuple[Path, str]]) -> int:
    """How many inputs the cache can hold: regular files not read by path."""
    return sum(path.is_file() and item.format not in BY_PATH
               for (path, _), item in zip(inputs, result.inputs, strict=False))


def test_every_real_file_comes_back_from_the_cache_as_it_was_read(cache_folder: Path) -> None:
    """Both corpora and the lab's fixtures: the warm run takes every file it can from the
    cache and its result is the cold run's (record for record, error ids included, for the
    inputs it took from the cache)."""
    roots = [sessions_dir(), sessions_2_dir(), FIXTURES]
    inputs = expand(roots)
    cold = triage(roots, cache=True, jobs=2)
    assert cold.cached_inputs == 0
    assert len(list(cache_folder.rglob("*"))) > 500
    warm = triage(roots, cache=True, jobs=2)
    assert warm.cached_inputs == _cacheable(cold, inputs) > 500
    assert warm.inputs == cold.inputs
    assert _doc(warm) == _doc(cold)
    read = {label for (path, label), item in zip(inputs, cold.inputs, strict=True)
            if not path.is_file() or item.format in BY_PATH}  # read again: new error ids
    assert [s for s in warm.sessions if s.path not in read] == [
        s for s in cold.sessions if s.path not in read]


def _copies(folder: Path) -> list[Path]:
    """Small real JSON-lines sessions of several agents (Claude Code, Codex, Copilot CLI,
    Qwen Code), copied into ``folder``: under 100 KiB, so their whole content is in the key's
    hash."""
    root = sessions_2_dir()
    out = []
    for agent, count in (("claude-code", 2), ("codex", 1), ("copilot-cli", 1),
                         ("qwen-code", 1)):
        small = [p for p in sorted((root / agent).rglob("*.jsonl"))
                 if p.stat().st_size < 100_000]
        for path in small[:count]:
            target = folder / f"{len(out)}-{path.name}"
            shutil.copyfile(path, target)
            out.append(target)
    assert len(out) == 5
    return out


_OPS = st.lists(st.tuples(st.sampled_from(["append", "append-other", "truncate", "touch",
                                           "none"]),
                          st.integers(0, 10), st.floats(0.0, 1.0)), min_size=1, max_size=5)


@settings(max_examples=15)
@given(steps=st.lists(_OPS, min_size=1, max_size=3), jobs=st.sampled_from([1, 2]))
def test_a_warm_run_is_a_cold_run_whatever_changed(steps: list[list[tuple[str, int, float]]],
                                                   jobs: int) -> None:
    """Lines appended (the file's own, or another agent's), a file cut anywhere (mid-line
    too), a touched modification time, between runs: each warm run equals a run without the
    cache, and takes from the cache exactly the files that did not change."""
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        cache = folder / "cache"
        sessions = folder / "sessions"
        sessions.mkdir()
        files = _copies(sessions)
        env = os.environ.get("FAILCODE_CACHE_DIR")
        os.environ["FAILCODE_CACHE_DIR"] = str(cache)
        try:
            assert triage(files, cache=True).cached_inputs == 0
            for ops in steps:
                before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files}
                for kind, which, amount in ops:
                    _change(files, kind, which, amount)
                unchanged = sum((p.read_bytes(), p.stat().st_mtime_ns) == before[p]
                                for p in files)
                warm = triage(files, cache=True, jobs=jobs)
                assert warm.cached_inputs == unchanged
                assert _doc(warm) == _doc(triage(files))
        finally:
            if env is None:
                del os.environ["FAILCODE_CACHE_DIR"]
            else:
                os.environ["FAILCODE_CACHE_DIR"] = env


def _change(files: list[Path], kind: str, which: int, amount: float) -> None:
    path = files[which % len(files)]
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    if kind == "append":  # the file's own lines again (an agent running the same commands)
        start = int(amount * len(lines))
        with path.open("ab") as handle:
            handle.writelines(lines[start:start + 1 + which])
    elif kind == "append-other":  # another session's lines (of another agent, maybe)
        other = files[(which + 1) % len(files)].read_bytes().splitlines(keepends=True)
        with path.open("ab") as handle:
            handle.writelines(other[:1 + which])
    elif kind == "truncate":  # cut anywhere, mid-line too
        with path.open("r+b") as handle:
            handle.truncate(int(len(data) * amount))
    elif kind == "touch":
        info = path.stat()
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1 + int(amount * 1e9)))


def _biggest_claude_code(folder: Path) -> Path:
    """A copy in ``folder`` of the largest real Claude Code session (larger than head and
    tail together)."""
    big = max((sessions_2_dir() / "claude-code").rglob("*.jsonl"),
              key=lambda p: p.stat().st_size)
    assert big.stat().st_size > 2 * _cache.EDGE
    path = folder / "s" / big.name
    path.parent.mkdir()
    shutil.copyfile(big, path)
    return path


def test_a_session_that_grew_is_read_from_where_the_last_run_stopped(cache_folder: Path,
                                                                     tmp_path: Path) -> None:
    """A real Claude Code session appended to: a whole line, then a half line (its error is
    the cold run's), then the rest of that line. Each run equals a cold one; the first two are
    resumed (a file that ends in a half line leaves no checkpoint: the third reads it whole)."""
    path = _biggest_claude_code(tmp_path)
    assert triage([path.parent], cache=True).cached_inputs == 0
    assert triage([path.parent], cache=True).cached_inputs == 1
    lines = path.read_bytes().splitlines(keepends=True)
    half = len(lines[-1]) // 2
    for extra, resumed in ((lines[len(lines) // 2], 1), (lines[-1][:half], 1),
                           (lines[-1][half:], 0)):
        with path.open("ab") as handle:
            handle.write(extra)
        warm = triage([path.parent], cache=True)
        assert (warm.cached_inputs, warm.resumed_inputs) == (0, resumed)
        assert _doc(warm) == _doc(triage([path.parent]))
    assert triage([path.parent], cache=True).inputs[0].error_code is None


def test_a_resumed_run_reads_only_what_was_added(cache_folder: Path, tmp_path: Path) -> None:
    """Proof that the bytes before the checkpoint are not read again: lines in the middle of
    the session (outside the hashed edges) are overwritten with bytes that are not JSON, the
    size kept; a cold run stops at them (FC-DATA-003), the resumed run does not see them and
    reads the lines added after, as a run before the damage would."""
    path = _biggest_claude_code(tmp_path)
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    cut = sum(len(line) for line in lines[: len(lines) // 2])
    path.write_bytes(data[:cut])
    triage([path.parent], cache=True)
    middle = cut // 2
    with path.open("r+b") as handle:  # inside the file, outside both edges
        assert _cache.EDGE < middle < cut - _cache.EDGE - 100
        handle.seek(middle)
        handle.write(b"\x00not json\n" * 8)
    with path.open("ab") as handle:
        handle.write(data[cut:])
    resumed = triage([path.parent], cache=True)
    assert resumed.resumed_inputs == 1
    assert resumed.inputs[0].error_code is None
    assert triage([path.parent]).inputs[0].error_code == "FC-DATA-003"
    whole = tmp_path / "whole" / path.name
    whole.parent.mkdir()
    whole.write_bytes(data)
    assert _doc(resumed) == _doc(triage([whole.parent])).replace(str(whole), str(path))


@pytest.mark.parametrize("damage", ["state", "reading", "reader", "edges"])
def test_a_checkpoint_that_cannot_be_trusted_reads_the_file_whole(
        cache_folder: Path, tmp_path: Path, damage: str) -> None:
    """An entry whose checkpoint holds a reader state or sessions that do not decode, names
    another reader, or whose edges no longer match the file (an entry whole by its own hash):
    the grown file is read whole, and the result is the cold run's."""
    path = _biggest_claude_code(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[: len(lines) // 2]))
    triage([path.parent], cache=True)
    (entry,) = _entries(cache_folder)
    body = entry.read_bytes()[_cache._SUM:]
    stored = _cache._ENTRY.decode(body)
    assert stored.checkpoint is not None
    broken = {"state": {"state": b"\xc1"}, "reading": {"reading": b"\x92\x01"},
              "reader": {"reader": "codex"}, "edges": {"edges": bytes(16)}}[damage]
    stored.checkpoint = msgspec.structs.replace(stored.checkpoint, **broken)
    again = _cache._ENCODER.encode(stored)
    entry.write_bytes(_cache._checksum(again) + again)
    with path.open("ab") as handle:
        handle.writelines(lines[len(lines) // 2:])
    warm = triage([path.parent], cache=True)
    assert (warm.cached_inputs, warm.resumed_inputs) == (0, 0)
    assert _doc(warm) == _doc(triage([path.parent]))


RESUMABLE = sorted(reader.name for reader in READERS if hasattr(reader, "state_type"))
"""The formats read from where the last run stopped."""


def test_the_formats_that_resume() -> None:
    """Claude Code transcripts and Codex rollouts: the JSON-lines logs that grow the most."""
    assert RESUMABLE == ["claude-code", "codex"]


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_every_real_session_resumed_anywhere_is_a_cold_run(data: st.DataObject) -> None:
    """Any real session of a format that resumes, of either corpus, written in two to four
    parts cut at any line (as the agent appends): after each part a resumed run equals a cold
    one."""
    agent = data.draw(st.sampled_from(RESUMABLE))
    sessions = sorted([*(sessions_dir() / agent).rglob("*.jsonl"),
                       *(sessions_2_dir() / agent).rglob("*.jsonl")])
    source = data.draw(st.sampled_from(sessions))
    lines = source.read_bytes().splitlines(keepends=True)
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(lines) - 1)), min_size=1,
                                         max_size=3))))
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        path = folder / "s" / "session.jsonl"
        path.parent.mkdir()
        env = os.environ.get("FAILCODE_CACHE_DIR")
        os.environ["FAILCODE_CACHE_DIR"] = str(folder / "cache")
        try:
            start, checkpoint = 0, False
            for cut in [*cuts, len(lines)]:
                if cut == start:
                    continue
                with path.open("ab") as handle:
                    handle.writelines(lines[start:cut])
                start = cut
                warm = triage([path.parent], cache=True)
                assert _doc(warm) == _doc(triage([path.parent]))
                read = warm.inputs[0]
                # resumed: the last run left a checkpoint (it read the file without error)
                assert warm.resumed_inputs == checkpoint
                checkpoint = read.error_code is None and read.format == agent
        finally:
            if env is None:
                del os.environ["FAILCODE_CACHE_DIR"]
            else:
                os.environ["FAILCODE_CACHE_DIR"] = env


def _entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))


def _damage(entry: Path, how: str) -> None:
    data = entry.read_bytes()
    if how == "truncated":
        entry.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        entry.write_bytes(b"")
    elif how == "garbage":
        entry.write_bytes(os.urandom(len(data)))
    elif how == "flipped":  # one byte of a string in the middle changed
        middle = len(data) // 2
        entry.write_bytes(data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1:])
    elif how == "not json of ours":
        entry.write_bytes(b'{"schema": 1}')
    elif how == "a folder":
        entry.unlink()
        entry.mkdir()
    elif how == "unreadable":  # a link to itself: opening it fails for root too (ELOOP)
        entry.unlink()
        entry.symlink_to(entry.name)


@pytest.mark.parametrize("how", ["truncated", "empty", "garbage", "flipped",
                                 "not json of ours", "a folder", "unreadable"])
def test_a_damaged_entry_is_a_miss(cache_folder: Path, how: str) -> None:
    """A truncated, empty, random, bit-flipped, foreign, folder or unreadable entry: the run
    reads the file again (a miss), never fails, and reports what a cold run reports."""
    root = sessions_dir() / "claude-code"
    cold = triage([root], cache=True)
    entries = _entries(cache_folder)
    assert len(entries) == len(cold.inputs) >= 3
    for entry in entries[::2]:
        _damage(entry, how)
    warm = triage([root], cache=True)
    assert warm.cached_inputs == len(entries) - len(entries[::2])
    assert _doc(warm) == _doc(cold)
    if how == "flipped":  # a damaged entry that still decodes is still the wrong entry
        assert warm.inputs == cold.inputs


def test_another_failcode_version_or_rule_is_a_miss(cache_folder: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries written by another version of failcode, or by the same version with a rule
    changed (the fingerprint), are never used."""
    root = sessions_dir() / "claude-code"
    cold = triage([root], cache=True)
    assert triage([root], cache=True).cached_inputs == len(cold.inputs)
    monkeypatch.setattr(_cache, "_FINGERPRINT", [])
    monkeypatch.setattr(failcode, "__version__", failcode.__version__ + ".post1")
    assert triage([root], cache=True).cached_inputs == 0
    monkeypatch.setattr(_cache, "_FINGERPRINT", ["0.1.0/another rule"])
    warm = triage([root], cache=True)
    assert warm.cached_inputs == 0
    assert _doc(warm) == _doc(cold)


def test_a_changed_rule_changes_the_fingerprint(tmp_path: Path) -> None:
    """The code hash covers the classifiers, codes, signatures, records and readers: one
    byte changed in a classification rule (a dev checkout) or a reader changes it; a file
    outside them (the service) does not."""
    root = Path(failcode.__file__).parent
    copy = tmp_path / "failcode"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__"))
    first = code_hash(copy)
    assert code_hash(copy) == first
    service = next((copy / "service").glob("*.py"))
    service.write_text(service.read_text() + "\n# x\n")
    assert code_hash(copy) == first
    for changed in (copy / "classification" / "_classify.py",
                    copy / "triage" / "readers" / "_claude_code.py",
                    copy / "codes" / "fc-codes.lock.json"):
        changed.write_bytes(changed.read_bytes() + b" ")
        assert code_hash(copy) != first
        first = code_hash(copy)


def test_a_harbor_trial_is_read_again_when_its_result_changes(cache_folder: Path,
                                                              tmp_path: Path) -> None:
    """A Harbor trajectory's verdict comes from ``result.json`` beside its ``agent/`` folder:
    changing that file alone is a miss."""
    trial = next((sessions_2_dir() / "harbor-atif").rglob("agent/trajectory.json")).parents[1]
    copy = tmp_path / "trial"
    shutil.copytree(trial, copy)
    trajectory = copy / "agent" / "trajectory.json"
    triage([trajectory], cache=True)
    assert triage([trajectory], cache=True).cached_inputs == 1
    result = json.loads((copy / "result.json").read_text())
    result["verifier_result"] = {"rewards": {"reward": 1.0}}
    result["exception_info"] = None
    (copy / "result.json").write_text(json.dumps(result))
    warm = triage([trajectory], cache=True)
    assert warm.cached_inputs == 0
    assert warm.sessions[0].verdict == "passed"
    assert _doc(warm) == _doc(triage([trajectory]))


def _cli(*args: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "failcode", "triage", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=os.environ | env)


def _json(text: bytes) -> tuple[str, int | None]:
    document = json.loads(text)
    cached = document.pop("cached_inputs", None)
    assert document.pop("resumed_inputs", 0) == 0  # nothing grew
    return mask_error_ids(json.dumps(document, sort_keys=True)), cached


def test_concurrent_runs_and_a_killed_one_leave_no_torn_entry(tmp_path: Path) -> None:
    """Two runs writing one cache at once, and a run killed with SIGKILL while writing it:
    every later run equals a cold one, and takes from the cache all it can."""
    root = sessions_dir()
    env = {"FAILCODE_CACHE_DIR": str(tmp_path / "cache")}
    cold = _json(_cli(str(root), "--json", "--no-cache", env=env).communicate()[0])
    assert cold[1] is None
    killed = _cli(str(root), "--cache", "--jobs", "1", env=env)
    deadline = time.monotonic() + 30
    while not _entries(tmp_path / "cache") and time.monotonic() < deadline:
        time.sleep(0.01)
    killed.send_signal(signal.SIGKILL)
    killed.communicate()
    runs = [_cli(str(root), "--json", "--cache", "--jobs", "2", env=env) for _ in range(2)]
    for run in runs:
        assert _json(run.communicate()[0])[0] == cold[0]
    inputs = len(json.loads(cold[0])["inputs"])
    again = _json(_cli(str(root), "--json", "--cache", env=env).communicate()[0])
    assert again == (cold[0], inputs)


def test_jobs_two_with_the_cache_writes_what_one_job_writes(cache_folder: Path,
                                                            tmp_path: Path) -> None:
    """Real sessions (a copy) with --jobs 2: cold, warm and half-touched runs with the cache
    print the --json document and the summary of a serial run without it."""
    root = tmp_path / "sessions"
    shutil.copytree(sessions_dir(), root)
    serial = CliRunner().invoke(main, ["triage", str(root), "--json", "--jobs", "1"])
    text = CliRunner().invoke(main, ["triage", str(root), "--jobs", "1"]).stdout
    expected = _json(serial.stdout.encode())[0]
    seen = []
    for step in range(3):
        if step == 2:  # every other input touched: some from the cache, some read
            for path, _ in expand([root])[::2]:
                os.utime(path)
        run = CliRunner().invoke(main, ["triage", str(root), "--json", "--jobs", "2",
                                        "--cache"])
        document, cached = _json(run.stdout.encode())
        assert document == expected
        seen.append(cached)
    summary = CliRunner().invoke(main, ["triage", str(root), "--jobs", "2", "--cache"]).stdout
    head, _, rest = summary.partition("\n")
    assert rest == text.partition("\n")[2]
    assert f" read ({len(expand([root]))} from the cache)" in head
    assert seen[0] == 0
    assert seen[1] == len(expand([root])) > 20
    assert seen[2] is not None
    assert 0 < seen[2] < seen[1]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home with one real Claude Code session where Claude Code keeps it."""
    folder = tmp_path / "home"
    projects = folder / ".claude" / "projects" / "-work-app"
    projects.mkdir(parents=True)
    source = next((sessions_dir() / "claude-code").rglob("*.jsonl"))
    shutil.copyfile(source, projects / "a.jsonl")
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.chdir(folder)
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME",
                 "GEMINI_CLI_HOME", "MSWEA_GLOBAL_CONFIG_DIR", "OPENCODE_DB"):
        monkeypatch.delenv(name, raising=False)
    return folder


def test_home_caches_by_default_and_the_reports_say_how_many(home: Path, tmp_path: Path,
                                                             cache_folder: Path) -> None:
    """--home uses the cache unless --no-cache; paths use it only with --cache. The summary,
    --json (``cached_inputs``) and --html say how many inputs came from it; a run without
    the cache says nothing of it."""
    runner = CliRunner()
    first = runner.invoke(main, ["triage", "--home", "--json"])
    assert json.loads(first.stdout)["cached_inputs"] == 0
    schema = json.loads((REPO / "docs" / "triage.schema.json").read_text())
    jsonschema.validate(json.loads(first.stdout), schema)
    assert schema["properties"]["cached_inputs"]["type"] == "integer"
    second = runner.invoke(main, ["triage", "--home"])
    assert "1 input read (1 from the cache)" in second.stdout
    html = tmp_path / "r.html"
    runner.invoke(main, ["triage", "--home", "--html", str(html)])
    assert "1 inputs read (1 from the cache)" in html.read_text(encoding="utf-8")
    off = runner.invoke(main, ["triage", "--home", "--no-cache", "--json"])
    assert "cached_inputs" not in json.loads(off.stdout)
    named = home / ".claude"
    assert "from the cache" not in runner.invoke(main, ["triage", str(named)]).stdout
    assert "(1 from the cache)" in runner.invoke(main, ["triage", str(named),
                                                        "--cache"]).stdout


def test_the_cache_folder_is_the_users_unless_set(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.setenv("FAILCODE_CACHE_DIR", str(tmp_path / "chosen"))
    assert cache_dir() == tmp_path / "chosen"
    monkeypatch.delenv("FAILCODE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert cache_dir() == tmp_path / "xdg" / "failcode" / "triage"


def test_the_cache_stays_within_its_bound_oldest_used_first(cache_folder: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """Over ``FAILCODE_CACHE_MAX_MB`` the entries used longest ago go first; the last run's
    stay."""
    first, second = sessions_dir() / "claude-code", sessions_dir() / "swe-agent"
    triage([first], cache=True)
    old = {p: p.stat().st_size for p in _entries(cache_folder)}
    for path in old:
        os.utime(path, ns=(0, 10**9))
    scratch = cache_folder.parent / "scratch"
    monkeypatch.setenv("FAILCODE_CACHE_DIR", str(scratch))
    triage([second], cache=True)
    new = sum(p.stat().st_size for p in _entries(scratch))
    bound = new + sum(old.values()) - 1  # one old entry too many
    monkeypatch.setenv("FAILCODE_CACHE_DIR", str(cache_folder))
    monkeypatch.setenv("FAILCODE_CACHE_MAX_MB", str(bound / 1024 / 1024))
    result = triage([second], cache=True)
    left = _entries(cache_folder)
    assert sum(p.stat().st_size for p in left) <= bound
    assert triage([second], cache=True).cached_inputs == len(result.inputs)
    assert len([p for p in left if p in old]) == len(old) - 1


def test_an_entry_used_is_marked_used_once_an_hour_at_most(cache_folder: Path) -> None:
    """A warm run marks an entry used (its modification time, which eviction orders by) only
    when it was last marked over an hour ago: it does not rewrite every entry's inode."""
    root = sessions_dir() / "claude-code"
    triage([root], cache=True)
    entries = _entries(cache_folder)
    long_ago = entries[0]
    os.utime(long_ago, ns=(0, 10**9))
    before = {p: p.stat().st_mtime_ns for p in entries}
    assert triage([root], cache=True).cached_inputs == len(entries) >= 3
    after = {p: p.stat().st_mtime_ns for p in entries}
    assert after[long_ago] > 10**9 * 3600
    assert {p: t for p, t in after.items() if p != long_ago} == {
        p: t for p, t in before.items() if p != long_ago}


def test_results_msgpack_cannot_hold_are_not_cached(cache_folder: Path,
                                                    tmp_path: Path) -> None:
    """An entry the encoder refuses is not written; the run is not affected (a file named
    with bytes that are not UTF-8 keeps them as lone surrogates in its label)."""
    if sys.platform == "darwin":
        pytest.skip("macOS file names are UTF-8")  # pragma: no cover
    source = next((sessions_dir() / "claude-code").rglob("*.jsonl"))
    folder = tmp_path / "odd"
    folder.mkdir()
    name = os.fsdecode(b"s\xff.jsonl")
    shutil.copyfile(source, folder / name)
    cold = triage([folder], cache=True)
    assert cold.inputs[0].error_code is None
    warm = triage([folder], cache=True)
    assert warm.cached_inputs == 0
    assert _doc(warm) == _doc(cold)
    assert not _entries(cache_folder)
