"""The record factory's fast paths give the same records as building every record in full."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from failcode import FC, Failure, InvalidFailureError, classify, explain_signature, sign
from tests.strategies import scalars

_VOLATILE = ("error_id", "cause", "context")


def _fields(record: Failure) -> dict[str, Any]:
    """Every field a record carries except the per-occurrence ones."""
    return {k: getattr(record, k) for k in record.__struct_fields__ if k not in _VOLATILE}


def _raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:  # noqa: BLE001 - the test's own raise
        return caught


metadata_values = st.dictionaries(
    st.sampled_from(["exit_code", "http_status", "diagnostic", "rule", "note"]), scalars,
    max_size=4)


@given(st.sampled_from(["tool", "python", "llm.openai"]), st.text(max_size=60), metadata_values)
def test_a_repeat_equals_its_first_build(surface: str, program: str,
                                         metadata: dict[str, Any]) -> None:
    """The second record of one combination equals the first but for id, cause and context."""
    params = {"program": program or "x"}
    first = FC.CMD_NOT_FOUND.failure(surface=surface, params=params, metadata=metadata)
    second = FC.CMD_NOT_FOUND.failure(surface=surface, params=params, metadata=metadata,
                                      context={"step": 2})
    assert _fields(second) == _fields(first)
    assert second.error_id != first.error_id
    assert dict(second.context) == {"step": 2}
    assert first.context == {}
    assert explain_signature(second).value == second.signature


@pytest.mark.parametrize("values", [(1, True), (1, 1.0), (0, False), ("1", 1)])
def test_equal_but_differently_typed_values_never_share_a_record(values: tuple[Any, Any]) -> None:
    """1, 1.0, True and "1" are equal or alike as keys; each builds its own record."""
    one, two = (FC.CMD_NOT_FOUND.failure(surface="tool", params={"program": "make"},
                                         metadata={"exit_code": v}) for v in values)
    assert one.metadata["exit_code"] is values[0]
    assert type(two.metadata["exit_code"]) is type(values[1])
    assert one.signature != two.signature or str(values[0]) == str(values[1])


@given(st.sampled_from([None, 0, 1, 127, True, 1.5, "E0425", ""]),
       st.sampled_from([None, "E0425", 3, False]), st.text(max_size=120))
def test_cached_signature_parts_match_sign(status: Any, diagnostic: Any, message: str) -> None:
    """A record's signature equals sign() of its fields, whatever was signed before."""
    record = FC.CMD_NOT_FOUND.failure(
        surface="tool", params={"program": message[:40] or "x"},
        metadata={"exit_code": status, "diagnostic": diagnostic})
    expected = sign(record.kind, record.surface, record.error_class, record.location,
                    message=record.message, status=status, diagnostic=diagnostic)
    assert record.signature == expected.value


def test_each_occurrence_keeps_its_own_cause() -> None:
    """Two exceptions that classify alike keep their own redacted messages in the cause."""
    one = classify(_raised(ConnectionResetError(104, "reset by peer at 10.0.0.1")))
    two = classify(_raised(ConnectionResetError(104, "reset by peer at 10.0.0.2")))
    assert isinstance(one, Failure)
    assert isinstance(two, Failure)
    assert _fields(one) == _fields(two)
    assert one.cause[0].message.endswith("10.0.0.1")
    assert two.cause[0].message.endswith("10.0.0.2")


def test_a_chained_cause_is_followed_on_a_repeat() -> None:
    """A repeat built from the template still walks the whole cause chain."""
    def chained(note: str) -> BaseException:
        try:
            try:
                raise KeyError(note)
            except KeyError as inner:
                raise ConnectionResetError(104, "reset") from inner
        except ConnectionResetError as outer:
            return outer

    classify(chained("first"))
    again = classify(chained("second"))
    assert isinstance(again, Failure)
    assert [link.type for link in again.cause] == ["ConnectionResetError", "KeyError"]
    assert again.cause[1].message == "'second'"


