"""Message normalization: the template of a message, volatile data replaced by placeholders.

``normalize_message`` turns "the same failure on another run, directory, machine or
day" into the same string, and keeps what tells two failures apart. It feeds the
semantic signature (its output is hashed) and the template clusterer.

Volatile, replaced by a named placeholder from ``PLACEHOLDERS``:

==============  ================================================================
``<ts>``        timestamps and their parts: ISO 8601, syslog, HTTP and ``ctime``
                dates, clock times, day and month names next to them
``<uuid>``      UUIDs
``<ip>``        IPv4 and IPv6 addresses (a port after one becomes ``<int>``)
``<hex>``       ``0x`` addresses, hex runs of 7+ characters holding a digit
``<tmp>``       a temp directory prefix only: ``/tmp/tmpab12/x.toml`` -> ``<tmp>/x.toml``;
                the temp root and the one directory made in it (``/tmp``,
                ``/var/tmp``, macOS ``/var/folders/../T``, Windows
                ``AppData\\Local\\Temp`` with either slash, ``%TEMP%``,
                ``C:\\Windows\\Temp``, ``$TMPDIR``), pytest's
                ``pytest-of-<user>/pytest-<N>/<test><M>`` under any root, and a
                directory named at random by Python's tempfile (``tmp`` + 8 of
                a-z0-9_) or mktemp (``tmp.`` + 10) under any root
``<home>``      a home prefix only: ``/home/alice/proj`` -> ``<home>/proj``
``<duration>``  ``1.5s``, ``300ms``, ``12 seconds``
``<size>``      ``12 MB``, ``4KiB``, ``1024 bytes``
``<id>``        request and trace ids (``req_...``, ``request id: ...``) and long
                random letter-digit runs
``<secret>``    the random part of a secret, from ``failcode.signature._redact.redact``
``<int>``       any other free-standing digit run: PIDs, ports, counts, line and
                column numbers (``foo.c:12:5:`` -> ``foo.c:<int>:<int>:``)
==============  ================================================================

Identity stays verbatim: quoted identifiers (``undefined reference to 'foo_v2'``,
``No module named 'requests2'``), pytest node ids (``tests/test_x.py::test_case_2``),
lint and compiler rule codes (``E501``, ``F401``, ``TS2304``, ``E0425``), model names
(``gpt-4o-2024-08-06``, ``claude-3-5-sonnet-20241022``), the file name of a source or
config path (``src/migrations/0002_auto.py``) and a short table of digit-bearing words
(``utf8``, ``sha256``, ``x86_64``, ``ipv6`` ...). Elsewhere a digit run inside a word is a
value (``dn228`` -> ``dn<int>``, ``task_12`` -> ``task_<int>``), and a long random
letter-digit word is ``<id>``.

A location (a path relative to a working directory) loses the temp directory it passes
through with ``strip_temp_dir``: ``tmpab12cd_3/pkg/x.py`` is ``pkg/x.py``; a relative ``tmp/``
is the project's own folder and stays.

Word-valued variables (a user or host name without digits) stay: the signature keeps
those apart on purpose; ``TemplateClusterer`` groups them.

The rules carry the version id ``NORMALIZE_VERSION``; any change to their output is a
new version, because signatures hash the output. (The temp directory families beyond ``/tmp``,
macOS's and ``AppData\\Local\\Temp`` joined ``n1`` without a new id: before, those messages
kept a random name, so their signatures never grouped two runs and none is regrouped now.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from failcode._lazy_re import lazy
from failcode.signature._redact import redact, redact_slice

if TYPE_CHECKING:
    import re

__all__ = [
    "CUT_MARKER",
    "MAX_CHARS",
    "NORMALIZE_VERSION",
    "PLACEHOLDERS",
    "normalize_message",
    "strip_temp_dir",
]

NORMALIZE_VERSION: Final = "n1"
"""Version id of the normalization rules; part of the signature version."""

PLACEHOLDERS: Final = (
    "<int>", "<hex>", "<uuid>", "<ip>", "<tmp>", "<home>", "<ts>",
    "<duration>", "<size>", "<id>", "<secret>",
)  # fmt: skip
"""Every placeholder ``normalize_message`` can emit (besides ``CUT_MARKER``)."""

CUT_MARKER: Final = "<cut>"
"""Appended, after one space, when the message was longer than ``MAX_CHARS``."""

MAX_CHARS: Final = 1024
"""Only this many characters of a message are normalized; the rest is dropped."""

_CUT_SUFFIX: Final = " " + CUT_MARKER
# bytes are cut before decoding; 4 bytes per character covers any UTF-8 text
_MAX_BYTES: Final = MAX_CHARS * 4

# --- whole-text rules: (placeholder, pattern, gate substrings), applied in order -------------
# A rule runs only when one of its gate substrings is in the text (a str `in` test costs
# far less than a regex scan). Group 1, when present, is text to keep before the placeholder.
_PATH_START = r"(^|[\s'\"`(\[{=:,;])"
_SEG = r"[^/\s'\"`)\]},;]+"  # one path component
# the directories above a temp directory; no delimiter inside, so each start scans one word
_ABOVE = r"[^\s'\"`()\[\]{}=:,;]*/"
# Names their makers draw at random, wherever TMPDIR points: Python's tempfile (``tmp`` and 8
# of a-z, 0-9, ``_``) and mktemp's default template (``tmp.`` and 10 letters or digits).
_RANDOM_TMP = r"tmp(?:[a-z0-9_]{8}|\.[A-Za-z0-9]{10})(?![^/\\\s'\"`)\]},;:])"
# pytest's base temp: pytest-of-<user>/pytest-<N>/<test><M>/ wherever its root is
_PYTEST_TMP = rf"(?:{_ABOVE})?pytest-of-{_SEG}(?:/pytest-(?:\d+|current)(?:/{_SEG}(?=/))?)?"
_VAR_FOLDERS_TMP = rf"(?:/private)?/var/folders/[^/\s]+/[^/\s]+/[A-Z](?:/{_SEG})?"
_WINDOWS_SEG = r"(?:[\\/][^\\/\s'\"`)\]},;]+)?"
_TMP_RULES: Final[tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...]] = (
    ("<tmp>", lazy(_PATH_START + _PYTEST_TMP), ("/pytest-",)),
    ("<tmp>", lazy(_PATH_START + _VAR_FOLDERS_TMP), ("/var/folders/",)),
    (
        "<tmp>",
        lazy(_PATH_START + rf"(?:/private)?/(?:var/)?tmp/{_SEG}"),
        ("/tmp/",),  # noqa: S108 - a substring to look for, not a file we use
    ),
    ("<tmp>", lazy(_PATH_START + _ABOVE + _RANDOM_TMP), ("/tmp",)),  # noqa: S108
    (
        "<tmp>",
        lazy(
            r"(?i)()(?:\b[A-Z]:|(?<![\w.])/[A-Z](?=/))?[\\/]Users[\\/][^\\/\s]+[\\/]AppData"
            r"[\\/]Local[\\/]Temp" + _WINDOWS_SEG
        ),
        ("\\AppData\\", "\\APPDATA\\", "\\appdata\\", "/AppData/", "/APPDATA/", "/appdata/"),
    ),
    (
        "<tmp>",
        lazy(
            r"(?i)()(?:%(?:TEMP|TMP)%|%LOCALAPPDATA%[\\/]Temp|\$env:(?:TEMP|TMP)|\$\{?TMPDIR\}?"
            r"|\b[A-Z]:[\\/]Windows[\\/]Temp|~[\\/]AppData[\\/]Local[\\/]Temp)(?=[\\/])"
            + _WINDOWS_SEG
        ),
        ("%TEMP%\\", "%TEMP%/", "%TMP%\\", "%TMP%/", "%temp%\\", "%tmp%\\",
         "%LOCALAPPDATA%\\", "%LOCALAPPDATA%/", "$env:TEMP\\", "$env:TMP\\", "TMPDIR/",
         "TMPDIR}/", "\\Windows\\Temp", "\\WINDOWS\\Temp", "\\WINDOWS\\TEMP", "\\windows\\temp",
         "/Windows/Temp", "~\\AppData\\", "~/AppData/"),
    ),
)
"""The temporary directories: a temp root and the one directory made in it (``/tmp/tmpab12``,
``/var/folders/xy/z/T/tmpq1``, ``C:\\Users\\u\\AppData\\Local\\Temp\\tmpz9``, ``%TEMP%\\x``,
``$TMPDIR/x``), pytest's ``pytest-of-<user>/pytest-<N>/<test><M>`` and a directory named at
random by Python's tempfile or mktemp under any root."""
_TEXT_RULES: Final[tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...]] = (
    *_TMP_RULES,
    (
        "<home>",
        lazy(_PATH_START + r"/(?:home|Users)/[^/\s'\"`)\]},;]+"),
        ("/home/", "/Users/"),
    ),
    (
        "<home>",
        lazy(r"(?i)()\b[A-Z]:\\Users\\[^\\\s'\"`)\]},;]+"),
        ("\\Users\\", "\\users\\", "\\USERS\\"),
    ),
    (
        "<id>",
        lazy(
            r"(?i)(\b(?:request|req|trace|span|correlation|x-request|x-amzn-requestid|x-trace)"
            r"[ _-]?id\b[\"']?(?:\s*[:=]\s*|\s+)[\"']?)[A-Za-z0-9][\w.:/+=-]*"
        ),
        ("req", "Req", "REQ", "trace", "Trace", "TRACE", "span", "Span", "SPAN", "orrelation"),
    ),
)

