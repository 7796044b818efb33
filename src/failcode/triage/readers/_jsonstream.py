"""Stream a large JSON document: walk its top-level object or array one value at a time.

``json.load`` holds the whole document and its objects in memory; a trajectory can be
gigabytes. :class:`JsonStream` keeps a window of the text, decodes one value at a time with the
C scanner (``JSONDecoder.raw_decode``), and walks containers the caller asks to walk (a
session's ``messages`` array) item by item, so memory is bounded by the largest single item
(``max_value`` characters; more is an :class:`~failcode.triage._events.InputError`).

Rules (about damaged and hostile input; every one is an FC-DATA-003 ``InputError`` whose
message gives the position, and what was yielded before it is kept):

- Depth: a value decoded whole (an item, a JSON-lines record, a tool call's arguments decoded
  by :func:`loads`) may nest at most :data:`MAX_DEPTH` arrays and objects; deeper is refused
  ("nested deeper than 200 levels") whatever the interpreter's recursion limit, so the same
  input gives the same result wherever it is read. A ``RecursionError`` of the decoder itself
  is the same error. The real sessions nest at most 11 levels.
- Invalid UTF-8: the text before the first invalid byte is read (its values are yielded);
  the error names the byte and the character where the text stops being UTF-8. An input cut
  in the middle of a character ends early there.
- An input that ends early (truncated): "the JSON ends early at character N", N the number of
  characters the input holds (where it was cut), counted from 0 after an optional BOM.
- :class:`Position` records where reading got to (the line
  :func:`~failcode.triage.readers._lines.lines` last yielded, the character the last value began
  at), so that an error no reader expected names the line or character
  (``failcode.triage.analysis._analyze``).
"""

from __future__ import annotations

import codecs
import json
import re
from typing import TYPE_CHECKING, Any, Final

from failcode.triage._events import InputError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

__all__ = ["MAX_DEPTH", "MAX_VALUE", "JsonStream", "Position", "TooDeepError", "deeper_than",
           "loads"]

MAX_VALUE: Final = 64 * 1024 * 1024
"""The largest single value (characters) held at once: 64 Mi."""
MAX_DEPTH: Final = 200
"""The deepest nesting of arrays and objects a value decoded whole may have: 200 levels
(``[[1]]`` is 2). Far below the interpreter's recursion limit, whatever the caller's stack."""
_CHUNK: Final = 1024 * 1024
_WS: Final = re.compile(r"[ \t\n\r]*")
_WS_CHARS: Final = " \t\n\r"
_DECODER: Final = json.JSONDecoder()
_MALFORMED: Final = "FC-DATA-003"
_LONGEST_CUT: Final = 10
"""How far before the window's end a value cut there can fail (``-Infinity`` less one)."""
_BOM: Final = "\ufeff"


class TooDeepError(ValueError):
    """A JSON text nested deeper than :data:`MAX_DEPTH` (a ``ValueError``, as ``json.loads``
    raises for any text it refuses)."""

    def __init__(self) -> None:
        super().__init__(f"nested deeper than {MAX_DEPTH} levels")


def deeper_than(value: Any, limit: int = MAX_DEPTH) -> bool:
    """True when ``value`` (decoded JSON) nests more than ``limit`` arrays and objects.

    Walked level by level (no recursion); only containers are visited."""
    level = [value] if isinstance(value, (dict, list)) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[Any] = []
        for item in level:
            values = item.values() if isinstance(item, dict) else item
            below.extend(v for v in values if isinstance(v, (dict, list)))
        level = below
    return False


def _may_be_deep(text: str | bytes, start: int = 0, end: int | None = None) -> bool:
    """False when ``text[start:end]`` holds too few brackets to nest deeper than the limit
    (the common case: two ``count`` calls, no walk)."""
    if isinstance(text, bytes):
        return text.count(b"[", start, end) + text.count(b"{", start, end) > MAX_DEPTH
    return text.count("[", start, end) + text.count("{", start, end) > MAX_DEPTH


