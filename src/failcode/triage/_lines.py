"""Read a text input line by line with a bound on the longest line."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from failcode.triage._events import InputError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

__all__ = ["MAX_LINE", "json_objects", "lines"]

MAX_LINE: Final = 32 * 1024 * 1024
"""The longest line held at once (bytes): 32 MiB."""
_CHUNK: Final = 1024 * 1024


def lines(stream: BinaryIO, *, max_line: int = MAX_LINE, strict: bool = True,
          ) -> Iterator[tuple[int, str]]:
    """Yield ``(line number from 1, text without the line break)``.

    Raises:
        InputError: FC-DATA-003 for a line longer than ``max_line`` bytes, or (``strict``)
            one that is not UTF-8.
    """
    number = 0
    while True:
        raw = stream.readline(_CHUNK)
        if not raw:
            return
        number += 1
        if not raw.endswith(b"\n") and len(raw) == _CHUNK:
            # a long line: gather it in pieces, so a line that never ends costs at most
            # max_line bytes (one readline(max_line) would hold it twice while joining)
            parts, size = [raw], len(raw)
            while not parts[-1].endswith(b"\n"):
                piece = stream.readline(_CHUNK)
                if not piece:
                    break
                size += len(piece)
                if size > max_line:
                    msg = (f"line {number} is longer than {max_line // (1024 * 1024)} MiB; "
                           "expected text lines")
                    raise InputError("FC-DATA-003", msg)
                parts.append(piece)
            raw = b"".join(parts)
            del parts
        try:
            text = raw.decode("utf-8", "strict" if strict else "replace")
        except UnicodeDecodeError as exc:
            msg = f"line {number} is not UTF-8 ({exc.reason} at byte {exc.start})"
            raise InputError("FC-DATA-003", msg) from None
        if number == 1 and text.startswith("\ufeff"):
            text = text[1:]
        yield number, text.rstrip("\r\n")


def json_objects(stream: BinaryIO) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` of a JSON-lines input; blank lines and values that are
    not objects are passed over.

    Raises:
        InputError: FC-DATA-003 naming the first line that is not JSON (and what
            :func:`lines` raises).
    """
    for number, line in lines(stream):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as exc:
            msg = f"line {number} is not a JSON object ({exc})"
            raise InputError("FC-DATA-003", msg) from None
        if isinstance(entry, dict):
            yield number, entry
