"""Issue 23, items 5 (store part), 6b and 7, on real backends and real faults.

* A read command (``failcode report``, ``failcode store diagnostics|blame|loops|clusters|show|
  stats``) opens an existing store read-only: a store on a read-only mount (a real mechanism
  that binds root too: a read-only bind mount, else ``chattr +i``, else ``chmod`` when not
  root) is readable and not one byte of its folder changes; a store that does not exist is
  FC-STORE-001 and is not created; URL parsing never raises untyped.
* ``failcode triage --store`` on a store that fails (a full tmpfs, a read-only mount, a foreign
  file) still prints the finished report, then the store's error, exit 1; an output file or a
  stdout that cannot be written is one line naming it and the reason, never a traceback.
* Every value from the store that those commands print has its control characters escaped.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from failcode import FC
from failcode.cli._main import main
from failcode.events import failure_event
from failcode.store import StoreError, open_store
from tests._needs import missing
from tests.conftest import fresh_url
from tests.store.sample import T0, event, mixed

if TYPE_CHECKING:
    from collections.abc import Iterator

REPO = Path(__file__).resolve().parents[2]
READ_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("report",), ("store", "diagnostics"), ("store", "blame"), ("store", "loops"),
    ("store", "clusters"), ("store", "stats"),
    ("store", "show", "command_not_found:shell.run:command_not_found:none:00000000"))


def _cli(*args: str, stdout: int | None = subprocess.PIPE, env: dict[str, str] | None = None,
         preexec: object = None) -> subprocess.CompletedProcess[str]:
    """``failcode ARGS`` in its own process (a real stdout, real file descriptors)."""
    return subprocess.run(  # noqa: PLW1510 - the caller checks returncode
        [sys.executable, "-m", "failcode", *args], cwd=REPO, stdout=stdout,
        stderr=subprocess.PIPE, text=True, timeout=120, preexec_fn=preexec,  # type: ignore[arg-type]
        env={**os.environ, "PYTHONPATH": str(REPO / "src"), "FAILCODE_STORE": "",
             **(env or {})})


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder``: its digest (a read that writes changes it). SQLite's
    shared-memory index (``-shm``) and an empty ``-wal``, which a reader of a WAL database
    in a writable folder may create, hold no data and are left out."""
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()
            and not path.name.endswith("-shm")
            and not (path.name.endswith("-wal") and path.stat().st_size == 0)}


def _writable(folder: Path) -> bool:
    probe = folder / ".probe"
    try:
        probe.write_bytes(b"x")
    except OSError:
        return False
    probe.unlink()
    return True


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[str]:
    """Make ``folder`` and its files read-only for every user, root included; yield how."""
    if shutil.which("mount") and shutil.which("umount"):
        bound = subprocess.run(["mount", "--bind", str(folder), str(folder)],
                               capture_output=True, check=False).returncode == 0
        if bound:
            try:
                if subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)],
                                  capture_output=True, check=False).returncode == 0 \
                        and not _writable(folder):
                    yield "read-only bind mount"
                    return
            finally:
                subprocess.run(["umount", str(folder)], check=True)
    files = [folder, *folder.iterdir()]
    if shutil.which("chattr") and all(subprocess.run(
            ["chattr", "+i", str(path)], capture_output=True, check=False).returncode == 0
            for path in files):
        try:
            if not _writable(folder):
                yield "chattr +i"
                return
        finally:
            for path in files:
                subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)
    if os.geteuid() != 0:
        modes = {path: path.stat().st_mode for path in files}
        for path in files:
            path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield "chmod"
            return
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
    missing("no read-only mechanism that binds root (mount --bind, chattr +i) works here")


