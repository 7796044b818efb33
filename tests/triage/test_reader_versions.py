"""Triage readers on the other versions and shapes of each framework's log format.

Every fixture is built here from the shape the framework's own source writes (cited in each
test's docstring); none is copied from a real session.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failcode.triage import triage

if TYPE_CHECKING:
    from pathlib import Path

    from failcode.triage import SessionResult


def _sessions(path: Path) -> list[SessionResult]:
    result = triage([path])
    assert [item.error_code for item in result.inputs] == [None]
    return result.sessions


def _one(path: Path) -> SessionResult:
    sessions = _sessions(path)
    assert len(sessions) == 1
    return sessions[0]


def _kinds(session: SessionResult) -> dict[int | None, str]:
    return {entry.step: str(entry.failure.kind) for entry in session.failures}


def _timeouts(session: SessionResult) -> list[int | None]:
    """The steps whose failure is a command stopped at its time limit."""
    return [entry.step for entry in session.failures if entry.failure.error_class == "timeout"]


def _rejected(session: SessionResult) -> list[int | None]:
    return [entry.step for entry in session.outcomes
            if type(entry.outcome).__name__ == "RejectedAction"]


def _cancelled(session: SessionResult) -> list[int | None]:
    return [entry.step for entry in session.outcomes
            if type(entry.outcome).__name__ == "Cancelled"]


def _write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, indent=2))
    return path


def _lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


# -- SWE-agent ---------------------------------------------------------------------------------
def _traj(steps: list[tuple[str, str]], exit_status: str | None = "submitted",
          thought: str = "", **info: Any) -> dict[str, Any]:
    trajectory = [{"action": action, "observation": observation, "response": "",
                   "thought": "", "state": {"working_dir": "/repo"}, "execution_time": 0.1,
                   "query": [], "extra_info": {}} for action, observation in steps]
    if thought:
        trajectory.append({"action": "", "observation": "Exited (autosubmitted)",
                           "response": thought, "thought": thought, "state": {}})
    return {"trajectory": trajectory, "history": [], "info": {"exit_status": exit_status, **info},
            "replay_config": None, "environment": "main"}


@pytest.mark.parametrize(("exit_status", "status", "kind"), [
    ("submitted (exit_cost)", "limit", "agent_error"),
    ("submitted (exit_format)", "limit", "agent_error"),
    ("exit_total_execution_time", "limit", "agent_error"),
    ("submitted (exit_context)", "provider_error", "context_error"),
    ("exit_context", "provider_error", "context_error"),
    ("exit_api", "provider_error", "provider_error"),
    ("early_exit", "unknown", "system_error"),
    ("exit_environment_error", "unknown", "system_error"),
])
def test_swe_agent_exit_status_ends_the_session_as_its_cause(
        tmp_path: Path, exit_status: str, status: str, kind: str) -> None:
    """SWE-agent 0.x (swe_env.step: exit_*, 'submitted (exit_*)', early_exit) and 1.x
    (DefaultAgent.forward_with_handling: exit_api, exit_environment_error,
    exit_total_execution_time) name what ended the run; an autosubmission keeps the cause."""
    session = _one(_write(tmp_path / "i.traj", _traj([("ls", "a.py")], exit_status)))
    assert (session.status, str(session.ended_failure.kind if session.ended_failure else None)) \
        == (status, kind)


@pytest.mark.parametrize("exit_status", ["exit_command", "exit_forfeit", "skipped", "exit_new"])
def test_swe_agent_exit_without_failure_leaves_no_failure(tmp_path: Path,
                                                           exit_status: str) -> None:
    """SWE-agent 1.x writes exit_command (the model typed exit) and exit_forfeit, 0.x skipped;
    none is a failure, and a value the reader does not know carries none either."""
    session = _one(_write(tmp_path / "i.traj", _traj([("ls", "a.py")], exit_status)))
    assert (session.status, session.ended_failure, session.failures) == ("unknown", None, [])


def test_swe_agent_command_timeout_ends_as_timeout(tmp_path: Path) -> None:
    """SWE-agent 1.x ends with exit_command_timeout after repeated command timeouts."""
    session = _one(_write(tmp_path / "i.traj", _traj([("ls", "a")], "exit_command_timeout")))
    assert session.status == "timeout"


def test_swe_agent_exit_error_takes_the_exception_from_the_exit_thought(tmp_path: Path) -> None:
    """SWE-agent 1.x records 'Exit due to unknown error: <exception>' as the last step's
    thought for exit_error; a litellm exception there is the provider's."""
    thought = "Exit due to unknown error: litellm.RateLimitError: rate limit reached"
    session = _one(_write(tmp_path / "i.traj", _traj([("ls", "a")], "exit_error", thought)))
    assert (session.status, str(session.ended_failure.kind if session.ended_failure else None)) \
        == ("provider_error", "provider_error")


