"""Read a text input line by line with a bound on the longest line."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from failcode.triage._events import InputError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

__all__ = ["MAX_LINE", "lines"]

MAX_LINE: Final = 64 * 1024 * 1024
"""The longest line held at once (bytes): 64 MiB."""


def lines(stream: BinaryIO, *, max_line: int = MAX_LINE, strict: bool = True,
          ) -> Iterator[tuple[int, str]]:
    """Yield ``(line number from 1, text without the line break)``.

    Raises:
        InputError: FC-DATA-003 for a line longer than ``max_line`` bytes, or (``strict``)
            one that is not UTF-8.
    """
    number = 0
    while True:
        raw = stream.readline(max_line + 1)
        if not raw:
            return
        number += 1
        if len(raw) > max_line:
            msg = (f"line {number} is longer than {max_line // (1024 * 1024)} MiB; expected "
                   "text lines")
            raise InputError("FC-DATA-003", msg)
        try:
            text = raw.decode("utf-8", "strict" if strict else "replace")
        except UnicodeDecodeError as exc:
            msg = f"line {number} is not UTF-8 ({exc.reason} at byte {exc.start})"
            raise InputError("FC-DATA-003", msg) from None
        if number == 1 and text.startswith("\ufeff"):
            text = text[1:]
        yield number, text.rstrip("\r\n")
