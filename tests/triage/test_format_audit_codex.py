"""The Codex rollout reader, on the records an audit of Codex's own source found it missed.

Each rollout line is written in the shape Codex serializes it (the source file is named at
each test); none is copied from a real session. Which records reach the rollout at all is
``codex-rs/rollout/src/policy.rs`` (``patch_apply_end``, ``mcp_tool_call_end`` and
``turn_aborted`` in every mode; ``exec_command_end`` and ``error`` in extended mode).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from failcode.triage import triage

if TYPE_CHECKING:
    from pathlib import Path

    from failcode.triage import SessionResult

META = {"timestamp": "2026-03-01T10:00:00.000Z", "type": "session_meta",
        "payload": {"id": "019c0a1b-2c3d-7e4f-8a9b-0c1d2e3f4a5b", "cwd": "/work/app",
                    "cli_version": "0.120.0", "originator": "codex_cli_rs"}}


def _line(kind: str, payload: dict[str, Any], second: int = 1) -> dict[str, Any]:
    return {"timestamp": f"2026-03-01T10:00:{second:02d}.000Z", "type": kind,
            "payload": payload}


def _function_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    # codex-rs/protocol/src/models.rs: ResponseItem::FunctionCall, arguments as JSON text
    return _line("response_item", {"type": "function_call", "name": name,
                                   "arguments": json.dumps(arguments), "call_id": call_id})


def _exec(call_id: str, cmd: str) -> dict[str, Any]:
    return _function_call(call_id, "exec_command", {"cmd": cmd, "yield_time_ms": 1000})


def _output(call_id: str, output: object) -> dict[str, Any]:
    # models.rs: FunctionCallOutputPayload serializes as a plain string or content items
    return _line("response_item", {"type": "function_call_output", "call_id": call_id,
                                   "output": output})


def _patch_call(call_id: str) -> dict[str, Any]:
    # models.rs: ResponseItem::CustomToolCall, the freeform apply_patch tool's raw input
    return _line("response_item", {
        "type": "custom_tool_call", "status": "completed", "call_id": call_id,
        "name": "apply_patch",
        "input": "*** Begin Patch\n*** Update File: src/app.py\n@@\n-a\n+b\n*** End Patch\n"})


def _custom_output(call_id: str, output: str) -> dict[str, Any]:
    return _line("response_item", {"type": "custom_tool_call_output", "call_id": call_id,
                                   "output": output})


def _event(payload: dict[str, Any]) -> dict[str, Any]:
    return _line("event_msg", payload)


def _write(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "rollout-2026-03-01T10-00-00-019c0a1b.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _one(path: Path) -> SessionResult:
    result = triage([path])
    assert [(i.format, i.error_code) for i in result.inputs] == [("codex", None)]
    assert len(result.sessions) == 1
    return result.sessions[0]


def _outcomes(session: SessionResult) -> list[tuple[int | None, str]]:
    return [(e.step, type(e.outcome).__name__) for e in session.outcomes]


def _exec_end(call_id: str, cmd: str, *, exit_code: int, status: str,
              aggregated_output: str) -> dict[str, Any]:
    # codex-rs/protocol/src/protocol.rs ExecCommandEndEvent, as codex-rs/core/src/tools/
    # events.rs emits it (a declined call: exit_code -1, the message as aggregated_output)
    # and the recorder persists it (stdout, stderr and formatted_output cleared)
    return _event({"type": "exec_command_end", "call_id": call_id, "process_id": None,
                   "turn_id": "1", "command": ["/bin/bash", "-lc", cmd], "cwd": "/work/app",
                   "parsed_cmd": [{"type": "unknown", "cmd": cmd}], "source": "agent",
                   "interaction_input": None, "stdout": "", "stderr": "",
                   "aggregated_output": aggregated_output, "exit_code": exit_code,
                   "duration": {"secs": 0, "nanos": 0}, "formatted_output": "",
                   "status": status})


def test_a_declined_command_is_cancelled_not_a_failure(tmp_path: Path) -> None:
    """``exec_command_end`` with ``status: declined`` never ran: its -1 is no exit status."""
    path = _write(tmp_path, [
        META, _exec("c1", "rm -rf build"),
        _exec_end("c1", "rm -rf build", exit_code=-1, status="declined",
                  aggregated_output="exec command rejected by user"),
        _output("c1", "exec command rejected by user"),
    ])
    session = _one(path)
    assert session.failures == []
    assert _outcomes(session) == [(0, "Cancelled")]


def test_a_declined_command_without_the_executor_record_is_cancelled(tmp_path: Path) -> None:
    """The text Codex feeds back for a declined approval (tools/events.rs) alone says so."""
    path = _write(tmp_path, [META, _exec("c1", "git push --force"),
                             _output("c1", "exec command rejected by user")])
    session = _one(path)
    assert session.failures == []
    assert _outcomes(session) == [(0, "Cancelled")]


def test_a_failed_command_record_is_still_a_failure(tmp_path: Path) -> None:
    """A ``failed`` execution (not ``declined``) keeps its exit status."""
    path = _write(tmp_path, [
        META, _exec("c1", "make"),
        _exec_end("c1", "make", exit_code=2, status="failed",
                  aggregated_output="make: *** No rule to make target 'all'.  Stop.\n"),
        _output("c1", "Process exited with code 2\nOutput:\nmake: *** No rule\n"),
    ])
    session = _one(path)
    assert [e.step for e in session.failures] == [0]


def test_a_patch_that_did_not_apply_is_a_rejected_action(tmp_path: Path) -> None:
    """``patch_apply_end`` with ``success: false``, ``status: failed``: a rejected action."""
    # protocol.rs PatchApplyEndEvent; tools/events.rs emit_patch_end (the message in stderr)
    path = _write(tmp_path, [
        META, _patch_call("p1"),
        _event({"type": "patch_apply_end", "call_id": "p1", "turn_id": "1", "stdout": "",
                "stderr": "Failed to find expected lines in src/app.py", "success": False,
                "changes": {}, "status": "failed"}),
        _custom_output("p1", "Failed to find expected lines in src/app.py"),
    ])
    session = _one(path)
    assert session.failures == []
    assert _outcomes(session) == [(0, "RejectedAction")]


def test_a_declined_patch_is_cancelled(tmp_path: Path) -> None:
    """``patch_apply_end`` with ``status: declined`` (``patch rejected by user``)."""
    path = _write(tmp_path, [
        META, _patch_call("p1"),
        _event({"type": "patch_apply_end", "call_id": "p1", "turn_id": "1", "stdout": "",
                "stderr": "patch rejected by user", "success": False, "changes": {},
                "status": "declined"}),
        _custom_output("p1", "patch rejected by user"),
    ])
    session = _one(path)
    assert session.failures == []
    assert _outcomes(session) == [(0, "Cancelled")]


def test_an_applied_patch_is_nothing(tmp_path: Path) -> None:
    """A ``patch_apply_end`` that succeeded changes nothing."""
    path = _write(tmp_path, [
        META, _patch_call("p1"),
        _event({"type": "patch_apply_end", "call_id": "p1", "turn_id": "1",
                "stdout": "Success. Updated the following files:\nM src/app.py\n",
                "stderr": "", "success": True, "changes": {}, "status": "completed"}),
        _custom_output("p1", json.dumps({"output": "Success. Updated the following files:\n"
                                                   "M src/app.py\n",
                                         "metadata": {"exit_code": 0,
                                                      "duration_seconds": 0.0}})),
    ])
    session = _one(path)
    assert session.failures == []
    assert session.outcomes == []


def test_a_patch_whose_output_states_a_failing_exit_is_rejected(tmp_path: Path) -> None:
    """The JSON ``{"output", "metadata": {"exit_code"}}`` of a non-shell tool, exit 1."""
    path = _write(tmp_path, [
        META, _patch_call("p1"),
        _custom_output("p1", json.dumps({"output": "Invalid hunk at line 3\n",
                                         "metadata": {"exit_code": 1,
                                                      "duration_seconds": 0.0}})),
    ])
    session = _one(path)
    assert session.failures == []
    assert _outcomes(session) == [(0, "RejectedAction")]


def _mcp_end(call_id: str, result: dict[str, Any]) -> dict[str, Any]:
    # protocol.rs McpToolCallEndEvent: result is Result<CallToolResult, String>, serde's
    # {"Ok": ...} / {"Err": ...}; codex-rs/protocol/src/mcp.rs CallToolResult is camelCase
    return _event({"type": "mcp_tool_call_end", "call_id": call_id,
                   "invocation": {"server": "docs", "tool": "search",
                                  "arguments": {"q": "x"}},
                   "duration": {"secs": 0, "nanos": 5000}, "result": result})


def test_an_mcp_tool_error_result_is_a_rejected_action(tmp_path: Path) -> None:
    """``mcp_tool_call_end`` whose ``Ok`` result has ``isError: true``."""
    path = _write(tmp_path, [
        META, _function_call("m1", "mcp__docs__search", {"q": "x"}),
        _mcp_end("m1", {"Ok": {"content": [{"type": "text", "text": "index not built"}],
                               "isError": True}}),
        _output("m1", json.dumps([{"type": "text", "text": "index not built"}])),
    ])
    session = _one(path)
    assert session.failures == []
    assert _outcomes(session) == [(0, "RejectedAction")]


def test_an_mcp_call_that_failed_is_a_rejected_action(tmp_path: Path) -> None:
    """``mcp_tool_call_end`` whose result is ``Err``."""
    path = _write(tmp_path, [
        META, _function_call("m1", "mcp__docs__search", {"q": "x"}),
        _mcp_end("m1", {"Err": "tool call failed: connection closed"}),
        _output("m1", "tool call failed: connection closed"),
    ])
    session = _one(path)
    assert session.failures == []
    assert _outcomes(session) == [(0, "RejectedAction")]


def test_an_mcp_call_that_succeeded_is_nothing(tmp_path: Path) -> None:
    """An ``Ok`` result without ``isError`` changes nothing."""
    path = _write(tmp_path, [
        META, _function_call("m1", "mcp__docs__search", {"q": "x"}),
        _mcp_end("m1", {"Ok": {"content": [{"type": "text", "text": "3 hits"}]}}),
        _output("m1", json.dumps([{"type": "text", "text": "3 hits"}])),
    ])
    session = _one(path)
    assert session.failures == []
    assert session.outcomes == []


def test_an_interrupted_command_is_cancelled(tmp_path: Path) -> None:
    """The output Codex writes for a call the user interrupted (core/src/tools/parallel.rs)."""
    path = _write(tmp_path, [
        META, _function_call("c1", "shell_command", {"command": "sleep 100"}),
        _output("c1", "Wall time: 2.3 seconds\naborted by user"),
        _function_call("c2", "view_image", {"path": "a.png"}),
        _output("c2", "aborted by user after 0.1s"),
        _event({"type": "turn_aborted", "turn_id": "1", "reason": "interrupted"}),
    ])
    session = _one(path)
    assert session.failures == []
    assert _outcomes(session) == [(0, "Cancelled"), (1, "Cancelled")]
    assert session.status == "unknown"


def test_a_call_cut_off_by_the_abort_is_cancelled(tmp_path: Path) -> None:
    """A call with no output when ``turn_aborted`` arrives, and none after."""
    path = _write(tmp_path, [
        META, _exec("c1", "npm test"),
        _event({"type": "turn_aborted", "turn_id": "1", "reason": "interrupted"}),
    ])
    session = _one(path)
    assert session.failures == []
    assert _outcomes(session) == [(0, "Cancelled")]


def test_a_budget_limited_turn_ends_at_the_agents_limit(tmp_path: Path) -> None:
    """``turn_aborted`` with ``reason: budget_limited`` (protocol.rs TurnAbortReason)."""
    path = _write(tmp_path, [
        META, _exec("c1", "ls"), _output("c1", "Process exited with code 0\nOutput:\na\n"),
        _event({"type": "turn_aborted", "turn_id": "1", "reason": "budget_limited"}),
    ])
    session = _one(path)
    assert session.status == "limit"
    assert session.ended_failure is not None
    assert session.ended_failure.code == "FC-LIFE-009"


def test_a_sandbox_error_event_is_codex_failing_not_the_provider(tmp_path: Path) -> None:
    """An ``error`` whose ``codex_error_info`` is ``sandbox_error`` (protocol.rs)."""
    path = _write(tmp_path, [
        META, _event({"type": "error", "message": "sandbox setup failed: landlock missing",
                      "codex_error_info": "sandbox_error"}),
    ])
    session = _one(path)
    assert session.status == "unknown"
    assert [e.failure.code for e in session.failures] == ["FC-SYS-003"]


def test_a_context_window_error_is_the_context_window(tmp_path: Path) -> None:
    """``codex_error_info: context_window_exceeded`` says the context window was exceeded."""
    path = _write(tmp_path, [
        META, _event({"type": "error", "message": "Codex ran out of room in the model's "
                                                  "context window. Start a new thread.",
                      "codex_error_info": "context_window_exceeded"}),
    ])
    session = _one(path)
    assert session.status == "provider_error"
    assert session.ended_failure is not None
    assert session.ended_failure.code == "FC-PROV-006"


def test_an_unknown_custom_tool_is_a_rejected_action(tmp_path: Path) -> None:
    """``unsupported custom tool call: NAME`` (core/src/tools/router.rs) is fed back."""
    path = _write(tmp_path, [
        META,
        _line("response_item", {"type": "custom_tool_call", "call_id": "x1",
                                "name": "apply_diff", "input": "..."}),
        _custom_output("x1", "unsupported custom tool call: apply_diff"),
    ])
    session = _one(path)
    assert _outcomes(session) == [(0, "RejectedAction")]


def test_content_item_output_is_read_as_its_text(tmp_path: Path) -> None:
    """An ``output`` that is an array of content items: their text is what the model read."""
    path = _write(tmp_path, [
        META, _function_call("v1", "view_image", {"path": "missing.png"}),
        _output("v1", [{"type": "input_text",
                        "text": "unsupported call: view_image"}]),
    ])
    session = _one(path)
    assert _outcomes(session) == [(0, "RejectedAction")]
