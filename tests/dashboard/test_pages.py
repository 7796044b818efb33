"""The dashboard's page rules that need no browser: loops in a timeline, compare windows."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from failcode.service._pages import _loops, _window


def test_a_run_of_one_signature_is_one_loop() -> None:
    assert _loops(["a", "a", "b", None, "b", "b", "b", "a"]) == [1, 1, None, None, 2, 2, 2, None]
    assert _loops([None, None]) == [None, None]  # outcomes never loop
    assert _loops([]) == []


@given(st.lists(st.sampled_from(["a", "b", None]), max_size=40))
def test_loops_mark_exactly_the_repeated_neighbours(signatures: list[str | None]) -> None:
    marks = _loops(signatures)
    for i, signature in enumerate(signatures):
        repeated = signature is not None and (
            (i > 0 and signatures[i - 1] == signature)
            or (i + 1 < len(signatures) and signatures[i + 1] == signature))
        assert (marks[i] is not None) == repeated
    numbers = [m for m in marks if m is not None]
    assert numbers == sorted(numbers)  # numbered in the order loops start
    assert set(numbers) == set(range(1, len(set(numbers)) + 1))


def test_a_window_is_whole_utc_days() -> None:
    start, end = _window("2026-11-01..2026-11-07") or (0, 0)
    assert datetime.fromtimestamp(start / 1e6, UTC) == datetime(2026, 11, 1, tzinfo=UTC)
    assert datetime.fromtimestamp(end / 1e6, UTC) == datetime(2026, 11, 8, tzinfo=UTC)
    one = _window("2026-11-03")
    assert one is not None
    assert one[1] - one[0] == 86_400_000_000
    assert _window("last week") is None
