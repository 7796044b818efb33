"""Small points of ``failcode serve``'s API, probed from outside on a real service.

- Every 401 carries ``WWW-Authenticate: Bearer realm="failcode"`` (RFC 6750), whether the key
  is missing or unknown.
- ``/readyz`` without a key says ready or not ready and why in words that name no location: a
  store that cannot be read answers 503 with ``Retry-After`` and a body that holds neither the
  store's path nor its host, port, user or database (the service's log keeps the detail).
- A 400 for a body names the fields it refuses, through failcode's redaction: a field whose
  name is a secret (a GitHub token, an API key) is echoed with its random part replaced.
"""

from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import pytest

from tests.conftest import BACKENDS
from tests.service.conftest import running

if TYPE_CHECKING:
    from pathlib import Path

    from tests.service.conftest import Served


def test_every_401_names_the_bearer_scheme(served: Served) -> None:
    """No key and an unknown key: 401 with ``WWW-Authenticate: Bearer realm="failcode"``."""
    for key in (None, "fc_" + secrets.token_hex(16)):
        status, headers, _body = served.request("GET", "/v1/findings", key=key)
        assert status == 401, (key is None, status)
        challenge = {name.lower(): value for name, value in headers.items()}.get(
            "www-authenticate")
        assert challenge == 'Bearer realm="failcode"', (key is None, headers)
    status, _headers, _body = served.request("GET", "/v1/findings", key=served.keys["read"])
    assert status == 200


def _locations(store: str) -> list[str]:
    """What of ``store`` an unauthenticated caller must not learn."""
    if store.startswith("sqlite:///"):
        path = store.removeprefix("sqlite:///")
        return [path, path.rsplit("/", 1)[0]]
    parts = urlsplit(store)  # in the forms a message would name them (a user may be "failcode")
    return [f"{parts.hostname}:{parts.port}", f"{parts.username}@", f"/{parts.path.strip('/')}",
            f"'{parts.path.strip('/')}'", f'"{parts.path.strip("/")}"',
            unquote(parts.query).rsplit("search_path=", 1)[-1], store.split("?", 1)[0]]


def _unreadable(store: str, *, away: bool) -> None:
    """Rename the control store's project table away (or back): the store no longer reads."""
    old, new = ("svc_projects", "svc_projects_away")
    if not away:
        old, new = new, old
    if store.startswith("sqlite:///"):
        import sqlite3

        with sqlite3.connect(store.removeprefix("sqlite:///")) as connection:
            connection.execute(f"ALTER TABLE {old} RENAME TO {new}")
        return
    import psycopg

    schema = unquote(store).rsplit("search_path=", 1)[-1]
    with psycopg.connect(store.split("?", 1)[0], autocommit=True) as connection:
        connection.execute(f'ALTER TABLE "{schema}".{old} RENAME TO {new}')


@pytest.mark.parametrize("backend", BACKENDS)
def test_readyz_names_no_location(backend: str, tmp_path: Path) -> None:
    """A store that cannot be read: /readyz 503, Retry-After, and no path, host, user or db."""
    with running(backend, tmp_path) as service:
        status, _headers, body = service.request("GET", "/readyz")
        assert (status, json.loads(body)) == (200, {"status": "ready"})
        _unreadable(service.store, away=True)
        try:
            status, headers, body = service.request("GET", "/readyz")
        finally:
            _unreadable(service.store, away=False)
        text = body.decode()
        assert status == 503, text
        assert "retry-after" in {name.lower() for name in headers}, headers
        assert "not ready" in text.lower(), text
        for location in _locations(service.store):
            assert location not in text, (location, text)
        logged = service.log.read_text(errors="replace")
        assert "not ready" in logged, logged
        assert "svc_projects" in logged, logged  # the detail stays in the log
        assert service.request("GET", "/readyz")[0] == 200


def _errors(answer: Any) -> str:
    return json.dumps(answer.get("errors", []))


def test_400_redacts_secret_field_names(served: Served) -> None:
    """A refused body field named like a token is echoed redacted, a plain one as it is."""
    tokens = ["ghp_" + secrets.token_hex(18), "sk-" + secrets.token_urlsafe(30)]
    for token in tokens:
        status, answer = served.json(
            "PUT", "/v1/project/retention", key=served.keys["admin"],
            body=json.dumps({token: 1, "retention_days": 3}).encode(),
            headers={"Content-Type": "application/json"})
        assert status == 400, answer
        echoed = _errors(answer)
        assert token not in json.dumps(answer), answer
        assert token[:3] in echoed, echoed
        assert "<secret>" in echoed, echoed
    status, answer = served.json(
        "PUT", "/v1/project/retention", key=served.keys["admin"],
        body=json.dumps({"colour": 1, "retention_days": 3}).encode(),
        headers={"Content-Type": "application/json"})
    assert status == 400, answer
    assert "colour" in _errors(answer), answer
