"""OpenCode's own database in the lab (``opencode.db``, kept beside each opencode fixture as
``meta.json``'s ``databases``, normalized by :mod:`tests.lab.databases`): triage reads it as
the ``opencode-db`` format, scored against the scenarios' ground truth like the export, and
step by step it says what ``opencode export`` of the same run says."""

from __future__ import annotations

from typing import TYPE_CHECKING

from failcode.triage.readers import detect
from tests.lab.conftest import SCORES
from tests.lab.kept import kept_logs, log_steps, session_steps
from tests.lab.report import agent_records
from tests.lab.scenario import SCENARIOS, load
from tests.lab.score import check_fixture, fixtures, triage_fixture

if TYPE_CHECKING:
    from pathlib import Path

    from tests.lab.score import Fixture

FLOOR = 1.0
"""The share of checks triage must pass on the databases (raise it, never lower it)."""


def _databases() -> list[tuple[Fixture, Path]]:
    return kept_logs("opencode", "databases")


def test_every_opencode_fixture_keeps_its_database() -> None:
    """Each opencode run keeps ``opencode.db`` beside its export."""
    missing = [f.scenario for f in fixtures() if f.agent == "opencode"
               and not (f.path / "opencode.db").is_file()]
    assert missing == []


def test_every_kept_database_is_read_as_opencode() -> None:
    """Each kept database is detected as OpenCode's, read by path, without an input error."""
    for fixture, path in _databases():
        reader = detect(path.read_bytes()[:65536])
        assert reader is not None, path
        assert reader.name == "opencode-db", (fixture.scenario, reader.name)
        seen = triage_fixture(fixture, path)
        assert seen.sessions >= 1, fixture.scenario


def test_triage_passes_every_check_on_the_databases() -> None:
    """The scenarios' ground truth, checked on the database instead of the export."""
    records = agent_records().get("opencode")
    checks = []
    for fixture, path in _databases():
        scenario = load(SCENARIOS / f"{fixture.scenario}.toml")
        checks += check_fixture(fixture, scenario, triage_fixture(fixture, path), records)
    observable = [c for c in checks if c.observable]
    passed = sum(c.passed for c in observable)
    SCORES.append(f"{'opencode db':15} {passed:4}/{len(observable):<4} "
                  f"{passed / len(observable):6.1%}  (floor {FLOOR:.1%})")
    failed = [f"{c.scenario} step {c.step} {c.name}: {c.detail}" for c in observable
              if not c.passed]
    assert passed / len(observable) >= FLOOR, failed


def test_the_database_and_the_export_of_a_run_give_the_same_steps() -> None:
    """Steps, commands, exit statuses and outcomes agree between the two logs of a run."""
    differ = []
    for fixture, path in _databases():
        from_export = session_steps(fixture)
        if log_steps(path) != from_export:
            differ.append((fixture.scenario, log_steps(path), from_export))
    assert differ == []
