"""Triage against the blind labels of the second corpus (issue 32, item 7): the sample is the
one its rule draws, and triage agrees on at least 97% of the checks (``python -m
tests.triage._blind --disagreements`` names each disagreement)."""

from __future__ import annotations

import json
from collections import defaultdict

from tests.triage._blind import SAMPLE, agreement, draw, load_labels
from tests.triage._data import sessions_2_dir


def test_the_sample_is_the_one_its_rule_draws() -> None:
    """tests/fixtures/blind_sample.json is what the seeded rule draws from the corpus now."""
    assert draw(sessions_2_dir()) == json.loads(SAMPLE.read_text())


def test_every_sampled_file_is_labelled_with_its_steps() -> None:
    """Each sampled file (and aider session) has labels, with as many steps as drawn."""
    labels = load_labels()
    sample = json.loads(SAMPLE.read_text())["formats"]
    missing = []
    for fmt, drawn in sample.items():
        for item in drawn["files"]:
            sessions = labels.get(item["path"], {})
            if "session" in item:
                sessions = {item["session"]: sessions[item["session"]]} if (
                    item["session"] in sessions) else {}
            if sum(s.get("steps", 0) for s in sessions.values()) != item["steps"] or not sessions:
                missing.append(f"{fmt}: {item['path']} {item.get('session', '')}")
    assert missing == []
    assert sum(d["steps"] for d in sample.values()) >= 400
    assert sum(1 for d in sample.values() if d["steps"]) >= 8


def test_triage_agrees_with_the_blind_labels() -> None:
    """At least 97% of all checks agree; every format with steps at least 90%."""
    notes: list[str] = []
    table = agreement(load_labels(), sessions_2_dir(), notes)
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for fmt, row in table.items():
        for check in ("failing step", "kind", "outcome", "loop", "ending"):
            totals[fmt][0] += row[check][0]
            totals[fmt][1] += row[check][1]
    agreed = sum(a for a, _ in totals.values())
    checked = sum(c for _, c in totals.values())
    assert checked > 900
    assert agreed / checked >= 0.97, "\n".join(notes)
    low = {fmt: f"{a}/{c}" for fmt, (a, c) in totals.items() if c >= 20 and a / c < 0.9}
    assert low == {}, "\n".join(notes)
