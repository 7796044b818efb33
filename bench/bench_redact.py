"""Secret redaction: failcode.redact versus detect-secrets on generated error text.

Run: ``python bench/bench_redact.py`` (options: ``--docs N``, ``--seed S``, ``--rounds R``).

The corpus is generated from a seeded random source: realistic error text (tracebacks, HTTP
error bodies, env dumps, YAML/TOML/JSON config, curl commands, log lines) with format-valid FAKE
secrets of every supported kind embedded, some of them JSON-escaped, repr'd or URL-encoded, plus
look-alike negatives (git SHAs, sha256 digests, UUIDs, request ids, base64 blobs, prose about
passwords and tokens, token counts, paths, e-mail addresses). Nothing here is a real credential,
and no secret is stored in this file: every one is built at run time.

Bare provider tokens (``bare/<family>/<placement>``): 45 families whose formats come from the
public rule sets of gitleaks (default config), trufflehog (detectors) and detect-secrets
(plugins), each placed where no key name helps (prose, a curl header, an export of a neutral
name, a URL query, a JSON value under a neutral key, a Python repr, an error message), plus a GCP
service-account JSON file and an Azure SAS URL; with their look-alikes (the scanners' own
allowlisted placeholders, package names starting with a prefix, ids and hashes next to a
provider's name). Left out: formats no rule set documents (Fireworks, Render), UUID-shaped keys
(Heroku's legacy, Railway: indistinguishable from ids without a key name), and Square's
``EAAA`` tokens (four common letters, a gate every ``a`` would pay for).

Measures, for both tools in the same run:

- recall: the share of embedded secrets removed. failcode: the random part no longer occurs in
  ``redact(document)``. detect-secrets (default plugin set, ``scan_line`` per line): the line that
  holds the start of the secret is flagged; a PEM block counts when its BEGIN line is flagged.
- negatives altered: the share of look-alike lines changed. failcode: the line no longer occurs
  verbatim in the redacted document. detect-secrets: the line is flagged.
- throughput: lines per second over the same lines, timed in interleaved rounds; failcode both
  per line and per document.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import json
import random
import statistics
import string
import sys
import urllib.parse
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import interleaved, median_ratio
from failcode.signature._redact import REDACT_VERSION, redact

if TYPE_CHECKING:
    from collections.abc import Callable

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
PEM_LABEL = "RSA " + "PRIVATE KEY"


def _r(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choices(alphabet, k=n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


@dataclass
class Secret:
    kind: str
    text: str  # the snippet as it appears (may span lines)
    parts: list[str]  # random parts that must not survive


@dataclass
class Doc:
    text: str
    secrets: list[tuple[Secret, str]] = field(default_factory=list)  # (secret, encoding)
    negatives: list[str] = field(default_factory=list)


# --- fake secrets, format-valid (prefixes, lengths, alphabets) ------------------------------


def _s_aws(rng: random.Random) -> Secret:
    pid = rng.choice(["AKIA", "ASIA"])
    kid = _r(rng, 16, UPPER_DIGITS)
    sec = _r(rng, 40, B64)
    text = (
        f"[default]\naws_access_key_id = {pid}{kid}\naws_secret_access_key = {sec}\n"
        "region = us-east-1"
    )
    return Secret("aws_keypair", text, [kid, sec])


def _s_aws_id(rng: random.Random) -> Secret:
    kid = _r(rng, 16, UPPER_DIGITS)
    return Secret("aws_access_key_id", f"The security token AKIA{kid} included is invalid.", [kid])


def _s_aws_session(rng: random.Random) -> Secret:
    tok = _r(rng, 340, B64)
    return Secret("aws_session_token", f"AWS_SESSION_TOKEN=IQoJb3JpZ2luX2Vj{tok}=", [tok])


def _s_github(rng: random.Random) -> Secret:
    pre = rng.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"])
    tok = _r(rng, 36)
    return Secret(
        "github_token", f"remote: Invalid username or token. Token used: {pre}{tok}", [tok]
    )


def _s_github_pat(rng: random.Random) -> Secret:
    tok = _r(rng, 22) + "_" + _r(rng, 59)
    return Secret("github_pat", f"export GH_TOKEN=github_pat_{tok}", [tok])


_GITLAB_USER = "oauth2"


def _s_gitlab(rng: random.Random) -> Secret:
    tok = _r(rng, 20, URLSAFE)
    return Secret(
        "gitlab_token",
        "fatal: unable to access 'https://" + f"{_GITLAB_USER}:glpat-{tok}@gitlab.com/g/p.git/'",
        [tok],
    )


def _s_openai(rng: random.Random) -> Secret:
    tok = _r(rng, 20) + "T3BlbkFJ" + _r(rng, 20)
    return Secret(
        "openai_key",
        f"openai.AuthenticationError: Error code: 401 - Incorrect API key provided: sk-{tok}.",
        [tok],
    )


def _s_openai_proj(rng: random.Random) -> Secret:
    tok = _r(rng, 74, URLSAFE) + "T3BlbkFJ" + _r(rng, 74, URLSAFE)
    return Secret("openai_project_key", f"OPENAI_API_KEY=sk-proj-{tok}", [tok])


def _s_anthropic(rng: random.Random) -> Secret:
    tok = _r(rng, 93, URLSAFE) + "AA"
    return Secret(
        "anthropic_key",
        f"client = Anthropic(api_key='sk-ant-api03-{tok}')",
        [tok],
    )


def _s_google(rng: random.Random) -> Secret:
    tok = _r(rng, 35, URLSAFE)
    url = (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent"
        f"?key=AIza{tok}"
    )
    return Secret(
        "google_api_key",
        f"httpx.HTTPStatusError: Client error '429 Too Many Requests' for url '{url}'",
        [tok],
    )


def _s_huggingface(rng: random.Random) -> Secret:
    tok = _r(rng, 34, string.ascii_letters)
    return Secret("huggingface_token", f"HF_TOKEN=hf_{tok}", [tok])


def _s_npm(rng: random.Random) -> Secret:
    tok = _r(rng, 36)
    prefix = "npm_"
    return Secret("npm_token", f"//registry.npmjs.org/:_authToken={prefix}{tok}", [tok])


def _s_stripe(rng: random.Random) -> Secret:
    pre = rng.choice(["sk_live_", "rk_live_", "sk_test_", "pk_live_"])
    tok = _r(rng, rng.choice([24, 99]))
    return Secret(
        "stripe_key",
        f"stripe.error.AuthenticationError: Invalid API Key provided: {pre}{tok}",
        [tok],
    )


def _s_slack(rng: random.Random) -> Secret:
    pre = rng.choice(["xoxb-", "xoxp-"])
    tok = f"{_r(rng, 12, string.digits)}-{_r(rng, 13, string.digits)}-{_r(rng, 24)}"
    return Secret("slack_token", f"slack_sdk.errors.SlackApiError: token={pre}{tok}", [tok])


def _s_slack_webhook(rng: random.Random) -> Secret:
    tail = f"T{_r(rng, 8, UPPER_DIGITS)}/B{_r(rng, 10, UPPER_DIGITS)}/{_r(rng, 24)}"
    return Secret(
        "slack_webhook",
        f"requests.exceptions.HTTPError: 404 for url: https://hooks.slack.com/services/{tail}",
        [tail.rsplit("/", 1)[1]],
    )


def _s_jwt(rng: random.Random) -> Secret:
    head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": str(rng.randrange(10**9)), "exp": rng.randrange(10**9, 2 * 10**9)}
    body = _b64url(json.dumps(claims).encode())
    sig = _b64url(rng.randbytes(32))
    tok = f"{head}.{body}.{sig}"
    return Secret("jwt", f'jwt.exceptions.ExpiredSignatureError: token "{tok}"', [body, sig])


def _s_pem(rng: random.Random) -> Secret:
    body = base64.b64encode(rng.randbytes(480)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    text = "\n".join([f"-----BEGIN {PEM_LABEL}-----", *lines, f"-----END {PEM_LABEL}-----"])
    return Secret("pem_private_key", text, lines)


def _s_url_password(rng: random.Random) -> Secret:
    pw = _r(rng, 18)
    return Secret(
        "url_password",
        f"sqlalchemy.exc.OperationalError: could not connect to "
        f"postgresql://app:{pw}@db.internal:5432/orders",
        [pw],
    )


def _s_query_token(rng: random.Random) -> Secret:
    tok = _r(rng, 40)
    return Secret(
        "query_param",
        f"GET https://api.example.com/v2/export?format=csv&access_token={tok} -> 403",
        [tok],
    )


def _s_bearer(rng: random.Random) -> Secret:
    tok = _r(rng, 48, URLSAFE)
    return Secret(
        "bearer_header",
        f"curl -sS -H 'Authorization: Bearer {tok}' https://api.example.com/v1/me",
        [tok],
    )


def _s_basic(rng: random.Random) -> Secret:
    cred = base64.b64encode(f"deploy:{_r(rng, 16)}".encode()).decode()
    return Secret("basic_header", f"> Authorization: Basic {cred}", [cred.rstrip("=")])


def _s_env_password(rng: random.Random) -> Secret:
    pw = _r(rng, 16, ALNUM + "!#%")
    return Secret("env_password", f"POSTGRES_PASSWORD={pw}", [pw])


def _s_json_password(rng: random.Random) -> Secret:
    pw = _r(rng, 16)
    return Secret(
        "json_password", json.dumps({"username": "svc", "password": pw, "port": 5432}), [pw]
    )


def _s_yaml_token(rng: random.Random) -> Secret:
    tok = _r(rng, 32)
    return Secret("yaml_token", f"notifier:\n  url: https://n.example.com\n  token: {tok}", [tok])


def _s_toml_secret(rng: random.Random) -> Secret:
    sec = _r(rng, 40)
    return Secret("toml_secret", f'[oauth]\nclient_id = "web"\nclient_secret = "{sec}"', [sec])


def _s_azure(rng: random.Random) -> Secret:
    key = base64.b64encode(rng.randbytes(64)).decode()
    return Secret(
        "azure_connection_string",
        "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acme;"
        f"AccountKey={key};EndpointSuffix=core.windows.net",
        [key.rstrip("=")],
    )


# --- issue 10 families: HTTP Basic, key names, credentials commands, PEM cut, URL passwords --
# Formats follow the tools' own documentation: npm's .npmrc (``_auth`` is base64 of
# user:password, ``//host/:_authToken``), Docker's config.json (``"auths": {host: {"auth"}}``),
# Maven's settings.xml (``<server><password>``), the AWS CLI (``aws configure set NAME VALUE``,
# ``AWS_SECRET_ACCESS_KEY``), MinIO's mc (``mc alias set [--api S] ALIAS URL ACCESSKEY
# SECRETKEY``, ``MC_HOST_alias=https://AK:SK@host``) and git's credential URLs.

PUNCT = "&:~@!^*"


def _pw(rng: random.Random) -> str:
    """A password with punctuation inside it (never first or last)."""
    return _r(rng, 5) + rng.choice(PUNCT) + _r(rng, 6) + rng.choice(PUNCT) + _r(rng, 5)


def _basic_cred(rng: random.Random) -> str:
    return base64.b64encode(f"{rng.choice(['ci', 'deploy', 'svc'])}:{_pw(rng)}".encode()).decode()


def _s_npm_auth(rng: random.Random) -> Secret:
    cred = _basic_cred(rng)
    return Secret("basic/npm_auth", f"//npm.corp.example/:_auth={cred}\nalways-auth=true",
                  [cred.rstrip("=")])


def _s_docker_auth(rng: random.Random) -> Secret:
    cred = _basic_cred(rng)
    doc = json.dumps({"auths": {"registry.example.com": {"auth": cred}}}, indent=1)
    return Secret("basic/docker_auth", doc, [cred.rstrip("=")])


def _s_curl_user(rng: random.Random) -> Secret:
    pw = _pw(rng)
    return Secret("basic/curl_user", f"+ curl -fsS -u deploy:{pw} https://artifacts.example.com/x",
                  [pw])


def _s_camel_key(rng: random.Random) -> Secret:
    name = rng.choice(["secretKey", "clientSecret", "auth_token", "AWS_SECRET_ACCESS_KEY",
                       "apiKey", "DB_PASS", "privateKey"])
    val = _pw(rng)
    form = rng.choice(['{name}: "{val}"', "{name}={val}", "{name} = {val}", '"{name}": "{val}"'])
    return Secret("keyname/" + name, form.format(name=name, val=val), [val])


def _s_maven(rng: random.Random) -> Secret:
    pw = _pw(rng).replace("&", "&amp;")
    xml = (f"<servers>\n  <server>\n    <id>corp-releases</id>\n    <username>ci</username>\n"
           f"    <password>{pw}</password>\n  </server>\n</servers>")
    return Secret("keyname/maven_xml", xml, [pw])


def _s_ini(rng: random.Random) -> Secret:
    pw = _pw(rng)
    return Secret("keyname/ini_password", f"[client]\nuser = app\npassword = {pw}\n", [pw])


def _s_mc_alias(rng: random.Random) -> Secret:
    sk = _r(rng, 40, B64)
    api = rng.choice(["", "--api S3v4 "])
    return Secret("cli/mc_alias_set",
                  f"$ mc alias set {api}prod https://minio.example.com AKMINIO{_r(rng, 13)} {sk}",
                  [sk])


def _s_aws_configure(rng: random.Random) -> Secret:
    sk = _r(rng, 40, B64)
    return Secret("cli/aws_configure_set",
                  f"+ aws configure set aws_secret_access_key {sk} --profile ci", [sk])


def _s_cli_option(rng: random.Random) -> Secret:
    val = _r(rng, 24)
    form = rng.choice(["deploy --client-secret {v} --env prod", "docker login -u ci -p {v} ghcr.io",
                       "keytool -list -storepass {v}", "openssl pkcs12 -passin pass:{v} -in a.p12",
                       "mysql -h db -u root -p{v} app"])
    return Secret("cli/option", form.format(v=val), [val])


def _s_pem_cut(rng: random.Random) -> Secret:
    body = base64.b64encode(rng.randbytes(480)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    cut = rng.randrange(2, len(lines))
    text = "\n".join([f"-----BEGIN {PEM_LABEL}-----", *lines[:cut]])
    return Secret("pem/cut_by_limit", text + PEM_CUT_MARK, lines[:cut])


PEM_CUT_MARK = "\n[output truncated]"


def _s_url_reserved(rng: random.Random) -> Secret:
    raw = _pw(rng)
    pw = rng.choice([raw, urllib.parse.quote(raw, safe="")])
    return Secret("url/reserved_chars", f"could not connect to postgresql://app:{pw}@db.internal:5432/x",
                  [pw])


def _s_git_remote(rng: random.Random) -> Secret:
    tok = rng.choice([_r(rng, 40), "ghs_" + _r(rng, 36)])
    user = rng.choice(["x-access-token", "oauth2", "gitlab-ci-token"])
    return Secret("url/git_remote",
                  f"fatal: unable to access 'https://{user}:{tok}@github.com/acme/app.git/'",
                  [tok.removeprefix("ghs_")])


def _s_mc_host(rng: random.Random) -> Secret:
    sk = _r(rng, 40, B64.replace("/", ""))
    return Secret("url/mc_host_env", f"MC_HOST_prod=https://AKMINIO{_r(rng, 12)}:{sk}@play.min.io",
                  [sk])


# --- bare provider tokens: secrets standing alone, no key name before them --------------
# Each format is taken from the public rule sets of secret scanners (gitleaks' default config,
# trufflehog's detectors, detect-secrets' plugins): a fixed prefix with a documented charset and
# length, or, for a shape without a prefix, the provider word close before it (as those tools
# require). Placements put the token where no key name helps: prose, a command line, a URL
# query, a JSON value under a neutral key, a Python repr, an error message.

HEX = "0123456789abcdef"
LOWER_ALNUM = string.ascii_lowercase + string.digits
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


@dataclass(frozen=True)
class BareFamily:
    name: str
    make: Callable[[random.Random], tuple[str, list[str]]]  # (token, random parts)
    context: str = ""  # a provider word the rule sets require close before a prefix-less shape


def _tok(prefix: str, body: str) -> tuple[str, list[str]]:
    return prefix + body, [body]


def _discord(rng: random.Random) -> tuple[str, list[str]]:
    user_id = str(rng.randrange(10**17, 10**18 + 4 * 10**17)).encode()
    head = base64.b64encode(user_id).decode().rstrip("=")
    mid, tail = _r(rng, 6, URLSAFE), _r(rng, 27, URLSAFE)
    return f"{head}.{mid}.{tail}", [mid + "." + tail]


def _sentry_org(rng: random.Random) -> tuple[str, list[str]]:
    claims = {"iat": rng.randrange(1_600_000_000, 1_800_000_000), "url": "https://sentry.io",
              "region_url": "https://us.sentry.io", "org": f"acme-{rng.randrange(99)}"}
    body = base64.b64encode(json.dumps(claims, separators=(",", ":")).encode()).decode()
    return _tok("sntrys_", body.rstrip("=") + "_" + _r(rng, 43, B64.replace("/", "")))


def _pypi(rng: random.Random) -> tuple[str, list[str]]:
    return _tok("pypi-", "AgEIcHlwaS5vcmc" + _r(rng, rng.randrange(120, 180), URLSAFE))


def _terraform(rng: random.Random) -> tuple[str, list[str]]:
    head, tail = _r(rng, 14, LOWER_ALNUM), _r(rng, 67, URLSAFE)
    return f"{head}.atlasv1.{tail}", [head, tail]


def _sendgrid(rng: random.Random) -> tuple[str, list[str]]:
    return _tok("SG.", _r(rng, 22, URLSAFE) + "." + _r(rng, 43, URLSAFE))


def _grafana_sa(rng: random.Random) -> tuple[str, list[str]]:
    return _tok("glsa_", _r(rng, 32) + "_" + _r(rng, 8, HEX))


BARE_FAMILIES: list[BareFamily] = [
    # AI and LLM providers
    BareFamily("openrouter", lambda g: _tok("sk-or-v1-", _r(g, 64, HEX))),
    BareFamily("anthropic_admin", lambda g: _tok("sk-ant-admin01-", _r(g, 93, URLSAFE) + "AA")),
    BareFamily("groq", lambda g: _tok("gsk_", _r(g, g.choice([48, 52])))),
    BareFamily("xai", lambda g: _tok("xai-", _r(g, 80))),
    BareFamily("perplexity", lambda g: _tok("pplx-", _r(g, 48))),
    BareFamily("replicate", lambda g: _tok("r8_", _r(g, 37))),
    BareFamily("deepseek", lambda g: _tok("sk-", _r(g, 32, LOWER_ALNUM)), context="deepseek"),
    BareFamily("mistral", lambda g: _tok("", _r(g, 32)), context="mistral"),
    BareFamily("cohere", lambda g: _tok("", _r(g, 40)), context="cohere"),
    BareFamily("langsmith", lambda g: _tok(g.choice(["lsv2_pt_", "lsv2_sk_"]),
                                           _r(g, 32, HEX) + "_" + _r(g, 10, HEX))),
    BareFamily("huggingface_org", lambda g: _tok("api_org_", _r(g, 34, string.ascii_letters))),
    # developer platforms
    BareFamily("pypi", _pypi),
    BareFamily("dockerhub", lambda g: _tok(g.choice(["dckr_pat_", "dckr_oat_"]),
                                           _r(g, 27, URLSAFE))),
    BareFamily("digitalocean", lambda g: _tok(g.choice(["dop_v1_", "doo_v1_", "dor_v1_"]),
                                              _r(g, 64, HEX))),
    BareFamily("vercel", lambda g: _tok("", _r(g, 24)), context="vercel"),
    BareFamily("netlify", lambda g: _tok("nfp_", _r(g, 36))),
    BareFamily("supabase", lambda g: _tok("sbp_", _r(g, 40, HEX))),
    BareFamily("postman", lambda g: _tok("PMAK-", _r(g, 24, HEX) + "-" + _r(g, 34, HEX))),
    BareFamily("doppler", lambda g: _tok(g.choice(["dp.pt.", "dp.st.", "dp.sa.", "dp.ct."]),
                                         _r(g, 43))),
    BareFamily("vault", lambda g: _tok("hvs.", _r(g, 95, URLSAFE)) if g.random() < 0.5
               else _tok("hvb.", _r(g, 140, URLSAFE))),
    BareFamily("terraform_cloud", _terraform),
    BareFamily("databricks", lambda g: _tok("dapi", _r(g, 32, HEX))),
    BareFamily("shopify", lambda g: _tok(g.choice(["shpat_", "shpca_", "shppa_", "shpss_"]),
                                         _r(g, 32, HEX))),
    BareFamily("linear", lambda g: _tok("lin_api_", _r(g, 40))),
    BareFamily("notion", lambda g: _tok("ntn_", _r(g, 11, string.digits) + _r(g, 35))
               if g.random() < 0.5 else _tok("secret_", _r(g, 43))),
    BareFamily("atlassian", lambda g: _tok("ATATT3", _r(g, 186, URLSAFE))),
    BareFamily("grafana", lambda g: _grafana_sa(g) if g.random() < 0.5
               else _tok("glc_", _r(g, 120, B64))),
    BareFamily("newrelic", lambda g: _tok("NRAK-", _r(g, 27, UPPER_DIGITS))),
    BareFamily("sentry", lambda g: _tok("sntryu_", _r(g, 64, HEX)) if g.random() < 0.5
               else _sentry_org(g)),
    BareFamily("sendgrid", _sendgrid),
    BareFamily("twilio_api_key", lambda g: _tok("SK", _r(g, 32, HEX))),
    BareFamily("twilio_account", lambda g: _tok("AC", _r(g, 32, HEX)), context="twilio"),
    BareFamily("mailgun", lambda g: _tok("key-", _r(g, 32, HEX)), context="mailgun"),
    BareFamily("telegram_bot", lambda g: _tok(f"{g.randrange(10**7, 10**10)}:",
                                              "AA" + _r(g, 33, URLSAFE))),
    BareFamily("discord_bot", _discord),
    BareFamily("age", lambda g: _tok("AGE-SECRET-KEY-1", _r(g, 58, BECH32))),
    BareFamily("cloudflare", lambda g: _tok(g.choice(["cfut_", "cfat_"]),
                                            _r(g, 40) + _r(g, 8, HEX))),
    BareFamily("heroku", lambda g: _tok("HRKU-AA", _r(g, 58, URLSAFE))),
    BareFamily("figma", lambda g: _tok(g.choice(["figd_", "figp_"]), _r(g, 40, URLSAFE))),
    BareFamily("dropbox", lambda g: _tok("sl.", _r(g, 140, URLSAFE))),
    BareFamily("square", lambda g: _tok("sq0atp-", _r(g, 22, URLSAFE)) if g.random() < 0.5
               else _tok("sq0csp-", _r(g, 43, URLSAFE))),
    BareFamily("planetscale", lambda g: _tok(g.choice(["pscale_tkn_", "pscale_pw_"]),
                                             _r(g, 43, URLSAFE))),
    BareFamily("flyio", lambda g: _tok("fo1_", _r(g, 43, URLSAFE)) if g.random() < 0.5
               else _tok("fm2_", _r(g, 120, B64))),
]

# Where a bare token stands. ``{c}`` is the family's context word (empty for prefixed tokens),
# ``{t}`` the token.
PLACEMENTS: dict[str, str] = {
    "prose": "the {c} token {t} was rejected; rotate it and retry",
    "curl_header": "+ curl -sS https://{c}api.example.com/v1/run -H 'X-Custom: {t}'",
    "export": "export UPSTREAM_{c}VALUE={t}",
    "url_query": "GET https://{c}api.example.com/v1/run?q=status&v={t} -> 401",
    "json_value": '{{"provider": "{c}", "value": "{t}", "retries": 3}}',
    "python_repr": "Client(provider='{c}', args=('{t}',), timeout=30)",
    "error_message": "{c} AuthenticationError: invalid key {t} (HTTP 401)",
}


def _s_bare(rng: random.Random, fam: BareFamily, placement: str) -> Secret:
    token, parts = fam.make(rng)
    context = fam.context
    snippet = PLACEMENTS[placement].format(c=context, t=token)
    return Secret(f"bare/{fam.name}/{placement}", snippet, parts)


def _gcp_service_account(rng: random.Random) -> Secret:
    body = base64.b64encode(rng.randbytes(600)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    pem = "\n".join(["-----BEGIN " + "PRIVATE KEY-----", *lines, "-----END " + "PRIVATE KEY-----"])
    doc = {"type": "service_account", "project_id": "acme-prod",
           "private_key_id": _r(rng, 40, HEX), "private_key": pem + "\n",
           "client_email": "ci@acme-prod.iam.gserviceaccount.com"}
    return Secret("bare/gcp_service_account/json_file", json.dumps(doc), lines)


def _azure_sas(rng: random.Random) -> Secret:
    sig = urllib.parse.quote(base64.b64encode(rng.randbytes(32)).decode(), safe="")
    url = (f"https://acme{rng.randrange(99)}.blob.core.windows.net/backups/db.tar?"
           "sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-05-06T06:03:29Z&spr=https&sig=" + sig)
    return Secret("bare/azure_sas/url", f"azcopy: failed to copy {url}: 403", [sig])


BARE_MAKERS: list[Callable[[random.Random], Secret]] = [
    *(lambda g, f=fam, p=place: _s_bare(g, f, p)
      for fam in BARE_FAMILIES for place in PLACEMENTS),
    _gcp_service_account, _azure_sas,
]


FAMILY_MAKERS: list[Callable[[random.Random], Secret]] = [
    _s_npm_auth, _s_docker_auth, _s_curl_user, _s_camel_key, _s_maven, _s_ini, _s_mc_alias,
    _s_aws_configure, _s_cli_option, _s_pem_cut, _s_url_reserved, _s_git_remote, _s_mc_host,
]  # fmt: skip


SECRET_MAKERS: list[Callable[[random.Random], Secret]] = [
    _s_aws, _s_aws_id, _s_aws_session, _s_github, _s_github_pat, _s_gitlab, _s_openai,
    _s_openai_proj, _s_anthropic, _s_google, _s_huggingface, _s_npm, _s_stripe, _s_slack,
    _s_slack_webhook, _s_jwt, _s_pem, _s_url_password, _s_query_token, _s_bearer, _s_basic,
    _s_env_password, _s_json_password, _s_yaml_token, _s_toml_secret, _s_azure,
    *FAMILY_MAKERS,
]  # fmt: skip

# Encodings a one-line secret may travel through in error text.
ENCODINGS: dict[str, Callable[[str], str]] = {
    "plain": lambda s: s,
    "json-escaped": lambda s: json.dumps(json.dumps({"error": s}))[1:-1],
    "repr": lambda s: repr({"detail": s}),
    "url-encoded": lambda s: "next=" + urllib.parse.quote(s, safe=""),
}
URL_SAFE_KINDS = {
    "aws_access_key_id", "github_token", "github_pat", "openai_key", "openai_project_key",
    "anthropic_key", "google_api_key", "huggingface_token", "npm_token", "stripe_key",
    "slack_token", "jwt", "env_password", "json_password", "bearer_header", "basic_header",
    "query_param", "aws_session_token",
}  # fmt: skip


ENCODABLE_FAMILIES = ("basic/curl_user", "keyname/", "cli/", "url/")


def _encode_parts(parts: list[str], enc: str) -> list[str]:
    if enc == "plain":
        return parts
    if enc == "json-escaped":
        return [json.dumps(json.dumps(p))[3:-3] for p in parts]
    if enc == "repr":
        return [repr(p)[1:-1] for p in parts]
    return [urllib.parse.quote(p, safe="") for p in parts]


# --- negatives: look-alikes that are not secrets ---------------------------------------------


def _negatives(rng: random.Random) -> list[str]:
    sha = hashlib.sha1(rng.randbytes(8), usedforsecurity=False).hexdigest()
    digest = hashlib.sha256(rng.randbytes(8)).hexdigest()
    uid = uuid.UUID(int=rng.getrandbits(128), version=4)
    blob = base64.b64encode(rng.randbytes(57)).decode()
    req = "req_011C" + _r(rng, 18)
    n = rng.randrange(100, 9000)
    return [
        f"HEAD is now at {sha[:7]} Merge pull request #{n} from acme/fix",
        f"error: Your local changes would be overwritten by merge ({sha})",
        f"fatal: bad object {sha}",
        f"Downloading sha256:{digest} 100% |██████████| 12.3M",
        f"ERROR: hash mismatch: expected sha256={digest}",
        f"task {uid} failed after {n} ms",
        f"anthropic.RateLimitError: Error code: 429 - request_id: {req}",
        f"< x-request-id: {uuid.UUID(int=rng.getrandbits(128), version=4)}",
        f'"content": "{blob}",',
        f"    data = base64.b64decode('{blob}')",
        "ValueError: password is too short (minimum is 12 characters)",
        "Password must contain at least one digit",
        "Please reset your password at https://example.com/account/reset",
        f"openai.BadRequestError: max_tokens={n} is too large: this model supports at most 4096",
        f'{{"usage": {{"prompt_tokens": {n}, "completion_tokens": 12, "total_tokens": {n + 12}}}}}',
        f"This request used {n} tokens of your 8192 token budget",
        "SyntaxError: Unexpected token '}' in JSON at position 4",
        "jwt.exceptions.InvalidSignatureError: Signature verification failed",
        "the access token has expired; refresh it and retry",
        "KeyError: 'api_key'",
        f"cache miss for key=user:{n}:profile",
        "{'key': 'value', 'retries': 3}",
        f"FileNotFoundError: [Errno 2] No such file or directory: '/home/dev/src/app/cfg_{n}.yaml'",
        "PermissionError: [Errno 13] Permission denied: '/etc/ssl/private'",
        f"contact oncall-{n}@example.com for access",
        "GOOGLE_APPLICATION_CREDENTIALS=/var/run/secrets/gcp/sa.json",
        "PWD=/home/dev/projects/app",
        "Bearer token is missing from the request",
        "401 Unauthorized: Basic authentication is disabled for this endpoint",
        f'WWW-Authenticate: Bearer realm="api", error="invalid_token" id={n}',
        "token_type=bearer expires_in=3600 scope=read",
        "password: ${DB_PASSWORD}",
        "api_key = os.environ['OPENAI_API_KEY']",
        f"git push -u origin feature/{n}",
        f"INFO  worker-{n} heartbeat ok lag=0.{n}s",
        # look-alikes of the issue 10 families
        f"+ git checkout {sha}",
        f"+ docker pull registry.example.com/app@sha256:{digest}",
        f"+ mc cp --version-id {uid} prod/bucket/a.txt .",
        "+ mc alias set prod https://minio.example.com",
        "+ aws configure set region eu-west-1 --profile ci",
        "+ aws configure get aws_secret_access_key --profile ci",
        (f"aws secretsmanager get-secret-value --secret-id "
         f"arn:aws:secretsmanager:eu-west-1:{n:012d}:secret:prod/db-{_r(rng, 6)}"),
        f"+ docker run -u 1000:1000 -p {n}:80 app",
        f"fatal: unable to access 'https://github.com/acme/app-{n}.git/': 403",
        "ssh://git@github.com/acme/app.git",
        '{"auths": {"ghcr.io": {}}, "credsStore": "desktop"}',
        '"auth": "required"',
        "<passwordPolicy>strict</passwordPolicy>",
        "deploy --password-file /run/secrets/db --token-ttl 30",
        "openssl rsa -passin env:KEY_PASS -in key.pem",
        "-----BEGIN CERTIFICATE-----",
        f"signature: provider_error:llm.complete:auth:none:{sha[:8]}",
        f"request_id=req_{_r(rng, 24)}",
        *_bare_lookalikes(rng),
    ]


def _bare_lookalikes(rng: random.Random) -> list[str]:
    """Look-alikes of the bare provider tokens: the scanners' own allowlisted placeholders,
    package and module names that start with a token prefix, version strings, hashes and ids
    next to a provider's name, and prefixes followed by too little."""
    n = rng.randrange(100, 9000)
    md5 = hashlib.md5(rng.randbytes(8), usedforsecurity=False).hexdigest()
    sha = hashlib.sha1(rng.randbytes(8), usedforsecurity=False).hexdigest()
    uid = uuid.UUID(int=rng.getrandbits(128), version=4)
    blob = base64.b64encode(rng.randbytes(45)).decode()
    return [
        "GSK_API_KEY_PLACEHOLDER: gsk_" + "x" * 48,  # gitleaks' own false positive for groq
        "xai: xai-" + "x" * 80,  # gitleaks' own false positive for xAI
        "Collecting pypi-simple==1.6.0 (from -r requirements.txt (line 4))",
        "ERROR: No matching distribution found for xai-sdk>=1.0",
        "pip install pplx-api-client r8_cache sbp_utils",
        f"mistral-large-2411 request {md5} failed with 503",
        f"cohere: rerank job {uid} queued",
        f"vercel deployment dpl_{_r(rng, 24)} is BUILDING",
        f"twilio webhook for call {uid} returned 500",
        f"mailgun: delivery {md5}@mg.example.com deferred",
        f"cache key-{md5} evicted after {n} ms",
        f"DeprecationWarning: node v1.0-beta.{n % 9} is unsupported",
        f"Cloudflare Ray ID: {md5[:16]} - error 1020",
        f"telegram: sendMessage to chat {n}{n}:{n} timed out",
        "ssl.SSLCertVerificationError: certificate verify failed",
        "msg.content is empty; task SKIPPED after disk check",
        f"TASK [deploy : {sha}] ok",
        f"dapi-client {n % 7}.{n % 13}.0 installed",
        f"discord.py {n % 3}.{n % 5}.{n % 9}: gateway closed with 4004",
        f"AGE-SECRET-KEY-1 line missing from identity file keys-{n}.txt",
        f"terraform: workspace ws-{_r(rng, 16)} uses atlasv1 credentials helper",
        f"grafana: dashboard uid {md5[:14]} saved, glc_ scopes: metrics:read",
        f"{{\"value\": \"{blob}\", \"encoding\": \"base64\"}}",
        f"sentry: event {md5} dropped, sample rate 0.{n}",
        f"EAAA{'A' * 8} header in DER blob at offset {n}",
        f"HRKU-AA prefix expected in HEROKU_API_KEY (got {n} characters)",
        f"dp.state.{n}.json written",
        f"hvs.conf reloaded; ntn_{n} queued; lin_api_version=2",
    ]


