"""Issue 36, item 8: sign-in cannot be forged or hammered, sessions are capped, and the cookie is
``Secure`` whenever the browser's connection is HTTPS.

Against a real ``failcode serve`` (SQLite: what is tested lives in the process, not the store):

- A sign-in POST counts only with the token of the sign-in page that a cookie carries with it
  (``failcode_ui_signin``): a form from another site, or from an older page, is refused (403)
  and signs nobody in.
- A client address with ``signin_failures_per_minute`` (10) failed sign-ins in the last minute
  is answered 429 with ``Retry-After``, even with a right key; another address is not.
- ``X-Forwarded-For`` and ``X-Forwarded-Proto`` count only from a proxy named with
  ``--forwarded-allow-ips``: from it, the cookie is ``Secure`` when the proxy says HTTPS and
  each forwarded address has its own limit; from anyone else they change nothing.
- ``--tls-cert`` / ``--tls-key`` serve HTTPS, with ``Secure`` cookies; a wrong pair, one
  without the other, or a proxy that is not an address is a usage error before serving.
- At most ``dashboard_sessions`` sessions are held: one more ends the least recently used.
"""

from __future__ import annotations

import datetime
import http.client
import ipaddress
import itertools
import re
import ssl
import subprocess
import sys
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from failcode.service._control import Control, digest
from failcode.service._shared import Sessions
from failcode.store import open_store
from tests.service.conftest import Served, make_served, running

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

LIMIT = 10
"""The service's default ``signin_failures_per_minute``."""
_addresses = (f"198.51.100.{n}" for n in itertools.count(1))


def post(served: Served, body: bytes, headers: dict[str, str],
         ) -> tuple[int, dict[str, str], str]:
    """One sign-in POST, redirects not followed: (status, headers in lower case, page)."""
    if served.tls is not None:
        connection: http.client.HTTPConnection = http.client.HTTPSConnection(
            "127.0.0.1", served.port, timeout=60, context=served.tls)
    else:
        connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
    try:
        connection.request("POST", "/ui/signin", body=body, headers=headers)
        response = connection.getresponse()
        return (response.status, {k.lower(): v for k, v in response.getheaders()},
                response.read().decode())
    finally:
        connection.close()


def session_cookie(headers: dict[str, str]) -> str | None:
    """The ``failcode_ui`` Set-Cookie header, or None when no session was opened."""
    cookie = headers.get("set-cookie", "")
    return cookie if cookie.startswith("failcode_ui=") else None


def sign_in(served: Served, key: str, **extra: str) -> tuple[int, dict[str, str], str]:
    body, headers = served.signin_form(key)
    return post(served, body, {**headers, **extra})


