"""Online template clustering over normalized messages.

The signature keeps apart what differs in a word (another user, host or word value);
a person calls those the same failure. ``TemplateClusterer`` groups them: each message
is normalized (``normalize_message``), split into tokens, and joined to the most
similar cluster of the same token count when enough positions agree; the positions
that disagree become ``<*>`` in the cluster's template. The state saves to JSON and
loads back, so clusters (and their ids) hold across sessions.

Algorithm (one setting for every log source; the figures are in bench/bench_loghub.py):

- tokens: the normalized text split on spaces, a run of one repeated token kept once
  (``blk_<int> blk_<int> blk_<int>`` is a list of any length);
- candidates: clusters with the same token count and the same first token when that
  token is a constant word, else all clusters of that token count;
- similarity: the share of positions where the template token equals the message token,
  a ``<*>`` position counting as half a match; join when it is at least
  ``SIMILARITY``, the best candidate winning (ties: the older cluster);
- a veto: two different plain words at one position (``Started``/``Stopped``,
  ``"GET``/``"POST``, ``(usable)``/``(reserved)``, ``user=root``/``user=guest``) mean
  another event, not a value, unless the word names a value by position: it follows
  (or is the value of) a key from a short generic list (``user``, ``host``, ``account``,
  ``for`` ...), so ``Invalid user chen`` and ``Invalid user support`` join;
- an exact repeat of a token sequence seen before goes to the same cluster without a
  scan.

Caveat: a first pass is order dependent, as any online clusterer: a cluster's
template only ever generalizes, so a message seen early may have joined a cluster a
later one would not.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Final

import msgspec

from failcode._failure import decode_problem
from failcode._normalize import NORMALIZE_VERSION, normalize_message

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["ClusterMatch", "ClusterStateError", "TemplateCluster", "TemplateClusterer"]

WILDCARD: Final = "<*>"
_EMPTY: Final = "<empty>"  # the one token of an empty (or all-whitespace) message
SIMILARITY: Final = 0.6
"""Share of agreeing positions needed to join a cluster (wildcards count half)."""

STATE_VERSION: Final = 1
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
    normalize_version: str
    similarity: float
    clusters: list[_ClusterState]


class _Cluster:
    __slots__ = ("cid", "size", "tokens")

    def __init__(self, cid: str, tokens: list[str], size: int) -> None:
        self.cid = cid
        self.tokens = tokens
        self.size = size


def _tokens(message: str) -> tuple[str, ...]:
    out: list[str] = []
    last = None
    for w in normalize_message(message).split():
        if w != last:
            out.append(w)
            last = w
    if not out:
        return (_EMPTY,)
    return tuple(out)


_PUNCT: Final = "\"'`()[]{}<>.,:;!?"


def _is_word(token: str) -> bool:
    """A plain word (``Started``, ``"GET``, ``(usable)``, ``user=root``), not a value."""
    return token.strip(_PUNCT).replace("=", "", 1).isalpha()


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

    __slots__ = ("_by_key", "_clusters", "_exact", "_ids")

    def __init__(self) -> None:
        self._clusters: list[_Cluster] = []
        self._by_key: dict[tuple[int, str], list[_Cluster]] = {}
        self._exact: dict[tuple[str, ...], _Cluster] = {}
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
        toks = _tokens(message)
        c = self._exact.get(toks)
        if c is not None:
            c.size += 1
            return ClusterMatch(c.cid, " ".join(c.tokens), is_new=False, changed=False)
        c = self._best(toks)
        if c is None:
            c = self._open(toks)
            self._remember(toks, c)
            return ClusterMatch(c.cid, " ".join(c.tokens), is_new=True, changed=True)
        changed = False
        for i, (t, m) in enumerate(zip(c.tokens, toks, strict=True)):
            if t not in (m, WILDCARD):
                c.tokens[i] = WILDCARD
                changed = True
        c.size += 1
        self._remember(toks, c)
        return ClusterMatch(c.cid, " ".join(c.tokens), is_new=False, changed=changed)

    def match(self, message: str) -> ClusterMatch | None:
        """Find the cluster a message would join, without changing anything.

        Returns:
            The match (``is_new`` and ``changed`` False), or None when ``add`` would
            open a new cluster.
        """
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
            normalize_version=NORMALIZE_VERSION,
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

    def _open(self, toks: tuple[str, ...]) -> _Cluster:
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
