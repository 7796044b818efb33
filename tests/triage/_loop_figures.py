"""Loops found against the labelled sets: loops labelled, found, false and missed.

Two labelled sets:

- the real sessions of ``../shared/data/agent-sessions/`` with the loops a reader labelled in
  ``tests/fixtures/triage_labels.json``, per format (the labelled sessions only);
- the lab's fixtures (``tests/lab/fixtures``) with the loops their scenarios declare, per agent
  (the scenarios that declare ``loops``; loops found in the others are counted apart as
  ``undeclared``, since those scenarios make no claim).

A found loop is *covered* when it shares two steps with a labelled loop of its session (the rule
of ``tests/triage/_data.score`` and ``tests/lab/score``); a *false* loop is a found loop no
labelled loop covers; a *missed* loop is a labelled loop no found loop covers.

``python -m tests.triage._loop_figures`` prints the tables and each false and missed loop.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from failcode.triage import triage
from tests.lab.runner import FIXTURES
from tests.lab.scenario import SCENARIOS, load
from tests.lab.score import fixtures
from tests.triage._data import SESSIONS, labels, session_files

__all__ = ["Figures", "lab_figures", "real_figures"]


@dataclass(slots=True)
class Figures:
    """Loops of one format (or agent): labelled, found, false, missed, and which ones."""

    labelled: int = 0
    found: int = 0
    false: int = 0
    missed: int = 0
    undeclared: int = 0
    notes: list[str] = field(default_factory=list)

    def add(self, where: str, label: list[list[int]], found: list[dict[str, Any]]) -> None:
        """Count one session: its labelled loops and the loops triage found (JSON shape)."""
        self.labelled += len(label)
        self.found += len(found)
        for loop in found:
            if not any(len(set(loop["steps"]) & set(want)) >= 2 for want in label):
                self.false += 1
                self.notes.append(f"false  {where}: {loop['steps']} "
                                  f"{loop.get('cause', loop['signature'])}")
        for want in label:
            if not any(len(set(want) & set(loop["steps"])) >= 2 for loop in found):
                self.missed += 1
                self.notes.append(f"missed {where}: {want}")


def _loops(session: dict[str, Any]) -> list[dict[str, Any]]:
    return list(session["loops"])


def real_figures(root: Path) -> dict[str, Figures]:
    """Per format, the labelled real sessions under ``root``."""
    document = triage(session_files(root)).to_dict()
    by_name = {(str(Path(s["path"]).relative_to(root)), s["session"]): s
               for s in document["sessions"]}
    out: dict[str, Figures] = {}
    for path, sessions in sorted(labels().items()):
        for name, label in sessions.items():
            session = by_name.get((path, name))
            fmt = session["format"] if session else path.split("/", 1)[0]
            out.setdefault(fmt, Figures()).add(f"{path} {name}", label["loops"],
                                               _loops(session) if session else [])
    return out


def lab_figures() -> dict[str, Figures]:
    """Per agent, the lab's fixtures (the largest session of each, as the lab scores)."""
    out: dict[str, Figures] = {}
    for fixture in fixtures(FIXTURES):
        path = SCENARIOS / f"{fixture.scenario}.toml"
        if not path.exists():
            continue
        scenario = load(path)
        sessions = triage([str(fixture.session_dir)]).to_dict()["sessions"]
        session = max(sessions, key=lambda s: (s["steps"], len(s["failures"]) +
                                               len(s["outcomes"])), default=None)
        found = _loops(session) if session else []
        figures = out.setdefault(fixture.agent, Figures())
        if not scenario.loops_declared:
            figures.undeclared += len(found)
            figures.notes.extend(f"undeclared {fixture.scenario}: {loop['steps']} "
                                 f"{loop.get('cause', loop['signature'])}" for loop in found)
            continue
        played = set(fixture.played())
        label = [list(loop) for loop in scenario.loops if set(loop) <= played]
        figures.add(fixture.scenario, label, found)
    return out


def total(table: dict[str, Figures]) -> Figures:
    """The sum of a table's rows."""
    out = Figures()
    for row in table.values():
        out.labelled += row.labelled
        out.found += row.found
        out.false += row.false
        out.missed += row.missed
        out.undeclared += row.undeclared
    return out


def render(title: str, table: dict[str, Figures], *, undeclared: bool = False) -> str:
    """A plain-text table, one row per format or agent, then the total and the notes."""
    head = f"{title:<16} {'labelled':>8} {'found':>6} {'false':>6} {'missed':>6}"
    lines = [head + (f" {'undeclared':>10}" if undeclared else "")]
    for name, row in [*sorted(table.items()), ("total", total(table))]:
        line = f"{name:<16} {row.labelled:>8} {row.found:>6} {row.false:>6} {row.missed:>6}"
        lines.append(line + (f" {row.undeclared:>10}" if undeclared else ""))
    lines += [f"  {note}" for _, row in sorted(table.items()) for note in row.notes]
    return "\n".join(lines)


def main() -> None:
    """Print both tables."""
    if SESSIONS.is_dir():
        print(render("real sessions", real_figures(SESSIONS.resolve())))
    else:
        print(f"no real sessions at {SESSIONS}", file=sys.stderr)
    print()
    print(render("lab (agent)", lab_figures(), undeclared=True))


if __name__ == "__main__":
    main()
