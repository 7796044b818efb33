"""OpenCode sessions as ``opencode export`` prints them (rules in
``failcode.triage.readers._opencode``): the lab's runs of the pinned version, and the shapes
the lab's scripted model cannot make OpenCode write (a person interrupting a turn or declining
a call, a killed command, the named provider errors), built as OpenCode's ``SessionV1``
schemas and its processor and shell tool write them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from failcode.triage import triage
from failcode.triage.readers import detect
from failcode.triage.readers._opencode import OpenCodeReader
from tests.lab.runner import FIXTURES

if TYPE_CHECKING:
    from pathlib import Path

_SESSION = "ses_0a1b2c3d4e5fLabTest000000"
_T0 = 1_767_225_600_000


def _info() -> dict[str, Any]:
    return {"id": _SESSION, "slug": "calm-river", "projectID": "global", "directory": "/p",
            "title": "t", "version": "1.18.33", "time": {"created": _T0, "updated": _T0}}


def _user(number: int) -> dict[str, Any]:
    mid = f"msg_u{number}"
    return {"info": {"id": mid, "sessionID": _SESSION, "role": "user",
                     "time": {"created": _T0 + number}, "agent": "build",
                     "model": {"providerID": "p", "modelID": "m"}},
            "parts": [{"id": f"prt_u{number}", "sessionID": _SESSION, "messageID": mid,
                       "type": "text", "text": "fix the tests"}]}


def _assistant(number: int, parts: list[dict[str, Any]], *, finish: str | None = "tool-calls",
               error: dict[str, Any] | None = None, completed: bool = True) -> dict[str, Any]:
    mid = f"msg_a{number}"
    time: dict[str, int] = {"created": _T0 + 1000 * number}
    if completed:
        time["completed"] = _T0 + 1000 * number + 500
    info: dict[str, Any] = {"id": mid, "sessionID": _SESSION, "role": "assistant",
                            "parentID": "msg_u0", "modelID": "qwen3-coder", "providerID": "p",
                            "mode": "build", "agent": "build", "time": time}
    if finish is not None:
        info["finish"] = finish
    if error is not None:
        info["error"] = error
    out = []
    for index, part in enumerate(parts):
        out.append({"id": f"prt_a{number}_{index}", "sessionID": _SESSION, "messageID": mid,
                    **part})
    return {"info": info, "parts": out}


def _bash(command: str, state: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool", "tool": "bash", "callID": f"call_{command[:8]}",
            "state": {"input": {"command": command, "description": "d"}, **state}}


def _completed(output: str, code: int | None) -> dict[str, Any]:
    return {"status": "completed", "output": output, "title": "x",
            "metadata": {"output": output, "exit": code, "truncated": False},
            "time": {"start": _T0, "end": _T0 + 10}}


def _session(tmp_path: Path, *messages: dict[str, Any]) -> Any:
    path = tmp_path / f"{_SESSION}.json"
    path.write_text(json.dumps({"info": _info(), "messages": [_user(0), *messages]}, indent=2))
    result = triage([path])
    assert [(i.format, i.error_code) for i in result.inputs] == [("opencode", None)]
    (session,) = result.sessions
    return session


def _done() -> dict[str, Any]:
    return _assistant(99, [{"type": "text", "text": "All done."}], finish="stop")


def test_every_lab_run_is_an_opencode_session_of_the_pinned_version() -> None:
    """The lab's exports of 1.18.33 are read as opencode sessions, named by their id."""
    exports = sorted((FIXTURES / "opencode").glob("*/session/opencode-export/ses_*.json"))
    assert exports, "no OpenCode fixture (python -m tests.lab run -a opencode)"
    result = triage(exports)
    assert {(i.format, i.error_code) for i in result.inputs} == {("opencode", None)}
    assert {s.agent_version for s in result.sessions} == {"1.18.33"}
    assert all(s.session.startswith("ses_") for s in result.sessions)