def test_swe_agent_cancelled_command_is_a_timeout(tmp_path: Path) -> None:
    """SWE-agent 1.x replaces a command's observation with command_cancelled_timeout_template."""
    note = ("The command 'pytest tests' was cancelled because it took more than 30 seconds. "
            "Please try a different command that completes more quickly.")
    session = _one(_write(tmp_path / "i.traj", _traj([("ls", "a.py"), ("pytest tests", note)])))
    assert (_timeouts(session), _kinds(session)) == ([1], {1: "test_error"})


def test_swe_agent_v0_execution_timed_out_is_a_timeout(tmp_path: Path) -> None:
    """SWE-agent 0.x (swe_env.step) appends '\\nEXECUTION TIMED OUT' to the observation."""
    session = _one(_write(tmp_path / "i.traj",
                          _traj([("python run.py", "started\nEXECUTION TIMED OUT")])))
    assert _timeouts(session) == [0]


def test_swe_agent_v0_command_failed_to_execute_is_the_harness(tmp_path: Path) -> None:
    """SWE-agent 0.x appends 'COMMAND FAILED TO EXECUTE. RESTARTING PROCESS.' when the
    container could not run the command."""
    obs = "\nCOMMAND FAILED TO EXECUTE. RESTARTING PROCESS."
    session = _one(_write(tmp_path / "i.traj", _traj([("make", obs)], "early_exit")))
    assert [(e.step, e.source, e.failure.code) for e in session.failures if e.step is not None] \
        == [(0, "harness", "FC-SYS-003")]


@pytest.mark.parametrize(("action", "observation"), [
    ("str_replace_editor str_replace /repo/a.py --old_str x --new_str y",
     "No replacement was performed, old_str `x` did not appear verbatim in /repo/a.py."),
    ("str_replace_editor view /repo/missing.py",
     "The path /repo/missing.py does not exist. Please provide a valid path."),
    ("str_replace_editor create /repo/a.py --file_text x",
     "File already exists at: /repo/a.py. Cannot overwrite files using command `create`."),
    ("str_replace_editor view /repo/a.py --view_range 0 5",
     "Invalid `view_range`: [0, 5]. Its first element `0` should be within the range"),
    ("edit 'old' 'new'", ("Your edit was not applied (file not modified): Text 'old' not found "
                         "in displayed lines (or anywhere in the file).")),
    ("open missing.py", "File missing.py not found"),
])
def test_swe_agent_tool_refusal_is_a_rejected_action(tmp_path: Path, action: str,
                                                     observation: str) -> None:
    """SWE-agent 1.x tools (edit_anthropic/str_replace_editor validate_path and str_replace,
    windowed_edit_replace _NOT_FOUND) and 0.x open refuse the call and feed it back."""
    session = _one(_write(tmp_path / "i.traj", _traj([("ls", "a.py"), (action, observation)])))
    assert (_rejected(session), session.failures) == ([1], [])


def test_swe_agent_retry_agent_attempts_are_sessions(tmp_path: Path) -> None:
    """SWE-agent 1.x RetryAgent.get_trajectory_data writes 'attempts' (one trajectory per
    attempt) and then a copy of the chosen attempt's keys."""
    first = _traj([("pytest", "== 1 failed in 0.1s ==")], "submitted")
    second = _traj([("ls", "a.py"), ("gcc x.c", "x.c:1:1: error: bad")], "exit_cost")
    doc = {"attempts": [first, second], **second}
    doc["info"] = {**second["info"], "best_attempt_idx": 1}
    sessions = _sessions(_write(tmp_path / "i.traj", doc))
    assert [(s.session, s.status, _kinds(s)) for s in sessions] == [
        ("i/attempt_0", "submitted", {0: "test_error"}),
        ("i/attempt_1", "limit", {1: "build_error", None: "agent_error"})]


