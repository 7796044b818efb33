"""Secret redaction: one pass shared by the signature, the renderers, event payloads and logs.

:func:`redact` replaces the random part of every credential it recognizes with the literal
placeholder ``<secret>``. A recognizable prefix stays (``ghp_<secret>``, ``sk-ant-api03-<secret>``,
``AKIA<secret>``, ``Bearer <secret>``, ``password=<secret>``), so a reader still sees *which* kind
of credential leaked. Rules look at values, not only at key names: a GitHub token is found in
prose, in a URL, in a traceback, in JSON-escaped, repr'd or URL-encoded text.

Contract:

- ``redact(redact(x)) == redact(x)`` for every input.
- It never raises. ``bytes`` are decoded as UTF-8 with ``errors="replace"``; lone surrogates are
  replaced with U+FFFD so the result can always be encoded; NUL and any other code point pass
  through.
- Time is linear in the input: every rule is gated by a cheap substring test, no pattern nests
  quantifiers over overlapping classes, look-around is single-character or fixed-width, there are no
  back-references, and the one multi-line construct (PEM blocks) is found with ``str.find``. All
  gates are searched at once by one prescan whose alternatives start at a few rare characters
  (each gate rewritten as the rest of it from its rarest character plus a fixed-width
  look-behind for the whole gate): text without a gate costs one search that stops at few
  positions, and text with one is scanned once more to list every gate and where it starts, so
  only the rules behind a listed gate run.
- Look-alikes stay: git SHAs, sha256 digests, UUIDs, request ids (``req_…``, ``x-request-id``),
  base64 content, file paths, the words *password* or *token* in prose, token counts
  (``max_tokens=4096``, ``1500 tokens``), and e-mail addresses. E-mail addresses are identity, not
  secrets, and are deliberately **not** redacted.

Bare provider tokens (``r3``): a token with no key name before it, in prose, a command line,
a URL query, a JSON value or a repr, is recognized by its own shape, taken from the public rule
sets of secret scanners (gitleaks' default config, trufflehog's detectors, detect-secrets'
plugins). One table (``_FAMILIES``) holds each family's documented prefixes, body character
class and length bounds: OpenRouter ``sk-or-v1-``, Groq ``gsk_``, xAI ``xai-``, Perplexity
``pplx-``, Replicate ``r8_``, LangSmith ``lsv2_``, Hugging Face ``api_org_``, PyPI ``pypi-AgE``,
Docker Hub ``dckr_pat_``, DigitalOcean ``dop_v1_``, Netlify ``nfp_``, Supabase ``sbp_``, Postman
``PMAK-``, Doppler ``dp.pt.``, Vault ``hvs.``/``hvb.``, Databricks ``dapi``, Shopify ``shpat_``,
Linear ``lin_api_``, Notion ``ntn_``/``secret_``, Atlassian ``ATATT3``, Grafana ``glsa_``/``glc_``,
New Relic ``NRAK-``, Sentry ``sntryu_``/``sntrys_``, SendGrid ``SG.``, Twilio ``SK``, Age
``AGE-SECRET-KEY-1``, Cloudflare ``cfut_``/``v1.0-``, Heroku ``HRKU-AA``, Figma ``figd_``, Dropbox
``sl.``, Square ``sq0atp-``, PlanetScale ``pscale_``, Fly.io ``fo1_``/``fm2_`` and more. The
prefix stays (``gsk_<secret>``); the body is the whole run of its class, its length within the
bounds, and not a placeholder (``gsk_xxxx…``: too few distinct characters). A shape without a
prefix counts only close after its provider's name, as those rule sets require: a Mistral
(32), Cohere (40) or Vercel (24) key that mixes cases, within 40 characters after the name; a
Twilio ``AC`` account id or a Mailgun ``key-`` key only near ``twilio`` or ``mailgun`` (the 40
characters are counted in the redacted text: a secret between counts as its placeholder). Telegram
bot tokens keep their bot id (``123456789:<secret>``), Discord bot tokens their user id part,
Terraform Cloud tokens their ``.atlasv1.`` (both random parts go).

Key-name decisions:

- A bare ``key`` is a secret only as a URL query parameter (``?key=`` is how Gemini sends its API
  key). Elsewhere (``key=value`` in a dict repr, ``KeyError: key='x'``, a sort or cache key) it is
  left alone; qualified names (``api_key``, ``access_key``, ``secret_key``, ``private_key``,
  ``AccountKey``, ``x-api-key``, ``subscription-key`` …) are redacted in every form.
- ``password`` / ``passwd`` / ``passphrase`` values are redacted whatever they look like.
  ``token`` / ``secret`` / ``*_key`` values need at least 6 characters and not all digits
  (``max_token=4096`` stays), and a value that looks like a path stays
  (``GOOGLE_APPLICATION_CREDENTIALS``-style file references are not secrets).
- ``key: value`` without quotes is ambiguous between YAML and prose ("Invalid token: signature
  verification failed"). It is redacted when the key starts its line (YAML), or when the value
  looks random (a digit, a symbol, an inner capital) or is 16+ characters long; a plain word after a
  colon in the middle of a sentence stays.
- Values that are references, not secrets, stay: ``$VAR``, ``${VAR}``, ``{{ var }}``, ``<…>``,
  ``***``, ``None``, ``null``, ``true``, ``false``.
- AWS secret access keys have no prefix; a bare 40-character base64 word is redacted only when the
  text also mentions AWS (``aws``, ``amz``, an ``AKIA``/``ASIA`` id) and the word mixes upper case,
  lower case and a digit or symbol (so a 40-hex git SHA never matches). Under a key name
  (``aws_secret_access_key = …``) it is always redacted.
- An unterminated PEM private key block (a truncated log) is redacted to the end of the text.

:data:`REDACT_VERSION` names this rule set. The signature stores it indirectly (redaction feeds
normalization), so any change to what is redacted must bump it.
"""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from failcode._lazy_re import lazy

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = [
    "PLACEHOLDER",
    "REDACT_VERSION",
    "WINDOW_OVERLAP",
    "find_secrets",
    "redact",
    "redact_cut",
    "redact_slice",
    "redact_tail",
    "redact_tree",
]

REDACT_VERSION = "r7"
"""Version id of the rule set; bump on any change to what is redacted."""

PLACEHOLDER = "<secret>"
"""The literal text that replaces the random part of a secret."""

_PLACEHOLDER_LEN = len(PLACEHOLDER)
_ASCII_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")
_RANDOM_CHAR = lazy(r"[0-9+/=._~!@#%^&*?-]")
_NOT_SECRET_LITERALS = frozenset(
    {"none", "null", "nil", "true", "false", "undefined", "redacted", "[redacted]", "[filtered]"}
)
_REFERENCE_PREFIXES = ("$", "*", "<", "{{", "%(", "os.environ", "process.env", "env(")
_PATH_PREFIXES = ("/", "~/", "./", "../", "file:")
_PASSWORD_WORDS = frozenset({"password", "passwd", "passphrase", "pass", "pwd"})
_MIN_TOKEN_VALUE = 6
_AMBIGUOUS_MIN_LEN = 16
_AWS_SECRET_LEN = 40

# In URL-encoded text these escapes end a value: %20 space, %22 ", %26 &, %27 '. Values are
# matched with "%" in their class and cut here afterwards, which keeps every pattern a single
# character class (an alternation per character is both slower and harder to prove linear).
_PCT_DELIMITER = lazy(r"%2[0267]")


class _Rule(NamedTuple):
    name: str
    gates: tuple[str, ...]
    # Gates are tested against the lower-cased text when True, else against the text itself.
    lower_gate: bool
    pattern: re.Pattern[str]
    check: Callable[[str, re.Match[str]], bool] | None = None
    # When set, the match must not be glued to a preceding letter or digit (see _left_ok).
    left_boundary: bool = True
    # A substring the text must also hold (a second, conjunctive gate).
    need: str = ""
    # How many characters right before the match are a random part too (a token id).
    random_before: int = 0
    # Substrings the text must hold one of (a third gate: words every match holds one of).
    need_any: tuple[str, ...] = ()


def _after_csi(text: str, end: int) -> bool:
    """True when ``text[end]`` is the final letter of a terminal control sequence
    (``ESC [`` parameters letter: ``\x1b[31m``, ``\x1b[0;1m``, ``\x1b[K``)."""
    j = end - 1
    while j >= 0 and end - j <= _CSI_PARAMS and (text[j].isdigit() or text[j] == ";"):
        j -= 1
    return j >= 1 and text[j] == "[" and text[j - 1] == "\x1b"


_CSI_PARAMS: Final = 16
"""The longest parameter list of a control sequence read as a boundary."""


def _left_ok(text: str, i: int) -> bool:
    """True when position ``i`` starts a word, also inside escaped or URL-encoded text.

    ``token%3Dghp_…``, ``\\nsk-…`` and ``\\u0022AIza…`` all put a letter or digit right before the
    secret; those escapes count as a boundary.
    """
    if i == 0:
        return True
    c = text[i - 1]
    if c not in _ASCII_ALNUM:
        return True
    if i >= 3 and text[i - 3] == "%" and text[i - 2] in _HEX and c in _HEX:
        return True
    if i >= 2 and text[i - 2] == "\\" and c in "nrt":
        return True
    if i >= 4 and text[i - 4] == "\\" and text[i - 3] == "x" and text[i - 2] in _HEX and c in _HEX:
        return True
    if c.isalpha() and _after_csi(text, i - 1):  # a terminal's colour: "\x1b[31msk-…"
        return True
    return (
        i >= 6
        and text[i - 6] == "\\"
        and text[i - 5] == "u"
        and all(ch in _HEX for ch in text[i - 4 : i])
    )


