"""Gemini CLI's own chat loading (``loadConversationRecord``, what ``--resume`` reads a session
with, run with node from the lab's pinned install) against failcode's reader, on every Gemini
CLI chat file of both corpora and the lab."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

import pytest

from tests._paths import TESTS
from tests.triage._data import SESSIONS, SESSIONS_2, need_data
from tests.triage.oracles._node import gemini_bundle, mismatches, run_node

if TYPE_CHECKING:
    from pathlib import Path

LAB: Final = TESTS / "lab" / "fixtures" / "gemini-cli"


def chat_files() -> list[Path]:
    """Every Gemini CLI chat file: both corpora's ``gemini-cli`` folders and the lab's."""
    files = sorted(LAB.rglob("session-*.json*"))
    for root in (SESSIONS, SESSIONS_2):
        need_data(root)
        files += sorted(p for p in (root / "gemini-cli").rglob("session-*.json*") if p.is_file())
    return files


@pytest.fixture(scope="module")
def oracle() -> dict[str, Any]:
    """Gemini CLI's loading of every chat file, keyed by path."""
    bundle = gemini_bundle()
    return run_node("gemini_chat.mjs", bundle, *chat_files())


def test_every_chat_file_is_found() -> None:
    """The lab's fixtures and the second corpus both hold Gemini CLI chats."""
    files = chat_files()
    assert any(LAB in p.parents for p in files)
    assert any(SESSIONS_2 in p.parents for p in files)


def test_failcode_reads_what_gemini_cli_loads(oracle: dict[str, Any]) -> None:
    """Steps, each step's command and each recorded exit status equal Gemini CLI's own."""
    found = [m for path in chat_files() for m in mismatches(path, oracle[str(path)], "gemini-cli")]
    assert not found, "\n".join(found)


def _call(number: int, command: str, text: str, status: str = "success") -> dict[str, Any]:
    """A ``run_shell_command`` entry of a model record, as ``ChatRecordingService`` writes it."""
    response = {"output": text}
    return {"id": f"call-{number}", "name": "run_shell_command", "args": {"command": command},
            "status": status, "timestamp": "2026-01-01T00:00:00.000Z",
            "result": [{"functionResponse": {"id": f"call-{number}", "name": "run_shell_command",
                                             "response": response}}]}


def _model(key: str, *calls: dict[str, Any]) -> dict[str, Any]:
    return {"id": key, "timestamp": "2026-01-01T00:00:00.000Z", "type": "gemini",
            "content": "", "model": "gemini-2.5-flash", "toolCalls": list(calls)}


def _user(key: str) -> dict[str, Any]:
    return {"id": key, "timestamp": "2026-01-01T00:00:00.000Z", "type": "user",
            "content": [{"text": "go"}]}


_HEADER: Final = {"sessionId": "s-1", "projectHash": "p", "startTime": "2026-01-01T00:00:00Z",
                  "kind": "main"}
_FAILED: Final = "Output: boom\nExit Code: 2\nProcess Group PGID: 7"
_PASSED: Final = "Output: fine\nProcess Group PGID: 7"

SHAPES: Final[dict[str, list[dict[str, Any]]]] = {
    "a model record written again with its tool calls": [
        _HEADER, _user("u1"), _model("m1"), _model("m1", _call(1, "make", _FAILED))],
    "a $set of messages replaces the records before it": [
        _HEADER, _user("u1"), _model("m1", _call(1, "make", _FAILED)),
        {"$set": {"messages": [_user("u2"), _model("m2", _call(2, "ls", _PASSED))]}}],
    "a rewind drops the record and what follows": [
        _HEADER, _user("u1"), _model("m1", _call(1, "make", _FAILED)), _user("u2"),
        _model("m2", _call(2, "ls", _PASSED)), {"$rewindTo": "u2"}],
    "a rewind to an unknown id drops everything": [
        _HEADER, _user("u1"), _model("m1", _call(1, "make", _FAILED)), {"$rewindTo": "nope"},
        _user("u3"), _model("m3", _call(3, "ls", _PASSED))],
    "a cancelled call and a signal": [
        _HEADER, _user("u1"),
        _model("m1", _call(1, "sleep 9", "", "cancelled"),
               _call(2, "yes", "Output: y\nSignal: 9\nProcess Group PGID: 7"))],
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_format_shapes_read_as_gemini_cli_loads_them(shape: str, tmp_path: Path) -> None:
    """Each way Gemini CLI's recorder rewrites a chat is read as its own loader reads it."""
    path = tmp_path / "session-2026-01-01T00-00-00000000.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in SHAPES[shape]))
    loaded = run_node("gemini_chat.mjs", gemini_bundle(), path)[str(path)]
    assert loaded is not None
    assert loaded["steps"], "Gemini CLI loaded no step"
    assert mismatches(path, loaded, "gemini-cli") == []


def test_the_one_document_chat_reads_as_gemini_cli_loads_it(tmp_path: Path) -> None:
    """The older one-document ``.json`` chat (Gemini CLI's legacy fallback reads it)."""
    path = tmp_path / "session-2025-09-16T20-39-00000000.json"
    messages = [_user("u1"), _model("m1", _call(1, "make", _FAILED), _call(2, "ls", _PASSED))]
    path.write_text(json.dumps({**_HEADER, "lastUpdated": "2026-01-01T00:00:00Z",
                                "messages": messages}, indent=2))
    loaded = run_node("gemini_chat.mjs", gemini_bundle(), path)[str(path)]
    assert loaded is not None
    assert len(loaded["steps"]) == 2
    assert mismatches(path, loaded, "gemini-cli") == []
