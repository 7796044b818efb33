"""The scans made faster for triage throughput (issue 21, item 9), each tested against the
plain code it replaced, on generated inputs and the lab's and shared sessions' command lines:

- ``_provided._written``: ``_WRITTEN.finditer`` as two literal-led searches merged;
- ``_masking._peeled``: ``unmask`` scanning the command's operators once, not once per peel;
- ``_parsers._gated_rules``: the rules whose gate is in a text, found through shared keys;
- ``_command.segments_of``: ``_segments`` kept for the last few scripts;
- redaction's ``cli_flag`` pattern (a literal first) and the ``need_any`` gates;
- ``_failcode_events.first_filled_line``: the sniff's first non-blank line, without splitting;
- ``_parsers.is_library_path``: word tests before the search.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from failcode.classification._command import _scan_segments, _segments, segments_of
from failcode.classification._parsers import _LIBRARY_PATH, RULES, _gated_rules, is_library_path
from failcode.signature import _redact
from failcode.triage.analysis import _masking
from failcode.triage.analysis._provided import _WRITTEN, _written
from failcode.triage.readers._failcode_events import first_filled_line

_ROOT = Path(__file__).parents[2]
_SOURCES = (_ROOT / "tests" / "lab" / "fixtures", _ROOT / ".." / "shared" / "data" /
            "agent-sessions")


def _strings(document: object) -> list[str]:
    """The str values of a JSON document, recursively."""
    if isinstance(document, str):
        return [document]
    if isinstance(document, dict):
        return [s for value in document.values() for s in _strings(value)]
    if isinstance(document, list):
        return [s for value in document for s in _strings(value)]
    return []


def _real_texts(limit: int = 4000) -> list[str]:
    """Command lines and outputs from the lab's fixtures and the shared sessions (those that
    are here): every JSON string value that looks like a command or a tool's output."""
    texts: list[str] = []
    for root in _SOURCES:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.json*")):
            for line in path.read_text("utf-8", "replace").splitlines() or [""]:
                try:
                    document = json.loads(line)
                except ValueError:
                    try:
                        document = json.loads(path.read_text("utf-8", "replace"))
                    except ValueError:
                        break
                    texts.extend(t for t in _strings(document) if len(t) > 3)
                    break
                texts.extend(t for t in _strings(document) if len(t) > 3)
            if len(texts) >= limit:
                return texts[:limit]
    return texts


_REAL = _real_texts()


def _spans(matches: object) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group(1)) for m in matches]  # type: ignore[attr-defined]


_WRITES = st.lists(st.sampled_from(
    ["t", "e", "ee", "tee", "xtee", "-a", " -a", " ", "\t", "\n", ">", ">>", "'", '"', ".py",
     "a.py", "b.pyc", "x", "/", "|", ";", "&", "<", "_", "1", ".", "\u00a0", "\u2003", "é"]),
    max_size=16).map("".join)


@settings(max_examples=3000)
@given(_WRITES)
@example("cat > app/models.py << 'EOF'\nx = 1\nEOF")
@example("echo hi | tee -a\n  out.py > b.py")
@example("a.pytee x.py")
def test_written_is_written_finditer(command: str) -> None:
    assert _spans(_written(command)) == _spans(_WRITTEN.finditer(command))


def test_written_is_written_finditer_on_real_commands() -> None:
    for text in _REAL:
        assert _spans(_written(text)) == _spans(_WRITTEN.finditer(text))


def _peeled_by_rescanning(command: str) -> tuple[str, bool, list[tuple[int, str]]]:
    """``unmask`` before: the operators of the inner command scanned again after each peel."""
    inner, peeled = command.strip(), False
    while True:
        operators = _masking._operators(inner)
        if not operators:
            return inner, peeled, operators
        position, operator = operators[-1]
        tail = inner[position + len(operator):].strip()
        hides = ((operator == "|" and _masking._first_word(tail) in _masking._FILTERS)
                 or (operator in ("||", ";") and _masking._DISCARD.match(tail) is not None))
        if not hides:
            return inner, peeled, operators
        inner, peeled = inner[:position].rstrip(), True


@settings(max_examples=3000)
@given(st.lists(st.sampled_from(
    ["|", "||", "&&", ";", "&", "'", '"', "\\", " ", "\n", "tail -5", "true", ":", "echo x",
     "exit 0", "grep e", "a", "sort", "$(x)", "|| true", "; echo done", "| head"]),
    max_size=14).map("".join))
@example("pytest -q 2>&1 | tail -5 || true")
@example("make 'a|b' \\| c ; echo done")
def test_peeled_is_unmask_rescanning(command: str) -> None:
    assert _masking._peeled(command) == _peeled_by_rescanning(command)


def test_peeled_is_unmask_rescanning_on_real_commands() -> None:
    for text in _REAL:
        assert _masking._peeled(text) == _peeled_by_rescanning(text)