@contextlib.contextmanager
def small_disk(folder: Path, size_kib: int) -> Iterator[Path]:
    """A tmpfs of ``size_kib`` KiB mounted at ``folder`` (root and ``mount`` needed)."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(folder)],
            capture_output=True, check=False).returncode != 0:
        missing("a small tmpfs needs root and mount")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def _fill(folder: Path) -> None:
    """Fill the file system of ``folder`` to the last byte."""
    with (folder / "filler").open("wb", buffering=0) as handle:
        with contextlib.suppress(OSError):
            while True:
                handle.write(b"\0" * 4096)
                handle.flush()
        with contextlib.suppress(OSError):
            while True:
                handle.write(b"\0")
                handle.flush()


def _stored(url: str) -> None:
    """A store with findings: triage of the shipped samples, then some events."""
    result = _cli("triage", "--store", url)
    assert result.returncode == 0, result.stderr
    with open_store(url) as store:
        store.append(mixed(30))


# -- 7: read commands open an existing store read-only -------------------------------------


@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda c: "-".join(c[:2]))
def test_a_read_command_on_a_missing_store_is_store_001(tmp_path: Path,
                                                       command: tuple[str, ...]) -> None:
    """A mistyped store path is FC-STORE-001 naming it, exit 1, and no store is created."""
    path = tmp_path / "typo" / "failcode.db"
    result = CliRunner().invoke(main, [*command, "--store", f"sqlite:///{path}"])
    assert result.exit_code == 1, result.output
    assert "FC-STORE-001" in result.output
    assert "no store" in result.output
    assert not (tmp_path / "typo").exists()


def test_a_read_command_on_an_empty_postgresql_database_is_store_001(tmp_path: Path) -> None:
    """A PostgreSQL database (schema) without a failcode store is FC-STORE-001 and stays
    empty: read commands create no table."""
    url = next(gen := fresh_url("postgresql", tmp_path))
    try:
        for command in READ_COMMANDS:
            result = CliRunner().invoke(main, [*command, "--store", url])
            assert result.exit_code == 1, result.output
            assert "FC-STORE-001" in result.output
        import psycopg

        with psycopg.connect(url) as connection:
            tables = connection.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema()").fetchall()
        assert tables == []
    finally:
        gen.close()


def test_read_commands_read_a_postgresql_store_with_a_select_only_role(tmp_path: Path) -> None:
    """A role that may only SELECT reads the store through every read command."""
    import psycopg

    url = next(gen := fresh_url("postgresql", tmp_path))
    role = "fc_reader_" + os.urandom(4).hex()
    try:
        _stored(url)
        with psycopg.connect(url, autocommit=True) as connection:
            schema = connection.execute("SELECT current_schema()").fetchone()[0]  # type: ignore[index]
            connection.execute(f"CREATE ROLE {role} LOGIN")
            connection.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
            connection.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}")
        reader = url.replace("postgresql://failcode@", f"postgresql://{role}@", 1)
        for command in READ_COMMANDS:
            result = CliRunner().invoke(main, [*command, "--store", reader])
            assert result.exit_code in (0, 1), result.output  # show: 1 (no such signature)
            assert "FC-STORE" not in result.output, result.output
        assert "failcode triage: " in CliRunner().invoke(
            main, ["report", "--store", reader]).output
    finally:
        gen.close()
        with psycopg.connect(url.split("?")[0], autocommit=True) as connection:
            connection.execute(f"DROP ROLE IF EXISTS {role}")


def test_a_store_on_a_read_only_mount_is_readable(tmp_path: Path) -> None:
    """Every read command reads a store whose folder and files nobody (root included) can
    write; not one byte under the folder changes; a writing command is FC-STORE-005."""
    folder = tmp_path / "ro"
    folder.mkdir()
    url = f"sqlite:///{folder / 'failcode.db'}"
    _stored(url)
    before = _snapshot(folder)
    with read_only(folder) as how:
        for command in READ_COMMANDS:
            result = _cli(*command, "--store", url)
            if command[-1].startswith("command_not_found"):
                assert result.returncode == 1, result.stderr
                assert "no failure with signature" in result.stderr
                continue
            assert result.returncode == 0, f"{how}: {command}: {result.stderr}"
            assert "FC-STORE" not in result.stderr
        report = _cli("report", "--store", url)
        assert "failcode triage: " in report.stdout
        assert "command_not_found" in _cli("store", "diagnostics", "--store", url).stdout
        stats = _cli("store", "stats", "--store", url, "--json")
        assert '"events_stored"' in stats.stdout
        events = tmp_path / "more.jsonl"
        events.write_bytes(event(minute=99).to_json() + b"\n")
        written = _cli("store", "import", str(events), "--store", url)
        assert written.returncode == 1
        assert "FC-STORE-005" in written.stderr, written.stderr
        assert "Traceback" not in written.stderr
        assert _snapshot(folder) == before, how


def test_a_store_with_a_live_writer_is_read_with_its_latest_batches(tmp_path: Path) -> None:
    """Read-only opening reads the WAL: a batch committed by a writer still open is seen."""
    url = f"sqlite:///{tmp_path / 'failcode.db'}"
    with open_store(url) as writer:
        writer.append(mixed(10))
        with open_store(url, read_only=True) as reader:
            assert reader.stats().events_stored == 10
            writer.append([event(minute=500)])
            assert reader.stats().events_stored == 11
            with pytest.raises(StoreError) as caught:
                reader.append([event(minute=501)])
            assert caught.value.failure.code == "FC-STORE-005"


def test_read_only_opening_of_a_foreign_or_newer_store_is_refused(tmp_path: Path) -> None:
    """A file that is not SQLite is FC-STORE-004, a SQLite database of something else is
    FC-STORE-004, a newer schema FC-STORE-007; the files stay untouched."""
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database " * 300)
    other = tmp_path / "other.db"
    with contextlib.closing(sqlite3.connect(other)) as connection, connection:
        connection.execute("CREATE TABLE invoices (id INTEGER)")
    newer = tmp_path / "newer.db"
    open_store(str(newer)).close()
    with contextlib.closing(sqlite3.connect(newer)) as connection, connection:
        connection.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    before = _snapshot(tmp_path)
    for path, code in ((junk, "FC-STORE-004"), (other, "FC-STORE-004"),
                       (newer, "FC-STORE-007")):
        with pytest.raises(StoreError) as caught:
            open_store(f"sqlite:///{path}", read_only=True)
        assert caught.value.failure.code == code, path
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("url", [
    "postgresql://[::1", "postgresql://failcode@[::1/db", "sqlite:///x\0.db", "x\0y.db",
    "sqlite:///x.db?mode=ro", "sqlite:///x.db#frag", "postgresql://h:notaport/db",
    "postgres://\0@h/db"])
def test_url_parsing_never_raises_untyped(url: str, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A malformed URL is FC-STORE-001 for writers and readers alike; nothing is created."""
    monkeypatch.chdir(tmp_path)
    for read_only_ in (False, True):
        with pytest.raises(StoreError) as caught:
            open_store(url, read_only=read_only_, timeout_s=1)
        assert caught.value.failure.code == "FC-STORE-001", caught.value.failure.message
        assert "\0" not in caught.value.failure.message
    result = CliRunner().invoke(main, ["store", "stats", "--store", url])
    assert result.exit_code == 1
    assert "FC-STORE-001" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert list(tmp_path.iterdir()) == []


