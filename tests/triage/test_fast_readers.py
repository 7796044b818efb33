"""The reading loops made faster for throughput, each tested against the simple loop it
replaced: ``_lines.lines`` (chunks, not ``readline``), ``_masking._operators`` (a regular
expression jump, not a character loop) and ``JsonStream`` (a value cut by the window's end)."""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from failcode.triage._events import InputError
from failcode.triage.analysis._masking import _operators
from failcode.triage.readers._jsonstream import JsonStream
from failcode.triage.readers._lines import _CHUNK, lines

if TYPE_CHECKING:
    from collections.abc import Iterator


def _readline_lines(stream: io.BytesIO, *, max_line: int = 32 << 20, strict: bool = True,
                    ) -> Iterator[tuple[int, str]]:
    """The line reader before chunks: one ``readline`` per line (the reference)."""
    number = 0
    while raw := stream.readline(_CHUNK):
        number += 1
        if not raw.endswith(b"\n") and len(raw) == _CHUNK:
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
        try:
            text = raw.decode("utf-8", "strict" if strict else "replace")
        except UnicodeDecodeError as exc:
            msg = f"line {number} is not UTF-8 ({exc.reason} at byte {exc.start})"
            raise InputError("FC-DATA-003", msg) from None
        if number == 1 and text.startswith("\ufeff"):
            text = text[1:]
        yield number, text.rstrip("\r\n")


def _read(reader: object, data: bytes, **options: object) -> list[object]:
    found: list[object] = []
    try:  # extend keeps what came before an error
        found.extend(reader(io.BytesIO(data), **options))  # type: ignore[operator]
    except InputError as exc:
        found.append(("error", exc.problem))
    return found


_BYTES = st.lists(st.sampled_from([
    b"a", b"bc", b"\n", b"\r", b"\r\n", "é".encode(), "€".encode(), b"\xe2\x82", b"\xff",
    b"\xef\xbb\xbf", b" ", b"\x00", "😀".encode()[:3], "😀".encode()]), max_size=60).map(b"".join)


@settings(max_examples=1500)
@given(data=_BYTES, strict=st.booleans())
@example(data=b"\xef\xbb\xbfbom\r\nnext", strict=True)
@example(data=b"ok\n\xe2\x82\nafter\n", strict=True)
def test_lines_reads_what_readline_read(data: bytes, strict: bool) -> None:
    """Same numbers, texts and FC-DATA-003 message (invalid UTF-8), same lines before it."""
    assert _read(lines, data, strict=strict) == _read(_readline_lines, data, strict=strict)


@pytest.mark.parametrize("size", [_CHUNK - 1, _CHUNK, _CHUNK + 1, 3 * _CHUNK + 7])
@pytest.mark.parametrize("max_line", [1, 2 * _CHUNK])
@pytest.mark.parametrize("tail", [b"", b"\n", b"\nnext\n"])
def test_lines_bounds_long_lines_as_readline_did(size: int, max_line: int, tail: bytes) -> None:
    """A line over ``max_line`` (and over a chunk) is FC-DATA-003 naming it, as before."""
    data = b"first\n" + b"x" * size + tail
    ours = [item if item[0] == "error" else (item[0], len(item[1]))  # type: ignore[index]
            for item in _read(lines, data, max_line=max_line)]
    theirs = [item if item[0] == "error" else (item[0], len(item[1]))  # type: ignore[index]
              for item in _read(_readline_lines, data, max_line=max_line)]
    assert ours == theirs


def _character_operators(command: str) -> list[tuple[int, str]]:
    """The operator scan before the regular expression: one character at a time."""
    found: list[tuple[int, str]] = []
    quote, index = "", 0
    while index < len(command):
        char = command[index]
        if quote:
            if char == "\\" and quote == '"':
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "\\":
            index += 1
        elif command.startswith(("||", "&&"), index):
            found.append((index, command[index:index + 2]))
            index += 1
        elif char in "|;":
            found.append((index, char))
        index += 1
    return found


@settings(max_examples=3000)
@given(st.lists(st.sampled_from([*"ab |;&'\"\\\n", "||", "&&", "|||", '\\"', "\\'"]),
                max_size=20).map("".join))
@example("pytest -q 2>&1 | tail -5 || true")
@example("echo 'a|b' \"c;d\" e\\|f && g")
def test_operators_are_found_where_the_character_loop_found_them(command: str) -> None:
    assert _operators(command) == _character_operators(command)


@pytest.mark.parametrize("literal", ["true", "false", "null", "-Infinity", "NaN", "12.5e3",
                                     '"\\u00e9"', '"text"'])
@pytest.mark.parametrize("before_end", range(1, 11))
def test_a_value_cut_by_the_window_is_read_whole(literal: str, before_end: int) -> None:
    """A literal of an item split by the end of the first 1 MiB read (``tru|e``) is read on
    when more comes, not reported as invalid JSON."""
    head, key = '[{"pad": "', '", "v": '
    pad = "x" * (_CHUNK - before_end - len(head) - len(key))
    document = f"{head}{pad}{key}{literal}}}, {{\"w\": [{literal}]}}]"
    assert list(JsonStream(io.BytesIO(document.encode())).items()) == json.loads(document)