# the path rules come first; every gate of theirs holds "/" or "\\" (tested)
_FIRST_ID_RULE: Final = next(k for k, rule in enumerate(_TEXT_RULES) if rule[0] == "<id>")

# --- token rules: a whitespace-free token's core (surrounding punctuation stripped) -----------
_HEX = "[0-9a-fA-F]"
_TOKEN_RULES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("<uuid>", lazy(rf"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}")),
    (
        "<ts>",
        lazy(
            r"\d{1,4}-\d\d-\d\d(?:[T_ -]\d\d[:.]\d\d(?:[:.]\d\d(?:[.,]\d+)?)?)?"
            r"(?:Z|[+-]\d\d:?\d\d)?"
            r"|\d{1,2}:\d\d(?::\d\d)?(?:[.,:]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
            r"|\d{4}[./]\d\d[./]\d\d|\d\d/\d\d/\d\d(?:\d\d)?|\d{8}[T-]\d{1,2}:\d\d(?::\d+)*"
        ),
    ),
    ("<ip>", lazy(r"/?(?:\d{1,3}\.){3}\d{1,3}")),
    ("<hex>", lazy(rf"0[xX]{_HEX}+")),
    (
        "<duration>",
        lazy(
            r"[-+]?\d+(?:\.\d+)?(?:ns|us|µs|ms|s|sec|secs|m|min|mins|h|hr|hrs)"
            r"|\d+h(?:\d+m)?(?:\d+s)?|\d+m\d+(?:\.\d+)?s"
        ),
    ),
    (
        "<size>",
        lazy(r"\d+(?:\.\d+)?(?:[KMGTP]i?B|[kKMGTP]|[kmgt]b|B|bytes?)"),
    ),
)
# every token rule in one pattern, one group per rule in order: a full match of an alternation
# is its first alternative that matches the whole core, as trying the rules one by one finds
_TOKEN_ANY: Final = lazy("|".join(f"({rx.pattern})" for _, rx in _TOKEN_RULES))
_TOKEN_PLACEHOLDERS: Final = tuple(placeholder for placeholder, _ in _TOKEN_RULES)
# an IPv4 with a port, an IPv6 (hex groups with "::" or 7 colons)
_IP_PORT: Final = lazy(r"/?(?:\d{1,3}\.){3}\d{1,3}:\d{1,5}")
_IPV6: Final = lazy(
    rf"(?:{_HEX}{{0,4}}:){{2,7}}{_HEX}{{0,4}}(?:%\w+)?|(?:{_HEX}{{1,4}}:){{6}}(?:\d{{1,3}}\.){{3}}\d{{1,3}}"
)
_BRACKET_IPV6: Final = lazy(rf"\[(?:{_HEX}{{0,4}}:){{2,7}}{_HEX}{{0,4}}\]")
_UUID_IN: Final = lazy(rf"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}")
# model names keep their digits: the family name, then a dash or digit, at the start of a core
# or after "/", "." or ":". Two patterns, not one "(?:^|[/.:])" search: a pattern that starts
# with a character set lets the regex engine skip to the candidates, and a core is tested at
# its start with a match.
_MODEL_FAMILY: Final = (
    r"(?:gpt|chatgpt|claude|gemini|gemma|llama|codellama|mistral|mixtral|codestral"
    r"|ministral|pixtral|command|deepseek|qwen|phi|grok|text-embedding|text-davinci|dall-e"
    r"|whisper|tts|davinci|babbage|o[134])(?:-|\d|$)"
)
_MODEL_AT_START: Final = lazy("(?i)" + _MODEL_FAMILY)
_MODEL_INSIDE: Final = lazy("(?i)[/.:]" + _MODEL_FAMILY)