def test_a_failing_command_is_a_failure_and_a_finished_answer_is_submitted(
        tmp_path: Path) -> None:
    """``metadata.exit`` is the command's status; the last message's ``finish`` with no tool
    part ends the session ``submitted``."""
    session = _session(tmp_path, _assistant(1, [_bash(
        "python -m pytest -q", _completed(
            "E   assert 1 == 2\nFAILED test_a.py::test_a - assert 1 == 2\n1 failed in 0.01s\n",
            1))]), _done())
    assert [(f.step, str(f.failure.kind)) for f in session.failures] == [(0, "test_error")]
    assert session.status == "submitted"
    assert session.model == "qwen3-coder"


def test_a_command_killed_at_its_timeout_is_a_timeout(tmp_path: Path) -> None:
    """The shell tool's note ``shell tool terminated command after exceeding timeout``
    (its exit null) is the command's timeout."""
    output = ("still waiting\n\n<shell_metadata>\nshell tool terminated command after "
              "exceeding timeout 3000 ms. If this command is expected to take longer and is "
              "not waiting for interactive input, retry with a larger timeout value in "
              "milliseconds.\n</shell_metadata>")
    session = _session(tmp_path, _assistant(1, [_bash("sleep 60", _completed(output, None))]),
                       _done())
    (failure,) = session.failures
    assert failure.step == 0
    assert failure.failure.error_class == "timeout"


def test_a_command_the_person_aborted_is_cancelled(tmp_path: Path) -> None:
    """``User aborted the command`` in the shell tool's notes: cancelled, no failure."""
    output = "partial\n\n<shell_metadata>\nUser aborted the command\n</shell_metadata>"
    session = _session(tmp_path, _assistant(1, [_bash("npm start", _completed(output, None))]),
                       _done())
    assert session.failures == []
    assert [(o.step, type(o.outcome).__name__) for o in session.outcomes] == [(0, "Cancelled")]


def test_an_interrupted_turn_cancels_its_unfinished_call_and_is_no_failure(
        tmp_path: Path) -> None:
    """``MessageAbortedError`` is the person stopping the turn: the call the processor
    stopped (``Tool execution aborted``, ``metadata.interrupted``) and the turn are cancelled
    outcomes, and the session did not end submitted."""
    stopped = {"status": "error", "error": "Tool execution aborted",
               "metadata": {"interrupted": True}, "time": {"start": _T0, "end": _T0 + 5}}
    session = _session(tmp_path, _assistant(
        1, [_bash("make all", stopped)], finish=None,
        error={"name": "MessageAbortedError", "data": {"message": "The operation was aborted."}}))
    assert session.failures == []
    assert [type(o.outcome).__name__ for o in session.outcomes] == ["Cancelled", "Cancelled"]
    assert session.status == "unknown"


def test_a_declined_call_is_cancelled_and_a_rule_refusal_is_a_rejected_action(
        tmp_path: Path) -> None:
    """The person rejecting the permission prompt is cancelled; a ``deny`` rule's refusal
    (what the lab's refused-command scenario makes) and a tool's own error fed back to the
    model are rejected actions."""
    declined = {"status": "error", "time": {"start": _T0, "end": _T0 + 1},
                "error": "The user rejected permission to use this specific tool call with "
                         "the following feedback: not now"}
    edit_error = {"type": "tool", "tool": "edit", "callID": "call_e",
                  "state": {"status": "error", "time": {"start": _T0, "end": _T0 + 1},
                            "input": {"filePath": "/p/a.py", "oldString": "x",
                                      "newString": "y"},
                            "error": "Could not find oldString in the file. It must match "
                                     "exactly, including whitespace, indentation, and line "
                                     "endings."}}
    session = _session(tmp_path, _assistant(1, [_bash("git push -f", declined)]),
                       _assistant(2, [edit_error]), _done())
    assert session.failures == []
    assert [(o.step, type(o.outcome).__name__) for o in session.outcomes] == [
        (0, "Cancelled"), (1, "RejectedAction")]


