"""The GitHub Copilot CLI reader, on event files built from the documented shapes.

The lab cannot drive Copilot CLI (it needs a GitHub sign-in), so every file here is written by
the test from the shapes the public sources give, none copied from a real session:

- the envelope ``{type, data, id, timestamp, parentId}`` and each event's ``data``:
  ``github/copilot-sdk``, ``nodejs/src/generated/session-events.ts`` (generated from
  ``session-events.schema.json``);
- the shell result's ``<exited with exit code N>`` last line and the ``rejected``/``denied``
  error codes of a call the user did not confirm: ``microsoft/vscode-copilot-chat``,
  ``src/extension/agents/copilotcli/common/copilotCLITools.ts``;
- a refused call ``{"success": false, "error": {"message": "\\"path\\": Required", "code":
  "failure"}}`` and the ``assistant.turn_end`` / ``session.shutdown`` after the last answer: the
  Copilot CLI 1.0.78 events in ``WildChildForLife/lantern``,
  ``fixtures/copilot-home/session-state/*/events.jsonl``;
- ``session.error`` with ``errorType`` ``quota`` and ``statusCode`` 402, ``rate_limit`` without
  a status: the schema's ``ErrorData`` and the errors adapters of Copilot CLI quote;
- ``copilot -p --output-format json`` printing the same events then a ``result`` line:
  ``sortie-ai/sortie``, ``docs/copilot-adapter-notes.md``.
"""

from __future__ import annotations

import json
from itertools import count
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner

from failcode.cli import main
from failcode.triage import triage
from failcode.triage.readers import HEAD_BYTES, READERS, detect
from failcode.triage.readers._copilot import CopilotCliReader
from tests._paths import REPO
from tests.lab.runner import FIXTURES
from tests.triage._data import session_files, sessions_2_dir, sessions_dir

if TYPE_CHECKING:
    from pathlib import Path

    from failcode.triage import SessionResult

SESSION_ID = "0c4f1d2e-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
_IDS = count(1)