def test_a_bad_context_is_refused_on_a_repeat_as_on_a_first_build() -> None:
    """A context the record refuses raises the same error on the cached path as on a first build."""
    bad: Any = {"x": [1]}
    with pytest.raises((TypeError, InvalidFailureError)) as first:
        FC.CMD_NOT_FOUND.failure(surface="tool", params={"program": "never-built"}, context=bad)
    FC.CMD_NOT_FOUND.failure(surface="tool", params={"program": "make"})
    with pytest.raises(first.type):
        FC.CMD_NOT_FOUND.failure(surface="tool", params={"program": "make"}, context=bad)


def test_a_repeat_is_a_new_object_the_first_is_untouched() -> None:
    """Building a repeat never changes the record returned first."""
    first = FC.CMD_NOT_FOUND.failure(surface="tool", params={"program": "make"},
                                     context={"a": 1})
    snapshot = msgspec.json.encode(first)
    second = FC.CMD_NOT_FOUND.failure(surface="tool", params={"program": "make"},
                                      context={"b": 2})
    assert second is not first
    assert msgspec.json.encode(first) == snapshot


# -- the factory's text and metadata caches (private helpers, imported here in one place) --

from failcode.codes import _build  # noqa: E402 - the private helpers these tests compare
from failcode.signature._redact import redact_slice  # noqa: E402

_TEXT_PIECES = st.sampled_from([
    "password=hunter2 ", "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", " ", "\n\t",
    "No such file or directory: '/tmp/x.py'", "KeyError", "\ud800", "é", "x" * 40,
    "api_key%3Dabcdef123456", "-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkq\n",
])


@given(st.lists(_TEXT_PIECES | st.text(max_size=8), max_size=12).map("".join),
       st.integers(min_value=1, max_value=80))
def test_clean_text_equals_redacting_its_slice_then_cutting(text: str, limit: int) -> None:
    """clean_text (redaction kept per text) equals redact_slice of 4x the limit, collapsed, cut."""
    one_line = " ".join(redact_slice(text, 0, limit * 4).split())
    expected = one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"
    _build._clean_cache.clear()
    _build._redacted_cache.clear()
    assert _build.clean_text(text, limit) == expected
    assert _build.clean_text(text, limit + 100) == _build.clean_text(text, limit + 100)


@given(metadata_values)
def test_shared_metadata_equals_redacting_it_again(metadata: dict[str, Any]) -> None:
    """The metadata kept per distinct mapping equals redacting that mapping anew, types too."""
    first = _build._redacted_metadata(metadata)
    again = _build._redacted_mapping(metadata)
    assert first == again
    assert [type(v) for v in first.values()] == [type(v) for v in again.values()]


def test_metadata_equal_but_differently_typed_is_never_shared() -> None:
    """{"exit_code": 1} and {"exit_code": True} keep their own value types."""
    one = _build._redacted_metadata({"exit_code": 1})
    other = _build._redacted_metadata({"exit_code": True})
    assert type(one["exit_code"]) is int
    assert type(other["exit_code"]) is bool


_SEGMENTS = st.text(st.sampled_from("abcdefghij-_.0123456789"), min_size=1, max_size=30)


@given(st.lists(_SEGMENTS, min_size=1, max_size=12), _SEGMENTS)
def test_a_long_path_keeps_its_file_name_in_the_message(folders: list[str], name: str) -> None:
    """A ``path`` param too long for the message loses its middle, never its start or its
    file's name: the message names the file whatever folder it is in."""
    path = "/" + "/".join([*folders, "deep" * 20, f"{name}.jsonl"])
    failure = FC.DATA_MALFORMED_INPUT.failure(surface="triage.read", params={
        "path": path, "problem": "line 17: the exit status is ~10**30, not in range"})
    shown = str(failure.params["path"])
    assert len(failure.message) <= _build.MAX_MESSAGE_CHARS
    assert f"{name}.jsonl" in failure.message
    if shown != path:
        head, tail = shown.split("…")
        assert path.startswith(head)
        assert path.endswith(tail)
        assert len(shown) == _build._param_budget(FC.DATA_MALFORMED_INPUT.spec.message)
