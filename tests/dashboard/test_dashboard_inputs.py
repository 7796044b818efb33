"""The dashboard's answers to bad input, over a real ``failcode serve`` on both backends (plain
HTTP with the session cookie, no browser).

Rules tested:

- A bad query parameter (an ``offset`` that is not an integer from 0 to 1,000,000, a NUL
  character in any parameter) is the client's mistake: 400 naming the parameter and what is
  expected, never 503 "store down", on SQLite and PostgreSQL alike.
- The resolve form refuses an ``in_version`` the API refuses (too long, a NUL): 400 with the
  reason on the page, and the finding is not changed.
- Sign-out needs the session's CSRF token: a POST without it (or with another) is refused
  (403), the cookie is not cleared and the session still reads pages; with it, the session ends.
"""

from __future__ import annotations

import html
import http.client
import json
import re
import sqlite3
import subprocess
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from failcode import Failure, from_command
from failcode.events import failure_event
from failcode.service._dashboard import ACTIONS
from tests.conftest import BACKENDS
from tests.service.conftest import Served, running

if TYPE_CHECKING:
    from collections.abc import Iterator

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def raw(served: Served, method: str, path: str, *, body: bytes | None = None,
        headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """One request that does not follow redirects: (status, headers in lower case, body)."""
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return (response.status, {k.lower(): v for k, v in response.getheaders()},
                response.read().decode("utf-8", "replace"))
    finally:
        connection.close()


def _seed(served: Served, tmp: Path) -> None:
    """One finding: a command that is not installed, run here, posted as an event."""
    argv = ["sh", "-c", "failcode-dash-inputs-missing-tool"]
    done = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, check=False)
    failure = from_command(argv, done.returncode, done.stdout, done.stderr)
    assert isinstance(failure, Failure)
    body = failure_event(failure, event="command.failed", session="inputs").to_json()
    status, _h, answer = served.request("POST", "/v1/events", key=served.keys["ingest"],
                                        body=body + b"\n",
                                        headers={"Content-Type": "application/x-ndjson"})
    assert status == 200, answer


@pytest.fixture(scope="module", params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
            ) -> Iterator[Served]:
    """A service holding one finding: a command that is not installed, run here."""
    tmp = tmp_path_factory.mktemp(f"dashboard-inputs-{request.param}")
    with running(request.param, tmp, extra=("--rate", "1000000")) as served:
        _seed(served, tmp)
        yield served


def sign_in(served: Served, scope: str) -> tuple[str, str]:
    """Sign in over HTTP: (the Cookie header to send, the session's CSRF token)."""
    body, form_headers = served.signin_form(served.keys[scope])
    status, headers, _page = raw(served, "POST", "/ui/signin", body=body, headers=form_headers)
    assert status == 303
    match = re.match(r"failcode_ui=([^;]+)", headers["set-cookie"])
    assert match is not None
    cookie = f"failcode_ui={match.group(1)}"
    status, _h, page = raw(served, "GET", "/ui/", headers={"Cookie": cookie})
    assert status == 200, page
    token = re.search(r'name="csrf" value="([^"]+)"', page)
    assert token is not None
    return cookie, html.unescape(token.group(1))


def one_finding(served: Served) -> dict[str, Any]:
    status, answer = served.json("GET", "/v1/findings", key=served.keys["read"])
    assert status == 200, answer
    assert answer["findings"], answer
    found: dict[str, Any] = answer["findings"][0]
    return found


@pytest.mark.parametrize(("path", "name"), [
    (f"/ui/?offset={2**63}", "offset"),
    (f"/ui/sessions?offset={2**63}", "offset"),
    ("/ui/sessions?offset=-1", "offset"),
    ("/ui/sessions?offset=ten", "offset"),
    ("/ui/?agent=a%00b", "agent"),
    ("/ui/?version=%00", "version"),
    ("/ui/compare?by=version&a=1%002", "a"),
    ("/ui/sessions/inputs?input=%00", "input"),
])
def test_a_bad_query_parameter_is_a_400_naming_it(service: Served, path: str,
                                                  name: str) -> None:
    cookie, _csrf = sign_in(service, "read")
    status, _headers, page = raw(service, "GET", path, headers={"Cookie": cookie})
    assert status == 400, page[-2000:]
    assert f"The query parameter {name!r}" in html.unescape(page)
    # the service is still up and the session still reads
    status, _headers, page = raw(service, "GET", "/ui/sessions?offset=0",
                                 headers={"Cookie": cookie})
    assert status == 200, page[-2000:]


