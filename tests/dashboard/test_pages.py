"""The dashboard's page rules that need no browser: loops in a timeline, compare windows, a
session its agent's hooks and export reported."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from failcode import Failure
from failcode.service._pages import _loops, _window

if TYPE_CHECKING:
    from pathlib import Path


def test_a_run_of_one_signature_is_one_loop() -> None:
    assert _loops(["a", "a", "b", None, "b", "b", "b", "a"]) == [1, 1, None, None, 2, 2, 2, None]
    assert _loops([None, None]) == [None, None]  # outcomes never loop
    assert _loops([]) == []


@given(st.lists(st.sampled_from(["a", "b", None]), max_size=40))
def test_loops_mark_exactly_the_repeated_neighbours(signatures: list[str | None]) -> None:
    marks = _loops(signatures)
    for i, signature in enumerate(signatures):
        repeated = signature is not None and (
            (i > 0 and signatures[i - 1] == signature)
            or (i + 1 < len(signatures) and signatures[i + 1] == signature))
        assert (marks[i] is not None) == repeated
    numbers = [m for m in marks if m is not None]
    assert numbers == sorted(numbers)  # numbered in the order loops start
    assert set(numbers) == set(range(1, len(set(numbers)) + 1))


def test_a_window_is_whole_utc_days() -> None:
    start, end = _window("2026-11-01..2026-11-07") or (0, 0)
    assert datetime.fromtimestamp(start / 1e6, UTC) == datetime(2026, 11, 1, tzinfo=UTC)
    assert datetime.fromtimestamp(end / 1e6, UTC) == datetime(2026, 11, 8, tzinfo=UTC)
    one = _window("2026-11-03")
    assert one is not None
    assert one[1] - one[0] == 86_400_000_000
    assert _window("last week") is None


def test_a_hooked_session_reads_as_its_agent_reported_it(tmp_path: Path) -> None:
    """A session its agent's hooks and export reported: listed with its agent and version
    (the hook names the agent, the export the version), ended as the hook's end says (a
    failure along the way is no end), its start and end in the timeline in words, and two
    failures of unknown cause in a row never a loop (the same command failing twice for
    different reasons would look like one); two of a known cause are."""
    from failcode import NoMatch, SessionEnded, SessionStarted, classify_text, from_command
    from failcode.events import failure_event, outcome_event
    from failcode.service._findings import Findings, ensure_tables
    from failcode.service._pages import findings_page, session_page, sessions_page
    from failcode.store import open_store

    hook = {"agent": "claude-code"}
    export = {"agent": "claude-code", "agent_version": "2.1.332"}
    done = subprocess.run(["sh", "-c", "no_such_program_here"], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    missing = from_command(["sh", "-c", "no_such_program_here"], done.returncode,
                           done.stdout, done.stderr)
    assert isinstance(missing, Failure)
    generic = classify_text("ShellError", "Shell command failed: python -m pytest -q")
    t0 = datetime(2026, 11, 2, 9, tzinfo=UTC)

    def at(seconds: int) -> datetime:
        return t0 + timedelta(seconds=seconds)

    events = [
        outcome_event(SessionStarted(by="claude-code hook", context=hook), session="s1",
                      source="claude-code hook", ts=at(0)),
        outcome_event(SessionStarted(by="otlp", context=export), session="s1", source="otlp",
                      ts=at(0)),
        outcome_event(NoMatch(probe="grep", exit_code=1, context=hook), session="s1", step=0,
                      source="claude-code hook", ts=at(0)),
        *(failure_event(msgspec.structs.replace(generic, context=export), event="command.failed",
                        session="s1", source="otlp", ts=at(i)) for i in (1, 2)),
        *(failure_event(msgspec.structs.replace(missing, context=hook), event="command.failed",
                        session="s1", step=i, source="claude-code hook", ts=at(i))
          for i in (3, 4)),
        outcome_event(SessionEnded(status="submitted", by="claude-code hook", context=hook),
                      session="s1", source="claude-code hook", ts=at(5)),
        outcome_event(SessionStarted(by="otlp", context=export), session="s2", source="otlp",
                      ts=at(6)),
    ]
    with open_store(f"sqlite:///{tmp_path / 'p.db'}") as store:
        ensure_tables(store)
        Findings(store).append(events)
        listed = sessions_page(store, clean=True)
        assert [(r.session, r.agent, r.ended, r.failures) for r in listed.rows] == [
            ("s1", "claude-code 2.1.332", "submitted", 4),
            ("s2", "claude-code 2.1.332", "unknown", 0)]
        assert sessions_page(store).clean_hidden == 1  # s2: no failure, listed when asked
        view = session_page(store, "s1")
        assert view is not None
        assert view.agent == "claude-code 2.1.332"
        assert [(s.event, s.loop) for s in view.steps] == [
            ("session.started", None), ("probe.no_match", None), ("command.failed", None),
            ("command.failed", None), ("command.failed", 1), ("command.failed", 1),
            ("session.ended", None)]
        assert [s.message for s in view.steps[:2]] == [
            "started (reported by claude-code hook, otlp)", "grep found nothing (exit 1)"]
        assert view.steps[-1].message == "ended: submitted"
        assert view.loops == 1
        # the hook's failures name no version: they take their session's (the export's)
        rows = findings_page(store, Findings(store), filters={})
        assert {r.finding.code: r.versions for r in rows.rows} == {
            "FC-SYS-001": ("claude-code 2.1.332",), "FC-CMD-001": ("claude-code 2.1.332",)}
