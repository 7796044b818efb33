"""The wire envelope: failures and outcomes crossing a process boundary.

Errors cross a pipe as codes, params and structured context in a versioned JSON envelope, one per
line, never as formatted strings: the receiving side renders them (in its own language) from the
code and params. The record's ``message`` and ``remedy`` travel too, as the sender's fallback
rendering for a receiver that does not know the code.

Line format (JSON Lines)::

    {"failcode":1,"type":"failure","body":{...canonical Failure...}}
    {"failcode":1,"type":"no_match","body":{...}}
    {"failcode":1,"type":"end"}

A stream ends with an ``end`` envelope. A stream that stops before it (the peer crashed or was
killed) yields a :class:`~failcode.PeerExited` outcome, not a coded Failure: a crash on the other
side of a pipe is observed, not coded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import msgspec

from failcode.record._failure import Failure, decode_problem
from failcode.record._outcomes import (
    Cancelled,
    NoMatch,
    NonErrorOutcome,
    PeerExited,
    RejectedAction,
    SessionEnded,
    SessionStarted,
    Veto,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = [
    "ENVELOPE_VERSION",
    "EnvelopeError",
    "decode",
    "encode",
    "encode_end",
    "read_envelopes",
]

ENVELOPE_VERSION: Final = 1
"""The envelope version this failcode writes and reads."""

Item = Failure | NonErrorOutcome

_BODY_TYPES: Final[dict[str, type[Item]]] = {
    "failure": Failure,
    "no_match": NoMatch,
    "rejected_action": RejectedAction,
    "veto": Veto,
    "cancelled": Cancelled,
    "peer_exited": PeerExited,
    "session_started": SessionStarted,
    "session_ended": SessionEnded,
}
_TYPE_OF: Final = {cls: name for name, cls in _BODY_TYPES.items()}


class EnvelopeError(ValueError):
    """A malformed envelope or one of an unknown version; nothing was half built."""


class _Envelope(msgspec.Struct, forbid_unknown_fields=True):
    failcode: int
    type: str
    body: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)


_HEADER_DECODER: Final = msgspec.json.Decoder(_Envelope)
_BODY_DECODERS: Final = {
    name: msgspec.json.Decoder(cls) for name, cls in _BODY_TYPES.items()
}
_ENCODER: Final = msgspec.json.Encoder(order="deterministic")


def encode(item: Item) -> bytes:
    """One envelope line (without the newline) for a Failure or a non-error outcome.

    Raises:
        TypeError: ``item`` is neither a Failure nor a failcode outcome.
    """
    name = _TYPE_OF.get(type(item))
    if name is None:
        msg = f"only a Failure or a failcode outcome crosses the wire, got {type(item).__name__}"
        raise TypeError(msg)
    return _ENCODER.encode(
        _Envelope(ENVELOPE_VERSION, name, msgspec.Raw(_ENCODER.encode(item))))


def encode_end() -> bytes:
    """The envelope line that closes a stream."""
    return b'{"failcode":%d,"type":"end"}' % ENVELOPE_VERSION


def _decode(data: bytes | str, where: str) -> Item | None:
    try:
        envelope = _HEADER_DECODER.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        msg = f"{where}malformed failcode envelope: {exc}"
        raise EnvelopeError(msg) from None
    except (RecursionError, UnicodeError, TypeError) as exc:
        msg = f"{where}malformed failcode envelope: {decode_problem(exc)}"
        raise EnvelopeError(msg) from None
    if envelope.failcode != ENVELOPE_VERSION:
        msg = (f"{where}unsupported envelope version {envelope.failcode}; this failcode reads "
               f"version {ENVELOPE_VERSION}")
        raise EnvelopeError(msg)
    if envelope.type == "end":
        return None
    decoder = _BODY_DECODERS.get(envelope.type)
    if decoder is None:
        known = ", ".join([*_BODY_TYPES, "end"])
        msg = f"{where}unknown envelope type {envelope.type!r}; expected one of {known}"
        raise EnvelopeError(msg)
    if not envelope.body:
        msg = f"{where}a {envelope.type} envelope needs a body"
        raise EnvelopeError(msg)
    try:
        return decoder.decode(envelope.body)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        msg = f"{where}invalid {envelope.type} body: {exc}"
        raise EnvelopeError(msg) from None
    except (RecursionError, UnicodeError) as exc:
        msg = f"{where}invalid {envelope.type} body: {decode_problem(exc)}"
        raise EnvelopeError(msg) from None


def decode(data: bytes | str) -> Item:
    """Read one envelope.

    Raises:
        EnvelopeError: malformed JSON (cut off, nested too deeply, not UTF-8, a lone
            surrogate), an unknown version or type, or an invalid body (the message says which);
            an ``end`` envelope is not an item either. Nothing else.
    """
    item = _decode(data, "")
    if item is None:
        msg = "an end envelope closes a stream; it carries no item"
        raise EnvelopeError(msg)
    return item


def read_envelopes(lines: Iterable[bytes | str], *, peer: str = "peer") -> Iterator[Item]:
    """Read items from a stream of envelope lines (a pipe, a socket file, a list).

    Stops at the ``end`` envelope. If the stream stops before it, or its last line is cut off
    mid-envelope, yields one :class:`~failcode.PeerExited` and stops. Blank lines are skipped.

    Raises:
        EnvelopeError: a complete line is not a valid envelope (as for :func:`decode`); the
            message names the line.
    """
    number = 0
    for number, line in enumerate(lines, start=1):
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        if not text.endswith("\n"):
            if text.strip():
                yield PeerExited(peer=peer, reason=f"stream cut off in line {number}, "
                                                   f"mid-envelope")
                return
            break
        if not text.strip():
            continue
        item = _decode(text, f"line {number}: ")
        if item is None:
            return
        yield item
    yield PeerExited(peer=peer, reason=f"stream ended after {number} lines without an end "
                                       f"envelope")