# -- mini-swe-agent ----------------------------------------------------------------------------
def _mini(messages: list[dict[str, Any]], info: dict[str, Any] | None = None,
          fmt: str = "mini-swe-agent-1") -> dict[str, Any]:
    return {"info": {"mini_version": "1.9.0", **(info or {})}, "messages": messages,
            "trajectory_format": fmt}


def _text_step(command: str, code: int, output: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": f"THOUGHT: run it\n\n```bash\n{command}\n```"},
            {"role": "user", "content": f"<returncode>{code}</returncode>\n<output>\n{output}"
                                        "</output>"}]


@pytest.mark.parametrize(("exit_status", "status", "kind"), [
    ("TimeExceeded", "limit", "agent_error"),
    ("ContextWindowExceeded", "provider_error", "context_error"),
])
def test_mini_exit_status_names_the_end(tmp_path: Path, exit_status: str, status: str,
                                        kind: str) -> None:
    """mini-swe-agent 2.x exceptions.py: TimeExceeded (a LimitsExceeded) and
    ContextWindowExceeded end the run with their class name as info.exit_status."""
    doc = _mini(_text_step("ls", 0, "a.py"), {"exit_status": exit_status, "submission": ""})
    session = _one(_write(tmp_path / "i.traj.json", doc))
    assert (session.status, str(session.ended_failure.kind if session.ended_failure else None)) \
        == (status, kind)


def test_mini_user_interruption_is_no_failure(tmp_path: Path) -> None:
    """mini-swe-agent 2.x UserInterruption: a person stopped the run, nothing failed."""
    doc = _mini(_text_step("ls", 0, "a.py"), {"exit_status": "UserInterruption"})
    session = _one(_write(tmp_path / "i.traj.json", doc))
    assert (session.status, session.ended_failure, session.failures) == ("unknown", None, [])


def test_mini_v1_timeout_notice_is_a_timed_out_step(tmp_path: Path) -> None:
    """mini-swe-agent 1.x (DefaultAgent.execute_action) feeds timeout_template back as a user
    message instead of an observation: 'The last command <command>..</command> timed out'."""
    messages = [*_text_step("ls", 0, "a.py"),
                {"role": "assistant", "content": "```bash\npython serve.py\n```"},
                {"role": "user", "content": "The last command <command>python serve.py</command>"
                                            " timed out and has been killed.\nThe output of the "
                                            "command was:\n <output>\n\n</output>\n"}]
    session = _one(_write(tmp_path / "i.traj.json", _mini(messages)))
    assert (session.steps, _timeouts(session)) == (2, [1])


def test_mini_v2_text_fence_names_the_command(tmp_path: Path) -> None:
    """mini-swe-agent 2.x text-based configs (mini.yaml) fence actions as mswea_bash_command."""
    messages = [{"role": "assistant", "content": "```mswea_bash_command\npytest -x\n```"},
                {"role": "user", "content": "<returncode>1</returncode>\n<output>\n"
                                            "== 1 failed in 0.1s ==\n</output>"}]
    session = _one(_write(tmp_path / "i.traj.json", _mini(messages)))
    assert [(e.step, e.evidence) for e in session.failures] == [(0, "pytest -x")]


def test_mini_v2_action_not_executed_is_no_failure(tmp_path: Path) -> None:
    """mini-swe-agent 2.x format_toolcall_observation_messages pads actions after the one that
    submitted with returncode -1 and exception_info 'action was not executed'."""
    messages = [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "bash", "arguments":
                                                      json.dumps({"command": "ls"})}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "<returncode>-1</returncode>",
                 "extra": {"raw_output": "", "returncode": -1,
                           "exception_info": "action was not executed"}}]
    session = _one(_write(tmp_path / "i.traj.json", _mini(messages, fmt="mini-swe-agent-1.1")))
    assert (session.steps, session.failures) == (1, [])


def test_mini_v2_timeout_exception_type_is_a_timeout(tmp_path: Path) -> None:
    """mini-swe-agent 2.x LocalEnvironment.execute records exception_type TimeoutExpired."""
    messages = [{"role": "tool", "tool_call_id": "c1", "content": "<returncode>-1</returncode>",
                 "extra": {"raw_output": "", "returncode": -1, "exception_type": "TimeoutExpired",
                           "exception_info": "An error occurred while executing the command: "
                                             "Command 'sleep 99' exceeded 30 s"}}]
    session = _one(_write(tmp_path / "i.traj.json", _mini(messages, fmt="mini-swe-agent-1.1")))
    assert _timeouts(session) == [0]


