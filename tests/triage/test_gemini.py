"""The Gemini CLI chat-recording reader, on the JSONL recording and the older one-document chat.

The JSONL shape is the session lab's own run (``tests/lab/fixtures/gemini-cli/``); the other
records are built here from the fields Gemini CLI's chat recording service writes
(``toolCalls`` with ``status`` and ``result[].functionResponse``, ``$set`` patches, re-written
ids), none copied from a real session.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from failcode.triage import triage
from tests.lab.runner import FIXTURES

if TYPE_CHECKING:
    from pathlib import Path

    from failcode.triage import SessionResult

HEADER = {"sessionId": "5b1f2a9c-6d7e-4f80-9a1b-2c3d4e5f6a7b", "projectHash": "ab" * 32,
          "startTime": "2025-11-02T08:00:00.000Z", "kind": "main"}


def _shell(command: str, output: str, status: str = "success") -> dict[str, Any]:
    return {"id": f"run_shell_command_{abs(hash(command)) % 1000}", "name": "run_shell_command",
            "args": {"command": command}, "status": status,
            "result": [{"functionResponse": {"name": "run_shell_command", "response": {
                "output": f"<untrusted_context>\n{output}\n</untrusted_context>"}}}]}


def _model(record_id: str, calls: list[dict[str, Any]] | None = None,
           text: str = "") -> dict[str, Any]:
    record: dict[str, Any] = {"id": record_id, "timestamp": "2025-11-02T08:00:05.000Z",
                              "type": "gemini", "content": text, "model": "gemini-2.5-pro"}
    if calls is not None:
        record["toolCalls"] = calls
    return record


def _write(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "session-2025-11-02T08-00-5b1f2a9c.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [HEADER, *records]))
    return path


def _one(path: Path) -> SessionResult:
    result = triage([path])
    assert [(i.format, i.error_code) for i in result.inputs] == [("gemini-cli", None)]
    assert len(result.sessions) == 1
    return result.sessions[0]


def test_the_lab_recording_is_read_step_by_step() -> None:
    """The pinned Gemini CLI's chat: a missing program at step 0, then a success; submitted."""
    path = next((FIXTURES / "gemini-cli" / "missing-program" / "session").rglob("*.jsonl"))
    session = _one(path)
    assert session.steps == 2
    assert [(e.step, e.failure.code) for e in session.failures] == [(0, "FC-CMD-001")]
    assert session.status == "submitted"


def test_a_success_status_with_an_exit_code_line_is_a_failure(tmp_path: Path) -> None:
    """``status: success`` is not trusted: ``Exit Code: 127`` in the output is the status."""
    path = _write(tmp_path, [
        _model("m1", [_shell("cargo build", "Output: bash: cargo: command not found\n"
                                            "Exit Code: 127\nProcess Group PGID: 77")]),
        _model("m2", text="done"),
    ])
    session = _one(path)
    assert [(e.step, e.failure.code) for e in session.failures] == [(0, "FC-CMD-001")]
    assert session.status == "submitted"


def test_no_exit_code_line_means_the_command_succeeded(tmp_path: Path) -> None:
    """Without an ``Exit Code`` line the command exited 0: no failure."""
    path = _write(tmp_path, [_model("m1", [_shell("ls", "Output: src\nProcess Group PGID: 77")])])
    assert _one(path).failures == []


def test_a_rewritten_record_replaces_the_earlier_one(tmp_path: Path) -> None:
    """The same id written twice (without, then with its tool calls) is one record."""
    failing = _shell("python -m pytest -q", "Output: F\nFAILED test_a.py::test_x - assert 1 == 2"
                                            "\n1 failed in 0.01s\nExit Code: 1")
    path = _write(tmp_path, [_model("m1"), {"$set": {"lastUpdated": "x"}},
                             _model("m1", [failing])])
    session = _one(path)
    assert session.steps == 1
    assert [(e.step, str(e.failure.kind)) for e in session.failures] == [(0, "test_error")]


