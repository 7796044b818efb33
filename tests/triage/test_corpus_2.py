"""The second real corpus (issue 32, item 1): every file is read with no input error, or is
rejected with FC-DATA-002 naming a format failcode recognises and does not read yet."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from failcode.triage import TriageResult, triage
from failcode.triage.readers._unread import UNREAD
from tests.triage._data import sessions_2_dir, sessions_dir

UNREAD_NAMES = {reader.name for reader in UNREAD}


@pytest.fixture(scope="module")
def both() -> TriageResult:
    """Both corpora, triaged once."""
    return triage([sessions_dir(), sessions_2_dir()], jobs=1)


def test_every_file_is_read_or_rejected_naming_its_format(both: TriageResult) -> None:
    """No input error but FC-DATA-002 of a format failcode recognises (the input's format
    names it); nothing skipped but the corpus's notes."""
    problems = [f"{i.path}: {i.error_code} {i.error_message}" for i in both.inputs
                if i.error_code is not None
                and not (i.error_code == "FC-DATA-002" and i.format is not None)]
    assert problems == []
    skipped = [Path(p) for p in both.skipped]
    unread = [p for p in skipped if p.name != "SOURCES.md"
              # a Harbor trial's result.json is read with the trajectory beside it
              and not (p.name == "result.json" and (p.parent / "agent").is_dir())]
    assert unread == []


def test_a_recognised_format_names_itself_in_its_error(both: TriageResult) -> None:
    """terminal-bench's cast, results and keystrokes, the raw capture: each names its format."""
    named = Counter(i.format for i in both.inputs
                    if i.format in UNREAD_NAMES)
    assert {"asciinema", "terminal-bench-results", "terminal-bench-commands",
            "terminal-capture"} <= set(named)
    for item in both.inputs:
        if item.format in UNREAD_NAMES:
            assert "a format failcode does not read yet" in (item.error_message or "")


def test_a_chat_in_which_no_tool_ran_is_a_session() -> None:
    """A Gemini CLI chat with no tool call is a session of 0 steps, not an unreadable file."""
    root = sessions_2_dir()
    chats = sorted((root / "gemini-cli").rglob("session-*.json"))
    assert chats
    result = triage(chats)
    assert [i.error_code for i in result.inputs] == [None] * len(chats)
    assert len(result.sessions) == len(chats)
    assert {s.steps for s in result.sessions} == {0}


def test_a_subagent_transcript_ends_as_its_own_chain() -> None:
    """A Claude Code subagent file (sidechain lines only) that answered ended submitted."""
    root = sessions_2_dir()
    warmups = sorted((root / "claude-code" / "LilLeapo__cccc_clash_test").rglob("agent-*.jsonl"))
    assert warmups
    result = triage(warmups)
    assert [i.error_code for i in result.inputs] == [None] * len(warmups)
    assert [s.status for s in result.sessions] == ["submitted"] * len(warmups)


def test_the_totals_say_how_many_inputs_are_in_formats_not_read_yet() -> None:
    """A terminal-bench run folder: every input fails as a format not read yet, and the
    summary's first line says so (exit 2: inputs could not be read)."""
    folder = sessions_2_dir() / "terminal-bench-1"
    done = subprocess.run([sys.executable, "-m", "failcode", "triage", str(folder)],
                          capture_output=True, text=True, check=False)
    first = done.stdout.splitlines()[0]
    count = sum(1 for p in folder.rglob("*") if p.is_file())
    assert first == (f"failcode triage: 0 inputs read, 0 skipped, {count} failed ({count} in "
                     "formats not read yet)")
    assert done.returncode == 2