def test_mini_format_error_is_a_rejected_action(tmp_path: Path) -> None:
    """mini-swe-agent 2.x parse_regex_actions raises FormatError with a user message marked
    extra.interrupt_type = FormatError; no command ran."""
    messages = [*_text_step("ls", 0, "a.py"),
                {"role": "assistant", "content": "I will think."},
                {"role": "user", "content": "Expected exactly 1 action, found 0.",
                 "extra": {"interrupt_type": "FormatError", "n_actions": 0}}]
    session = _one(_write(tmp_path / "i.traj.json", _mini(messages)))
    assert (session.steps, _rejected(session), session.failures) == (1, [None], [])


# -- OpenHands ---------------------------------------------------------------------------------
def _v1_action(event_id: str, call: str, command: str) -> dict[str, Any]:
    return {"kind": "ActionEvent", "id": event_id, "timestamp": "2025-10-01T10:00:00",
            "source": "agent", "thought": [], "tool_name": "terminal", "tool_call_id": call,
            "llm_response_id": "r1", "action": {"kind": "TerminalAction", "command": command}}


def _v1_terminal(action_id: str, call: str, command: str, code: int | None, text: str,
                 **more: Any) -> dict[str, Any]:
    return {"kind": "ObservationEvent", "id": f"o-{action_id}",
            "timestamp": "2025-10-01T10:00:01", "source": "environment",
            "tool_name": "terminal", "tool_call_id": call, "action_id": action_id,
            "observation": {"kind": "TerminalObservation", "command": command,
                            "content": [{"type": "text", "text": text}], "is_error": False,
                            "exit_code": code, "timeout": False,
                            "metadata": {"exit_code": code if code is not None else -1,
                                         "prefix": "", "suffix": ""}, **more}}


def test_openhands_v1_terminal_exit_code_is_a_failed_command(tmp_path: Path) -> None:
    """OpenHands V1 (software-agent-sdk) TerminalObservation carries exit_code; events are
    told by 'kind' instead of v0's action/observation names."""
    events = [{"kind": "MessageEvent", "id": "m", "timestamp": "2025-10-01T10:00:00",
               "source": "user", "llm_message": {"role": "user", "content": []}},
              _v1_action("a1", "c1", "pytest -q"),
              _v1_terminal("a1", "c1", "pytest -q", 1, "== 2 failed in 0.3s ==")]
    session = _one(_write(tmp_path / "events.json", events))
    assert [(e.step, e.evidence, str(e.failure.kind)) for e in session.failures] == [
        (0, "pytest -q", "test_error")]


def test_openhands_v1_terminal_timeout_is_a_timeout(tmp_path: Path) -> None:
    """OpenHands V1 TerminalObservation sets timeout: true when the command timed out."""
    events = [_v1_action("a1", "c1", "make"),
              _v1_terminal("a1", "c1", "make", None, "building...", timeout=True)]
    session = _one(_write(tmp_path / "events.json", events))
    assert (_timeouts(session), _kinds(session)) == ([0], {0: "build_error"})


def test_openhands_v1_rejections_are_rejected_actions(tmp_path: Path) -> None:
    """OpenHands V1 UserRejectObservation (rejection_reason; a person or a hook) and an
    AgentErrorEvent validating the tool call are fed back as tool results: a hook's refusal
    and the validation are rejected actions, a person's rejection a cancelled call."""
    stamp = "2025-10-01T10:00:02"
    events = [_v1_action("a1", "c1", "rm -rf /"),
              {"kind": "UserRejectObservation", "id": "r", "timestamp": stamp,
               "source": "user", "tool_name": "terminal", "tool_call_id": "c1",
               "action_id": "a1", "rejection_reason": "User rejected the action",
               "rejection_source": "user"},
              _v1_action("a2", "c2", "git push"),
              {"kind": "UserRejectObservation", "id": "h", "timestamp": stamp,
               "source": "environment", "tool_name": "terminal", "tool_call_id": "c2",
               "action_id": "a2", "rejection_reason": "blocked by a PreToolUse hook",
               "rejection_source": "hook"},
              {"kind": "AgentErrorEvent", "id": "e", "timestamp": stamp, "source": "agent",
               "tool_name": "file_editor", "tool_call_id": "c3",
               "error": "Error validating args for tool file_editor: missing path"}]
    session = _one(_write(tmp_path / "events.json", events))
    assert (_cancelled(session), _rejected(session), session.failures) == ([0], [1, 2], [])


