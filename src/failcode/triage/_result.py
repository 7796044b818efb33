"""The triage result: one in-memory object every renderer reads (terminal, JSON, HTML).

A store can later build the same object from recorded events, so a report renders the same
whatever produced it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import msgspec

# at run time, not only for type checkers: the triage cache decodes these dataclasses with
# msgspec, which resolves their annotations (failcode.triage.analysis._cache)
from failcode import Failure, NonErrorOutcome  # noqa: TC001

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "FORMAT_VERSION",
    "FailureEntry",
    "InputResult",
    "Loop",
    "OutcomeEntry",
    "SessionResult",
    "Tables",
    "Tokens",
    "TriageResult",
]

FORMAT_VERSION: Final = 1


@dataclass(slots=True)
class Tokens:
    """The tokens of model turns, as the log records them (:class:`failcode.triage._events.
    Usage`): input not read from or written to the prompt cache, output (reasoning in it),
    cache reads, cache writes, and how many turns."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    turns: int = 0

    @property
    def total(self) -> int:
        """Every token of the turns, whatever it cost."""
        return self.input + self.output + self.cache_read + self.cache_write

    def add(self, other: Tokens) -> None:
        """Count ``other``'s turns in too."""
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write
        self.turns += other.turns

    def to_dict(self) -> dict[str, int]:
        return {"input": self.input, "output": self.output, "cache_read": self.cache_read,
                "cache_write": self.cache_write, "total": self.total, "turns": self.turns}


def usd_words(usd: float | None, unknown: int) -> str | None:
    """Dollars as a report shows them: ``$0.042``, a ``+`` after them when ``unknown`` more had
    no price; None when there are none to show (no price, or $0 beside unknown ones)."""
    if usd is None or (not usd and unknown):
        return None
    return f"${usd:,.3f}{'+' if unknown else ''}"


def short_count(count: int) -> str:
    """``812``, ``51.2k``, ``3.4M``."""
    if count < 1000:
        return f"{count}"
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


@dataclass(slots=True)
class Breakdown:
    """One model's or agent version's sessions (where the log records which): how many, how
    many failed, their failures, and what those cost: every turn's tokens, the tokens of the
    turns the failures cost, and their dollars (over the failures with a price; the others
    counted in ``usd_unknown``). None: no session's log recorded it.

    ``recorded_usd`` is what the sessions cost as their logs record it (the sum of
    :attr:`SessionResult.recorded_usd` over the ``recorded_sessions`` sessions that have one;
    None when none has): the agent's own total, beside what failcode charged the failures."""

    sessions: int = 0
    failing: int = 0
    failures: int = 0
    tokens: int | None = None
    failure_tokens: int | None = None
    usd: float | None = None
    usd_unknown: int = 0
    recorded_usd: float | None = None
    recorded_sessions: int = 0

    def add(self, session: SessionResult) -> None:
        """Count one more session in."""
        self.sessions += 1
        self.failing += bool(session.failures)
        self.failures += len(session.failures)
        if session.tokens is not None:
            self.tokens = (self.tokens or 0) + session.tokens.total
        for entry in session.failures:
            if entry.tokens is not None:
                self.failure_tokens = (self.failure_tokens or 0) + entry.tokens.total
            if entry.usd is None:
                self.usd_unknown += 1
            else:
                self.usd = (self.usd or 0.0) + entry.usd
        if session.recorded_usd is not None:
            self.recorded_usd = (self.recorded_usd or 0.0) + session.recorded_usd
            self.recorded_sessions += 1

    def failures_spent(self) -> str:
        """What the failures cost in a few words (``failures spent $0.412 · 88.1k tokens of
        1.2M``; a ``+`` after the dollars: some failures had no price); "" when the logs
        recorded no tokens."""
        if self.tokens is None:
            return ""
        parts = []
        if dollars := usd_words(self.usd, self.usd_unknown):
            parts.append(dollars)
        parts.append(f"{short_count(self.failure_tokens or 0)} tokens of "
                     f"{short_count(self.tokens)}")
        return "failures spent " + " · ".join(parts)

    def recorded(self) -> str:
        """What the sessions cost as their logs record it (``sessions cost $12.360 as recorded
        (15 of 15)``: the sum, over how many of the sessions recorded one); "" when none
        did."""
        if self.recorded_usd is None:
            return ""
        return (f"sessions cost ${self.recorded_usd:,.3f} as recorded "
                f"({self.recorded_sessions:,} of {self.sessions:,})")

    def spent(self) -> str:
        """The row's cost line: :meth:`failures_spent` (when there are failures) and
        :meth:`recorded`, those that say something, joined by `` · ``; "" when neither
        does (a row without tokens still shows its recorded totals)."""
        parts = (self.failures_spent() if self.failures else "", self.recorded())
        return " · ".join(part for part in parts if part)

    def counts(self) -> list[int]:
        """Sessions, sessions with failures, failures."""
        return [self.sessions, self.failing, self.failures]

    def to_dict(self) -> dict[str, Any]:
        return {"sessions": self.sessions, "failing_sessions": self.failing,
                "failures": self.failures, "tokens": self.tokens,
                "failure_tokens": self.failure_tokens,
                "failure_usd": None if self.usd is None else round(self.usd, 6),
                "failure_usd_unknown": self.usd_unknown,
                "recorded_usd": (None if self.recorded_usd is None
                                 else round(self.recorded_usd, 6)),
                "recorded_sessions": self.recorded_sessions}


