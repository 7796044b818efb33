"""Where each project's events live: one failcode store per project, beside the control store.

Rules:

- SQLite: the control store ``sqlite:///data/failcode.db`` keeps project ``web``'s events in
  ``data/failcode.projects/web.db`` (the folder is made when the first project is opened).
  Project names are unique and lowercase, so two projects never share a file.
- PostgreSQL: the control store's database keeps each project's events in a schema of its
  own, named when the project is made and kept in the control store
  (:mod:`failcode.service._control`: ``fc<oid>_<n>_<name>``, e.g. ``fc2200_1_web``; unique
  by construction, never a cut name, so two projects of one service, or of two services
  sharing a database in different control schemas, never share one). The schema is made when
  the project is first opened; the project's store connects with ``search_path`` set to it.
  The role needs ``CREATE`` on the database. Projects made by an older version keep the
  schema they have (``failcode_web``, or ``team_web`` under a control store in schema
  ``team``).
- A project's store is an ordinary failcode store: ``failcode store diagnostics --store
  <its URL>`` reads it, and ``failcode triage --store <its URL>`` writes to it.
- Stores are opened once and kept; :meth:`ProjectStores.close` closes them all.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from failcode import FC, FailureError
from failcode.service._control import check_project_name, legacy_schema_name
from failcode.service._findings import ensure_tables
from failcode.store import open_store

if TYPE_CHECKING:
    from failcode.store import Store

__all__ = ["ProjectStores", "project_url"]


def _sqlite_path(url: str) -> Path:
    text = url.strip()
    if text.startswith("sqlite:///"):
        return Path(text[len("sqlite:///"):])
    if text.startswith("sqlite://"):
        return Path(text[len("sqlite://"):])
    return Path(text)


def project_url(control_url: str, project: str, *, control_schema: str = "public",
                schema: str | None = None) -> str:
    """The store URL of ``project`` under the control store ``control_url`` (see the module).

    On PostgreSQL the project's schema is ``schema``, the name its row in the control store
    keeps (:meth:`ProjectStores.url` reads it); without it, the name an older version gave it
    (:func:`~failcode.service._control.legacy_schema_name` under ``control_schema``).
    """
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
        schema = schema or legacy_schema_name(project, control_schema)
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
        self._schemas: dict[str, str] = {}

    def url(self, project: str) -> str:
        """The store URL of ``project``.

        Raises:
            FailureError: FC-SVC-003 on PostgreSQL when the control store has no such project.
        """
        return project_url(self._url, project, schema=self.schema(project))

    def schema(self, project: str) -> str | None:
        """The PostgreSQL schema of ``project``, as its row keeps it (None on SQLite)."""
        if self._control.dialect != "postgresql":
            return None
        known = self._schemas.get(check_project_name(project))
        if known is None:
            rows = self._control.fetch("SELECT schema_name FROM svc_projects WHERE name = ?",
                                       (project,))
            if not rows or rows[0][0] is None:
                raise FailureError(FC.SVC_NOT_FOUND.failure(
                    surface="service.projects", params={
                        "what": f"The project {project} (make it with `failcode project "
                                f"create {project}`)"}))
            known = self._schemas[project] = str(rows[0][0])
        return known

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
            with self._control.transaction() as tx:  # one process at a time makes it
                self._control.backend.lock_schema(tx)
                tx.run(f'CREATE SCHEMA IF NOT EXISTS "{self.schema(project)}"')
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
