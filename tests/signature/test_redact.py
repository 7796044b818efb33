"""Specification of redact(): every rule has true-positive and false-positive fixtures.

Fake secrets are generated at test time from a seeded random source; no file in the repository
holds a format-valid credential or a literal PEM private key header.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import urllib.parse
import uuid
from typing import TYPE_CHECKING

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from failcode import REDACT_VERSION, find_secrets, redact
from failcode.signature._redact import PLACEHOLDER
from tests._growth import growth
from tests.conftest import DEEP_EXAMPLES

if TYPE_CHECKING:
    from collections.abc import Callable

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
PEM_HEAD = "-----BEGIN " + "RSA PRIVATE KEY-----"
PEM_TAIL = "-----END " + "RSA PRIVATE KEY-----"

# A case builds (text, random parts that must vanish, expected rule name) from a random source.
Case = tuple[str, list[str], str]


def _r(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choices(alphabet, k=n))


def _aws_id(rng: random.Random) -> Case:
    part = _r(rng, 16, UPPER_DIGITS)
    return f"InvalidClientTokenId: AKIA{part} is not valid", [part], "aws_access_key_id"


def _aws_sts_id(rng: random.Random) -> Case:
    part = _r(rng, 16, UPPER_DIGITS)
    return f"access key ASIA{part} expired", [part], "aws_access_key_id"


def _aws_secret_bare(rng: random.Random) -> Case:
    secret = _r(rng, 18, B64) + "Ab1/" + _r(rng, 18, B64)
    return (
        f"AWS credentials ('AKIAEXAMPLE', '{secret}') rejected",
        [secret],
        "aws_secret_access_key",
    )


def _aws_secret_ini(rng: random.Random) -> Case:
    secret = _r(rng, 40, B64)
    return f"[default]\naws_secret_access_key = {secret}\n", [secret], "assignment"


def _aws_session(rng: random.Random) -> Case:
    part = _r(rng, 300, B64)
    return f"token IQoJb3JpZ2luX2V{part}= expired", [part], "aws_session_token"


def _github(rng: random.Random) -> Case:
    prefix = rng.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"])
    part = _r(rng, 36)
    return f"git push failed with token {prefix}{part}", [part], "github_token"


def _github_pat(rng: random.Random) -> Case:
    part = _r(rng, 22) + "_" + _r(rng, 59)
    return f"GH_TOKEN is github_pat_{part}.", [part], "github_pat"


def _gitlab(rng: random.Random) -> Case:
    part = _r(rng, 20, URLSAFE)
    return f"remote: glpat-{part} is revoked", [part], "gitlab_token"


def _openai(rng: random.Random) -> Case:
    part = _r(rng, 48)
    return f"Incorrect API key provided: sk-{part}.", [part], "openai_key"


def _openai_proj(rng: random.Random) -> Case:
    part = _r(rng, 156, URLSAFE)
    return f"key=sk-proj-{part}", [part], "openai_key"


def _anthropic(rng: random.Random) -> Case:
    part = _r(rng, 93, URLSAFE) + "AA"
    return f"using sk-ant-api03-{part} for claude", [part], "anthropic_key"


def _google(rng: random.Random) -> Case:
    part = _r(rng, 35, URLSAFE)
    url = (
        f"https://generativelanguage.googleapis.com/v1beta/models/x:generate?alt=sse&key=AIza{part}"
    )
    return f"HTTPError 400 for url {url}", [part], "google_api_key"


def _google_oauth(rng: random.Random) -> Case:
    part = _r(rng, 120, URLSAFE)
    return f"token ya29.{part} expired", [part], "google_oauth"


def _huggingface(rng: random.Random) -> Case:
    part = _r(rng, 34, string.ascii_letters)
    return f"401 for hf_{part} on model repo", [part], "huggingface_token"


def _npm(rng: random.Random) -> Case:
    part = _r(rng, 36)
    prefix = "npm_"
    return f"//registry.npmjs.org/:_authToken={prefix}{part}", [part], "npm_token"


def _stripe(rng: random.Random) -> Case:
    prefix = rng.choice(["sk_live_", "rk_live_", "pk_live_", "sk_test_", "pk_test_"])
    part = _r(rng, 24)
    return f"No such customer; key {prefix}{part}", [part], "stripe_key"


def _slack(rng: random.Random) -> Case:
    prefix = rng.choice(["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"])
    part = f"{_r(rng, 12, string.digits)}-{_r(rng, 12, string.digits)}-{_r(rng, 24)}"
    return f"slack auth failed ({prefix}{part})", [part], "slack_token"


def _slack_webhook(rng: random.Random) -> Case:
    part = f"T{_r(rng, 10, UPPER_DIGITS)}/B{_r(rng, 10, UPPER_DIGITS)}/{_r(rng, 24)}"
    return f"POST https://hooks.slack.com/services/{part} -> 404", [part], "slack_webhook"


def _jwt(rng: random.Random) -> Case:
    part = f"{_r(rng, 30, URLSAFE)}.eyJ{_r(rng, 60, URLSAFE)}.{_r(rng, 43, URLSAFE)}"
    return f"invalid id_token eyJ{part}", [part], "jwt"


def _pem(rng: random.Random) -> Case:
    lines = [_r(rng, 64, B64) for _ in range(5)]
    body = "\n".join(lines)
    return f"bad key file:\n{PEM_HEAD}\n{body}\n{PEM_TAIL}\ndone", lines, "pem_private_key"


def _url_password(rng: random.Random) -> Case:
    pw = _r(rng, 16)
    return f"could not connect to postgresql://app:{pw}@db.internal:5432/x", [pw], "url_password"


def _query_token(rng: random.Random) -> Case:
    tok = _r(rng, 32)
    return (
        f"GET https://api.example.com/v1/items?page=2&access_token={tok} 403",
        [tok],
        "query_param",
    )


def _bearer(rng: random.Random) -> Case:
    tok = _r(rng, 40, URLSAFE + ".")
    return f"curl -H 'Authorization: Bearer {tok}' https://x", [tok], "authorization_header"


def _bearer_bare(rng: random.Random) -> Case:
    tok = _r(rng, 40, URLSAFE)
    return f"headers={{'auth': 'Bearer {tok}'}}", [tok], "bearer_token"


def _basic(rng: random.Random) -> Case:
    cred = base64.b64encode(f"user:{_r(rng, 12)}".encode()).decode()
    return f"Authorization: Basic {cred}", [cred.rstrip("=")], "basic_auth"


def _env_password(rng: random.Random) -> Case:
    pw = _r(rng, 14)
    return f"export DB_PASSWORD={pw}\nexport X=1", [pw], "assignment"


def _env_api_key(rng: random.Random) -> Case:
    key = _r(rng, 32)
    return f"export MY_SERVICE_API_KEY={key}", [key], "assignment"


def _json_password(rng: random.Random) -> Case:
    pw = _r(rng, 12) + '"x'
    return json.dumps({"user": "bob", "password": pw}), [pw[:12]], "assignment"


def _yaml_token(rng: random.Random) -> Case:
    tok = _r(rng, 30)
    return f"auth:\n  token: {tok}\n  user: bob\n", [tok], "assignment"


def _yaml_secret_word(rng: random.Random) -> Case:
    word = _r(rng, 10, string.ascii_lowercase)
    return f"db:\n  password: {word}\n", [word], "assignment"


def _toml_secret(rng: random.Random) -> Case:
    sec = _r(rng, 24)
    return f'[oauth]\nclient_secret = "{sec}"\n', [sec], "assignment"


def _repr_token(rng: random.Random) -> Case:
    tok = _r(rng, 20)
    return repr({"token": tok, "n": 3}), [tok], "assignment"


def _azure_conn(rng: random.Random) -> Case:
    key = _r(rng, 86, B64) + "=="
    text = (
        "DefaultEndpointsProtocol=https;AccountName=acct;"
        f"AccountKey={key};EndpointSuffix=core.windows.net"
    )
    return text, [key.rstrip("=")], "azure_connection_string"


def _azure_sas(rng: random.Random) -> Case:
    sig = _r(rng, 43, ALNUM)
    text = f"BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2022&sig={sig}"
    return text, [sig], "azure_connection_string"


def _cli_flag(rng: random.Random) -> Case:
    tok = _r(rng, 20)
    return f"$ deploy --api-key {tok} --region eu", [tok], "cli_flag"


def _curl_user(rng: random.Random) -> Case:
    pw = _r(rng, 12)
    return f"curl -u admin:{pw} https://example.com", [pw], "cli_user_password"


TRUE_POSITIVES: dict[str, Callable[[random.Random], Case]] = {
    "aws_id": _aws_id,
    "aws_sts_id": _aws_sts_id,
    "aws_secret_bare": _aws_secret_bare,
    "aws_secret_ini": _aws_secret_ini,
    "aws_session": _aws_session,
    "github": _github,
    "github_pat": _github_pat,
    "gitlab": _gitlab,
    "openai": _openai,
    "openai_proj": _openai_proj,
    "anthropic": _anthropic,
    "google": _google,
    "google_oauth": _google_oauth,
    "huggingface": _huggingface,
    "npm": _npm,
    "stripe": _stripe,
    "slack": _slack,
    "slack_webhook": _slack_webhook,
    "jwt": _jwt,
    "pem": _pem,
    "url_password": _url_password,
    "query_token": _query_token,
    "bearer": _bearer,
    "bearer_bare": _bearer_bare,
    "basic": _basic,
    "env_password": _env_password,
    "env_api_key": _env_api_key,
    "json_password": _json_password,
    "yaml_token": _yaml_token,
    "yaml_secret_word": _yaml_secret_word,
    "toml_secret": _toml_secret,
    "repr_token": _repr_token,
    "azure_conn": _azure_conn,
    "azure_sas": _azure_sas,
    "cli_flag": _cli_flag,
    "curl_user": _curl_user,
}

# Encodings a secret travels through; a URL-encoded one is read through its decoded view.


def _json_escape(s: str) -> str:
    return json.dumps(s)[1:-1]


def _repr_escape(s: str) -> str:
    return repr(s)[1:-1]


def _url_escape(s: str) -> str:
    return urllib.parse.quote(s, safe="")


ENCODINGS: dict[str, Callable[[str], str]] = {
    "json": _json_escape,
    "repr": _repr_escape,
    "url": _url_escape,
}


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> random.Random:
    """A random source seeded per test, so failures reproduce."""
    return random.Random(request.node.nodeid)


def _assert_gone(out: str, parts: list[str]) -> None:
    for part in parts:
        assert part not in out, f"{part!r} survived in {out!r}"


class TestTruePositives:
    @pytest.mark.parametrize("case", sorted(TRUE_POSITIVES))
    def test_random_part_is_removed(self, case: str, rng: random.Random) -> None:
        """The random part of each secret kind is replaced by the placeholder."""
        for _ in range(20):
            text, parts, _rule = TRUE_POSITIVES[case](rng)
            out = redact(text)
            _assert_gone(out, parts)
            assert PLACEHOLDER in out

    @pytest.mark.parametrize("case", sorted(TRUE_POSITIVES))
    def test_expected_rule_fires(self, case: str, rng: random.Random) -> None:
        """find_secrets names the rule that owns the secret kind."""
        text, _parts, rule = TRUE_POSITIVES[case](rng)
        assert rule in {name for _s, _e, name in find_secrets(text)}

    @pytest.mark.parametrize("encoding", sorted(ENCODINGS))
    @pytest.mark.parametrize("case", sorted(TRUE_POSITIVES))
    def test_encoded_secret_is_removed(self, case: str, encoding: str, rng: random.Random) -> None:
        """Secrets inside JSON-escaped, repr'd and URL-encoded text are removed too."""
        enc = ENCODINGS[encoding]
        for _ in range(10):
            text, parts, _rule = TRUE_POSITIVES[case](rng)
            out = redact(enc(text))
            _assert_gone(out, [enc(p) for p in parts])

    def test_prefixes_stay(self, rng: random.Random) -> None:
        """A recognizable prefix stays so a reader can tell what leaked."""
        gh = "ghp_" + _r(rng, 36)
        ant = "sk-ant-api03-" + _r(rng, 95, URLSAFE)
        aws = "AKIA" + _r(rng, 16, UPPER_DIGITS)
        assert redact(gh) == "ghp_<secret>"
        assert redact(ant) == "sk-ant-api03-<secret>"
        assert redact(aws) == "AKIA<secret>"
        assert redact("Authorization: Bearer " + _r(rng, 32)) == "Authorization: Bearer <secret>"
        assert redact("password=hunter2") == "password=<secret>"

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ('{\\"password\\": \\"hunter2\\"}', '{\\"password\\": \\"<secret>\\"}'),
            ("{'token': 'abcdef123456'}", "{'token': '<secret>'}"),  # pragma: allowlist secret
            ("password%3Dhunter2%26user%3Dbob", "password%3D<secret>%26user%3Dbob"),
            ("Authorization%3A%20Bearer%20abc123def456ghi", "Authorization%3A%20Bearer%20<secret>"),
            ("DB_PASS=hunter2", "DB_PASS=<secret>"),
            ("mysql: pwd=hunter2", "mysql: pwd=<secret>"),
            ("'password' => 'hunter2'", "'password' => '<secret>'"),  # pragma: allowlist secret
            ("secret: abcdefgh", "secret: <secret>"),
            ("redis://:hunter2@cache:6379/0", "redis://:<secret>@cache:6379/0"),
            ("Server=db;User Id=sa;Password=Hunter2!;", "Server=db;User Id=sa;Password=<secret>;"),
        ],
    )
    def test_exact_forms(self, text: str, expected: str) -> None:
        """Assignment forms: escaped JSON, repr, URL-encoded, PHP arrays, connection strings."""
        assert redact(text) == expected

    def test_unterminated_pem_runs_to_end(self, rng: random.Random) -> None:
        """A truncated private key block is redacted to the end of the text."""
        body = _r(rng, 64, B64)
        out = redact(f"{PEM_HEAD}\n{body}\n{_r(rng, 30, B64)}")
        assert out == PEM_HEAD + PLACEHOLDER

    def test_json_escaped_pem(self, rng: random.Random) -> None:
        """A service-account JSON with an escaped PEM key loses the key body."""
        body = _r(rng, 64, B64)
        blob = json.dumps({"private_key": f"{PEM_HEAD}\n{body}\n{PEM_TAIL}\n", "x": 1})
        out = redact(json.dumps(blob))
        assert body not in out
        assert '\\"x\\": 1' in out

    def test_several_secrets_in_one_text(self, rng: random.Random) -> None:
        """Every secret in a text goes, not only the first."""
        made = [maker(rng) for maker in TRUE_POSITIVES.values()]
        text = "\n".join(t for t, _p, _r in made)
        out = redact(text)
        for _t, parts, _rule in made:
            _assert_gone(out, parts)


