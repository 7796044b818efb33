"""Text from logs, stores and paths made printable: the one rule every output uses.

Control characters (C0 but the line break, DEL, C1) are escaped as ``\\xNN``, so an escape
sequence prints as text; a tab is a space; a lone surrogate (undecodable bytes) is U+FFFD, so
the text encodes as UTF-8; ``one_line`` also makes a line break a space (a table cell, a row
of a report). Used by the CLI's ``echo``/``table``, the ``store`` subcommands and triage's
reports (which also redact).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["printable"]

_UNSAFE: Final = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\t":
        return " "
    return "\ufffd" if char >= "\ud800" else f"\\x{ord(char):02x}"


def printable(text: object, *, one_line: bool = False) -> str:
    """``text`` (``None`` is empty) with control characters escaped, tabs as spaces and lone
    surrogates as U+FFFD; with ``one_line``, line breaks as spaces too."""
    value = "" if text is None else str(text)
    if value.isprintable():
        return value
    value = value.replace("\r\n", "\n")
    if one_line:
        value = value.replace("\n", " ")
    return _UNSAFE.sub(_escaped, value)
