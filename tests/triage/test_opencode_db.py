"""OpenCode's own session database (rules in ``failcode.triage.readers._opencode_db``).

The databases are built with OpenCode's own schema (the ``session``, ``message`` and ``part``
tables as OpenCode 1.18.33 created them, kept in the lab's fixtures) from sessions
``opencode export`` printed (the lab's) or shaped like it (``test_opencode``'s): a message row
is the export's message info without its ids, a part row the part without its ids.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from failcode.triage import triage
from failcode.triage.analysis._analyze import expand
from failcode.triage.readers import _opencode_db as opencode_db
from failcode.triage.readers import detect
from failcode.triage.readers._opencode import OpenCodeReader
from failcode.triage.readers._opencode_db import OpenCodeDbReader
from tests.lab.runner import FIXTURES
from tests.triage.test_opencode import (
    _SESSION,
    _assistant,
    _bash,
    _completed,
    _done,
    _info,
    _user,
)

if TYPE_CHECKING:
    from failcode.triage._events import Event

_LAB = FIXTURES / "opencode"


def _exports() -> list[Path]:
    found = sorted(_LAB.glob("*/session/opencode-export/ses_*.json"))
    assert found, "no OpenCode fixture (python -m tests.lab run -a opencode)"
    return found


def _schema() -> list[str]:
    """OpenCode's own ``CREATE`` statements of its session tables (a lab run's database)."""
    kept = sorted(_LAB.glob("*/opencode.db"))
    assert kept, "no OpenCode database fixture (python -m tests.lab run -a opencode)"
    with sqlite3.connect(f"file:{kept[0]}?mode=ro", uri=True) as connection:
        return [sql for (sql,) in connection.execute(
            "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL "
            "ORDER BY type = 'index', rowid")]


def _insert(connection: sqlite3.Connection, export: dict[str, Any]) -> None:
    """One exported session as OpenCode's rows."""
    info = export["info"]
    created = info.get("time", {}).get("created", 0)
    connection.execute(
        "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, "
        "time_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (info["id"], info.get("projectID", "global"), info.get("slug", "s"),
         info.get("directory", "/p"), info.get("title", "t"), info["version"], created,
         created))
    for message in export["messages"]:
        data = {k: v for k, v in message["info"].items() if k not in ("id", "sessionID")}
        when = data.get("time", {}).get("created", created)
        connection.execute(
            "INSERT INTO message (id, session_id, time_created, time_updated, data) "
            "VALUES (?, ?, ?, ?, ?)",
            (message["info"]["id"], info["id"], when, when, json.dumps(data)))
        for part in message["parts"]:
            rest = {k: v for k, v in part.items() if k not in ("id", "sessionID", "messageID")}
            connection.execute(
                "INSERT INTO part (id, message_id, session_id, time_created, time_updated, "
                "data) VALUES (?, ?, ?, ?, ?, ?)",
                (part["id"], message["info"]["id"], info["id"], when, when, json.dumps(rest)))


def _database(path: Path, *exports: dict[str, Any], wal: bool = False) -> sqlite3.Connection:
    """A database of ``exports``, left open (in WAL mode, never checkpointed: its rows stay in
    the ``-wal`` while the connection is open, as while OpenCode runs)."""
    connection = sqlite3.connect(path)
    if wal:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA wal_autocheckpoint = 0")
    for sql in _schema():
        connection.execute(sql)
    connection.commit()
    for export in exports:
        _insert(connection, export)
    connection.commit()
    return connection


def _export_events(path: Path) -> list[Event]:
    with path.open("rb") as stream:
        return list(OpenCodeReader().read(stream, str(path)))


def _synthetic() -> dict[str, Any]:
    """A session of the shapes the lab cannot make OpenCode write (``test_opencode``'s)."""
    declined = {"status": "error", "error": "The user rejected permission to use this "
                "specific tool call.", "time": {"start": 1, "end": 2}}
    return {"info": _info(), "messages": [
        _user(0),
        _assistant(1, [_bash("python -m pytest -q", _completed("1 failed in 0.01s\n", 1))]),
        _assistant(2, [{"type": "retry", "attempt": 1, "time": {"created": 3},
                        "error": {"name": "APIError", "data": {
                            "message": "Overloaded", "statusCode": 529,
                            "isRetryable": True}}},
                       _bash("rm -rf build", declined)]),
        _done()]}


@pytest.fixture
def reader() -> OpenCodeDbReader:
    return OpenCodeDbReader()


def test_each_lab_session_gives_the_events_of_its_export(tmp_path: Path,
                                                         reader: OpenCodeDbReader) -> None:
    """Every lab export put into OpenCode's tables reads as the same events, in order."""
    for number, path in enumerate(_exports()):
        database = tmp_path / f"{number}.db"
        _database(database, json.loads(path.read_text())).close()
        assert list(reader.read_path(database, str(database))) == _export_events(path), path