def loads(text: str | bytes) -> Any:
    """``json.loads`` with the nesting bounded by :data:`MAX_DEPTH`.

    Raises:
        ValueError: what ``json.loads`` raises, or :class:`TooDeepError` (also for the decoder's
            own ``RecursionError``).
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeepError from None
    if _may_be_deep(text) and deeper_than(value):
        raise TooDeepError
    return value


class Position:
    """Where reading one input has got to: the last line number :func:`lines` yielded and
    the character the last value a :class:`JsonStream` decoded began at (0: not known).

    A stream that has a ``position`` attribute holding one gets it updated as it is read."""

    __slots__ = ("char", "line")

    def __init__(self) -> None:
        self.line = 0
        self.char = 0

    def describe(self) -> str:
        """`` at line N``, `` near character N`` or ""."""
        if self.line:
            return f" at line {self.line}"
        return f" near character {self.char}" if self.char else ""


class JsonStream:
    """A cursor over a JSON text read from a binary stream, UTF-8 (a BOM is skipped)."""

    __slots__ = ("_broken", "_buf", "_bytes", "_consumed", "_decoder", "_eof", "_pos",
                 "_stream", "_where", "max_value")

    def __init__(self, stream: BinaryIO, *, max_value: int = MAX_VALUE) -> None:
        self._stream = stream
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._buf = ""
        self._pos = 0
        self._consumed = 0
        """Characters before ``_buf``."""
        self._bytes = 0
        """Bytes read so far."""
        self._eof = False
        self._broken: InputError | None = None
        """The input's invalid UTF-8, raised once the text before it is used up."""
        where = getattr(stream, "position", None)
        self._where: Position | None = where if isinstance(where, Position) else None
        self.max_value = max_value

    # -- the window ----------------------------------------------------------------------
    def _fill(self, size: int = _CHUNK) -> bool:
        """Read more text; False at the end of the input.

        Raises:
            InputError: the input's invalid UTF-8, once the text before it is all read.
        """
        if self._eof:
            if self._broken is not None:
                raise self._broken
            return False
        data = self._stream.read(size)
        pending = self._decoder.getstate()[0]
        self._bytes += len(data)
        try:
            text = self._decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            text = self._invalid(pending + data, exc, at_end=not data)
        if not data:
            self._eof = True
        if not self._consumed and not self._buf and text.startswith(_BOM):
            text = text[1:]
        if self._pos:
            self._consumed += self._pos
            self._buf = self._buf[self._pos:]
            self._pos = 0
        self._buf += text
        return bool(data) or bool(text)

    def _invalid(self, data: bytes, exc: UnicodeDecodeError, *, at_end: bool) -> str:
        """The valid text before invalid UTF-8 at ``data[exc.start]`` (``data``: the bytes
        being decoded, undecoded ones of the last read first); the error is kept for later."""
        text = data[:exc.start].decode("utf-8")
        chars = self._consumed + len(self._buf) + len(text)
        if not self._consumed and not self._buf and text.startswith(_BOM):
            chars -= 1
        if at_end:  # cut inside a character: the input ends early there
            msg = (f"the JSON ends early at character {chars}, inside a UTF-8 sequence "
                   "(truncated?)")
        else:
            at = self._bytes - len(data) + exc.start
            msg = f"invalid UTF-8 at byte {at} (character {chars}): {exc.reason}"
        self._broken = InputError(_MALFORMED, msg)
        self._eof = True
        return text

    def offset(self) -> int:
        """Characters consumed so far (for messages)."""
        return self._consumed + self._pos

    def _peek(self) -> str:
        """The next non-white-space character, or "" at the end."""
        buf, pos = self._buf, self._pos
        if pos < len(buf) and (char := buf[pos]) not in _WS_CHARS:
            return char  # most often no white space at all: no regular expression
        while True:
            self._pos = _WS.match(self._buf, self._pos).end()  # type: ignore[union-attr]
            if self._pos < len(self._buf):
                return self._buf[self._pos]
            if not self._fill():
                return ""

    def _expect(self, chars: str, what: str) -> str:
        char = self._peek()
        if not char:
            msg = f"the JSON ends early at character {self.offset()}; expected {what}"
            raise InputError(_MALFORMED, msg)
        if char not in chars:
            msg = f"unexpected {char!r} at character {self.offset()}; expected {what}"
            raise InputError(_MALFORMED, msg)
        self._pos += 1
        return char

    # -- values --------------------------------------------------------------------------
    def value(self) -> Any:
        """Decode the next value whole (at most ``max_value`` characters, nested at most
        :data:`MAX_DEPTH` levels)."""
        if not self._peek():
            msg = f"the JSON ends early at character {self.offset()}; expected a value"
            raise InputError(_MALFORMED, msg)
        if self._where is not None:
            self._where.char = self.offset()
        size = _CHUNK
        while True:
            base = self._consumed  # positions in an error are relative to this window
            try:
                value, end = _DECODER.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                if not self._more(exc, size):
                    raise self._error(exc, base) from None
                size = min(size * 2, 64 * _CHUNK)
                continue
            except RecursionError:
                raise self._too_deep() from None
            if end >= len(self._buf) and not self._eof and not isinstance(value, (dict, list)):
                # a number may go on in the next chunk
                self._fill()
                continue
            if (isinstance(value, (dict, list)) and _may_be_deep(self._buf, self._pos, end)
                    and deeper_than(value)):
                raise self._too_deep()
            self._pos = end
            return value

    def _too_deep(self) -> InputError:
        msg = (f"the JSON value at character {self.offset()} is nested deeper than "
               f"{MAX_DEPTH} levels")
        return InputError(_MALFORMED, msg)

    def _more(self, exc: json.JSONDecodeError, size: int) -> bool:
        """Read more when the value may be incomplete rather than wrong; False if not."""
        # a value cut at the window's end fails near the end, or where the cut item began: a
        # string ("Unterminated"), a literal (``tru``: "Expecting value" at its first letter,
        # up to len("-Infinity") - 1 characters before the end) or an escape (``\u12``)
        near_end = exc.pos >= len(self._buf) - _LONGEST_CUT or exc.msg.startswith(
            "Unterminated string")
        if not near_end or (self._eof and self._broken is None):
            return False
        if len(self._buf) - self._pos > self.max_value:
            msg = (f"a single JSON value at character {self.offset()} is larger than "
                   f"{self.max_value // (1024 * 1024)} Mi characters")
            raise InputError(_MALFORMED, msg)
        return self._fill(size)  # raises the invalid UTF-8 the text stops at, if any

    def _error(self, exc: json.JSONDecodeError, base: int) -> InputError:
        """The error of a value that cannot be decoded; ``exc``'s positions are in the window
        whose first character is character ``base`` of the input."""
        if (self._eof and base + exc.pos >= self._consumed + len(self._buf) - _LONGEST_CUT) or (
                exc.msg.startswith("Unterminated")):
            end = self._consumed + len(self._buf)  # where the text ends: where it was cut
            return InputError(_MALFORMED, f"the JSON ends early at character {end} (truncated?)")
        return InputError(_MALFORMED, f"invalid JSON at character {base + exc.pos}: {exc.msg}")

    def skip(self) -> None:
        """Step over the next value, walking containers so nothing large is held (without
        recursion: objects and arrays nested deeper than :data:`MAX_DEPTH` are refused)."""
        walking: list[tuple[bool, Iterator[Any]]] = []  # (an object's members?, the walk)
        while True:
            char = self._peek()
            if char in ("[", "{"):
                if len(walking) >= MAX_DEPTH:
                    raise self._too_deep()
                walking.append((char == "{", self.members() if char == "{" else self.items()))
            else:
                self.value()
            while walking:  # the next value to step over, or the end of what was skipped
                is_object, walk = walking[-1]
                if is_object:
                    if next(walk, None) is not None:
                        break  # a key: its value is next
                else:
                    for _ in walk:  # an array's items, each decoded whole
                        pass
                walking.pop()
            else:
                return

    def members(self) -> Iterator[str]:
        """Walk an object: yield each key; the caller consumes its value (``value``,
        ``items``, ``members`` or ``skip``) before asking for the next key."""
        self._expect("{", "'{'")
        if self._peek() == "}":
            self._pos += 1
            return
        while True:
            key = self.value()
            if not isinstance(key, str):
                msg = f"an object key at character {self.offset()} is not a string"
                raise InputError(_MALFORMED, msg)
            self._expect(":", "':'")
            yield key
            if self._expect(",}", "',' or '}'") == "}":
                return

    def items(self) -> Iterator[Any]:
        """Walk an array: yield each item decoded whole."""
        self._expect("[", "'['")
        if self._peek() == "]":
            self._pos += 1
            return
        while True:
            yield self.value()
            if self._expect(",]", "',' or ']'") == "]":
                return

    def peek(self) -> str:
        """The next non-white-space character ("" at the end of the input)."""
        return self._peek()

    def end(self) -> None:
        """Check that nothing but white space follows the document."""
        char = self._peek()
        if char:
            msg = f"unexpected {char!r} after the JSON document at character {self.offset()}"
            raise InputError(_MALFORMED, msg)
