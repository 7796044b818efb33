"""Where each project's events live: one failcode store per project, beside the control store.

Rules:

- SQLite: the control store ``sqlite:///data/failcode.db`` keeps project ``web``'s events in
  ``data/failcode.projects/web.db`` (the folder is made when the first project is opened).
- PostgreSQL: the control store's database keeps project ``web``'s events in the schema
  ``failcode_web`` (hyphens become underscores; project names hold no underscore, so two
  names never share a schema), made when the project is first opened; the project's store
  connects with ``search_path`` set to it. The role needs ``CREATE`` on the database. A
  control store in another schema than ``public`` (``options=-csearch_path=team``) keeps its
  projects in ``team_web``, so two services can share one database.
- A project's store is an ordinary failcode store: ``failcode store diagnostics --store
  <its URL>`` reads it, and ``failcode triage --store <its URL>`` writes to it.
- Stores are opened once and kept; :meth:`ProjectStores.close` closes them all.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Final
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from failcode.service._control import check_project_name
from failcode.service._findings import ensure_tables
from failcode.store import open_store

if TYPE_CHECKING:
    from failcode.store import Store

__all__ = ["ProjectStores", "project_url"]

_SCHEMA_PREFIX: Final = "failcode_"


def _sqlite_path(url: str) -> Path:
    text = url.strip()
    if text.startswith("sqlite:///"):
        return Path(text[len("sqlite:///"):])
    if text.startswith("sqlite://"):
        return Path(text[len("sqlite://"):])
    return Path(text)


def schema_name(project: str, control_schema: str = "public") -> str:
    """The PostgreSQL schema of a project under a control store in ``control_schema``."""
    base = check_project_name(project).replace("-", "_")
    return _SCHEMA_PREFIX + base if control_schema == "public" else f"{control_schema}_{base}"


def project_url(control_url: str, project: str, *, control_schema: str = "public") -> str:
    """The store URL of ``project`` under the control store ``control_url`` (see the module)."""
    check_project_name(project)
    if control_url.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(control_url)
        query = []
        for name, given in parse_qsl(parts.query, keep_blank_values=True):
            value = given
            if name == "options":  # keep the other settings, replace the search path
                value = " ".join(t for t in given.split() if not t.startswith(
                    ("-csearch_path", "-c search_path")))
                if not value:
                    continue
            query.append((name, value))
        schema = schema_name(project, control_schema)
        options = dict(query).get("options", "")
        query = [(n, v) for n, v in query if n != "options"]
        query.append(("options", f"{options} -csearch_path={schema}".strip()))
        return urlunsplit((parts.scheme, parts.netloc, parts.path,
                           urlencode(query, quote_via=quote), parts.fragment))
    path = _sqlite_path(control_url)
    return "sqlite:///" + str(path.with_name(path.stem + ".projects") / f"{project}.db")


class ProjectStores:
    """The open stores of the projects of one control store."""

    def __init__(self, control: Store, control_url: str, *, timeout_s: float = 5.0) -> None:
        self._control = control
        self._url = control_url
        self._timeout = timeout_s
        self._stores: dict[str, Store] = {}
        self._lock = threading.Lock()
        self._control_schema: str | None = None

    def url(self, project: str) -> str:
        """The store URL of ``project``."""
        return project_url(self._url, project, control_schema=self._schema())

    def _schema(self) -> str:
        if self._control.dialect != "postgresql":
            return "public"
        if self._control_schema is None:
            self._control_schema = str(self._control.fetch("SELECT current_schema()")[0][0])
        return self._control_schema

    def get(self, project: str) -> Store:
        """The store of ``project``, opened (made and migrated) on first use.

        Raises:
            StoreError: the store cannot be opened (FC-STORE codes).
        """
        store = self._stores.get(project)
        if store is not None:
            return store
        with self._lock:
            store = self._stores.get(project)
            if store is None:
                store = self._open(project)
                self._stores[project] = store
        return store

    def _open(self, project: str) -> Store:
        url = self.url(project)
        if self._control.dialect == "postgresql":
            with self._control.transaction() as tx:
                tx.run(f'CREATE SCHEMA IF NOT EXISTS "{schema_name(project, self._schema())}"')
        else:
            _sqlite_path(url).parent.mkdir(parents=True, exist_ok=True)
        store = open_store(url, timeout_s=self._timeout)
        try:
            ensure_tables(store)
        except BaseException:
            store.close()
            raise
        return store

    def opened(self) -> dict[str, Store]:
        """The stores opened so far, by project."""
        with self._lock:
            return dict(self._stores)

    def close(self) -> None:
        """Close every opened store."""
        with self._lock:
            stores, self._stores = list(self._stores.values()), {}
        for store in stores:
            store.close()