def _event(kind: str, data: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """One line of ``events.jsonl``: the SDK schema's envelope around ``data``."""
    number = next(_IDS)
    return {"type": kind, "data": data, "id": f"ev-{number}",
            "timestamp": f"2026-08-05T20:40:{number % 60:02d}.000Z",
            "parentId": f"ev-{number - 1}" if number > 1 else None, **extra}


START = _event("session.start", {"sessionId": SESSION_ID, "version": 1,
                                  "producer": "copilot-agent", "copilotVersion": "1.0.78",
                                  "startTime": "2026-08-05T20:40:00.000Z",
                                  "context": {"cwd": "/srv/app"}})


def _prompt(text: str = "make the build pass") -> dict[str, Any]:
    return _event("user.message", {"content": text, "attachments": []})


def _requests(*calls: tuple[str, str, object], text: str = "") -> dict[str, Any]:
    """An ``assistant.message`` asking for tool calls ``(id, name, arguments)``."""
    return _event("assistant.message", {
        "messageId": f"m-{next(_IDS)}", "content": text,
        "toolRequests": [{"toolCallId": call_id, "name": name, "arguments": args,
                          "type": "function"} for call_id, name, args in calls]})


def _bash(call_id: str, command: str) -> list[dict[str, Any]]:
    """The model asks for a ``bash`` call and the tool starts it."""
    args = {"command": command, "description": "run it"}
    return [_requests((call_id, "bash", args)),
            _event("tool.execution_start", {"toolCallId": call_id, "toolName": "bash",
                                            "arguments": args})]


def _done(call_id: str, *, success: bool = True, **data: Any) -> dict[str, Any]:
    return _event("tool.execution_complete", {"toolCallId": call_id, "success": success,
                                              **data})


def _shell_result(call_id: str, output: str, status: int) -> dict[str, Any]:
    """A shell result as the model saw it: the output, then Copilot's exit line."""
    text = f"{output}<exited with exit code {status}>"
    return _done(call_id, result={"content": text, "detailedContent": text})


def _answer(text: str = "Done.") -> list[dict[str, Any]]:
    """The agent's final answer, and the bookkeeping Copilot CLI 1.0.78 writes after it."""
    return [_event("assistant.message", {"messageId": f"m-{next(_IDS)}", "content": text,
                                         "toolRequests": []}),
            _event("assistant.turn_end", {"turnId": "0"}),
            _event("session.shutdown", {"shutdownType": "routine", "codeChanges": {},
                                        "modelMetrics": {}, "sessionStartTime": 0,
                                        "totalApiDurationMs": 1})]


def _write(tmp_path: Path, records: list[dict[str, Any]], folder: str = SESSION_ID) -> Path:
    path = tmp_path / "session-state" / folder / "events.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _one(path: Path) -> SessionResult:
    result = triage([path])
    assert [(i.format, i.error_code) for i in result.inputs] == [("copilot-cli", None)]
    assert len(result.sessions) == 1
    return result.sessions[0]


# -- commands ---------------------------------------------------------------------------------
def test_a_failing_command_is_read_from_its_exit_line(tmp_path: Path) -> None:
    """``<exited with exit code 127>`` is the status, though the call is ``success: true``."""
    path = _write(tmp_path, [
        START, _prompt(),
        *_bash("c1", "cargo build"),
        _shell_result("c1", "bash: line 1: cargo: command not found\n", 127),
        *_bash("c2", "ls"),
        _shell_result("c2", "src\n", 0),
        *_answer(),
    ])
    session = _one(path)
    assert session.session == SESSION_ID
    assert session.steps == 2
    assert [(e.step, e.failure.code) for e in session.failures] == [(0, "FC-CMD-001")]
    assert session.failures[0].evidence == "cargo build"
    assert session.status == "submitted"


def test_the_shell_exit_block_is_trusted_first(tmp_path: Path) -> None:
    """The runtime's ``shell_exit`` record wins over the text; the output is the full one."""
    output = "F\nFAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed in 0.01s\n"
    path = _write(tmp_path, [
        START, _prompt(), *_bash("c1", "python -m pytest -q"),
        _done("c1", result={"content": "(cut)\n<exited with exit code 0>",
                            "detailedContent": output,
                            "contents": [{"type": "shell_exit", "exitCode": 1,
                                          "shellId": "0", "outputPreview": "F"}]}),
        *_answer(),
    ])
    session = _one(path)
    assert [(e.step, str(e.failure.kind)) for e in session.failures] == [(0, "test_error")]
    assert session.failures[0].failure.metadata["exit_code"] == 1


def test_a_probe_that_finds_nothing_is_an_outcome(tmp_path: Path) -> None:
    """``grep`` exiting 1 with no output is a no-match outcome, not a failure."""
    path = _write(tmp_path, [START, _prompt(), *_bash("c1", "grep -rn TODO src"),
                             _shell_result("c1", "\n", 1), *_answer()])
    session = _one(path)
    assert session.failures == []
    assert [type(e.outcome).__name__ for e in session.outcomes] == ["NoMatch"]


def test_a_command_moved_to_the_background_is_no_failure(tmp_path: Path) -> None:
    """A shell result without an exit status (async, or its wait expired) is still running."""
    path = _write(tmp_path, [
        START, _prompt(), *_bash("c1", "npm run dev"),
        _done("c1", result={"content": "<command started in background with shellId: 0>"}),
        *_answer("The server is starting."),
    ])
    session = _one(path)
    assert session.steps == 1
    assert session.failures == []
    assert session.outcomes == []


def test_arguments_given_as_json_text_are_read(tmp_path: Path) -> None:
    """The schema types ``arguments`` as any JSON value: the JSON text of an object counts."""
    path = _write(tmp_path, [
        START, _prompt(), _requests(("c1", "bash", json.dumps({"command": "make"}))),
        _shell_result("c1", "make: *** No rule to make target 'all'.  Stop.\n", 2), *_answer(),
    ])
    [failure] = _one(path).failures
    assert (failure.step, failure.evidence) == (0, "make")


# -- refusals, declined and cancelled calls -----------------------------------------------------
def test_a_refused_tool_call_is_a_rejected_action(tmp_path: Path) -> None:
    """Copilot CLI 1.0.78's refusal of a ``view`` without its ``path`` is fed back: rejected."""
    path = _write(tmp_path, [
        START, _prompt(), _requests(("c1", "view", {"file_path": "src/orders.py"})),
        _event("tool.execution_start", {"toolCallId": "c1", "toolName": "view",
                                        "arguments": {"file_path": "src/orders.py"}}),
        _done("c1", success=False, error={"message": '"path": Required', "code": "failure"},
              toolTelemetry={}),
        *_answer(),
    ])
    session = _one(path)
    assert session.failures == []
    [outcome] = session.outcomes
    assert type(outcome.outcome).__name__ == "RejectedAction"
    assert outcome.step == 0
    assert outcome.evidence == "view src/orders.py"


def test_a_shell_command_the_tool_would_not_run_is_rejected(tmp_path: Path) -> None:
    """A shell call ``success: false`` with no exit status never ran: a rejected action."""
    path = _write(tmp_path, [
        START, _prompt(), *_bash("c1", "rm -rf /"),
        _done("c1", success=False, error={"message": "Command blocked by policy",
                                          "code": "failure"}),
        *_answer(),
    ])
    session = _one(path)
    assert session.failures == []
    assert [type(e.outcome).__name__ for e in session.outcomes] == ["RejectedAction"]


@pytest.mark.parametrize(("code", "message"), [
    ("rejected", "The user rejected this tool call."),
    ("denied", "The user rejected this tool call. User feedback: not on main"),
    ("rejected", "Permission denied by user"),
    ("rejected", "The pending permission request was cancelled before the tool could continue."),
    ("denied", ""),
])
def test_a_call_the_user_declined_is_cancelled(tmp_path: Path, code: str, message: str) -> None:
    """``error.code`` ``rejected``/``denied`` in Copilot CLI's words for the person declining
    (1.0.60's ``app.js``): a cancelled outcome, no failure."""
    path = _write(tmp_path, [
        START, _prompt(), *_bash("c1", "git push --force"),
        _done("c1", success=False, error={"message": message, "code": code}),
        *_answer("I did not push."),
    ])
    session = _one(path)
    assert session.failures == []
    [outcome] = session.outcomes
    assert type(outcome.outcome).__name__ == "Cancelled"
    assert "declined by the user" in str(outcome.outcome)
    assert session.status == "submitted"


@pytest.mark.parametrize("message", [
    "Permission to run this tool was denied due to the following rules: shell(git push)",
    "Permission denied and could not request permission from user",
    "Permission denied by a PermissionRequest hook: pushes need review",
])
def test_a_call_a_permission_rule_refused_is_rejected(tmp_path: Path, message: str) -> None:
    """``denied`` by a rule, a hook, or with no one to ask: the action was refused."""
    path = _write(tmp_path, [
        START, _prompt(), *_bash("c1", "git push --force"),
        _done("c1", success=False, error={"message": message, "code": "denied"}),
        *_answer("I did not push."),
    ])
    session = _one(path)
    assert session.failures == []
    assert [type(e.outcome).__name__ for e in session.outcomes] == ["RejectedAction"]


def test_a_call_a_resumed_session_found_interrupted_is_cancelled(tmp_path: Path) -> None:
    """``error.code`` ``interrupted`` (Copilot's resume of an unfinished call): cancelled."""
    path = _write(tmp_path, [
        START, _prompt(), *_bash("c1", "make all"),
        _done("c1", success=False, error={
            "message": "The execution of this tool, or a previous tool was interrupted.",
            "code": "interrupted"}),
        *_answer(),
    ])
    session = _one(path)
    assert session.failures == []
    assert [type(e.outcome).__name__ for e in session.outcomes] == ["Cancelled"]


@pytest.mark.parametrize(("verdict", "outcome"), [
    ("denied-interactively-by-user", "Cancelled"),
    ("denied-by-rules", "RejectedAction"),
    ("denied-no-approval-rule-and-could-not-request-from-user", "RejectedAction"),
    ("approved", None),
])
def test_a_permission_denial_settles_its_call(tmp_path: Path, verdict: str,
                                              outcome: str | None) -> None:
    """``permission.completed`` with a denial, then the person's abort (the shape of the
    corpus's Copilot CLI 1.0.60 sessions: no completion follows): declined or refused."""
    path = _write(tmp_path, [
        START, _prompt(), *_bash("c1", "mkdir -p .github"),
        _event("permission.requested", {"requestId": "r1", "permissionRequest": {
            "kind": "shell", "toolCallId": "c1", "fullCommandText": "mkdir -p .github"}}),
        _event("permission.completed", {"requestId": "r1", "toolCallId": "c1",
                                        "result": {"kind": verdict}}),
        _event("abort", {"reason": "user_initiated"}),
    ])
    session = _one(path)
    assert session.failures == []
    found = [type(e.outcome).__name__ for e in session.outcomes]
    assert found == [outcome or "Cancelled"]  # approved, then aborted: interrupted
    assert "declined" in str(session.outcomes[0].outcome) or outcome != "Cancelled"


def test_the_real_sessions_declined_calls_are_cancelled() -> None:
    """The corpus's two ``denied-interactively-by-user`` calls are cancelled outcomes."""
    result = triage([sessions_2_dir() / "copilot-cli"])
    declined = [(s.session[:8], o.step) for s in result.sessions for o in s.outcomes
                if "declined by the user" in str(o.outcome)]
    assert sorted(declined) == [("3cc3555e", 37), ("b87feda8", 31)]


def test_walking_finds_the_flat_session_files_of_older_versions(tmp_path: Path) -> None:
    """``session-state/<id>.jsonl`` (before a folder per session) is walked and found."""
    from failcode.triage._discover import default_locations, home_logs
    from failcode.triage.analysis._analyze import expand

    home = tmp_path / "home"
    flat = home / ".copilot" / "session-state" / f"{SESSION_ID}.jsonl"
    flat.parent.mkdir(parents=True)
    flat.write_text("".join(json.dumps(r) + "\n" for r in [START, _prompt(), *_answer()]))
    nested = _write(home / ".copilot", [START, _prompt(), *_answer()], folder="s-2")
    assert [p for p, _ in expand([home])] == sorted([flat, nested])
    found, _ = home_logs(default_locations(env={}, home=home, cwd=home))
    assert found == sorted([flat, nested])
    assert {i.format for i in triage([home]).inputs} == {"copilot-cli"}
    assert len(triage([sessions_2_dir() / "copilot-cli"]).sessions) == 6


def test_an_aborted_turn_cancels_its_pending_calls(tmp_path: Path) -> None:
    """A call pending when ``abort`` arrives was cancelled; the session ends unknown."""
    path = _write(tmp_path, [
        START, _prompt(), *_bash("c1", "make all"),
        _event("abort", {"reason": "user_initiated"}),
        _done("c1", success=False, error={"message": "The operation was aborted"}),
        _event("session.idle", {"aborted": True}, ephemeral=True),
    ])
    session = _one(path)
    assert session.failures == []
    assert [(e.step, type(e.outcome).__name__) for e in session.outcomes] == [(0, "Cancelled")]
    assert session.status == "unknown"


# -- provider errors and how a session ends -----------------------------------------------------
def test_a_provider_error_that_nothing_followed_ended_the_session(tmp_path: Path) -> None:
    """``session.error`` ``quota`` with its HTTP 402 ends the session on the provider."""
    path = _write(tmp_path, [
        START, _prompt(), _event("assistant.turn_start", {"turnId": "0"}),
        _event("session.error", {"errorType": "quota", "errorCode": "quota_exceeded",
                                 "message": "You have exceeded your monthly quota",
                                 "statusCode": 402}),
        _event("session.shutdown", {"shutdownType": "routine", "codeChanges": {},
                                    "modelMetrics": {}, "sessionStartTime": 0,
                                    "totalApiDurationMs": 0}),
    ])
    session = _one(path)
    assert session.status == "provider_error"
    assert session.ended_failure is not None
    assert session.ended_failure.code == "FC-PROV-004"
    assert [e.source for e in session.failures] == ["provider"]


def test_a_rate_limit_without_a_status_is_a_429(tmp_path: Path) -> None:
    """``rate_limit`` stands for HTTP 429 when Copilot kept no ``statusCode``."""
    path = _write(tmp_path, [START, _prompt(), _event("session.error", {
        "errorType": "rate_limit", "errorCode": "user_weekly_rate_limited",
        "message": "You have reached your weekly rate limit"})])
    session = _one(path)
    assert session.status == "provider_error"
    assert session.ended_failure is not None
    assert session.ended_failure.code == "FC-PROV-003"


def test_a_provider_error_the_session_went_on_from_did_not_end_it(tmp_path: Path) -> None:
    """A retried fault is reported (its tries as repeats), but the answer after it ends it."""
    error = {"errorType": "model_call", "message": "Request failed", "statusCode": 503}
    path = _write(tmp_path, [
        START, _prompt(), _event("session.error", error), _event("session.error", error),
        *_answer(),
    ])
    session = _one(path)
    assert session.status == "submitted"
    assert session.ended_failure is None
    [failure] = session.failures
    assert (failure.failure.code, failure.repeats) == ("FC-PROV-010", 2)


def test_a_context_limit_is_the_context_window(tmp_path: Path) -> None:
    """``context_limit`` is the model's context window exceeded."""
    path = _write(tmp_path, [START, _prompt(), _event("session.error", {
        "errorType": "context_limit", "message": "prompt token count exceeds the limit"})])
    session = _one(path)
    assert session.ended_failure is not None
    assert session.ended_failure.code == "FC-PROV-006"


def test_a_runtime_error_is_the_harness_and_ends_unknown(tmp_path: Path) -> None:
    """A ``session.error`` that is not the provider's is Copilot's own runtime failing."""
    path = _write(tmp_path, [START, _prompt(), _event("session.error", {
        "errorType": "session", "message": "Turn error: the shell driver exited"})])
    session = _one(path)
    assert session.status == "unknown"
    assert [e.source for e in session.failures] == ["harness"]


def test_a_pending_tool_call_ends_unknown(tmp_path: Path) -> None:
    """A session cut while a command ran ended neither submitted nor on an error."""
    path = _write(tmp_path, [START, _prompt(), *_bash("c1", "pytest")])
    session = _one(path)
    assert session.steps == 1
    assert session.status == "unknown"
    assert session.failures == []


def test_a_sub_agents_answer_does_not_end_the_session(tmp_path: Path) -> None:
    """Sub-agent records (``agentId``) are steps, never the main agent's last word."""
    path = _write(tmp_path, [
        START, _prompt(), _requests(("t1", "task", {"prompt": "explore"})),
        _event("assistant.message", {"messageId": "s1", "content": "found it",
                                     "toolRequests": []}, agentId="agent-1"),
    ])
    session = _one(path)
    assert session.steps == 1
    assert session.status == "unknown"


# -- naming, stdout captures, bad input --------------------------------------------------------
def test_the_json_output_of_copilot_p_is_read_too(tmp_path: Path) -> None:
    """``--output-format json`` output: ephemeral events first, a ``result`` line last."""
    path = tmp_path / "copilot-output.jsonl"
    records = [
        _event("session.mcp_servers_loaded", {"servers": []}, ephemeral=True),
        _prompt(), *_bash("c1", "cat missing.txt"),
        _shell_result("c1", "cat: missing.txt: No such file or directory\n", 1),
        *_answer()[:2],
        {"type": "result", "timestamp": "2026-08-05T20:41:00.000Z", "sessionId": SESSION_ID,
         "exitCode": 0, "usage": {"premiumRequests": 1}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    session = _one(path)
    assert session.session == SESSION_ID
    assert [e.step for e in session.failures] == [0]
    assert session.status == "submitted"


def test_a_session_without_session_start_is_named_by_its_folder(tmp_path: Path) -> None:
    """The file is always ``events.jsonl``: its folder is the session's id."""
    path = _write(tmp_path, [_event("session.resume", {"eventCount": 3, "resumeTime": "x"}),
                             _prompt(), *_answer()], folder="1b2c3d4e-folder")
    assert _one(path).session == "1b2c3d4e-folder"


def test_events_without_a_conversation_are_a_typed_error(tmp_path: Path) -> None:
    """No message, no tool call, no error: FC-DATA-002 naming the format, no empty session."""
    path = _write(tmp_path, [
        START, _event("session.info", {"infoType": "mcp", "message": "Connected"}),
        _event("session.shutdown", {"shutdownType": "routine", "codeChanges": {},
                                    "modelMetrics": {}, "sessionStartTime": 0,
                                    "totalApiDurationMs": 0}),
    ])
    result = triage([path])
    [item] = result.inputs
    assert (item.format, item.error_code) == ("copilot-cli", "FC-DATA-002")
    assert "without a message, a tool call or an error" in (item.error_message or "")
    assert result.sessions == []


def test_a_bad_line_is_an_input_error_naming_it(tmp_path: Path) -> None:
    """A line that is not JSON stops the reader with FC-DATA-003 naming the line."""
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(START) + "\n" + json.dumps(_prompt()) + "\n{not json\n")
    item = triage([path]).inputs[0]
    assert (item.format, item.error_code) == ("copilot-cli", "FC-DATA-003")
    assert "line 3" in (item.error_message or "")


# -- the command line --------------------------------------------------------------------------
def test_the_cli_triages_copilot_sessions_and_names_the_empty_one(tmp_path: Path) -> None:
    """``failcode triage --json``: the session's failure and end, exit 2 for the empty file."""
    good = _write(tmp_path, [START, _prompt(), *_bash("c1", "gcc bad.c"),
                             _shell_result("c1", "bad.c:1:1: error: expected ';' before '}' "
                                                 "token\n", 1), *_answer()])
    empty = _write(tmp_path, [START], folder="empty")
    run = CliRunner().invoke(main, ["triage", "--json", str(good)])
    assert run.exit_code == 0, run.output
    document = json.loads(run.output)
    [session] = document["sessions"]
    assert session["format"] == "copilot-cli"
    assert session["ended"]["status"] == "submitted"
    assert [(f["step"], f["failure"]["kind"]) for f in session["failures"]] == [
        (0, "build_error")]
    run = CliRunner().invoke(main, ["triage", "--json", str(good), str(empty)])
    assert run.exit_code == 2
    document = json.loads(run.output)
    assert [i["error"]["code"] if i["error"] else None for i in document["inputs"]] == [
        None, "FC-DATA-002"]
    assert len(document["sessions"]) == 1


# -- detection ---------------------------------------------------------------------------------
def _head(path: Path) -> bytes:
    with path.open("rb") as stream:
        return stream.read(HEAD_BYTES)


def test_detection_finds_copilot_and_no_other_reader_claims_it(tmp_path: Path) -> None:
    """The Copilot reader is chosen, and no other reader's sniff accepts its files."""
    path = _write(tmp_path, [START, _prompt(), *_bash("c1", "ls"), _shell_result("c1", "", 0),
                             *_answer()])
    head = _head(path)
    found = detect(head)
    assert found is not None
    assert found.name == "copilot-cli"
    others = [r.name for r in READERS if r.name != "copilot-cli" and r.sniff(head)]
    assert others == []


def test_no_fixture_of_another_format_is_claimed() -> None:
    """The lab's fixtures, the test fixtures and the shipped sample are never Copilot's."""
    roots = [*sorted(p for p in FIXTURES.iterdir() if p.is_dir()), REPO / "tests" / "fixtures",
             REPO / "src" / "failcode" / "triage" / "data"]
    files = [p for root in roots for p in sorted(root.rglob("*")) if p.is_file()]
    assert len(files) > 100
    reader = CopilotCliReader()
    claimed = [str(p.relative_to(REPO)) for p in files if reader.sniff(_head(p))]
    assert claimed == []


def test_no_real_session_of_another_format_is_claimed() -> None:
    """The shared real sessions (five other formats) are never Copilot's."""
    reader = CopilotCliReader()
    files = session_files(sessions_dir())
    assert files
    assert [p.name for p in files if reader.sniff(_head(p))] == []
