"""OpenCode's own session database, ``opencode.db`` (OpenCode 1.2 and later).

Rules (from OpenCode's own code: ``packages/opencode/src/session/session.sql.ts`` (the
``session``, ``message`` and ``part`` tables), ``storage/db.ts`` (where the database is, WAL
mode); the database a lab run of ``opencode-ai`` 1.18.33 leaves):

- Where it is: ``$XDG_DATA_HOME/opencode/opencode.db``, else
  ``~/.local/share/opencode/opencode.db`` (on every system: OpenCode takes its data folder from
  ``xdg-basedir``, which knows no macOS or Windows folder), or ``$OPENCODE_DB`` (absolute, or
  relative to that folder). It is write-ahead logged: what OpenCode wrote last may still be in
  ``opencode.db-wal`` beside it, which a reader of the file alone would miss.
- Detection: the SQLite header (``SQLite format 3\\0``) in the first bytes; a SQLite database
  without OpenCode's ``session``, ``message`` and ``part`` tables is not a session log
  (FC-DATA-002 naming it).
- Reading: opened read-only by URI (``mode=ro``), so the WAL's rows are seen and the database
  is never written. Where a read-only connection cannot be had (SQLite must create the
  ``-shm`` index beside a WAL database, which a read-only folder forbids), the database and its
  ``-wal`` are copied into a temporary folder and the copy is read; the ``-shm`` is not copied
  (SQLite rebuilds it from the WAL, and a copy taken at another instant could disagree).
- One ``session`` row is one session (ordered by ``time_created``, then ``id``); its messages
  are its ``message`` rows ordered as OpenCode lists them (``time_created``, then ``id``),
  each message's parts its ``part`` rows in ``id`` order. A row's ``data`` is the JSON
  ``opencode export`` prints for that message or part without its ids (the ``id`` and
  ``session_id`` columns hold them), so each session is read with the export reader's
  per-message logic (:class:`~failcode.triage.readers._opencode.Session`): the same events as
  the export of the same session.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

from failcode.triage._events import InputError
from failcode.triage.readers._opencode import Session
from failcode.triage.readers._text import as_dict

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

    from failcode.triage._events import Event

__all__ = ["OpenCodeDbReader", "open_read_only"]

SQLITE_HEADER: Final = b"SQLite format 3\x00"
_TABLES: Final = frozenset({"session", "message", "part"})


def _connect_in_place(path: Path) -> sqlite3.Connection:
    """``path`` opened read-only where it is (its WAL read too); raises when SQLite cannot."""
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    connection = sqlite3.connect(uri, uri=True)
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error:
        connection.close()
        raise
    return connection


def _connect_copy(path: Path, folder: Path) -> sqlite3.Connection:
    """A copy of ``path`` and its ``-wal`` in ``folder``, opened (SQLite folds the WAL in)."""
    copy = folder / path.name
    shutil.copyfile(path, copy)
    wal = path.with_name(path.name + "-wal")
    if wal.is_file():
        shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
    connection = sqlite3.connect(copy)
    connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return connection


@contextlib.contextmanager
def open_read_only(path: Path) -> Iterator[sqlite3.Connection]:
    """The database at ``path`` for reading, never written: read-only in place, else a copy
    in a temporary folder (removed on exit). See the module's rules.

    Raises:
        sqlite3.Error: neither way opens it (not a database, damaged).
    """
    copy: tempfile.TemporaryDirectory[str] | None = None
    try:
        connection = _connect_in_place(path)
    except sqlite3.OperationalError:
        copy = tempfile.TemporaryDirectory(prefix="failcode-opencode-")
        try:
            connection = _connect_copy(path, Path(copy.name))
        except BaseException:
            copy.cleanup()
            raise
    try:
        yield connection
    finally:
        connection.close()
        if copy is not None:
            copy.cleanup()


def _json(text: object) -> dict[str, Any]:
    if not isinstance(text, str | bytes):
        return {}
    try:
        return as_dict(json.loads(text))
    except ValueError:
        return {}


def _sessions(connection: sqlite3.Connection) -> Iterator[Event]:
    sessions = connection.execute(
        "SELECT id, version FROM session ORDER BY time_created, id").fetchall()
    for session_id, version in sessions:
        session, opening = Session.start({"id": session_id, "version": version})
        yield from opening
        messages = connection.execute(
            "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id",
            (session_id,))
        for index, (message_id, data) in enumerate(messages.fetchall()):
            parts = connection.execute(
                "SELECT id, data FROM part WHERE message_id = ? ORDER BY id", (message_id,))
            message = {
                "info": {**_json(data), "id": message_id, "sessionID": session_id},
                "parts": [{**_json(part), "id": part_id, "messageID": message_id,
                           "sessionID": session_id} for part_id, part in parts.fetchall()],
            }
            yield from session.message(message, index)
        yield session.end()


class OpenCodeDbReader:
    """Reader for OpenCode's SQLite database (``opencode.db``), read by path."""

    name = "opencode-db"
    reads_path = True

    def sniff(self, head: bytes) -> bool:
        """A SQLite database (whose tables say, once opened, whether it is OpenCode's)."""
        return head.startswith(SQLITE_HEADER)

    def owns(self, path: Path) -> bool:
        """Whether the database at ``path`` has OpenCode's session tables (walking a folder
        keeps only those)."""
        try:
            with open_read_only(path) as connection:
                return _tables(connection) >= _TABLES
        except (OSError, sqlite3.Error):
            return False

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        """A database is read by path (:meth:`read_path`), never as a stream."""
        del stream
        raise InputError("FC-DATA-002", f"{label} is a SQLite database: it is read by path")

    def read_path(self, path: Path, label: str) -> Iterator[Event]:
        """Every session in the database, one after another (see the module's rules).

        Raises:
            InputError: FC-DATA-002 when the database is not OpenCode's; FC-DATA-003 when
                SQLite cannot read it.
        """
        del label
        try:
            with open_read_only(path) as connection:
                if not _tables(connection) >= _TABLES:
                    raise InputError("FC-DATA-002", "a SQLite database, but not OpenCode's "
                                                    "(no session, message and part tables)")
                yield from _sessions(connection)
        except sqlite3.Error as exc:
            raise InputError("FC-DATA-003", f"SQLite cannot read it ({exc})") from None


def _tables(connection: sqlite3.Connection) -> set[str]:
    return {str(name) for (name,) in connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")}
