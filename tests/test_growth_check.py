"""The growth checks themselves (tests/_growth.py and tests/_growth_alarm.py): their retries
under load never let a quadratic pass through, and a linear pass stays within the bound."""

from __future__ import annotations

import pytest

from tests import _growth_alarm
from tests._growth import growth

# growth-ratio checks are slow: the deep step runs them (.ci/run: pytest -m deep)
pytestmark = pytest.mark.deep


def _quadratic(text: str) -> int:
    """Scans a growing prefix per 64 characters: quadratic in the text's length."""
    return sum(text.count("a", 0, i * 64) for i in range(len(text) // 64))


def test_a_quadratic_pass_is_over_its_bound_after_every_retry() -> None:
    ratio, bound = growth(_quadratic, "ab")
    assert ratio > bound, (ratio, bound)


def test_a_linear_pass_is_within_its_bound() -> None:
    ratio, bound = growth(lambda text: text.count("a"), "ab")
    assert ratio <= bound, (ratio, bound)


def test_the_alarm_check_finds_a_quadratic_pass_over_its_limit_after_every_retry() -> None:
    ratio = _growth_alarm.growth(_quadratic, "ab" * 1024, "ab" * 16 * 1024)
    assert ratio > _growth_alarm.LIMIT, ratio


def test_the_alarm_check_keeps_a_linear_pass_within_its_limit() -> None:
    ratio = _growth_alarm.growth(lambda text: text.count("a"), "ab" * 1024, "ab" * 16 * 1024)
    assert ratio <= _growth_alarm.LIMIT, ratio