def test_openhands_v1_record_with_iteration_limit_ends_as_limit(tmp_path: Path) -> None:
    """OpenHands/benchmarks EvalOutput records (instance_id, history of V1 events); the SDK's
    ConversationIterationLimitEvent says the run stopped at max_iterations."""
    history = [_v1_action("a1", "c1", "ls"), _v1_terminal("a1", "c1", "ls", 0, "a.py"),
               {"kind": "ConversationIterationLimitEvent", "id": "l",
                "timestamp": "2025-10-01T10:00:05", "source": "environment", "iteration": 100,
                "max_iterations": 100, "detail": "iteration budget exhausted"}]
    record = {"instance_id": "repo__x-1", "attempt": 1, "test_result": {}, "history": history,
              "error": None}
    session = _one(_lines(tmp_path / "output.jsonl", [record]))
    assert (session.session, session.status, str(session.ended_failure.kind
                                                  if session.ended_failure else None)) \
        == ("repo__x-1", "limit", "agent_error")


def _v0(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": n, "timestamp": "2025-01-01T10:00:00", "source": "agent", "message": "",
             **event} for n, event in enumerate(events)]


def test_openhands_v0_timeout_observation_is_a_timeout(tmp_path: Path) -> None:
    """OpenHands v0 TimeoutObservation (observation 'timeout') answers an action that ran past
    its time limit."""
    events = _v0([{"action": "run", "args": {"command": "npm install"}},
                  {"observation": "timeout", "cause": 0, "content": "timed out", "extras": {}}])
    session = _one(_write(tmp_path / "events.json", events))
    assert ([e.evidence for e in session.failures], _timeouts(session)) == (["npm install"], [0])


def test_openhands_v0_user_rejected_is_cancelled(tmp_path: Path) -> None:
    """OpenHands v0 UserRejectObservation (observation 'user_rejected') in confirmation mode:
    the person declined, the command never ran."""
    events = _v0([{"action": "run", "args": {"command": "rm -rf build"}},
                  {"observation": "user_rejected", "cause": 0, "extras": {},
                   "content": "Action has been rejected by the user! Waiting for further input."}])
    session = _one(_write(tmp_path / "events.json", events))
    assert (_cancelled(session), _rejected(session), session.failures) == ([0], [], [])


def test_openhands_v0_error_state_reason_ends_the_session(tmp_path: Path) -> None:
    """OpenHands v0 AgentStateChangedObservation(agent_state='error', reason=...) names what
    stopped the agent when the record has no error."""
    events = _v0([{"action": "run", "args": {"command": "ls"}},
                  {"observation": "run", "cause": 0, "content": "a.py",
                   "extras": {"command": "ls", "metadata": {"exit_code": 0}}},
                  {"observation": "agent_state_changed", "content": "", "extras": {
                      "agent_state": "error",
                      "reason": "litellm.RateLimitError: litellm.RateLimitError: rate limited"}}])
    session = _one(_write(tmp_path / "events.json", events))
    assert (session.status, str(session.ended_failure.kind if session.ended_failure else None)) \
        == ("provider_error", "provider_error")


# -- Aider -------------------------------------------------------------------------------------
def _chat(tmp_path: Path, body: str) -> Path:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text("\n# aider chat started at 2025-03-01 10:00:00\n\n" + body)
    return path


def test_aider_blank_line_before_the_first_heading_is_no_session(tmp_path: Path) -> None:
    """aider InputOutput writes '\n# aider chat started at ...' so a new history file starts
    with a blank line."""
    sessions = _sessions(_chat(tmp_path, "#### hello  \n\nHi.\n"))
    assert [s.session for s in sessions] == ["2025-03-01 10:00:00"]


def test_aider_bare_test_with_added_output_is_a_failed_test(tmp_path: Path) -> None:
    """aider Commands.cmd_test runs the configured test_cmd and, through cmd_run with
    add_on_nonzero_exit, logs 'Added N lines of output to the chat.' only on a non-zero exit;
    run_cmd prints the output itself to the terminal only."""
    session = _one(_chat(tmp_path, "#### /test  \n\n> Added 42 lines of output to the chat.  \n"))
    assert _kinds(session) == {0: "test_error"}


