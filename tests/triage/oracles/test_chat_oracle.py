"""AG2's and AutoGen's own executors and tools as the oracle for the multi-agent chat readers.

``chat_frameworks.py`` runs, with each framework's pinned install (``tests/lab/oracles.toml``),
real code blocks through the framework's ``LocalCommandLineCodeExecutor`` (a failing status,
a missing module, a success, AG2's refusal of a language it cannot run and its timeout) and
real functions through its tool machinery (one that raises, one that does not exist, AG2's
unreadable arguments). Each answer, put in a chat as the framework keeps it, is read by
failcode: the status the executor ran with, the agent that wrote the block, what the tool's
answer means. AutoGen's message ``type`` names are the reader's list, so a new message class
fails here.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from failcode.triage import SessionResult, triage
from failcode.triage.readers import _chat
from tests._needs import missing
from tests.lab.oracles import oracles
from tests.triage.oracles._lab_python import HERE

if TYPE_CHECKING:
    from pathlib import Path

FENCE = "`" * 3


def _run(name: str, which: str, work: Path) -> dict[str, Any]:
    oracle = oracles()[name]
    if not oracle.installed():
        missing(f"the {name} oracle is not installed (python -m tests.lab install)")
    out: dict[str, Any] = json.loads(oracle.run(HERE / "chat_frameworks.py", which, str(work)))
    return out


@pytest.fixture(scope="module")
def ag2(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run("ag2", "ag2", tmp_path_factory.mktemp("ag2"))


@pytest.fixture(scope="module")
def autogen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run("autogen-agentchat", "autogen", tmp_path_factory.mktemp("autogen"))


def _read(tmp_path: Path, document: object) -> SessionResult:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(document))
    result = triage([path])
    assert result.ok, [item.error_message for item in result.inputs]
    (session,) = result.sessions
    return session


def _status(session: SessionResult) -> object:
    (entry,) = session.failures
    return entry.failure.params.get("exit_code", entry.failure.metadata.get("exit_code"))


def _ag2_chat(block: dict[str, Any], reply: str) -> list[dict[str, Any]]:
    """A two-agent AG2 chat as ``ChatResult.chat_history`` keeps it: the task, the coder's
    block, the executor's reply."""
    return [{"content": "Do the task.", "role": "assistant", "name": "user_proxy"},
            {"content": f"{FENCE}{block['language']}\n{block['code']}\n{FENCE}", "role": "user",
             "name": "coder"},
            {"content": reply, "role": "assistant", "name": "user_proxy"}]


# -- AG2 ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("case", "status"), [("exit-3", 3), ("missing-module", 1)])
def test_ag2_failing_block_is_the_coder_s_step_with_its_status(
        ag2: dict[str, Any], tmp_path: Path, case: str, status: int) -> None:
    """A block AG2's executor ran and that failed: a failure of the coder with the status the
    command exited with."""
    block = ag2["code"][case]
    session = _read(tmp_path, _ag2_chat(block, block["reply"]))
    assert session.format == "ag2-chat"
    assert _status(session) == status
    assert [entry.actor for entry in session.failures] == ["coder"]


def test_ag2_succeeding_block_is_a_quiet_step(ag2: dict[str, Any], tmp_path: Path) -> None:
    """A block that exited 0 is a step with no failure."""
    block = ag2["code"]["succeeds"]
    session = _read(tmp_path, _ag2_chat(block, block["reply"]))
    assert (session.steps, session.failures, session.outcomes) == (1, [], [])


def test_ag2_refused_language_is_a_rejected_action(ag2: dict[str, Any], tmp_path: Path) -> None:
    """AG2's executor refusing a language it cannot run: the coder's rejected action."""
    block = ag2["code"]["refused"]
    session = _read(tmp_path, _ag2_chat(block, block["reply"]))
    assert session.failures == []
    assert [(o.outcome.__struct_config__.tag, o.actor) for o in session.outcomes] == [
        ("rejected_action", "coder")]


def test_ag2_timeout_is_a_timeout(ag2: dict[str, Any], tmp_path: Path) -> None:
    """AG2's executor stopping a block at its time limit: a timeout, not exit 124."""
    block = ag2["code"]["timeout"]
    session = _read(tmp_path, _ag2_chat(block, block["reply"]))
    (entry,) = session.failures
    assert entry.failure.error_class == "timeout"


def _ag2_tool_chat(content: str, arguments: str) -> list[dict[str, Any]]:
    """An AG2 chat of two agents in which ``analyst`` calls a tool ``user`` executes."""
    return [{"content": "Read the config.", "role": "assistant", "name": "user"},
            {"tool_calls": [{"id": "call_1", "type": "function",
                             "function": {"name": "read_config", "arguments": arguments}}],
             "content": None, "role": "assistant"},
            {"content": content, "role": "tool", "name": "user", "tool_responses": [
                {"tool_call_id": "call_1", "role": "tool", "content": content}]},
            {"content": "Done. TERMINATE", "role": "user", "name": "analyst"}]


