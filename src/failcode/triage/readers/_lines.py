"""Read a text input line by line with a bound on the longest line.

Rules (about damaged and hostile input, each an FC-DATA-003 ``InputError``; the lines before
it are yielded first, so what was read is kept):

- A line longer than :data:`MAX_LINE` bytes: "line N is longer than 32 MiB".
- A line that is not UTF-8 (``strict``): "line N is not UTF-8 (<reason> at byte B of the
  line, B from 0 at the line's start)"; not ``strict``, invalid bytes are read as U+FFFD.
- A JSON-lines record (:func:`json_objects`) cut short (the decoder needed more text at
  its end): "line N ends early at character C (cut short?)", C the line's length in
  characters; one that is not JSON otherwise, or nested deeper than
  :data:`~failcode.triage.readers._jsonstream.MAX_DEPTH` levels: "line N is not a JSON object
  (...)".
- A stream with a ``position`` attribute holding a
  :class:`~failcode.triage.readers._jsonstream.Position` gets the number of the last line
  yielded, so that an error no reader expected names it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from failcode.triage._events import InputError
from failcode.triage.readers._jsonstream import Position, loads

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import BinaryIO

__all__ = ["MAX_LINE", "json_objects", "lines"]

MAX_LINE: Final = 32 * 1024 * 1024
"""The longest line held at once (bytes): 32 MiB."""
_CHUNK: Final = 1024 * 1024


def lines(stream: BinaryIO, *, max_line: int = MAX_LINE, strict: bool = True,
          first_line: int = 0) -> Iterator[tuple[int, str]]:
    """Yield ``(line number from 1, text without the line break)``; ``first_line`` lines
    came before the stream's first (a stream that starts where an earlier reading stopped).

    The input is read in chunks of 1 MiB and each chunk's whole lines are decoded at once
    (a line break is one byte that no UTF-8 sequence contains, so decoding a chunk is decoding
    its lines one by one); a line is held whole only while it is being gathered.

    Raises:
        InputError: FC-DATA-003 for a line longer than ``max_line`` bytes (or 1 MiB, whichever
            is more), or (``strict``) one that is not UTF-8; the lines before it are yielded
            first.
    """
    limit = max(max_line, _CHUNK)
    where = getattr(stream, "position", None)
    if not isinstance(where, Position):
        where = Position()  # nobody asks: a throwaway one costs less than a test per line
    errors = "strict" if strict else "replace"
    number = first_line
    carry = b""
    while True:
        data = stream.read(_CHUNK)
        if data:
            end = data.rfind(b"\n")
            if end < 0:  # no line ends in this chunk: gather it
                carry += data
                if len(carry) > limit:
                    raise _too_long(number + 1, max_line)
                continue
            block, carry = carry + data[:end], data[end + 1:]
        elif carry:
            block, carry = carry, b""  # the last line, with no line break
        else:
            return
        first = block.find(b"\n")  # only the first line can be longer than a chunk
        if (len(block) if first < 0 else first) + (1 if data else 0) > limit:
            raise _too_long(number + 1, max_line)
        try:
            found: Iterable[str] = block.decode("utf-8", errors).split("\n")
        except UnicodeDecodeError:
            found = _decoded(block, number, ended=bool(data))  # the lines before the bad one
        for line in found:
            number += 1
            where.line = number
            if number == 1 and line.startswith("\ufeff"):
                yield number, line[1:].rstrip("\r")
            else:
                yield number, line.rstrip("\r")


def _decoded(block: bytes, number: int, *, ended: bool) -> Iterator[str]:
    """The lines of ``block`` (after line ``number``; each ``ended`` by a line break) up to the
    first one that is not UTF-8; then FC-DATA-003 naming it (the line decoded with its break,
    as a line reader sees it)."""
    for part in block.split(b"\n"):
        number += 1
        try:
            yield (part + b"\n").decode("utf-8")[:-1] if ended else part.decode("utf-8")
        except UnicodeDecodeError as exc:
            msg = f"line {number} is not UTF-8 ({exc.reason} at byte {exc.start})"
            raise InputError("FC-DATA-003", msg) from None


def _too_long(number: int, max_line: int) -> InputError:
    msg = f"line {number} is longer than {max_line // (1024 * 1024)} MiB; expected text lines"
    return InputError("FC-DATA-003", msg)


_NUMBER_OR_LITERAL: Final = frozenset("-+.eE0123456789")


def _not_json(number: int, line: str, exc: ValueError) -> str:
    """The message of a JSON-lines record that does not decode. A record cut short (the
    decoder ran out of text: an unterminated string, or what is left where it stopped is
    nothing, a number's characters, the start of ``true``/``false``/``null`` or of a
    ``\\uXXXX`` escape) "ends early
    at character C", C the line's length in characters (where it was cut); anything else is
    "not a JSON object" with the decoder's reason."""
    text = line.rstrip("\r")
    if isinstance(exc, json.JSONDecodeError):
        rest = text[exc.pos:].rstrip()
        if (exc.msg.startswith("Unterminated string") or not rest
                or set(rest) <= _NUMBER_OR_LITERAL
                or any(word.startswith(rest) for word in ("true", "false", "null"))
                or (exc.msg.startswith("Invalid \\uXXXX") and len(rest.lstrip("\\")) < 5
                    and all(c in "0123456789abcdefABCDEF" for c in rest.lstrip("\\")[1:]))):
            return (f"line {number} ends early at character {len(text)} (cut short?); "
                    "expected the rest of a JSON object")
    return f"line {number} is not a JSON object ({exc})"


def json_objects(stream: BinaryIO, *, first_line: int = 0,
                 ) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` of a JSON-lines input (``first_line`` lines before the
    stream's first: :func:`lines`); blank lines and values that are not objects are passed
    over.

    Raises:
        InputError: FC-DATA-003 naming the first line that is not JSON (and what
            :func:`lines` raises).
    """
    for number, line in lines(stream, first_line=first_line):
        if not line.strip():
            continue
        try:
            entry = loads(line)
        except ValueError as exc:  # TooDeepError too: "nested deeper than 200 levels"
            raise InputError("FC-DATA-003", _not_json(number, line, exc)) from None
        if isinstance(entry, dict):
            yield number, entry
