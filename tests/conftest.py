"""Test configuration shared by every test module."""

from __future__ import annotations

import os
import secrets
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

# The machines are shared and noisy: Hypothesis' per-example deadline is a timing assertion.
settings.register_profile("failcode", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("failcode"), derandomize=True,
                          print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "failcode")


# -- the event store's backends: a fresh SQLite file, or a fresh schema on the test server ---

BACKENDS = ("sqlite", "postgresql")


def pg_server_url() -> str:
    """The throwaway server of scripts/test.sh; skip (fail when CI=true) without one."""
    url = os.environ.get("FAILCODE_TEST_PG_URL", "")
    if not url or url == "unavailable":
        reason = "no PostgreSQL test server (scripts/test.sh starts one)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
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
