"""What to fix first: triage's failures folded into findings and ranked by what they cost.

A **finding** is one failure people would fix once: the failing steps of one code whose
headline falls into one message template (:class:`~failcode.signature.TemplateClusterer`, the
store's clusters), so signatures that differ only in a value (another module, path or test
name in the same sentence) fold into one finding with ``variants``. The rules:

- **Headline** (:func:`failcode.headline`, shared with ``render_user``'s heading): the
  failure's own sentence (``message``). When the code's sentence names
  nothing but the program and its status (``FC-CMD-003`` "The command python exited with status
  1.", the build, test, lint, merge, debug and doctor codes that "failed", ``FC-SYS-001``), the
  headline adds what the detail says failed: the detail line that starts with the exception
  type the classifier read (``metadata["diagnostic"]``), else the last exception line
  (``pkg.SomeError: message``), else the first compiler or linter diagnostic
  (``path:line[:col]: message``), else the first detail line that reads as an error, else the
  first line: "The command python exited with status 1: ImportError: cannot import name
  'StringParser' from 'pkg'".
- **Cost**: the steps a finding took from the sessions it hit. Per session, the failing steps
  of its signatures, plus the steps between two consecutive steps of a loop holding one of
  them when they are at most 5 steps apart (the agent's tries at it between two failures; a
  longer gap is other work), each step counted once; a failure without a step number counts
  one.
  The formats triage reads do not all record wall time or tokens per step, so cost is in
  steps, the one unit every format has.
- **Rank**: cost, then failing steps, then sessions, most first; ties keep the order findings
  were first seen.
- **Who acts**: the category in words (:data:`WHO_ACTS`).
- **Example**: the first occurrence (file, session, step, evidence), a place a person can
  open.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from failcode.render._headline import headline
from failcode.signature._cluster import TemplateClusterer

if TYPE_CHECKING:
    from failcode import Failure
    from failcode.triage._result import SessionResult

__all__ = ["WHO_ACTS", "Finding", "Findings", "Occurrence", "headline"]
# ``headline`` lives in the render layer (render_user's heading says the same)

WHO_ACTS: Final = {
    "task": "the agent",
    "environment": "the environment's owner",
    "user": "the user",
    "transient": "nobody (a retry can help)",
    "defect": "a developer (a defect)",
}
"""Who must act, per category, in words."""

_EXAMPLES: Final = 3
_DETAIL_LINES: Final = 8
_GAP: Final = 5


def _consumed(steps: tuple[int, ...]) -> set[int]:
    """A loop's steps and the tries between two of them at most :data:`_GAP` apart."""
    out = set(steps)
    for a, b in itertools.pairwise(steps):
        if b - a <= _GAP:
            out.update(range(a, b))
    return out


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One failing step of a finding: where it is and what it showed."""

    path: str
    session: str
    step: int | None
    signature: str
    evidence: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "session": self.session, "step": self.step,
                "signature": self.signature, "evidence": self.evidence}


@dataclass(slots=True)
class Finding:
    """One thing to fix: its code, who acts, headline, remedy, counts and examples."""

    code: str
    kind: str
    category: str
    message: str
    remedy: str | None
    count: int = 0
    sessions: int = 0
    cost: int = 0
    signatures: dict[str, int] = field(default_factory=dict)
    """Variant signatures with their failing steps, first seen first."""
    examples: list[Occurrence] = field(default_factory=list)
    order: int = 0

    @property
    def who(self) -> str:
        """Who must act, in words."""
        return WHO_ACTS.get(self.category, self.category)

    @property
    def variants(self) -> int:
        return len(self.signatures)

    def to_dict(self, rank: int) -> dict[str, Any]:
        return {"rank": rank, "code": self.code, "kind": self.kind, "category": self.category,
                "who": self.who, "message": self.message, "remedy": self.remedy,
                "count": self.count, "sessions": self.sessions, "cost": self.cost,
                "variants": self.variants, "signatures": list(self.signatures),
                "examples": [example.to_dict() for example in self.examples]}


class Findings:
    """Findings built one session at a time (sessions in report order); memory grows with
    the findings, never with the sessions."""

    __slots__ = ("_by_key", "_clusterers", "_findings", "_keep_all")

    def __init__(self, *, keep_all: bool = False) -> None:
        self._clusterers: dict[str, TemplateClusterer] = {}
        self._by_key: dict[tuple[str, str], Finding] = {}
        self._findings: dict[str, Finding] = {}  # signature -> its finding
        self._keep_all = keep_all
        """Keep every occurrence (the drill-down), not only the first few examples."""

    def _finding(self, failure: Failure) -> Finding:
        found = self._findings.get(failure.signature)
        if found is not None:
            return found
        text = headline(failure)
        clusterer = self._clusterers.setdefault(failure.code, TemplateClusterer())
        key = (failure.code, clusterer.add(text).cluster_id)
        found = self._by_key.get(key)
        if found is None:
            found = self._by_key[key] = Finding(
                failure.code, str(failure.kind), str(failure.category), text, failure.remedy,
                order=len(self._by_key))
        elif found.remedy is None and failure.remedy:
            found.remedy = failure.remedy
        self._findings[failure.signature] = found
        return found

    def add(self, session: SessionResult) -> None:
        """Count one session's failures into their findings."""
        spent: dict[int, set[int]] = {}  # id(finding) -> the steps it cost in this session
        unnumbered: dict[int, int] = {}  # id(finding) -> its failures without a step
        hit: dict[int, Finding] = {}
        by_signature: dict[str, Finding] = {}
        for entry in session.failures:
            signature = entry.failure.signature
            finding = self._finding(entry.failure)
            by_signature[signature] = finding
            hit[id(finding)] = finding
            finding.count += 1
            finding.signatures[signature] = finding.signatures.get(signature, 0) + 1
            if entry.step is None:
                unnumbered[id(finding)] = unnumbered.get(id(finding), 0) + 1
            else:
                spent.setdefault(id(finding), set()).add(entry.step)
            if self._keep_all or len(finding.examples) < _EXAMPLES:
                finding.examples.append(Occurrence(
                    session.path, session.session, entry.step, signature, entry.evidence,
                    "\n".join((entry.failure.detail or "").splitlines()[:_DETAIL_LINES])))
        for loop in session.loops:
            for signature in loop.signatures or (loop.signature,):
                looped = by_signature.get(signature)
                if looped is not None:
                    spent.setdefault(id(looped), set()).update(_consumed(loop.steps))
        for key, finding in hit.items():
            finding.sessions += 1
            finding.cost += len(spent.get(key, ())) + unnumbered.get(key, 0)

    def find(self, signature: str) -> Finding | None:
        """The finding a signature folded into, if it was seen."""
        return self._findings.get(signature)

    def ranked(self) -> list[Finding]:
        """The findings, most costly first (the module's rank)."""
        return sorted(self._by_key.values(),
                      key=lambda f: (-f.cost, -f.count, -f.sessions, f.order))

    def to_list(self) -> list[dict[str, Any]]:
        """The ranked findings as JSON values (``rank`` from 1)."""
        return [finding.to_dict(rank) for rank, finding in enumerate(self.ranked(), 1)]