def _names_model(core: str) -> bool:
    """Whether ``core`` holds a model name (:data:`_MODEL_FAMILY` at its start or after
    ``/``, ``.`` or ``:``)."""
    return (_MODEL_AT_START.match(core) is not None
            or _MODEL_INSIDE.search(core) is not None)


_REQ_PREFIX: Final = lazy(r"(?i)(?:req|request|trace|span|corr)[_-]")
_PIECES: Final = lazy(r"([A-Za-z0-9]+)")
_DIGIT_RUN: Final = lazy(r"\d+")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_LETTERS: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
# a lint or compiler rule code is identity: E501, F401, TS2304, E0425, PLR2004, SC2086
_LINT_CODE: Final = lazy(r"[A-Z]{1,4}\d{3,5}")
# well-known words with digits that name a thing, not a value
_DIGIT_WORDS: Final = _words(
    "utf8 UTF8 utf16 utf32 sha1 sha224 sha256 sha384 sha512 SHA1 SHA256 SHA512 md5 MD5 blake2b "
    "base64 base32 int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 "
    "bfloat16 x86 x64 amd64 arm64 aarch64 i386 i686 ipv4 ipv6 IPv4 IPv6 http2 HTTP2 h2 http3 "
    "oauth2 OAuth2 s3 S3 ec2 EC2 py3 python2 python3 pip3 log4j win32 Win32 win64 "
    "k8s K8s i18n l10n"
)
# a source or config file path is identity (the conflicting file): digits in it stay
_SRC_PATH: Final = lazy(
    r"((?:<tmp>|<home>)?[\w./\\-]*\.(?:py|pyi|pyx|c|h|cc|cpp|cxx|hpp|hh|rs|go|ts|tsx|js|jsx"
    r"|mjs|cjs|java|kt|kts|rb|php|cs|fs|swift|scala|m|mm|zig|lua|sh|bash|sql|proto|toml|json"
    r"|yaml|yml|cfg|ini|lock|md|rst|txt|xml|html|css|scss|vue|svelte|gradle|mk|cmake))"
    r"((?:[:(]\d+\)?)*)"
)
_PATH_SEP: Final = lazy(r"([/\\])")
_IP_IN: Final = lazy(r"(?:\d{1,3}\.){3}\d{1,3}")
_IDENT: Final = lazy(r"[A-Za-z_$][\w.:$-]*")

