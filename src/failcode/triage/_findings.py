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
  were first seen. ``--rank`` (:data:`RANKS`) orders by another measure first: ``cost`` the
  dollars the failing steps' model turns cost, ``tokens`` their tokens, ``time`` the seconds
  from each failure to the next step that succeeded (:mod:`failcode.triage.analysis._cost`);
  a finding whose measure is unknown (a log that records no tokens or times) comes after those
  with one, then the default order decides.
- **Tokens, dollars, time**: the sums over the finding's failing steps of what
  :mod:`failcode.triage.analysis._cost` charged each; ``usd_unknown`` counts the failing
  steps whose dollars are unknown (no tokens in the log, or a model the price table does not
  have), so a sum is never read as complete when it is not.
- **Who acts**: the category in words (:data:`WHO_ACTS`).
- **Example**: the first occurrence (file, session, step, evidence), a place a person can
  open.
- **Suggested**: for a finding the rules left unknown (:func:`failcode.learned.
  wants_suggestion`: ``unknown_error``, or ``command_error`` of class ``unknown``), what the
  learned model suggests for its **first occurrence** (example 1): its command (the
  evidence), its exit status (``metadata["exit_code"]``) and its output as the record keeps
  it (the detail: the diagnostic's lines, else the output's last 20 lines), by
  :func:`failcode.learned.suggest_for`. One model call per unknown finding, made when the
  finding is first seen; None when the model is below its threshold. A suggestion is shown
  beside the finding and never changes its code, kind, category or rank. It is computed from
  the records every run, so a cached input (whose records the cache keeps) gets the current
  model's suggestion.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from failcode.render._headline import headline
from failcode.signature._cluster import TemplateClusterer
from failcode.triage._result import Tokens, short_count, usd_words
from failcode.triage._versions import rises

if TYPE_CHECKING:
    from failcode import Failure
    from failcode.learned import Suggestion
    from failcode.triage._result import FailureEntry, SessionResult

__all__ = ["RANKS", "RANK_WORDS", "WHO_ACTS", "Finding", "Findings", "Occurrence", "headline",
           "record_suggestion", "suggested_words", "suggestion"]

RANKS: Final = ("steps", "cost", "tokens", "time")
"""The orders ``--rank`` takes; ``steps`` is the default (the module's rank)."""
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


def _duration(seconds: float) -> str:
    """``40 s``, ``3 min``, ``2.5 h``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


RANK_WORDS: Final = {"steps": "by cost in steps", "cost": "by dollars", "tokens": "by tokens",
                     "time": "by time to recover"}
"""How a report's heading names each order of :data:`RANKS`."""


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
    tokens: Tokens | None = None
    """The tokens of the model turns its failing steps cost; None: no log recorded any."""
    usd: float | None = None
    """What those turns cost in US dollars, over the steps with a price; None: none had."""
    usd_unknown: int = 0
    """Failing steps whose dollars are unknown."""
    priced_as: set[str] = field(default_factory=set)
    """The price table's names of the models priced."""
    recovery_s: float | None = None
    """Seconds from each failure to the next step that succeeded, summed; None: none did."""
    versions: dict[tuple[str, str], int] = field(default_factory=dict)
    """Sessions hit per (agent, version), where the log records the version."""
    suggested: Suggestion | None = None
    """The learned model's suggestion for its first occurrence when the rules left it unknown
    (the module's rules); None otherwise. Never changes the code, kind, category or rank."""

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
                "tokens": self.tokens.to_dict() if self.tokens is not None else None,
                "usd": None if self.usd is None else round(self.usd, 6),
                "usd_unknown": self.usd_unknown, "priced_as": sorted(self.priced_as),
                "recovery_s": None if self.recovery_s is None else round(self.recovery_s, 3),
                "variants": self.variants, "signatures": list(self.signatures),
                "examples": [example.to_dict() for example in self.examples],
                "suggested": None if self.suggested is None else self.suggested.to_dict()}

    def spent(self) -> str:
        """Dollars, tokens and time in a few words (``$0.042 · 51.2k tokens · 2 min to
        recover``; a ``+`` after the dollars: some failing steps had no price); "" when the
        logs recorded none of them."""
        parts = []
        if dollars := usd_words(self.usd, self.usd_unknown):
            parts.append(dollars)
        if self.tokens is not None:
            parts.append(f"{short_count(self.tokens.total)} tokens")
        if self.recovery_s is not None:
            parts.append(f"{_duration(self.recovery_s)} to recover")
        return " · ".join(parts)

    def measure(self, by: str) -> float | None:
        """The finding's measure for the order ``by`` (:data:`RANKS`); None: unknown."""
        if by == "cost":
            return self.usd
        if by == "tokens":
            return None if self.tokens is None else float(self.tokens.total)
        if by == "time":
            return self.recovery_s
        return float(self.cost)

    def spend(self, entry: FailureEntry) -> None:
        """Count one failing step's tokens, dollars and recovery time in."""
        if entry.tokens is not None:
            if self.tokens is None:
                self.tokens = Tokens()
            self.tokens.add(entry.tokens)
        if entry.usd is None:
            self.usd_unknown += 1
        else:
            self.usd = (self.usd or 0.0) + entry.usd
            if entry.priced_as:
                self.priced_as.add(entry.priced_as)
        if entry.recovery_s is not None:
            self.recovery_s = (self.recovery_s or 0.0) + entry.recovery_s


