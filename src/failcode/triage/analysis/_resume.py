"""Where reading a JSON-lines input stopped, so that a later run reads only what was added.

Rules:

- A checkpoint is taken after the last line of an input a
  :class:`~failcode.triage._events.ResumableReader` reads (Claude Code, Codex), before
  the reader's :meth:`finish` and the sessions' ends: the byte offset reached, the number of
  lines before it, a hash of the input's first and last :data:`EDGE` bytes as of that offset,
  the reader's state and the sessions read so far (finished ones and the one still open),
  each encoded with msgspec at that moment.
- Only an input that ends with a line break gets one (a last line still being written is
  read again whole next time), and none when reading stopped at an error.
- A later run resumes from it only when the file is the same file (path, label, inode and
  device), is longer than the offset, and its bytes up to the offset still hash the same at
  both edges: a file that only grew. Anything else (rewritten, truncated, another reader
  detects it now, a state that does not decode) reads the file whole: resuming never changes
  a result, it only skips the bytes already read.
"""

from __future__ import annotations

import hashlib
import os
from typing import Final

import msgspec

from failcode.triage._result import FailureEntry, OutcomeEntry, SessionResult, Tokens

__all__ = ["EDGE", "Checkpoint", "ReadingState", "SessionState", "edges"]

EDGE: Final = 16 * 1024
"""How much of the head and of the tail an identity hashes."""


class SessionState(msgspec.Struct, array_like=True):
    """A session still open when the checkpoint was taken."""

    name: str | None
    failures: list[FailureEntry]
    outcomes: list[OutcomeEntry]
    provided: list[str]
    model: str | None
    agent_version: str | None
    tokens: Tokens | None = None
    started: float | None = None


class ReadingState(msgspec.Struct, array_like=True):
    """The sessions read so far: those finished, the open one, the last step seen, and which
    finished ones hold messages (kept even with no step)."""

    sessions: list[SessionResult]
    current: SessionState | None
    last_step: int
    said: list[int]


class Checkpoint(msgspec.Struct, array_like=True, frozen=True):
    """Where reading an input stopped (the module's rules)."""

    offset: int
    edges: bytes
    """:func:`edges` of the input as of ``offset``."""
    lines: int
    reader: str
    state: bytes
    """The reader's state, msgpack of its ``state_type``."""
    reading: bytes
    """The sessions, msgpack of :class:`ReadingState`."""


def edges(fd: int, size: int) -> bytes:
    """blake2b of the first and last :data:`EDGE` bytes of the open file (all of it when
    smaller), as of ``size``."""
    digest = hashlib.blake2b(digest_size=16)
    if size <= 2 * EDGE:
        digest.update(os.pread(fd, size, 0))
    else:
        digest.update(os.pread(fd, EDGE, 0))
        digest.update(os.pread(fd, EDGE, size - EDGE))
    return digest.digest()
