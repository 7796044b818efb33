"""Online template clustering of messages and log lines.

The signature keeps apart what differs in a word (another user, host or word value);
a person calls those the same failure. ``TemplateClusterer`` groups them: each message
is split into words, each word's variable parts masked (below), and the message joined to
the most similar cluster of the same token count when enough positions agree; the
positions that disagree become ``<*>`` in the cluster's template. The state saves to JSON
and loads back, so clusters (and their ids) hold across sessions.

Masking (per distinct word, cached; each rule is about log text in general):

- a word without a digit stays, but a month or day name is ``<ts>``;
- a word with a digit: an IPv4 address (with a port: ``<ip>:<int>``), a number (signs,
  decimals and thousands separators included; a zero-padded run of 7+ digits is
  ``<hex>`` like the hex ids it stands beside), a date or clock time (``<ts>``), a hex
  word of 7+ characters or ``0x...`` (``<hex>``), a number with a time or size unit
  (``<duration>``, ``<size>``); a path is masked part by part, a comma-separated list of
  like values is one value, in ``key=value`` the key stays; a bound on a number is a
  number (``<1``, ``>=10``, ``~5``); elsewhere each digit run is ``<int>``
  (``blk_<int>``, ``R<int>-M<int>``); surrounding punctuation stays;
- a date and time written in several words is one ``<ts>``; a number and the unit word
  after it are one ``<duration>`` or ``<size>``; a parenthesized value after a value
  (``1234 bytes (1.2 KB)``) restates it and is dropped.

Redaction (``redact``) runs once per new cluster, on its first message: a token that holds
part of a secret becomes ``<*>`` in the template, so no secret reaches a template or the
saved state, and messages that join a cluster are never redacted (they can only turn
template tokens into ``<*>``).

Algorithm (one setting for every log source; the figures are in bench/bench_loghub.py):

- tokens: the masked words, a run of one repeated value kept once
  (``blk_<int> blk_<int> blk_<int>`` is a list of any length; a repeated plain word
  stays: ``Invalid user user`` is the user named ``user``);
- a log record's header is one ``<header>`` token: a header holds a date or clock time
  in one of its first four fields and ends at the first separator after it (a token
  ending in ``:`` such as ``sshd[24200]:`` or ``org.apache.Foo:``, a lone ``-`` or
  ``|``), at most seven fields in, a bracketed group (``[IPC Server handler 5 on
  62270]``) counting as one field; without a separator it ends after its last bracketed
  field (``[req-1 - - -]``, ``[notice]``). Headers vary per line in ways the message
  does not (thread names, optional fields, host and program names), so they never
  count for or against a match; a message with no time stamp near its start has no
  header;
- candidates: clusters with the same token count and the same first token when that
  token is a constant word, else all clusters of that token count;
- similarity: the share of positions where the template token equals the message token,
  a ``<*>`` position counting as half a match; join when it is at least
  ``SIMILARITY``, the best candidate winning (ties: the older cluster);
- a veto: two different plain words (a placeholder such as ``<ts>`` is a value, not a
  word) at one position (``Started``/``Stopped``,
  ``"GET``/``"POST``, ``(usable)``/``(reserved)``, ``user=root``/``user=guest``) mean
  another event, not a value, unless the word names a value by position: it follows
  (or is the value of) a key from a short generic list (``user``, ``host``, ``account``,
  ``for`` ...), so ``Invalid user chen`` and ``Invalid user support`` join;
- an exact repeat of a message text, or of a token sequence, seen before goes to the
  same cluster without a scan (the text without tokenizing).

Caveat: a first pass is order dependent, as any online clusterer: a cluster's
template only ever generalizes, so a message seen early may have joined a cluster a
later one would not.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Final

import msgspec

from failcode._lazy_re import lazy
from failcode.record._failure import decode_problem
from failcode.signature._redact import redact

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["ClusterMatch", "ClusterStateError", "TemplateCluster", "TemplateClusterer"]

WILDCARD: Final = "<*>"
HEADER: Final = "<header>"  # the one token standing for a log record's header
_SEPARATORS: Final = frozenset(("-", "|", "--", "-->"))
_EMPTY: Final = "<empty>"  # the one token of an empty (or all-whitespace) message
SIMILARITY: Final = 0.6
"""Share of agreeing positions needed to join a cluster (wildcards count half)."""

STATE_VERSION: Final = 3
MASKING_VERSION: Final = "m2"
"""Version id of the clusterer's word masking (saved with the state)."""
_EXACT_CACHE_MAX: Final = 1 << 16


