"""The live subset: one scenario through every pinned agent, now, on this machine.

A new agent version that changes its format must fail loudly here, not read as nothing: the
live run's session must score at least what the committed fixture of the same agent, version
and scenario scores, and the stub must play the same steps. An agent that cannot be installed
or driven is a skip with the reason, and a failure under ``CI=true`` (``scripts/test.sh``
installs them with ``python -m tests.lab install``).

A release newer than the pin fails too (the drift check): the registry's newest version of each
agent's package (npm's ``latest`` tag, PyPI's newest release for the agent's Python) must be
the pin, so a new release is read, pinned and its fixtures regenerated
(``python -m tests.lab pin AGENT VERSION``) before anyone meets its logs. A registry that
cannot be asked is a skip with the reason (a failure under ``CI=true``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from tests._needs import missing
from tests.lab.agents import agents
from tests.lab.runner import FIXTURES, run_and_save
from tests.lab.scenario import SCENARIOS, load
from tests.lab.score import Fixture, check_fixture, fixtures

if TYPE_CHECKING:
    from pathlib import Path

    from tests.lab.agents import Agent

LIVE_SCENARIO = "mixed-session"
LIVE_FALLBACK = "pytest-failure"
"""The live scenario of an agent that cannot run ``LIVE_SCENARIO`` (Qwen Code refuses its
``sed -i`` of a file it has not read)."""


@pytest.mark.parametrize("name", sorted(agents()))
def test_a_live_run_reads_as_well_as_its_fixture(name: str, tmp_path: Path) -> None:
    """The agent runs the live scenario now, and triage scores it as the fixture scores."""
    agent = agents()[name]
    if not agent.installed():
        missing(f"{name} {agent.version} is not installed (python -m tests.lab install)")
    scenario = load(SCENARIOS / f"{LIVE_SCENARIO}.toml")
    if agent.supports(scenario) is not None:
        scenario = load(SCENARIOS / f"{LIVE_FALLBACK}.toml")
    result, target = run_and_save(agent, scenario, tmp_path)
    if result.skipped:
        missing(f"{name}: {result.skipped}")
    assert not result.timed_out, result.stderr[-2000:]
    assert target is not None
    assert result.files, (f"{name} {agent.version} wrote no session file where the lab "
                          f"looks: {result.stderr[-2000:]}")
    live = Fixture(target, _meta(target))
    committed = next(f for f in fixtures(FIXTURES)
                     if f.agent == name and f.scenario == scenario.name)
    assert committed.meta["version"] == agent.version
    assert live.played() == committed.played()
    live_passed = sum(c.passed for c in check_fixture(live, scenario))
    committed_passed = sum(c.passed for c in check_fixture(committed, scenario))
    assert live_passed >= committed_passed, (
        f"{name} {agent.version}: the live session passes {live_passed} checks, its fixture "
        f"{committed_passed}: the agent's format drifted from what triage reads")


def _meta(target: Path) -> dict[str, object]:
    import json

    return json.loads((target / "meta.json").read_text())  # type: ignore[no-any-return]


def newest_release(agent: Agent) -> str:
    """The registry's newest release of the agent's package, asked with the registry's own
    client (``npm view``, ``pip index versions``); a skip (a failure under ``CI=true``) when
    the registry cannot be asked."""
    if agent.installer == "npm":
        npm = shutil.which("npm")
        if npm is None:
            missing("npm is not installed (it asks the registry for the newest release)")
        argv = [npm, "view", agent.package, "version"]
    else:
        argv = [sys.executable, "-m", "pip", "index", "versions", agent.package,
                "--disable-pip-version-check", "--python-version",
                ".".join(map(str, agent.min_python))]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    except subprocess.TimeoutExpired:
        missing(f"the registry did not answer for {agent.package} in 120 s")
    found = re.search(r"^(?:\S+ \()?(\d[\w.+-]*)\)?\s*$", done.stdout.strip().splitlines()[0]
                      if done.stdout.strip() else "", re.MULTILINE)
    if done.returncode != 0 or found is None:
        missing(f"the registry could not be asked for {agent.package}: "
                f"{(done.stderr or done.stdout).strip()[-300:]}")
    return found.group(1)


@pytest.mark.parametrize("name", sorted(agents()))
def test_the_pin_is_the_newest_release(name: str) -> None:
    """The drift check: a release newer than the pin fails loudly, naming what to run."""
    agent = agents()[name]
    newest = newest_release(agent)
    assert newest == agent.version, (
        f"{agent.package} {newest} is out, the lab pins {agent.version}: read what it writes "
        f"and run python -m tests.lab pin {name} {newest}")
