"""Re-triaging events exported from a store keeps same-named sessions of different inputs
apart (issue 36, item 9): real inputs, a real SQLite store, the real CLI."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from failcode import FC
from failcode.events import failure_event, write_events
from failcode.store import open_store
from tests._paths import REPO

if TYPE_CHECKING:
    from pathlib import Path


def _failcode(*args: str, cwd: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "failcode", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False,
                          env={"PYTHONPATH": str(REPO / "src"), "PATH": ""})
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_same_named_sessions_of_two_inputs_stay_apart_when_re_triaged(tmp_path: Path) -> None:
    """Two inputs each hold a session named ``run`` failing alike; triaged into a store, its
    events exported to one JSONL file and that file triaged into a second store: the second
    triage has two sessions (named after their inputs) with their own steps, and the second
    store holds every event, in two sessions, as the first does."""
    failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})
    for folder, steps in (("a", 2), ("b", 3)):
        (tmp_path / folder).mkdir()
        write_events(tmp_path / folder / "log.jsonl", [
            failure_event(failure, event="command.failed", session="run", step=step)
            for step in range(steps)])
    first = _failcode("triage", "a/log.jsonl", "b/log.jsonl", "--json",
                      "--store", "sqlite:///first.db", cwd=tmp_path)
    assert sorted((s["session"], s["path"], s["steps"]) for s in first["sessions"]) == [
        ("run", "a/log.jsonl", 2), ("run", "b/log.jsonl", 3)]
    with sqlite3.connect(tmp_path / "first.db") as db:  # the store's events, exported
        bodies = [body for (body,) in db.execute("select body from events order by ts_us")]
    assert len(bodies) == 5
    (tmp_path / "export.jsonl").write_text("".join(body + "\n" for body in bodies))
    second = _failcode("triage", "export.jsonl", "--json", "--store", "sqlite:///second.db",
                       cwd=tmp_path)
    assert sorted((s["session"], s["steps"], len(s["failures"]))
                  for s in second["sessions"]) == [
        ("run (a/log.jsonl)", 2, 2), ("run (b/log.jsonl)", 3, 3)]
    for name in ("first.db", "second.db"):
        with open_store(tmp_path / name, read_only=True) as store:
            stats = store.stats()
            assert (stats.events_stored, stats.sessions) == (5, 2), name


def test_one_session_per_name_keeps_its_name(tmp_path: Path) -> None:
    """Sessions whose names are not shared keep their names as they are."""
    failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})
    for session in ("one", "two"):
        (tmp_path / session).mkdir()
        write_events(tmp_path / session / "log.jsonl", [
            failure_event(failure, event="command.failed", session=session, step=0)])
    _failcode("triage", "one/log.jsonl", "two/log.jsonl", "--json", "--store",
              "sqlite:///first.db", cwd=tmp_path)
    with sqlite3.connect(tmp_path / "first.db") as db:
        bodies = [body for (body,) in db.execute("select body from events order by ts_us")]
    (tmp_path / "export.jsonl").write_text("".join(body + "\n" for body in bodies))
    again = _failcode("triage", "export.jsonl", "--json", cwd=tmp_path)
    assert sorted(s["session"] for s in again["sessions"]) == ["one", "two"]
