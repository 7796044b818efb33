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
from failcode.service._classify import (
    _WORD_START,
    MAX_BODY_CHARS,
    ClassifyRequest,
    classify_payload,
)
from failcode.triage.readers._text import split_exception
from tests._growth_alarm import LIMIT, growth

# growth-ratio checks are slow: the deep step runs them (.ci/run: pytest -m deep)
pytestmark = pytest.mark.deep

if TYPE_CHECKING:
    from collections.abc import Callable

SMALL = 16 * 1024
LARGE = MAX_BODY_CHARS - 64
"""Sixteen times the small input, within the door's bound on a text."""

UNITS = (
    "word ", "a", "a.", "x y\n", "ValueError ", "(a", "[a ", "E: ", "a.b:", ":",
    "Traceback (most recent call last):\n", '  File "x.py", line 1, in f\n', "ValueError: x ",
    "(Error", "a.Error ", "aError\t", "ValueError:",
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


LINES = (
    "ERROR openai.RateLimitError: Error code: 429",
    "  [worker] (httpx.ReadTimeout: timed out)  ",
    "ValueError",
    "x ValueError y",
    "retry 3 failed: TimeoutError: read timed out\tat step 4",
    "a.b.c.ConnectionRefused",
    "prefix[socket.TimeoutError: slow",
    "no exception here at all",
    "\tOSError: [Errno 28] No space left on device  ",
)


@pytest.mark.parametrize("line", LINES)
def test_a_line_names_what_split_exception_reads_from_its_first_such_word(line: str) -> None:
    """The in-place search finds what the readers' ``split_exception`` finds on the rest of the
    line from its first word that names an exception (the search as it was, on short lines)."""
    expected = next((named for word in _WORD_START.finditer(line)
                     if (named := split_exception(line[word.end():])) is not None), None)
    answer = classify_payload(ClassifyRequest.model_validate({"text": line}))
    found = classify_text(*expected) if expected else classify_text("Exception", line.strip())
    assert isinstance(found, Failure)
    assert (answer.code, answer.signature) == (found.code, found.signature)


def test_long_line_names_its_exception() -> None:
    """The word-by-word search still finds the first word of the last line naming an
    exception type, anywhere in a long line, and its message to the line's end."""
    line = "word " * 20_000 + "[worker] openai.RateLimitError: Error code: 429 slow down  "
    answer = classify_payload(ClassifyRequest.model_validate({"text": "first\n" + line}))
    expected = classify_text("openai.RateLimitError", "Error code: 429 slow down")
    assert isinstance(expected, Failure)
    assert (answer.kind, answer.code, answer.signature) == (
        "failure", expected.code, expected.signature)