_LEAD: Final = "([{'\"`"
_TRAIL: Final = ")]}'\"`,;:.!?"
_QUOTES: Final = frozenset("'\"`")
_DIGITS: Final = frozenset("0123456789")
_HEXCHARS: Final = frozenset("0123456789abcdefABCDEF")
_MONTHS_DAYS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec Mon Tue Wed Thu Fri Sat Sun"
_CALENDAR: Final = _words(
    _MONTHS_DAYS + " Sept January February March April June July August September October"
    " November December Monday Tuesday Wednesday Thursday Friday Saturday Sunday "
    + _MONTHS_DAYS.upper()
)
# units that turn a preceding free-standing number into a duration or a size
_DURATION_UNITS: Final = _words(
    "ns us µs ms s sec secs second seconds min mins minute minutes h hr hrs hour hours "
    "day days millis milliseconds microseconds nanoseconds"
)
_SHORT_SIZE_UNITS: Final = frozenset({"K", "M", "G", "k"})
_SIZE_UNITS: Final = _words("B KB MB GB TB PB KiB MiB GiB TiB kB bytes byte")
_UNIT_AFTER_INT: Final = lazy(r"<int>(?:\.<int>)? ([A-Za-zµ]+)\b")
_TS_RUN: Final = lazy(r"(?:<int>,? )?<ts>(?:,? (?:<ts>|<int>|GMT|UTC|Z))+|(?:<int>,? )<ts>")

_CTRL: Final = dict.fromkeys((*range(9), 11, 12, *range(14, 32), 127), " ")



class _WordCache(dict[str, str]):
    """word -> its normalized form; a miss classifies the word and keeps the result, so a
    message's words are looked up in one C-level ``map`` over ``__getitem__``."""

    __slots__ = ()

    def __missing__(self, word: str) -> str:
        result = self[word] = _classify(word)
        return result


