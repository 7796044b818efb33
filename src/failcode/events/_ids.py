"""Event ids: ULIDs (26 characters of Crockford base32), time-ordered and unique across machines.

The first 48 bits are the Unix time in milliseconds, the other 80 random; within one process
and one millisecond the random part is incremented, so ids sort in creation order. The random
state is reset in a forked child, so parent and child never share a sequence.

:func:`derived_event_id` is the other kind: the same 48 bits of time, then 80 bits of a BLAKE2b
digest of what identifies the event (a path, a session, a step, a span id), so whoever reads
the same thing twice (triage of one file, a retried OTLP batch) names it with the same id and
the store keeps it once.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from typing import Final

__all__ = ["call_event_id", "derived_event_id", "event_id_time_ms", "new_event_id"]

_ALPHABET: Final = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_DECODE: Final = {c: i for i, c in enumerate(_ALPHABET)}
_RANDOM_MAX: Final = (1 << 80) - 1

_lock = threading.Lock()
_last_ms = -1
_last_random = 0


def _reset() -> None:  # pragma: no cover - runs in forked children
    global _last_ms  # noqa: PLW0603 - process-wide id state, reset in a forked child
    _last_ms = -1


os.register_at_fork(after_in_child=_reset)


def _encode(value: int) -> str:
    chars = []
    for _ in range(26):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_event_id(now_ms: int | None = None) -> str:
    """A new ULID, e.g. ``01JE5Z3W8G4X7Q2M9K1V0T6B3R``; later calls sort after earlier ones."""
    global _last_ms, _last_random  # noqa: PLW0603 - the monotonic sequence of this process
    ms = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    with _lock:
        if ms <= _last_ms:
            ms = _last_ms
            _last_random = (_last_random + 1) & _RANDOM_MAX
        else:
            _last_ms = ms
            _last_random = int.from_bytes(os.urandom(10), "big") >> 1  # room to increment
        value = (ms << 80) | _last_random
    return _encode(value)


def derived_event_id(timestamp: float | None, *parts: object) -> str:
    """A ULID-shaped id that depends only on ``timestamp`` (seconds; its milliseconds, 0 when
    None or before 1970) and ``parts`` (joined by U+001F, each as ``str``)."""
    ms = max(0, int(timestamp * 1000)) if timestamp is not None else 0
    key = "\x1f".join(str(part) for part in parts).encode("utf-8", "surrogatepass")
    digest = int.from_bytes(hashlib.blake2b(key, digest_size=10).digest(), "big")
    return _encode(((ms & ((1 << 48) - 1)) << 80) | digest)


def call_event_id(session: str, call: str) -> str:
    """The event id of what one tool call of an agent's session did, whoever reports it: the
    agent's hook (``failcode hook``) and its OpenTelemetry export name the same call by the
    agent's own call id, so a store keeps the call once (the first report it receives; the
    hook's, with the command's status and output, arrives within a second, an export's batch
    seconds later). Its time part is 0: the id depends on the call alone."""
    return derived_event_id(None, "call", session, call)


def event_id_time_ms(event_id: str) -> int:
    """The millisecond timestamp a ULID carries.

    Raises:
        ValueError: not a 26-character Crockford base32 ULID.
    """
    if len(event_id) != 26:
        msg = f"not a ULID: {event_id!r} (expected 26 characters)"
        raise ValueError(msg)
    value = 0
    for char in event_id[:10]:
        digit = _DECODE.get(char)
        if digit is None:
            msg = f"not a ULID: {event_id!r} (character {char!r})"
            raise ValueError(msg)
        value = value * 32 + digit
    return value