# --- documents: realistic error text ---------------------------------------------------------


def _traceback(rng: random.Random, snippet: str) -> str:
    mod = rng.choice(["client", "service", "worker", "sync"])
    return (
        "Traceback (most recent call last):\n"
        f'  File "src/app/{mod}.py", line {rng.randrange(10, 900)}, in run\n'
        "    resp = session.request(method, url, **kwargs)\n"
        f"{snippet}"
    )


def _http_body(rng: random.Random, snippet: str) -> str:
    status = rng.choice([400, 401, 403, 429, 500])
    return f"HTTP/1.1 {status}\ncontent-type: application/json\n\n" + json.dumps(
        {"error": {"message": snippet, "type": "invalid_request_error"}}
    )


def _env_dump(rng: random.Random, snippet: str) -> str:
    return (
        f"HOME=/home/dev\nPATH=/usr/local/bin:/usr/bin\nLANG=C.UTF-8\n{snippet}\n"
        f"HOSTNAME=runner-{rng.randrange(1000)}"
    )


def _config(rng: random.Random, snippet: str) -> str:
    return f"# loaded config (attempt {rng.randrange(1, 4)})\nservice:\n  name: api\n{snippet}"


def _curl(rng: random.Random, snippet: str) -> str:
    return f"$ curl -v https://api.example.com/v1/jobs/{rng.randrange(10**6)}\n{snippet}"