def test_ag2_function_that_raised_is_a_tool_failure_of_the_caller(
        ag2: dict[str, Any], tmp_path: Path) -> None:
    """``execute_function`` of a function that raised FileNotFoundError: that OS error, as a
    failure of the agent that called it."""
    session = _read(tmp_path, _ag2_tool_chat(ag2["tools"]["raises"], '{"path": "x"}'))
    (entry,) = session.failures
    assert entry.source == "tool"
    assert entry.actor == "analyst"
    assert entry.failure.error_class == "file_not_found"


@pytest.mark.parametrize("case", ["no-such-function", "bad-arguments"])
def test_ag2_call_that_cannot_run_is_a_rejected_action(
        ag2: dict[str, Any], tmp_path: Path, case: str) -> None:
    """A function that does not exist, or arguments that are not JSON: a rejected action."""
    session = _read(tmp_path, _ag2_tool_chat(ag2["tools"][case], "{path: "))
    assert session.failures == []
    assert [o.outcome.__struct_config__.tag for o in session.outcomes] == ["rejected_action"]


# -- AutoGen ------------------------------------------------------------------------------------

def test_autogen_message_types_are_the_reader_s(autogen: dict[str, Any]) -> None:
    """Every message ``type`` autogen_agentchat declares is one detection knows."""
    assert set(autogen["types"]) == _chat._AUTOGEN_TYPES


def _autogen_team(block: dict[str, Any], reply: str) -> dict[str, Any]:
    """A TaskResult: the task, the assistant's block, the CodeExecutorAgent's reply."""
    def message(index: int, source: str, content: str) -> dict[str, Any]:
        return {"id": f"msg-{index}", "source": source, "models_usage": None, "metadata": {},
                "created_at": f"2026-01-01T00:00:0{index}Z", "content": content,
                "type": "TextMessage"}

    return {"messages": [
        message(0, "user", "Do the task."),
        message(1, "assistant", f"{FENCE}{block['language']}\n{block['code']}\n{FENCE}"),
        message(2, "runner", reply)], "stop_reason": None}


@pytest.mark.parametrize(("case", "status"), [("exit-3", 3), ("missing-module", 1)])
def test_autogen_failing_block_is_the_writer_s_step_with_its_status(
        autogen: dict[str, Any], tmp_path: Path, case: str, status: int) -> None:
    """CodeExecutorAgent's reply to a block that failed (with output or without): a failure
    of the agent that wrote the block, with the status the executor reports."""
    block = autogen["code"][case]
    assert block["exit_code"] == status
    session = _read(tmp_path, _autogen_team(block, block["output"]))
    assert session.format == "autogen-messages"
    assert _status(session) == status
    assert [entry.actor for entry in session.failures] == ["assistant"]


def test_autogen_succeeding_block_is_a_quiet_step(
        autogen: dict[str, Any], tmp_path: Path) -> None:
    """The output alone (exit 0): a step with no failure."""
    block = autogen["code"]["succeeds"]
    session = _read(tmp_path, _autogen_team(block, block["output"]))
    assert (session.steps, session.failures) == (1, [])


def _autogen_tool(result: dict[str, Any]) -> dict[str, Any]:
    call = {"id": "call_1", "name": "read_config", "arguments": '{"path": "x"}'}
    answer = {"content": result["content"], "name": "read_config", "call_id": "call_1",
              "is_error": result["is_error"]}
    return {"messages": [
        {"source": "user", "content": "Read it.", "type": "TextMessage"},
        {"source": "assistant", "content": [call], "type": "ToolCallRequestEvent"},
        {"source": "assistant", "content": [answer], "type": "ToolCallExecutionEvent"}],
        "stop_reason": "Text 'TERMINATE' mentioned"}


def test_autogen_tool_that_raised_is_a_tool_failure(
        autogen: dict[str, Any], tmp_path: Path) -> None:
    """StaticWorkbench's answer for a function that raised (``is_error``): a failure of the
    calling agent."""
    result = autogen["tools"]["raises"]
    assert result["is_error"] is True
    session = _read(tmp_path, _autogen_tool(result))
    (entry,) = session.failures
    assert (entry.source, entry.actor) == ("tool", "assistant")


def test_autogen_tool_that_does_not_exist_is_a_rejected_action(
        autogen: dict[str, Any], tmp_path: Path) -> None:
    """StaticWorkbench's answer for a tool it does not have: a rejected action."""
    session = _read(tmp_path, _autogen_tool(autogen["tools"]["no-such-function"]))
    assert session.failures == []
    assert [o.outcome.__struct_config__.tag for o in session.outcomes] == ["rejected_action"]
