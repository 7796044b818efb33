"""The envelope reader's exact contract: messages, stream ends, bytes and str lines.

Written from the wire format's documentation (README "Across a process boundary"): a stream
ends at its ``end`` envelope; a stream that stops before it, or whose last line is cut off,
yields one PeerExited naming the peer and where it stopped; blank lines are skipped; bytes are
decoded as UTF-8 with undecodable bytes replaced.
"""

from __future__ import annotations

import pytest

from failcode import (
    EnvelopeError,
    NoMatch,
    PeerExited,
    decode_envelope,
    encode_end,
    encode_envelope,
    read_envelopes,
)

PROBE = encode_envelope(NoMatch(probe="grep")) + b"\n"
END = encode_end() + b"\n"


@pytest.mark.parametrize("item", [1, "text", None, {"code": "FC-CMD-001"}])
def test_only_failures_and_outcomes_are_encoded(item: object) -> None:
    """Anything else is a TypeError naming the type that was given."""
    with pytest.raises(TypeError) as caught:
        encode_envelope(item)  # type: ignore[arg-type]
    assert str(caught.value) == ("only a Failure or a failcode outcome crosses the wire, "
                                 f"got {type(item).__name__}")


def test_an_unknown_type_lists_the_known_ones() -> None:
    """The message lists every envelope type, ``end`` included, separated by commas."""
    with pytest.raises(EnvelopeError) as caught:
        decode_envelope(b'{"failcode":1,"type":"mystery","body":{}}')
    message = str(caught.value)
    assert message.startswith("unknown envelope type 'mystery'; expected one of ")
    known = message.split("expected one of ", 1)[1].split(", ")
    assert {"failure", "no_match", "end"} <= set(known)
    assert known[-1] == "end"


def test_decoding_an_end_envelope_says_it_carries_no_item() -> None:
    """decode_envelope of an end line: a clear error with no line prefix."""
    with pytest.raises(EnvelopeError) as caught:
        decode_envelope(encode_end())
    assert str(caught.value) == "an end envelope closes a stream; it carries no item"


def test_a_single_envelope_error_has_no_line_prefix() -> None:
    """Outside a stream there is no line number to name."""
    with pytest.raises(EnvelopeError) as caught:
        decode_envelope(b"{")
    assert str(caught.value).startswith("malformed failcode envelope")


def test_a_stream_error_names_its_line() -> None:
    """Inside a stream the message starts with the line number."""
    with pytest.raises(EnvelopeError) as caught:
        list(read_envelopes([PROBE, b"\n", b"{nope}\n"]))
    assert str(caught.value).startswith("line 3: malformed failcode envelope")


def test_a_complete_stream_yields_its_items_and_stops_at_end() -> None:
    """Items up to the end envelope; lines after it are not read."""
    assert list(read_envelopes([PROBE, PROBE, END, b"{garbage}\n"])) == [
        NoMatch(probe="grep"), NoMatch(probe="grep")]


def test_str_lines_are_read_like_bytes() -> None:
    """A text stream (``str`` lines) reads the same as a binary one."""
    lines = [PROBE.decode(), END.decode()]
    assert list(read_envelopes(lines)) == [NoMatch(probe="grep")]


def test_undecodable_bytes_are_replaced_not_raised() -> None:
    """An invalid UTF-8 byte inside a value becomes U+FFFD; the item still decodes."""
    line = PROBE.replace(b'"grep"', b'"gr\xffep"')
    items = list(read_envelopes([line, END]))
    assert items == [NoMatch(probe="gr\ufffdep")]


def test_a_stream_without_end_yields_peer_exited() -> None:
    """A stream that stops before its end envelope: PeerExited naming the peer and the count."""
    items = list(read_envelopes([PROBE, b"\n"], peer="worker-3"))
    assert items == [NoMatch(probe="grep"), PeerExited(
        peer="worker-3", reason="stream ended after 2 lines without an end envelope")]


def test_an_empty_stream_yields_peer_exited_after_zero_lines() -> None:
    """No line at all: the peer exited before writing anything."""
    assert list(read_envelopes([])) == [PeerExited(
        peer="peer", reason="stream ended after 0 lines without an end envelope")]


def test_a_line_cut_mid_envelope_yields_peer_exited() -> None:
    """The last line has no newline and holds text: cut off mid-envelope, reading stops."""
    items = list(read_envelopes([PROBE, END[:10], END], peer="w"))
    assert items == [NoMatch(probe="grep"), PeerExited(
        peer="w", reason="stream cut off in line 2, mid-envelope")]


def test_a_blank_unterminated_last_line_is_the_end_of_the_stream() -> None:
    """Trailing white space with no newline ends the stream (then PeerExited, no end seen)."""
    items = list(read_envelopes([PROBE, b"   "]))
    assert items == [NoMatch(probe="grep"), PeerExited(
        peer="peer", reason="stream ended after 2 lines without an end envelope")]