def _git_sha(rng: random.Random) -> str:
    return hashlib.sha1(_r(rng, 8).encode(), usedforsecurity=False).hexdigest()


def _negatives(rng: random.Random) -> list[str]:
    sha = _git_sha(rng)
    digest = hashlib.sha256(_r(rng, 8).encode()).hexdigest()
    blob = base64.b64encode(rng.randbytes(300)).decode()
    sri = base64.b64encode(hashlib.sha256(b"x").digest()).decode()
    return [
        f"HEAD is now at {sha[:7]} fix build",
        f"fatal: reference is not a tree: {sha}",
        f"aws s3 cp failed at commit {sha}",
        f"sha256:{digest}",
        f"integrity sha256-{sri}",
        f"trace {uuid.UUID(int=rng.getrandbits(128))}",
        "request_id: req_011CSHjA8xLhHQ2Jk3Rj5u9N",
        "x-request-id: 4b8f2a61-33d6-4d6c-9b8e-5a6fdb0c1e72",
        f"content: {blob[:76]}\n{blob[76:152]}",
        "ValueError: password is too short",
        "Password must contain at least 8 characters",
        "max_tokens=4096 exceeds the limit",
        '{"max_tokens": 4096, "usage": {"prompt_tokens": 12, "total_tokens": 30}}',
        "prompt used 1500 tokens of 8192",
        "Unexpected token: '}' in JSON at position 4",
        "Invalid token: signature verification failed",
        "SyntaxError: Unexpected token o in JSON",
        "token_type=bearer expires_in=3600",
        "key=value",
        "{'key': 'value', 'sort_key': 'name'}",
        "KeyError: 'api_key'",
        "cache key=user:42:profile",
        "/home/alice/.ssh/id_rsa: Permission denied",
        "grep: /etc/passwd: Permission denied",
        "PWD=/home/alice/project",
        "GOOGLE_APPLICATION_CREDENTIALS=/var/run/creds.json",
        "private_key: ./keys/dev.pem",
        "contact alice.smith@example.com for access",
        "ssh://git@github.com/acme/repo.git",
        "https://example.com:8443/api/v1/items?page=2&limit=50",
        "Bearer token is missing",
        "Basic Authentication failed for realm",
        "Authorization: denied",
        'WWW-Authenticate: Bearer realm="api", error="invalid_token"',
        "password: ${DB_PASSWORD}",
        "api_key=None",
        "{'password': None, 'token': None}",
        "password=*****",
        "passed: 10, failed: 2",
        "compass=north bypass=true",
        "tests pass: 12",
        "git push -u origin main",
        "pip install --token-file ./t.txt",
        "task-runner-deployment-abcdefghij failed",
        "AKIAEXAMPLE is too short to be a key",
        "see ghp_ prefixed tokens in the docs",
        "hf_hub_download failed",
        "npm_config_cache=/tmp/npm",
        "def test_sk_test_parsing_of_keys(): pass",
        "xoxo from the team",
        "-----BEGIN CERTIFICATE-----\nMIIB" + blob[:60] + "\n-----END CERTIFICATE-----",
        "-----BEGIN PUBLIC KEY-----\nMIIB" + blob[:60] + "\n-----END PUBLIC KEY-----",
        "eyJhbGciOiJIUzI1NiJ9 alone is a header, not a token",
        "AccountName=myaccount;EndpointSuffix=core.windows.net",
        "deploy --password-file /run/secrets/db --token-ttl 30",
        "secret: true",
        "token: 5",
    ]


