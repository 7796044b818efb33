"""The triage result: one in-memory object every renderer reads (terminal, JSON, HTML).

A store can later build the same object from recorded events, so a report renders the same
whatever produced it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import msgspec

if TYPE_CHECKING:
    from failcode import Failure, NonErrorOutcome

__all__ = [
    "FORMAT_VERSION",
    "FailureEntry",
    "InputResult",
    "Loop",
    "OutcomeEntry",
    "SessionResult",
    "TriageResult",
]

FORMAT_VERSION: Final = 1


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

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "source": self.source, "evidence": self.evidence,
                "repeats": self.repeats, "timestamp": self.timestamp, "masked": self.masked,
                "failure": self.failure.to_dict()}


@dataclass(frozen=True, slots=True)
class OutcomeEntry:
    """A non-error outcome: a probe that found nothing, a rejected action..."""

    step: int | None
    source: str
    evidence: str
    outcome: NonErrorOutcome

    def to_dict(self) -> dict[str, Any]:
        outcome = msgspec.to_builtins(self.outcome)
        return {"step": self.step, "source": self.source, "evidence": self.evidence,
                "outcome": outcome}


@dataclass(frozen=True, slots=True)
class Loop:
    """A signature failing at three or more steps of a session, or at two consecutive ones."""

    signature: str
    steps: tuple[int, ...]


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

    def to_dict(self) -> dict[str, Any]:
        ended = self.ended_failure.to_dict() if self.ended_failure is not None else None
        return {
            "session": self.session, "path": self.path, "format": self.format,
            "steps": self.steps, "ended": {"status": self.status, "failure": ended},
            "failures": [entry.to_dict() for entry in self.failures],
            "outcomes": [entry.to_dict() for entry in self.outcomes],
            "loops": [{"signature": loop.signature, "steps": list(loop.steps)}
                      for loop in self.loops],
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

    @property
    def ok(self) -> bool:
        """True when every input was read in full (exit status 0)."""
        return all(item.error_code is None for item in self.inputs)

    def signatures(self) -> list[dict[str, Any]]:
        """Per signature: code, kind, category, count of failing steps, sessions; most first."""
        rows: dict[str, dict[str, Any]] = {}
        seen: dict[str, set[int]] = {}
        for index, session in enumerate(self.sessions):
            for entry in session.failures:
                failure = entry.failure
                row = rows.setdefault(failure.signature, {
                    "signature": failure.signature, "code": failure.code,
                    "kind": str(failure.kind), "category": str(failure.category),
                    "count": 0, "sessions": 0, "message": failure.message})
                row["count"] += 1
                seen.setdefault(failure.signature, set()).add(index)
        for signature, row in rows.items():
            row["sessions"] = len(seen[signature])
        return sorted(rows.values(), key=lambda r: (-r["count"], -r["sessions"],
                                                    r["signature"]))

    def blame(self) -> list[dict[str, Any]]:
        """Failing steps per (category, kind), most first."""
        counts: Counter[tuple[str, str]] = Counter(
            (str(entry.failure.category), str(entry.failure.kind))
            for session in self.sessions for entry in session.failures)
        return [{"category": category, "kind": kind, "count": count}
                for (category, kind), count in sorted(
                    counts.items(), key=lambda item: (-item[1], item[0]))]

    def outcome_counts(self) -> dict[str, int]:
        """Outcomes by type (no_match, rejected_action...)."""
        counts: Counter[str] = Counter(
            entry.outcome.__struct_config__.tag  # type: ignore[misc]
            for session in self.sessions for entry in session.outcomes)
        return dict(sorted(counts.items()))

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document (``docs/triage.schema.json``)."""
        return {
            "format_version": FORMAT_VERSION,
            "inputs": [item.to_dict() for item in self.inputs],
            "sessions": [session.to_dict() for session in self.sessions],
            "signatures": self.signatures(),
            "blame": self.blame(),
            "outcomes": self.outcome_counts(),
        }
