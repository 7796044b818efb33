"""Stream a large JSON document: walk its top-level object or array one value at a time.

``json.load`` holds the whole document and its objects in memory; a trajectory can be
gigabytes. :class:`JsonStream` keeps a window of the text, decodes one value at a time with the
C scanner (``JSONDecoder.raw_decode``), and walks containers the caller asks to walk (a
session's ``messages`` array) item by item, so memory is bounded by the largest single item
(``max_value`` characters; more is an :class:`~failcode.triage._events.InputError`).
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

__all__ = ["MAX_VALUE", "JsonStream"]

MAX_VALUE: Final = 64 * 1024 * 1024
"""The largest single value (characters) held at once: 64 Mi."""
_CHUNK: Final = 1024 * 1024
_WS: Final = re.compile(r"[ \t\n\r]*")
_WS_CHARS: Final = " \t\n\r"
_DECODER: Final = json.JSONDecoder()
_MALFORMED: Final = "FC-DATA-003"
_LONGEST_CUT: Final = 10
"""How far before the window's end a value cut there can fail (``-Infinity`` less one)."""


class JsonStream:
    """A cursor over a JSON text read from a binary stream, UTF-8 (a BOM is skipped)."""

    __slots__ = ("_buf", "_consumed", "_decoder", "_eof", "_pos", "_stream", "max_value")

    def __init__(self, stream: BinaryIO, *, max_value: int = MAX_VALUE) -> None:
        self._stream = stream
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")("strict")
        self._buf = ""
        self._pos = 0
        self._consumed = 0
        self._eof = False
        self.max_value = max_value

    # -- the window ----------------------------------------------------------------------
    def _fill(self, size: int = _CHUNK) -> bool:
        """Read more text; False at the end of the input."""
        if self._eof:
            return False
        data = self._stream.read(size)
        try:
            text = self._decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            at = self._consumed + len(self._buf) - self._pos
            msg = f"invalid UTF-8 near character {at} ({exc.reason})"
            raise InputError(_MALFORMED, msg) from None
        if not data:
            self._eof = True
        if self._pos:
            self._consumed += self._pos
            self._buf = self._buf[self._pos:]
            self._pos = 0
        self._buf += text
        return bool(data) or bool(text)

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
        """Decode the next value whole (at most ``max_value`` characters)."""
        if not self._peek():
            msg = f"the JSON ends early at character {self.offset()}; expected a value"
            raise InputError(_MALFORMED, msg)
        size = _CHUNK
        while True:
            try:
                value, end = _DECODER.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                if not self._more(exc, size):
                    raise self._error(exc) from None
                size = min(size * 2, 64 * _CHUNK)
                continue
            if end >= len(self._buf) and not self._eof and not isinstance(value, (dict, list)):
                # a number may go on in the next chunk
                self._fill()
                continue
            self._pos = end
            return value

    def _more(self, exc: json.JSONDecodeError, size: int) -> bool:
        """Read more when the value may be incomplete rather than wrong; False if not."""
        # a value cut at the window's end fails near the end, or where the cut item began: a
        # string ("Unterminated"), a literal (``tru``: "Expecting value" at its first letter,
        # up to len("-Infinity") - 1 characters before the end) or an escape (``\u12``)
        near_end = exc.pos >= len(self._buf) - _LONGEST_CUT or exc.msg.startswith(
            "Unterminated string")
        if not near_end or self._eof:
            return False
        if len(self._buf) - self._pos > self.max_value:
            msg = (f"a single JSON value at character {self.offset()} is larger than "
                   f"{self.max_value // (1024 * 1024)} Mi characters")
            raise InputError(_MALFORMED, msg)
        return self._fill(size)

    def _error(self, exc: json.JSONDecodeError) -> InputError:
        at = self._consumed + exc.pos
        if (self._eof and exc.pos >= len(self._buf) - 2) or exc.msg.startswith("Unterminated"):
            return InputError(_MALFORMED, f"the JSON ends early at character {at} (truncated?)")
        return InputError(_MALFORMED, f"invalid JSON at character {at}: {exc.msg}")

    def skip(self) -> None:
        """Step over the next value, walking containers so nothing large is held."""
        char = self._peek()
        if char == "[":
            for _ in self.items():
                pass
        elif char == "{":
            for _ in self.members():
                self.skip()
        else:
            self.value()

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