@pytest.mark.parametrize("version", ["x" * 121, "1.0\x002"])
def test_the_resolve_form_refuses_what_the_api_refuses(service: Served, version: str) -> None:
    finding = one_finding(service)
    path = f"/v1/findings/{finding['id']}/resolve"
    status, answer = service.json("POST", path, key=service.keys["admin"],
                                  body=f'{{"in_version": {json.dumps(version)}}}'.encode(),
                                  headers={"Content-Type": "application/json"})
    assert status == 400, answer
    cookie, csrf = sign_in(service, "admin")
    body = urllib.parse.urlencode({"csrf": csrf, "in_version": version}).encode()
    status, _headers, page = raw(service, "POST", f"/ui/findings/{finding['id']}/resolve",
                                 body=body, headers={**FORM, "Cookie": cookie})
    assert status == 400, page[-2000:]
    assert "in_version" in page
    assert one_finding(service) == finding


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("sent", [{}, {"csrf": "forged"}], ids=["no-token", "forged-token"])
def test_every_finding_action_needs_the_csrf_token(service: Served, action: str,
                                                   sent: dict[str, str]) -> None:
    """Each action the finding forms take, from an admin session without the session's
    token: 403 and the finding as it was (it starts where the action would change it)."""
    finding = one_finding(service)
    api_path = f"/v1/findings/{finding['id']}"
    if action == "reopen":  # only a resolved finding has something to reopen
        status, answer = service.json("POST", api_path + "/resolve", key=service.keys["admin"],
                                      body=b"{}", headers={"Content-Type": "application/json"})
        assert status == 200, answer
    before = service.json("GET", api_path, key=service.keys["read"])[1]["finding"]
    try:
        cookie, _csrf = sign_in(service, "admin")
        status, _headers, page = raw(service, "POST", f"/ui/findings/{finding['id']}/{action}",
                                     body=urllib.parse.urlencode({**sent, "in_version": "2.0"})
                                     .encode(), headers={**FORM, "Cookie": cookie})
        assert status == 403, page[-2000:]
        assert service.json("GET", api_path, key=service.keys["read"])[1]["finding"] == before
    finally:
        status, answer = service.json("POST", api_path + "/reopen", key=service.keys["admin"],
                                      body=b"{}", headers={"Content-Type": "application/json"})
        assert status == 200, answer


def test_a_change_the_store_cannot_take_is_503_without_the_stores_words(
        tmp_path: Path) -> None:
    """The project's SQLite store locked by another writer: the resolve form answers 503 with
    Retry-After and a plain message (no path), the finding is unchanged; once the lock is
    gone the same form resolves it."""
    with running("sqlite", tmp_path) as served:
        _seed(served, tmp_path)
        finding = one_finding(served)
        cookie, csrf = sign_in(served, "admin")
        form = urllib.parse.urlencode({"csrf": csrf, "in_version": "3.1"}).encode()
        path = f"/ui/findings/{finding['id']}/resolve"
        store = served.store[len("sqlite:///"):]
        project_db = Path(store).with_name(Path(store).stem + ".projects") / "web.db"
        assert project_db.exists()
        holder = sqlite3.connect(project_db, timeout=30, isolation_level=None)
        try:
            holder.execute("BEGIN EXCLUSIVE")
            status, headers, page = raw(served, "POST", path, body=form,
                                        headers={**FORM, "Cookie": cookie})
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert status == 503, page[-2000:]
        assert headers["retry-after"].isdigit()
        assert "The store did not take the change" in page
        assert str(tmp_path) not in page
        assert one_finding(served)["status"] == finding["status"]
        status, headers, _page = raw(served, "POST", path, body=form,
                                     headers={**FORM, "Cookie": cookie})
        assert status == 303
        assert one_finding(served)["resolved_in"] == "3.1"


@pytest.mark.parametrize("sent", [{}, {"csrf": "forged"}])
def test_sign_out_needs_the_csrf_token(service: Served, sent: dict[str, str]) -> None:
    cookie, csrf = sign_in(service, "read")
    status, headers, _page = raw(service, "POST", "/ui/signout",
                                 body=urllib.parse.urlencode(sent).encode(),
                                 headers={**FORM, "Cookie": cookie})
    assert status == 403
    assert "set-cookie" not in headers
    status, _headers, _page = raw(service, "GET", "/ui/", headers={"Cookie": cookie})
    assert status == 200
    # with the token, the session ends
    status, headers, _page = raw(service, "POST", "/ui/signout",
                                 body=urllib.parse.urlencode({"csrf": csrf}).encode(),
                                 headers={**FORM, "Cookie": cookie})
    assert (status, headers["location"]) == (303, "/ui/signin")
    status, headers, _page = raw(service, "GET", "/ui/", headers={"Cookie": cookie})
    assert status == 303
    assert headers["location"].startswith("/ui/signin")


@pytest.mark.parametrize(("path", "status", "said"), [
    (f"/ui/findings/{2**63}", 404, f"There is no finding {2**63}"),
    (f"/ui/findings/{2**62 + 1}", 404, f"There is no finding {2**62 + 1}"),
    ("/ui/sessions/a%00b", 400, "The session name"),
])
def test_a_bad_path_is_the_clients_mistake(service: Served, path: str, status: int,
                                           said: str) -> None:
    cookie, _csrf = sign_in(service, "read")
    answered, _headers, page = raw(service, "GET", path, headers={"Cookie": cookie})
    assert answered == status, page[-2000:]
    assert said in html.unescape(page)


def test_changing_a_finding_past_the_stores_numbers_is_not_found(service: Served) -> None:
    cookie, csrf = sign_in(service, "admin")
    body = urllib.parse.urlencode({"csrf": csrf}).encode()
    status, _headers, page = raw(service, "POST", f"/ui/findings/{2**63}/ignore", body=body,
                                 headers={**FORM, "Cookie": cookie})
    assert status == 404, page[-2000:]
    assert f"There is no finding {2**63}" in page