def _looks_random(value: str) -> bool:
    """True when ``value`` is unlike a prose word: a digit, a symbol, or an inner capital."""
    if _RANDOM_CHAR.search(value) is not None:
        return True
    rest = value[1:]
    return rest != rest.lower() and value != value.upper()


def _is_path(value: str) -> bool:
    """True for a file reference (``/run/secrets/db``, ``./keys/dev.pem``): a path prefix and no
    segment that looks like base64 (8+ characters mixing upper case, lower case and digits), so
    an AWS secret that happens to start with "/" is still a secret."""
    if not value.startswith(_PATH_PREFIXES) or "+" in value or value.endswith("="):
        return False
    for segment in value.split("/"):
        if (len(segment) >= 8 and any(c.isupper() for c in segment)
                and any(c.islower() for c in segment) and any(c.isdigit() for c in segment)):
            return False
    return True


def _is_reference(value: str) -> bool:
    """True for values that name a secret instead of holding one (``$VAR``, ``None``, ``***``)."""
    return value.lower() in _NOT_SECRET_LITERALS or value.startswith(_REFERENCE_PREFIXES)


def _has_upper_or_digit(_text: str, m: re.Match[str]) -> bool:
    secret = m.group("s")
    return any(ch.isdigit() or ch.isupper() for ch in secret)


def _aws_secret_ok(_text: str, m: re.Match[str]) -> bool:
    secret = m.group("s")
    if all(ch in _HEX for ch in secret):
        return False
    has_upper = any(ch.isupper() for ch in secret)
    has_lower = any(ch.islower() for ch in secret)
    has_other = any(ch.isdigit() or ch in "+/" for ch in secret)
    return has_upper and has_lower and has_other


def _credential_ok(_text: str, m: re.Match[str]) -> bool:
    """A header credential: 8+ characters that look random, or 20+ characters, not a reference."""
    secret = m.group("s")
    if _is_reference(secret):
        return False
    return len(secret) >= 20 or (len(secret) >= 8 and _looks_random(secret))


def _starts_line(text: str, key_end: int) -> bool:
    """True when the key ending at ``key_end`` is the first thing on its line (YAML, env, TOML)."""
    i = key_end
    floor = max(0, key_end - 128)
    while i > floor and (text[i - 1] in _ASCII_ALNUM or text[i - 1] in "_.-"):
        i -= 1
    while i > floor and text[i - 1] in " \t":
        i -= 1
    if i >= 2 and text[i - 2 : i] == "- ":
        i -= 2
        while i > floor and text[i - 1] in " \t":
            i -= 1
    if i == 0 or text[i - 1] in "\n\r":
        return True
    if i >= 6 and text[i - 6 : i] == "export":
        return _starts_line(text, i - 6) if i > 6 else True
    return i >= 2 and text[i - 2] == "\\" and text[i - 1] in "nr"


def _assignment_ok(text: str, a: _Assignment) -> bool:
    """Decide whether a ``<name><sep><value>`` assignment holds a secret (see the module doc)."""
    word, start, tail, _group, v_start, v_end = a
    lword = word.lower()
    if lword in {"pass", "pwd"}:
        # Short words: only as a suffix of a compound (db_pass, DB_PWD, dbPass), never in "compass".
        prev = text[start - 1] if start else ""
        camel = word[0].isupper() and prev.islower()
        if lword == "pass" and prev not in "_-." and not camel:
            return False
        if lword == "pwd" and prev in _ASCII_ALNUM and not camel:
            return False
    secret = text[v_start:v_end]
    if _is_reference(secret):
        return False
    if lword == "pwd" and secret.startswith(_PATH_PREFIXES):
        return False  # PWD=/home/x is the working directory, not a password
    if lword not in _PASSWORD_WORDS:
        if len(secret) < _MIN_TOKEN_VALUE or secret.isdigit():
            return False
        if _is_path(secret):
            return False
    if lword == "auth" and not (_looks_random(secret) or len(secret) >= _AMBIGUOUS_MIN_LEN):
        return False  # "auth": "required" is prose; npm's _auth and Docker's "auth" are base64
    quoted = tail.group("open") is not None or tail.group("close") is not None
    if not quoted and tail.group("sep") in {":", "%3A", "%3a"}:
        if lword == "auth":
            # only YAML (``auth: <base64>`` starting its line); "…:auth:none:…" is a signature
            return _starts_line(text, start + len(word)) and v_start > tail.start("sep") + 1
        return (
            _starts_line(text, start + len(word))
            or _looks_random(secret)
            or len(secret) >= _AMBIGUOUS_MIN_LEN
        )
    return True


def _query_ok(_text: str, m: re.Match[str]) -> bool:
    return not _is_reference(m.group("s"))


def _bearer_ok(text: str, m: re.Match[str]) -> bool:
    """A bearer credential; ``=`` only as base64 padding, so ``bearer expires_in=3600`` stays."""
    return "=" not in m.group("s").rstrip("=") and _credential_ok(text, m)


