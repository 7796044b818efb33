"""The committed fixtures: one per scenario and agent at its pinned version, triaged and scored.

The scoring test prints, per agent, the share of ground-truth checks ``failcode triage``
passes (also in pytest's summary) and fails when an agent falls below its floor in
``floors.toml``. Raise a floor when triage gets better; never lower one to make a run pass.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tests.lab.agents import agents
from tests.lab.conftest import SCORES
from tests.lab.report import BEGIN, END, records_table
from tests.lab.runner import FIXTURES
from tests.lab.scenario import load_all
from tests.lab.score import fixtures, lost, score_fixtures, shares

FLOORS = Path(__file__).parent / "floors.toml"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "triage.md"


def test_every_agent_has_a_fixture_of_every_scenario_it_can_run() -> None:
    """For each agent, each scenario it supports has a fixture at the pinned version."""
    found = {(f.agent, f.scenario): f.meta["version"] for f in fixtures()}
    gaps = []
    for name, agent in agents().items():
        for scenario in load_all():
            if agent.supports(scenario) is not None:
                continue
            version = found.get((name, scenario.name))
            if version != agent.version:
                gaps.append(f"{name} {scenario.name}: fixture of {version}, pin {agent.version}")
    assert gaps == [], "regenerate with: python -m tests.lab run -a AGENT -s SCENARIO"


def test_every_fixture_holds_the_session_the_agent_wrote() -> None:
    """Each fixture lists its session files, and they are there and not empty."""
    for fixture in fixtures():
        assert fixture.meta["files"], fixture.path
        for name in fixture.meta["files"]:
            assert (fixture.path / name).stat().st_size > 0, name


def test_every_fixture_ran_its_scenario() -> None:
    """The stub played at least one step of each run, or a fault stopped it first."""
    for fixture in fixtures():
        answered = [r for r in fixture.meta["requests"] if r.get("api")]
        assert answered, fixture.path
        assert fixture.played() or any(r.get("fault") for r in answered), fixture.path


def test_triage_passes_the_committed_share_of_checks_per_agent() -> None:
    """Per agent, the share of ground-truth checks triage passes is at least its floor."""
    floors = tomllib.loads(FLOORS.read_text())
    checks = score_fixtures()
    table, unsupported = shares(checks), lost(checks)
    low = []
    for agent, (passed, total) in table.items():
        share = passed / total
        SCORES.append(f"{agent:15} {passed:4}/{total:<4} {share:6.1%}  "
                      f"(floor {floors.get(agent, 0):.1%}; "
                      f"{unsupported.get(agent, 0)} checks its log cannot support)")
        if share < floors.get(agent, 1.0):
            low.append(f"{agent}: {share:.1%} < floor {floors[agent]:.1%}")
    assert set(table) == set(agents())
    assert low == [], "python -m tests.lab score shows every failed check"


def test_the_docs_table_of_what_each_agent_records_is_current() -> None:
    """docs/triage.md holds the table `python -m tests.lab report` prints."""
    text = DOCS.read_text()
    assert BEGIN in text
    assert END in text
    current = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert current == records_table(), "update docs/triage.md with: python -m tests.lab report"


@pytest.mark.parametrize("agent", sorted(agents()))
def test_fixtures_are_grouped_by_agent(agent: str) -> None:
    """Each agent's fixtures live under fixtures/<agent>/ and say which agent wrote them."""
    for fixture in fixtures():
        if fixture.path.parent.name == agent:
            assert fixture.agent == agent
    assert (FIXTURES / agent).is_dir()
