"""The envelope decoder accepts exactly version 1: a lower, the equal and a higher version."""

from __future__ import annotations

import json

import pytest

from failcode import (
    ENVELOPE_VERSION,
    FC,
    EnvelopeError,
    NoMatch,
    PeerExited,
    decode_envelope,
    encode_end,
    encode_envelope,
    read_envelopes,
)

# failcode writes and reads envelope version 1 (the wire format's documented version)
READS = 1


def _with_version(line: bytes, version: object) -> bytes:
    envelope = json.loads(line)
    envelope["failcode"] = version
    return json.dumps(envelope).encode()


def _failure_line() -> bytes:
    return encode_envelope(FC.CMD_NOT_FOUND.failure(surface="shell.run",
                                                    params={"program": "cargo"}))


def test_the_written_version_is_the_documented_one() -> None:
    """Envelopes are written as version 1, the version the docs name."""
    assert ENVELOPE_VERSION == READS
    assert json.loads(_failure_line())["failcode"] == READS
    assert json.loads(encode_end())["failcode"] == READS


def test_the_equal_version_is_read() -> None:
    """A version-1 envelope decodes back to the same record."""
    line = _failure_line()
    assert decode_envelope(_with_version(line, READS)) == decode_envelope(line)


@pytest.mark.parametrize("version", [READS - 1, READS + 1, -1, 2**31])
def test_a_lower_or_higher_version_is_refused(version: int) -> None:
    """Version 0, 2 or any other number is an EnvelopeError naming both versions."""
    with pytest.raises(EnvelopeError) as caught:
        decode_envelope(_with_version(_failure_line(), version))
    assert f"unsupported envelope version {version}" in str(caught.value)
    assert f"reads version {READS}" in str(caught.value)


@pytest.mark.parametrize("version", ["1", 1.0, True, None])
def test_a_version_that_is_not_an_integer_is_refused(version: object) -> None:
    """The version is an integer: "1", 1.0, true and null are malformed, not version 1."""
    with pytest.raises(EnvelopeError):
        decode_envelope(_with_version(_failure_line(), version))


@pytest.mark.parametrize("version", [READS - 1, READS + 1])
def test_a_stream_refuses_an_end_envelope_of_another_version(version: int) -> None:
    """An end envelope of another version does not close a stream: it is refused."""
    lines = [encode_envelope(NoMatch(probe="grep")) + b"\n",
             _with_version(encode_end(), version) + b"\n"]
    items = read_envelopes(lines)
    assert isinstance(next(items), NoMatch)
    with pytest.raises(EnvelopeError, match="line 2: unsupported envelope version"):
        next(items)


def test_a_stream_of_the_equal_version_ends_cleanly() -> None:
    """A version-1 stream closed by its end envelope yields its items and no PeerExited."""
    lines = [encode_envelope(NoMatch(probe="grep")) + b"\n", encode_end() + b"\n"]
    items = list(read_envelopes(lines))
    assert len(items) == 1
    assert not any(isinstance(item, PeerExited) for item in items)