_NAME_WORDS = lazy(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", re.ASCII)
_NAME_SEGMENTS = lazy(r"[./:\\]")
_SECRET_LAST_WORDS = frozenset({
    "password", "passwd", "passphrase", "pass", "pwd", "secret", "token", "auth",
    "storepass", "keypass", "apikey", "accesskey", "secretkey", "privatekey", "authtoken",
})


def _secret_name(name: str) -> bool:
    """True when a dotted, camelCase, snake_case or kebab-case name names a secret: one of its
    segments ends in a secret word (``aws_secret_access_key``, ``clientSecret``,
    ``//registry.npmjs.org/:_authToken``, ``pypi-token.pypi``); ``secret_id``,
    ``passwordPolicy`` and ``token_type`` do not."""
    for segment in _NAME_SEGMENTS.split(name[:200]):
        words = [w.lower() for w in _NAME_WORDS.findall(segment)]
        if not words:
            continue
        last = words[-1]
        if last in _SECRET_LAST_WORDS:
            return True
        if last == "key" and len(words) > 1 and words[-2] in _KEY_QUALIFIERS:
            return True
    return False


def _value_ok(secret: str, *, password: bool) -> bool:
    """A value under a secret name: not a reference or a path; 6+ characters and not all digits
    unless the name is a password's."""
    if _is_reference(secret) or _is_path(secret):
        return False
    return password or (len(secret) >= _MIN_TOKEN_VALUE and not secret.isdigit())


def _xml_ok(_text: str, m: re.Match[str]) -> bool:
    """``<password>…</password>``: the element names a secret (Maven's settings.xml)."""
    name = m.group("n").rpartition(":")[2]
    if not _secret_name(name):
        return False
    low = name.lower()
    return _value_ok(m.group("s").strip(), password="pass" in low or "pwd" in low)


_OPTION_VALUE_REFS = ("env:", "file:", "fd:", "stdin")


def _option_ok(_text: str, m: re.Match[str]) -> bool:
    """A value after a credentials-shaped option (``--client-secret X``, ``-storepass X``)."""
    secret = m.group("s")
    if secret.startswith("-") or secret.lower().startswith(_OPTION_VALUE_REFS):
        return False
    option = m.group("o").lower()
    password = "pass" in option or "pwd" in option
    if not _value_ok(secret, password=password):
        return False
    return password or _looks_random(secret) or len(secret) >= _AMBIGUOUS_MIN_LEN


def _config_set_ok(_text: str, m: re.Match[str]) -> bool:
    """``aws configure set aws_secret_access_key X``, ``npm config set //host/:_authToken X``."""
    if not _secret_name(m.group("n")):
        return False
    low = m.group("n").lower()
    return _value_ok(m.group("s"), password="pass" in low or "pwd" in low)


def _user_password_ok(_text: str, m: re.Match[str]) -> bool:
    """``-u user:password``; ``-u 1000:1000`` (a uid and gid) is not a credential."""
    secret = m.group("s")
    if secret.startswith("-") or _is_reference(secret):
        return False
    return not (secret.isdigit() and m.group("u").isdigit())


def _positional_ok(_text: str, m: re.Match[str]) -> bool:
    """A secret standing alone in a credentials command (``mc alias set A URL USER SECRET``)."""
    secret = m.group("s")
    return not (_is_reference(secret) or secret.startswith("-"))


def _telegram_ok(text: str, m: re.Match[str]) -> bool:
    """``123456789:AA…``: the bot id is 8 to 10 digits starting a word, or glued to ``bot`` as
    in the API's URLs (``/bot123456789:AA…/getMe``)."""
    colon = m.start("s") - 1
    i = colon
    while i > 0 and colon - i < 11 and text[i - 1].isdigit():
        i -= 1
    return 8 <= colon - i <= 10 and (_left_ok(text, i) or text.endswith("bot", 0, i))


_TERRAFORM_ID_LEN = 14


def _terraform_ok(text: str, m: re.Match[str]) -> bool:
    """A Terraform Cloud token's first part (14 letters and digits) is a whole word."""
    i = m.start() - _TERRAFORM_ID_LEN
    return _left_ok(text, i) and (i == 0 or text[i - 1] not in "_-.")


_DISCORD_ID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _discord_ok(text: str, m: re.Match[str]) -> bool:
    """A Discord bot token's first part is its bot's user id in base64 (23 to 26 characters,
    M, N or O first), a whole word before the first dot."""
    dot = m.start()
    i = dot
    while i > 0 and dot - i < 27 and text[i - 1] in _DISCORD_ID_CHARS:
        i -= 1
    return (23 <= dot - i <= 26 and text[i] in "MNO" and _left_ok(text, i)
            and (i == 0 or text[i - 1] not in "_-."))


_FLAGS = re.ASCII

# A token starts after a character outside [A-Za-z0-9_-], or right after an escape that ends in
# a letter or digit (``\n``, ``\u0022``, ``\x22``, ``%3D``): the regex form of _left_ok, for
# rules whose prefix letters sit inside their own token class.
_WORD_START = (
    r"(?:(?<![A-Za-z0-9_-])|(?<=\\[nrt])|(?<=\\u[0-9A-Fa-f]{4})|(?<=\\x[0-9A-Fa-f]{2})"
    r"|(?<=%[0-9A-Fa-f]{2})"
    # a terminal's colour or cursor sequence right before (``\x1b[31m``; fixed-width looks)
    + "".join(f"|(?<=\x1b\\[[0-9;]{{{n}}}[A-Za-z])" for n in range(_CSI_PARAMS + 1))
    + ")"
)
# What may follow a header credential: the end, white space, a quote, a closing bracket or a
# separator; never "=" or a letter (``Basic AccountKey=<secret>`` is a key name, not base64).
_CREDENTIAL_END = r"(?=[\s\"'`,;)\]}|&\\]|%2[0267Cc]|%3[Dd]|<(?!secret>)|$)"

# Qualifiers that make "<q>_key", "<q>-key" or "<q>key" a secret name; a bare "key" is not one.
_KEY_QUALIFIERS = (
    "api",
    "access",
    "secret",
    "private",
    "account",
    "master",
    "encryption",
    "signing",
    "client",
    "auth",
    "subscription",
    "app",
    "service",
    "shared",
    "sas",
    "storage",
    "webhook",
)
_KEY_PREFIXES = tuple(q + sep for q in _KEY_QUALIFIERS for sep in ("_", "-", ""))
_LONGEST_KEY_PREFIX = max(map(len, _KEY_PREFIXES))
_TAIL_FIRST = frozenset("\\\"' \t=:%")
# Every name is followed by a separator, so "tokens", "tokenizer" or "password_hash" never match.
_ASSIGN_TAIL = lazy(
    # the separator is atomic: ``:=`` never gives back its ``=`` to be read as the value
    r"(?P<close>\\*[\"']|%2[27])?(?:[ \t]|%20)*(?>(?P<sep>=>|:=|=|:|%3[Dd]|%3[Aa]))(?:[ \t]|%20)*"
    r"(?:(?P<open>\"(?P<s1>(?:[^\"\\\r\n\x00]|\\.)+)\"?"
    r"|'(?P<s2>(?:[^'\\\r\n\x00]|\\.)+)'?"
    r"|\\+[\"'](?P<s3>[^\"'\\\r\n\x00]+)"
    r"|%2[27](?P<s4>[^\s\x00&\"'<>\\]+))"
    r"|(?P<s5>[^\s\x00\"'`<>\\]))",
    re.ASCII,
)
# An unquoted value runs over punctuation (``p@ss:w~rd&x``) and ends where the next
# assignment of a query string, connection string or flow mapping starts (``&user=``,
# ``;Database=``, ``, user:``); closing brackets and sentence punctuation at its end stay.
_VALUE_STOP = lazy(
    r"[\s\x00\"'`<>\\]"
    r"|(?:&amp;|[&;,])[ \t]*[A-Za-z_][A-Za-z0-9_.-]{0,64}[ \t]*="
    r"|,[ \t]*[A-Za-z_][A-Za-z0-9_.-]{0,64}:[ \t]",
    re.ASCII,
)
_VALUE_TRAIL = ")]},;.!?"
_VALUE_GROUPS = ("s1", "s2", "s3", "s4", "s5")


class _Assignment(NamedTuple):
    """One ``<name><sep><value>`` candidate: the secret name, where it starts, its tail match,
    the name of the tail group that holds the value, and the value's span."""

    word: str
    start: int
    tail: re.Match[str]
    value_group: str
    value_start: int
    value_end: int


_STEMS = ("pass", "pwd", "secret", "token", "key", "auth")


def _in_arn(low: str, i: int) -> bool:
    """True when position ``i`` is inside an ARN (``arn:aws:secretsmanager:…:secret:name``):
    there ``secret:`` is a resource type, and ARNs are identity."""
    j = low.rfind("arn:", max(0, i - 200), i)
    if j < 0 or (j > 0 and low[j - 1].isalnum()):
        return False
    return not any(c in low[j:i] for c in " \t\n\"'")


def _in_userinfo(low: str, i: int) -> bool:
    """True when position ``i`` is inside a URL's user part (``https://x-access-token:T@host``);
    the ``url_password`` rule owns those, and an assignment would swallow the host."""
    j = low.rfind("://", max(0, i - 130), i)
    if j < 0:
        return False
    between = low[j + 3 : i]
    return not any(c in between for c in "/@?# \t\n\"'")


class _StopFinder:
    """The next value stop at or after a position, remembering the last search: positions only
    grow within one scan, so every character is searched once (a value that runs to the end of
    a 1 MiB text is not searched again for each name inside it)."""

    __slots__ = ("_from", "_stop", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._from = len(text) + 1
        self._stop = len(text)

    def end(self, start: int) -> int:
        """Where an unquoted value starting at ``start`` ends, trailing punctuation dropped."""
        if not self._from <= start <= self._stop:
            m = _VALUE_STOP.search(self._text, start)
            self._from, self._stop = start, (len(self._text) if m is None else m.start())
        end = self._stop
        while end > start + 1 and self._text[end - 1] in _VALUE_TRAIL:
            end -= 1
        return end


def _assignments(text: str, low: str) -> list[_Assignment]:
    """Find secret names in ``low`` (``text`` lower-cased, same offsets) followed by a value."""
    found: list[_Assignment] = []
    n = len(text)
    for stem in _STEMS:
        stops: _StopFinder | None = None
        i = low.find(stem)
        while i >= 0:
            end = i + len(stem)
            if stem == "pass":
                if low.startswith("password", i):
                    end = i + 8
                elif low.startswith("passwd", i):
                    end = i + 6
                elif low.startswith("passphrase", i):
                    end = i + 10
            nxt = i + len(stem)
            # Cheap checks first: a separator or a closing quote must follow the name, and
            # every test that rejects the name runs before the tail is matched. The tail reads
            # the whole value, and a rejected name resumes right after itself: matching first
            # would read the rest of ``key=%22key=%22…`` once per name (quadratic).
            start = i if end < n and text[end] in _TAIL_FIRST else -1
            if start >= 0 and stem == "auth" and i > 0 and low[i - 1].isalnum():
                start = -1  # "oauth", "xauth": only the word auth itself (_auth, "auth", auth=)
            if start >= 0 and stem == "key":
                # a bare ``key`` is not a secret name (its value is read for other names)
                head = low[max(0, i - _LONGEST_KEY_PREFIX) : i]
                prefix = (next(p for p in _KEY_PREFIXES if head.endswith(p))
                          if head.endswith(_KEY_PREFIXES) else None)
                start = -1 if prefix is None else i - len(prefix)
            if start >= 0 and (_in_userinfo(low, i) or _in_arn(low, i)):
                start = -1
            tail = _ASSIGN_TAIL.match(text, end) if start >= 0 else None
            if tail is not None:
                group = tail.lastgroup or "s5"
                if group == "open":
                    group = next(g for g in _VALUE_GROUPS if tail.start(g) >= 0)
                v_start, v_end = tail.start(group), tail.end(group)
                if group == "s5":
                    if stops is None:
                        stops = _StopFinder(text)
                    v_end = stops.end(v_start)
                found.append(_Assignment(text[start:end], start, tail, group, v_start, v_end))
                # Resume after the value, as finditer would; a value cut at the next
                # assignment (``&user=``) resumes there, so that one is read too.
                nxt = max(nxt, v_end)
            i = low.find(stem, nxt)
    return found


def _rule(
    name: str,
    gates: tuple[str, ...],
    pattern: str,
    *,
    lower_gate: bool = False,
    flags: int = 0,
    check: Callable[[str, re.Match[str]], bool] | None = None,
    left_boundary: bool = True,
    need: str = "",
    random_before: int = 0,
    need_any: tuple[str, ...] = (),
) -> _Rule:
    if check is _positional_ok:
        # A value that starts with "-" is the next option, which the check refuses; the
        # pattern refuses it too, so the lazy gap before "-p" grows to the next "-p" instead
        # (``docker login -u me -p -p X``: X).
        pattern = pattern.replace("(?P<s>", "(?P<s>(?!-)", 1)
    return _Rule(name, gates, lower_gate, lazy(pattern, _FLAGS | flags), check,
                 left_boundary, need, random_before, need_any)


_RULES: tuple[_Rule, ...] = (
    _rule(
        "aws_access_key_id",
        ("AKIA", "ASIA", "ABIA", "ACCA"),
        r"(?:AKIA|ASIA|ABIA|ACCA)(?P<s>[A-Z0-9]{16})(?![A-Za-z0-9])",
    ),
    _rule(
        "aws_secret_access_key",
        ("aws", "amz", "akia", "asia"),
        r"(?<![A-Za-z0-9/+=])(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        lower_gate=True,
        check=_aws_secret_ok,
    ),
    _rule(
        "aws_session_token",
        ("IQoJb3JpZ2luX2V", "FQoGZXIvYXdz", "FwoGZXIvYXdz"),
        r"(?:IQoJb3JpZ2luX2V|FQoGZXIvYXdz|FwoGZXIvYXdz)"
        r"(?P<s>[A-Za-z0-9/+=%]{20,})",
    ),
    _rule(
        "github_token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        r"gh[pousr]_(?P<s>[A-Za-z0-9]{30,})",
    ),
    _rule("github_pat", ("github_pat_",), r"github_pat_(?P<s>[A-Za-z0-9_]{22,})"),
    _rule(
        "failcode_key",  # failcode serve's own keys: the id stays, the secret goes
        ("fc_ingest_", "fc_read_", "fc_admin_"),
        r"fc_(?:ingest|read|admin)_[a-z0-9]{12}_(?P<s>[A-Za-z0-9_-]{43})",
    ),
    _rule(
        "gitlab_token",
        ("gl",),
        r"gl(?:pat|dt|rt|ptt|soat|cbt|imt|agent|oas|ft|ffct)-"
        r"(?P<s>[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*)",
    ),
    _rule(
        "anthropic_key",
        ("sk-",),
        r"sk-ant-(?:[a-z]{2,8}[0-9]{2}-)?(?P<s>[A-Za-z0-9_-]{20,})",
    ),
    _rule(
        "openai_key",
        ("sk-",),
        r"sk-(?:proj-|svcacct-|admin-|None-)?(?!ant-|or-v1-)(?P<s>[A-Za-z0-9_-]{20,})",
        check=_has_upper_or_digit,
    ),
    _rule("google_api_key", ("AIza",), r"AIza(?P<s>[0-9A-Za-z_-]{30,})"),
    _rule(
        "google_oauth",
        ("ya29.", "GOCSPX-", "1//0"),
        r"(?:ya29\.|GOCSPX-|1//0)(?P<s>[0-9A-Za-z_-]{20,})",
    ),
    _rule("huggingface_token", ("hf_",), r"hf_(?P<s>[A-Za-z0-9]{30,})"),
    _rule("npm_token", ("npm_",), r"npm_(?P<s>[A-Za-z0-9]{36,})"),
    _rule(
        "stripe_key",
        ("_live_", "_test_", "whsec_"),
        r"(?:(?:sk|rk|pk)_(?:live|test)_|whsec_)(?P<s>[A-Za-z0-9]{16,})",
    ),
    _rule(
        "slack_token",
        ("xox", "xapp-"),
        r"(?:xox[abposre]-|xapp-)(?P<s>[A-Za-z0-9-]{10,})",
    ),
    _rule(
        "slack_webhook",
        ("hooks.slack.com",),
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9/_-]{8,})",
        left_boundary=False,
    ),
    _rule(
        "jwt",
        ("eyJ",),
        # "eyJ" is inside its own token class: only the first "eyJ" of a run may start a match,
        # or a run of "eyJeyJ…" is rescanned from each of them (quadratic).
        _WORD_START
        + r"eyJ(?P<s>[A-Za-z0-9_-]{5,}+\.eyJ[A-Za-z0-9_-]{5,}+\.[A-Za-z0-9_-]*+)",
    ),
    _rule(
        "url_password",
        ("://",),
        # The password runs to the last "@" before the path: a raw "@" or ":" in it stays
        # inside (``https://u:p@ss@host``); percent-escapes are part of it.
        r"://[^\s:/@?#\"'<>\\]{0,128}:(?P<s>[^\s/?#\"'<>\\]{1,256})@",
        left_boundary=False,
    ),
    _rule(
        "query_param",
        ("key", "token", "sig", "secret", "pass", "pwd"),
        r"(?:[?&;]|%3[Ff]|%26|&amp;)"
        r"(?:[A-Za-z0-9.-]*[_-])?(?:key|apikey|token|sig|signature|secret|password|passwd|pwd)="
        r"(?P<s>[^&;\s\x00#\"'<>\\]+)",
        lower_gate=True,
        flags=re.IGNORECASE,
        check=_query_ok,
        left_boundary=False,
        need="=",
    ),
    _rule(
        "authorization_header",
        ("authoriz",),
        r"authorization(?:\\*[\"']|%22)?(?:[ \t]|%20)*(?:[:=]|%3[Aa]|%3[Dd])(?:[ \t]|%20)*"
        r"(?:\\*[\"']|%22)?(?:[ \t]|%20)*"
        r"(?:(?:bearer|basic|token|digest|apikey|api-key|key|bot|sso-key|negotiate|ntlm)"
        r"(?:[ \t]+|%20|\+))?"
        r"(?P<s>[A-Za-z0-9._~+/=:%-]+)",
        lower_gate=True,
        flags=re.IGNORECASE,
        check=_credential_ok,
        left_boundary=False,
    ),
    _rule(
        "bearer_token",
        ("bearer",),
        # not glued to a placeholder: "Bearer AccountKey=<secret>" is already redacted text
        r"bearer(?:[ \t]+|%20|\+)(?P<s>[A-Za-z0-9._~+/=%-]++)" + _CREDENTIAL_END,
        lower_gate=True,
        flags=re.IGNORECASE,
        check=_bearer_ok,
    ),
    _rule(
        "basic_auth",
        ("basic",),
        r"basic(?:[ \t]+|%20|\+)(?P<s>[A-Za-z0-9+/]{8,}+={0,2}+)" + _CREDENTIAL_END,
        lower_gate=True,
        flags=re.IGNORECASE,
        check=_credential_ok,
    ),
    _rule(
        "azure_connection_string",
        ("AccountKey=", "SharedAccess", "SharedSecretValue="),
        r"(?:AccountKey|SharedAccessKey|SharedAccessSignature|SharedSecretValue)="
        r"(?P<s>[^;\"'\s<>\\]+)",
        left_boundary=False,
    ),
    _rule(
        "cli_flag",
        ("pass", "pwd", "token", "secret", "key", "auth"),
        # --password X, --client-secret X, --api-key X, -storepass X, -passin pass:X, --auth u:p
        # (`-(?<![A-Za-z0-9_-]-)` is `(?<![A-Za-z0-9_-])-`: the pattern starts with a literal,
        # so a search jumps from one "-" to the next instead of trying every position)
        r"(?P<o>-(?<![A-Za-z0-9_-]-)-?(?:[a-z0-9]+[-_.])*(?:pass(?:word|wd|phrase|in|out)?|pwd"
        r"|token|secret|(?:api|access|secret|private|client|account|master|storage)[-_]?key"
        r"|auth|(?:src|dest)?(?:store|key)pass))[ \t]+(?:pass:)?[\"']?"
        r"(?P<s>[^\s\"'`<>\\;|]+)",
        lower_gate=True,
        flags=re.IGNORECASE,
        check=_option_ok,
        left_boundary=False,
    ),
    _rule(
        "cli_user_password",
        ("-u", "--user", "--proxy-user"),
        r"(?<![A-Za-z0-9_-])(?:-u[ \t]*|--user[ \t=]+|--proxy-user[ \t=]+|-U[ \t]+)[\"']?"
        r"(?P<u>[^\s:\"'@]{1,128}):(?P<s>[^\s\"'`<>\\;|]+)",
        check=_user_password_ok,
        left_boundary=False,
    ),
    _rule(
        "cli_login_password",
        ("-p",),
        # docker/podman/helm/oras/az login -p X, sshpass -p X, twine upload -p X
        r"(?<![A-Za-z0-9_.-])(?:(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|crane|az)"
        r"(?:[ \t]+(?:registry|acr))?[ \t]+login|sshpass|twine[ \t]+upload)\b[^\n|;&]{0,512}?"
        r"[ \t]-p[ \t]*[\"']?(?P<s>[^\s\"'`<>\\;|]+)",
        check=_positional_ok,
        left_boundary=False,
        need_any=("login", "sshpass", "upload"),
    ),
    _rule(
        "cli_mysql_password",
        ("-p",),
        r"(?<![A-Za-z0-9_.-])(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]{0,512}?"
        r"[ \t]-p[\"']?(?P<s>[^\s\"'`<>\\;|]+)",
        check=_positional_ok,
        left_boundary=False,
        need_any=("mysql", "mariadb"),
    ),
    _rule(
        "cli_credentials_command",
        ("alias set", "host add", "admin user add"),
        # mc alias set NAME URL ACCESS SECRET, mc config host add (same), mc admin user add A U S
        r"(?<![A-Za-z0-9_.-])mc(?:\.exe)?[ \t]+"
        r"(?:(?:alias[ \t]+set|config[ \t]+host[ \t]+add)(?:[ \t]+--(?:api|path)[ \t]+[^\s;|&<>]+)*"
        r"[ \t]+[^\s;|&<>]+|admin[ \t]+user[ \t]+add)"
        r"[ \t]+[^\s;|&<>]+[ \t]+[\"']?[^\s\"';|&<>]+[\"']?[ \t]+[\"']?"
        r"(?P<s>[^\s\"'`<>\\;|]+)",
        check=_positional_ok,
        left_boundary=False,
    ),
    _rule(
        "cli_config_set",
        # the name must name a secret, so it holds one of the assignment stems
        ("pass", "pwd", "token", "secret", "key", "auth"),
        # aws configure set aws_secret_access_key X, npm/yarn/pnpm config set NAME X,
        # git config [--global] NAME X, poetry config pypi-token.NAME X
        r"(?<![A-Za-z0-9_-])config(?:ure)?[ \t]+"
        r"(?:(?:set|--global|--local|--system|--user|--project|-g)[ \t]+)*"
        r"(?P<n>[^\s=\"'`;|&<>]{1,200})[ \t]+[\"']?(?P<s>[^\s\"'`<>\\;|]+)",
        lower_gate=True,
        flags=re.IGNORECASE,
        check=_config_set_ok,
        need="onfig",
        left_boundary=False,
    ),
    _rule(
        "cli_http_basic",
        ("http-basic.",),
        # poetry config http-basic.NAME USER PASSWORD
        r"config[ \t]+http-basic\.[^\s]{1,200}[ \t]+[^\s]{1,200}[ \t]+[\"']?"
        r"(?P<s>[^\s\"'`<>\\;|]+)",
        check=_positional_ok,
        left_boundary=False,
    ),
    _rule(
        "xml_element",
        # the element must name a secret, so it holds one of the assignment stems
        ("pass", "pwd", "token", "secret", "key", "auth"),
        # <password>…</password> (Maven settings.xml), <ns:secretKey>…</ns:secretKey>
        # closed by its own name: a placeholder's ``<secret>`` opens no element
        r"<(?P<n>[A-Za-z_][A-Za-z0-9_.:-]{0,64})>(?P<s>[^<\r\n]{1,4096})</(?P=n)>",
        lower_gate=True,
        check=_xml_ok,
        need="</",
        left_boundary=False,
    ),
)

