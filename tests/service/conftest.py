"""A real ``failcode serve`` on 127.0.0.1, on a fresh SQLite file or PostgreSQL schema.

``served`` (parametrized over both backends) starts the service as its own process through the
``failcode`` command, exactly as a team runs it, with a project ``web`` (keys of every scope)
and a project ``other`` (an admin key) made by the CLI first. The process can be killed
(``kill -9``) and started again on the same store and port.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import BACKENDS, fresh_url

if TYPE_CHECKING:
    import ssl
    from collections.abc import Iterator
    from pathlib import Path


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def failcode(*args: str, store: str) -> str:
    """Run the failcode CLI against ``store``; its standard output."""
    done = subprocess.run([sys.executable, "-m", "failcode", *args, "--store", store],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@dataclass
class Served:
    """A running service and what the tests need to talk to it."""

    store: str
    port: int
    log: Path
    keys: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    extra: tuple[str, ...] = ()
    tls: ssl.SSLContext | None = None
    """The client context trusting the service's certificate, when it serves HTTPS."""

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start the service and wait for /healthz; a port another process took between
        :func:`free_port` and the bind is replaced by a new one (at most five times)."""
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("FAILCODE_STORE", None)
        for _attempt in range(5):
            logged = self.log.stat().st_size if self.log.exists() else 0
            with self.log.open("ab") as out:  # the child keeps its own descriptor
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "failcode", "serve", "--store", self.store, "--port",
                     str(self.port), "--log-level", "warning", *self.extra],
                    stdout=out, stderr=out, env=env)
            if self._answered():
                return
            said = self.log.read_bytes()[logged:]
            if b"address already in use" not in said.lower():
                pytest.fail(f"failcode serve exited {self.process.returncode}:\n"
                            + said.decode(errors="replace")[-3000:])
            self.port = free_port()
        pytest.fail("failcode serve found no free port in five tries")

    def _answered(self) -> bool:
        """Whether the started process answers /healthz within 60 s (False: it exited);
        fails the test when it neither answers nor exits."""
        assert self.process is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            with contextlib.suppress(OSError), urllib.request.urlopen(
                    f"{self.url}/healthz", timeout=2, context=self.tls) as response:
                if response.status == 200:
                    return True
            time.sleep(0.1)
        pytest.fail("failcode serve did not answer /healthz within 60 s")

    def kill(self) -> None:
        """kill -9: no shutdown, no flush."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()

    def request(self, method: str, path: str, *, key: str | None = None,
                body: bytes | None = None, headers: dict[str, str] | None = None,
                ) -> tuple[int, dict[str, str], bytes]:
        """One HTTP request: (status, headers, body); never raises on an HTTP status."""
        sent = dict(headers or {})
        if key is not None:
            sent["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.url + path, data=body, method=method,
                                         headers=sent)
        try:
            with urllib.request.urlopen(request, timeout=60, context=self.tls) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def signin_form(self, key: str, next_page: str = "/ui/",
                    ) -> tuple[bytes, dict[str, str]]:
        """The sign-in POST a browser sends after loading the sign-in page: (body, headers),
        carrying the page's token in the form and in its cookie."""
        status, headers, page = self.request("GET", "/ui/signin")
        assert status == 200, page
        cookie = re.match(r"(failcode_ui_signin=[^;]+)", headers.get("set-cookie", ""))
        token = re.search(rb'name="signin" value="([^"]+)"', page)
        assert cookie is not None, headers
        assert token is not None, page
        body = urllib.parse.urlencode({"key": key, "next": next_page,
                                       "signin": token.group(1).decode()}).encode()
        return body, {"Content-Type": "application/x-www-form-urlencoded",
                      "Cookie": cookie.group(1)}

    def session_cookie(self, scope: str = "read") -> str:
        """Sign in to the dashboard with the ``scope`` key: the ``Cookie`` header's value."""
        body, headers = self.signin_form(self.keys[scope])
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request("POST", "/ui/signin", body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            cookie = response.getheader("set-cookie") or ""
        finally:
            connection.close()
        assert response.status == 303, cookie
        assert cookie.startswith("failcode_ui="), cookie
        return cookie.split(";", 1)[0]

    def json(self, method: str, path: str, **options: Any) -> tuple[int, Any]:
        status, _headers, body = self.request(method, path, **options)
        return status, json.loads(body) if body else None


def _drop_project_schemas(store: str) -> None:
    """Drop the project schemas a PostgreSQL test service made beside its control schema."""
    import psycopg

    schema = store.rsplit("search_path%3D", 1)[-1]
    server = store.split("?", 1)[0]
    with psycopg.connect(server, autocommit=True) as connection:
        rows = connection.execute(f'SELECT schema_name FROM "{schema}".svc_projects '
                                  "WHERE schema_name IS NOT NULL").fetchall()
        for (name,) in rows:
            connection.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


_BATCH = """
import contextlib, io, json, sys
from failcode.cli._main import main
said = []
for args in json.loads(sys.argv[1]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main.main(args, prog_name="failcode", standalone_mode=False)
        except SystemExit as stop:
            if stop.code:
                raise
    said.append(out.getvalue().strip())
print(json.dumps(said))
"""


def failcode_each(commands: list[list[str]], *, store: str) -> list[str]:
    """Run failcode command lines against ``store`` one after another in one process (one
    start-up instead of one each: a service's set-up runs six); the standard output of each.
    The first that fails stops the rest and fails the test with its message."""
    argv = [[*args, "--store", store] for args in commands]
    done = subprocess.run([sys.executable, "-c", _BATCH, json.dumps(argv)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    said: list[str] = json.loads(done.stdout)
    return said


def make_served(store: str, tmp_path: Path, *, extra: tuple[str, ...] = ()) -> Served:
    """A service (not started) with projects ``web`` and ``other`` and keys."""
    served = Served(store=store, port=free_port(), log=tmp_path / "serve.log", extra=extra)
    keys = [("ingest", "web"), ("read", "web"), ("admin", "web"), ("admin", "other")]
    said = failcode_each([["project", "create", "web"], ["project", "create", "other"],
                          *(["token", "create", "--project", project, "--scope", scope]
                            for scope, project in keys)], store=store)
    for name, out in zip(("ingest", "read", "admin", "other"), said[2:], strict=True):
        served.keys[name] = out.splitlines()[-1]
    return served


@contextlib.contextmanager
def running(backend: str, tmp: Path, *, extra: tuple[str, ...] = ()) -> Iterator[Served]:
    """A started service on a fresh store of ``backend`` (what ``served`` gives, at any scope)."""
    for store in fresh_url(backend, tmp):
        service = make_served(store, tmp, extra=extra)
        service.start()
        try:
            yield service
        finally:
            service.stop()
            if backend == "postgresql":
                _drop_project_schemas(store)


@pytest.fixture(params=BACKENDS)
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    """A running service on a fresh store, once per backend."""
    for store in fresh_url(request.param, tmp_path):
        service = make_served(store, tmp_path)
        service.start()
        try:
            yield service
        finally:
            service.stop()
            if request.param == "postgresql":
                _drop_project_schemas(store)