def _gated_plainly(text: str) -> list[int]:
    return [index for index, rule in enumerate(RULES) if rule.gate in text]


_GATE_PIECES = sorted({rule.gate for rule in RULES} | {
    rule.gate[i:j] for rule in RULES for i in range(0, len(rule.gate), 3)
    for j in (i + 2, i + 4)})


@settings(max_examples=2000)
@given(st.lists(st.sampled_from([*_GATE_PIECES, " ", "\n", "x"]), max_size=8).map("".join))
def test_gated_rules_are_the_rules_whose_gate_is_in_the_text(text: str) -> None:
    assert [index for index, _ in _gated_rules(text)] == _gated_plainly(text)


def test_gated_rules_on_real_outputs() -> None:
    for text in _REAL:
        assert [index for index, _ in _gated_rules(text)] == _gated_plainly(text)


def test_segments_of_is_the_scan_and_copies_are_fresh() -> None:
    for text in [*_REAL[:500], "cd a && pytest -q | tail -5", ""]:
        assert list(segments_of(text)) == _scan_segments(text)
        first = _segments(text)
        first.append("changed")
        assert _segments(text) == _scan_segments(text)


_CLI_FLAG_BEFORE = re.compile(
    r"(?<![A-Za-z0-9_-])(?P<o>--?(?:[a-z0-9]+[-_.])*(?:pass(?:word|wd|phrase|in|out)?|pwd"
    r"|token|secret|(?:api|access|secret|private|client|account|master|storage)[-_]?key"
    r"|auth|(?:src|dest)?(?:store|key)pass))[ \t]+(?:pass:)?[\"']?"
    r"(?P<s>[^\s\"'`<>\\;|]+)", re.ASCII | re.IGNORECASE)
_CLI_FLAG = next(rule for rule in _redact._RULES if rule.name == "cli_flag")


def _flag_spans(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], ...]]:
    return [(m.span(), m.span("o"), m.span("s")) for m in pattern.finditer(text)]


@settings(max_examples=3000)
@given(st.lists(st.sampled_from(
    ["-", "--", "a", "_", "x", " ", "\t", "pass", "PASS", "key", "api-key", "token", "'", '"',
     "pass:", "v", "\n", ";", "1", "-p", "word", "."]), max_size=12).map("".join))
@example("docker run --password hunter2 x")
@example("a-b --api-key=1 --API_KEY 'abc'")
def test_cli_flag_finds_what_its_look_behind_first_form_found(text: str) -> None:
    assert _flag_spans(_CLI_FLAG.pattern, text) == _flag_spans(_CLI_FLAG_BEFORE, text)


def test_need_any_words_are_in_every_match() -> None:
    """A rule's ``need_any`` gate never hides a match: each match holds one of the words."""
    texts = ["docker login -p s3cretvalue1 registry", "sshpass -p 'p4ssw0rd!' ssh host",
             "twine upload -p tok3nvalue dist/*", "mysql -u root -phunter22 db",
             "mariadb --user=x -p'abc12345' db", "mysqldump -h h -pS3cret db",
             "az acr login -n x -p v4lue", *_REAL]
    for rule in _redact._RULES:
        if not rule.need_any:
            continue
        for text in texts:
            for match in rule.pattern.finditer(text):
                assert any(word in match.group(0) for word in rule.need_any), (rule.name, text)


def _first_filled_by_splitting(data: bytes) -> bytes | None:
    """The failcode-events sniff before: split the whole head, take the first filled line."""
    return next((line for line in data.splitlines(keepends=True) if line.strip()), None)


@settings(max_examples=3000)
@given(st.lists(st.sampled_from(
    [b"\n", b"\r", b"\r\n", b" ", b"\t", b"\x0b", b"\x0c", b"\x1c", b"\x85", b"a", b"{}"]),
    max_size=12).map(b"".join))
@example(b"\r\n  \n {\"a\": 1}\r\nnext\n")
def test_first_filled_line_is_the_first_filled_split_line(data: bytes) -> None:
    assert first_filled_line(data) == _first_filled_by_splitting(data)


@settings(max_examples=3000)
@given(st.lists(st.sampled_from(
    ["site-packages", "SITE-PACKAGES", "dist-packages", "-pac\u212aages", "site-package\u017f",
     "node_module\u017f", "node_modules", ".venv", ".VENV", "/", "\\", "lib", "lib64", "LIB",
     "python3.11", "Python311", "PYTHON3", "<frozen ", "<FROZEN ", "x", "p\u0131thon", "a.py"]),
    max_size=6).map("".join))
@example("/usr/lib/python3.11/os.py")
def test_is_library_path_is_the_plain_search(path: str) -> None:
    assert is_library_path(path) == (_LIBRARY_PATH.search(path) is not None)
