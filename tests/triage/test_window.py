"""Sessions by time (``failcode.triage._window``): ``--since``, ``--until``, ``--changed-at``.

Real sessions of the second corpus (Claude Code and Codex, read in place) and a real git
repository in a temporary folder for ``--changed-at FILE``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from failcode.triage import triage
from tests.triage._data import sessions_2_dir


def _corpus() -> list[str]:
    root = sessions_2_dir()
    return [str(root / "claude-code"), str(root / "codex")]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "failcode", "triage", *args, "--no-cache"],
                          capture_output=True, text=True, check=False)


def _json(*args: str) -> dict[str, Any]:
    done = _cli(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _iso(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat()


def _line_times(path: str) -> list[float]:
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            stamp = json.loads(line).get("timestamp")
        except (ValueError, AttributeError):
            continue
        if isinstance(stamp, str):
            out.append(dt.datetime.fromisoformat(stamp).timestamp())
    return out


def test_a_session_started_at_its_earliest_step() -> None:
    """Every real Claude Code and Codex session: ``started`` is no earlier than the file's
    first line time and no later than its first failure."""
    checked = 0
    for folder in _corpus():
        for session in triage([folder]).sessions:
            assert session.started is not None, session.path
            assert min(_line_times(session.path)) <= session.started
            failed = [e.timestamp for e in session.failures if e.timestamp is not None]
            if failed:
                assert session.started <= min(failed)
                checked += 1
    assert checked >= 15


def test_since_and_until_keep_the_sessions_that_started_between() -> None:
    """The sessions kept are exactly those that started in [since, until); the others are
    counted on stderr."""
    every = _json(*_corpus())["sessions"]
    times = sorted(s["started"] for s in every)
    since, until = times[len(times) // 4], times[3 * len(times) // 4]
    done = _cli(*_corpus(), "--json", "--since", _iso(since), "--until", _iso(until))
    kept = json.loads(done.stdout)["sessions"]
    expected = [s["session"] for s in every if since <= s["started"] < until]
    assert sorted(s["session"] for s in kept) == sorted(expected)
    assert 0 < len(kept) < len(every)
    assert f"{len(every) - len(kept):,} sessions left out" in done.stderr


def _repo(tmp_path: Path, when: float) -> Path:
    """A git repository whose AGENTS.md was last committed at ``when``."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "AGENTS.md").write_text("# instructions\n", encoding="utf-8")
    stamp = _iso(when)
    env = os.environ | {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp,
                        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    subprocess.run(["git", "-C", str(tmp_path), "add", "AGENTS.md"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "commit", "-q", "-m", "fix"], check=True,
                   env=env)
    return tmp_path / "AGENTS.md"


def test_changed_at_a_committed_file_splits_at_its_last_commit(tmp_path: Path) -> None:
    """--changed-at AGENTS.md (committed in a real repository): the sessions before its commit
    are the baseline, those after the new run; a date gives the same comparison; a finding
    only sessions before the change hit is ``gone``."""
    every = _json(*_corpus())["sessions"]
    times = sorted(s["started"] for s in every)
    split = round((times[len(times) // 2] + times[len(times) // 2 + 1]) / 2)
    path = _repo(tmp_path, split)
    comparison = _json(*_corpus(), "--changed-at", str(path))["comparison"]
    assert comparison["changed_at"] == split
    assert "the last commit of AGENTS.md" in comparison["title"]
    assert comparison["baseline_sessions"] == sum(s["started"] < split for s in every)
    assert comparison["new_sessions"] == sum(s["started"] >= split for s in every)
    by_date = _json(*_corpus(), "--changed-at", _iso(split))["comparison"]
    assert by_date["changes"] == comparison["changes"]
    before = {e["failure"]["code"] for s in every if s["started"] < split for e in s["failures"]}
    gone = [c for c in comparison["changes"] if c["status"] == "gone"]
    assert gone
    assert all(c["new"]["sessions"] == 0 and c["baseline"]["sessions"] > 0
               and c["code"] in before for c in gone)


def test_changed_at_a_file_outside_git_is_its_modification_time(tmp_path: Path) -> None:
    path = tmp_path / "CLAUDE.md"
    path.write_text("x\n", encoding="utf-8")
    os.utime(path, (1_767_225_600, 1_767_225_600))
    comparison = _json(*_corpus(), "--changed-at", str(path))["comparison"]
    assert comparison["changed_at"] == 1_767_225_600
    assert "not in git" in comparison["title"]


@pytest.mark.parametrize(("args", "says"), [
    (["--since", "2026-13-01"], "'2026-13-01' is not a date"),
    (["--since", "2026-02-01", "--until", "2026-01-01"], "is not before --until"),
    (["--changed-at", "no-such-file.md"], "neither a date"),
    (["--changed-at", "2026-01-01", "--baseline", "."], "--changed-at compares"),
])
def test_bad_times_are_usage_errors(args: list[str], says: str) -> None:
    done = _cli(*_corpus(), *args)
    assert done.returncode == 2
    assert says in done.stderr
    assert "Traceback" not in done.stderr
