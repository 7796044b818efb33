"""Test configuration shared by every test module.

Hypothesis profiles: ``failcode`` (local runs: random, Hypothesis' default budget) and ``ci``
(``CI=true``: the same budget, and a failure prints its blob). CI explores too: its seed
changes on every run and is printed at the top of the log (``hypothesis seed: N``), so any
failure replays with ``HYPOTHESIS_SEED=N``; set that variable to pin a run. Tests of the
invariants that matter most (idempotency, round trips, never-raise) also have a ``deep``
variant (marker ``deep``, ``DEEP_EXAMPLES`` examples) that the default run deselects and
``.ci/run`` runs as its own step (``pytest -m deep``). The linear-time checks by growth ratio
(``tests/_growth.py``, ``tests/_growth_alarm.py``) are marked ``deep`` too: they measure 16
times an input, 700 CPU-seconds in all.

Under ``CI=true`` a skipped test fails the run (see :mod:`tests._needs`): the CI set-up provides
every tool, package and data folder the suite needs.

Signals: SIGINT and SIGQUIT get their default dispositions back when the suite starts ignoring
them (a shell's background job), so every command a test runs sees them as a terminal's would.
"""

from __future__ import annotations

import os
import random
import secrets
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

CI = os.environ.get("CI") == "true"

# The machines are shared and noisy: Hypothesis' per-example deadline is a timing assertion.
settings.register_profile("failcode", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("failcode"), print_blob=True)
# A mutation run (bench/mutation.py sets FAILCODE_MUTATION_RUN) runs the suite more than once
# in one process, so a property test that is a method of a test class meets a second instance
# of its class; the classes hold no state, and the health check against that is off for such
# runs only.
settings.register_profile("mutation", parent=settings.get_profile("failcode"),
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.differing_executors])
settings.load_profile("mutation" if os.environ.get("FAILCODE_MUTATION_RUN") == "1"
                      else "ci" if CI else "failcode")

SEED = int(os.environ.get("HYPOTHESIS_SEED") or random.SystemRandom().randrange(2**32))
"""This run's Hypothesis seed: printed in the header, replayable with HYPOTHESIS_SEED."""


def pytest_report_header() -> str:
    return f"hypothesis seed: {SEED} (replay with HYPOTHESIS_SEED={SEED})"


@pytest.hookimpl(tryfirst=True)  # before Hypothesis' own plugin reads the option
def pytest_configure(config: pytest.Config) -> None:
    # the same as `pytest --hypothesis-seed=SEED`: every property test draws from this seed
    if config.getoption("hypothesis_seed", None) is None:
        config.option.hypothesis_seed = SEED
    _default_signals()


def _default_signals() -> None:
    """Run with the signal dispositions a terminal gives. A shell's background job starts
    with SIGINT and SIGQUIT ignored, and an ignored signal stays ignored in every process the
    tests start (``bash -c 'kill -INT $$'`` then exits 0): put the defaults back, so the tests
    see what a person's or CI's commands see, whatever started the suite."""
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if hasattr(signal, "SIGQUIT") and signal.getsignal(signal.SIGQUIT) == signal.SIG_IGN:
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)


_skipped: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if CI and report.skipped and not hasattr(report, "wasxfail"):
        _skipped.append(report.nodeid)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if CI and report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _skipped and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _skipped:
        terminalreporter.section("skipped under CI=true (a failure: the set-up must provide it)")
        for nodeid in _skipped:
            terminalreporter.line(nodeid)


@pytest.fixture(autouse=True, scope="session")
def _triage_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Triage's cache (on with ``--home``, or ``--cache``) writes to a temporary folder, never
    the user's cache folder: ``FAILCODE_CACHE_DIR``, inherited by the commands tests run."""
    before = os.environ.get("FAILCODE_CACHE_DIR")
    os.environ["FAILCODE_CACHE_DIR"] = str(tmp_path_factory.mktemp("triage-cache"))
    yield
    if before is None:
        os.environ.pop("FAILCODE_CACHE_DIR", None)
    else:
        os.environ["FAILCODE_CACHE_DIR"] = before


DEEP_EXAMPLES = int(os.environ.get("FAILCODE_DEEP_EXAMPLES", "2000"))
"""Examples of a property test marked ``deep``: CI runs those in their own job
(``pytest -m deep``), so a property sees far more than the default budget."""
# -- the event store's backends: a fresh SQLite file, or a fresh schema on the test server ---

BACKENDS = ("sqlite", "postgresql")


def pg_server_url() -> str:
    """The throwaway server of scripts/test.sh; skip (a failure when CI=true) without one."""
    from tests._needs import missing

    url = os.environ.get("FAILCODE_TEST_PG_URL", "")
    if not url or url == "unavailable":
        missing("no PostgreSQL test server (scripts/test.sh starts one)")
    return url


def fresh_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A URL of an empty store of ``backend``; the PostgreSQL schema is dropped afterwards."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'store' / 'failcode.db'}"
        return
    import psycopg

    server = pg_server_url()
    schema = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in server else "?"
    try:
        yield f"{server}{sep}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(server, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty store, once per backend."""
    yield from fresh_url(request.param, tmp_path)
