"""Split a shell command line into words: :func:`shlex.split`'s result, without its per-character
Python loop.

``shlex.split`` reads its input one character at a time through a state machine; on the
command lines agents run (scripts of hundreds of lines) it was most of the time spent
classifying a failing command. :func:`split` gives the same words (tested against ``shlex`` on
generated and real command lines) from one regular-expression scan:

- words are separated by runs of space, tab, carriage return and newline (only those);
- single quotes keep everything up to the next single quote; double quotes keep everything up
  to the next unescaped double quote, where a backslash escapes only ``"`` and ``\\``;
  outside quotes a backslash escapes any character; quoted pieces and plain text join into one
  word, and ``''`` is an empty word;
- with ``comments``, ``#`` outside quotes and escapes ends the word and the rest of the line;
- an unclosed quote or a trailing backslash raises :class:`ValueError`, as ``shlex`` does.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

__all__ = ["split"]

_SEPARATORS: Final = re.compile(r"[ \t\r\n]+")
_SPECIAL: Final = re.compile(r"['\"\\]")
_SPECIAL_HASH: Final = re.compile(r"['\"\\#]")
_TOKEN: Final = re.compile(
    r"(?P<ws>[ \t\r\n]+)|'(?P<sq>[^']*)'|\"(?P<dq>(?:[^\"\\]|\\.)*)\"|\\(?P<esc>.)"
    r"|(?P<plain>[^ \t\r\n'\"\\]+)", re.DOTALL)
_TOKEN_HASH: Final = re.compile(
    r"(?P<ws>[ \t\r\n]+)|'(?P<sq>[^']*)'|\"(?P<dq>(?:[^\"\\]|\\.)*)\"|\\(?P<esc>.)"
    r"|(?P<comment>#[^\n]*\n?)|(?P<plain>[^ \t\r\n'\"\\#]+)", re.DOTALL)
_DQ_ESCAPE: Final = re.compile(r"\\([\"\\])")


def split(text: str, *, comments: bool = False) -> list[str]:
    """``shlex.split(text, comments=comments)`` (POSIX rules).

    Raises:
        ValueError: an unclosed quote, or a backslash at the end of ``text``.
    """
    return list(_split(text, comments))


@lru_cache(maxsize=8192)
def _split(text: str, comments: bool) -> tuple[str, ...]:
    if (_SPECIAL_HASH if comments else _SPECIAL).search(text) is None:
        return tuple(word for word in _SEPARATORS.split(text) if word)
    words: list[str] = []
    word: list[str] = []
    quoted = False
    position, end = 0, len(text)
    token = _TOKEN_HASH if comments else _TOKEN
    while position < end:
        match = token.match(text, position)
        if match is None:  # a quote with no closing quote, or a backslash at the end
            msg = "No escaped character" if text[position] == "\\" else "No closing quotation"
            raise ValueError(msg)
        position = match.end()
        kind = match.lastgroup
        if kind in {"ws", "comment"}:
            if word or quoted:
                words.append("".join(word))
            word, quoted = [], False
        elif kind == "plain":
            word.append(match.group("plain"))
        elif kind == "sq":
            word.append(match.group("sq"))
            quoted = True
        elif kind == "dq":
            word.append(_DQ_ESCAPE.sub(r"\1", match.group("dq")))
            quoted = True
        else:
            word.append(match.group("esc"))
    if word or quoted:
        words.append("".join(word))
    return tuple(words)
