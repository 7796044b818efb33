"""The Codex CLI rollout reader, on the shapes each generation of Codex writes.

The 0.171 shape is the session lab's own run (``tests/lab/fixtures/codex/``); the older ones
are built here from the records Codex's rollout recorder wrote (``exec_command_end`` events,
the ``shell`` tool's ``Exit code: N`` text, the JSON ``{"output", "metadata"}`` output, the
header-first rollouts of 2025), none copied from a real session.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from failcode.triage import triage
from tests.lab.runner import FIXTURES

if TYPE_CHECKING:
    from pathlib import Path

    from failcode.triage import SessionResult

META = {"timestamp": "2025-09-01T10:00:00.000Z", "type": "session_meta",
        "payload": {"id": "0199a0b1-2c3d-7e4f-8a9b-0c1d2e3f4a5b", "cwd": "/work/app",
                    "cli_version": "0.36.0", "originator": "codex_cli_rs"}}


def _line(kind: str, payload: dict[str, Any], second: int = 1) -> dict[str, Any]:
    return {"timestamp": f"2025-09-01T10:00:{second:02d}.000Z", "type": kind,
            "payload": payload}


def _call(call_id: str, command: list[str] | str, name: str = "shell") -> dict[str, Any]:
    key = "cmd" if isinstance(command, str) else "command"
    return _line("response_item", {"type": "function_call", "name": name, "call_id": call_id,
                                   "arguments": json.dumps({key: command})})


def _output(call_id: str, output: str) -> dict[str, Any]:
    return _line("response_item", {"type": "function_call_output", "call_id": call_id,
                                   "output": output})


def _write(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "rollout-2025-09-01T10-00-00-0199a0b1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _one(path: Path) -> SessionResult:
    result = triage([path])
    assert [(i.format, i.error_code) for i in result.inputs] == [("codex", None)]
    assert len(result.sessions) == 1
    return result.sessions[0]


def test_the_lab_rollout_is_read_step_by_step() -> None:
    """The pinned Codex's rollout: a missing program at step 0, a success at step 1."""
    session = _one(next((FIXTURES / "codex" / "missing-program" / "session").rglob("*.jsonl")))
    assert session.format == "codex"
    assert session.steps == 2
    assert [(e.step, e.failure.code) for e in session.failures] == [(0, "FC-CMD-001")]
    assert session.status == "submitted"


def test_exec_command_end_status_wins_over_the_text(tmp_path: Path) -> None:
    """An ``exec_command_end`` event's exit code is trusted over the output text."""
    path = _write(tmp_path, [
        META, _call("c1", ["bash", "-lc", "pytest -q"]),
        _line("event_msg", {"type": "exec_command_end", "call_id": "c1", "exit_code": 1,
                            "stdout": "F\nFAILED test_a.py::test_x - assert 1 == 2\n"
                                      "1 failed in 0.01s\n", "stderr": ""}),
        _output("c1", "Exit code: 0\nOutput:\nwhatever the model saw\n"),
    ])
    session = _one(path)
    assert [(e.step, str(e.failure.kind)) for e in session.failures] == [(0, "test_error")]


def test_the_shell_tools_exit_code_text_is_read(tmp_path: Path) -> None:
    """Without an executor record, ``Exit code: N`` in the shell tool's output is the status."""
    path = _write(tmp_path, [
        META, _call("c1", ["bash", "-lc", "cargo build"]),
        _output("c1", "Exit code: 127\nWall time: 0.1 seconds\nOutput:\n"
                      "bash: line 1: cargo: command not found\n"),
        _call("c2", ["bash", "-lc", "ls"]),
        _output("c2", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nsrc\n"),
    ])
    session = _one(path)
    assert [(e.step, e.failure.code) for e in session.failures] == [(0, "FC-CMD-001")]
    assert session.steps == 2


def test_the_older_json_output_metadata_is_read(tmp_path: Path) -> None:
    """An output that is JSON ``{"output", "metadata": {"exit_code"}}`` gives its status."""
    inner = json.dumps({"output": "grep: nothing\n", "metadata": {"exit_code": 2,
                                                                   "duration_seconds": 0.1}})
    path = _write(tmp_path, [META, _call("c1", ["bash", "-lc", "grep -r x missing/"]),
                             _output("c1", inner)])
    session = _one(path)
    assert [e.step for e in session.failures] == [0]
    assert session.failures[0].failure.metadata["exit_code"] == 2


def test_a_header_first_rollout_of_2025_is_read(tmp_path: Path) -> None:
    """The oldest rollouts: a header line, then bare response items."""
    header = {"id": "5f2c", "timestamp": "2025-04-20T09:00:00.000Z",
              "instructions": "be careful"}
    call = {"type": "function_call", "name": "shell", "call_id": "c1",
            "arguments": json.dumps({"command": ["bash", "-lc", "python -c 'import nope'"]})}
    output = {"type": "function_call_output", "call_id": "c1", "output": json.dumps({
        "output": "Traceback (most recent call last):\n  File \"<string>\", line 1, in "
                  "<module>\nModuleNotFoundError: No module named 'nope'\n",
        "metadata": {"exit_code": 1}})}
    path = tmp_path / "rollout-2025-04-20-5f2c.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (
        header, {"type": "message", "role": "user", "content": []}, call, output)))
    session = _one(path)
    assert session.session == "5f2c"
    assert [(e.step, e.failure.code) for e in session.failures] == [(0, "FC-CMD-002")]


