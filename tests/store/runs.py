"""Three runs of one benchmark instance: three failcode event files that triage reads as three
sessions of one name (the files of tests/store/test_store_inputs.py and of the version 3
fixture, tests/fixtures/store_v3.sql).

Each run fails with signature A twice, never twice in a row, between failures of B and C: no
run has a loop (3+ failures of a signature, or 2+ in a row). The runs' steps interleave in
time (step j of run k at minute 3j + k), so one stream made of the three (what schema version 3
kept under the session's name) has A six times, twice in a row twice, and B and C three times
each: loops that exist in no log.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from failcode import FC, NoMatch
from failcode.events import failure_event, outcome_event
from tests.store.sample import T0

if TYPE_CHECKING:
    from pathlib import Path

    from failcode import Failure
    from failcode.events import Event

INSTANCE = "astropy__astropy-12907"
"""The session name of every run (the benchmark instance)."""


def _not_found() -> Failure:
    return FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"},
                                    location="bin/cargo")


def _failed(program: str, location: str) -> Failure:
    return FC.CMD_FAILED.failure(surface="shell.run", params={"program": program,
                                                              "exit_code": 1},
                                 location=location)


A = _not_found()
B = _failed("make", "src/build.mk")
C = _failed("pytest", "tests/test_units.py")
"""Three failures of three causes (triage finds no loop of causes either)."""

RUNS = ((A, B, A, C), (A, C, A, B), (B, A, C, A))
"""The failure at each step of each run."""


def run_events(run: int, session: str = INSTANCE) -> list[Event]:
    """Run ``run``'s events: a failure per step; run 1 also has a probe that found nothing."""
    out = [failure_event(place, event="command.failed", session=session, step=step,
                         ts=T0 + timedelta(minutes=3 * step + run))
           for step, place in enumerate(RUNS[run])]
    if run == 1:
        out.append(outcome_event(NoMatch(probe="grep", exit_code=1),
                                 session=session, step=len(RUNS[run]),
                                 ts=T0 + timedelta(minutes=3 * len(RUNS[run]) + run)))
    return out


def write_runs(folder: Path, session: str = INSTANCE) -> list[Path]:
    """The three runs as ``folder/run-K/SESSION.jsonl`` (K = 1, 2, 3); returns the paths."""
    paths = []
    for run in range(len(RUNS)):
        path = folder / f"run-{run + 1}" / f"{session}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(e.to_json() + b"\n" for e in run_events(run, session)))
        paths.append(path)
    return paths
