"""OpenHands V1 conversation folders (software-agent-sdk): one session per folder.

The lab's OpenHands CLI 1.16.0 runs are the real shape (``tests/lab/fixtures/openhands/``);
the folders built here use the event kinds and fields the SDK writes (``ObservationEvent``
with ``observation.exit_code`` and ``metadata.suffix``, ``ConversationErrorEvent`` with
``code`` and ``detail``, ``base_state.json`` with ``execution_status``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from failcode.triage import triage
from failcode.triage.analysis._analyze import expand
from tests.lab.runner import FIXTURES

if TYPE_CHECKING:
    from pathlib import Path

    from failcode.triage import SessionResult


def _conversation(root: Path, events: list[dict[str, Any]], status: str = "finished") -> Path:
    folder = root / "conversations" / "4f1c"
    (folder / "events").mkdir(parents=True)
    (folder / "base_state.json").write_text(json.dumps({"id": "4f1c",
                                                        "execution_status": status}))
    for number, event in enumerate(events):
        base = {"id": f"e{number}", "timestamp": f"2025-10-01T10:00:{number:02d}",
                "source": "environment"}
        (folder / "events" / f"event-{number:05d}-e{number}.json").write_text(
            json.dumps({**base, **event}))
    return folder


def _terminal(call: str, command: str, code: int, text: str, suffix: str = "") -> list[
        dict[str, Any]]:
    action = {"kind": "ActionEvent", "source": "agent", "tool_name": "terminal",
              "tool_call_id": call, "action": {"command": command}}
    observation = {"kind": "ObservationEvent", "tool_name": "terminal", "tool_call_id": call,
                   "action_id": call, "observation": {
                       "content": [{"type": "text", "text": text}], "command": command,
                       "exit_code": code, "is_error": False, "timeout": False,
                       "metadata": {"exit_code": code, "suffix": suffix}}}
    return [action, observation]


def _one(path: Path) -> SessionResult:
    result = triage([path])
    assert [(i.format, i.error_code) for i in result.inputs] == [("openhands", None)]
    assert len(result.sessions) == 1
    return result.sessions[0]


def test_the_lab_conversation_folder_is_one_session() -> None:
    """The CLI's folder: one input, a missing program at step 0, submitted."""
    session = _one(FIXTURES / "openhands" / "missing-program" / "session")
    assert session.steps == 2
    assert [(e.step, e.failure.code) for e in session.failures] == [(0, "FC-CMD-001")]
    assert session.status == "submitted"


def test_walking_a_parent_finds_the_folder_not_its_files(tmp_path: Path) -> None:
    """A conversation folder under a walked folder is one input; its event files are not."""
    folder = _conversation(tmp_path, _terminal("c1", "ls", 0, "a"))
    (tmp_path / "notes.traj.json").write_text("{}")  # no session log: skipped, counted
    found = expand([tmp_path])
    assert [path for path, _ in found] == [folder]
    assert found.skipped == [str(tmp_path / "notes.traj.json")]


def test_exit_127_beside_is_error_false_is_a_failure(tmp_path: Path) -> None:
    """``exit_code`` is trusted; ``is_error: false`` beside it marks tool errors only."""
    folder = _conversation(tmp_path, _terminal(
        "c1", "cargo build", 127, "bash: cargo: command not found",
        "\n[The command completed with exit code 127.]"))
    session = _one(folder)
    assert [(e.step, e.failure.code) for e in session.failures] == [(0, "FC-CMD-001")]


def test_a_timed_out_note_on_exit_minus_one_is_a_timeout(tmp_path: Path) -> None:
    """Exit -1 is still running, unless the note says the command timed out at its limit."""
    folder = _conversation(tmp_path, [
        *_terminal("c1", "sleep 30", -1, "", "\n[The command timed out after 3.0 seconds. "
                                             "You may wait longer to see additional output]"),
        *_terminal("c2", "tail -f log", -1, "", "\n[The command has no new output after "
                                                "30 seconds.]")])
    session = _one(folder)
    assert [(e.step, e.failure.error_class) for e in session.failures] == [(0, "timeout")]


def test_the_exception_a_conversation_error_names_wins_over_its_code(tmp_path: Path) -> None:
    """``detail`` naming ``litellm.AuthenticationError`` ends the session on the provider."""
    folder = _conversation(tmp_path, [{
        "kind": "ConversationErrorEvent", "code": "LLMServiceUnavailableError",
        "detail": "litellm.AuthenticationError: OpenAIException - Invalid API key."}],
        status="error")
    session = _one(folder)
    assert session.status == "provider_error"
    assert session.ended_failure is not None
    assert session.ended_failure.code == "FC-PROV-001"


def test_the_state_file_says_how_a_quiet_conversation_ended(tmp_path: Path) -> None:
    """With no error event, ``execution_status`` in ``base_state.json`` is the end."""
    finished = _one(_conversation(tmp_path / "a", _terminal("c1", "ls", 0, "a")))
    stuck = _one(_conversation(tmp_path / "b", _terminal("c1", "ls", 0, "a"), status="stuck"))
    assert finished.status == "submitted"
    assert stuck.status == "unknown"
    assert stuck.ended_failure is not None


def test_an_events_folder_without_a_state_file_is_walked_file_by_file(tmp_path: Path) -> None:
    """Without ``base_state.json`` the folder is not a conversation: it is walked file by
    file, and a lone event file is no session log of any format (skipped, counted)."""
    folder = _conversation(tmp_path, _terminal("c1", "ls", 0, "a"))
    (folder / "base_state.json").unlink()
    found = expand([folder])
    assert len(found) + len(found.skipped) == 2
    assert list(found) == []
