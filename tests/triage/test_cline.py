"""The Cline readers. ``ui_messages.json`` (the VS Code extension's tasks): the real tasks of
the second corpus, and messages in the shapes Cline writes with the texts its
``formatResponse`` feeds back. ``<id>.messages.json`` (Cline's CLI 3.x): the sessions the
lab's runs of the pinned CLI wrote (``tests/lab/fixtures/cline``), and one in its shapes."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from failcode.triage import triage
from failcode.triage._events import Command, Recorded
from failcode.triage.readers import detect
from failcode.triage.readers._cline import ClineReader, ClineSessionReader
from tests.lab.runner import FIXTURES
from tests.triage._data import sessions_2_dir

if TYPE_CHECKING:
    from pathlib import Path


def _task(tmp_path: Path, messages: list[dict[str, Any]]) -> Any:
    folder = tmp_path / "tasks" / "1770000000000"
    folder.mkdir(parents=True)
    path = folder / "ui_messages.json"
    path.write_text(json.dumps(messages))
    result = triage([path])
    assert [i.error_code for i in result.inputs] == [None]
    (session,) = result.sessions
    return session


def _request(*results: str) -> dict[str, Any]:
    return {"ts": 1770000005000, "type": "say", "say": "api_req_started",
            "text": json.dumps({"request": "\n\n".join(results)})}


TASK = {"ts": 1770000000000, "type": "say", "say": "task", "text": "fix it"}


def test_every_real_task_is_read_with_its_steps() -> None:
    """The three tasks of the corpus: a session each, named after the task, every step."""
    files = sorted((sessions_2_dir() / "cline").rglob("ui_messages.json"))
    result = triage(files)
    assert [i.format for i in result.inputs] == ["cline"] * 3
    assert sorted(s.steps for s in result.sessions) == [15, 23, 67]


def test_a_real_edit_with_new_problems_is_a_static_analysis_failure() -> None:
    """Cline's "New problems detected after saving the file" is the step's lint failure; a
    module the TypeScript service cannot find is a missing dependency."""
    path = sessions_2_dir() / "cline" / "CoreGems__Cline-Xray" / "ui_messages.json"
    (session,) = triage([path]).sessions
    kinds = {e.step: str(e.failure.kind) for e in session.failures}
    assert kinds[2] == "dependency_error"
    assert "static_analysis_error" in kinds.values()


def test_the_editors_new_problems_are_the_edit_tools_failure_not_a_command() -> None:
    """An edit's new problems come from the edit tool, not a shell: every Command the reader
    yields is one of Cline's ``command`` messages, never a ``tool`` one (``editedExistingFile``
    is Cline's name for the edit, no program), and the edits' failures have source ``tool``."""
    path = sessions_2_dir() / "cline" / "CoreGems__Cline-Xray" / "ui_messages.json"
    messages = json.loads(path.read_text())
    kinds = [m.get("say") or m.get("ask") for m in messages
             if (m.get("say") or m.get("ask")) in ("tool", "command")]
    with path.open("rb") as stream:
        events = list(ClineReader().read(stream, str(path)))
    commands = {e.step for e in events if isinstance(e, Command)}
    edits = {e.step for e in events if isinstance(e, Recorded)}
    assert commands
    assert all(kinds[step] == "command" for step in commands if step is not None)
    assert edits
    assert all(kinds[step] == "tool" for step in edits if step is not None)
    (session,) = triage([path]).sessions
    sources = {e.step: e.source for e in session.failures}
    assert {sources[step] for step in edits} == {"tool"}


def test_a_real_task_whose_requests_failed_ends_on_the_provider() -> None:
    """api_req_failed with nothing after it: the provider's 400, the session's end."""
    path = sessions_2_dir() / "cline" / "haram-333__fineye" / "ui_messages.json"
    (session,) = triage([path]).sessions
    assert session.status == "provider_error"
    assert session.ended_failure is not None
    assert session.ended_failure.code == "FC-PROV-008"


def test_the_users_denial_is_cancelled_and_a_refusal_rejected(tmp_path: Path) -> None:
    """"The user denied this operation." is cancelled; a SEARCH block that did not match
    (Cline's diffError) is a rejected action; neither is a failure."""
    session = _task(tmp_path, [
        TASK,
        {"ts": 1770000001000, "type": "ask", "ask": "tool",
         "text": json.dumps({"tool": "editedExistingFile", "path": "a.py"})},
        _request("[replace_in_file for 'a.py'] Result:\nThe user denied this operation."),
        {"ts": 1770000006000, "type": "say", "say": "tool",
         "text": json.dumps({"tool": "editedExistingFile", "path": "b.py"})},
        _request("[replace_in_file for 'b.py'] Result:\nThe tool execution failed with the "
                 "following error:\n<error>\nThis is likely because the SEARCH block content "
                 "doesn't match exactly with what's in the file\n</error>"),
        {"ts": 1770000009000, "type": "say", "say": "completion_result", "text": "done"},
    ])
    outcomes = {o.step: type(o.outcome).__name__ for o in session.outcomes}
    assert outcomes == {0: "Cancelled", 1: "RejectedAction"}
    assert session.failures == []
    assert session.status == "submitted"


def test_a_command_is_failed_by_what_its_output_shows(tmp_path: Path) -> None:
    """Cline keeps no status: a missing program in the output is a failure; a clean output
    none; a command offered for approval and never run before the task was resumed is
    cancelled."""
    session = _task(tmp_path, [
        TASK,
        {"ts": 1770000001000, "type": "say", "say": "command", "text": "pytest -q"},
        _request("[execute_command for 'pytest -q'] Result:\nCommand executed.\nOutput:\n"
                 "bash: pytest: command not found"),
        {"ts": 1770000006000, "type": "say", "say": "command", "text": "ls"},
        _request("[execute_command for 'ls'] Result:\nCommand executed.\nOutput:\na.py"),
        {"ts": 1770000007000, "type": "ask", "ask": "command", "text": "npm run dev"},
        {"ts": 1770000008000, "type": "ask", "ask": "resume_task", "text": ""},
    ])
    assert {e.step: e.failure.code for e in session.failures} == {0: "FC-CMD-001"}
    assert [(o.step, type(o.outcome).__name__) for o in session.outcomes] == [(2, "Cancelled")]
    assert session.status == "unknown"


def test_a_request_without_an_answer_is_read_by_nodes_error_code(tmp_path: Path) -> None:
    """api_req_failed carrying Node's system error code: ETIMEDOUT a timeout, ECONNRESET a
    lost connection; a code of Cline's own is read by the message's wording."""
    codes = []
    for index, code in enumerate(("ETIMEDOUT", "ECONNRESET", "stream_initialization_failed")):
        session = _task(tmp_path / str(index), [TASK, {
            "ts": 1770000001000, "type": "say", "say": "api_req_failed",
            "text": json.dumps({"message": "Request failed", "code": code})}])
        assert session.status == "provider_error"
        assert session.ended_failure is not None
        codes.append(session.ended_failure.code)
    assert codes == ["FC-PROV-011", "FC-PROV-012", "FC-PROV-010"]


# -- Cline's CLI 3.x ------------------------------------------------------------------------
def _cli_sessions() -> list[Path]:
    return sorted((FIXTURES / "cline").glob("*/session/**/*.messages.json"))


def test_every_session_the_cli_wrote_is_read_as_its_own_format() -> None:
    """Each lab session of Cline's CLI is detected as ``cline-cli`` (not the extension's
    format, not a plain chat) and read as one session named by its ``sessionId``."""
    paths = _cli_sessions()
    assert paths
    for path in paths:
        reader = detect(path.read_bytes()[:65536])
        assert reader is not None
        assert reader.name == "cline-cli"
        result = triage([path])
        assert [i.format for i in result.inputs] == ["cline-cli"]
        (session,) = result.sessions
        assert session.session == json.loads(path.read_text())["sessionId"]
        assert session.model == "stub-model"


def test_a_cli_session_has_a_step_per_command_the_cli_ran() -> None:
    """Every command of every ``run_commands`` call the CLI recorded is a step, with the
    status its result opens with (``[Command exited with code N]``), else 0."""
    for path in _cli_sessions():
        document = json.loads(path.read_text())
        ran = [c for m in document["messages"] for b in m["content"]
               if b.get("type") == "tool_use" and b["name"] == "run_commands"
               for c in b["input"]["commands"]]
        with path.open("rb") as stream:
            events = list(ClineSessionReader().read(stream, str(path)))
        commands = [e for e in events if isinstance(e, Command)]
        assert [c.command for c in commands] == ran[:len(commands)]
        results = [e for m in document["messages"] for b in m["content"]
                   if b.get("type") == "tool_result" and b["name"] == "run_commands"
                   for e in b["content"]]
        for command, entry in zip(commands, results, strict=False):
            failed = entry["result"].startswith("[Command exited with code ")
            assert (command.exit_code != 0) == failed, (path, command.command)


def test_a_cli_sessions_failed_request_ends_it_on_the_provider(tmp_path: Path) -> None:
    """The CLI's error message (``displayRole`` error) last: a provider error, the end; a
    failed command's code is its status; the manifest beside it is not a session."""
    folder = tmp_path / "sessions" / "1770000000000_abcde"
    folder.mkdir(parents=True)
    (folder / "1770000000000_abcde.json").write_text(json.dumps(
        {"version": 1, "session_id": "1770000000000_abcde", "status": "failed"}))
    path = folder / "1770000000000_abcde.messages.json"
    path.write_text(json.dumps({
        "version": 1, "agent": "lead", "sessionId": "1770000000000_abcde",
        "origin": {"source": "cli", "version": "3.0.65"}, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "go"}], "ts": 1770000000000},
            {"role": "assistant", "ts": 1770000001000, "content": [
                {"type": "tool_use", "id": "t1", "name": "run_commands",
                 "input": {"commands": ["ls", "missing-tool --x"]}}]},
            {"role": "user", "ts": 1770000002000, "content": [
                {"type": "tool_result", "tool_use_id": "t1", "name": "run_commands",
                 "content": [{"query": "ls", "result": "a.py\n", "success": True},
                             {"query": "missing-tool --x",
                              "result": "[Command exited with code 127]\nbash: missing-tool:"
                                        " command not found\n",
                              "error": "Command exited with code 127", "success": False}]}]},
            {"role": "assistant", "ts": 1770000003000, "content": [
                {"type": "text", "text": "Rate limit exceeded (status 429)"}],
             "metadata": {"displayOnly": True, "displayRole": "error"}}]}))
    result = triage([folder])
    assert [i.format for i in result.inputs] == ["cline-cli"]
    (session,) = result.sessions
    assert session.steps == 2
    assert {e.step: e.failure.code for e in session.failures if e.step is not None} == {
        1: "FC-CMD-001"}
    assert session.status == "provider_error"
    assert session.ended_failure is not None
    assert session.ended_failure.code.startswith("FC-PROV-")


def test_a_command_the_runs_abort_signal_stopped_is_cancelled(tmp_path: Path) -> None:
    """``Command was aborted`` is the CLI's own error when the run's abort signal stops a
    command (the person, or Cline's own stop after repeated failing calls, as the live lab's
    same-failure-five shows at its fifth call): a cancelled outcome, not the tool's defect."""
    path = tmp_path / "1770000000000_fghij.messages.json"
    call = {"type": "tool_use", "id": "t1", "name": "run_commands",
            "input": {"commands": ["python -m pytest -q"]}}
    path.write_text(json.dumps({
        "version": 1, "sessionId": "1770000000000_fghij",
        "origin": {"source": "cli", "version": "3.0.65"}, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {"role": "assistant", "content": [call]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "name": "run_commands",
                 "content": [{"query": "python -m pytest -q", "result": "",
                              "error": "Command failed: Command was aborted",
                              "success": False}]}]}]}))
    (session,) = triage([path]).sessions
    assert session.failures == []
    assert [(o.step, o.outcome.reason) for o in session.outcomes] == [
        (0, "the run was aborted")]