def _log(rng: random.Random, snippet: str) -> str:
    ts = f"2025-0{rng.randrange(1, 10)}-1{rng.randrange(10)}T12:{rng.randrange(10, 60)}:00Z"
    return f"{ts} ERROR request failed: {snippet}\n{ts} INFO retrying in 2s"


WRAPPERS = [_traceback, _http_body, _env_dump, _config, _curl, _log]


def build_corpus(rng: random.Random, docs: int) -> list[Doc]:
    out: list[Doc] = []
    bare_index = 0
    for i in range(docs):
        doc = Doc(text="")
        pieces: list[str] = []
        for _ in range(rng.randrange(1, 4)):
            sec = SECRET_MAKERS[(i + len(pieces)) % len(SECRET_MAKERS)](rng)
            enc = "plain"
            encodable = sec.kind in URL_SAFE_KINDS or sec.kind.startswith(ENCODABLE_FAMILIES)
            if "\n" not in sec.text and encodable and rng.random() < 0.35:
                enc = rng.choice(["json-escaped", "repr", "url-encoded"])
            snippet = ENCODINGS[enc](sec.text)
            wrapper = rng.choice(WRAPPERS)
            if sec.kind == "pem/cut_by_limit":
                pieces.append("$ ./deploy.sh\n" + snippet)
            elif wrapper is _http_body and enc == "plain" and "\n" not in snippet:
                pieces.append(wrapper(rng, snippet))
                enc = "json-escaped-once"
            else:
                pieces.append(
                    _log(rng, snippet) if wrapper is _http_body else wrapper(rng, snippet)
                )
            doc.secrets.append((sec, enc))
        for _ in range(rng.randrange(1, 3)):
            sec = BARE_MAKERS[bare_index % len(BARE_MAKERS)](rng)
            bare_index += 1
            enc = "plain"
            if "\n" not in sec.text and rng.random() < 0.35:
                enc = rng.choice(["json-escaped", "repr", "url-encoded"])
            pieces.append(_log(rng, ENCODINGS[enc](sec.text)) if enc != "plain" else sec.text)
            doc.secrets.append((sec, enc))
        negs = rng.sample(_negatives(rng), k=8)
        doc.negatives.extend(negs)
        pieces.extend(negs)
        rng.shuffle(pieces)
        # output cut by a limit ends the captured text: a truncated PEM block comes last
        cut = [piece for piece in pieces if piece.endswith(PEM_CUT_MARK)]
        pieces = [piece for piece in pieces if not piece.endswith(PEM_CUT_MARK)] + cut
        doc.text = "\n".join(pieces)
        out.append(doc)
    return out