class TestFalsePositives:
    def test_look_alikes_stay(self, rng: random.Random) -> None:
        """SHAs, digests, UUIDs, request ids, base64 content, prose and paths are left alone."""
        for _ in range(5):
            for text in _negatives(rng):
                assert redact(text) == text, text
                assert find_secrets(text) == [], text

    def test_emails_are_not_redacted(self) -> None:
        """E-mail addresses are identity, not secrets (documented decision)."""
        assert redact("From: bob@example.org") == "From: bob@example.org"

    def test_bare_key_in_query_is_a_secret(self) -> None:
        """A bare ``key`` is a secret in a URL query, where Gemini sends its API key."""
        assert redact("GET /v1/x?key=abcdef123456") == "GET /v1/x?key=<secret>"


class TestRefusedMatchHidesNothing:
    """A match a rule refuses (its value is the next option or keyword) never hides the
    secret of the match that starts inside it."""

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("tool --password --password hunter22x", "tool --password --password <secret>"),
            ("&KEY=-PASSWORD -PASSWORD 0", "&KEY=<secret> -PASSWORD <secret>"),
            ("curl -u -v -u me:hunter22x", "curl -u -v -u me:<secret>"),
            ("docker login -u me -p -p hunter22x", "docker login -u me -p -p <secret>"),
            ("&KEY=BEARER BEARER 00000000", "&KEY=<secret> BEARER <secret>"),
            ("Authorization: Bearer bearer abcdefgh12345678",
             "Authorization: Bearer bearer <secret>"),
        ],
    )
    def test_second_option_is_read(self, text: str, expected: str) -> None:
        """The first value is no secret (an option, a keyword); the one after it is read."""
        assert redact(text) == expected
        assert redact(expected) == expected


