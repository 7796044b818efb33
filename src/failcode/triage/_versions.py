"""Agent versions in order, and the findings whose rate rose from one version to the next.

Rules:

- **Order** (:func:`version_key`): numbers compare as numbers (``1.10.0 > 1.9.2``); a
  pre-release (``1.4.0rc1``, ``1.4.0-beta.2``, ``dev``) sorts before its release; a version
  with no number compares as text after every numbered one. The service orders versions the
  same way (a finding resolved in a version reopens from that version on).
- **Significant** (:func:`significant`): two shares of sessions hit differ by at least 1.96
  standard errors of a two-proportion test on the pooled share (about 95%). With a handful of
  sessions nothing is significant: a single session that failed once is noise. Comparing two
  runs (``--baseline``, ``--changed-at``) uses the same test.
- **Regression** (:func:`rises`): a finding's share of an agent version's sessions hit is
  above its share of the previous version's (the agent's next lower version that has sessions
  in the run), and a one-sided Fisher exact test puts the chance of a rise at least that large,
  were both versions alike, under 5%. A version often has a handful of sessions, where the
  normal approximation above would flag one session that failed once (1 of 1 against 0 of 12:
  the exact chance is 1 in 13). Only versions the logs record count; a version is compared with
  its predecessor only, so a slow climb over many versions is not flagged.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["rise_chance", "rises", "significant", "version_key"]

_PRE: Final = re.compile(r"(?i)(dev|a|alpha|b|beta|c|rc|pre|preview)")
_Z: Final = 1.96
_CHANCE: Final = 0.05


def version_key(version: str) -> tuple[Any, ...]:
    """A sort key for an agent version (see the module): numbers compare as numbers, a
    pre-release before its release, a version without numbers after every numbered one."""
    text = version.strip().lstrip("vV")
    numbers = re.match(r"\d+(?:\.\d+)*", text)
    if numbers is None:
        return (1, (), 0, text)
    release = tuple(int(part) for part in numbers.group(0).split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    rest = text[numbers.end():].lstrip(".-_+")
    pre = 1 if not rest or rest.startswith(("post", "+")) else (0 if _PRE.match(rest) else 1)
    return (0, release, pre, rest)


def significant(hits_old: int, n_old: int, hits_new: int, n_new: int) -> bool:
    """Whether ``hits_new`` of ``n_new`` differs from ``hits_old`` of ``n_old`` beyond noise
    (the module's rule); False when either side has no sessions."""
    if not n_old or not n_new:
        return False
    pooled = (hits_old + hits_new) / (n_old + n_new)
    if pooled in (0.0, 1.0):
        return False
    error = math.sqrt(pooled * (1 - pooled) * (1 / n_old + 1 / n_new))
    return abs(hits_new / n_new - hits_old / n_old) >= _Z * error


def _log_choose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def rise_chance(hits_old: int, n_old: int, hits_new: int, n_new: int) -> float:
    """The one-sided Fisher exact p-value: the chance that ``n_new`` sessions drawn from both
    versions' sessions hold ``hits_new`` or more of the hits, were the versions alike."""
    total, hits = n_old + n_new, hits_old + hits_new
    log_all = _log_choose(total, n_new)
    chance = 0.0
    for k in range(hits_new, min(hits, n_new) + 1):
        if n_new - k > total - hits:
            continue
        chance += math.exp(_log_choose(hits, k) + _log_choose(total - hits, n_new - k)
                           - log_all)
    return min(chance, 1.0)


def rises(sessions: Mapping[tuple[str, str], int],
          hits: Mapping[tuple[str, str], int]) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """The (previous, version) pairs, each an ``(agent, version)``, where a finding hit
    more of the version's sessions than of its predecessor's, beyond chance (the module's
    rule); ``sessions`` are the run's sessions per agent version, ``hits`` the finding's."""
    by_agent: dict[str, list[str]] = {}
    for agent, version in sessions:
        by_agent.setdefault(agent, []).append(version)
    out = []
    for agent, versions in sorted(by_agent.items()):
        ordered = sorted(versions, key=version_key)
        for before, after in itertools.pairwise(ordered):
            old, new = (agent, before), (agent, after)
            n_old, n_new = sessions[old], sessions[new]
            h_old, h_new = hits.get(old, 0), hits.get(new, 0)
            if h_new * n_old > h_old * n_new and rise_chance(h_old, n_old, h_new,
                                                             n_new) < _CHANCE:
                out.append((old, new))
    return out