def _parts_as_written(sec: Secret, enc: str) -> list[str]:
    if enc == "json-escaped-once":
        return [json.dumps(p)[1:-1] for p in sec.parts]
    return _encode_parts(sec.parts, enc)


# --- the two tools ---------------------------------------------------------------------------


def _detect_secrets(stack: contextlib.ExitStack, *, eager: bool) -> Callable[[str], bool]:
    """detect-secrets over one line, default plugin set and filters.

    ``eager=True`` is the public ``scan_line`` (ad-hoc mode: high-entropy plugins look at every
    word, not only quoted strings). ``eager=False`` runs the same plugins and filters the way a
    file scan (``detect-secrets scan``) does, through the module's private ``_scan_line``.
    """
    from detect_secrets.core import scan
    from detect_secrets.settings import default_settings, get_settings
    from detect_secrets.util.code_snippet import get_code_snippet

    # The default plugin set stays active until the stack closes at the end of the run.
    stack.enter_context(default_settings())
    if eager:
        return lambda line: any(True for _ in scan.scan_line(line))

    get_settings().disable_filters("detect_secrets.filters.common.is_invalid_file")
    scan.get_filters.cache_clear()

    def flagged(line: str) -> bool:
        context = get_code_snippet(lines=[line], line_number=1)
        for plugin in scan.get_plugins():
            for secret in scan._scan_line(
                plugin=plugin,
                filename="adhoc.txt",
                line=line,
                line_number=0,
                enable_eager_search=False,
                context=context,
            ):
                if not scan._is_filtered_out(
                    required_filter_parameters=["context"],
                    filename=secret.filename,
                    secret=secret.secret_value,
                    plugin=plugin,
                    line=line,
                    context=context,
                ):
                    return True
        return False

    return flagged


