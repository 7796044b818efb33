"""``_lex.split``: the words ``shlex.split`` gives, on generated and real command lines."""

from __future__ import annotations

import json
import shlex

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from failcode.classification._command import _segments
from failcode.classification._lex import split
from tests._paths import REPO

_PIECES = st.sampled_from([
    "a", "bc", " ", "\t", "\n", "\r", "\x0b", "\xa0", "é", "'", '"', "\\", "#", "x#y", "$", "|",
    "&&", ";", "\\\n", '\\"', "\\\\", "''", '""', "'a b'", '"c \\" d"', "-m", "=",
])


def _shlex(text: str, *, comments: bool) -> list[str] | str:
    try:
        return shlex.split(text, comments=comments)
    except ValueError:
        return "ValueError"


def _ours(text: str, *, comments: bool) -> list[str] | str:
    try:
        return split(text, comments=comments)
    except ValueError:
        return "ValueError"


@settings(max_examples=3000)
@given(text=st.lists(_PIECES, max_size=16).map("".join), comments=st.booleans())
@example(text="a '' b", comments=False)
@example(text="foo#bar baz", comments=True)
@example(text='say "a\\$b" \\\nnext', comments=False)
@example(text="unclosed 'quote", comments=False)
@example(text="trailing \\", comments=True)
def test_split_gives_shlex_words(text: str, comments: bool) -> None:
    """Same words, or ValueError where shlex raises it, with and without comments."""
    assert _ours(text, comments=comments) == _shlex(text, comments=comments)


def _commands() -> list[str]:
    """Every shell command of the lab's mini-swe-agent fixtures (real agents' command lines)."""
    found: list[str] = []
    for path in sorted((REPO / "tests" / "lab" / "fixtures" / "mini-swe-agent").rglob("*.json")):
        document = json.loads(path.read_bytes())
        for message in document.get("messages", []) if isinstance(document, dict) else []:
            for call in message.get("tool_calls") or []:
                arguments = (call.get("function") or {}).get("arguments")
                if isinstance(arguments, str) and arguments.startswith("{"):
                    command = json.loads(arguments).get("command")
                    if isinstance(command, str):
                        found.append(command)
    return found


def test_split_gives_shlex_words_on_real_command_lines() -> None:
    """Whole commands, their lines and the segments ``from_command`` splits them into."""
    commands = _commands()
    if not commands:
        pytest.skip("no mini-swe-agent fixtures with tool calls")
    texts = [*commands, *(line for c in commands for line in c.split("\n")),
             *(segment for c in commands for segment in _segments(c))]
    for text in texts:
        for comments in (False, True):
            assert _ours(text, comments=comments) == _shlex(text, comments=comments), text
