"""The hand-checked sample of learned suggestions on the real corpora (issue 39 item 4) still
holds: every judged failure gets the same suggested kind and class from the shipped model.

The judgments (``tests/fixtures/learned_hand_checked.json``) were made by reading each
failure's command and output; a retrained model that suggests something else for one of them
makes that judgment stale, and this test says so. ``earlier`` keeps the judgments of failures
an earlier model suggested for and the current one does not (reusable when a model suggests
the same kind and class for them again). The corpora are read in place
(``tests.triage._data``).
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from typing import TYPE_CHECKING, Any

import pytest

from tests._paths import TESTS
from tests.triage._data import sessions_2_dir, sessions_dir
from tests.triage.corpus_suggested import item_id, unknown_failures

if TYPE_CHECKING:
    from tests.triage.corpus_suggested import Unknown

JUDGED = TESTS / "fixtures" / "learned_hand_checked.json"
VERDICTS = ("right", "wrong", "unsure")


def _judged() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(JUDGED.read_text())
    return document


@cache
def _by_id() -> dict[str, Unknown]:
    sessions_dir()
    sessions_2_dir()
    items, _counts = unknown_failures()
    return {item_id(item): item for item in items}


def test_the_sample_is_fifty_judged_items() -> None:
    """50 distinct items (every suggested failure when the corpora hold fewer), each right,
    wrong or unsure with a reason; the counts add up."""
    document = _judged()
    items = document["items"]
    suggested = sum(item.suggested is not None for item in _by_id().values())
    assert len(items) == min(50, suggested)
    assert len({item["id"] for item in items}) == len(items)
    assert all(item["verdict"] in VERDICTS and item["reason"].strip() for item in items)
    assert all(len(item["excerpt"]) <= 100 for item in items)  # one short line, no more
    assert document["counts"] == dict(sorted(Counter(i["verdict"] for i in items).items()))
    earlier = document["earlier"]["items"]  # judged for an earlier model: kept for reuse
    assert all(item["verdict"] in VERDICTS and item["reason"].strip() for item in earlier)
    assert not {item["id"] for item in earlier} & {item["id"] for item in items}


@pytest.mark.parametrize("judged", _judged()["items"],
                         ids=[f"item{i}" for i in range(len(_judged()["items"]))])
def test_a_judged_item_gets_the_same_suggestion(judged: dict[str, Any]) -> None:
    """The model suggests the kind and class that were judged (else judge it again)."""
    found = _by_id().get(judged["id"])
    assert found is not None, (
        f"{judged['id']} is no longer a rule-unknown failure of the corpora (the rules or the "
        "readers changed): draw the sample again (python -m tests.triage.corpus_suggested "
        "--sample 50 --seed 39) and judge it by hand")
    suggested = found.suggested
    now = None if suggested is None else (suggested.kind, suggested.klass)
    then = (judged["suggested"]["kind"], judged["suggested"]["class"])
    assert now == then, (
        f"{judged['id']}: the model ({'none' if suggested is None else suggested.model}) now "
        f"suggests {now}, the hand check judged {then} {judged['verdict']} ({judged['reason']}). "
        "A retrained model changes what was judged: read the failure again, judge the new "
        "suggestion and update tests/fixtures/learned_hand_checked.json (python -m "
        "tests.triage.corpus_suggested --sample 50 --seed 39 prints the sample)")