# Token shapes without a literal prefix: each is found from its fixed inner punctuation (a
# literal first op, so a search skips every other position) and checked backwards. The public
# part before the punctuation (a bot's id, a token's id) stays.
_RULES += (
    # detect-secrets TelegramBotTokenDetector, gitleaks telegram-bot-api-token: 8-10 digits,
    # ":", 35 of [A-Za-z0-9_-] starting with "A"
    _rule(
        "telegram_bot_token",
        (":A",),
        r":(?<=[0-9]{8}:)(?P<s>A[A-Za-z0-9_-]{34})(?![A-Za-z0-9_-])",
        check=_telegram_ok,
        left_boundary=False,
    ),
    # detect-secrets DiscordBotTokenDetector, trufflehog discordbottoken: 24.6.27 of
    # [A-Za-z0-9_-], the first part a base64 user id (17 to 19 digits: 23 to 26 characters)
    _rule(
        "discord_bot_token",
        (".",),
        r"\.(?P<s>[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27})(?![A-Za-z0-9_.-])",
        check=_discord_ok,
        left_boundary=False,
    ),
    # gitleaks hashicorp-tf-api-token: 14 of [a-z0-9], ".atlasv1.", 60-70 of [a-z0-9_=-];
    # both random parts go, ".atlasv1." stays to say what it was
    _rule(
        "terraform_cloud_token",
        (".atlasv1.",),
        r"\.atlasv1\.(?<=[A-Za-z0-9]{14}\.atlasv1\.)(?P<s>[A-Za-z0-9_=-]{60,100}+)"
        r"(?![A-Za-z0-9_=-])",
        check=_terraform_ok,
        left_boundary=False,
        random_before=_TERRAFORM_ID_LEN,
    ),
)