# -- 6b: a failing store or output never costs the report ---------------------------------


def _report_then_store_error(result: subprocess.CompletedProcess[str], code: str) -> None:
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("failcode triage: 4 inputs read"), result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    assert code in result.stderr, result.stderr


def test_triage_into_a_full_disk_prints_the_report_then_store_006(tmp_path: Path) -> None:
    """A store on a full tmpfs: the finished report, then FC-STORE-006, exit 1."""
    with small_disk(tmp_path / "disk", 2048) as disk:
        url = f"sqlite:///{disk / 'failcode.db'}"
        open_store(url).close()
        _fill(disk)
        result = _cli("triage", "--store", url)
        _report_then_store_error(result, "FC-STORE-006")


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))


def test_triage_into_a_store_past_the_file_size_limit_prints_the_report(tmp_path: Path) -> None:
    """RLIMIT_FSIZE (a full disk without mount): the report, then the store's error, exit 1."""
    url = f"sqlite:///{tmp_path / 'failcode.db'}"
    open_store(url).close()
    with contextlib.closing(sqlite3.connect(tmp_path / "failcode.db")) as connection, \
            connection:  # past the limit already
        connection.execute("CREATE TABLE padding (x BLOB)")
        connection.execute("INSERT INTO padding VALUES (zeroblob(200000))")
    result = _cli("triage", "--store", url, preexec=_limit_file_size)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("failcode triage: 4 inputs read"), result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    assert "FC-STORE-" in result.stderr


def test_triage_into_a_read_only_store_prints_the_report_then_store_005(tmp_path: Path) -> None:
    """A store on a read-only mount: the report, then FC-STORE-005, exit 1; untouched."""
    folder = tmp_path / "ro"
    folder.mkdir()
    url = f"sqlite:///{folder / 'failcode.db'}"
    open_store(url).close()
    before = _snapshot(folder)
    with read_only(folder):
        result = _cli("triage", "--store", url)
        _report_then_store_error(result, "FC-STORE-005")
        assert _snapshot(folder) == before


@pytest.mark.parametrize("content", [b"this is no database " * 500, b""])
def test_triage_into_a_foreign_file_prints_the_report_then_store_004(
        tmp_path: Path, content: bytes) -> None:
    """A store path holding another program's file (or a foreign SQLite database)."""
    path = tmp_path / "failcode.db"
    if content:
        path.write_bytes(content)
    else:
        with contextlib.closing(sqlite3.connect(path)) as connection, connection:
            connection.execute("CREATE TABLE invoices (id INTEGER)")
    before = path.read_bytes()
    result = _cli("triage", "--store", f"sqlite:///{path}")
    _report_then_store_error(result, "FC-STORE-004")
    assert path.read_bytes() == before