@pytest.mark.parametrize("escape", ["\x1b[31m", "\x1b[0;1m", "\x1b[K", "\x1b[38;5;208m"])
@pytest.mark.parametrize("secret", [
    "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789Q1w2E3r4",
    "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0",
])
def test_a_terminal_colour_glued_to_a_secret_is_a_boundary(escape: str, secret: str) -> None:
    """A tool's coloured output puts a control sequence's final letter right before the
    secret (``\x1b[31msk-…``): the letter ends the sequence, it does not start a word."""
    out = redact(f"error: {escape}{secret}\x1b[0m failed")
    assert secret[12:30] not in out
    assert escape in out


@pytest.mark.parametrize("text", ["PASSWORD:=0", "db_password := hunter22x", "token=>abc123xyz"])
def test_a_separator_is_never_read_as_the_value(text: str) -> None:
    """``:=`` and ``=>`` are separators whole: redacting the redacted text changes nothing
    (``PASSWORD:=<secret>`` once read ``=`` as a value after ``:``)."""
    once = redact(text)
    assert once.endswith("<secret>")
    assert redact(once) == once


class TestContract:
    def test_version(self) -> None:
        """The rule-set version is exported and pinned."""
        assert REDACT_VERSION == "r7"

    def test_bytes_are_decoded_with_replacement(self) -> None:
        """Bytes are decoded as UTF-8, invalid sequences replaced, and redacted."""
        assert redact(b"\xffpassword=hunter2") == "\ufffdpassword=<secret>"

    def test_lone_surrogates_become_replacement_chars(self) -> None:
        """A lone surrogate cannot survive, so the result always encodes."""
        out = redact("a\ud800b token=abcdef123456")
        out.encode("utf-8")
        assert out.endswith("token=<secret>")

    def test_unicode_lowercase_expansion_keeps_offsets(self) -> None:
        """Text whose lower-casing changes length still redacts at the right place."""
        text = "\u0130\u0130\u0130 password=hunter2 ok"
        assert redact(text) == "\u0130\u0130\u0130 password=<secret> ok"

    def test_nul_passes_through(self) -> None:
        """NUL is ordinary text."""
        assert redact("a\x00b password=x\x00y") == "a\x00b password=<secret>\x00y"

    def test_clean_text_is_returned_unchanged(self) -> None:
        """Text with nothing to redact comes back equal."""
        text = "ValueError: invalid literal for int() with base 10: 'abc'"
        assert redact(text) == text

    def test_redacted_text_has_no_secrets(self, rng: random.Random) -> None:
        """find_secrets finds nothing in text redact produced."""
        text = "\n".join(maker(rng)[0] for maker in TRUE_POSITIVES.values())
        assert find_secrets(redact(text)) == []

    def test_find_secrets_offsets_point_at_the_secret(self, rng: random.Random) -> None:
        """find_secrets spans cover the random part."""
        text, parts, rule = _github(rng)
        [(start, end, name)] = find_secrets(text)
        assert (text[start:end], name) == (parts[0], rule)


