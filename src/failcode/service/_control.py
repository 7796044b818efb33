"""The service's control tables: projects, keys and webhooks, in the store ``--store`` names.

Rules:

- **Projects.** A name is 1 to 40 lowercase letters, digits and hyphens, starting with a letter
  or digit (it appears in URLs, file names and PostgreSQL schema names). Each project has its
  own event store (:mod:`failcode.service._projects`) and a retention in days: at least
  :data:`RETENTION_FLOOR_DAYS`, :data:`DEFAULT_RETENTION_DAYS` unless set.
- **Project schemas (PostgreSQL).** A project's schema name is chosen when the project is made
  and kept in its row (``svc_projects.schema_name``): ``fc<oid>_<n>_<name>``, where ``<oid>``
  is the PostgreSQL id of the control store's schema (unique in the database), ``<n>`` the
  project's number in its control store (one more than the last, never reused) and
  ``<name>`` the project name, hyphens as underscores, cut to fit 63 bytes. The digits before
  the name make it unique by construction, so no two projects of one service or of two
  services sharing a database ever share a schema. Projects made before (control schema
  version 1) keep the schema the old rule gave them (:func:`legacy_schema_name`, as PostgreSQL
  cut it to 63 bytes); when two of them were cut to the same schema, the oldest keeps it and
  the others get a new schema of their own. On SQLite the column stays empty: a project's file
  is named after the project, and project names are unique.
- **Keys.** A key belongs to one project and has one scope: ``ingest`` (the doors in:
  events, OTLP, classify; nothing else), ``read`` (every GET of its project, and classify) or
  ``admin`` (everything of its project: reading, changing findings and webhooks, ingest). A
  key reads ``fc_<scope>_<id>_<secret>``: the id names its row, the secret is 32 random bytes
  (URL-safe base64). Only the SHA-256 of the whole key is stored; a presented key is looked up
  by its id and its digest compared in constant time (:func:`hmac.compare_digest`), so the
  service never holds a key it could show and a wrong key takes as long as a right one to
  refuse. A key is shown once, when it is made; a revoked key is refused from then on.
- **Shared state (control schema version 3).** What the service's workers and replicas share
  (request counts, dashboard sessions, failed sign-ins, alert windows and throttles, the
  retention lease) has its tables here too (:mod:`failcode.service._shared`); a store of
  version 1 or 2 gains them when a version-3 service opens it.
- Every change is one transaction of the control store; reading is one query.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from typing import TYPE_CHECKING, Final, Literal

import msgspec

from failcode import FC, FailureError
from failcode.service._shared import SHARED_DDL

if TYPE_CHECKING:
    from failcode.store import Store
    from failcode.store._ingest import Tx

__all__ = [
    "DEFAULT_RETENTION_DAYS",
    "RETENTION_FLOOR_DAYS",
    "SCOPES",
    "Control",
    "Key",
    "Project",
    "Scope",
    "check_project_name",
    "legacy_schema_name",
    "unique_schema_name",
]

Scope = Literal["ingest", "read", "admin"]
SCOPES: Final[tuple[Scope, ...]] = ("ingest", "read", "admin")
DEFAULT_RETENTION_DAYS: Final = 90
"""Days a project keeps its events unless told otherwise (counts and findings stay)."""
RETENTION_FLOOR_DAYS: Final = 1
"""The shortest retention a project may have."""
MAX_RETENTION_DAYS: Final = 36_500

_NAME_RE: Final = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")
_KEY_RE: Final = re.compile(r"fc_(ingest|read|admin)_([a-z0-9]{12})_([A-Za-z0-9_-]{43})")
_SCHEMA_KEY: Final = "service_control_schema"
_SCHEMA_VERSION: Final = "3"
_SEQ_KEY: Final = "service_project_seq"
_PG_NAME_BYTES: Final = 63

_DDL: Final = (
    ("CREATE TABLE IF NOT EXISTS svc_projects (name TEXT PRIMARY KEY, created_us BIGINT NOT NULL,"
    " retention_days BIGINT NOT NULL, schema_name TEXT)"),
    ("CREATE TABLE IF NOT EXISTS svc_keys (key_id TEXT PRIMARY KEY, project TEXT NOT NULL, "
    "scope TEXT NOT NULL, digest TEXT NOT NULL, note TEXT NOT NULL, created_us BIGINT NOT NULL, "
    "revoked_us BIGINT)"),
    ("CREATE TABLE IF NOT EXISTS svc_webhooks (id TEXT PRIMARY KEY, project TEXT NOT NULL, "
    "url TEXT NOT NULL, rules TEXT NOT NULL, rate_threshold BIGINT, rate_window_s BIGINT NOT "
    "NULL, throttle_s BIGINT NOT NULL, format TEXT NOT NULL, created_us BIGINT NOT NULL)"),
)


class Project(msgspec.Struct, frozen=True, kw_only=True):
    """A project: its name, when it was made and how long its events are kept."""

    name: str
    created_us: int
    retention_days: int


class Key(msgspec.Struct, frozen=True, kw_only=True):
    """A key's row (never the key itself)."""

    key_id: str
    project: str
    scope: Scope
    note: str
    created_us: int
    revoked_us: int | None = None