@pytest.mark.parametrize(("error", "kind"), [
    ({"name": "APIError", "data": {"message": "Rate limit reached", "statusCode": 429,
                                   "isRetryable": True}}, "provider_error"),
    ({"name": "ProviderAuthError", "data": {"providerID": "p", "message": "Invalid API key"}},
     "provider_error"),
    ({"name": "ContextOverflowError", "data": {"message": "prompt is too long"}},
     "context_error"),  # the context window: the taxonomy's kind of its own
])
def test_a_provider_error_on_the_last_message_ends_the_session(
        tmp_path: Path, error: dict[str, Any], kind: str) -> None:
    """A named error on the last assistant message is the provider error it ended on."""
    session = _session(tmp_path, _assistant(1, [], finish=None, error=error))
    assert session.status == "provider_error"
    assert session.ended_failure is not None
    assert str(session.ended_failure.kind) == kind


def test_the_named_errors_keep_their_cause(tmp_path: Path) -> None:
    """A 429 is a rate limit, ``ProviderAuthError`` an authentication failure, a context
    overflow the context window, each told apart by the classifier."""
    codes = []
    for name, data in (("APIError", {"message": "slow down", "statusCode": 429,
                                     "isRetryable": True}),
                       ("ProviderAuthError", {"providerID": "p", "message": "bad key"}),
                       ("ContextOverflowError", {"message": "too long"})):
        folder = tmp_path / name
        folder.mkdir()
        session = _session(folder, _assistant(1, [], finish=None,
                                              error={"name": name, "data": data}))
        assert session.ended_failure is not None
        codes.append(session.ended_failure.code)
    assert len(set(codes)) == 3


def test_a_retry_part_is_a_provider_failure_the_turn_went_on_after(tmp_path: Path) -> None:
    """A ``retry`` part records one failed request OpenCode retried: a provider failure at the
    step it happened at; the session still ends as its last message says."""
    retry = {"type": "retry", "attempt": 1, "time": {"created": _T0 + 10},
             "error": {"name": "APIError", "data": {"message": "Overloaded",
                                                    "statusCode": 503, "isRetryable": True}}}
    session = _session(tmp_path, _assistant(1, [retry, _bash("ls", _completed("a\n", 0))]),
                       _done())
    assert [(f.step, f.source) for f in session.failures] == [(0, "provider")]
    assert session.status == "submitted"


def test_a_call_never_finished_outside_an_aborted_turn_has_no_event(tmp_path: Path) -> None:
    """A ``running`` call in a message still open (no ``time.completed``): the step is
    counted, nothing is said of it, and the session is not over."""
    running = {"status": "running", "time": {"start": _T0}}
    session = _session(tmp_path, _assistant(1, [_bash("sleep 5", running)], finish=None,
                                            completed=False))
    assert session.steps == 1
    assert session.failures == []
    assert session.outcomes == []
    assert session.status == "unknown"


def test_detection_takes_an_export_and_nothing_like_it() -> None:
    """The export's head (``{"info": {"id": "ses_...``) is detected; its message and part
    shapes alone, a session info without the export, another agent's JSON are not."""
    export = json.dumps({"info": _info(), "messages": []}, indent=2).encode()
    assert OpenCodeReader().sniff(export)
    assert detect(export) is not None
    assert detect(export).name == "opencode"  # type: ignore[union-attr]
    assert not OpenCodeReader().sniff(json.dumps(_info()).encode())
    assert not OpenCodeReader().sniff(json.dumps(_user(0)).encode())
    assert not OpenCodeReader().sniff(b'{"info": {"id": "msg_1"}, "messages": []}')
    assert not OpenCodeReader().sniff(b'[{"ts": 1, "type": "say"}]')


def test_a_cut_export_keeps_nothing_but_reports_where(tmp_path: Path) -> None:
    """An export cut in the middle is an input error (FC-DATA-003), not an empty session."""
    path = tmp_path / f"{_SESSION}.json"
    text = json.dumps({"info": _info(), "messages": [_user(0), _done()]}, indent=2)
    path.write_text(text[: len(text) // 2])
    result = triage([path])
    assert [i.format for i in result.inputs] == ["opencode"]
    assert result.inputs[0].error_code == "FC-DATA-003"
