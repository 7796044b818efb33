"""OpenHands' notes are not the command's output, also when glued to its last line.

OpenHands appends ``[Python Interpreter: <path>]`` right after a command's output; when the
output has no final newline the note lands on the output's last line, followed by the shell
prompt and ``[Command finished with exit code N]`` on lines of their own.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from failcode.triage import triage

if TYPE_CHECKING:
    from pathlib import Path

INTERPRETER = "/opt/conda/envs/testbed/bin/python"


def completion_file(tmp_path: Path, command: str, output: str) -> Path:
    """An ``llm_completions`` file of one instance: one bash call and its result."""
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "You are OpenHands agent."}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Run the tests."}],
         "tool_calls": [{"index": 1, "id": "call_1", "type": "function",
                         "function": {"name": "execute_bash",
                                      "arguments": json.dumps({"command": command})}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "execute_bash",
         "content": [{"type": "text", "text": output}]},
    ]
    folder = tmp_path / "llm_completions" / "proj__proj-1"
    folder.mkdir(parents=True)
    path = folder / "litellm_proxy__model-1.json"
    path.write_text(json.dumps({"messages": messages, "response": {}, "args": [],
                                "kwargs": {}, "timestamp": 1.0, "cost": 0.0}))
    return path


def test_a_glued_interpreter_note_is_not_part_of_the_missing_module(tmp_path: Path) -> None:
    """`python -m pytest` without pytest: the module is `pytest`, a dependency error."""
    command = "python -m pytest tests/test_x.py -v"
    output = (f"{command}\r\n{INTERPRETER}: No module named pytest"
              f"[Python Interpreter: {INTERPRETER}]\n"
              "root@openhands-workspace:/workspace/proj # \n[Command finished with exit code 1]")
    result = triage([completion_file(tmp_path, command, output)])
    (session,) = result.sessions
    (event,) = session.failures
    assert event.failure.code == "FC-CMD-002"
    assert event.failure.params["module"] == "pytest"
    assert "Python Interpreter" not in (event.failure.detail or "")


def test_an_interpreter_note_on_its_own_line_is_dropped_too(tmp_path: Path) -> None:
    """The same note on a line of its own leaves the output's text as it was."""
    command = "python -m pytest tests/test_x.py -v"
    output = (f"{command}\r\n{INTERPRETER}: No module named pytest\n"
              f"[Python Interpreter: {INTERPRETER}]\n"
              "root@openhands-workspace:/workspace/proj # \n[Command finished with exit code 1]")
    result = triage([completion_file(tmp_path, command, output)])
    (event,) = result.sessions[0].failures
    assert event.failure.params["module"] == "pytest"
    assert "Python Interpreter" not in (event.failure.detail or "")


# The shape of OpenHands' editor crashing inside its own code (an IPython traceback through
# openhands_aci's editor), as a shared llm_completions session records it; shortened.
EDITOR_CRASH = (
    "-----------------------------------------------------------------\n"
    "RuntimeError                              Traceback (most recent call last)\n"
    "Cell In[1], line 1\n----> 1 print(file_editor(**{'path': '/workspace/r.py'}))\n\n"
    "File /openhands/poetry/openhands-ai-5O4_aCHf-py3.12/lib/python3.12/site-packages/"
    "openhands_aci/editor/editor.py:65, in OHEditor.__call__(self, command, path, **kwargs)\n"
    "     63 elif command == 'create':\n     64     if not file_text:\n"
    "---> 65         raise\n\nRuntimeError: No active exception to reraise")


def _editor_call(tmp_path: Path, arguments: dict[str, str], result: str) -> Path:
    messages = [
        {"role": "assistant", "content": "Write it.",
         "tool_calls": [{"id": "call_1", "type": "function",
                         "function": {"name": "str_replace_editor",
                                      "arguments": json.dumps(arguments)}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "str_replace_editor",
         "content": [{"type": "text", "text": result}]},
    ]
    folder = tmp_path / "llm_completions" / "proj__proj-2"
    folder.mkdir(parents=True)
    path = folder / "litellm_proxy__model-2.json"
    path.write_text(json.dumps({"messages": messages, "timestamp": 1.0}))
    return path


def test_the_editor_crashing_in_its_own_code_is_the_tools_defect(tmp_path: Path) -> None:
    """A traceback as an editor call's result is the tool's own crash, not a command."""
    path = _editor_call(tmp_path, {"command": "create", "path": "/workspace/r.py"},
                        EDITOR_CRASH)
    (session,) = triage([path]).sessions
    (entry,) = session.failures
    assert (entry.source, entry.failure.code, str(entry.failure.kind)) == (
        "tool", "FC-SYS-002", "tool_error")
    assert entry.failure.params["function"] == "str_replace_editor"


def test_an_editor_create_provides_the_module_it_writes(tmp_path: Path) -> None:
    """The editor's ``create`` of ``testapp/models.py`` is a Wrote of that file."""
    from failcode.triage.readers._openhands import _edits

    call = {"id": "c", "type": "function", "function": {
        "name": "str_replace_editor", "arguments": json.dumps(
            {"command": "create", "path": "/workspace/testapp/models.py", "file_text": "x = 1"})}}
    view = {"id": "v", "type": "function", "function": {
        "name": "str_replace_editor", "arguments": json.dumps(
            {"command": "view", "path": "/workspace/other.py"})}}
    assert [(w.path, w.text) for w in _edits([call, view])] == [
        ("/workspace/testapp/models.py", "x = 1")]