def test_records_in_a_set_patch_are_read(tmp_path: Path) -> None:
    """A ``$set`` of ``messages`` brings records like any other line."""
    failing = _shell("gcc bad.c", "Output: bad.c:1:10: error: expected ';' before '}' token"
                                  "\nExit Code: 1")
    path = _write(tmp_path, [{"$set": {"messages": [_model("m1", [failing])]}}])
    assert [(e.step, str(e.failure.kind)) for e in _one(path).failures] == [(0, "build_error")]


def test_a_tool_error_is_a_rejected_action(tmp_path: Path) -> None:
    """A non-shell tool call with ``status: error`` was fed back to the model."""
    refused = {"id": "replace_1", "name": "replace", "status": "error",
               "args": {"file_path": "/w/app.py", "old_string": "x", "new_string": "y"},
               "result": [{"functionResponse": {"name": "replace", "response": {
                   "error": "Could not find an exact match for 'old_string'"}}}]}
    session = _one(_write(tmp_path, [_model("m1", [refused])]))
    assert session.failures == []
    assert [type(e.outcome).__name__ for e in session.outcomes] == ["RejectedAction"]


def test_a_cancelled_call_is_a_cancelled_outcome(tmp_path: Path) -> None:
    """A cancelled call never ran: no failure, a cancelled outcome, still a step."""
    cancelled = {**_shell("rm -rf build", "Output: (empty)\nExit Code: 1"), "status": "cancelled"}
    session = _one(_write(tmp_path, [_model("m1", [cancelled])]))
    assert (session.failures, session.steps) == ([], 1)
    assert [(e.step, type(e.outcome).__name__, e.evidence) for e in session.outcomes] == [
        (0, "Cancelled", "rm -rf build")]


def test_an_error_record_naming_an_api_error_ends_on_the_provider(tmp_path: Path) -> None:
    """An ``error`` record with an API error and a status is the provider error that ended it."""
    path = _write(tmp_path, [{"id": "e1", "type": "error", "timestamp": "2025-11-02T08:01:00Z",
                              "content": "[API Error: got status: 429 Too Many Requests. "
                                         "Quota exceeded]"}])
    session = _one(path)
    assert session.status == "provider_error"
    assert session.ended_failure is not None
    assert str(session.ended_failure.kind) == "provider_error"


def test_a_chat_that_stops_after_a_tool_result_ended_unknown(tmp_path: Path) -> None:
    """No model answer after the last tool result: how it ended is not recorded."""
    path = _write(tmp_path, [_model("m1", [_shell("echo hi", "Output: hi")])])
    assert _one(path).status == "unknown"


def test_the_older_one_document_chat_is_read(tmp_path: Path) -> None:
    """A chat written as one JSON object with ``messages`` is read like the recording."""
    failing = _shell("node --test", "Output: not ok 1 - adds\n# fail 1\nExit Code: 1")
    doc = {**{k: v for k, v in HEADER.items() if k != "kind"},
           "lastUpdated": "2025-11-02T08:02:00.000Z",
           "messages": [{"id": "u1", "type": "user", "content": "go"},
                        _model("m1", [failing]), _model("m2", text="done")]}
    path = tmp_path / "session-2025-11-02T08-00-5b1f2a9c.json"
    path.write_text(json.dumps(doc, indent=2))
    session = _one(path)
    assert session.session == HEADER["sessionId"]
    assert [e.step for e in session.failures] == [0]
    assert session.status == "submitted"


def test_a_bad_line_is_an_input_error_naming_it(tmp_path: Path) -> None:
    """A line that is not JSON stops the reader with FC-DATA-003 naming the line."""
    path = tmp_path / "session.jsonl"
    path.write_text(json.dumps(HEADER) + "\n{not json\n")
    result = triage([path])
    assert result.inputs[0].error_code == "FC-DATA-003"
    assert "line 2" in (result.inputs[0].error_message or "")