def suggested_words(suggested: Suggestion) -> str:
    """A suggestion as the reports show it, marked as one: ``suggested (learned, 87%):
    build_error / undeclared_identifier — like gcc: error: 'x' undeclared`` (the nearest known
    example's program and excerpt, when there is one)."""
    klass = f" / {suggested.klass}" if suggested.klass and suggested.klass != "unknown" else ""
    words = f"suggested (learned, {suggested.confidence:.0%}): {suggested.kind}{klass}"
    if suggested.nearest:
        near = suggested.nearest[0]
        excerpt = near.excerpt if len(near.excerpt) <= 100 else near.excerpt[:99] + "…"
        words += f" — like {near.program}: {excerpt}"
    return words


def suggestion(entry: FailureEntry) -> Suggestion | None:
    """The learned model's suggestion for one failing step the rules left unknown (None for a
    known one, or below the model's threshold): :func:`record_suggestion` of its record, with
    its evidence as the command."""
    return record_suggestion(entry.failure, entry.evidence)


def record_suggestion(failure: Failure, command: str | None) -> Suggestion | None:
    """The learned model's suggestion for a record the rules left unknown (None for a known
    one, or below the model's threshold): ``command`` (the command line as triage shows it)
    when the record is a command's failure (it names a ``program``; else no command), its exit
    status (``metadata["exit_code"]``) and the output the record keeps (its detail). The
    service's finding page asks the same of a stored record."""
    from failcode.learned import suggest_for, wants_suggestion  # noqa: PLC0415 - on first use

    if not wants_suggestion(failure):
        return None
    metadata = failure.metadata
    status = metadata.get("exit_code")
    argv = command if "program" in metadata else None
    return suggest_for(failure, argv, status if isinstance(status, int) else None,
                       failure.detail or "")


class Findings:
    """Findings built one session at a time (sessions in report order); memory grows with
    the findings, never with the sessions."""

    __slots__ = ("_by_key", "_clusterers", "_findings", "_keep_all", "_versions", "rank_by")

    def __init__(self, *, keep_all: bool = False) -> None:
        self.rank_by = "steps"
        """The order of :meth:`ranked` (:data:`RANKS`)."""
        self._clusterers: dict[str, TemplateClusterer] = {}
        self._by_key: dict[tuple[str, str], Finding] = {}
        self._findings: dict[str, Finding] = {}  # signature -> its finding
        self._keep_all = keep_all
        """Keep every occurrence (the drill-down), not only the first few examples."""
        self._versions: dict[tuple[str, str], int] = {}
        """Sessions per (agent, version), where the log records the version."""

    def _finding(self, entry: FailureEntry) -> Finding:
        failure = entry.failure
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
                order=len(self._by_key), suggested=suggestion(entry))
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
            finding = self._finding(entry)
            by_signature[signature] = finding
            hit[id(finding)] = finding
            finding.count += 1
            finding.spend(entry)
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
        version = (session.format, session.agent_version) if session.agent_version else None
        if version is not None:
            self._versions[version] = self._versions.get(version, 0) + 1
        for key, finding in hit.items():
            finding.sessions += 1
            finding.cost += len(spent.get(key, ())) + unnumbered.get(key, 0)
            if version is not None:
                finding.versions[version] = finding.versions.get(version, 0) + 1

    def find(self, signature: str) -> Finding | None:
        """The finding a signature folded into, if it was seen."""
        return self._findings.get(signature)

    def ranked(self) -> list[Finding]:
        """The findings, most costly first (the module's rank, by :attr:`rank_by`)."""
        by = self.rank_by

        def key(f: Finding) -> tuple[bool, float, int, int, int, int]:
            measure = f.measure(by) if by != "steps" else None
            return (by != "steps" and measure is None, -(measure or 0.0), -f.cost, -f.count,
                    -f.sessions, f.order)

        return sorted(self._by_key.values(), key=key)

    def regressions(self) -> list[dict[str, Any]]:
        """The findings whose share of an agent version's sessions rose beyond chance from the
        previous version's (:func:`failcode.triage._versions.rises`; a transient failure, the
        provider's moment, is never one), in rank order: the
        finding's code and headline, the agent, both versions, sessions hit and sessions."""
        out = []
        for finding in self.ranked():
            if finding.category == "transient":
                continue  # the provider's moment, not the version's doing
            for (agent, before), (_, after) in rises(self._versions, finding.versions):
                out.append({
                    "code": finding.code, "message": finding.message, "who": finding.who,
                    "agent": agent, "version": after, "previous": before,
                    "sessions_hit": finding.versions.get((agent, after), 0),
                    "sessions": self._versions[(agent, after)],
                    "previous_sessions_hit": finding.versions.get((agent, before), 0),
                    "previous_sessions": self._versions[(agent, before)]})
        return out

    def to_list(self) -> list[dict[str, Any]]:
        """The ranked findings as JSON values (``rank`` from 1)."""
        return [finding.to_dict(rank) for rank, finding in enumerate(self.ranked(), 1)]
