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
import subprocess
import urllib.parse
from typing import TYPE_CHECKING, Any

import pytest

from failcode import Failure, from_command
from failcode.events import failure_event
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


@pytest.fixture(scope="module", params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
            ) -> Iterator[Served]:
    """A service holding one finding: a command that is not installed, run here."""
    tmp = tmp_path_factory.mktemp(f"dashboard-inputs-{request.param}")
    with running(request.param, tmp, extra=("--rate", "1000000")) as served:
        argv = ["sh", "-c", "failcode-dash-inputs-missing-tool"]
        done = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, check=False)
        failure = from_command(argv, done.returncode, done.stdout, done.stderr)
        assert isinstance(failure, Failure)
        body = failure_event(failure, event="command.failed", session="inputs").to_json()
        status, _h, answer = served.request("POST", "/v1/events", key=served.keys["ingest"],
                                            body=body + b"\n",
                                            headers={"Content-Type": "application/x-ndjson"})
        assert status == 200, answer
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
