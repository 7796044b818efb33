"""Redaction classes of issue 10 and 11: every family through redact() and through every field
and output form of records built by the factory, classify, classify_text and from_command.

Fake secrets are generated at test time from a seeded random source; no literal credential or
PEM header is stored here.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import urllib.parse
import uuid
from typing import ClassVar

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from failcode import (
    FC,
    EntityRef,
    Failure,
    classify,
    classify_text,
    encode_envelope,
    from_command,
    normalize_message,
    redact,
    render_developer,
    render_json,
    render_user,
    to_air_error,
)

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
PUNCT = "&:~@!%^*"
PEM_LABEL = "RSA " + "PRIVATE KEY"


def _r(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choices(alphabet, k=n))


def _secret(rng: random.Random) -> str:
    """A random secret with a letter, a digit and punctuation inside (never at its ends)."""
    return _r(rng, 6) + rng.choice(PUNCT) + _r(rng, 6) + rng.choice(PUNCT) + _r(rng, 6)


def _basic(rng: random.Random) -> tuple[str, str]:
    cred = base64.b64encode(f"deploy:{_r(rng, 14)}".encode()).decode()
    return cred, cred.rstrip("=")


# Each family builds (text, parts that must vanish, parts that must stay).
def _npm_auth(rng: random.Random) -> tuple[str, list[str], list[str]]:
    cred, part = _basic(rng)
    return f"//registry.npmjs.org/:_auth={cred}\nalways-auth=true", [part], ["registry.npmjs.org"]


def _npm_auth_spaced(rng: random.Random) -> tuple[str, list[str], list[str]]:
    cred, part = _basic(rng)
    return f'npm error config _auth = "{cred}"', [part], ["npm error config"]


def _docker_auth(rng: random.Random) -> tuple[str, list[str], list[str]]:
    cred, part = _basic(rng)
    doc = {"auths": {"ghcr.io": {"auth": cred}}, "credsStore": "desktop"}
    return json.dumps(doc, indent=2), [part], ["ghcr.io", "desktop"]


def _authorization_basic(rng: random.Random) -> tuple[str, list[str], list[str]]:
    cred, part = _basic(rng)
    return f"> Authorization: Basic {cred}\n> Accept: */*", [part], ["Accept"]


def _curl_user(rng: random.Random) -> tuple[str, list[str], list[str]]:
    pw = _secret(rng)
    return f"curl -fsS -u deploy:{pw} https://example.com/x", [pw], ["https://example.com/x"]


def _camel_secret_key(rng: random.Random) -> tuple[str, list[str], list[str]]:
    sk = _secret(rng)
    return f'{{"accessKey": "minio", "secretKey": "{sk}", "api": "s3v4"}}', [sk], ["s3v4"]


def _client_secret(rng: random.Random) -> tuple[str, list[str], list[str]]:
    sk = _secret(rng)
    return f"clientSecret={sk} tenant=acme", [sk], ["tenant=acme"]


def _auth_token_yaml(rng: random.Random) -> tuple[str, list[str], list[str]]:
    tok = _secret(rng)
    return f"service:\n  auth_token: {tok}\n  region: eu", [tok], ["region: eu"]


def _aws_env(rng: random.Random) -> tuple[str, list[str], list[str]]:
    sk = _r(rng, 40, B64)
    return f"AWS_SECRET_ACCESS_KEY={sk}\nAWS_REGION=us-east-1", [sk], ["us-east-1"]


def _maven_xml(rng: random.Random) -> tuple[str, list[str], list[str]]:
    pw = _secret(rng).replace("&", "&amp;")
    xml = (f"<server>\n  <id>central</id>\n  <username>deployer</username>\n"
           f"  <password>{pw}</password>\n</server>")
    return xml, [pw], ["deployer", "central"]


def _ini_password(rng: random.Random) -> tuple[str, list[str], list[str]]:
    pw = _secret(rng)
    return f"[database]\nhost = db.internal\npassword = {pw}\nport = 5432", [pw], ["db.internal"]


def _mc_alias(rng: random.Random) -> tuple[str, list[str], list[str]]:
    sk = _r(rng, 40, ALNUM)
    return (f"mc alias set prod https://minio.example.com admin {sk}", [sk],
            ["https://minio.example.com admin"])


def _aws_configure(rng: random.Random) -> tuple[str, list[str], list[str]]:
    sk = _r(rng, 40, B64)
    return (f"aws configure set aws_secret_access_key {sk} --profile ci", [sk],
            ["--profile ci"])


def _pem_cut(rng: random.Random) -> tuple[str, list[str], list[str]]:
    lines = [_r(rng, 64, B64) for _ in range(6)]
    return ("deploy failed:\n-----BEGIN " + PEM_LABEL + "-----\n" + "\n".join(lines),
            lines, ["deploy failed:"])


def _url_reserved(rng: random.Random) -> tuple[str, list[str], list[str]]:
    pw = _r(rng, 5) + "@" + _r(rng, 5) + ":" + _r(rng, 5)
    return f"postgresql://app:{pw}@db.internal:5432/orders", [pw], ["db.internal:5432/orders"]


def _url_escaped(rng: random.Random) -> tuple[str, list[str], list[str]]:
    pw = urllib.parse.quote(_secret(rng), safe="")
    return f"redis://app:{pw}@cache.internal:6379/0", [pw], ["cache.internal:6379/0"]


def _git_remote(rng: random.Random) -> tuple[str, list[str], list[str]]:
    tok = _r(rng, 40)
    return (f"fatal: unable to access 'https://x-access-token:{tok}@github.com/acme/app.git/'",
            [tok], ["@github.com/acme/app.git/"])


FAMILIES = {
    "npm_auth": _npm_auth, "npm_auth_spaced": _npm_auth_spaced, "docker_auth": _docker_auth,
    "authorization_basic": _authorization_basic, "curl_user": _curl_user,
    "camel_secret_key": _camel_secret_key, "client_secret": _client_secret,
    "auth_token_yaml": _auth_token_yaml, "aws_env": _aws_env, "maven_xml": _maven_xml,
    "ini_password": _ini_password, "mc_alias": _mc_alias, "aws_configure": _aws_configure,
    "pem_cut": _pem_cut, "url_reserved": _url_reserved, "url_escaped": _url_escaped,
    "git_remote": _git_remote,
}  # fmt: skip


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> random.Random:
    """A random source seeded per test, so failures reproduce."""
    return random.Random(request.node.nodeid)


class TestFamilies:
    @pytest.mark.parametrize("family", sorted(FAMILIES))
    def test_secret_goes_and_context_stays(self, family: str, rng: random.Random) -> None:
        """Each family loses its secret and keeps its hosts, paths and neighbours."""
        for _ in range(20):
            text, gone, kept = FAMILIES[family](rng)
            out = redact(text)
            for part in gone:
                assert part not in out, f"{part!r} survived in {out!r}"
            for part in kept:
                assert part in out, f"{part!r} was altered in {out!r}"

    @pytest.mark.parametrize(
        "text",
        [
            ("aws secretsmanager get-secret-value --secret-id "
             "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf"),
            "aws configure set region us-east-1",
            "aws configure get aws_secret_access_key",
            "mc alias set prod https://minio.example.com",
            "docker run -u 1000:1000 -p 8080:80 app",
            "git push -u origin main",
            '"auth": "required"',
            "<passwordPolicy>strict</passwordPolicy>",
            "error_class: provider_error:llm.complete:auth:none:5a72444b",
            "deploy --password-file /run/secrets/db --token-ttl 30",
            "openssl rsa -passin env:KEY_PASS -in key.pem",
            "ssh://git@github.com/acme/app.git",
            "https://github.com/acme/app.git",
        ],
    )
    def test_look_alikes_stay(self, text: str) -> None:
        """ARNs, options naming files, uid:gid pairs, prose and git remotes without a token stay."""
        assert redact(text) == text

    def test_hashes_ids_as_arguments_stay(self, rng: random.Random) -> None:
        """Git SHAs, digests, UUIDs and request ids as command arguments stay."""
        sha = hashlib.sha1(rng.randbytes(8), usedforsecurity=False).hexdigest()
        digest = hashlib.sha256(rng.randbytes(8)).hexdigest()
        texts = [f"git checkout {sha}", f"docker pull app@sha256:{digest}",
                 f"mc cp --version-id {uuid.UUID(int=rng.getrandbits(128))} a b",
                 f"request_id=req_{_r(rng, 24)}"]
        for text in texts:
            assert redact(text) == text


class TestIdempotency:
    @given(st.text(alphabet="BASICbasicAccountKey=0+/ <>secrt:_-&%3Dauth\"'", max_size=60))
    @example("BASIC AccountKey=0")
    @example("Bearer AccountKey=0")
    @example("Basic dGVzdDp0ZXN0%3DAccountKey=0")
    @settings(max_examples=500)
    def test_redact_is_idempotent_on_header_and_key_mixes(self, text: str) -> None:
        """A credential scheme followed by a redacted key value is not redacted again."""
        once = redact(text)
        assert redact(once) == once


# -- no secret on the wire --------------------------------------------------------------------


def _wire_forms(record: Failure) -> dict[str, str]:
    return {
        "to_json": record.to_json(),
        "envelope": encode_envelope(record).decode(),
        "render_user": render_user(record),
        "render_developer": render_developer(record),
        "render_json": render_json(record),
        "air_error": json.dumps(to_air_error(record)),
    }


def _assert_clean(record: object, secret: str) -> None:
    assert isinstance(record, Failure)
    for name, form in _wire_forms(record).items():
        assert secret not in form, f"secret in {name}: {form[:400]}"


class TestWire:
    def test_factory_fields(self, rng: random.Random) -> None:
        """Context, metadata, refs, surface, location, detail and cause carry no secret."""
        tok = "ghp_" + _r(rng, 36)
        record = FC.CMD_FAILED.failure(
            surface=f"deploy.{tok}", location=f"src/{tok}.py",
            params={"program": tok, "exit_code": 1}, detail=f"token={tok}",
            context={"session": tok, tok: 1}, metadata={"request_id": tok},
            evidence_refs=(EntityRef("log", tok),), cause_refs=(EntityRef(tok, "x"),))
        _assert_clean(record, tok[4:])

    def test_classify_every_position(self, rng: random.Random) -> None:
        """classify: the message, the cause chain, a provider error string and the context."""
        tok = "ghp_" + _r(rng, 36)

        class ProviderError(Exception):
            status_code = 429
            request_id = f"req {tok}"
            body: ClassVar = {"error": {"message": f"bad key {tok}", "code": f"rate_{tok}"}}

        try:
            try:
                raise ValueError(f"inner password={tok}")
            except ValueError as inner:
                raise ProviderError(f"Authorization: Bearer {tok}") from inner
        except ProviderError as exc:
            record = classify(exc, context={"note": f"key {tok}"})
        _assert_clean(record, tok[4:])

    def test_classify_text_detail_cut(self, rng: random.Random) -> None:
        """classify_text: a secret straddling the detail limit is not kept as a half."""
        tok = "ghp_" + _r(rng, 36)
        message = "x " * 496 + tok + " tail"
        record = classify_text("RuntimeError", message, traceback=f'  File "{tok}.py", line 1')
        _assert_clean(record, tok[4:24])
        _assert_clean(record, tok[-16:])

    def test_from_command_every_position(self, rng: random.Random) -> None:
        """from_command: argv program, stderr tail cut mid-secret, a PEM body cut by the tail."""
        tok = "ghp_" + _r(rng, 36)
        body = [_r(rng, 64, B64) for _ in range(120)]
        pem = "-----BEGIN " + PEM_LABEL + "-----\n" + "\n".join(body)
        stderr = pem + "\n-----END " + PEM_LABEL + "-----\n" + "z" * 3990 + " " + tok
        record = from_command([f"/opt/{tok}", "--token", tok], 1, stderr=stderr)
        _assert_clean(record, tok[4:])
        for line in body:
            _assert_clean(record, line)


class TestCut:
    def test_normalize_cut_keeps_no_half_secret(self, rng: random.Random) -> None:
        """normalize_message redacts before its 1,024-character cut."""
        tok = "ghp_" + _r(rng, 36)
        out = normalize_message("a " * 505 + tok)
        assert tok[4:12] not in out

    def test_cause_message_cut(self, rng: random.Random) -> None:
        """A cause message cut at its limit keeps no half of a secret."""
        tok = "ghp_" + _r(rng, 36)
        exc = RuntimeError(" " * 1990 + tok)  # white space collapses after the cut
        record = FC.SYS_UNKNOWN.failure(surface="python", params={"exception": "RuntimeError"},
                                        cause=exc)
        assert all(tok[4:10] not in link.message for link in record.cause)
