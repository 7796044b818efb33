"""A cause link checks its fields at their bounds, and replaces lone surrogates in each.

The documented bound is 4000 characters for a cause message (the record's text limit); the
link is the unit every cause chain is made of, built once per link of every classified error.
"""

from __future__ import annotations

import msgspec
import pytest

from failcode import CauseLink, InvalidFailureError

TEXT_LIMIT = 4000  # the documented longest cause message


def test_a_message_at_the_limit_is_kept_whole() -> None:
    """A 4000-character message is accepted and kept as it is."""
    assert CauseLink("ValueError", "x" * TEXT_LIMIT).message == "x" * TEXT_LIMIT


def test_a_message_one_over_the_limit_is_refused() -> None:
    """A 4001-character message is refused, naming the limit."""
    with pytest.raises(InvalidFailureError, match="at most 4000"):
        CauseLink("ValueError", "x" * (TEXT_LIMIT + 1))


def test_a_non_ascii_message_one_over_the_limit_is_refused() -> None:
    """The limit holds for non-ASCII text too."""
    with pytest.raises(InvalidFailureError, match="at most 4000"):
        CauseLink("ValueError", "é" * (TEXT_LIMIT + 1))


@pytest.mark.parametrize("kind", ["", None, 3, b"ValueError"])
def test_a_type_that_is_not_a_non_empty_str_is_refused(kind: object) -> None:
    """The type must be a non-empty str; the error shows the value."""
    with pytest.raises(InvalidFailureError, match=r"CauseLink\.type must be a non-empty str"):
        CauseLink(kind, "m")  # type: ignore[arg-type]


@pytest.mark.parametrize("message", [None, 3, b"m"])
def test_a_message_that_is_not_a_str_is_refused(message: object) -> None:
    """The message must be a str."""
    with pytest.raises(InvalidFailureError, match=r"CauseLink\.message must be a str"):
        CauseLink("ValueError", message)  # type: ignore[arg-type]


@pytest.mark.parametrize("code", [3, b"FC-SYS-001"])
def test_a_code_that_is_not_a_str_or_none_is_refused(code: object) -> None:
    """The code must be a str or None."""
    with pytest.raises(InvalidFailureError, match=r"CauseLink\.code must be a str or None"):
        CauseLink("ValueError", "m", code)  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["type", "message", "code"])
def test_a_lone_surrogate_in_any_field_is_replaced(field: str) -> None:
    """A lone surrogate (unencodable as UTF-8) becomes U+FFFD in whichever field holds it."""
    values = {"type": "ValueError", "message": "m", "code": "FC-SYS-001"}
    values[field] = "a\ud800b"
    link = CauseLink(values["type"], values["message"], values["code"])
    assert getattr(link, field) == "a\ufffdb"
    msgspec.json.encode(link)  # encodable: no lone surrogate left
    for other in {"type", "message", "code"} - {field}:
        assert getattr(link, other) == values[other]


def test_non_ascii_text_without_surrogates_is_kept() -> None:
    """Accented and CJK text is not altered."""
    link = CauseLink("Fehler", "Datei für 東京 fehlt", "FC-SYS-001")
    assert (link.type, link.message, link.code) == ("Fehler", "Datei für 東京 fehlt", "FC-SYS-001")
