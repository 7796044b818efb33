"""Records of Gemini CLI's chat recording and Claude Code's transcript found by reading the
agents' own sources, in the shapes those sources serialize (built here, none copied).

Gemini CLI (google-gemini/gemini-cli):

- ``packages/core/src/services/chatRecordingService.ts``: ``rewindTo`` appends
  ``{"$rewindTo": id}``; ``loadConversationRecord`` drops that record and every later one (all
  of them when the id is not there).
- ``packages/core/src/tools/shell.ts``: the text of a command stopped by the inactivity
  timeout, cancelled by the user, or moved to the background; a spawn failure gives
  ``Output:`` and ``Error:`` sections with no ``Exit Code`` and an ``error`` (status
  ``error``); a command refused before it ran has no sections at all.
- ``packages/core/src/utils/errorParsing.ts`` (``parseAndFormatApiError``): ``[API Error:
  <message> (Status: <google.rpc status>)]``, recorded as an ``error`` record by
  ``packages/cli/src/ui/hooks/useHistoryManager.ts``, which also records the interactive
  CLI's ``info`` items (PR #13300): ``packages/cli/src/ui/hooks/useGeminiStream.ts`` adds
  "Request cancelled." / "User cancelled the request." and "The session has reached the
  maximum number of turns: N. ...".

Claude Code (transcript lines as public issues and tools quote them):

- A permission rule refusing a call: ``is_error`` results "Claude requested permissions to
  use Bash, but you haven't granted it yet.", "Permission to use Bash with command ... has
  been denied.", "This Bash command contains multiple operations. The following parts require
  approval: ...".
- A ``PreToolUse`` hook denying a call: "Hook PreToolUse:Bash denied this tool" (2.1.x,
  anthropics/claude-code#59643), "PreToolUse:Bash hook blocking error from command: ...".
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from failcode.triage import triage

if TYPE_CHECKING:
    from pathlib import Path

    from failcode.triage import SessionResult

_HEADER = {"sessionId": "9c2e4b7a-1d3f-4e5a-8b6c-7d8e9f0a1b2c", "projectHash": "cd" * 32,
           "startTime": "2026-02-03T10:00:00.000Z", "lastUpdated": "2026-02-03T10:00:00.000Z",
           "kind": "main"}


def _user(record_id: str, text: str) -> dict[str, Any]:
    return {"id": record_id, "timestamp": "2026-02-03T10:00:01.000Z", "type": "user",
            "content": [{"text": text}]}


def _shell(call_id: str, command: str, output: str, status: str = "success",
           ) -> dict[str, Any]:
    """A ``ToolCallRecord`` of ``run_shell_command`` (``chatRecordingTypes.ts``)."""
    response = {"output": output} if status != "error" else {"error": output}
    return {"id": call_id, "name": "run_shell_command", "args": {"command": command},
            "status": status, "timestamp": "2026-02-03T10:00:03.000Z",
            "result": [{"functionResponse": {"id": call_id, "name": "run_shell_command",
                                             "response": response}}],
            "resultDisplay": output, "displayName": "Shell"}


def _model(record_id: str, calls: list[dict[str, Any]] | None = None,
           text: str = "") -> dict[str, Any]:
    record: dict[str, Any] = {"id": record_id, "timestamp": "2026-02-03T10:00:02.000Z",
                              "type": "gemini", "content": text, "thoughts": [],
                              "model": "gemini-2.5-pro"}
    if calls is not None:
        record["toolCalls"] = calls
    return record


def _notice(record_id: str, kind: str, text: str) -> dict[str, Any]:
    """An ``info``/``warning``/``error`` record (``useHistoryManager.ts``: ``content`` is the
    item's text)."""
    return {"id": record_id, "timestamp": "2026-02-03T10:00:04.000Z", "type": kind,
            "content": text}


def _gemini(tmp_path: Path, records: list[dict[str, Any]]) -> SessionResult:
    path = tmp_path / "session-2026-02-03T10-00-9c2e4b7a.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [_HEADER, *records]))
    result = triage([path])
    assert [(i.format, i.error_code) for i in result.inputs] == [("gemini-cli", None)]
    assert len(result.sessions) == 1
    return result.sessions[0]


def _outcomes(session: SessionResult) -> list[tuple[int | None, str]]:
    return [(e.step, type(e.outcome).__name__) for e in session.outcomes]


# --- Gemini CLI: $rewindTo -------------------------------------------------------------------

def test_a_rewind_drops_the_record_it_names_and_all_after(tmp_path: Path) -> None:
    """The rewound turn (a failing build) is gone; the chat goes on from before it."""
    failing = _shell("c2", "make", "Output: make: *** [all] Error 2\nExit Code: 2")
    session = _gemini(tmp_path, [
        _user("u1", "list the files"), _model("m1", [_shell("c1", "ls", "Output: src")]),
        _user("u2", "build it"), _model("m2", [failing]),
        {"$rewindTo": "u2"},
        _user("u3", "just say hi"), _model("m3", text="hi"),
    ])
    assert (session.steps, session.failures, session.status) == (1, [], "submitted")


def test_a_rewind_to_an_id_not_there_drops_everything(tmp_path: Path) -> None:
    """``loadConversationRecord`` clears the chat when the rewound id is unknown."""
    failing = _shell("c1", "make", "Output: make: *** [all] Error 2\nExit Code: 2")
    session = _gemini(tmp_path, [
        _user("u1", "build it"), _model("m1", [failing]),
        {"$rewindTo": "not-a-record"},
        _user("u2", "say hi"), _model("m2", text="hi"),
    ])
    assert (session.steps, session.failures, session.status) == (0, [], "submitted")


def test_records_written_again_after_a_rewind_come_back(tmp_path: Path) -> None:
    """A rewind removes what was there then, not what is written after it."""
    failing = _shell("c1", "make", "Output: make: *** [all] Error 2\nExit Code: 2")
    session = _gemini(tmp_path, [
        _user("u1", "build it"), {"$rewindTo": "u1"},
        _user("u1", "build it"), _model("m1", [failing]),
    ])
    assert (session.steps, [e.step for e in session.failures]) == (1, [0])


# --- Gemini CLI: shell text without an exit status ----------------------------------------

def test_the_inactivity_timeout_is_a_timed_out_command(tmp_path: Path) -> None:
    """shell.ts: "Command was automatically cancelled because it exceeded the timeout ..."."""
    text = ("<untrusted_context>\nCommand was automatically cancelled because it exceeded the "
            "timeout of 5.0 minutes without output. Below is the output before it was "
            "cancelled:\nwaiting for lock\n</untrusted_context>")
    session = _gemini(tmp_path, [_model("m1", [_shell("c1", "cargo build", text)])])
    assert [(e.step, e.failure.error_class) for e in session.failures] == [(0, "timeout")]


def test_a_command_the_user_cancelled_is_a_cancelled_outcome(tmp_path: Path) -> None:
    """shell.ts: "Command was cancelled by user before it could complete." is no failure."""
    text = ("Command was cancelled by user before it could complete. There was no output "
            "before it was cancelled.")
    session = _gemini(tmp_path, [_model("m1", [_shell("c1", "npm test", text)])])
    assert (session.failures, _outcomes(session)) == ([], [(0, "Cancelled")])


def test_a_command_moved_to_the_background_is_not_a_failure(tmp_path: Path) -> None:
    """shell.ts: "Command moved to background (PID: N)": still running."""
    text = "Command moved to background (PID: 4242). Output hidden. Press Ctrl+B to view."
    session = _gemini(tmp_path, [_model("m1", [_shell("c1", "npm run dev", text)])])
    assert (session.steps, session.failures) == (1, [])


def test_a_shell_call_refused_before_it_ran_is_a_rejected_action(tmp_path: Path) -> None:
    """``status: error`` with no ``Output``/``Exit Code`` section: the command never ran."""
    call = _shell("c1", "rm -rf /", "Tool execution denied by policy.", status="error")
    session = _gemini(tmp_path, [_model("m1", [call]), _model("m2", text="ok")])
    assert (session.failures, _outcomes(session)) == ([], [(0, "RejectedAction")])


def test_a_shell_call_that_could_not_run_is_a_failed_command(tmp_path: Path) -> None:
    """``status: error`` with ``Output:`` and ``Error:`` but no exit status: it failed."""
    call = _shell("c1", "./build.sh", "Output: (empty)\nError: spawn /bin/bash EACCES",
                  status="error")
    session = _gemini(tmp_path, [_model("m1", [call])])
    assert [e.step for e in session.failures] == [0]


def test_a_shell_success_without_an_exit_line_still_exited_0(tmp_path: Path) -> None:
    """The rule above is for ``status: error`` only: a success keeps exit 0."""
    call = _shell("c1", "ls", "Output: (empty)\nProcess Group PGID: 7")
    assert _gemini(tmp_path, [_model("m1", [call])]).failures == []


# --- Gemini CLI: error and info records ---------------------------------------------------

@pytest.mark.parametrize(("rpc", "error_class"), [
    ("RESOURCE_EXHAUSTED", "rate_limit"), ("INTERNAL", "server_error"),
    ("UNAUTHENTICATED", "auth")])
def test_an_rpc_status_names_the_http_status(tmp_path: Path, rpc: str, error_class: str,
                                             ) -> None:
    """errorParsing.ts: ``[API Error: <message> (Status: <rpc status>)]``."""
    text = f"[API Error: The request failed. (Status: {rpc})]"
    session = _gemini(tmp_path, [_user("u1", "go"), _notice("e1", "error", text)])
    assert session.status == "provider_error"
    assert session.ended_failure is not None
    assert session.ended_failure.error_class == error_class


def test_a_prompt_after_an_api_error_means_the_session_went_on(tmp_path: Path) -> None:
    """The error is still reported; the session did not end on it."""
    text = "[API Error: The request failed. (Status: UNAVAILABLE)]"
    session = _gemini(tmp_path, [_user("u1", "go"), _notice("e1", "error", text),
                                 _user("u2", "try again")])
    assert session.status == "unknown"
    assert [str(e.failure.kind) for e in session.failures] == ["provider_error"]


def test_a_cancelled_request_after_an_answer_ended_unknown(tmp_path: Path) -> None:
    """useHistoryManager.ts records "Request cancelled." as an ``info`` record: the person
    stopped the turn, so the text before it was no final answer."""
    listing = _model("m0", [_shell("c1", "ls", "Output: a")])
    session = _gemini(tmp_path, [_user("u1", "go"), listing, _model("m1", text="Let me look."),
                                 _notice("i1", "info", "Request cancelled.")])
    assert session.status == "unknown"


def test_the_other_cancellation_note_also_ended_unknown(tmp_path: Path) -> None:
    """useGeminiStream.ts: "User cancelled the request." (the UserCancelled event)."""
    listing = _model("m0", [_shell("c1", "ls", "Output: a")])
    session = _gemini(tmp_path, [_user("u1", "go"), listing, _model("m1", text="Looking."),
                                 _notice("i1", "info", "User cancelled the request.")])
    assert session.status == "unknown"


def test_the_max_session_turns_note_ended_on_the_turn_limit(tmp_path: Path) -> None:
    """useGeminiStream.ts: "The session has reached the maximum number of turns: N"."""
    note = ("The session has reached the maximum number of turns: 20. Please update this "
            "limit in your setting.json file.")
    session = _gemini(tmp_path, [_user("u1", "go"),
                                 _model("m0", [_shell("c1", "ls", "Output: a")]),
                                 _notice("i1", "info", note)])
    assert session.status == "limit"
    assert session.ended_failure is not None
    assert session.ended_failure.params.get("limit") == "turn"


def test_a_prompt_after_the_turn_limit_means_the_session_went_on(tmp_path: Path) -> None:
    """The person raised the limit or asked again: the limit did not end the session."""
    note = "The session has reached the maximum number of turns: 20."
    session = _gemini(tmp_path, [_user("u1", "go"),
                                 _model("m0", [_shell("c1", "ls", "Output: a")]),
                                 _notice("i1", "info", note), _user("u2", "go on"),
                                 _model("m1", text="done")])
    assert session.status == "submitted"


def test_other_info_records_change_nothing(tmp_path: Path) -> None:
    """An ``info`` record that is not a cancellation (a compression note) is bookkeeping."""
    listing = _model("m0", [_shell("c1", "ls", "Output: a")])
    session = _gemini(tmp_path, [_user("u1", "go"), listing, _model("m1", text="done"),
                                 _notice("i1", "info", "Chat history compressed.")])
    assert session.status == "submitted"


# --- Claude Code: permission denials and hook denials ----------------------------------------

def _claude(tmp_path: Path, text: str, *, is_error: bool = True) -> SessionResult:
    """A Bash call and its result, as the transcript's assistant and user lines carry them."""
    base = {"sessionId": "7e1c", "version": "2.1.143", "cwd": "/w", "isSidechain": False,
            "userType": "external", "timestamp": "2026-02-03T10:00:00.000Z"}
    use = {**base, "type": "assistant", "uuid": "a1", "parentUuid": None, "message": {
        "role": "assistant", "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "toolu_01", "name": "Bash",
                     "input": {"command": "git push origin main"}}]}}
    result = {**base, "type": "user", "uuid": "u1", "parentUuid": "a1", "message": {
        "role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01",
                                     "content": text, "is_error": is_error}]},
        "toolUseResult": f"Error: {text}"}
    answer = {**base, "type": "assistant", "uuid": "a2", "parentUuid": "u1", "message": {
        "role": "assistant", "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
        "content": [{"type": "text", "text": "I could not push."}]}}
    path = tmp_path / "7e1c.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in (use, result, answer)))
    sessions = triage([path]).sessions
    assert [s.format for s in sessions] == ["claude-code"]
    return sessions[0]


@pytest.mark.parametrize("text", [
    "Claude requested permissions to use Bash, but you haven't granted it yet.",
    "Permission to use Bash with command git push origin main has been denied.",
    ("This Bash command contains multiple operations. The following parts require approval: "
     "git push origin main"),
    "Hook PreToolUse:Bash denied this tool",
    "PreToolUse:Bash hook blocking error from command: \"guard.sh\": pushing is not allowed",
])
def test_a_refused_bash_call_is_a_rejected_action(tmp_path: Path, text: str) -> None:
    """The command never ran: a rejected action, not a failed command."""
    session = _claude(tmp_path, text)
    assert (session.failures, _outcomes(session)) == ([], [(0, "RejectedAction")])
    assert session.status == "submitted"


def test_the_same_words_in_a_command_s_own_output_are_output(tmp_path: Path) -> None:
    """Not ``is_error``: the text is what the command printed, a success."""
    session = _claude(tmp_path, "Permission to use the mirror has been denied by policy.",
                      is_error=False)
    assert (session.failures, session.outcomes) == ([], [])