def _bad(problem: str) -> FailureError:
    return FailureError(FC.DATA_INVALID_INPUT.failure(surface="service.control",
                                                      params={"problem": problem}))


def check_project_name(name: str) -> str:
    """``name`` when it is a valid project name.

    Raises:
        FailureError: FC-DATA-001 naming the value and the rule.
    """
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        shown = repr(name)[:60]
        raise _bad(f"the project name {shown} is not 1 to 40 lowercase letters, digits and "
                   "hyphens starting with a letter or digit")
    return name


def legacy_schema_name(project: str, control_schema: str = "public") -> str:
    """The schema control schema version 1 gave ``project``, as PostgreSQL made it.

    ``failcode_<name>`` under a control store in ``public``, ``<control schema>_<name>``
    otherwise (hyphens as underscores), cut to 63 bytes: two long names could be cut to one
    schema, which is why new projects get :func:`unique_schema_name`.
    """
    base = check_project_name(project).replace("-", "_")
    name = "failcode_" + base if control_schema == "public" else f"{control_schema}_{base}"
    return name.encode()[:_PG_NAME_BYTES].decode("utf-8", "ignore")


def unique_schema_name(project: str, control_oid: int, number: int) -> str:
    """The schema of the ``number``-th project of the control store in schema ``control_oid``.

    ``fc<oid>_<number>_<name>`` cut to 63 bytes: the part before the name (digits, each
    ended by ``_``) differs for every (control schema, project) pair, so the whole does.
    """
    if control_oid < 0 or number < 1:
        raise ValueError(f"a schema id needs a control schema oid >= 0 and a project number "
                         f">= 1, not {control_oid} and {number}")
    head = f"fc{control_oid}_{number}_"
    return head + check_project_name(project).replace("-", "_")[:_PG_NAME_BYTES - len(head)]


def check_retention(days: int) -> int:
    """``days`` when it is a valid retention (FC-DATA-001 otherwise; never clamped)."""
    if type(days) is not int or not RETENTION_FLOOR_DAYS <= days <= MAX_RETENTION_DAYS:
        raise _bad(f"the retention {days!r} days is not in {RETENTION_FLOOR_DAYS}.."
                   f"{MAX_RETENTION_DAYS}")
    return days


