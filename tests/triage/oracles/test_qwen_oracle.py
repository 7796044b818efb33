"""Qwen Code's own session loading (``read`` and ``prepareTranscriptRecords``, what
``SessionService.loadSession`` rebuilds a chat with, run with node from a pinned install in the
lab cache) against failcode's reader, on every Qwen Code chat file of both corpora."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

import pytest

from tests.triage._data import SESSIONS, SESSIONS_2, need_data
from tests.triage.oracles._node import mismatches, qwen_package, read, run_node

if TYPE_CHECKING:
    from pathlib import Path


def chat_files() -> list[Path]:
    """Every Qwen Code chat: both corpora's ``qwen-code`` folders."""
    files: list[Path] = []
    for root in (SESSIONS, SESSIONS_2):
        need_data(root)
        files += sorted(p for p in (root / "qwen-code").rglob("chats/*.jsonl") if p.is_file())
    return files


@pytest.fixture(scope="module")
def oracle() -> dict[str, Any]:
    """Qwen Code's loading of every chat file, keyed by path."""
    return run_node("qwen_chat.mjs", qwen_package(), *chat_files())


def test_the_corpus_holds_qwen_code_chats() -> None:
    """The second corpus holds Qwen Code chats with tool calls (0.5.0 and 0.9.1)."""
    assert len(chat_files()) >= 4


def test_failcode_reads_what_qwen_code_loads(oracle: dict[str, Any]) -> None:
    """Steps, each step's command and each recorded exit status equal Qwen Code's own."""
    found = [m for path in chat_files() for m in mismatches(path, oracle[str(path)], "qwen-code")]
    assert not found, "\n".join(found)
    assert sum(len(oracle[str(p)]["steps"]) for p in chat_files()) > 100


_SESSION: Final = "5c7e5311-0000-4000-8000-000000000001"


def _record(uuid: str, parent: str | None, kind: str, parts: list[dict[str, Any]],
            **extra: Any) -> dict[str, Any]:
    """One record as Qwen Code's ``ChatRecordingService`` writes it."""
    role = "model" if kind == "assistant" else "user"
    return {"uuid": uuid, "parentUuid": parent, "sessionId": _SESSION,
            "timestamp": "2026-01-01T00:00:00.000Z", "type": kind, "cwd": "/p",
            "version": "0.24.4", "message": {"role": role, "parts": parts}, **extra}


def _call(key: str, command: str) -> dict[str, Any]:
    return {"functionCall": {"id": key, "name": "run_shell_command",
                             "args": {"command": command, "is_background": False}}}


def _result(uuid: str, parent: str, key: str, text: str, status: str = "success",
            ) -> dict[str, Any]:
    part = {"functionResponse": {"id": key, "name": "run_shell_command",
                                 "response": {"error" if status != "success" else "output": text}}}
    return _record(uuid, parent, "tool_result", [part],
                   toolCallResult={"callId": key, "status": status, "resultDisplay": text})


def _shell_text(command: str, exit_code: str, signal: str = "(none)") -> str:
    return (f"Command: {command}\nDirectory: (root)\nOutput: boom\nError: (none)\n"
            f"Exit Code: {exit_code}\nSignal: {signal}\nProcess Group PGID: 7")


SHAPES: Final[dict[str, list[dict[str, Any]]]] = {
    "a branch the person left is not the conversation": [
        _record("u1", None, "user", [{"text": "go"}]),
        _record("a1", "u1", "assistant", [_call("c1", "make")]),
        _result("r1", "a1", "c1", _shell_text("make", "2")),
        _record("a2", "u1", "assistant", [_call("c2", "ls")]),  # a retry from the prompt
        _result("r2", "a2", "c2", _shell_text("ls", "0")),
        _record("a3", "r2", "assistant", [{"text": "done"}])],
    "fragments of one record are joined": [
        _record("u1", None, "user", [{"text": "go"}]),
        _record("a1", "u1", "assistant", [{"text": "first"}]),
        _record("a1", "u1", "assistant", [_call("c1", "make")]),
        _result("r1", "a1", "c1", _shell_text("make", "2"))],
    "a declined approval, a signal and a call that never ran": [
        _record("u1", None, "user", [{"text": "go"}]),
        _record("a1", "u1", "assistant", [_call("c1", "rm -rf build")]),
        _result("r1", "a1", "c1", "[Operation Cancelled] Reason: User did not allow tool call",
                "cancelled"),
        _record("a2", "r1", "assistant", [_call("c2", "yes")]),
        _result("r2", "a2", "c2", _shell_text("yes", "(none)", "9")),
        _record("a3", "r2", "assistant", [_call("c3", "make")])],
    "a missing parent ends the chain (what came before is not rebuilt)": [
        _record("u1", None, "user", [{"text": "go"}]),
        _record("a1", "u1", "assistant", [_call("c1", "make")]),
        _result("r1", "a1", "c1", _shell_text("make", "2")),
        _record("a2", "gone", "assistant", [_call("c2", "ls")]),
        _result("r2", "a2", "c2", _shell_text("ls", "0"))],
    "system records on the chain, and a compression, change no step": [
        _record("u1", None, "user", [{"text": "go"}]),
        _record("s1", "u1", "system", [], subtype="chat_compression", systemPayload={}),
        _record("a1", "s1", "assistant", [_call("c1", "make")]),
        _result("r1", "a1", "c1", _shell_text("make", "2")),
        _record("s2", "r1", "system", [], subtype="ui_telemetry",
                systemPayload={"uiEvent": {"event.name": "qwen-code.api_response"}}),
        _record("a2", "s2", "assistant", [{"text": "done"}])],
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_format_shapes_read_as_qwen_code_loads_them(shape: str, tmp_path: Path) -> None:
    """Each tree shape Qwen Code's recorder writes is read as its own loader reads it."""
    path = tmp_path / f"{_SESSION}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in SHAPES[shape]))
    loaded = run_node("qwen_chat.mjs", qwen_package(), path)[str(path)]
    assert loaded["steps"], "Qwen Code loaded no step"
    assert mismatches(path, loaded, "qwen-code") == []


def test_a_declined_approval_is_a_cancelled_outcome(tmp_path: Path) -> None:
    """Qwen Code's "User did not allow tool call" is the person declining: cancelled, no
    failure."""
    path = tmp_path / f"{_SESSION}.jsonl"
    lines = SHAPES["a declined approval, a signal and a call that never ran"]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (session,) = read(path, "qwen-code")
    (event,) = session.by_step[0]
    assert "declined by the user" in str(getattr(event, "outcome", ""))