_FRAGMENTS = [
    "password", "passwd", "pwd", "token", "api_key", "secret", "Authorization", "Bearer ", "Basic ",
    "=", ":", ": ", '"', "'", "\\", '\\"', "%3D", "%22", "%20", "://", "@", "?", "&", ";", "\n",
    " ", "AKIA", "ghp_", "sk-", "sk-ant-", "eyJ", ".", "-----BEGIN ", "PRIVATE KEY-----",
    "-----END ", "<secret>", "<", ">", "$", "aws", "AccountKey=", "--password ", "-u ", "hf_",
    "xoxb-", "glpat-", "AIza", "_live_",
]  # fmt: skip

_pieces = st.one_of(
    st.sampled_from(_FRAGMENTS),
    st.text(alphabet=ALNUM + "/+=_-", min_size=1, max_size=50),
    st.text(max_size=8),
)
_tricky_text = st.lists(_pieces, max_size=30).map("".join)
_separators = st.sampled_from([" ", "\n", "\t", ", ", " = ", ": ", "(", "[", "|"])


class TestProperties:
    @given(st.one_of(st.text(), _tricky_text))
    @example("BASIC AccountKey=0")
    @example("&KEY=-PASSWORD -PASSWORD 0")
    @example("PASSWORD:=0")
    @example("&KEY=BEARER BEARER 00000000")
    @settings(max_examples=300)
    def test_idempotent(self, text: str) -> None:
        """redact(redact(x)) == redact(x)."""
        once = redact(text)
        assert redact(once) == once

    @given(st.one_of(st.text(), _tricky_text))
    @example("BASIC AccountKey=0")
    @example("&KEY=-PASSWORD -PASSWORD 0")
    @example("PASSWORD:=0")
    @example("&KEY=BEARER BEARER 00000000")
    @settings(max_examples=300)
    def test_output_holds_no_findings(self, text: str) -> None:
        """Nothing in redact's output is still recognized as a secret."""
        assert find_secrets(redact(text)) == []

    @given(st.binary(max_size=500))
    def test_bytes_never_raise(self, data: bytes) -> None:
        """Any bytes give a str that encodes to UTF-8."""
        redact(data).encode("utf-8")

    @given(st.text(alphabet=st.characters(codec=None), max_size=300))
    def test_any_text_never_raises(self, text: str) -> None:
        """Any code points, surrogates included, give a str that encodes to UTF-8."""
        redact(text).encode("utf-8")

    @given(
        st.sampled_from(sorted(TRUE_POSITIVES)),
        st.integers(0, 2**32),
        st.tuples(st.one_of(st.text(max_size=80), _tricky_text), _separators),
        st.tuples(_separators, st.one_of(st.text(max_size=80), _tricky_text)),
    )
    @settings(max_examples=300)
    def test_embedded_secret_never_survives(
        self, case: str, seed: int, around_before: tuple[str, str], around_after: tuple[str, str]
    ) -> None:
        """A generated secret inside arbitrary surrounding text is always removed."""
        text, parts, _rule = TRUE_POSITIVES[case](random.Random(seed))
        before, after = "".join(around_before), "".join(around_after)
        out = redact(before + text + after)
        for part in parts:
            # The random part may legitimately occur in the surrounding text by chance.
            allowed = before.count(part) + after.count(part)
            assert out.count(part) <= allowed