def digest(key: str) -> str:
    """The stored form of a key: its SHA-256, hex."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _now_us() -> int:
    return time.time_ns() // 1000


class Control:
    """Projects, keys and webhooks over one store (the service's ``--store``)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        with store.transaction() as tx:
            store.backend.lock_schema(tx)  # replicas starting at once: one migrates
            for statement in _DDL:
                tx.run(statement)
            tx.run("INSERT INTO meta (key, value) VALUES (?, '0') ON CONFLICT (key) DO NOTHING",
                   (_SEQ_KEY,))
            known = tx.run("SELECT value FROM meta WHERE key = ?" + tx.lock, (_SCHEMA_KEY,))
            if not known:  # a new control store: its table has the column already
                tx.run("INSERT INTO meta (key, value) VALUES (?, ?)",
                       (_SCHEMA_KEY, _SCHEMA_VERSION))
            else:
                version = str(known[0][0])
                if version == "1":
                    self._migrate_from_1(tx)
                if version in ("1", "2"):  # 2 -> 3: the shared tables, made below
                    tx.run("UPDATE meta SET value = ? WHERE key = ?",
                           (_SCHEMA_VERSION, _SCHEMA_KEY))
            for statement in SHARED_DDL:  # version 3: what the service's processes share
                tx.run(statement)
            tx.run("CREATE UNIQUE INDEX IF NOT EXISTS svc_projects_schema "
                   "ON svc_projects (schema_name)")

    def _migrate_from_1(self, tx: Tx) -> None:
        """Give version 1's projects the column, and on PostgreSQL the schema they have."""
        columns = ("SELECT column_name FROM information_schema.columns WHERE table_schema = "
                   "current_schema() AND table_name = 'svc_projects'"
                   if self.store.dialect == "postgresql"
                   else "SELECT name FROM pragma_table_info('svc_projects')")
        if "schema_name" not in {str(r[0]) for r in tx.run(columns)}:
            tx.run("ALTER TABLE svc_projects ADD COLUMN schema_name TEXT")
        if self.store.dialect != "postgresql":
            return
        control_schema = str(tx.run("SELECT current_schema()")[0][0])
        taken: set[str] = set()
        for name, schema in tx.run("SELECT name, schema_name FROM svc_projects "
                                   "ORDER BY created_us, name"):
            if schema is not None:
                taken.add(str(schema))
                continue
            old = legacy_schema_name(str(name), control_schema)
            # the oldest project keeps a schema the old rule gave two; the others get new ones
            chosen = old if old not in taken else self._new_schema(tx, str(name))
            taken.add(chosen)
            tx.run("UPDATE svc_projects SET schema_name = ? WHERE name = ?", (chosen, name))

    def _new_schema(self, tx: Tx, project: str) -> str:
        """The next project number's schema (the meta row's lock orders concurrent makers)."""
        number = int(tx.run("UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) "
                            "WHERE key = ? RETURNING value", (_SEQ_KEY,))[0][0])
        oid = int(tx.run("SELECT oid FROM pg_namespace WHERE nspname = current_schema()")[0][0])
        return unique_schema_name(project, oid, number)

    def schema_of(self, name: str) -> str | None:
        """The PostgreSQL schema of project ``name`` (None on SQLite or for no such project)."""
        rows = self.store.fetch("SELECT schema_name FROM svc_projects WHERE name = ?", (name,))
        return None if not rows or rows[0][0] is None else str(rows[0][0])

    # -- projects --------------------------------------------------------------------------
    def create_project(self, name: str, *, retention_days: int = DEFAULT_RETENTION_DAYS,
                       ) -> Project:
        """Make a project.

        Raises:
            FailureError: FC-DATA-001 for a bad name or retention, FC-SVC-007 when it exists.
        """
        project = Project(name=check_project_name(name), created_us=_now_us(),
                          retention_days=check_retention(retention_days))
        with self.store.transaction() as tx:
            schema = (self._new_schema(tx, project.name)
                      if self.store.dialect == "postgresql" else None)
            made = tx.run("INSERT INTO svc_projects (name, created_us, retention_days, "
                          "schema_name) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING "
                          "RETURNING name", (project.name, project.created_us,
                                             project.retention_days, schema))
        if not made:
            raise FailureError(FC.SVC_CONFLICT.failure(surface="service.control", params={
                "problem": f"the project {name} exists"}))
        return project

    def projects(self) -> list[Project]:
        """Every project, by name."""
        rows = self.store.fetch("SELECT name, created_us, retention_days FROM svc_projects "
                                "ORDER BY name")
        return [Project(name=r[0], created_us=int(r[1]), retention_days=int(r[2]))
                for r in rows]

    def project(self, name: str) -> Project | None:
        """The project named ``name``, or None."""
        rows = self.store.fetch("SELECT name, created_us, retention_days FROM svc_projects "
                                "WHERE name = ?", (name,))
        return (Project(name=rows[0][0], created_us=int(rows[0][1]),
                        retention_days=int(rows[0][2])) if rows else None)

    def require_project(self, name: str) -> Project:
        """The project named ``name``.

        Raises:
            FailureError: FC-SVC-003 naming it, with the command that makes one.
        """
        found = self.project(check_project_name(name))
        if found is None:
            raise FailureError(FC.SVC_NOT_FOUND.failure(surface="service.control", params={
                "what": f"The project {name} (make it with `failcode project create {name}`)"}))
        return found

    def set_retention(self, name: str, days: int) -> Project:
        """Set a project's retention in days."""
        self.require_project(name)
        with self.store.transaction() as tx:
            tx.run("UPDATE svc_projects SET retention_days = ? WHERE name = ?",
                   (check_retention(days), name))
        return self.require_project(name)

    # -- keys ------------------------------------------------------------------------------
    def create_key(self, project: str, scope: str, *, note: str = "") -> tuple[str, Key]:
        """Make a key; returns (the key, shown this once, and its row)."""
        self.require_project(project)
        if scope not in SCOPES:
            raise _bad(f"the scope {scope!r} is not one of {', '.join(SCOPES)}")
        key_id = "".join(secrets.choice("abcdefghijkmnpqrstuvwxyz23456789") for _ in range(12))
        secret = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode().rstrip("=")
        key = f"fc_{scope}_{key_id}_{secret}"
        row = Key(key_id=key_id, project=project, scope=scope, note=note[:200],
                  created_us=_now_us())
        with self.store.transaction() as tx:
            tx.run("INSERT INTO svc_keys (key_id, project, scope, digest, note, created_us) "
                   "VALUES (?, ?, ?, ?, ?, ?)",
                   (row.key_id, project, scope, digest(key), row.note, row.created_us))
        return key, row

    def keys(self, project: str | None = None) -> list[Key]:
        """The keys' rows (of one project, or all), newest first."""
        sql = ("SELECT key_id, project, scope, note, created_us, revoked_us FROM svc_keys"
               + (" WHERE project = ?" if project else "") + " ORDER BY created_us DESC")
        rows = self.store.fetch(sql, (project,) if project else ())
        return [Key(key_id=r[0], project=r[1], scope=r[2], note=r[3], created_us=int(r[4]),
                    revoked_us=None if r[5] is None else int(r[5])) for r in rows]

    def revoke_key(self, key_id: str) -> Key:
        """Revoke a key by its id (the second part of the key, or the whole key)."""
        match = _KEY_RE.fullmatch(key_id)
        wanted = match.group(2) if match else key_id
        with self.store.transaction() as tx:
            rows = tx.run("UPDATE svc_keys SET revoked_us = ? WHERE key_id = ? AND revoked_us "
                          "IS NULL RETURNING key_id", (_now_us(), wanted))
        found = [k for k in self.keys() if k.key_id == wanted]
        if not found:
            raise FailureError(FC.SVC_NOT_FOUND.failure(surface="service.control", params={
                "what": f"The key {wanted[:20]!r}"}))
        if not rows and found[0].revoked_us is None:  # pragma: no cover - a racing revoke
            return self.revoke_key(wanted)
        return found[0]

    def authenticate(self, presented: str) -> Key | None:
        """The row of a presented key, when it is valid and not revoked; else None."""
        match = _KEY_RE.fullmatch(presented)
        if match is None:
            return None
        rows = self.store.fetch(
            "SELECT key_id, project, scope, note, created_us, revoked_us, digest FROM svc_keys "
            "WHERE key_id = ?", (match.group(2),))
        if not rows:
            hmac.compare_digest(digest(presented), "0" * 64)  # the same work as a known id
            return None
        r = rows[0]
        if not hmac.compare_digest(digest(presented), str(r[6])) or r[5] is not None:
            return None
        if r[2] != match.group(1):
            return None
        return Key(key_id=r[0], project=r[1], scope=r[2], note=r[3], created_us=int(r[4]))