def test_aider_bang_alias_runs_a_command(tmp_path: Path) -> None:
    """aider: '!' is the alias of /run (cmd_run docstring); older aider logged its output."""
    body = ("#### !python app.py  \n\n> Traceback (most recent call last):  \n"
            ">   File \"app.py\", line 1, in <module>  \n> ModuleNotFoundError: No module named "
            "'flask'  \n> Add the output to the chat? (y/n/instructions): n  \n")
    session = _one(_chat(tmp_path, body))
    assert [(e.step, e.evidence) for e in session.failures] == [(0, "python app.py")]


def test_aider_auto_test_failure_is_a_failed_test(tmp_path: Path) -> None:
    """aider base_coder with --auto-test asks 'Attempt to fix test errors?' after the test
    command failed on the step's edits."""
    body = ("#### fix the parser  \n\nHere is the change.\n\n> Applied edit to parser.py  \n"
            "> FAILED tests/test_parser.py::test_parse - AssertionError  \n"
            "> ==== 1 failed, 3 passed in 0.20s ====  \n> Attempt to fix test errors? y  \n")
    session = _one(_chat(tmp_path, body))
    assert _kinds(session) == {0: "test_error"}


def test_aider_edit_format_failure_is_a_rejected_action(tmp_path: Path) -> None:
    """aider apply_updates: 'The LLM did not conform to the edit format.' then the
    SEARCH/REPLACE blocks that failed to match; the edit was not applied."""
    body = ("#### rename foo  \n\n> The LLM did not conform to the edit format.  \n"
            "> https://aider.chat/docs/troubleshooting/edit-errors.html  \n"
            "> # 1 SEARCH/REPLACE block failed to match!  \n")
    session = _one(_chat(tmp_path, body))
    assert (_rejected(session), session.failures) == ([0], [])


def test_aider_token_limit_is_a_context_error(tmp_path: Path) -> None:
    """aider show_exhausted_error: 'Model X has hit a token limit!' after the provider's
    ContextWindowExceededError."""
    body = ("#### add all files  \n\n> Model gpt-4o has hit a token limit!  \n"
            "> Token counts below are approximate.  \n")
    session = _one(_chat(tmp_path, body))
    assert _kinds(session) == {0: "context_error"}


# -- Claude Code -------------------------------------------------------------------------------
def _cc(kind: str, sid: str = "s1", **fields: Any) -> dict[str, Any]:
    return {"type": kind, "sessionId": sid, "uuid": f"u{len(fields)}", "version": "2.1.59",
            "timestamp": "2026-02-01T10:00:00.000Z", "cwd": "/repo", **fields}


