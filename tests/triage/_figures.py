"""The figures of triage against the labelled sets, per format and per agent.

- Real sessions (``../shared/data/agent-sessions/``, labels in
  ``tests/fixtures/triage_labels.json``), per format: labelled failing steps, recall (found at
  all), kind agreement (of those found), the steps triage marks masked that the labels call
  failures, probes reported as failures, rejected actions found
  as outcomes, sessions whose end agrees; loops and false loops come from
  :mod:`tests.triage._loop_figures`.
- The lab (``tests/lab/fixtures``), per agent: failing steps the scenarios declare and how many
  were found, with the right kind, masked failures found and marked ``masked``, probes and
  quiet steps reported as failures, and rejected and cancelled outcomes found.

``python -m tests.triage._figures`` prints both tables (the commands behind an issue's closing
note).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from failcode.triage import triage
from tests.lab.scenario import SCENARIOS, load
from tests.lab.score import fixtures
from tests.triage._data import SESSIONS, labels

__all__ = ["lab_table", "real_table"]


def _ratio(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"


def real_table(root: Path = SESSIONS) -> list[str]:
    """One row per format of the labelled real sessions."""
    wanted = labels()
    result = triage([root / path for path in wanted])
    found = {(str(Path(s.path).relative_to(root)), s.session): s for s in result.sessions}
    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for path, by_session in wanted.items():
        for name, label in by_session.items():
            session = found.get((path, name))
            row = rows[session.format if session else path.split("/")[0]]
            reported = {e.step: str(e.failure.kind) for e in session.failures} if session else {}
            outcomes = {e.step for e in session.outcomes} if session else set()
            masked = {e.step for e in session.failures if e.masked} if session else set()
            row["masked"] += len(masked)
            row["masked_labelled"] += sum(str(step) in label["failures"] for step in masked)
            row["sessions"] += 1
            row["ended"] += bool(session and session.status == label["ended"])
            for step, kind in label["failures"].items():
                row["failures"] += 1
                if int(step) in reported:
                    row["found"] += 1
                    row["kind"] += reported[int(step)] == kind
            row["probes"] += len(label["probes"])
            row["probe_fail"] += sum(step in reported for step in label["probes"])
            row["rejected"] += len(label["rejected"])
            row["rejected_found"] += sum(step in outcomes for step in label["rejected"])
    lines = [("| format | sessions | recall | kind agreement | masked, labelled failures | "
              "probes as failures | rejected found | endings agree |"),
             "|---|---|---|---|---|---|---|---|"]
    for fmt, row in sorted(rows.items()):
        lines.append(f"| {fmt} | {row['sessions']} | {_ratio(row['found'], row['failures'])} "
                     f"| {_ratio(row['kind'], row['found'])} "
                     f"| {_ratio(row['masked_labelled'], row['masked'])} "
                     f"| {_ratio(row['probe_fail'], row['probes'])} "
                     f"| {_ratio(row['rejected_found'], row['rejected'])} "
                     f"| {_ratio(row['ended'], row['sessions'])} |")
    return lines


def _lab_session(path: Path) -> dict[str, Any] | None:
    sessions = triage([str(path)]).to_dict()["sessions"]
    return max(sessions, key=lambda s: s["steps"]) if sessions else None


def lab_table() -> list[str]:
    """One row per lab agent."""
    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for fixture in fixtures():
        scenario_path = SCENARIOS / f"{fixture.scenario}.toml"
        if not scenario_path.exists():
            continue
        scenario = load(scenario_path)
        session = _lab_session(fixture.session_dir)
        failures: dict[int, list[dict[str, Any]]] = defaultdict(list)
        outcomes: dict[int, list[str]] = defaultdict(list)
        for entry in session["failures"] if session else []:
            if entry["step"] is not None:
                failures[entry["step"]].append(entry)
        for entry in session["outcomes"] if session else []:
            if entry["step"] is not None:
                outcomes[entry["step"]].append(entry["outcome"]["type"])
        row = rows[fixture.agent]
        for index in fixture.played():
            expect = scenario.steps[index].expect
            got = failures.get(index, [])
            if expect.failure:
                row["failures"] += 1
                row["found"] += bool(got)
                row["kind"] += bool(got) and got[0]["failure"]["kind"] == expect.kind
                if scenario.steps[index].exit == 0:  # a failure its exit status hid
                    row["masked"] += 1
                    row["masked_found"] += bool(got) and bool(got[0].get("masked"))
            elif expect.outcome == "no_match":
                row["probes"] += 1
                row["probe_fail"] += bool(got)
            elif expect.outcome:
                row["outcomes"] += 1
                row["outcome_found"] += expect.outcome in outcomes.get(index, [])
            else:
                row["quiet"] += 1
                row["quiet_fail"] += bool(got)
    lines = [("| agent | failing steps found | kind agreement | masked found | probes as "
             "failures | quiet steps as failures | rejected/cancelled found |"),
             "|---|---|---|---|---|---|---|"]
    for agent, row in sorted(rows.items()):
        lines.append(f"| {agent} | {_ratio(row['found'], row['failures'])} "
                     f"| {_ratio(row['kind'], row['found'])} "
                     f"| {_ratio(row['masked_found'], row['masked'])} "
                     f"| {_ratio(row['probe_fail'], row['probes'])} "
                     f"| {_ratio(row['quiet_fail'], row['quiet'])} "
                     f"| {_ratio(row['outcome_found'], row['outcomes'])} |")
    return lines


if __name__ == "__main__":
    print("Real sessions (labels in tests/fixtures/triage_labels.json)\n")
    print("\n".join(real_table()))
    print("\nThe session lab (tests/lab/fixtures)\n")
    print("\n".join(lab_table()))