def test_triage_into_a_postgresql_store_that_refuses_prints_the_report(tmp_path: Path) -> None:
    """A PostgreSQL store that fails mid-run (its tables dropped under it) still gives the
    report, then the store's error, exit 1."""
    import psycopg

    url = next(gen := fresh_url("postgresql", tmp_path))
    try:
        open_store(url).close()
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute("ALTER TABLE events RENAME TO events_gone")
        result = _cli("triage", "--store", url)
        _report_then_store_error(result, "FC-STORE-0")
    finally:
        gen.close()


@pytest.mark.parametrize("command", [("triage",), ("report",)])
def test_an_html_file_in_a_missing_folder_is_one_line(tmp_path: Path,
                                                     command: tuple[str, ...]) -> None:
    """--html into a folder that does not exist: one line naming the file, exit 1."""
    url = f"sqlite:///{tmp_path / 'failcode.db'}"
    _stored(url)
    target = tmp_path / "missing" / "report.html"
    args = [*command, "--html", str(target)] + (["--store", url] if command == ("report",)
                                                 else [])
    result = _cli(*args)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if str(target) in line]
    assert len(lines) == 1, result.stderr
    assert "No such file or directory" in lines[0]
    assert result.stdout.startswith("failcode triage: ")


def test_an_html_file_on_a_full_disk_is_one_line(tmp_path: Path) -> None:
    """--html onto a full tmpfs: one line naming the file and the reason, exit 1."""
    with small_disk(tmp_path / "disk", 256) as disk:
        _fill(disk)
        target = disk / "report.html"
        result = _cli("triage", "--html", str(target))
        assert result.returncode == 1
        assert "Traceback" not in result.stderr, result.stderr
        assert any(str(target) in line and "No space left on device" in line
                   for line in result.stderr.splitlines()), result.stderr


@pytest.mark.parametrize("command", [("triage",), ("report",), ("store", "diagnostics"),
                                     ("store", "stats")])
@pytest.mark.parametrize("where", ["full", "closed"])
def test_a_stdout_that_fails_is_one_line(tmp_path: Path, command: tuple[str, ...],
                                         where: str) -> None:
    """stdout on a full device (/dev/full) or closed: one line naming stdout, exit 1."""
    url = f"sqlite:///{tmp_path / 'failcode.db'}"
    _stored(url)
    args = [*command] + ([] if command == ("triage",) else ["--store", url])
    if where == "full":
        with Path("/dev/full").open("w") as full:
            result = _cli(*args, stdout=full.fileno())
    else:
        result = subprocess.run(  # noqa: PLW1510
            [sys.executable, "-m", "failcode", *args], cwd=REPO, stderr=subprocess.PIPE,
            text=True, timeout=120, close_fds=True,
            preexec_fn=lambda: os.close(1),
            env={**os.environ, "PYTHONPATH": str(REPO / "src"), "FAILCODE_STORE": ""})
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert "Exception ignored" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if "stdout" in line]
    assert len(lines) == 1, result.stderr


# -- 5: values from the store are printed with control characters escaped ------------------

HOSTILE = "evil\x1b[31mred\x1b]8;;http://x\x07[/x][link=http://e]y[/link]\x9b2J\rend"


def test_store_values_are_printed_with_control_characters_escaped(tmp_path: Path) -> None:
    """Session names, locations and messages from the store reach the terminal escaped:
    no raw control character in any read command's output; the text stays recognizable."""
    url = f"sqlite:///{tmp_path / 'failcode.db'}"
    failures = [FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": HOSTILE},
                                         location="src/e\x1b[31mv[/x]\x9b.c")]
    events = [failure_event(failures[0], event="tool.failed", session=HOSTILE, step=n, ts=T0)
              for n in range(4)]
    with open_store(url) as store:
        store.append(events)
        signature = store.diagnostics()[0].signature
    commands = [*READ_COMMANDS[:-1], ("store", "show", signature),
                ("store", "show", signature, "--session", HOSTILE)]
    for command in commands:
        for env in ({}, {"FORCE_COLOR": "1"}):
            result = _cli(*command, "--store", url, env=env)
            assert result.returncode == 0, (command, result.stderr)
            printed = result.stdout
            assert "\x1b[31mred" not in printed, (command, env, printed)
            if env:  # a terminal: the styles failcode adds are SGR sequences, nothing else
                printed = _without_own_styles(printed)
            controls = {ch for ch in printed if (ord(ch) < 32 and ch != "\n")
                        or 0x7f <= ord(ch) <= 0x9f}
            assert not controls, (command, env, controls, printed)
            if command[0] == "store" and command[1] in ("loops", "show"):
                assert "evil\\x1b[31mred" in printed, (command, printed)
                assert "[/x][link=http://e]y[/link]" in printed, (command, printed)


def _without_own_styles(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)