# Bounded memo tables (cleared when full): log lines and their words repeat a lot.
_CACHE: _WordCache = _WordCache()
_CACHE_MAX: Final = 1 << 16
_MSG_CACHE: dict[str, str] = {}
_MSG_CACHE_MAX: Final = 1 << 14


def _clear_caches() -> None:
    """Forget every memoized word and message (for cold-start benchmarks)."""
    _CACHE.clear()
    _MSG_CACHE.clear()


# The temp directories a relative path can pass through (a path relative to a working
# directory that holds temp directories): pytest's, macOS's and those named at random. A bare
# ``tmp/`` is not among them: relative, it is a directory of the project.
_RELATIVE_TMP_RULES: Final = (*(rule[1] for rule in _TMP_RULES[:2]), _TMP_RULES[3][1])
_TMP_MARK: Final = "<tmp>"


def strip_temp_dir(path: str) -> str | None:
    """``path`` with any temporary directory it passes through removed, for a location.

    A location is a path relative to the command's working directory; when that directory holds
    temp directories (``/tmp`` itself, pytest's base temp) the relative path starts with one:
    ``tmpab12cd_3/pkg/x.py`` and ``pytest-of-u/pytest-7/test_a0/test_a.py`` are
    ``pkg/x.py`` and ``test_a.py`` on any run. A path that is only a temp directory is None;
    any other path is returned unchanged.
    """
    if _TMP_MARK in path:
        return path
    probe = "/" + path
    for rx in _RELATIVE_TMP_RULES:
        probe = rx.sub(r"\g<1>" + _TMP_MARK, probe)
    if _TMP_MARK not in probe:
        return path
    return probe.rsplit(_TMP_MARK, 1)[1].lstrip("/") or None


def normalize_message(text: str | bytes) -> str:
    """Return the template of a message: volatile data replaced by named placeholders.

    Args:
        text: a message, log line or diagnostic. ``bytes`` are decoded as UTF-8 with
            invalid sequences replaced; any other object is ``str()``-ed.

    Returns:
        The normalized text: whitespace runs collapsed to one space, secrets redacted
        (via ``failcode.signature._redact.redact``), volatile tokens replaced by the placeholders
        in ``PLACEHOLDERS``. Only the first ``MAX_CHARS`` characters are read; when more
        were dropped, ``" <cut>"`` is appended. Idempotent: normalizing the output again
        returns it unchanged.

    Never raises; the cost is bounded by ``MAX_CHARS``, not by the length of ``text``.

    Caveats: a word-valued variable (a user or host name without digits) stays; the
    template clusterer groups those. An unquoted identifier that ends in digits outside
    the protected forms (module docstring) loses them: ``test_login_v2 failed`` and
    ``test_login_v3 failed`` normalize alike.
    """
    return _cached_normalize(text, redacted=False)


def normalize_redacted(text: str) -> str:
    """:func:`normalize_message` of text that already went through ``redact`` (a record's
    message, rendered from redacted params): the same result, without redacting twice."""
    return _cached_normalize(text, redacted=True)


def _cached_normalize(text: str | bytes, *, redacted: bool) -> str:
    # One cache serves both entry points: redaction is idempotent, so the output for a text
    # is the same whether or not it was redacted before.
    if type(text) is str:
        hit = _MSG_CACHE.get(text)
        if hit is not None:
            return hit
        if len(text) <= MAX_CHARS:
            out = _normalize(text, redacted=redacted)
            if len(_MSG_CACHE) >= _MSG_CACHE_MAX:
                _MSG_CACHE.clear()
            _MSG_CACHE[text] = out
            return out
    return _normalize(text, redacted=redacted)


