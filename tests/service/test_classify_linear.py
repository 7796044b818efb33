"""Issue 36, item 4: ``POST /v1/classify`` costs time linear in its input, for every subject.

A text subject's log line was searched for an exception type word by word, each word's rest of
the line sliced off and stripped again: a 256 KiB line of short words cost 1.6-5 s (quadratic).
Each test times the door's whole classification (``classify_payload`` on a validated request)
at 16 KiB and at 256 KiB of one run of a unit, in the same process, and bounds the growth ratio
by ``tests/_growth_alarm.LIMIT`` (about 16x for a linear pass, 256x for a quadratic one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from failcode import Failure, classify_text
from failcode.service._classify import MAX_BODY_CHARS, ClassifyRequest, classify_payload
from tests._growth_alarm import LIMIT, growth

if TYPE_CHECKING:
    from collections.abc import Callable

SMALL = 16 * 1024
LARGE = MAX_BODY_CHARS - 64
"""Sixteen times the small input, within the door's bound on a text."""

UNITS = (
    "word ", "a", "a.", "x y\n", "ValueError ", "(a", "[a ", "E: ", "a.b:", ":",
    "Traceback (most recent call last):\n", '  File "x.py", line 1, in f\n', "ValueError: x ",
)
"""Runs of words, dotted names, type-like words, line breaks and traceback lines: one long line
or many short ones."""


def _run(unit: str, size: int) -> str:
    text = (unit * (size // len(unit) + 1))[:size]
    return text if text.strip() else "x" + text[1:]


def _subjects(text: str) -> dict[str, dict[str, Any]]:
    return {
        "text": {"text": text},
        "exception": {"exception": {"type": "ValueError", "message": text[:64 * 1024],
                                    "traceback": text}},
        "command": {"command": {"command": "make test", "exit_code": 2, "stdout": text,
                                "stderr": text}},
        "http": {"http": {"status": 500, "body": text}},
    }


def _door(subject: str) -> Callable[[str], object]:
    def call(text: str) -> object:
        return classify_payload(ClassifyRequest.model_validate(_subjects(text)[subject]))
    return call


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("subject", ["text", "exception", "command", "http"])
def test_classify_door_is_linear(subject: str, unit: str) -> None:
    """16 times the input costs at most ``LIMIT`` times as much, whatever the subject."""
    ratio = growth(_door(subject), _run(unit, SMALL), _run(unit, LARGE))
    assert ratio <= LIMIT, (f"{subject} of {unit!r}: {LARGE // 1024} KiB cost {ratio:.0f}x "
                            f"{SMALL // 1024} KiB (at most {LIMIT:.0f}x)")


def test_long_line_names_its_exception() -> None:
    """The word-by-word search still finds the first word of the last line naming an
    exception type, anywhere in a long line, and its message to the line's end."""
    line = "word " * 20_000 + "[worker] openai.RateLimitError: Error code: 429 slow down  "
    answer = classify_payload(ClassifyRequest.model_validate({"text": "first\n" + line}))
    expected = classify_text("openai.RateLimitError", "Error code: 429 slow down")
    assert isinstance(expected, Failure)
    assert (answer.kind, answer.code, answer.signature) == (
        "failure", expected.code, expected.signature)