@pytest.mark.deep
class TestDeepProperties:
    """The redaction invariants with a large, randomized budget (CI's deep job)."""

    @given(st.one_of(st.text(), _tricky_text))
    @example("BASIC AccountKey=0")
    @example("&KEY=-PASSWORD -PASSWORD 0")
    @example("PASSWORD:=0")
    @example("&KEY=BEARER BEARER 00000000")
    @settings(max_examples=DEEP_EXAMPLES, derandomize=False)
    def test_idempotent_and_clean(self, text: str) -> None:
        """redact is idempotent and leaves nothing find_secrets recognizes."""
        once = redact(text)
        assert redact(once) == once
        assert find_secrets(once) == []

    @given(st.text(alphabet=st.characters(codec=None), max_size=300) | st.binary(max_size=300))
    @settings(max_examples=DEEP_EXAMPLES, derandomize=False)
    def test_never_raises(self, text: str | bytes) -> None:
        """Any code points or bytes give a str that encodes to UTF-8."""
        redact(text).encode("utf-8")


MIB = 2**20

# One repeating unit per class of super-linear regex the rules must avoid: a value class that
# overlaps its separator or lookahead (bearer / basic with "+" and "=" padding), a match that does
# not advance past a bare key (key=key=…), a prefix inside its own token class (eyJeyJ…),
# unterminated blocks and quotes, and runs of every separator the rules read.
ADVERSARIAL_UNITS = {
    "equals": "=",
    "unterminated_begin": "-----BEGIN ",
    "many_pem_headers": PEM_HEAD,
    "eyJ_near_jwt": "eyJaaaaa.eyJ.",
    "eyJ_run": "eyJ",
    "base64_run": "QUFB+/",
    "a_colon": "a:",
    "password_eq": "password=",  # pragma: allowlist secret
    "json_password_open": '"password": "',
    "token_escaped_quotes": 'token\\"',
    "scheme_colons": "://a:",
    "scheme_at": "://u:p@",
    "userinfo_token": "https://x-access-token:",
    "query_keys": "?key=&",
    "key_eq": "key=",
    "auth_eq": "_auth=",
    "token_amp": "token=a&",
    "password_amp_value": "password=a&b",
    "comma_name_colon": ", a: ",
    "bearer_plus": "Bearer +",
    "bearer_equals": "bearer =",
    "basic_plus": "Basic +",
    "basic_padding": "Basic a=",
    "basic_b64": "Basic QUFB",
    "authorization_basic_plus": "Authorization: Basic +",
    "akia_run": "AKIA",
    "sk_dash_run": "sk-a-",
    "percent_run": "%2",
    "percent_escapes": "%3A%2F",
    "backslashes": "\\",
    "api_key_words": "api_key api-key apikey ",  # pragma: allowlist secret
    "dash_dash_password": "--password ",
    "option_run": "--client-secret-",
    "curl_user": "-u a:",
    "xml_value": "<password>x",
    "mc_alias": "mc alias set ",
    "configure_set": "configure set ",
    "login_p": "docker login -p",
    "gitlab_dots": "glpat-aaaaaaaaaaaaaaaaaaaa.",
    "account_key": "AccountKey=",
    "arn_secret": "arn:aws:secretsmanager:secret:",
    # a refused match searched again from its value (bearer bearer X): each character is read
    # by a bounded number of matches
    "bearer_chain": "bearer+",
    "bearer_words": "bearer ",
    "authorization_chain": "Authorization: Bearer ",
    "option_value_option": "--password -",
    "login_dash_p": "docker login -p -",
}