def test_a_probe_that_finds_nothing_is_an_outcome(tmp_path: Path) -> None:
    """``grep`` exiting 1 with no output is a no-match outcome, not a failure."""
    path = _write(tmp_path, [META, _call("c1", "grep -rn TODO ."),
                             _output("c1", "Process exited with code 1\nOutput:\n")])
    session = _one(path)
    assert session.failures == []
    assert [type(e.outcome).__name__ for e in session.outcomes] == ["NoMatch"]


def test_a_failed_patch_is_a_rejected_action(tmp_path: Path) -> None:
    """A non-shell tool's error output (apply_patch verification) is a rejected action."""
    path = _write(tmp_path, [
        META,
        _line("response_item", {"type": "custom_tool_call", "name": "apply_patch",
                                "call_id": "p1", "input": "*** Begin Patch\n..."}),
        _line("response_item", {"type": "custom_tool_call_output", "call_id": "p1",
                                "output": "apply_patch verification failed: Failed to find "
                                          "expected lines in src/app.py"}),
    ])
    session = _one(path)
    assert session.failures == []
    assert [type(e.outcome).__name__ for e in session.outcomes] == ["RejectedAction"]


def test_a_task_complete_error_ends_the_session_on_the_provider(tmp_path: Path) -> None:
    """``task_complete.error`` with an HTTP status Codex kept: a provider error of that status."""
    path = _write(tmp_path, [META, _line("event_msg", {
        "type": "task_complete", "last_agent_message": None,
        "error": {"message": "exceeded retry limit, last status: 429 Too Many Requests",
                  "codex_error_info": {"response_too_many_failed_attempts":
                                       {"http_status_code": 429}}}})])
    session = _one(path)
    assert session.status == "provider_error"
    assert session.ended_failure is not None
    assert session.ended_failure.code == "FC-PROV-003"


def test_a_generic_500_text_still_ends_on_a_server_error(tmp_path: Path) -> None:
    """Codex replaces a 500's text; ``internal_server_error`` still says it was a 500."""
    path = _write(tmp_path, [META, _line("event_msg", {
        "type": "task_complete", "last_agent_message": None,
        "error": {"message": "We're currently experiencing high demand, which may cause "
                             "temporary errors.", "codex_error_info": "internal_server_error"}})])
    session = _one(path)
    assert session.ended_failure is not None
    assert session.ended_failure.code == "FC-PROV-010"


def test_an_interrupted_turn_is_no_failure(tmp_path: Path) -> None:
    """``turn_aborted`` ends the session as unknown, with no failure."""
    path = _write(tmp_path, [META, _call("c1", "ls"), _output("c1", "a.py\n"),
                             _line("event_msg", {"type": "turn_aborted",
                                                 "reason": "interrupted"})])
    session = _one(path)
    assert session.status == "unknown"
    assert session.failures == []


def test_a_command_whose_output_line_never_came_keeps_its_status(tmp_path: Path) -> None:
    """A file cut after the executor's record still reports the command."""
    path = _write(tmp_path, [
        META, _call("c1", "gcc bad.c"),
        _line("event_msg", {"type": "item_completed", "item": {
            "type": "CommandExecution", "id": "c1", "exit_code": 1, "status": "failed",
            "command": ["/bin/bash", "-c", "gcc bad.c"],
            "aggregated_output": "bad.c:1:1: error: expected ';' before '}' token\n"}}),
    ])
    session = _one(path)
    assert [(e.step, str(e.failure.kind)) for e in session.failures] == [(0, "build_error")]


def test_a_bad_line_is_an_input_error_naming_it(tmp_path: Path) -> None:
    """A line that is not JSON stops the reader with FC-DATA-003 naming the line."""
    path = tmp_path / "rollout.jsonl"
    path.write_text(json.dumps(META) + "\n{not json\n")
    result = triage([path])
    assert result.inputs[0].error_code == "FC-DATA-003"
    assert "line 2" in (result.inputs[0].error_message or "")
