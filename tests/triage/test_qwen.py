"""Qwen Code chat recordings: the real files of the second corpus, where Qwen Code keeps them,
and how a session ends (rules in ``failcode.triage.readers._qwen``; the steps are checked against
Qwen Code's own loader in ``tests/triage/oracles/test_qwen_oracle.py``)."""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING, Any

import pytest

from failcode.triage import triage
from failcode.triage.analysis._analyze import expand
from tests.triage._data import sessions_2_dir

if TYPE_CHECKING:
    from pathlib import Path

_ID = "5c7e5311-0000-4000-8000-000000000002"


def _qwen_chats() -> list[Path]:
    return sorted((sessions_2_dir() / "qwen-code").rglob("chats/*.jsonl"))


def _record(uuid: str, parent: str | None, kind: str, **extra: Any) -> dict[str, Any]:
    return {"uuid": uuid, "parentUuid": parent, "sessionId": _ID,
            "timestamp": "2026-01-01T00:00:00.000Z", "type": kind, "cwd": "/p",
            "version": "0.24.4", **extra}


def _telemetry(uuid: str, parent: str, name: str, **event: Any) -> dict[str, Any]:
    return _record(uuid, parent, "system", subtype="ui_telemetry",
                   systemPayload={"uiEvent": {"event.name": name, **event}})


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    return path


_PROMPT = _record("u1", None, "user", message={"role": "user", "parts": [{"text": "go"}]})


def test_every_real_qwen_chat_is_read_without_an_input_error() -> None:
    """The corpus's Qwen Code 0.5.0 and 0.9.1 chats are read as qwen-code sessions."""
    result = triage(_qwen_chats())
    assert [(i.format, i.error_code) for i in result.inputs] == [("qwen-code", None)] * 4
    assert sum(s.steps for s in result.sessions) == 141
    assert {s.agent_version for s in result.sessions} == {"0.5.0", "0.9.1"}


def test_a_declined_edit_in_a_real_chat_is_cancelled_not_failed() -> None:
    """The person's "User did not allow tool call" on an edit is a cancelled outcome."""
    result = triage(_qwen_chats())
    cancelled = [o for s in result.sessions for o in s.outcomes
                 if "declined by the user" in str(o.outcome)]
    assert len(cancelled) == 1
    failing_steps = {(s.session, f.step) for s in result.sessions for f in s.failures}
    assert all((s.session, o.step) not in failing_steps
               for s in result.sessions for o in s.outcomes)


def test_a_request_qwen_code_gave_up_on_ends_the_session(tmp_path: Path) -> None:
    """An ``api_error`` with no response after it is the provider error that ended it."""
    path = _write(tmp_path / f"{_ID}.jsonl", [
        _PROMPT, _telemetry("t1", "u1", "qwen-code.api_error", status_code=429,
                            error="rate limited", error_type="RateLimitError")])
    (session,) = triage([path]).sessions
    assert session.status == "provider_error"
    assert [f.failure.code for f in session.failures] == ["FC-PROV-003"]


def test_a_retried_request_is_no_failure(tmp_path: Path) -> None:
    """An ``api_error`` followed by an ``api_response`` was retried: no failure."""
    path = _write(tmp_path / f"{_ID}.jsonl", [
        _PROMPT, _telemetry("t1", "u1", "qwen-code.api_error", status_code=500, error="x"),
        _telemetry("t2", "t1", "qwen-code.api_response", status_code=200),
        _record("a1", "t2", "assistant", model="qwen3-coder",
                message={"role": "model", "parts": [{"text": "done"}]})])
    (session,) = triage([path]).sessions
    assert session.failures == []
    assert session.status == "submitted"


def test_walking_a_home_finds_qwen_chats_and_home_looks_there(tmp_path: Path) -> None:
    """``~/.qwen/projects/<project>/chats/*.jsonl`` is walked; ``--home`` looks in
    ``$QWEN_RUNTIME_DIR`` (else ``$QWEN_HOME``, else ``~/.qwen``)."""
    from failcode.triage._discover import default_locations, home_logs

    home = tmp_path / "home"
    chats = home / ".qwen" / "projects" / "-p" / "chats"
    chats.mkdir(parents=True)
    chat = chats / _qwen_chats()[0].name
    shutil.copy(_qwen_chats()[0], chat)
    (home / ".qwen" / "settings.json").write_text("{}")  # its settings: not a session
    assert [p for p, _ in expand([home])] == [chat]
    found, _ = home_logs(default_locations(env={}, home=home, cwd=home))
    assert found == [chat]
    moved = tmp_path / "runtime"
    shutil.move(home / ".qwen", moved)
    found, _ = home_logs(default_locations(env={"QWEN_RUNTIME_DIR": str(moved)}, home=home,
                                           cwd=home))
    assert found == [moved / "projects" / "-p" / "chats" / chat.name]


def _shell_chat(path: Path, output: str, code: str) -> Path:
    call = {"functionCall": {"id": "c1", "name": "run_shell_command",
                             "args": {"command": "npm start", "is_background": False}}}
    text = (f"Command: npm start\nDirectory: (root)\nOutput: {output}\nError: (none)\n"
            f"Exit Code: {code}\nSignal: (none)\nBackground PIDs: (none)\n"
            "Process Group PGID: (none)")
    response = {"functionResponse": {"id": "c1", "name": "run_shell_command",
                                     "response": {"output": text}}}
    return _write(path, [
        _PROMPT, _record("a1", "u1", "assistant", message={"role": "model", "parts": [call]}),
        _record("r1", "a1", "tool_result", message={"role": "user", "parts": [response]},
                toolCallResult={"callId": "c1", "status": "success"})])


@pytest.mark.parametrize(("output", "code", "stopped"), [
    ("server running\n^C^C", "3221225786", True),  # Windows' STATUS_CONTROL_C_EXIT
    ("server running", "-1073741510", True),  # the same, signed
    ("server running\n^C", "130", True),  # SIGINT after the terminal's echo
    ("build failed\n^C", "1", False),  # a ^C echo does not make a failure an interrupt
])
def test_a_command_the_person_stopped_with_ctrl_c_is_cancelled(
        tmp_path: Path, output: str, code: str, stopped: bool) -> None:
    """Ctrl+C in the tool's terminal is the person's interrupt, never the command failing."""
    (session,) = triage([_shell_chat(tmp_path / f"{_ID}.jsonl", output, code)]).sessions
    assert (session.failures == []) is stopped
    assert bool(session.outcomes) is stopped


def test_the_real_chat_s_interrupted_dev_server_is_cancelled() -> None:
    """The corpus's ``npx docusaurus start`` stopped with ``^C^C`` (exit 0xC000013A)."""
    (path,) = [p for p in _qwen_chats() if p.name.startswith("c85afb93")]
    (session,) = triage([path]).sessions
    assert 114 not in {f.step for f in session.failures}
    assert 114 in {o.step for o in session.outcomes}
