"""Score triage on the lab's fixtures against the scenarios' ground truth, check by check.

For each fixture (one agent, one scenario) ``failcode.triage`` reads the session files; the
session compared is the one with the most steps (an agent may write side files). The steps
compared are the ones the stub actually played in that run (``meta.json``: a turn limit or a
fatal fault stops a run early, and an agent may stop on its own). The step numbering is the
lab's rule: a step is the agent's n-th action (tool call, or command it ran), from 0.

The checks, each passed or not:

- a step where a failure is expected: ``found`` (a failure at that step), ``kind``,
  ``category`` and, where the scenario names one, ``class`` (each counted as failed when the
  failure was not found);
- a step where an outcome is expected (``no_match``, ``rejected_action``): ``outcome`` (that
  outcome at that step and no failure there);
- a step where nothing is expected: ``quiet`` (no failure there);
- each expected loop: ``loop`` (a reported loop sharing two of its steps); a scenario that
  declares no loop: ``no_loop`` (none reported);
- ``ended`` (the session's end status: the scenario's, or ``provider_error`` when the agent
  gave up on a fault it was meant to retry) and, where named, ``ended_kind`` (the kind of the
  failure that ended it);
- a provider fault that was answered and retried: ``provider`` (a provider failure reported
  in the session), checked only when the agent's log kept it (the stub's marker
  ``stub fault`` is in the files): what a log lost, no triage can find, and the lab's report
  says which agent loses what.

A check the agent's own log cannot support is counted apart, never in the share: the step
checks (and the loops made of them) of an agent whose log keeps neither a command's output
nor its exit status (aider's suggested commands), and the end of a run the log kept no trace
of: a fatal provider fault or a give-up on a retried one it lost, a turn limit it does not
write (Gemini CLI).
Which agent keeps what is measured on its fixtures (:mod:`tests.lab.report`).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

from tests.lab.runner import FIXTURES
from tests.lab.scenario import SCENARIOS, Scenario, load

FAULT_MARKER = "stub fault"


@dataclass(frozen=True, slots=True)
class Check:
    """One ground-truth check on one fixture."""

    agent: str
    scenario: str
    step: int | None
    name: str
    passed: bool
    detail: str = ""
    observable: bool = True
    """False when the agent's own log lost what the check needs (counted apart)."""


@dataclass(slots=True)
class Fixture:
    """One committed run: its meta and the files the agent wrote."""

    path: Path
    meta: dict[str, Any]

    @property
    def agent(self) -> str:
        return str(self.meta["agent"])

    @property
    def scenario(self) -> str:
        return str(self.meta["scenario"])

    @property
    def session_dir(self) -> Path:
        return self.path / "session"

    def text(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted(
            self.session_dir.rglob("*")) if p.is_file())

    def played(self) -> list[int]:
        """The scenario steps the stub carried out in this run, in order, once each."""
        seen: list[int] = []
        for entry in self.meta.get("requests", []):
            step = entry.get("plays")
            if step is not None and step not in seen:
                seen.append(step)
        return seen

    def faults_answered(self) -> list[dict[str, Any]]:
        return [entry for entry in self.meta.get("requests", []) if entry.get("fault")]


def fixtures(root: Path = FIXTURES) -> list[Fixture]:
    """Every fixture under ``root`` (``<agent>/<scenario>/meta.json``)."""
    return [Fixture(meta_path.parent, json.loads(meta_path.read_text()))
            for meta_path in sorted(root.glob("*/*/meta.json"))]


@dataclass(slots=True)
class Seen:
    """What triage reported for one session, by step."""

    failures: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    outcomes: dict[int, list[str]] = field(default_factory=dict)
    loops: list[set[int]] = field(default_factory=list)
    status: str = "none"
    ended_kind: str | None = None
    any_provider: bool = False
    sessions: int = 0


def triage_fixture(fixture: Fixture, path: Path | None = None) -> Seen:
    """Run ``failcode.triage`` on the fixture's session files (or on ``path``, another log of
    the same run such as the agent's stdout); keep the largest session."""
    from failcode.triage import triage

    return seen_of(triage([str(path or fixture.session_dir)]).to_dict())


