"""Each project's PostgreSQL schema is its own: unique by construction, kept across upgrades.

A control store in a schema of 30+ characters left the old rule (``<control>_<name>``, cut to
63 bytes by PostgreSQL) only the first 30 characters of a project's name, so two projects
whose names shared them read and wrote one schema's events.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

import pytest

from failcode import FC
from failcode.events import failure_event
from failcode.service._control import Control, legacy_schema_name, unique_schema_name
from failcode.service._projects import ProjectStores, project_url
from failcode.store import open_store
from tests.conftest import fresh_url, pg_server_url

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from failcode.store import Store

# two valid project names (at most 40 characters) that share their first 38
TWINS = ("agents-of-the-web-shop-checkout-flow-e-a", "agents-of-the-web-shop-checkout-flow-e-b")


def _event(program: str) -> object:
    failure = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": program})
    return failure_event(failure, event="command.failed")


MARKS = ("only-in-a", "only-in-b", "old-web", "old-b", "brand-new")


def _programs(store: Store) -> set[str]:
    """The marks (programs of :func:`_event`) among the events of ``store``."""
    return {mark for (body,) in store.fetch("SELECT body FROM events") for mark in MARKS
            if mark in str(body)}


@pytest.fixture
def long_control() -> Iterator[str]:
    """A control store URL in a fresh schema of 32 characters; every schema made is dropped."""
    import psycopg

    server = pg_server_url()
    schema = f"t_{secrets.token_hex(6)}_a_long_control_nm"
    assert len(schema) == 32
    with psycopg.connect(server, autocommit=True) as connection:
        before = {r[0] for r in connection.execute("SELECT nspname FROM pg_namespace")}
        connection.execute(f"CREATE SCHEMA {schema}")
        oid = connection.execute("SELECT oid FROM pg_namespace WHERE nspname = %s",
                                 (schema,)).fetchone()
    assert oid is not None
    ours = (schema, f"fc{oid[0]}_")  # its own, and its projects' (other tests run beside it)
    sep = "&" if "?" in server else "?"
    try:
        yield f"{server}{sep}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(server, autocommit=True) as connection:
            after = {r[0] for r in connection.execute("SELECT nspname FROM pg_namespace")}
            for made in sorted(after - before):
                if made.startswith(ours):
                    connection.execute(f'DROP SCHEMA "{made}" CASCADE')


def test_names_are_unique_by_construction() -> None:
    assert legacy_schema_name(TWINS[0], "c" * 32) == legacy_schema_name(TWINS[1], "c" * 32)
    # one (control schema oid, project number) pair names one project: distinct pairs give
    # distinct schemas whatever the names, even when the name is cut
    pairs = [(oid, number) for oid in (1, 12, 2200, 2**32 - 1) for number in (1, 2, 21, 10**18)]
    made = {unique_schema_name(TWINS[n % 2], *pair) for n, pair in enumerate(pairs)}
    assert len(made) == len(pairs)
    assert all(len(name.encode()) <= 63 for name in made)
    assert unique_schema_name("web-agents", 2200, 1) == "fc2200_1_web_agents"


def test_long_names_under_a_long_control_schema_never_share_events(long_control: str) -> None:
    with open_store(long_control) as control:
        for name in TWINS:
            Control(control).create_project(name)
        stores = ProjectStores(control, long_control)
        try:
            stores.get(TWINS[0]).append([_event("only-in-a")])
            stores.get(TWINS[1]).append([_event("only-in-b")])
            first, second = (_programs(stores.get(name)) for name in TWINS)
            assert len(first) == len(second) == 1
            assert first != second
            assert stores.schema(TWINS[0]) != stores.schema(TWINS[1])
        finally:
            stores.close()
    # a second service reading the same control store finds the same stores
    with open_store(long_control) as control:
        again = ProjectStores(control, long_control)
        try:
            assert _programs(again.get(TWINS[0])) == first
            assert _programs(again.get(TWINS[1])) == second
        finally:
            again.close()


def _version_1(control: Store, projects: list[tuple[str, int]]) -> None:
    """Make ``control`` what control schema version 1 left: no ``schema_name`` column."""
    with control.transaction() as tx:
        tx.run("CREATE TABLE svc_projects (name TEXT PRIMARY KEY, created_us BIGINT NOT NULL, "
               "retention_days BIGINT NOT NULL)")
        tx.run("INSERT INTO meta (key, value) VALUES ('service_control_schema', '1')")
        for name, created_us in projects:
            tx.run("INSERT INTO svc_projects (name, created_us, retention_days) "
                   "VALUES (?, ?, 90)", (name, created_us))


def _old_store(control_url: str, control: Store, name: str) -> Store:
    """The store version 1 gave project ``name`` (its schema made as version 1 made it)."""
    if control.dialect == "postgresql":
        schema = str(control.fetch("SELECT current_schema()")[0][0])
        with control.transaction() as tx:
            tx.run(f'CREATE SCHEMA IF NOT EXISTS "{legacy_schema_name(name, schema)}"')
        return open_store(project_url(control_url, name, control_schema=schema))
    url = project_url(control_url, name)
    path = url.removeprefix("sqlite:///")
    from pathlib import Path

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return open_store(url)


def test_projects_made_before_keep_their_data(long_control: str) -> None:
    with open_store(long_control) as control:
        _version_1(control, [("web", 1), (TWINS[1], 2), (TWINS[0], 3)])
        for name, program in (("web", "old-web"), (TWINS[1], "old-b")):
            with _old_store(long_control, control, name) as old:
                old.append([_event(program)])
        Control(control)
        Control(control)  # a second start migrates nothing again
        stores = ProjectStores(control, long_control)
        try:
            schema = str(control.fetch("SELECT current_schema()")[0][0])
            assert stores.schema("web") == legacy_schema_name("web", schema)
            assert _programs(stores.get("web")) == {"old-web"}
            # the twins shared one schema: the older keeps it, the younger gets its own
            assert stores.schema(TWINS[1]) == legacy_schema_name(TWINS[1], schema)
            assert _programs(stores.get(TWINS[1])) == {"old-b"}
            assert _programs(stores.get(TWINS[0])) == set()
            Control(control).create_project("new")
            made = stores.schema("new")
            assert made is not None
            assert made.startswith("fc")
            assert made not in {stores.schema(n) for n in ("web", *TWINS)}
            stores.get("new").append([_event("brand-new")])
            assert _programs(stores.get("web")) == {"old-web"}
        finally:
            stores.close()


def test_sqlite_projects_made_before_keep_their_files(tmp_path: Path) -> None:
    for url in fresh_url("sqlite", tmp_path):
        with open_store(url) as control:
            _version_1(control, [("web", 1)])
            with _old_store(url, control, "web") as old:
                old.append([_event("old-web")])
            Control(control)
            Control(control).create_project("web-2")
            stores = ProjectStores(control, url)
            try:
                assert stores.url("web") == project_url(url, "web")
                assert stores.schema("web") is None
                assert _programs(stores.get("web")) == {"old-web"}
                assert _programs(stores.get("web-2")) == set()
            finally:
                stores.close()