def _normalize(text: object, *, redacted: bool = False) -> str:
    if isinstance(text, bytes | bytearray | memoryview):
        raw = bytes(text[: _MAX_BYTES + 1])
        text = raw.decode("utf-8", errors="replace")
        if len(raw) > _MAX_BYTES:
            text += "\ufffd" * (MAX_CHARS + 1)  # force the cut below
    elif not isinstance(text, str):
        text = str(text)
    cut = False
    if len(text) > MAX_CHARS:
        # Redact before you cut: a secret straddling the cut is replaced whole, never half kept.
        text = text[:MAX_CHARS] if redacted else redact_slice(text, 0, MAX_CHARS)
        cut = True
    body = text.rstrip()
    if body.endswith(_CUT_SUFFIX) or body == CUT_MARKER:
        body = body[: -len(CUT_MARKER)]
        cut = True
    if not body.isprintable():
        body = body.translate(_CTRL)
    if not redacted:
        body = redact(body)
    # every path rule's gate holds a slash or a backslash: without one, only the id rule can run
    rules = _TEXT_RULES if "/" in body or "\\" in body else _TEXT_RULES[_FIRST_ID_RULE:]
    for placeholder, rx, gates in rules:
        for g in gates:
            if g in body:
                body = rx.sub(r"\g<1>" + placeholder, body)
                break
    out = _tokens(body)
    if len(out) > MAX_CHARS:  # placeholders can lengthen the text; cut on a token edge
        k = out.rfind(" ", 0, MAX_CHARS + 1)
        out = out[:k] if k > 0 else out[:MAX_CHARS]
        cut = True
    if cut:
        return out + _CUT_SUFFIX if out else CUT_MARKER
    return out


def _tokens(body: str) -> str:
    cache = _CACHE
    if len(cache) > _CACHE_MAX:
        cache.clear()
    s = " ".join(map(cache.__getitem__, body.split()))
    if "<ts>" in s:
        s = _TS_RUN.sub("<ts>", s)
    if "<int> " in s or "<int>.<int> " in s:
        s = _UNIT_AFTER_INT.sub(_unit, s)
    return s


def _unit(m: re.Match[str]) -> str:
    unit = m.group(1)
    if unit in _DURATION_UNITS:
        return "<duration>"
    if unit in _SIZE_UNITS:
        return "<size>"
    return m.group()


def _classify(word: str) -> str:
    """Normalize one whitespace-free word (the result is cached per distinct word).

    The fast path: a number (ASCII digits, at most one inner ``.``) between leading and
    trailing punctuation is each digit run's placeholder, as :func:`_classify_slow` finds
    after trying every token rule; anything else goes the slow way.
    """
    if word.isalpha():
        return "<ts>" if word in _CALENDAR else word
    if word.isascii() and not ("[" in word and ":" in word):
        head = word.lstrip(_LEAD)
        core = head.rstrip(_TRAIL)
        whole, dot, frac = core.partition(".")
        if whole.isdigit() and (not dot or frac.isdigit()):
            lead, trail = word[: len(word) - len(head)], head[len(core) :]
            return lead + _number(whole) + (dot + _number(frac) if dot else "") + trail
    return _classify_slow(word)


def _number(run: str) -> str:
    """A digit run's placeholder: a zero-padded run as long as a hex word is a hex id."""
    return "<hex>" if len(run) >= 7 and run[0] == "0" else "<int>"


def _classify_slow(word: str) -> str:
    """Normalize one whitespace-free word by every rule (see :func:`_classify`)."""
    if word.isalpha():
        return "<ts>" if word in _CALENDAR else word
    if "[" in word and ":" in word:
        word = _BRACKET_IPV6.sub("[<ip>]", word)
    n = len(word)
    i = 0
    while i < n and word[i] in _LEAD:
        i += 1
    j = n
    while j > i and word[j - 1] in _TRAIL:
        j -= 1
    lead, core, trail = word[:i], word[i:j], word[j:]
    if not core:
        return word
    m = _REQ_PREFIX.match(core)
    if m and _looks_random(core[m.end() :]):
        return lead + core[: m.end()] + "<id>" + trail
    if _DIGITS.isdisjoint(core):
        if core in _CALENDAR:
            return lead + "<ts>" + trail
        if ":" in core and _IPV6.fullmatch(core) and core.count(":") >= 2 and "::" in core:
            return lead + "<ip>" + trail
        return word
    if lead and trail and lead[-1] in _QUOTES and trail[0] in _QUOTES and _IDENT.fullmatch(core):
        return word  # a quoted identifier is identity: 'foo_1', 'requests2'
    if ".py::" in core or _names_model(core):
        return word
    return lead + _classify_core(core) + trail


# A core of ASCII letters, digits, "-" and "_" that starts with a letter: no token rule can
# match it whole (each needs a leading digit, sign, "/", "0x", a ".", a ":" or 36 characters)
_PLAIN_CORE: Final = lazy(r"[A-Za-z][A-Za-z0-9_-]{0,34}")