def seen_of(result: dict[str, Any]) -> Seen:
    """What a triage document (``TriageResult.to_dict()``: triage's, or one rebuilt from a
    store's events) reports for its largest session."""
    seen = Seen(sessions=len(result["sessions"]))
    if not result["sessions"]:
        return seen
    session = max(result["sessions"],
                  key=lambda s: (s["steps"], len(s["failures"]) + len(s["outcomes"])))
    for entry in session["failures"]:
        if entry["step"] is not None:
            seen.failures.setdefault(entry["step"], []).append(entry["failure"])
        seen.any_provider |= entry["failure"]["kind"] == "provider_error"
    for entry in session["outcomes"]:
        if entry["step"] is not None:
            seen.outcomes.setdefault(entry["step"], []).append(entry["outcome"]["type"])
    seen.loops = [set(loop["steps"]) for loop in session["loops"]]
    seen.status = session["ended"]["status"]
    ended = session["ended"]["failure"]
    seen.ended_kind = ended["kind"] if ended else None
    seen.any_provider |= bool(ended and ended["kind"] == "provider_error")
    return seen


def check_fixture(fixture: Fixture, scenario: Scenario, seen: Seen | None = None,
                  records: dict[str, str] | None = None) -> list[Check]:
    """Every ground-truth check of one fixture; ``records`` is what the agent's log keeps
    (:func:`tests.lab.report.agent_records`), which says which checks it can support."""
    seen = triage_fixture(fixture) if seen is None else seen
    records = records or {}
    agent, name = fixture.agent, scenario.name
    checks: list[Check] = []
    blind = records.get("command output") == "lost" and records.get("exit status") == "lost"
    fatal_lost = scenario.fatal_step is not None and FAULT_MARKER not in fixture.text() and (
        records.get(_FATAL_COLUMN.get(_fatal_status(scenario), ""), "") == "lost")
    ended = expected_end(fixture, scenario)
    # a give-up on a retried fault, or a turn limit, that the log kept no trace of
    gave_up_lost = ended != scenario.ended and fault_lost(fixture)
    limit_lost = scenario.ended == "limit" and records.get("turn limit") == "lost"
    # a channel with no record of the end a fatal fault caused (the service's: export, hooks)
    fatal_end_lost = scenario.fatal_step is not None and records.get("fatal end") == "lost"
    end_lost = fatal_lost or gave_up_lost or limit_lost or fatal_end_lost
    retries_lost = all(records.get(column) == "lost" for column in ("retried 429", "retried 500"))

    def add(step: int | None, check: str, passed: bool, detail: str = "") -> None:
        # a blind log keeps no step's failure, so no loop of them either
        observable = not (blind and (step is not None or check in ("loop", "no_loop"))) and not (
            end_lost and check in ("ended", "ended_kind")) and not (
            retries_lost and check == "provider")
        checks.append(Check(agent, name, step, check, passed, detail, observable))

    played = fixture.played()
    for index in played:
        step = scenario.steps[index]
        expect = step.expect
        failures = seen.failures.get(index, [])
        if expect.failure:
            found = failures[0] if failures else None
            add(index, "found", found is not None, step.label)
            add(index, "kind", found is not None and found["kind"] == expect.kind,
                f"want {expect.kind}, got {found and found['kind']}")
            if expect.category:
                add(index, "category",
                    found is not None and found["category"] == expect.category,
                    f"want {expect.category}, got {found and found['category']}")
            if expect.error_class:
                add(index, "class",
                    found is not None and found["error_class"] == expect.error_class,
                    f"want {expect.error_class}, got {found and found['error_class']}")
        elif expect.outcome:
            outcomes = seen.outcomes.get(index, [])
            add(index, "outcome", expect.outcome in outcomes and not failures,
                f"want {expect.outcome}, got outcomes {outcomes} failures "
                f"{[f['code'] for f in failures]}")
        else:
            add(index, "quiet", not failures,
                f"{step.label}: got {[f['code'] for f in failures]}")
    for loop in scenario.loops:
        if all(i in played for i in loop):
            add(None, "loop", any(len(set(loop) & other) >= 2 for other in seen.loops),
                f"want {list(loop)}, got {[sorted(x) for x in seen.loops]}")
    if scenario.loops_declared and not scenario.loops:
        add(None, "no_loop", not seen.loops, f"got {[sorted(x) for x in seen.loops]}")
    add(None, "ended", seen.status == ended, f"want {ended}, got {seen.status}")
    if scenario.ended_kind:
        add(None, "ended_kind", seen.ended_kind == scenario.ended_kind,
            f"want {scenario.ended_kind}, got {seen.ended_kind}")
    transient = fixture.faults_answered()
    if scenario.fatal_step is None and transient and FAULT_MARKER in fixture.text():
        add(None, "provider", seen.any_provider, "a retried fault the log kept")
    return checks


