"""Where the real agent sessions live (read in place), and the labels a reader gave them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests._needs import need_data
from tests._paths import SHARED, TESTS

SESSIONS = SHARED / "data" / "agent-sessions"
SESSIONS_2 = SHARED / "data" / "agent-sessions-2"
"""The second real corpus (issue 32): many public projects, agents and versions."""
LABELS = TESTS / "fixtures" / "triage_labels.json"


def sessions_dir() -> Path:
    """The data folder, read in place; a missing folder fails under CI=true, else skips."""
    return need_data(SESSIONS)


def sessions_2_dir() -> Path:
    """The second corpus, read in place; a missing folder fails under CI=true, else skips."""
    return need_data(SESSIONS_2)


def session_files(root: Path) -> list[Path]:
    """Every session log under ``root`` (the folder's notes file excluded)."""
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name != "SOURCES.md")


def labels() -> dict[str, Any]:
    """Per relative file path, per session: failures {step: kind}, probes, rejected, loops."""
    return json.loads(LABELS.read_text())["files"]  # type: ignore[no-any-return]


def score(result_sessions: list[Any], root: Path) -> dict[str, float]:
    """Compare triage's sessions with the labels: recall on failures, probes reported as
    failures, loops found, kind agreement, rejected actions found."""
    found = {(str(Path(s.path).relative_to(root)), s.session): s for s in result_sessions}
    failures = hit = kinds = probes = probe_fail = loops = loop_hit = 0
    rejected = rejected_hit = 0
    for path, by_session in labels().items():
        for name, label in by_session.items():
            session = found.get((path, name))
            reported = {e.step: str(e.failure.kind) for e in session.failures} if session else {}
            outcome_steps = {e.step for e in session.outcomes} if session else set()
            for step, kind in label["failures"].items():
                failures += 1
                if int(step) in reported:
                    hit += 1
                    kinds += reported[int(step)] == kind
            for step in label["probes"]:
                probes += 1
                probe_fail += step in reported
            for step in label["rejected"]:
                rejected += 1
                rejected_hit += step in outcome_steps
            found_loops = [set(loop.steps) for loop in session.loops] if session else []
            for loop in label["loops"]:
                loops += 1
                loop_hit += any(len(set(loop) & other) >= 2 for other in found_loops)
    return {
        "failures": failures, "recall": hit / failures, "kind_agreement": kinds / max(hit, 1),
        "probes": probes, "probes_as_failures": probe_fail / max(probes, 1),
        "loops": loops, "loops_found": loop_hit / max(loops, 1),
        "rejected": rejected, "rejected_found": rejected_hit / max(rejected, 1),
    }


ERROR_ID = re.compile(r'"error_id": ?"fc-[0-9a-f]+-[0-9a-f]+"')
"""A failure's ``error_id`` in JSON text: unique per occurrence by design, so it differs
between any two runs."""


def mask_error_ids(text: str) -> str:
    """JSON text with every failure's ``error_id`` masked."""
    return ERROR_ID.sub('"error_id": "?"', text)


def without_error_ids(value: Any) -> Any:
    """A result's dict (or list) with every ``error_id`` left out, at any depth."""
    if isinstance(value, dict):
        return {k: without_error_ids(v) for k, v in value.items() if k != "error_id"}
    if isinstance(value, list):
        return [without_error_ids(v) for v in value]
    return value