@dataclass(slots=True)
class FailureEntry:
    """One failure at one step (the same failure logged again counts in ``repeats``)."""

    step: int | None
    source: str
    evidence: str
    failure: Failure
    repeats: int = 1
    timestamp: float | None = None
    masked: bool = False
    """The command exited 0, but its output shows this failure (a filter, ``|| true`` or a
    wrapper hid the status)."""
    actor: str | None = None
    """The agent that took the step, in a team of agents (AG2's ``name``, AutoGen's
    ``source``); None when the format has no agents of its own."""
    tokens: Tokens | None = None
    """The model turns that read this failure, up to the next step
    (:mod:`failcode.triage.analysis._cost`); None when the log records no tokens."""
    usd: float | None = None
    """What those turns cost in US dollars (:attr:`priced_as`); None when unknown: no tokens,
    or a model the price table does not have."""
    priced_as: str | None = None
    """The price table's model the turns were priced as (``claude-sonnet-4-5``)."""
    recovery_s: float | None = None
    """Seconds from this failure to the session's next step that did not fail; None when none
    came or the log has no times."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON entry; ``actor`` only when the format names one (older documents and
        single-agent formats have none)."""
        entry: dict[str, Any] = {
            "step": self.step, "source": self.source, "evidence": self.evidence,
            "repeats": self.repeats, "timestamp": self.timestamp, "masked": self.masked,
            "failure": self.failure.to_dict(),
            "tokens": self.tokens.to_dict() if self.tokens is not None else None,
            "usd": self.usd, "priced_as": self.priced_as, "recovery_s": self.recovery_s}
        if self.actor is not None:
            entry["actor"] = self.actor
        return entry


@dataclass(frozen=True, slots=True)
class OutcomeEntry:
    """A non-error outcome: a probe that found nothing, a rejected action..."""

    step: int | None
    source: str
    evidence: str
    outcome: NonErrorOutcome
    actor: str | None = None
    """The agent that took the step, in a team of agents (see :attr:`FailureEntry.actor`)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON entry; ``actor`` only when the format names one."""
        outcome = msgspec.to_builtins(self.outcome)
        entry: dict[str, Any] = {"step": self.step, "source": self.source,
                                 "evidence": self.evidence, "outcome": outcome}
        if self.actor is not None:
            entry["actor"] = self.actor
        return entry


@dataclass(frozen=True, slots=True)
class Loop:
    """One root cause failing again and again in a session (the rule: ``_loops``)."""

    signature: str
    """The signature failing at the loop's first step."""
    steps: tuple[int, ...]
    cause: str = ""
    """The cause key the loop's failures share (``timeout:*``, ``missing_dependency:*``,
    ``<class>:<location>``, or the signature); empty: the signature."""
    signatures: tuple[str, ...] = ()
    """Every signature failing at the loop's steps, first seen first; empty: ``signature``."""

    def to_dict(self) -> dict[str, Any]:
        return {"signature": self.signature, "steps": list(self.steps),
                "cause": self.cause or self.signature,
                "signatures": list(self.signatures or (self.signature,))}