_FATAL_COLUMN = {500: "fatal 500", 429: "fatal 429", 401: "auth 401"}


def _fatal_status(scenario: Scenario) -> int:
    step = scenario.steps[scenario.fatal_step or 0]
    return next(fault.status for fault in step.faults if fault.fatal)


def error_at_end(text: str) -> bool:
    """Whether a log's last lines hold an error (a fault kept, its provider's text or not)."""
    tail = "\n".join(text.strip().splitlines()[-3:]).lower()
    return re.search(r'"error"|error:|api error|exception', tail) is not None


def fault_lost(fixture: Fixture) -> bool:
    """The log kept no trace of a fault the stub answered: no marker, no error at its end."""
    text = fixture.text()
    return FAULT_MARKER not in text and not error_at_end(text)


def expected_end(fixture: Fixture, scenario: Scenario) -> str:
    """How the run ended: the scenario's ``ended``, except that an agent that gave up on a
    fault it was meant to retry (its last request answered with a fault, the final answer
    never served) ended on a provider error."""
    requests = [r for r in fixture.meta.get("requests", []) if r.get("method") == "POST"
                and r.get("api")]
    if scenario.ended == "submitted" and requests and requests[-1].get("fault"):
        return "provider_error"
    return scenario.ended


def score_fixtures(root: Path = FIXTURES) -> list[Check]:
    """Every check of every fixture under ``root``."""
    from tests.lab.report import agent_records

    records = agent_records(root)
    out: list[Check] = []
    for fixture in fixtures(root):
        scenario_path = SCENARIOS / f"{fixture.scenario}.toml"
        if not scenario_path.exists():
            continue
        out += check_fixture(fixture, load(scenario_path), records=records.get(fixture.agent))
    return out


def shares(checks: list[Check]) -> dict[str, tuple[int, int]]:
    """Per agent: (observable checks passed, observable checks)."""
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for check in checks:
        if check.observable:
            table[check.agent][0] += check.passed
            table[check.agent][1] += 1
    return {agent: (passed, total) for agent, (passed, total) in sorted(table.items())}


def lost(checks: list[Check]) -> dict[str, int]:
    """Per agent: how many checks its log cannot support (left out of the share)."""
    table: dict[str, int] = defaultdict(int)
    for check in checks:
        table[check.agent] += not check.observable
    return dict(table)


def print_scores(checks: list[Check]) -> None:
    """One line per agent (share passed), then per check name, then the failed checks."""
    by_name: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for check in checks:
        if check.observable:
            by_name[(check.agent, check.name)][0] += check.passed
            by_name[(check.agent, check.name)][1] += 1
    unsupported = lost(checks)
    for agent, (passed, total) in shares(checks).items():
        parts = ", ".join(f"{name} {p}/{t}" for (a, name), (p, t) in sorted(by_name.items())
                          if a == agent)
        print(f"{agent:15} {passed:4}/{total:<4} {passed / max(total, 1):6.1%}  "
              f"({unsupported.get(agent, 0)} its log cannot support)  {parts}")
    for check in checks:
        if check.observable and not check.passed:
            step = "" if check.step is None else f" step {check.step}"
            print(f"  failed: {check.agent} {check.scenario}{step} {check.name}: {check.detail}")
