"""Formats failcode recognises but does not read yet: each input is its own FC-DATA-002 naming
the format, never "no reader recognises its content" and never skipped unseen.

Rules (each from the tool that writes the format):

- **asciinema v2 recordings** (``*.cast``; terminal-bench 0.x keeps the agent's pane as
  ``sessions/agent.cast``): the first line is the header object ``{"version": 2, "width": N,
  "height": N, ...}``, then ``[time, "o"|"i", text]`` events.
- **terminal-bench 0.x harness files**: a trial's ``results.json`` (an object with
  ``trial_name``, ``is_resolved`` and ``failure_mode``) and its ``commands.txt`` (the tmux
  keystrokes the harness sent, one Python list per line such as ``['clear', 'Enter']``).
- **raw terminal captures** (terminal-bench's ``sessions/agent.log``): text whose first line
  carries ANSI control sequences and a shell prompt (``user@host:/dir# ``).

They are tried after every reader of a format failcode reads, so a format read later only has
to be added to ``READERS`` before them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from failcode.triage._events import InputError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

    from failcode.triage._events import Event

__all__ = ["UNREAD", "UNREAD_FORMATS"]

_CAST: Final = re.compile(rb'\A\s*\{\s*"version"\s*:\s*2\s*,\s*"width"\s*:\s*\d+')
_TB_RESULTS: Final = re.compile(rb'\A\s*\{[^\0]*?"trial_name"\s*:')
_STRING: Final = rb"(?:'[^'\n]*'|\"[^\"\n]*\")"
_KEYSTROKES: Final = re.compile(rb"\A\[" + _STRING + rb"(?:, ?" + _STRING + rb")*\]\s*$",
                                re.MULTILINE)
_ANSI_PROMPT: Final = re.compile(
    rb"\A(?:\x1b\[[0-9;?]*[A-Za-z])+[^\n]*?[\w.-]+@[\w.-]+:[^\n]*?[#$] ")


class _Unread:
    """A format failcode recognises by its first bytes and does not read yet."""

    def __init__(self, name: str, what: str, sniffer: re.Pattern[bytes],
                 also: tuple[bytes, ...] = ()) -> None:
        self.name = name
        self._what = what
        self._sniffer = sniffer
        self._also = also

    def sniff(self, head: bytes) -> bool:
        return self._sniffer.search(head) is not None and all(word in head
                                                              for word in self._also)

    def read(self, stream: BinaryIO, label: str) -> Iterator[Event]:
        raise InputError("FC-DATA-002", f"it is {self._what}, a format failcode does not read "
                                        "yet")
        yield  # pragma: no cover - a generator, like every reader


UNREAD: Final = (
    _Unread("asciinema", "an asciinema v2 terminal recording (a terminal-bench agent.cast)", _CAST),
    _Unread("terminal-bench-results", "a terminal-bench 0.x trial's results.json",
            _TB_RESULTS, (b'"failure_mode"', b'"is_resolved"')),
    _Unread("terminal-bench-commands", "the tmux keystrokes a terminal-bench 0.x harness sent "
                                       "(commands.txt)", _KEYSTROKES),
    _Unread("terminal-capture", "a raw terminal capture with ANSI escapes (a terminal-bench "
                                "agent.log)", _ANSI_PROMPT),
)
"""Recognised, not read: tried after every reader, in this order."""

UNREAD_FORMATS: Final = frozenset(reader.name for reader in UNREAD)
"""Their names (an input's ``format`` when its error says the format is not read yet)."""
