"""``_lex.split``: the words ``shlex.split`` gives, on generated and real command lines."""

from __future__ import annotations

import json
import shlex

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from failcode.classification._command import _read_heredoc_word, _segments, _skip_heredocs
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


def _segments_by_character(script: str) -> list[str]:  # noqa: PLR0915
    """``_segments`` before its runs of plain characters: one branch per character."""
    segments: list[str] = []
    current: list[str] = []
    heredocs: list[tuple[str, bool]] = []
    quote: str | None = None
    depth = 0
    i, n = 0, len(script)

    def flush() -> None:
        text = "".join(current).strip()
        if text:
            segments.append(text)
        current.clear()

    while i < n:
        c = script[i]
        if quote == "'":
            current.append(c)
            if c == "'":
                quote = None
        elif quote == '"':
            current.append(c)
            if c == "\\" and i + 1 < n:
                current.append(script[i + 1])
                i += 1
            elif c == '"':
                quote = None
        elif c == "\\":
            if i + 1 < n and script[i + 1] == "\n":
                i += 2
                continue
            current.append(script[i: i + 2])
            i += 1
        elif c in "'\"":
            quote = c
            current.append(c)
        elif c == "#" and (i == 0 or script[i - 1] in " \t\n;&|()"):
            end = script.find("\n", i)
            i = n if end < 0 else end
            continue
        elif c == "$" and i + 1 < n and script[i + 1] == "(":
            depth += 1
            current.append("$(")
            i += 1
        elif c == "`":
            depth = depth - 1 if depth and current.count("`") % 2 else depth + 1
            current.append(c)
        elif c == "<" and script.startswith("<<", i) and not script.startswith("<<<", i):
            i = _read_heredoc_word(script, i + 2, heredocs)
            current.append(" ")
            continue
        elif c == "\n":
            if heredocs:
                i = _skip_heredocs(script, i + 1, heredocs)
                heredocs.clear()
                if depth == 0:
                    flush()
                continue
            if depth == 0:
                flush()
        elif depth and c == ")":
            depth -= 1
            current.append(c)
        elif c == "&" and (script.startswith("&>", i) or (current and current[-1] in "<>")):
            current.append(c)
        elif depth == 0 and c in ";&|()":
            flush()
        else:
            current.append(c)
        i += 1
    flush()
    return segments


_SHELL = st.sampled_from([
    "a", "bc", " ", "\t", "\n", "'", '"', "\\", "#", "$", "`", "<", ">", "(", ")", ";", "&", "|",
    "$(", "<<EOF\n", "EOF\n", "<<-'X'\n", "\tX\n", "2>&1", "&>", "<<<", "\\\n", " # c\n", "``",
])


@settings(max_examples=3000)
@given(st.lists(_SHELL, max_size=20).map("".join))
@example("cd /repo && python -m pytest -q 2>&1 | tail -5; echo \"done `date`\"")
@example("cat > f.py <<'EOF'\nprint('a; b')\nEOF\npython f.py")
def test_segments_are_the_character_lexers(script: str) -> None:
    """The simple commands of a script are the ones the character-by-character lexer found."""
    assert _segments(script) == _segments_by_character(script)


def test_segments_are_the_character_lexers_on_real_command_lines() -> None:
    commands = _commands()
    if not commands:
        pytest.skip("no mini-swe-agent fixtures with tool calls")
    for command in commands:
        assert _segments(command) == _segments_by_character(command), command
