"""Two runs compared: what is new, gone, up or down, and whether the change means anything.

``failcode triage NEW --baseline OLD`` triages both (OLD: paths, or a store URL) and matches
their findings (:mod:`failcode.triage._findings`). The rules:

- **Same finding**: a baseline finding that shares a variant signature with a new one, else
  one with the same code and headline.
- **Rates**: each finding's failures and sessions hit are divided by the number of sessions
  of its run, so runs of different sizes compare.
- **Status**: ``new`` (no session of the baseline hit it), ``gone`` (none of the new run),
  ``up`` or ``down`` (the share of sessions hit rose or fell), ``same``.
- **Too few to tell**: a change is *significant* when the two shares of sessions hit differ
  by at least 1.96 standard errors of a two-proportion test on the pooled share (about 95%);
  a finding whose change is not is marked ``few``. With a handful of sessions nothing is
  significant, which is the point: a single session that failed once is noise.
- **By model and agent version** (where the formats record them): each run's sessions,
  sessions with failures and failures, side by side.
- **Gates** (``--fail-on``, exit status 1 when met): ``new``, a new finding, significant or not
  (a failure never seen before is worth a look); ``regressed``, a new finding or one that went
  significantly up; ``any``, any finding in the new run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from failcode.triage._versions import significant as _significant

if TYPE_CHECKING:
    from failcode.triage._findings import Finding
    from failcode.triage.report._stream import Summary

__all__ = ["GATES", "Change", "Comparison", "compare"]

GATES: Final = ("new", "regressed", "any")


@dataclass(frozen=True, slots=True)
class Change:
    """One finding in either run."""

    code: str
    message: str
    who: str
    status: str
    """``new``, ``gone``, ``up``, ``down`` or ``same``."""
    significant: bool
    old_count: int
    old_sessions: int
    new_count: int
    new_sessions: int
    old_rate: float
    """Sessions hit per session of the baseline."""
    new_rate: float

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "who": self.who,
                "status": self.status, "significant": self.significant,
                "baseline": {"count": self.old_count, "sessions": self.old_sessions,
                             "share": round(self.old_rate, 6)},
                "new": {"count": self.new_count, "sessions": self.new_sessions,
                        "share": round(self.new_rate, 6)}}


@dataclass(frozen=True, slots=True)
class Comparison:
    """The changes, new and regressed first, and both runs' totals and endings."""

    changes: list[Change]
    old_sessions: int
    new_sessions: int
    old_ended: dict[str, int]
    new_ended: dict[str, int]
    models: dict[str, tuple[list[int], list[int]]] = dataclasses.field(default_factory=dict)
    """Per model and per agent version, both runs' sessions, failing sessions and failures
    (``[0, 0, 0]`` where a run has none)."""
    title: str = "Compared with the baseline"
    """What is compared: a baseline, or one run split at a change (``--changed-at``)."""
    changed_at: float | None = None
    """The split's time (seconds since the epoch) when one run is split at a change."""

    def gate(self, rule: str) -> bool:
        """Whether ``rule`` (one of :data:`GATES`) holds for the new run."""
        if rule == "any":
            return any(change.new_count for change in self.changes)
        if rule == "new":
            return any(change.status == "new" for change in self.changes)
        return any(change.status == "new" or (change.status == "up" and change.significant)
                   for change in self.changes)

    def to_dict(self) -> dict[str, Any]:
        split = {} if self.changed_at is None else {"title": self.title,
                                                    "changed_at": self.changed_at}
        return {**split, "baseline_sessions": self.old_sessions, "new_sessions": self.new_sessions,
                "ended": {"baseline": self.old_ended, "new": self.new_ended},
                "changes": [change.to_dict() for change in self.changes],
                "by_model": {key: {"baseline": _row(old), "new": _row(new)}
                             for key, (old, new) in self.models.items()}}


def _row(counts: list[int]) -> dict[str, int]:
    return dict(zip(("sessions", "failing_sessions", "failures"), counts, strict=True))


_ORDER: Final = {"new": 0, "up": 1, "same": 2, "down": 3, "gone": 4}


def compare(new: Summary, old: Summary) -> Comparison:
    """The new run's findings against the baseline's (the module's rules)."""
    old_findings = old.tables.findings.ranked()
    by_signature = {sig: finding for finding in old_findings for sig in finding.signatures}
    by_text = {(finding.code, finding.message): finding for finding in old_findings}
    matched: set[int] = set()
    changes = []

    def change(now: Finding | None, before: Finding | None) -> Change:
        shown = now or before
        assert shown is not None
        old_hits, new_hits = (before.sessions if before else 0), (now.sessions if now else 0)
        old_rate = old_hits / old.sessions if old.sessions else 0.0
        new_rate = new_hits / new.sessions if new.sessions else 0.0
        status = ("new" if not old_hits else "gone" if not new_hits
                  else "up" if new_rate > old_rate else "down" if new_rate < old_rate
                  else "same")
        return Change(shown.code, shown.message, shown.who, status,
                      _significant(old_hits, old.sessions, new_hits, new.sessions),
                      before.count if before else 0, old_hits, now.count if now else 0,
                      new_hits, old_rate, new_rate)

    for finding in new.tables.findings.ranked():
        before = next((by_signature[sig] for sig in finding.signatures if sig in by_signature),
                      by_text.get((finding.code, finding.message)))
        if before is not None and id(before) in matched:
            before = None  # a baseline finding answers one new finding
        if before is not None:
            matched.add(id(before))
        changes.append(change(finding, before))
    changes.extend(change(None, finding) for finding in old_findings
                   if id(finding) not in matched)
    changes.sort(key=lambda c: (_ORDER[c.status], not c.significant,
                                -abs(c.new_rate - c.old_rate)))
    models = {}
    for table_old, table_new in ((old.by_model, new.by_model), (old.by_agent, new.by_agent)):
        for key in sorted(set(table_old) | set(table_new)):
            row_old, row_new = table_old.get(key), table_new.get(key)
            models[key] = (row_old.counts() if row_old else [0, 0, 0],
                           row_new.counts() if row_new else [0, 0, 0])
    return Comparison(changes, old.sessions, new.sessions, dict(old.ended), dict(new.ended),
                      models)