@dataclass(slots=True)
class SessionResult:
    """What triage found in one session."""

    session: str
    path: str
    format: str
    steps: int
    status: str
    ended_failure: Failure | None
    failures: list[FailureEntry] = field(default_factory=list)
    outcomes: list[OutcomeEntry] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)
    model: str | None = None
    """The model the session ran, where the format records it."""
    agent_version: str | None = None
    """The agent's version, where the format records it."""
    verdict: str | None = None
    """A benchmark harness's grade of the task, where the format records one (``passed``,
    ``partial``, ``failed``, ``ungraded``: a Harbor trial's verifier)."""
    reward: float | None = None
    """The verifier's reward behind :attr:`verdict`."""
    tokens: Tokens | None = None
    """Every model turn of the session; None when the log records no tokens."""
    started: float | None = None
    """The earliest time the log gives a step or turn of the session (seconds since the
    epoch, UTC); None when it gives none. ``--since``, ``--until`` and ``--changed-at`` read
    it."""
    recorded_usd: float | None = None
    """What the whole session cost in US dollars as its log records it (the agent's own total:
    :attr:`failcode.triage._events.SessionEnd.recorded_usd`); None when the log records none.
    Never charged to a failure."""

    def to_dict(self) -> dict[str, Any]:
        failure = self.ended_failure.to_dict() if self.ended_failure is not None else None
        ended: dict[str, Any] = {"status": self.status, "failure": failure}
        if self.verdict is not None:
            ended |= {"verdict": self.verdict, "reward": self.reward}
        return {
            "session": self.session, "path": self.path, "format": self.format,
            "steps": self.steps, "ended": ended,
            "failures": [entry.to_dict() for entry in self.failures],
            "outcomes": [entry.to_dict() for entry in self.outcomes],
            "loops": [loop.to_dict() for loop in self.loops],
            "model": self.model, "agent_version": self.agent_version,
            "tokens": self.tokens.to_dict() if self.tokens is not None else None,
            "started": self.started,
            "recorded_usd": (None if self.recorded_usd is None
                             else round(self.recorded_usd, 6)),
        }


@dataclass(frozen=True, slots=True)
class InputResult:
    """One input (a file): its format, how many sessions, and what was wrong with it."""

    path: str
    format: str | None
    sessions: int
    error_code: str | None = None
    error_message: str | None = None
    size: int = 0

    def to_dict(self) -> dict[str, Any]:
        error = None if self.error_code is None else {
            "code": self.error_code, "message": self.error_message}
        return {"path": self.path, "format": self.format, "sessions": self.sessions,
                "error": error}


@dataclass(slots=True)
class TriageResult:
    """Everything triage found: inputs, sessions, and the tables over them."""

    inputs: list[InputResult] = field(default_factory=list)
    sessions: list[SessionResult] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Files found by walking folders that are not session logs (not read; no error)."""
    cached_inputs: int | None = None
    """Inputs taken from the triage cache (an incremental run); None when the run used no
    cache. Not in :meth:`to_dict`: the document is the same whatever came from the cache."""
    resumed_inputs: int | None = None
    """Inputs that only grew since the last run, read from where it stopped (an incremental
    run); None when the run used no cache."""

    @property
    def ok(self) -> bool:
        """True when every input was read in full (exit status 0)."""
        return all(item.error_code is None for item in self.inputs)

    def signatures(self) -> list[dict[str, Any]]:
        """Per signature: code, kind, category, count of failing steps, sessions; most first."""
        return Tables.of(self.sessions).signatures()

    def blame(self) -> list[dict[str, Any]]:
        """Failing steps per (category, kind), most first."""
        return Tables.of(self.sessions).blame()

    def outcome_counts(self) -> dict[str, int]:
        """Outcomes by type (no_match, rejected_action...)."""
        return Tables.of(self.sessions).outcome_counts()

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document (``docs/triage.schema.json``)."""
        tables = Tables.of(self.sessions)
        return {
            "format_version": FORMAT_VERSION,
            "inputs": [item.to_dict() for item in self.inputs],
            "skipped": list(self.skipped),
            "sessions": [session.to_dict() for session in self.sessions],
            "signatures": tables.signatures(),
            "blame": tables.blame(),
            "outcomes": tables.outcome_counts(),
            "findings": tables.findings.to_list(),
            **tables.extra(),
        }