@pytest.fixture(scope="module")
def direct(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A service trusting no proxy."""
    with running("sqlite", tmp_path_factory.mktemp("direct")) as served:
        yield served


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A service behind a proxy on 127.0.0.1 (the tests play the proxy)."""
    with running("sqlite", tmp_path_factory.mktemp("proxied"),
                 extra=("--forwarded-allow-ips", "127.0.0.1")) as served:
        yield served


Form = tuple[bytes, dict[str, str]]
Forge = Callable[[bytes, dict[str, str], Form], Form]
"""A forged sign-in POST: (the form's body, its headers, another page's form) -> what is sent."""


# -- the sign-in form's token -----------------------------------------------------------------


def _no_field(body: bytes, headers: dict[str, str], _other: tuple[bytes, dict[str, str]],
              ) -> tuple[bytes, dict[str, str]]:
    fields = dict(urllib.parse.parse_qsl(body.decode()))
    del fields["signin"]
    return urllib.parse.urlencode(fields).encode(), headers


def _no_cookie(body: bytes, headers: dict[str, str], _other: tuple[bytes, dict[str, str]],
               ) -> tuple[bytes, dict[str, str]]:
    return body, {k: v for k, v in headers.items() if k != "Cookie"}


def _cookie_of_another_page(body: bytes, _headers: dict[str, str],
                            other: tuple[bytes, dict[str, str]],
                            ) -> tuple[bytes, dict[str, str]]:
    return body, other[1]


def _guessed_token(body: bytes, headers: dict[str, str], _other: tuple[bytes, dict[str, str]],
                   ) -> tuple[bytes, dict[str, str]]:
    fields = dict(urllib.parse.parse_qsl(body.decode()))
    fields["signin"] = "x" * len(fields["signin"])
    return urllib.parse.urlencode(fields).encode(), headers


@pytest.mark.parametrize("forge", [_no_field, _no_cookie, _cookie_of_another_page, _guessed_token],
                         ids=["no-token", "no-cookie", "another-page's-cookie", "guessed-token"])
def test_a_sign_in_without_its_pages_token_signs_nobody_in(direct: Served, forge: Forge) -> None:
    key = direct.keys["read"]
    body, headers = direct.signin_form(key)
    other = direct.signin_form(key)
    status, answer, page = post(direct, *forge(body, headers, other))
    assert status == 403, page
    assert session_cookie(answer) is None
    assert "did not come from this page" in page
    status, answer, _page = post(direct, body, headers)  # the form itself still signs in
    assert status == 303
    assert session_cookie(answer) is not None


# -- failed sign-ins per address --------------------------------------------------------------


def test_failed_sign_ins_are_limited_per_address(proxied: Served) -> None:
    """LIMIT failures from one address: the next try is 429 even with a right key, for that
    address only."""
    hammering, other = next(_addresses), next(_addresses)
    for attempt in range(LIMIT):
        status, _h, page = sign_in(proxied, "fc_wrong_key", **{"X-Forwarded-For": hammering})
        assert status == 401, (attempt, page)
    status, answer, page = sign_in(proxied, proxied.keys["read"],
                                   **{"X-Forwarded-For": hammering})
    assert status == 429, page
    assert 1 <= int(answer["retry-after"]) <= 60
    assert session_cookie(answer) is None
    assert "Too many failed sign-ins" in page
    status, answer, _page = sign_in(proxied, proxied.keys["read"], **{"X-Forwarded-For": other})
    assert status == 303
    assert session_cookie(answer) is not None


def test_forwarded_headers_of_an_untrusted_client_change_nothing(tmp_path: Path) -> None:
    """Without --forwarded-allow-ips, a new X-Forwarded-For per try does not escape the limit
    of the client's own address, and X-Forwarded-Proto does not make the cookie Secure."""
    with running("sqlite", tmp_path) as served:
        status, answer, _page = sign_in(served, served.keys["read"],
                                        **{"X-Forwarded-Proto": "https"})
        assert status == 303
        cookie = session_cookie(answer)
        assert cookie is not None
        assert "secure" not in cookie.lower()
        for attempt in range(LIMIT):
            status, _h, page = sign_in(served, "fc_wrong_key",
                                       **{"X-Forwarded-For": next(_addresses)})
            assert status == 401, (attempt, page)
        status, _h, page = sign_in(served, served.keys["read"],
                                   **{"X-Forwarded-For": next(_addresses)})
        assert status == 429, page


# -- Secure cookies -----------------------------------------------------------------------------


def test_cookies_are_secure_when_the_trusted_proxy_says_https(proxied: Served) -> None:
    address = {"X-Forwarded-For": next(_addresses)}
    status, answer, _page = sign_in(proxied, proxied.keys["read"],
                                    **address, **{"X-Forwarded-Proto": "https"})
    assert status == 303
    cookie = session_cookie(answer)
    assert cookie is not None
    assert "; secure" in cookie.lower()
    status, answer, _page = sign_in(proxied, proxied.keys["read"], **address)
    cookie = session_cookie(answer)
    assert cookie is not None
    assert "secure" not in cookie.lower()


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, as PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "failcode test")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=7))
                   .add_extension(x509.SubjectAlternativeName(
                       [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None),
                                  critical=True)
                   .sign(key, hashes.SHA256()))
    cert, private = folder / "cert.pem", folder / "key.pem"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    return cert, private


def test_the_service_serves_https_with_its_own_certificate(tmp_path: Path) -> None:
    cert, key = _certificate(tmp_path)
    served = make_served(f"sqlite:///{tmp_path / 'control.db'}", tmp_path,
                         extra=("--tls-cert", str(cert), "--tls-key", str(key)))
    served.tls = ssl.create_default_context(cafile=str(cert))
    served.start()
    try:
        status, answer, _page = sign_in(served, served.keys["read"])
        assert status == 303
        cookie = session_cookie(answer)
        assert cookie is not None
        assert "; secure" in cookie.lower()
        plain = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
        plain.request("GET", "/healthz")
        with pytest.raises(http.client.RemoteDisconnected):  # plain HTTP on the TLS port
            plain.getresponse()
        plain.close()
        assert "https://127.0.0.1" in served.log.read_text()
    finally:
        served.stop()


@pytest.mark.parametrize(("options", "said"), [
    (("--tls-cert", "{cert}"), "--tls-cert and --tls-key go together"),
    (("--tls-cert", "{cert}", "--tls-key", "{junk}"), "does not load as a PEM certificate"),
    (("--forwarded-allow-ips", "10.0.0.5,nope"), "'nope' is not an address or a network"),
])
def test_wrong_tls_or_proxy_options_are_usage_errors(tmp_path: Path, options: tuple[str, ...],
                                                     said: str) -> None:
    cert, _key = _certificate(tmp_path)
    junk = tmp_path / "junk.pem"
    junk.write_text("not a key\n")
    argv = [option.format(cert=cert, junk=junk) for option in options]
    done = subprocess.run([sys.executable, "-m", "failcode", "serve", "--store",
                           f"sqlite:///{tmp_path / 'control.db'}", "--port", "1", *argv],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert said in re.sub(r"\s+", " ", done.stderr)
    assert "Traceback" not in done.stderr


# -- the sessions' cap --------------------------------------------------------------------------


def test_sessions_are_capped_the_least_recently_used_ending_first(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'control.db'}") as store:
        control = Control(store)
        control.create_project("web")
        sessions = Sessions(store, limit=3)
        made = [control.create_key("web", "read") for _ in range(5)]
        opened = [sessions.open(row.key_id, digest(key))[0] for key, row in made[:3]]
        assert sessions.get(opened[0]) is not None  # the oldest is now the most recently used
        later = [sessions.open(row.key_id, digest(key))[0] for key, row in made[3:]]
        assert len(sessions) == 3
        assert [sessions.get(sid) is not None for sid in opened] == [True, False, False]
        assert all(sessions.get(sid) is not None for sid in later)