@dataclass
class Scores:
    found: int = 0
    total: int = 0
    neg_altered: int = 0
    neg_total: int = 0
    by_kind: dict[str, list[int]] = field(default_factory=dict)
    altered: list[str] = field(default_factory=list)

    def add(self, kind: str, ok: bool) -> None:
        self.total += 1
        self.found += ok
        row = self.by_kind.setdefault(kind, [0, 0])
        row[0] += ok
        row[1] += 1


def score_failcode(corpus: list[Doc]) -> Scores:
    sc = Scores()
    for doc in corpus:
        out = redact(doc.text)
        for sec, enc in doc.secrets:
            parts = _parts_as_written(sec, enc)
            sc.add(f"{sec.kind}/{enc}", all(p not in out for p in parts))
        for neg in doc.negatives:
            sc.neg_total += 1
            sc.neg_altered += neg not in out
            if neg not in out and len(sc.altered) < 10:
                sc.altered.append(neg)
    return sc


def _locator_line(doc: Doc, sec: Secret, enc: str) -> str | None:
    needle = _parts_as_written(sec, enc)[0]
    if sec.kind == "pem_private_key":
        needle = f"BEGIN {PEM_LABEL}"
    return next((ln for ln in doc.text.split("\n") if needle in ln), None)


def score_detect_secrets(corpus: list[Doc], flagged: Callable[[str], bool]) -> Scores:
    sc = Scores()
    for doc in corpus:
        for sec, enc in doc.secrets:
            line = _locator_line(doc, sec, enc)
            sc.add(f"{sec.kind}/{enc}", line is not None and flagged(line))
        for neg in doc.negatives:
            sc.neg_total += 1
            sc.neg_altered += flagged(neg)
    return sc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=600)
    ap.add_argument("--seed", type=int, default=20250101)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    corpus = build_corpus(rng, args.docs)
    lines = [ln for doc in corpus for ln in doc.text.split("\n")]
    texts = [doc.text for doc in corpus]
    n_secrets = sum(len(d.secrets) for d in corpus)
    n_neg = sum(len(d.negatives) for d in corpus)
    print(
        f"corpus: {len(corpus)} documents, {len(lines)} lines, "
        f"{sum(map(len, texts)) / 1e6:.2f} MB, {n_secrets} secrets "
        f"({len(SECRET_MAKERS)} generators), {n_neg} look-alike negative lines; seed {args.seed}"
    )

    with contextlib.ExitStack() as stack:
        eager = _detect_secrets(stack, eager=True)
        file_mode = _detect_secrets(stack, eager=False)
        _run(args, corpus, lines, texts, {"scan_line": eager, "file-scan mode": file_mode})