class ClusterStateError(ValueError):
    """A saved clusterer state is malformed, or of a version this code cannot read."""


class ClusterMatch(msgspec.Struct, frozen=True):
    """Where one message landed.

    Attributes:
        cluster_id: stable id of the cluster (unchanged by saving and loading).
        template: the cluster's template after this message, ``<*>`` for variable parts.
        is_new: the message opened a new cluster.
        changed: the cluster's template changed (a new cluster counts as changed).
    """

    cluster_id: str
    template: str
    is_new: bool
    changed: bool


class TemplateCluster(msgspec.Struct, frozen=True):
    """A snapshot of one cluster: its id, template and how many messages joined it."""

    cluster_id: str
    template: str
    size: int


class _ClusterState(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    id: str
    tokens: list[str]
    size: int


class _State(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    version: int
    masking_version: str
    similarity: float
    clusters: list[_ClusterState]


class _Cluster:
    __slots__ = ("cid", "size", "tokens")

    def __init__(self, cid: str, tokens: list[str], size: int) -> None:
        self.cid = cid
        self.tokens = tokens
        self.size = size


_MAX_CHARS: Final = 4096  # a longer message is clustered on its first 4096 characters
_WORDS: dict[str, str] = {}  # word -> masked word, bounded (cleared when full)
_WORDS_MAX: Final = 1 << 16
_LEAD: Final = "([{<'\"`"
_TRAIL: Final = ")]}>'\"`,;:.!?"
_DIGITS: Final = frozenset("0123456789")
_NUMBER: Final = lazy(r"[-+]?\d+(?:[.,]\d+)*")
_IPV4: Final = lazy(r"/?(?:\d{1,3}\.){3}\d{1,3}(:\d{1,5})?")
_CLOCK: Final = lazy(
    r"\d{1,4}[-/.]\d\d?[-/.]\d{1,4}(?:[T_-]\d\d?:\d\d.*)?|\d\d?:\d\d(?::\d\d)?(?:[.,:]\d+)?"
)
_UNIT: Final = lazy(r"[-+]?\d+(?:\.\d+)?([A-Za-zµ]{1,7})")
_HEXWORD: Final = lazy(r"(?:0[xX])?[0-9a-fA-F]{7,}|0[xX][0-9a-fA-F]+")
_RUN: Final = lazy(r"\d+")
_BOUND: Final = lazy(r"(?:[<>]=?|~)(?=[-+]?\d)")
_DURATIONS: Final = frozenset(("ns", "us", "µs", "ms", "s", "sec", "secs", "m", "min", "mins",
                                "h", "hr", "hrs", "d"))
_SIZES: Final = frozenset(("b", "k", "kb", "kib", "m", "mb", "mib", "g", "gb", "gib", "t", "tb",
                           "tib", "bytes", "byte"))
# a parenthesized run of values restates the value before it: "1234 bytes (1.2 KB)"
_ANNOTATION: Final = lazy(r" \((?:[-+]?\d[\d.,:]*|<[a-z]+>)(?: [A-Za-z%]{1,5})?\)")


def _mask_core(core: str) -> str:
    """The placeholder for a word core holding a digit (no surrounding punctuation)."""
    m = _IPV4.fullmatch(core)
    if m:
        return "<ip>:<int>" if m.group(1) else "<ip>"
    if "," in core:
        # a comma-separated list of like values is one value, whatever its length
        parts = {_mask_core(p) if not _DIGITS.isdisjoint(p) else p for p in core.split(",")}
        return parts.pop() if len(parts) == 1 else ",".join(
            _mask_core(p) if not _DIGITS.isdisjoint(p) else p for p in core.split(","))
    if _NUMBER.fullmatch(core):
        # a zero-padded run as long as a hex word is a hex id: 00106210 like 0244c1dc
        return "<hex>" if len(core) >= 7 and core[0] == "0" and core.isdigit() else "<int>"
    if _CLOCK.fullmatch(core):
        return "<ts>"
    if _HEXWORD.fullmatch(core):
        return "<hex>"
    m = _UNIT.fullmatch(core)
    if m:
        unit = m.group(1).lower()
        if unit in _DURATIONS:
            return "<duration>"
        if unit in _SIZES:
            return "<size>"
    if "/" in core or "\\" in core:  # a path: each part on its own
        return "".join(
            _mask_core(d) if d and not _DIGITS.isdisjoint(d) else d
            for d in re.split(r"([/\\])", core)
        )
    return _RUN.sub("<int>", core)


_CALENDAR: Final = frozenset(re.findall(
    r"\w+", "Jan Feb Mar Apr May Jun Jul Aug Sep Sept Oct Nov Dec Mon Tue Wed Thu Fri Sat Sun "
    "January February March April June July August September October November December "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday"))
_UNIT_WORDS: Final = {
    **{u + p: "<duration>" for u in ("ms", "us", "ns", "sec", "secs", "second", "seconds",
                                     "min", "mins", "minutes", "hours", "days", "millis")
       for p in ("", ",", ".", ")", ";")},
    **{u + p: "<size>" for u in ("B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "kB",
                                 "bytes")
       for p in ("", ",", ".", ")", ";")},
}


def _mask(word: str) -> str:
    """One whitespace-free word, variables replaced by named placeholders (cached)."""
    if _DIGITS.isdisjoint(word):
        core = word.strip(_LEAD + _TRAIL)
        return word.replace(core, "<ts>") if core in _CALENDAR else word
    bound = _BOUND.match(word)
    if bound:  # "<1", ">=10", "~5": a bound on a number is a number
        return _mask(word[bound.end():])
    n = len(word)
    i = 0
    while i < n and word[i] in _LEAD:
        i += 1
    j = n
    while j > i and word[j - 1] in _TRAIL:
        j -= 1
    core = word[i:j]
    key, eq, value = core.partition("=")
    if eq and key and _DIGITS.isdisjoint(key):  # key=value: the key stays
        return f"{word[:i]}{key}={_mask_core(value) if value else ''}{word[j:]}"
    return word[:i] + _mask_core(core) + word[j:]


def _text(message: object) -> str:
    if type(message) is str:
        return message[:_MAX_CHARS]
    if isinstance(message, bytes | bytearray):
        return bytes(message[: _MAX_CHARS * 4]).decode("utf-8", "replace")[:_MAX_CHARS]
    return str(message)[:_MAX_CHARS]


def _tokens(message: object) -> tuple[str, ...]:
    """The message's words with variables masked, a run of one repeated word kept once."""
    text = _text(message)
    if " (" in text:
        text = _ANNOTATION.sub("", text)
    words = _WORDS
    if len(words) >= _WORDS_MAX:
        words.clear()
    out: list[str] = []
    last = None
    for w in text.split():
        r = words.get(w)
        if r is None:
            r = words[w] = _mask(w)
        if last == "<int>" or last == "<ts>":  # noqa: PLR1714 - two str compares, no set
            if r == "<ts>" or (r == "<int>" and last == "<ts>"):
                out[-1] = last = "<ts>"  # a date and time written in several words is one
                continue
            if last == "<int>":
                unit = _UNIT_WORDS.get(r)
                if unit is not None:  # "12 ms", "93.0 B,": a number and its unit are one
                    out[-1] = last = unit
                    continue
        if r != last or "<" not in r:  # a repeated value, not a repeated word
            out.append(r)
            last = r
    if not out:
        return (_EMPTY,)
    if len(out) > 2 and "<ts>" in " ".join(out[:_HEADER_FIELDS]):
        cut = _header_end(out)
        if cut:
            out[:cut] = [HEADER]
    return tuple(out)


_HEADER_FIELDS: Final = 7
"""A log record's header is at most this many fields (a bracketed group is one field)."""
_STAMP_FIELDS: Final = 4
"""A header's date or time is among its first this many fields."""


def _header_end(toks: list[str]) -> int:
    """How many leading tokens form a log record's header, 0 when there is none.

    A header holds a date or clock time in one of its first ``_STAMP_FIELDS`` fields
    and ends at the first separator after it: a token ending in ``:`` (``sshd[24200]:``,
    ``org.apache.Foo:``) or a lone ``-`` or ``|``, at most ``_HEADER_FIELDS`` fields in,
    outside brackets, with content after it; without a separator, it ends after its last
    bracketed field (``[req-1 - -]``, ``[notice]``). A bracketed group
    (``[IPC Server handler 5 on 62270]``) is one field.
    """
    depth = 0
    fields = 0
    stamped = False
    bracket_end = 0
    last = len(toks) - 1
    for i, t in enumerate(toks):
        if i == last or fields >= _HEADER_FIELDS:
            break
        opened = depth > 0 or t[0] == "["
        if opened or "(" in t or "]" in t or ")" in t:
            depth += t.count("[") + t.count("(") - t.count("]") - t.count(")")
            if depth > 0:
                continue
            depth = 0
        fields += 1
        if not stamped:
            if t.strip("[](),;:.") == "<ts>" or (t[0] == "[" and "<ts>" in t):
                stamped = True
            elif fields >= _STAMP_FIELDS:
                return 0
            continue
        if t[-1] == ":" or t in _SEPARATORS:
            return i + 1
        if opened and t[-1] == "]":
            bracket_end = i + 1
    return bracket_end if stamped else 0


def _safe_template(message: object, toks: tuple[str, ...]) -> list[str]:
    """The template of a new cluster: a token that holds (part of) a secret becomes ``<*>``.

    Redaction runs once per new cluster, not per message: a message that joins a cluster
    only ever turns template tokens into ``<*>``, so no secret reaches a template or the
    saved state.
    """
    text = _text(message)
    redacted = redact(text)
    if redacted == text:
        return list(toks)
    safe = set(_tokens(redacted))
    return [t if t in safe else WILDCARD for t in toks]


_PUNCT: Final = "\"'`()[]{}<>.,:;!?"


def _is_word(token: str) -> bool:
    """A plain word (``Started``, ``"GET``, ``(usable)``, ``user=root``), not a value."""
    return "<" not in token and token.strip(_PUNCT).replace("=", "", 1).isalpha()


# a word right after one of these (or in its key=value) is a value: a user or host name
_VALUE_KEYS: Final = frozenset({
    "user", "users", "username", "login", "account",
    "host", "hostname", "rhost", "ruser", "node", "for",
})  # fmt: skip


def _names_value(prev: str, token: str) -> bool:
    key, eq, _ = token.partition("=")
    if eq:
        return key.strip(_PUNCT).lower() in _VALUE_KEYS
    return prev.strip(_PUNCT).lower() in _VALUE_KEYS


def _score(template: list[str], toks: tuple[str, ...]) -> float:
    """Agreeing positions (a wildcard counts half); -1 when two plain words differ."""
    score = 0.0
    prev = ""
    for t, m in zip(template, toks, strict=True):
        if t == m:
            score += 1.0
        elif t == WILDCARD:
            score += 0.5
        elif _is_word(t) and _is_word(m) and not _names_value(prev, t):
            return -1.0  # two different plain words: another event, not a value
        prev = t
    return score


def _is_constant_word(token: str) -> bool:
    return token.isalpha()


class TemplateClusterer:
    """Online clusterer of messages into templates; persistable.

    Not thread-safe: guard one instance with a lock if threads share it.
    """

    __slots__ = ("_by_key", "_clusters", "_exact", "_ids", "_seen")

    def __init__(self) -> None:
        self._clusters: list[_Cluster] = []
        self._by_key: dict[tuple[int, str], list[_Cluster]] = {}
        self._exact: dict[tuple[str, ...], _Cluster] = {}
        self._seen: dict[str, _Cluster] = {}  # message text -> its cluster (bounded)
        self._ids: set[str] = set()

    def __len__(self) -> int:
        return len(self._clusters)

    def add(self, message: str) -> ClusterMatch:
        """Cluster one message, updating the clusters.

        Args:
            message: raw or normalized text (it is normalized here; normalizing twice
                is harmless).

        Returns:
            The cluster it joined or opened.
        """
        seen = self._seen
        c = seen.get(message) if type(message) is str else None
        if c is not None:  # the same text again: the same cluster, without tokenizing
            c.size += 1
            return ClusterMatch(c.cid, " ".join(c.tokens), is_new=False, changed=False)
        toks = _tokens(message)
        c = self._exact.get(toks)
        if c is not None:
            c.size += 1
            self._see(message, c)
            return ClusterMatch(c.cid, " ".join(c.tokens), is_new=False, changed=False)
        c = self._best(toks)
        if c is None:
            c = self._open(_safe_template(message, toks))
            self._remember(toks, c)
            self._see(message, c)
            return ClusterMatch(c.cid, " ".join(c.tokens), is_new=True, changed=True)
        changed = False
        for i, (t, m) in enumerate(zip(c.tokens, toks, strict=True)):
            if t not in (m, WILDCARD):
                c.tokens[i] = WILDCARD
                changed = True
        c.size += 1
        self._remember(toks, c)
        self._see(message, c)
        return ClusterMatch(c.cid, " ".join(c.tokens), is_new=False, changed=changed)

    def match(self, message: str) -> ClusterMatch | None:
        """Find the cluster a message would join, without changing anything.

        Returns:
            The match (``is_new`` and ``changed`` False), or None when ``add`` would
            open a new cluster.
        """
        c = self._seen.get(message) if type(message) is str else None
        if c is None:
            toks = _tokens(message)
            c = self._exact.get(toks) or self._best(toks)
        if c is None:
            return None
        return ClusterMatch(c.cid, " ".join(c.tokens), is_new=False, changed=False)

    def clusters(self) -> Iterator[TemplateCluster]:
        """Yield a snapshot of every cluster, oldest first."""
        for c in self._clusters:
            yield TemplateCluster(c.cid, " ".join(c.tokens), c.size)

    def to_json(self) -> bytes:
        """Serialize the clusters (ids, templates, sizes) with a version header."""
        state = _State(
            version=STATE_VERSION,
            masking_version=MASKING_VERSION,
            similarity=SIMILARITY,
            clusters=[_ClusterState(c.cid, list(c.tokens), c.size) for c in self._clusters],
        )
        return msgspec.json.encode(state)

    @classmethod
    def from_json(cls, data: bytes | str) -> TemplateClusterer:
        """Rebuild a clusterer saved by ``to_json``.

        Raises:
            ClusterStateError: the data is not a state this version wrote (bad JSON,
                wrong shape, unknown version, empty or duplicate clusters). Nothing is
                half-built: the error comes before any clusterer is returned.
        """
        try:
            state = msgspec.json.decode(data, type=_State)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise ClusterStateError(f"malformed clusterer state: {exc}") from exc
        except (RecursionError, UnicodeError, TypeError) as exc:
            raise ClusterStateError(
                f"malformed clusterer state: {decode_problem(exc)}") from None
        if state.version != STATE_VERSION:
            raise ClusterStateError(
                f"clusterer state version {state.version} is not supported "
                f"(this code reads version {STATE_VERSION})"
            )
        out = cls()
        for cs in state.clusters:
            if not cs.tokens or not cs.id or cs.size < 1 or cs.id in out._ids:
                raise ClusterStateError(f"invalid cluster entry in state: {cs.id!r}")
            if any(not t or " " in t for t in cs.tokens):
                raise ClusterStateError(f"invalid template tokens in cluster {cs.id!r}")
            c = _Cluster(cs.id, list(cs.tokens), cs.size)
            out._insert(c)
        return out

    # -- internals ---------------------------------------------------------------------

    def _key(self, toks: tuple[str, ...] | list[str]) -> tuple[int, str]:
        first = toks[0]
        return (len(toks), first if _is_constant_word(first) else WILDCARD)

    def _best(self, toks: tuple[str, ...]) -> _Cluster | None:
        n = len(toks)
        key = self._key(toks)
        cands = self._by_key.get(key, [])
        if key[1] != WILDCARD:
            cands = cands + self._by_key.get((n, WILDCARD), [])
        best = None
        best_score = SIMILARITY * n - 1e-9
        for c in cands:
            score = _score(c.tokens, toks)
            if score > best_score:  # strict: on a tie the older cluster wins
                best, best_score = c, score
        return best

    def _open(self, toks: list[str]) -> _Cluster:
        digest = hashlib.blake2b(
            "\x1f".join(toks).encode("utf-8", "surrogatepass"), digest_size=6
        ).hexdigest()
        cid = "t" + digest
        k = 1
        while cid in self._ids:  # the same first message twice can only follow a reload
            k += 1
            cid = f"t{digest}-{k}"
        c = _Cluster(cid, list(toks), 1)
        self._insert(c)
        return c

    def _insert(self, c: _Cluster) -> None:
        self._clusters.append(c)
        self._ids.add(c.cid)
        self._by_key.setdefault(self._key(c.tokens), []).append(c)

    def _remember(self, toks: tuple[str, ...], c: _Cluster) -> None:
        if len(self._exact) >= _EXACT_CACHE_MAX:
            self._exact.clear()
        self._exact[toks] = c

    def _see(self, message: str, c: _Cluster) -> None:
        if type(message) is str:
            if len(self._seen) >= _EXACT_CACHE_MAX:
                self._seen.clear()
            self._seen[message] = c