class _Family(NamedTuple):
    """A credential recognized by its own shape: a documented prefix, kept before the
    placeholder, and a random body of one character class and a bounded length.

    A family with ``context`` words counts only when one of them (lower case) ends at most
    :data:`_CONTEXT_WINDOW` characters before the token, as the scanners' rule sets require for
    shapes that are not distinctive alone. A family without prefixes is such a shape: a whole
    word of the body's class and length, close after a context word, that looks random.
    """

    name: str
    prefixes: tuple[str, ...]
    body: str
    """A regex character class body, e.g. ``"A-Za-z0-9_-"``."""
    min_len: int
    max_len: int
    context: tuple[str, ...] = ()


_CONTEXT_WINDOW = 40
"""How far before a token its context word may end (trufflehog's keyword distance)."""

_AN = "A-Za-z0-9"
_URLSAFE = "A-Za-z0-9_-"
_B64 = "A-Za-z0-9+/="

# Formats from the public rule sets of secret scanners: gitleaks' default config (rule ids),
# trufflehog's detectors and detect-secrets' plugins (names). Lengths widen where two sources
# disagree; a body is the documented class, widened to both cases where a source is unsure.
_FAMILIES: tuple[_Family, ...] = (
    # AI and LLM providers
    _Family("openrouter", ("sk-or-v1-",), _AN, 40, 128),  # trufflehog openrouter: 64 hex
    _Family("groq", ("gsk_",), _AN, 40, 64),  # gitleaks groq-api-key: 48
    _Family("xai", ("xai-",), _AN, 70, 96),  # gitleaks xai-api-key: 80
    _Family("perplexity", ("pplx-",), _AN, 40, 64),  # gitleaks perplexity-api-key: 48
    _Family("replicate", ("r8_",), _URLSAFE, 37, 48),  # trufflehog replicate: 37
    _Family("langsmith", ("lsv2_pt_", "lsv2_sk_"), _AN + "_", 43, 48),  # gitleaks: 32 _ 10
    _Family("huggingface_org", ("api_org_",), "A-Za-z", 34, 40),  # gitleaks: 34 letters
    _Family("mistral", (), _AN, 32, 32, ("mistral",)),  # trufflehog mistral: 32, keyword
    _Family("cohere", (), _AN, 40, 40, ("cohere", "co_api_key")),  # gitleaks cohere-api-token
    # developer platforms
    _Family("pypi", ("pypi-AgE",), _URLSAFE, 50, 4000),  # gitleaks pypi-upload-token
    _Family("dockerhub", ("dckr_pat_", "dckr_oat_"), _URLSAFE, 27, 40),  # trufflehog: 27-32
    _Family("digitalocean", ("dop_v1_", "doo_v1_", "dor_v1_"), "a-fA-F0-9", 64, 64),  # gitleaks
    _Family("netlify", ("nfp_",), _AN + "_", 36, 48),  # trufflehog netlify v2: 36
    _Family("vercel", (), _AN, 24, 24, ("vercel",)),  # trufflehog vercel: 24, keyword
    _Family("supabase", ("sbp_",), _AN, 40, 48),  # trufflehog supabasetoken: 40
    _Family("postman", ("PMAK-",), "a-fA-F0-9-", 59, 64),  # gitleaks postman-api-token: 24-34
    _Family("doppler", ("dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim.", "dp.audit."),
            _AN + "_.-", 40, 128),  # gitleaks doppler-api-token (dp.pt. 43); Doppler's formats
    _Family("vault", ("hvs.", "hvb.", "hvr."), _URLSAFE, 24, 400),  # gitleaks, detect-secrets
    _Family("databricks", ("dapi",), "a-fA-F0-9", 32, 32),  # gitleaks databricks-api-token
    _Family("shopify", ("shpat_", "shpca_", "shppa_", "shpss_"), "a-fA-F0-9", 32, 32),
    _Family("linear", ("lin_api_",), _AN, 40, 48),  # gitleaks linear-api-key
    _Family("notion", ("ntn_",), _AN, 46, 50),  # gitleaks notion-api-token: 11 digits, 35
    _Family("notion_legacy", ("secret_",), _AN, 43, 43),  # Notion's integration secrets
    _Family("atlassian", ("ATATT3",), "A-Za-z0-9_=-", 150, 300),  # gitleaks: 186
    _Family("grafana_service_account", ("glsa_",), _AN + "_", 41, 41),  # gitleaks: 32 _ 8
    _Family("grafana_cloud", ("glc_",), _B64, 32, 400),  # gitleaks grafana-cloud-api-token
    _Family("grafana_api_key", ("eyJrIjoi",), _AN + "=", 70, 400),  # gitleaks grafana-api-key
    _Family("newrelic", ("NRAK-", "NRII-", "NRJS-"), _URLSAFE, 19, 40),  # gitleaks new-relic-*
    _Family("sentry_user", ("sntryu_",), "a-fA-F0-9", 64, 64),  # gitleaks sentry-user-token
    _Family("sentry_org", ("sntrys_",), _B64 + "_", 60, 600),  # gitleaks sentry-org-token
    _Family("sendgrid", ("SG.",), "A-Za-z0-9_.=-", 66, 70),  # gitleaks, detect-secrets: 22.43
    _Family("twilio_api_key", ("SK",), "0-9a-fA-F", 32, 32),  # gitleaks twilio-api-key
    _Family("twilio_account", ("AC",), "0-9a-f", 32, 32, ("twilio",)),  # detect-secrets Twilio
    _Family("mailgun", ("key-", "pubkey-"), "0-9a-f", 32, 32, ("mailgun",)),  # gitleaks mailgun
    _Family("mailgun_signing", (), "0-9a-f-", 50, 50, ("mailgun",)),  # gitleaks: 32-8-8
    _Family("age", ("AGE-SECRET-KEY-1",), "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58, 58),  # gitleaks
    _Family("cloudflare", ("cfut_", "cfat_"), _AN, 48, 48),  # trufflehog cloudflareapitoken v2
    _Family("cloudflare_origin_ca", ("v1.0-",), "a-f0-9-", 171, 171),  # gitleaks: 24-146 hex
    _Family("cloudflare_api_token", (), _URLSAFE, 40, 40, ("cloudflare",)),  # gitleaks
    _Family("heroku", ("HRKU-AA",), _URLSAFE, 58, 64),  # gitleaks heroku-api-key-v2
    _Family("figma", ("figd_", "figp_"), "A-Za-z0-9_=-", 40, 60),  # trufflehog figma v2, v3
    _Family("dropbox", ("sl.",), "A-Za-z0-9_=.-", 130, 2000),  # gitleaks dropbox short-lived
    _Family("square", ("sq0atp-", "sq0csp-"), _URLSAFE, 22, 64),  # gitleaks square-access-token
    _Family("planetscale", ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"), "A-Za-z0-9_=.-",
            32, 64),  # gitleaks planetscale-*
    _Family("flyio", ("fo1_",), _URLSAFE, 43, 43),  # gitleaks flyio-access-token
    _Family("flyio_macaroon", ("fm1a_", "fm1r_", "fm2_"), _B64, 100, 4000),  # gitleaks
)

# Prefix-less shapes and these look random only when they mix: upper and lower case, and a
# digit or two capitals in a row (so CamelCase words and hex ids stay).
_NEEDS_RANDOM = frozenset({"mistral", "cohere", "vercel", "cloudflare_api_token", "notion_legacy"})
_TWO_CAPITALS = lazy(r"[A-Z]{2}")


# The run of body characters from a position; a family's body is the whole run, its length
# within the family's bounds.
_BODY_RUN = {family.body: lazy(f"[{family.body}]*+", _FLAGS) for family in _FAMILIES}
_FAMILY_BY_PREFIX = {prefix: family for family in _FAMILIES for prefix in family.prefixes}
_CONTEXT_FAMILIES = tuple(family for family in _FAMILIES if family.context)
_CONTEXT_WORDS = tuple(sorted({word for family in _CONTEXT_FAMILIES for word in family.context}))
_WORDLESS_FAMILIES = tuple(family for family in _CONTEXT_FAMILIES if not family.prefixes)
_PREFIXED_CONTEXT_FAMILIES = tuple(family for family in _CONTEXT_FAMILIES if family.prefixes)
_PREFIXED_CONTEXT_WORDS = frozenset(
    word for family in _PREFIXED_CONTEXT_FAMILIES for word in family.context)
_WORDLESS_PATTERN = {
    family.name: lazy(
        _WORD_START + f"[{family.body}]{{{family.min_len},{family.max_len}}}+"
        r"(?![A-Za-z0-9_-])", _FLAGS)
    for family in _WORDLESS_FAMILIES
}


def _looks_like_token(family: _Family, body: str) -> bool:
    """Reject placeholders (``gsk_xxxx…``) and, for prefix-less shapes, plain words."""
    if len(set(body)) < min(8, len(body) // 3):
        return False
    if family.name not in _NEEDS_RANDOM:
        return True
    if family.body == "0-9a-f-":
        return any(c.isdigit() for c in body) and any(c.isalpha() for c in body)
    has_lower = any(c.islower() for c in body)
    has_upper = any(c.isupper() for c in body)
    return has_lower and has_upper and (
        any(c.isdigit() for c in body) or _TWO_CAPITALS.search(body) is not None)


def _prefix_positions(text: str, found: dict[str, list[int]]) -> list[tuple[str, int]]:
    """Each family prefix in ``text`` and where it starts, in text order: from the gate scan,
    and for a family gated by context words (found), by a search for its prefixes."""
    out = [(prefix, at) for gate, starts in found.items()
           for prefix in _PREFIXES_BY_GATE.get(gate, ()) for at in starts]
    if not _PREFIXED_CONTEXT_WORDS.isdisjoint(found):
        for family in _PREFIXED_CONTEXT_FAMILIES:
            if any(word in found for word in family.context):
                for prefix in family.prefixes:
                    at = text.find(prefix)
                    while at >= 0:
                        out.append((prefix, at))
                        at = text.find(prefix, at + 1)
    out.sort(key=lambda found_at: found_at[1])
    return out


_DISTINCT = 8
"""The distinct characters a body of ``3 * _DISTINCT`` or more characters needs (see
:func:`_looks_like_token`)."""
_MAX_LEN_BY_BODY = {body: max(f.max_len for f in _FAMILIES if f.body == body)
                    for body in {f.body for f in _FAMILIES}}


def _rich_until(text: str, floor: int, stop: int) -> int:
    """The last position ``p >= floor`` from which ``text[p:stop]`` holds :data:`_DISTINCT`
    distinct characters (``floor - 1`` when none does)."""
    seen: set[str] = set()
    for p in range(stop - 1, floor - 1, -1):
        seen.add(text[p])
        if len(seen) >= _DISTINCT:
            return p
    return floor - 1


def _family_spans(text: str, found: dict[str, list[int]], out: list[tuple[int, int, str]],
                  candidates: list[_Candidate]) -> None:
    """Bodies of the prefix families whose prefixes the gate scan found; those of a family
    gated by context words go to ``candidates`` (see :func:`_context_spans`).

    A run of body characters is measured once: a prefix inside a run already measured for the
    same class shares its end (``pypi-AgEpypi-AgE…`` costs one pass, not one per prefix), and
    the placeholder test (:func:`_looks_like_token`) of its long bodies is answered for all
    of them by one backward scan: each later body is a suffix of an earlier one (``sl.sl.…``
    would otherwise read up to ``max_len`` characters per prefix).
    """
    # body class -> [run start, run end, run end without full stops, _rich_until or None]
    runs: dict[str, list[Any]] = {}
    for prefix, at in _prefix_positions(text, found):
        family = _FAMILY_BY_PREFIX[prefix]
        if not text.startswith(prefix, at) or not _left_ok(text, at):
            continue
        start = at + len(prefix)
        last = runs.get(family.body)
        if last is None or not last[0] <= start <= last[1]:
            run = _BODY_RUN[family.body].match(text, start)
            end = start if run is None else run.end()
            stop = end
            while stop > start and text[stop - 1] == ".":
                stop -= 1  # a sentence's full stop, not the token's
            last = runs[family.body] = [start, end, stop, None]
        if not family.min_len <= last[1] - start <= family.max_len:
            continue
        end = max(last[2], start)
        if end - start >= 3 * _DISTINCT and family.name not in _NEEDS_RANDOM:
            if last[3] is None:
                floor = max(last[0], last[1] - _MAX_LEN_BY_BODY[family.body])
                last[3] = _rich_until(text, floor, last[2])
            if start > last[3]:
                continue  # too few distinct characters: a placeholder (gsk_xxxx…)
        elif not _looks_like_token(family, text[start:end]):
            continue
        if family.context:
            candidates.append(_Candidate(at, start, end, family))
            continue
        out.append((start, end, family.name))


def _wordless_candidates(text: str, found: dict[str, list[int]],
                         candidates: list[_Candidate]) -> None:
    """Every prefix-less shape after the first of its family's context words the gate scan
    found (one search per family; :func:`_context_spans` decides which are close enough)."""
    for family in _WORDLESS_FAMILIES:
        starts = [found[word][0] for word in family.context if word in found]
        if not starts:
            continue
        candidates.extend(
            _Candidate(m.start(), m.start(), m.end(), family)
            for m in _WORDLESS_PATTERN[family.name].finditer(text, min(starts))
            if _looks_like_token(family, m.group()))


class _Candidate(NamedTuple):
    """A token of a family gated by context words, before its window is measured."""

    anchor: int
    """Where the window ends: the prefix's start, or the token's for a prefix-less shape."""
    start: int
    end: int
    family: _Family


def _context_spans(found: dict[str, list[int]], base: list[tuple[int, int, str]],
                   candidates: list[_Candidate], out: list[tuple[int, int, str]]) -> None:
    """The candidates whose family's context word ends at most :data:`_CONTEXT_WINDOW`
    characters before them, measured in the redacted text.

    Redaction shortens the text between a word and a token (each secret becomes the
    placeholder), so a token out of reach in the raw text can be in reach in the redacted one
    (``mailgun key-K1 … key-K2``); measured there, a second redaction finds nothing the first
    left. One sweep in text order: the union of the other rules' spans (``base``) and the tokens
    taken so far is kept as closed runs with the length each removes, and a candidate's distance
    is its raw distance to the latest word before it, less what the runs between them remove.
    Cost: ``O(n log n)`` in the spans and candidates.
    """
    candidates.sort()
    ends_of: dict[str, list[int]] = {}
    for family in {c.family for c in candidates}:
        ends_of[family.name] = sorted(
            at + len(word) for word in family.context for at in found.get(word, ()))
    runs = sorted((start, end) for start, end, _ in base)
    closed_ends: list[int] = []
    closed_removed: list[int] = []  # what the runs up to each closed end remove, in all
    removed = 0
    run_start = run_end = -1
    fed = 0

    def add(start: int, end: int) -> None:
        nonlocal run_start, run_end
        if run_end >= 0 and start < run_end:
            run_start, run_end = min(run_start, start), max(run_end, end)
        else:
            close()
            run_start, run_end = start, end

    def close() -> None:
        nonlocal removed, run_start, run_end
        if run_end >= 0:
            removed += run_end - run_start - _PLACEHOLDER_LEN
            closed_ends.append(run_end)
            closed_removed.append(removed)
        run_start = run_end = -1

    for candidate in candidates:
        while fed < len(runs) and runs[fed][0] <= candidate.start:
            add(*runs[fed])
            fed += 1
        if 0 <= run_end <= candidate.anchor:
            close()
        ends = ends_of[candidate.family.name]
        k = bisect.bisect_right(ends, candidate.anchor) - 1
        if k < 0:
            continue
        word_end = ends[k]
        j = bisect.bisect_right(closed_ends, word_end) - 1
        between = removed - (closed_removed[j] if j >= 0 else 0)
        if candidate.anchor - word_end - between <= _CONTEXT_WINDOW:
            out.append((candidate.start, candidate.end, candidate.family.name))
            add(candidate.start, candidate.end)


_PEM_BEGIN = lazy(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----", _FLAGS)
_PEM_END = "-----END"


_PEM_END_LINE = lazy(r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----", _FLAGS)
# What a PEM body is made of: base64 lines, their breaks (also JSON-escaped), header lines.
_PEM_BODY_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\r\n\t \\"


def _pem_spans(text: str, out: list[tuple[int, int, str]]) -> None:
    """PEM private key bodies; the BEGIN/END lines stay, an unterminated body runs to the end.

    A body ends at the next ``-----END`` or at the next BEGIN header, whichever comes first, so
    spans never overlap and many headers cost linear time. An END line whose BEGIN was cut off
    (the tail of a long output) takes the base64 lines right before it.
    """
    headers = list(_PEM_BEGIN.finditer(text))
    end_cache = -1
    covered = 0
    for k, m in enumerate(headers):
        body = m.end()
        if end_cache < body:
            end_cache = text.find(_PEM_END, body)
            if end_cache < 0:
                end_cache = len(text)
        stop = end_cache
        if k + 1 < len(headers):
            stop = min(stop, headers[k + 1].start())
        if stop > body:
            out.append((body, stop, "pem_private_key"))
    if "-----END" not in text:
        return
    k = 0
    for m in _PEM_END_LINE.finditer(text):
        # the nearest BEGIN before this END, if any, already owns the body
        while k < len(headers) and headers[k].start() < m.start():
            covered = max(covered, headers[k].end())
            k += 1
        floor = covered
        run = text[floor : m.start()]
        body = m.start() - (len(run) - len(run.rstrip(_PEM_BODY_CHARS)))
        # a run reaching back to a BEGIN header is that header's body, already found
        owned = floor > 0 and body == floor
        if not owned and body < m.start() and text[body : m.start()].strip(" \r\n\t\\"):
            out.append((body, m.start(), "pem_private_key"))
        covered = m.end()


def _decode(text: object) -> str:
    if isinstance(text, str):
        if text.isascii():
            return text
        # Lone surrogates cannot be encoded later (logging, JSON); make them U+FFFD now.
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(text, bytes | bytearray | memoryview):
        return bytes(text).decode("utf-8", "replace")
    return _decode(str(text))


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Drop placeholders at the start of a span, so redacted text is never redacted again."""
    while text.startswith(PLACEHOLDER, start) and start < end:
        start += _PLACEHOLDER_LEN
    return start, end


# Each gate, lower-cased, and the rules it opens: a rule runs only when the gate scan finds one
# of its gates (a case-sensitive gate is found in any case; its rule's own pattern decides).
_RULES_BY_GATE: dict[str, tuple[int, ...]] = {}
for _idx, _gated_rule in enumerate(_RULES):
    for _gate in _gated_rule.gates:
        _key = _gate if _gated_rule.lower_gate else _gate.lower()
        _RULES_BY_GATE[_key] = (*_RULES_BY_GATE.get(_key, ()), _idx)
_PREFIXES_BY_GATE: dict[str, tuple[str, ...]] = {}
for _prefix in _FAMILY_BY_PREFIX:
    _PREFIXES_BY_GATE[_prefix.lower()] = (*_PREFIXES_BY_GATE.get(_prefix.lower(), ()), _prefix)
_PEM_GATE = "private key"
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _cut_escaped_delimiter(text: str, start: int, end: int) -> int:
    """End a span at the first URL-encoded space, quote or ampersand inside it."""
    if text.find("%", start, end) < 0:
        return end
    m = _PCT_DELIMITER.search(text, start, end)
    return end if m is None else m.start()


def _trie_pattern(words: dict[str, str]) -> str:
    """One regex matching any of ``words``, factored as a trie: sre fails fast at each position
    of a trie, where a flat alternation of 50 literals tries every one.

    ``words`` maps each word to a regex tail that must follow it (``""`` for none); a word
    listed both with and without a tail needs none.
    """
    trie: dict[str, Any] = {}
    for word, tail in words.items():
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = "" if node.get("", tail) == "" else tail

    def build(node: dict[str, Any]) -> str:
        branches = [re.escape(char) + build(node[char]) for char in sorted(node) if char]
        end = node.get("")
        if end:
            branches.append(f"(?:{end})")
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if end == "" else body

    return build(trie)


# Gates too common in lower-cased text to be a gate alone ("." and ":a" are everywhere) get the
# rest of their shape as a tail in the prescan.
_GATE_TAILS = {
    ":a": "[a-z0-9_-]{34}",  # telegram_bot_token
    ".": r"[a-z0-9_-]{6}\.[a-z0-9_-]{27}",  # discord_bot_token
}


def _family_gates() -> dict[str, str]:
    """Each family's gates: its context words, else its prefixes lower-cased, each with its
    body's shortest run as a tail (a gate says as much as the prefix can)."""
    gates: dict[str, str] = {}
    for family in _FAMILIES:
        if family.context:
            # its words gate it; its prefixes are looked up once a word is there
            gates.update(dict.fromkeys(family.context, ""))
            continue
        tail = f"[{family.body.lower()}]{{{family.min_len}}}"
        gates.update(dict.fromkeys((prefix.lower() for prefix in family.prefixes), tail))
    return gates


# Characters from the most to the least common in lower-cased error text, log lines and agent
# transcripts (counted on Loghub-2k, agent session logs and generated error messages); any
# other character is rarer than all of these.
_COMMON_CHARS = (
    " etrnoais1d0cl2p.m:u3f\"5467-9hb/8_g'wy,k\\v[]()x=qj{}^z`#>|*<@;&$~+%!?"
)


def _rarity(char: str) -> tuple[int, str]:
    rank = _COMMON_CHARS.find(char)
    return (len(_COMMON_CHARS) if rank < 0 else rank, char)


def _anchor_chars(words: Iterable[str]) -> frozenset[str]:
    """Characters every word holds one of: rarest first until all are covered, then without
    the common ones that turned out not to be needed."""
    anchors: set[str] = set()
    words = set(words)
    uncovered = set(words)
    for char in sorted({c for word in uncovered for c in word}, key=_rarity, reverse=True):
        if any(char in word for word in uncovered):
            anchors.add(char)
            uncovered = {word for word in uncovered if char not in word}
    # then drop the commonest anchors every word can do without: each one dropped is one
    # character fewer where the search stops
    for char in sorted(anchors, key=_rarity):
        rest = anchors - {char}
        if all(any(c in rest for c in word) for word in words):
            anchors = rest
    return frozenset(anchors)


def _anchor_at(word: str, anchors: frozenset[str]) -> int:
    """Where ``word`` is anchored: its rarest anchor character; on a tie, one with a literal
    after it (which fails faster), else the later one."""
    return min((i for i, c in enumerate(word) if c in anchors),
               key=lambda i: (-_rarity(word[i])[0], i == len(word) - 1, -i))


def _anchored(gates: dict[str, str]) -> dict[str, str]:
    """The gates rewritten to start at a rare character: ``gsk_`` becomes ``k_`` followed by
    the look-behind ``(?<=gsk_)``, so a search matches exactly where a gate occurs (ending
    where it ends), but sre only tries the positions holding one of a few rare characters."""
    anchors = _anchor_chars(gates)
    out: dict[str, str] = {}
    for gate, tail in gates.items():
        k = _anchor_at(gate, anchors)
        word, rest = (gate, tail) if k == 0 else (gate[k:], f"(?<={re.escape(gate)})" + tail)
        if word in out and out[word] != rest:
            # two gates behind one anchor word: either follows it
            rest = f"(?:{out[word]})|(?:{rest})" if out[word] and rest else ""
        out[word] = rest
    return out


# Every gate, lower-cased: the rules' gates, the assignment stems, the PEM header's words, the
# family prefixes (with their bodies' shortest run as a tail) and the context words.
_GATES: dict[str, str] = {
    **_family_gates(),
    **{gate: _GATE_TAILS.get(gate, "") for gate in sorted(
        {*_RULES_BY_GATE, *_STEMS, _PEM_GATE})},
}
_ANCHORS = _anchor_chars(_GATES)
# gate and its anchor offset, by the gate's first two characters from its anchor on (or its one
# character, when the anchor ends it)
_GATES_AT: dict[str, tuple[tuple[str, int], ...]] = {}
for _gate in _GATES:
    _at = _anchor_at(_gate, _ANCHORS)
    _key = _gate[_at : _at + 2]
    _GATES_AT[_key] = (*_GATES_AT.get(_key, ()), (_gate, _at))
_CONTEXT_WORD_SET = frozenset(_CONTEXT_WORDS)
_FAMILY_GATE_WORDS = frozenset(_PREFIXES_BY_GATE) | _CONTEXT_WORD_SET
_STEM_SET = frozenset(_STEMS)
# All gates in one prescan: text with none of them (most error text) costs one regex search
# that only stops at a few rare characters. A hit only means the slow path runs.
_PRESCAN = lazy(_trie_pattern(_anchored(_GATES)), _FLAGS)


def _gates_in(low: str, first: re.Match[str]) -> dict[str, list[int]]:
    """Every gate in ``low`` and where each starts, from the prescan's first hit on.

    The prescan is searched again from one past each hit (so gates that overlap are all found);
    at a hit, every gate anchored on that character is compared in place. A gate with a tail
    is listed when its literal part is there (more than the prescan needs, never less).
    """
    found: dict[str, list[int]] = {}
    search, gates_at, startswith = _PRESCAN.search, _GATES_AT, low.startswith
    m: re.Match[str] | None = first
    while m is not None:
        i = m.start()
        for gate, at in gates_at.get(low[i], ()) + gates_at.get(low[i : i + 2], ()):
            if i >= at and startswith(gate, i - at):
                found.setdefault(gate, []).append(i - at)
        m = search(low, i + 1)
    return found


def _find_in(text: str) -> list[tuple[int, int, str]]:
    """The spans every rule finds in ``text`` itself (no decoded view)."""
    low = text.lower()
    if len(low) != len(text):
        # Some code points lower-case to two; offsets in ``low`` must match ``text``.
        low = text.translate(_ASCII_LOWER)
    first = _PRESCAN.search(low)
    if first is None:
        return []
    found = _gates_in(low, first)
    spans: list[tuple[int, int, str]] = []
    for idx in sorted({i for gate in found for i in _RULES_BY_GATE.get(gate, ())}):
        rule = _RULES[idx]
        if rule.need and rule.need not in text:
            continue
        if rule.need_any and not any(word in text for word in rule.need_any):
            continue
        search, pos, barrier = rule.pattern.search, 0, 0
        while (m := search(text, pos)) is not None:
            if ((rule.left_boundary and not _left_ok(text, m.start()))
                    or (rule.check is not None and not rule.check(text, m))):
                # Refused, but its value may start a match of its own (``bearer bearer X``,
                # ``--password --password X``): search again from the value, never twice
                # over the text of the match refused before (each character is read by a
                # bounded number of matches: linear time).
                pos, barrier = max(m.start("s"), barrier, m.start() + 1), m.end()
                continue
            spans.append((m.start("s"), m.end("s"), rule.name))
            if rule.random_before:
                spans.append((m.start() - rule.random_before, m.start(), rule.name))
            pos = m.end()
    candidates: list[_Candidate] = []
    if not _FAMILY_GATE_WORDS.isdisjoint(found):
        _family_spans(text, found, spans, candidates)
        if not _CONTEXT_WORD_SET.isdisjoint(found):
            _wordless_candidates(text, found, candidates)
    if not _STEM_SET.isdisjoint(found):
        for a in _assignments(text, low):
            if _assignment_ok(text, a):
                spans.append((a.value_start, a.value_end, "assignment"))  # noqa: PERF401
    if "PRIVATE KEY" in text:
        _pem_spans(text, spans)
    if candidates:
        _context_spans(found, list(spans), candidates, spans)
    if not spans:
        return spans
    result: list[tuple[int, int, str]] = []
    for start, end, name in spans:
        stop = end if name == "url_password" else _cut_escaped_delimiter(text, start, end)
        s, e = _trim(text, start, stop)
        if s < e:
            result.append((s, e, name))
    return result


# A percent-escape that hides structure: white space, quotes, and the punctuation rules read
# (``%20 %22 %27 %3A %2F %40 %3D %26 %3F %23 %2C %3B %0A``). Letters and digits are never
# escaped by URL encoders, so text without one of these has no hidden structure.
_STRUCTURAL_ESCAPE = lazy(r"%(?:[01][0-9A-Fa-f]|2[0-9A-Fa-f]|3[A-Fa-f]|40|5[BbDd]|7[BbDd])")
_ESCAPE = lazy(r"%([0-9A-Fa-f]{2})")


def _url_decoded_spans(text: str) -> list[tuple[int, int, str]]:
    """Spans found in the percent-decoded view of ``text``, mapped back to ``text``'s offsets.

    A URL-encoded command, PEM block or connection string hides the spaces, colons and slashes
    the rules read; each escape becomes its character (one per escape, so offsets map back by
    counting the escapes before a position).
    """
    pieces: list[str] = []
    starts: list[int] = []  # decoded offset of each escape
    pos = 0
    shift = 0
    for m in _ESCAPE.finditer(text):
        pieces.append(text[pos : m.start()])
        starts.append(m.start() - shift)
        pieces.append(chr(int(m.group(1), 16)))
        shift += 2
        pos = m.end()
    pieces.append(text[pos:])
    decoded = "".join(pieces)
    spans = _find_in(decoded)
    if not spans:
        return spans

    def orig(d: int) -> int:
        return d + 2 * bisect.bisect_left(starts, d)

    return [(orig(s), orig(e), name) for s, e, name in spans]


def _find(text: str) -> list[tuple[int, int, str]]:
    result = _find_in(text)
    if "%" in text and _STRUCTURAL_ESCAPE.search(text) is not None:
        result += _url_decoded_spans(text)
    result.sort()
    return result


def find_secrets(text: str | bytes) -> list[tuple[int, int, str]]:
    """Locate the random parts of secrets, for tests and tooling.

    Args:
        text: Any text; ``bytes`` are decoded as UTF-8 with replacement (offsets then refer to the
            decoded string, as do offsets in a ``str`` with lone surrogates, which become U+FFFD).

    Returns:
        ``(start, end, rule_name)`` triples sorted by position. Spans from different rules may
        overlap (a JWT inside a ``Bearer`` header); :func:`redact` merges them. Text that
        :func:`redact` already produced yields an empty list.
    """
    try:
        return _find(_decode(text))
    except Exception:  # noqa: BLE001 - tooling helper: a bug must not crash the caller
        return []


def redact(text: str | bytes) -> str:
    """Replace the random part of every recognized secret with ``<secret>``.

    Args:
        text: Error text of any size and content. ``bytes`` are decoded as UTF-8 with
            ``errors="replace"``; lone surrogates become U+FFFD.

    Returns:
        The text with each secret's random part (overlapping matches merged) replaced by
        :data:`PLACEHOLDER`. Idempotent. Text with nothing to redact is returned unchanged
        (after decoding).

    Never raises: should a rule ever fail on some input, the whole text is withheld and
    :data:`PLACEHOLDER` is returned, because returning the raw text could leak.
    """
    if (type(text) is str and text.isascii() and "%" not in text
            and _PRESCAN.search(text.lower()) is None):
        return text  # the fast path: no rule's gate is in the text (what _find_in tests first)
    return _redact_slow(text)


def _redact_slow(text: str | bytes) -> str:
    """:func:`redact` by every rule, without its fast path for text no gate is in."""
    try:
        s = _decode(text)
        spans = _find(s)
        if not spans:
            return s
        parts: list[str] = []
        pos = 0
        cur_start, cur_end = spans[0][0], spans[0][1]
        for start, end, _ in spans[1:]:
            if start < cur_end:
                cur_end = max(cur_end, end)
                continue
            parts.extend((s[pos:cur_start], PLACEHOLDER))
            pos = cur_end
            cur_start, cur_end = start, end
        parts.extend((s[pos:cur_start], PLACEHOLDER, s[cur_end:]))
        return "".join(parts)
    except Exception:  # noqa: BLE001 - failing closed: never hand back text that may hold a secret
        return PLACEHOLDER


WINDOW_OVERLAP = 8192
"""How far past a cut :func:`redact_slice` reads: longer than any secret a rule matches except a
PEM block, which is found from its BEGIN or END line wherever that lies."""


def _spans_merged(text: str) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end, _ in _find(text):
        if merged and start < merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
            continue
        merged.append((start, end))
    return merged


def redact_slice(text: str | bytes, start: int, end: int) -> str:
    """``text[start:end]`` redacted as if the whole text had been redacted first.

    Redact before you cut: a secret cut by a limit must not survive as its other half. The
    slice is redacted with :data:`WINDOW_OVERLAP` characters of context on each side, a secret
    that straddles a cut is replaced whole (the slice grows to include its placeholder), and a
    slice that starts inside a PEM private key body whose BEGIN line lies further back is
    redacted up to the body's END. Cost: linear in the slice plus the overlap (and one
    backward search for a BEGIN line). Never raises; on an internal error the slice is withheld
    (:data:`PLACEHOLDER`).
    """
    try:
        s = _decode(text)
        n = len(s)
        start, end = max(0, min(start, n)), max(0, min(end, n))
        if end <= start:
            return ""
        lo, hi = max(0, start - WINDOW_OVERLAP), min(n, end + WINDOW_OVERLAP)
        window = s[lo:hi]
        spans = _spans_merged(window)
        a, b = start - lo, end - lo
        if lo > 0 and "PRIVATE KEY" in s:
            begin = s.rfind("PRIVATE KEY", 0, lo)
            if begin >= 0 and _PEM_BEGIN.search(s, max(0, begin - 60), begin + 20) is not None:
                close = s.find(_PEM_END, begin)
                if close < 0 or close >= lo:
                    # the slice's window starts inside a key body: up to its END, all secret
                    stop = close - lo if 0 <= close - lo <= len(window) else len(window)
                    spans = _spans_merged_with(spans, (0, stop))
        parts: list[str] = []
        pos = a
        for s0, e0 in spans:
            if e0 <= a:
                continue
            if s0 >= b:
                break
            if s0 <= pos:
                parts.append(PLACEHOLDER)
            else:
                parts.extend((window[pos:s0], PLACEHOLDER))
            pos = max(pos, e0)
        if pos < b:
            parts.append(window[pos:b])
        return "".join(parts)
    except Exception:  # noqa: BLE001 - failing closed, as redact does
        return PLACEHOLDER


def _spans_merged_with(
    spans: list[tuple[int, int]], extra: tuple[int, int]
) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted([*spans, extra]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def redact_cut(text: str | bytes, limit: int, marker: str = "") -> str:
    """The start of ``text``, redacted before it is cut to at most ``limit`` characters; a cut
    ends in ``marker``. Cutting redacted text can split a placeholder, never a secret."""
    s = _decode(text)
    out = redact_slice(s, 0, min(len(s), limit + _PLACEHOLDER_LEN))
    if len(s) <= limit + _PLACEHOLDER_LEN and len(out) <= limit:
        return out
    keep = max(0, limit - len(marker))
    return out[:keep] + marker


def redact_tail(text: str | bytes, limit: int, marker: str = "") -> str:
    """The end of ``text``, redacted before it is cut to at most ``limit`` characters; a cut
    starts with ``marker``."""
    s = _decode(text)
    if len(s) <= limit:
        return redact_slice(s, 0, len(s))
    out = redact_slice(s, len(s) - limit, len(s))
    keep = max(0, limit - len(marker))
    return marker + out[max(0, len(out) - keep) :] if keep else marker


def redact_tree(value: Any) -> Any:
    """:func:`redact` applied to every string inside nested dicts, lists and tuples (a JSON
    document, a Sentry event); other values are returned as they are."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: redact_tree(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_tree(item) for item in value]
    if isinstance(value, tuple):
        return tuple(redact_tree(item) for item in value)
    return value
