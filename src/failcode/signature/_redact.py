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
  back-references, and the one multi-line construct (PEM blocks) is found with ``str.find``.
- Look-alikes stay: git SHAs, sha256 digests, UUIDs, request ids (``req_…``, ``x-request-id``),
  base64 content, file paths, the words *password* or *token* in prose, token counts
  (``max_tokens=4096``, ``1500 tokens``), and e-mail addresses. E-mail addresses are identity, not
  secrets, and are deliberately **not** redacted.

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

import re
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["PLACEHOLDER", "REDACT_VERSION", "find_secrets", "redact", "redact_tree"]

REDACT_VERSION = "r1"
"""Version id of the rule set; bump on any change to what is redacted."""

PLACEHOLDER = "<secret>"
"""The literal text that replaces the random part of a secret."""

_PLACEHOLDER_LEN = len(PLACEHOLDER)
_ASCII_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")
_RANDOM_CHAR = re.compile(r"[0-9+/=._~!@#%^&*?-]")
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
_PCT_DELIMITER = re.compile(r"%2[0267]")


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
    word, start, tail, group = a
    lword = word.lower()
    if lword in {"pass", "pwd"}:
        # Short words: only as a suffix of a compound (db_pass, DB_PWD, dbPass), never in "compass".
        prev = text[start - 1] if start else ""
        camel = word[0].isupper() and prev.islower()
        if lword == "pass" and prev not in "_-." and not camel:
            return False
        if lword == "pwd" and prev in _ASCII_ALNUM and not camel:
            return False
    secret = tail.group(group)
    if _is_reference(secret):
        return False
    if lword == "pwd" and secret.startswith(_PATH_PREFIXES):
        return False  # PWD=/home/x is the working directory, not a password
    if lword not in _PASSWORD_WORDS:
        if len(secret) < _MIN_TOKEN_VALUE or secret.isdigit():
            return False
        if secret.startswith(_PATH_PREFIXES):
            return False
    quoted = tail.group("open") is not None or tail.group("close") is not None
    if not quoted and tail.group("sep") in {":", "%3A", "%3a"}:
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


def _cli_ok(_text: str, m: re.Match[str]) -> bool:
    secret = m.group("s")
    return not _is_reference(secret) and not secret.startswith("-")


_FLAGS = re.ASCII

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
_ASSIGN_TAIL = re.compile(
    r"(?P<close>\\*[\"']|%2[27])?(?:[ \t]|%20)*(?P<sep>=>|:=|=|:|%3[Dd]|%3[Aa])(?:[ \t]|%20)*"
    r"(?:(?P<open>\"(?P<s1>(?:[^\"\\\r\n\x00]|\\.)+)\"?"
    r"|'(?P<s2>(?:[^'\\\r\n\x00]|\\.)+)'?"
    r"|\\+[\"'](?P<s3>[^\"'\\\r\n\x00]+)"
    r"|%2[27](?P<s4>[^\s\x00&\"'<>\\]+))"
    r"|(?P<s5>[^\s\x00\"'`,;&<>(){}\[\]\\]+))",
    re.ASCII,
)
_VALUE_GROUPS = ("s1", "s2", "s3", "s4", "s5")


class _Assignment(NamedTuple):
    """One ``<name><sep><value>`` candidate: the secret name, where it starts, its tail match and
    the name of the tail group that holds the value."""

    word: str
    start: int
    tail: re.Match[str]
    value_group: str


def _assignments(text: str, low: str) -> list[_Assignment]:
    """Find secret names in ``low`` (``text`` lower-cased, same offsets) followed by a value."""
    found: list[_Assignment] = []
    n = len(text)
    for stem in ("pass", "pwd", "secret", "token", "key"):
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
            # Cheap checks first: a separator or a closing quote must follow the name.
            tail = _ASSIGN_TAIL.match(text, end) if end < n and text[end] in _TAIL_FIRST else None
            if tail is not None:
                start = i
                if stem == "key":
                    head = low[max(0, i - _LONGEST_KEY_PREFIX) : i]
                    prefix = next((p for p in _KEY_PREFIXES if head.endswith(p)), None)
                    start = -1 if prefix is None else i - len(prefix)
                if start >= 0:
                    group = tail.lastgroup or "s5"
                    if group == "open":
                        group = next(g for g in _VALUE_GROUPS if tail.start(g) >= 0)
                    found.append(_Assignment(text[start:end], start, tail, group))
                    # Resume after the value, as finditer would: rescanning it is quadratic.
                    nxt = tail.end()
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
) -> _Rule:
    return _Rule(
        name, gates, lower_gate, re.compile(pattern, _FLAGS | flags), check, left_boundary, need
    )


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
        r"sk-(?:proj-|svcacct-|admin-|None-)?(?!ant-)(?P<s>[A-Za-z0-9_-]{20,})",
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
        r"eyJ(?P<s>[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*)",
    ),
    _rule(
        "url_password",
        ("://",),
        r"://[^\s:/@?#\"'<>\\]{0,128}:(?P<s>[^\s/@?#\"'<>\\]{1,256})@",
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
        r"authorization(?:\\*[\"']|%22)?[ \t]*(?:[:=]|%3[Aa]|%3[Dd])[ \t]*(?:\\*[\"']|%22)?[ \t]*"
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
        r"bearer(?:[ \t]+|%20|\+)(?P<s>[A-Za-z0-9._~+/=%-]+)(?![A-Za-z0-9._~+/=%-]|<secret>)",
        lower_gate=True,
        flags=re.IGNORECASE,
        check=_bearer_ok,
    ),
    _rule(
        "basic_auth",
        ("basic",),
        r"basic(?:[ \t]+|%20|\+)(?P<s>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])",
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
        ("--",),
        r"--(?:[A-Za-z0-9]+-)*(?:password|passwd|token|secret|api-key|apikey|access-key"
        r"|secret-key|private-key)[ \t]+(?:[\"'])?(?P<s>[^\s\"'`;&|<>\\]+)",
        flags=re.IGNORECASE,
        check=_cli_ok,
    ),
    _rule(
        "cli_user_password",
        ("-u",),
        r"(?:-u|--user)[ \t]+[\"']?[^\s:\"'@]{1,128}:(?P<s>[^\s\"'@]+)",
        check=_cli_ok,
    ),
)