def _classify_core(core: str) -> str:
    """A core's normalized form; the fast path: a plain core (:data:`_PLAIN_CORE`) that is
    not a request id is its pieces, as :func:`_classify_core_slow` finds after every rule."""
    if _PLAIN_CORE.fullmatch(core) and _REQ_PREFIX.match(core) is None:
        return _pieces(core)
    first = core[:1]
    # The token rules and ip:port match whole cores that start with a digit, a sign, "/" and a
    # digit, or (a UUID) have 36 characters; any other core skips them. isdigit() holds for
    # every character the patterns' \d matches, and more.
    if (not core[1:2].isdigit() if first == "/"
            else not (first.isdigit() or first in "+-" or len(core) == 36)):
        return _classify_core_rest(core)
    return _classify_core_slow(core)


def _classify_core_slow(core: str) -> str:
    """A core's normalized form by every rule (see :func:`_classify_core`)."""
    m = _TOKEN_ANY.fullmatch(core)
    if m is not None:
        return _TOKEN_PLACEHOLDERS[m.lastindex - 1]  # type: ignore[operator]
    if _IP_PORT.fullmatch(core):
        return "<ip>:<int>"
    return _classify_core_rest(core)


def _classify_core_rest(core: str) -> str:
    """The rules after the token rules and ip:port, which did not match ``core``."""
    if ":" in core and _IPV6.fullmatch(core) and core.count(":") >= 2:
        return "<ip>"
    m = _SRC_PATH.fullmatch(core)
    if m:
        # the file name stays verbatim; directories above it may hold volatile parts
        path = m.group(1)
        k = max(path.rfind("/"), path.rfind("\\")) + 1
        head = "".join(
            _classify_core(d) if d and not _DIGITS.isdisjoint(d) else d
            for d in _PATH_SEP.split(path[:k])
        )
        return head + path[k:] + _DIGIT_RUN.sub("<int>", m.group(2))
    if "/" in core or "\\" in core:  # a path or a ratio: each part on its own
        return "".join(
            _classify_core(d) if d and not _DIGITS.isdisjoint(d) else d
            for d in _PATH_SEP.split(core)
        )
    if core.count(".") >= 3:
        core = _IP_IN.sub("<ip>", core)
    if "-" in core and len(core) >= 36:
        core = _UUID_IN.sub("<uuid>", core)
    m = _REQ_PREFIX.match(core)
    if m and _looks_random(core[m.end() :]):
        return core[: m.end()] + "<id>"
    return _pieces(core)


def _looks_random(rest: str) -> bool:
    """An id after ``req_``: holds a digit, or is long and not a lower-case word."""
    return not _DIGITS.isdisjoint(rest) or (len(rest) >= 8 and not rest.islower())


def _pieces(core: str) -> str:
    parts = _PIECES.split(core)
    # parts alternate: delimiter, alphanumeric run, delimiter, ..., delimiter
    for k in range(1, len(parts), 2):
        p = parts[k]
        if _DIGITS.isdisjoint(p):
            continue
        if p.isdigit():
            # a zero-padded run as long as a hex word is a hex id: 00000004 like 0000000e
            parts[k] = "<hex>" if len(p) >= 7 and p[0] == "0" else "<int>"
            d = parts[k - 1]
            # a sign: "-" right after a delimiter or the start, not inside "R02-M1"
            if d.endswith("-") and (len(d) > 1 or k == 1):
                parts[k - 1] = d[:-1]
        else:
            parts[k] = _mixed(p)
    return "".join(parts)


def _mixed(p: str) -> str:
    """A run of letters and digits (not all digits)."""
    if len(p) >= 7 and _HEXCHARS.issuperset(p) and not p.isalpha():
        return "<hex>"
    if p[:2] in ("0x", "0X") and _HEXCHARS.issuperset(p[2:]):
        return "<hex>"
    if p[0].isdigit():
        head = p.rstrip(_LETTERS)
        if head.isdigit():
            unit = p[len(head) :]
            if unit in _DURATION_UNITS:
                return "<duration>"
            if unit in _SIZE_UNITS or unit in _SHORT_SIZE_UNITS:
                return "<size>"
            if len(unit) <= 3:
                return "<int>" + unit
    if p in _DIGIT_WORDS or _LINT_CODE.fullmatch(p):
        return p
    runs = _DIGIT_RUN.findall(p)
    if (len(p) >= 16 or (len(p) >= 10 and len(runs) >= 2)) and not p.isupper():
        return "<id>"
    return _DIGIT_RUN.sub("<int>", p)