def _run(
    args: argparse.Namespace,
    corpus: list[Doc],
    lines: list[str],
    texts: list[str],
    tools: dict[str, Callable[[str], bool]],
) -> None:
    fc = score_failcode(corpus)
    ds = {name: score_detect_secrets(corpus, fn) for name, fn in tools.items()}
    candidates: dict[str, Callable[[], object]] = {
        "failcode per line": lambda: [redact(ln) for ln in lines],
        "failcode per document": lambda: [redact(t) for t in texts],
    }
    for name, fn in tools.items():
        candidates[f"detect-secrets {name}"] = lambda fn=fn: [fn(ln) for ln in lines]
    times = interleaved(candidates, rounds=args.rounds)

    def lps(name: str) -> float:
        return len(lines) / statistics.median(times[name])

    print(f"\nfailcode redact {REDACT_VERSION} vs detect-secrets (default plugins), same run\n")
    print("| tool | recall | negatives altered / flagged | lines/s | failcode speed-up |")
    print("|---|---|---|---|---|")
    rows = [("failcode.redact (per line)", fc, "failcode per line")]
    rows += [(f"detect-secrets {n}", sc, f"detect-secrets {n}") for n, sc in ds.items()]
    for label, sc, key in rows:
        ratio = "" if sc is fc else f"{median_ratio(times, key, 'failcode per line'):.1f}x"
        print(
            f"| {label} | {sc.found / sc.total:.1%} ({sc.found}/{sc.total}) "
            f"| {sc.neg_altered / sc.neg_total:.1%} ({sc.neg_altered}/{sc.neg_total}) "
            f"| {lps(key):,.0f} | {ratio} |"
        )
    print(
        f"| failcode.redact (per document) | same | same | {lps('failcode per document'):,.0f} | |"
    )

    print("\nrecall per secret kind / encoding\n")
    names = list(ds)
    print("| kind / encoding | n | failcode | " + " | ".join(f"ds {n}" for n in names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    for kind in sorted(fc.by_kind):
        f_ok, n = fc.by_kind[kind]
        cells = " | ".join(f"{ds[name].by_kind[kind][0] / n:.0%}" for name in names)
        print(f"| {kind} | {n} | {f_ok / n:.0%} | {cells} |")

    print("\nrecall per family (issue 10), all encodings\n")
    print("| family | n | failcode | " + " | ".join(f"ds {n}" for n in names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    families: dict[str, list[int]] = {}
    ds_families: dict[str, dict[str, int]] = {name: {} for name in names}
    for kind, (f_ok, n) in fc.by_kind.items():
        fam = kind.split("/", 1)[0] if "/" in kind.split("/", 1)[1] else "provider tokens"
        row = families.setdefault(fam, [0, 0])
        row[0] += f_ok
        row[1] += n
        for name in names:
            ds_families[name][fam] = ds_families[name].get(fam, 0) + ds[name].by_kind[kind][0]
    for fam in sorted(families):
        f_ok, n = families[fam]
        cells = " | ".join(f"{ds_families[name][fam] / n:.0%}" for name in names)
        print(f"| {fam} | {n} | {f_ok / n:.1%} | {cells} |")

    _print_bare(fc, ds, names)

    for line in fc.altered:
        print(f"look-alike altered by failcode: {line[:100]!r}")
    missed = [k for k, (ok, n) in fc.by_kind.items() if ok < n]
    more = f" (+{len(missed) - 12} more)" if len(missed) > 12 else ""
    shown = ", ".join(sorted(missed)[:12]) + more
    print(f"\ntargets: recall 100% -> {'met' if not missed else 'MISSED ' + shown}")
    print(
        "look-alikes altered <= 1% -> "
        + ("met" if fc.neg_altered <= 0.01 * fc.neg_total else "MISSED")
    )


def _print_bare(fc: Scores, ds: dict[str, Scores], names: list[str]) -> None:
    """Recall per bare provider family and per placement, every encoding together."""
    print("\nrecall per bare provider family (no key name before the token), all placements\n")
    print("| family | n | failcode | " + " | ".join(f"ds {n}" for n in names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    bare: dict[str, list[int]] = {}
    placed: dict[str, list[int]] = {}
    ds_bare: dict[str, dict[str, int]] = {name: {} for name in names}
    for kind, (f_ok, n) in fc.by_kind.items():
        if not kind.startswith("bare/"):
            continue
        _, fam, place, _enc = kind.split("/", 3)
        for table, key in ((bare, fam), (placed, place)):
            row = table.setdefault(key, [0, 0])
            row[0] += f_ok
            row[1] += n
        for name in names:
            ds_bare[name][fam] = ds_bare[name].get(fam, 0) + ds[name].by_kind[kind][0]
    for fam in sorted(bare):
        f_ok, n = bare[fam]
        cells = " | ".join(f"{ds_bare[name][fam] / n:.0%}" for name in names)
        print(f"| {fam} | {n} | {f_ok / n:.1%} | {cells} |")
    total_ok, total = sum(r[0] for r in bare.values()), sum(r[1] for r in bare.values())
    if total:
        print(f"| all {len(bare)} bare families | {total} | {total_ok / total:.1%} | |")
        print("\n| placement | n | failcode |\n|---|---|---|")
        for place in sorted(placed):
            f_ok, n = placed[place]
            print(f"| {place} | {n} | {f_ok / n:.1%} |")


if __name__ == "__main__":
    main()
