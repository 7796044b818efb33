"""How often the learned model has a suggestion for what the rules leave unknown, on the real
corpora (issue 39 item 4): ``python -m tests.triage.corpus_suggested [--sample N] [--seed S]``.

Triage reads both corpora in place (``tests.triage._data``); a failure is rule-unknown when
:func:`failcode.learned.wants_suggestion` says so. Printed: the rule-unknown findings and how
many carry a suggestion (the finding's, from its first occurrence, as the reports show it), the
rule-unknown failures and how many get one (each from its own record, as a finding's would),
and with ``--sample N`` a fixed-seed sample of N suggested failures (all when fewer) to be
judged by hand: file, session, step, command, the record's detail and the suggestion. Also
printed: how many suggestions say more than the rules did (another kind, or a class that is
not ``unknown``): a suggestion of ``command_error`` / ``unknown`` for a ``command_error`` of
class ``unknown`` repeats the rules, with only its nearest examples to add.

:func:`unknown_failures` is what ``tests/triage/test_hand_checked.py`` reads again.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from failcode.learned import wants_suggestion
from failcode.triage import triage
from failcode.triage._findings import record_suggestion
from failcode.triage._result import Tables
from tests.triage._data import SESSIONS, SESSIONS_2

if TYPE_CHECKING:
    from pathlib import Path

    from failcode.learned import Suggestion
    from failcode.triage._result import FailureEntry, TriageResult

__all__ = ["Unknown", "corpora", "item_id", "sample", "says_more", "unknown_failures"]


@dataclass(frozen=True, slots=True)
class Unknown:
    """One rule-unknown failure of the corpora and what the model suggests for it."""

    corpus: str
    path: str
    """The file, relative to its corpus folder."""
    session: str
    step: int | None
    entry: FailureEntry
    suggested: Suggestion | None


def corpora() -> list[tuple[str, Path]]:
    """The corpora present here, by name."""
    return [(name, root) for name, root in (("agent-sessions", SESSIONS),
                                            ("agent-sessions-2", SESSIONS_2)) if root.exists()]


def item_id(item: Unknown) -> str:
    """A judged item's stable name: corpus, file, session, step and signature."""
    return (f"{item.corpus}/{item.path}#{item.session}@{item.step}:"
            f"{item.entry.failure.signature}")


def _result(root: Path) -> TriageResult:
    return triage([root])


def unknown_failures() -> tuple[list[Unknown], dict[str, int]]:
    """Every rule-unknown failure of the corpora with its suggestion, and the counts."""
    items: list[Unknown] = []
    counts = {"findings": 0, "unknown_findings": 0, "suggested_findings": 0,
              "failures": 0, "unknown_failures": 0, "suggested_failures": 0}
    for name, root in corpora():
        result = _result(root)
        tables = Tables.of(result.sessions)
        for finding in tables.findings.ranked():
            counts["findings"] += 1
            first = finding.examples[0]
            unknown = next(e for s in result.sessions if s.path == first.path
                           for e in s.failures if e.failure.signature == first.signature)
            if wants_suggestion(unknown.failure):
                counts["unknown_findings"] += 1
                counts["suggested_findings"] += finding.suggested is not None
        for session in result.sessions:
            for entry in session.failures:
                counts["failures"] += 1
                if not wants_suggestion(entry.failure):
                    continue
                counts["unknown_failures"] += 1
                suggested = record_suggestion(entry.failure, entry.evidence)
                counts["suggested_failures"] += suggested is not None
                relative = session.path.removeprefix(str(root)).lstrip("/")
                items.append(Unknown(name, relative, session.session, entry.step, entry,
                                     suggested))
    return items, counts


def sample(items: list[Unknown], size: int, seed: int) -> list[Unknown]:
    """A fixed-seed sample of the suggested failures (in the corpora's order, shuffled)."""
    chosen = [item for item in items if item.suggested is not None]
    random.Random(seed).shuffle(chosen)
    return chosen[:size]


def says_more(item: Unknown) -> bool:
    """The suggestion says more than the rules did: another kind, or a class not unknown."""
    suggested = item.suggested
    return suggested is not None and (suggested.kind != str(item.entry.failure.kind)
                                      or suggested.klass != "unknown")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--seed", type=int, default=39)
    args = parser.parse_args(argv)
    if not corpora():
        print("no corpus here", file=sys.stderr)
        return 1
    items, counts = unknown_failures()
    share_f = counts["suggested_findings"] / max(1, counts["unknown_findings"])
    share = counts["suggested_failures"] / max(1, counts["unknown_failures"])
    print(f"findings: {counts['findings']}, rule-unknown {counts['unknown_findings']}, "
          f"suggested {counts['suggested_findings']} ({share_f:.1%})")
    print(f"failures: {counts['failures']}, rule-unknown {counts['unknown_failures']}, "
          f"suggested {counts['suggested_failures']} ({share:.1%})")
    more = sum(map(says_more, items))
    print(f"suggestions saying more than the rules (another kind, or a class): {more} "
          f"({more / max(1, counts['unknown_failures']):.1%} of the rule-unknown failures)")
    for item in sample(items, args.sample, args.seed):
        suggested = item.suggested
        assert suggested is not None
        print(json.dumps({"id": item_id(item), "command": item.entry.evidence,
                          "code": item.entry.failure.code,
                          "detail": (item.entry.failure.detail or "")[-1500:],
                          "suggested": [suggested.kind, suggested.klass,
                                        round(suggested.confidence, 3)],
                          "nearest": [[n.program, n.kind, n.klass, n.excerpt]
                                      for n in suggested.nearest[:2]]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