def _bash(call: str, command: str, result: str, *, is_error: bool = True,
          ) -> list[dict[str, Any]]:
    return [_cc("assistant", message={"role": "assistant", "content": [
                {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": command}}]}),
            _cc("user", toolUseResult=result, message={"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call, "content": result,
                 "is_error": is_error}]})]


def test_claude_code_summary_lines_start_no_session(tmp_path: Path) -> None:
    """Claude Code writes 'summary' lines without a sessionId at the top of a resumed
    session's file."""
    lines = [{"type": "summary", "summary": "Fix tests", "leafUuid": "x"},
             *_bash("t1", "ls", "a.py", is_error=False)]
    assert [s.session for s in _sessions(_lines(tmp_path / "t.jsonl", lines))] == ["s1"]


@pytest.mark.parametrize("result", [
    "Command timed out after 2m 0.0s\nbuilding",          # 1.0.x
    "Error: Exit code 143\nCommand timed out after 60s",  # 2.1.x
])
def test_claude_code_bash_timeout_is_a_timeout(tmp_path: Path, result: str) -> None:
    """Claude Code's Bash tool reports 'Command timed out after ...' (anthropics/claude-code
    issues #3898 on 1.0.55, #29069 and #79879 on 2.1.x)."""
    session = _one(_lines(tmp_path / "t.jsonl", _bash("t1", "make all", result)))
    assert _timeouts(session) == [0]


def test_claude_code_hook_block_is_a_rejected_action(tmp_path: Path) -> None:
    """Claude Code feeds a PreToolUse hook's block (exit 2, stderr as the reason) back as the
    tool result: a refusal of the action, fed to the model."""
    session = _one(_lines(tmp_path / "t.jsonl", _bash(
        "t1", "git push",
        "PreToolUse:Bash hook returned blocking error: BLOCKED: git push is not allowed")))
    assert (_rejected(session), session.failures) == ([0], [])


@pytest.mark.parametrize("result", [
    ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if "
    "it was a file edit, the new_string was NOT written to the file). STOP what you are doing"),
    "[Request interrupted by user for tool use]",
    # parallel calls beside one that failed (anthropics/claude-code issue #22264)
    "<tool_use_error>Sibling tool call errored</tool_use_error>",
])
def test_claude_code_call_never_run_is_cancelled(tmp_path: Path, result: str) -> None:
    """A person's rejection, an interrupt, and the calls Claude Code cancels when a sibling
    failed: the command never ran, so no failure, no rejected action, no loop."""
    session = _one(_lines(tmp_path / "t.jsonl", _bash("t1", "git push", result)))
    assert (_cancelled(session), _rejected(session), session.failures) == ([0], [], [])


def test_claude_code_error_without_exit_code_is_a_failed_command(tmp_path: Path) -> None:
    """A Bash error result without the 'Exit code N' line (toolUseResult 'Error: ...') is still
    a failed command."""
    session = _one(_lines(tmp_path / "t.jsonl", _bash(
        "t1", "cargo build", "Error: error[E0425]: cannot find value `x` in this scope")))
    assert _kinds(session) == {0: "build_error"}


def test_claude_code_api_error_retries_are_repeats_of_one_failure(tmp_path: Path) -> None:
    """Claude Code 2.x writes a system api_error line per retry (error.status, retryAttempt)
    and then an assistant line with isApiErrorMessage and apiErrorStatus: the retries are one
    failure at no step (repeated), the last word the failure at the step it ended on."""
    retry = [_cc("system", subtype="api_error", level="error", retryAttempt=n, maxRetries=10,
                 retryInMs=500, error={"status": 529, "message": "Overloaded"})
             for n in (1, 2)]
    final = _cc("assistant", isApiErrorMessage=True, apiErrorStatus=529, error="server_error",
                message={"role": "assistant", "content": [
                    {"type": "text", "text": "API Error: 529 Overloaded"}]})
    session = _one(_lines(tmp_path / "t.jsonl", [*_bash("t1", "ls", "a.py", is_error=False),
                                                 *retry, final]))
    assert ([(e.step, e.source, e.repeats) for e in session.failures], session.status) == (
        [(1, "provider", 1), (None, "provider", 2)], "provider_error")


# -- any reader: values of an unexpected JSON type ---------------------------------------------
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                     | st.text(max_size=8), lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)


def _templates() -> dict[str, tuple[str, Any]]:
    mini = _mini([*_text_step("ls", 0, "a.py"), {"role": "assistant", "content": "", "extra": {
        "actions": [{"command": "ls"}]}, "tool_calls": [{"id": "c1", "function": {
            "name": "bash", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c1",
                                                     "content": "x", "extra": {}}])
    v0 = _v0([{"action": "run", "args": {"command": "ls"}},
              {"observation": "run", "cause": 0, "content": "a", "extras": {"metadata": {}}}])
    record = {"instance_id": "i", "history": [_v1_action("a1", "c1", "ls"),
                                              _v1_terminal("a1", "c1", "ls", 1, "x")]}
    return {"mini.traj.json": ("json", mini), "events.json": ("json", v0),
            "output.jsonl": ("lines", record), "i.traj": ("json", _traj([("ls", "x")]))}


def _replace_one(value: Any, path: list[int], new: Any) -> Any:
    """``value`` with the node picked by ``path`` (indices into containers) set to ``new``."""
    if not path or not isinstance(value, (dict, list)) or not value:
        return new
    keys = list(value) if isinstance(value, dict) else list(range(len(value)))
    key = keys[path[0] % len(keys)]
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[key] = _replace_one(value[key], path[1:], new)  # type: ignore[index]
    return copy


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(_templates())),
       path=st.lists(st.integers(0, 9), min_size=1, max_size=5), new=_JSON)
def test_a_value_of_an_unexpected_type_never_crashes_a_reader(
        tmp_path: Path, name: str, path: list[int], new: Any) -> None:
    """Logs are written by many versions; a field of another JSON type than the reader expects
    is ignored, never a traceback (triage returns, reporting the input as read or damaged)."""
    kind, template = _templates()[name]
    doc = _replace_one(template, path, new)
    target = tmp_path / name
    if kind == "lines":
        _lines(target, [doc] if isinstance(doc, dict) else [{"instance_id": "i", "history": doc}])
    else:
        _write(target, doc)
    result = triage([target])
    assert len(result.inputs) == 1