_PEM_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----", _FLAGS)
_PEM_END = "-----END"


def _pem_spans(text: str, out: list[tuple[int, int, str]]) -> None:
    """PEM private key bodies; the BEGIN/END lines stay, an unterminated body runs to the end.

    A body ends at the next ``-----END`` or at the next BEGIN header, whichever comes first, so
    spans never overlap and many headers cost linear time.
    """
    headers = list(_PEM_BEGIN.finditer(text))
    end_cache = -1
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


def _gate_table(lower: bool) -> tuple[tuple[str, tuple[int, ...]], ...]:
    table: dict[str, list[int]] = {}
    for idx, rule in enumerate(_RULES):
        if rule.lower_gate == lower:
            for gate in rule.gates:
                table.setdefault(gate, []).append(idx)
    return tuple((gate, tuple(idxs)) for gate, idxs in table.items())


_CASE_GATES = _gate_table(lower=False)
_LOWER_GATES = _gate_table(lower=True)
_ASSIGNMENT_GATES = ("pass", "pwd", "secret", "token", "key")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _cut_escaped_delimiter(text: str, start: int, end: int) -> int:
    """End a span at the first URL-encoded space, quote or ampersand inside it."""
    if text.find("%", start, end) < 0:
        return end
    m = _PCT_DELIMITER.search(text, start, end)
    return end if m is None else m.start()


def _trie_pattern(words: list[str]) -> str:
    """One regex matching any of ``words``, factored as a trie: sre fails fast at each position
    of a trie, where a flat alternation of 50 literals tries every one."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        branches = [re.escape(char) + build(node[char]) for char in sorted(node) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return build(trie)


# Every gate, lower-cased, in one prescan: text with none of them (most error text) costs one
# regex search instead of ~50 substring tests. A hit only means the per-rule gates run.
_PRESCAN = re.compile(_trie_pattern(sorted(
    {gate.lower() for gate, _ in _CASE_GATES} | {gate for gate, _ in _LOWER_GATES}
    | set(_ASSIGNMENT_GATES) | {"private key"})))


def _find(text: str) -> list[tuple[int, int, str]]:
    low = text.lower()
    if len(low) != len(text):
        # Some code points lower-case to two; offsets in ``low`` must match ``text``.
        low = text.translate(_ASCII_LOWER)
    if _PRESCAN.search(low) is None:
        return []
    hits = [idxs for gate, idxs in _CASE_GATES if gate in text]
    hits += [idxs for gate, idxs in _LOWER_GATES if gate in low]
    spans: list[tuple[int, int, str]] = []
    if hits:
        for idx in sorted({i for idxs in hits for i in idxs}):
            rule = _RULES[idx]
            if rule.need and rule.need not in text:
                continue
            for m in rule.pattern.finditer(text):
                if rule.left_boundary and not _left_ok(text, m.start()):
                    continue
                if rule.check is not None and not rule.check(text, m):
                    continue
                spans.append((m.start("s"), m.end("s"), rule.name))
    if "pass" in low or "pwd" in low or "secret" in low or "token" in low or "key" in low:
        for a in _assignments(text, low):
            if _assignment_ok(text, a):
                g = a.value_group
                spans.append((a.tail.start(g), a.tail.end(g), "assignment"))
    if "PRIVATE KEY" in text:
        _pem_spans(text, spans)
    if not spans:
        return spans
    result: list[tuple[int, int, str]] = []
    for start, end, name in spans:
        s, e = _trim(text, start, _cut_escaped_delimiter(text, start, end))
        if s < e:
            result.append((s, e, name))
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