@pytest.mark.deep  # growth-ratio checks are slow: the deep step runs them
class TestLinearTime:
    @pytest.mark.parametrize("name", sorted(ADVERSARIAL_UNITS))
    def test_redact_grows_linearly(self, name: str) -> None:
        """redact on 1 MiB of an adversarial shape costs at most ~20x its 64 KiB case."""
        ratio, bound = growth(redact, ADVERSARIAL_UNITS[name])
        assert ratio <= bound, f"{name}: 64 KiB -> 1 MiB grew {ratio:.0f}x (bound {bound:.0f}x)"

    @pytest.mark.parametrize("name", ["eyJ_run", "key_eq", "basic_plus", "percent_escapes",
                                      "scheme_at", "xml_value", "token_amp"])
    def test_find_secrets_grows_linearly(self, name: str) -> None:
        """find_secrets on 1 MiB of an adversarial shape costs at most ~20x its 64 KiB case."""
        ratio, bound = growth(find_secrets, ADVERSARIAL_UNITS[name])
        assert ratio <= bound, f"{name}: 64 KiB -> 1 MiB grew {ratio:.0f}x (bound {bound:.0f}x)"

    def test_ten_megabytes_of_mixed_text(self) -> None:
        """A 10 MB text with secrets and noise is redacted without error, every secret gone."""
        rng = random.Random(3)
        made = [maker(rng) for maker in TRUE_POSITIVES.values()]
        chunk = "\n".join(t for t, _p, _r in made)
        text = (chunk + "\n" + _r(rng, 2000, B64 + " \n")) * (10 * MIB // (len(chunk) + 2001))
        out = redact(text)
        for _t, parts, _rule in made:
            _assert_gone(out, parts)