class Tables:
    """The tables over sessions (signatures, blame, outcomes), built one session at a time.

    :class:`TriageResult` computes its tables with it, and a run that writes each session as it
    is read (``failcode triage``) adds them here and lets them go: the same tables, without
    holding the sessions.
    """

    __slots__ = ("_blame", "_outcomes", "_rows", "by_agent", "by_model", "findings",
                 "tokens_seen")

    def __init__(self, *, keep_all: bool = False) -> None:
        from failcode.triage._findings import Findings  # noqa: PLC0415 - it types this module

        self._rows: dict[str, dict[str, Any]] = {}
        self._blame: Counter[tuple[str, str]] = Counter()
        self._outcomes: Counter[str] = Counter()
        self.findings = Findings(keep_all=keep_all)
        """What to fix first (:mod:`failcode.triage._findings`)."""
        self.tokens_seen = False
        """A session's log recorded tokens (the findings have dollars to price)."""
        self.by_model: dict[str, Breakdown] = {}
        """Per model (where the format records it)."""
        self.by_agent: dict[str, Breakdown] = {}
        """Per agent and version (``claude-code 2.1.12``, where the format records it)."""

    @classmethod
    def of(cls, sessions: Iterable[SessionResult]) -> Tables:
        """The tables over ``sessions``."""
        tables = cls()
        for session in sessions:
            tables.add(session)
        return tables

    def add(self, session: SessionResult) -> None:
        """Count one more session (sessions are added in their report order)."""
        seen: set[str] = set()
        for entry in session.failures:
            failure = entry.failure
            signature = failure.signature
            row = self._rows.get(signature)
            if row is None:  # the first failure of a signature describes its row
                row = self._rows[signature] = {
                    "signature": signature, "code": failure.code, "kind": str(failure.kind),
                    "category": str(failure.category), "count": 0, "sessions": 0,
                    "message": failure.message}
            row["count"] += 1
            if signature not in seen:
                seen.add(signature)
                row["sessions"] += 1
            self._blame[(str(failure.category), str(failure.kind))] += 1
        for outcome in session.outcomes:
            self._outcomes[str(outcome.outcome.__struct_config__.tag)] += 1
        self.tokens_seen = self.tokens_seen or session.tokens is not None
        if session.model is not None:
            self.by_model.setdefault(session.model, Breakdown()).add(session)
        if session.agent_version:
            self.by_agent.setdefault(f"{session.format} {session.agent_version}",
                                     Breakdown()).add(session)
        self.findings.add(session)

    def extra(self) -> dict[str, Any]:
        """The document's keys about the findings' order and prices: ``rank`` when not the
        default, ``prices`` (the table, None without it) when a log recorded tokens; and per
        model and agent version (``by_model``, ``by_agent``, ``regressions``) when a log
        recorded them."""
        out: dict[str, Any] = {}
        if self.findings.rank_by != "steps":
            out["rank"] = self.findings.rank_by
        if self.tokens_seen:
            from failcode.triage._prices import price_table  # noqa: PLC0415

            out["prices"] = price_table()
        for key, table in (("by_model", self.by_model), ("by_agent", self.by_agent)):
            if table:
                out[key] = {name: row.to_dict() for name, row in sorted(table.items())}
        if self.by_agent:
            out["regressions"] = self.findings.regressions()
        return out

    def signatures(self) -> list[dict[str, Any]]:
        """Per signature: code, kind, category, count of failing steps, sessions; most first."""
        return sorted((dict(row) for row in self._rows.values()),
                      key=lambda r: (-r["count"], -r["sessions"], r["signature"]))

    def blame(self) -> list[dict[str, Any]]:
        """Failing steps per (category, kind), most first."""
        return [{"category": category, "kind": kind, "count": count}
                for (category, kind), count in sorted(
                    self._blame.items(), key=lambda item: (-item[1], item[0]))]

    def outcome_counts(self) -> dict[str, int]:
        """Outcomes by type (no_match, rejected_action...)."""
        return dict(sorted(self._outcomes.items()))
