"""The terminal report's tables against expectations computed from the input, not from
another output of failcode.

The input is the session lab's fixtures: each scenario declares, step by step, the failure a
careful triage reports (its kind and who acts), how the session ends and its loops, and the
stub recorded which steps each run played. From those alone this test computes the totals,
how sessions ended, who acts and the loops, and reads the same figures off the printed
report (piped: plain text), so a report that miscounts, drops a row or mislabels a column
fails here even when ``--json`` and the HTML agree with it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from functools import cache
from typing import Any

from tests.lab.scenario import SCENARIOS, load
from tests.lab.score import Fixture, fixtures, score_fixtures

# agents whose logs keep every step the lab checks (aider's suggested commands carry no exit
# status); scenarios without provider faults (a retried fault adds a failure at no step)
AGENTS = ("claude-code", "codex", "gemini-cli", "mini-swe-agent", "openhands")


@cache
def _chosen() -> list[tuple[Fixture, Any]]:
    # an end the agent's log keeps no trace of (Gemini CLI's turn limit) cannot be counted
    blind = {(c.agent, c.scenario) for c in score_fixtures()
             if c.name.startswith("ended") and not c.observable}
    chosen = []
    for fixture in fixtures():
        if fixture.agent not in AGENTS or (fixture.agent, fixture.scenario) in blind:
            continue
        scenario = load(SCENARIOS / f"{fixture.scenario}.toml")
        if any(step.faults for step in scenario.steps) or scenario.final_faults:
            continue
        chosen.append((fixture, scenario))
    return chosen


@cache
def _report() -> str:
    paths = [str(fixture.session_dir) for fixture, _ in _chosen()]
    run = subprocess.run([sys.executable, "-m", "failcode", "triage", "--top", "100", *paths],
                         capture_output=True, text=True, check=False, timeout=600)
    assert run.returncode == 0, run.stderr
    return run.stdout


def _section(title: str) -> list[str]:
    lines = _report().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i]), len(lines))
    return lines[start:end]


def _expected_failures() -> list[tuple[str | None, str]]:
    """(who acts, kind) of every failing step the scenarios declare, over the steps played,
    and of the failure that ended a session where the scenario names one."""
    return [*((scenario.steps[index].expect.category, scenario.steps[index].expect.kind)
              for fixture, scenario in _chosen() for index in fixture.played()
              if scenario.steps[index].expect.failure),
            *((None, scenario.ended_kind) for _, scenario in _chosen() if scenario.ended_kind)]


def test_the_totals_line_counts_what_the_scenarios_declare() -> None:
    failures = _expected_failures()
    failing_sessions = sum(
        1 for fixture, scenario in _chosen()
        if scenario.ended_kind or any(scenario.steps[i].expect.failure for i in fixture.played()))
    sessions = len(_chosen())
    first, second = _report().splitlines()[:2]
    assert first == f"failcode triage: {sessions} inputs read, 0 skipped, 0 failed"
    match = re.fullmatch(r"([\d,]+) sessions, ([\d,]+) steps, ([\d,]+) failing steps in "
                         r"([\d,]+) sessions", second)
    assert match is not None, second
    assert (int(match[1]), int(match[3].replace(",", "")), int(match[4])) == (
        sessions, len(failures), failing_sessions)


def test_how_sessions_ended_counts_each_scenarios_ending() -> None:
    expected = Counter(scenario.ended for _, scenario in _chosen())
    (line,) = _section("How sessions ended")[1:]
    printed = {status: int(count.replace(",", "")) for count, status in
               (part.split(" ", 1) for part in line.strip().split(", "))}
    assert printed == dict(expected)


def test_who_acts_counts_each_declared_kind_and_category() -> None:
    expected = _expected_failures()
    rows = {}
    for line in _section("Who acts")[1:]:
        category, kind, count, _bar = line.split()
        rows[(category, kind)] = int(count.replace(",", ""))
    by_kind: Counter[str] = Counter()
    for (_category, kind), count in rows.items():
        by_kind[kind] += count
    assert dict(by_kind) == dict(Counter(kind for _, kind in expected))
    declared = Counter((category, kind) for category, kind in expected if category is not None)
    for key, count in declared.items():
        undeclared = sum(1 for c, k in expected if c is None and k == key[1])
        assert count <= rows.get(key, 0) <= count + undeclared, (key, rows)


def test_the_findings_add_up_to_every_failing_step() -> None:
    """Each finding's failures, summed over every finding listed, are the failing steps."""
    counts = [int(m[1].replace(",", "")) for m in re.finditer(
        r"· ([\d,]+) failures? in [\d,]+ sessions?", "\n".join(_section("What to fix first")))]
    assert sum(counts) == len(_expected_failures())
    assert "more finding" not in "\n".join(_section("What to fix first"))


def test_the_loops_line_counts_the_declared_loops() -> None:
    looping = [(fixture, scenario) for fixture, scenario in _chosen() if scenario.loops]
    loops = sum(len(scenario.loops) for _, scenario in looping)
    heading = _section("Loops:")[0]
    assert heading == (f"Loops: {loops} loop{'s' * (loops != 1)} in {len(looping)} of "
                       f"{len(_chosen())} sessions")
