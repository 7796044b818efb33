"""Invariants that need no labels, over every real file of both corpora and every lab fixture
(issue 32, item 3; the rules: :mod:`tests.triage._invariants`). Each test fails listing every
violation with its file, session and step."""

from __future__ import annotations

import pytest

from tests.triage._data import sessions_2_dir, sessions_dir
from tests.triage._invariants import INVARIANTS, Read, _by_session, corpus_inputs, read


@pytest.fixture(scope="module")
def items() -> list[Read]:
    """Every input, read through its reader and through triage."""
    sessions_dir()
    sessions_2_dir()
    found = [read(path) for path in corpus_inputs()]
    assert len(found) > 400  # both corpora and the lab: a missing folder is no pass
    return found


@pytest.mark.parametrize("name", sorted(INVARIANTS))
def test_the_invariant_holds_on_every_real_file(items: list[Read], name: str) -> None:
    """The named invariant holds on every input (the list says where it does not)."""
    violations = [v for item in items for v in INVARIANTS[name](item)]
    assert violations == [], f"{len(violations)} violations:\n" + "\n".join(violations[:200])


def test_the_invariants_see_the_steps_they_check(items: list[Read]) -> None:
    """The reader-side reading pairs with triage's: most commands are matched to a session
    (an invariant that checked nothing would pass on anything)."""
    commands = sum(len(s.commands) for item in items for s in item.raw)
    paired = sum(len(found) for item in items for _, found in _by_session(item))
    assert commands > 3000
    assert paired >= 0.95 * commands