def test_the_shapes_the_lab_cannot_make_read_alike(tmp_path: Path,
                                                   reader: OpenCodeDbReader) -> None:
    """A retried provider error, a failing command and a declined call: the same events."""
    export = tmp_path / f"{_SESSION}.json"
    export.write_text(json.dumps(_synthetic()))
    database = tmp_path / "opencode.db"
    _database(database, _synthetic()).close()
    events = list(reader.read_path(database, str(database)))
    assert events == _export_events(export)
    assert any(type(e).__name__ == "ErrorText" for e in events)


def test_every_session_of_a_database_is_read(tmp_path: Path) -> None:
    """One database holds every session: each is one session of the input."""
    exports = [json.loads(p.read_text()) for p in _exports()[:3]]
    database = tmp_path / "opencode.db"
    _database(database, *exports).close()
    result = triage([database])
    assert [(i.format, i.error_code, i.sessions) for i in result.inputs] == [
        ("opencode-db", None, len(exports))]
    assert sorted(s.session for s in result.sessions) == sorted(e["info"]["id"]
                                                                for e in exports)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_rows_still_in_the_write_ahead_log_are_read_and_nothing_is_written(
        tmp_path: Path) -> None:
    """While OpenCode holds the database open, its newest rows are in ``-wal``: read, and
    neither file changes."""
    export = _exports()[0]
    database = tmp_path / "opencode.db"
    writer = _database(database, json.loads(export.read_text()), wal=True)
    try:
        wal = tmp_path / "opencode.db-wal"
        assert wal.stat().st_size > 0
        before = (_digest(database), _digest(wal))
        result = triage([database])
        assert (_digest(database), _digest(wal)) == before
    finally:
        writer.close()
    assert [(i.format, i.error_code) for i in result.inputs] == [("opencode-db", None)]
    (session,) = result.sessions
    (exported,) = triage([export]).sessions
    assert (session.session, session.steps, session.status) == (
        exported.session, exported.steps, exported.status)


def test_a_database_that_cannot_be_opened_read_only_is_read_from_a_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: OpenCodeDbReader) -> None:
    """When SQLite refuses a read-only connection (it cannot make the ``-shm`` beside it),
    the database and its ``-wal`` are copied and the copy read; the copy is removed."""
    export = _exports()[0]
    database = tmp_path / "opencode.db"
    writer = _database(database, json.loads(export.read_text()), wal=True)
    copies = tmp_path / "tmp"
    copies.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(copies))

    def refused(path: Path) -> sqlite3.Connection:
        raise sqlite3.OperationalError(f"unable to open database file {path.name}")

    monkeypatch.setattr(opencode_db, "_connect_in_place", refused)
    try:
        events = list(reader.read_path(database, str(database)))
    finally:
        writer.close()
    assert events == _export_events(export)
    assert list(copies.iterdir()) == []


def test_the_copy_holds_the_rows_of_the_write_ahead_log(tmp_path: Path) -> None:
    """A copy of the database and its ``-wal`` (no ``-shm``) shows the newest rows."""
    database = tmp_path / "opencode.db"
    writer = _database(database, _synthetic(), wal=True)
    folder = tmp_path / "copy"
    folder.mkdir()
    try:
        copy = opencode_db._connect_copy(database, folder)
        try:
            assert copy.execute("SELECT count(*) FROM message").fetchone() == (
                len(_synthetic()["messages"]),)
        finally:
            copy.close()
    finally:
        writer.close()


def test_another_sqlite_database_keeps_its_fc_data_002(tmp_path: Path) -> None:
    """A SQLite file without OpenCode's tables is FC-DATA-002 naming it."""
    other = tmp_path / "app.sqlite3"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE notes (body TEXT)")
    result = triage([other])
    (item,) = result.inputs
    assert item.error_code == "FC-DATA-002"
    assert other.name in (item.error_message or "")


def test_detection_takes_a_sqlite_head_and_only_by_path(tmp_path: Path) -> None:
    """The SQLite header selects the database reader; JSON and other binaries do not."""
    database = tmp_path / "opencode.db"
    _database(database, _synthetic()).close()
    found = detect(database.read_bytes()[:65536])
    assert found is not None
    assert found.name == "opencode-db"
    assert getattr(found, "reads_path", False)
    assert not OpenCodeDbReader().sniff(b'{"info": {"id": "ses_x"}}')
    assert not OpenCodeDbReader().sniff(b"\x89PNG\r\n\x1a\n\x00\x00")


def test_walking_a_folder_keeps_opencodes_database_only(tmp_path: Path) -> None:
    """Walking: ``opencode.db`` is an input, another SQLite file and the ``-wal`` are not."""
    data = tmp_path / "opencode"
    data.mkdir()
    writer = _database(data / "opencode.db", _synthetic(), wal=True)
    try:
        with sqlite3.connect(data / "cache.db") as other:
            other.execute("CREATE TABLE t (x)")
        found = expand([data])
    finally:
        writer.close()
    assert [path.name for path, _ in found] == ["opencode.db"]
    assert {Path(p).name for p in found.skipped} >= {"cache.db", "opencode.db-wal"}

