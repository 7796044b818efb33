"""The aider chat-history and OpenHands harness-log rules, on files written the way the tools
write them.

Aider's ``InputOutput`` writes an input as ``\\n#### `` plus its lines joined by
``  \\n#### `` (an empty input as ``<blank>``), its own output as a blockquote whose first line
only is quoted (older versions) and the model's reply as plain text; ``Tokens: N sent, M
received`` follows a model call. The OpenHands harness logs ``DATE TIME,ms - LEVEL - message``
lines, the agent controller's state changes among them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from failcode.triage import triage

if TYPE_CHECKING:
    from pathlib import Path

    from failcode.triage import SessionResult

_HEAD = ("# aider chat started at 2024-08-09 10:00:00\n\n> /usr/bin/aider  \n"
         "> Aider v0.48.2-dev  \n> Git repo: .git with 30 files  \n")
_PYTEST_FAILED = ("============ test session starts ============\ncollected 2 items\n\n"
                  "tests/test_a.py .F\n\n=========== FAILURES ===========\n"
                  "E   assert 1 == 2\n===== 1 failed, 1 passed in 0.12s =====")


def _input(text: str) -> str:
    """An input as aider's ``user_input`` writes it (``linebreak=True``)."""
    lines = text.splitlines() or ["<blank>"]
    return "\n#### " + "  \n#### ".join(lines) + "  \n"


def _tool(text: str) -> str:
    """aider's own output as older aider wrote it: the first line quoted."""
    return "> " + text.strip() + "  \n"


def _reply(text: str, received: int = 120) -> str:
    return f"\n{text.strip()}\n\n" + _tool(f"Tokens: 1,234 sent, {received} received.")


def _history(tmp_path: Path, *parts: str) -> SessionResult:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(_HEAD + "".join(parts), encoding="utf-8")
    result = triage([path])
    assert [(i.format, i.error_code) for i in result.inputs] == [("aider", None)]
    (session,) = result.sessions
    return session


def test_an_input_of_several_lines_is_one_step(tmp_path: Path) -> None:
    session = _history(
        tmp_path, _input("fix this failure:\n>   assert x\nE   AssertionError: 1 != 2"),
        _reply("Here is the fix."), _input("/test pytest tests/test_a.py"),
        _tool(_PYTEST_FAILED), _tool("Added 9 lines of output to the chat."),
        _reply("The test still fails because..."))
    assert session.steps == 2
    assert {e.step: str(e.failure.kind) for e in session.failures} == {1: "test_error"}
    assert session.status == "submitted"


def test_an_empty_input_is_a_step_but_no_prompt(tmp_path: Path) -> None:
    session = _history(tmp_path, _input("add a docstring"), _reply("Done."), _input(""))
    assert session.steps == 2
    assert session.status == "submitted"


def test_a_prompt_left_unanswered_ends_unknown(tmp_path: Path) -> None:
    session = _history(tmp_path, _input("add a docstring"), _reply("Done."),
                       _input("now the tests"))
    assert session.status == "unknown"


def test_output_after_a_command_is_no_reply_of_the_model(tmp_path: Path) -> None:
    """``/run`` output (its later lines unquoted) and the person's answer to aider's question
    are not the model's answer."""
    session = _history(tmp_path, _input("/run ls"), _tool("README.md\nsetup.py\naider"),
                       _tool("Add the output to the chat?\n(y/n/instructions) n"))
    assert session.status == "unknown"


def test_a_command_whose_output_the_model_answered_ends_submitted(tmp_path: Path) -> None:
    session = _history(tmp_path, _input("/run pip-compile requirements.in"),
                       _tool("Traceback (most recent call last):\n  File \"x\", line 1\n"
                             "ValueError: no"),
                       _tool("Add the output to the chat?\n(y/n/instructions) y"),
                       _reply("The resolver cannot find a version..."))
    assert session.status == "submitted"
    assert [str(e.failure.kind) for e in session.failures] == ["command_error"]


def test_a_refused_edit_that_got_no_answer_ends_unknown(tmp_path: Path) -> None:
    session = _history(
        tmp_path, _input("rename foo"), "\nfoo.py\n<<<<<<< SEARCH\nfoo\n=======\nbar\n"
        ">>>>>>> REPLACE\n\n", _tool("The LLM did not conform to the edit format."),
        _tool("# 1 SEARCH/REPLACE block failed to match!"),
        _tool("Tokens: 2,000 sent, 0 received."))
    assert session.status == "unknown"
    assert [e.step for e in session.outcomes] == [0]


def test_older_aider_s_lint_request_logged_as_an_input_is_a_lint_failure(
        tmp_path: Path) -> None:
    lint = ("# Fix any errors below, if possible.\n\n## Running: flake8 aider/repomap.py\n\n"
            "aider/repomap.py:22:1: E402 module level import not at top of file\n\n"
            "## See relevant lines below marked with \u2588.")
    session = _history(tmp_path, _input("add caching"), _reply("Added."), _input(lint),
                       _reply("Moved the import."))
    assert {e.step: str(e.failure.kind) for e in session.failures} == {
        1: "static_analysis_error"}
    assert "E402" in (session.failures[0].failure.detail or "")


def test_a_shell_syntax_error_is_a_failed_command(tmp_path: Path) -> None:
    session = _history(tmp_path, _input("!!"), _tool(
        "/bin/sh: -c: line 0: syntax error near unexpected token `newline'\n/bin/sh: -c: "
        "line 0: `!'"))
    assert [str(e.failure.kind) for e in session.failures] == ["command_error"]


def test_a_provider_error_after_a_failed_test_follows_the_test(tmp_path: Path) -> None:
    """``/test`` sends its failure to the model; the provider failing then is the second
    failure of the step, in the order the log has them."""
    session = _history(
        tmp_path, _input("/test pytest"), _tool(_PYTEST_FAILED),
        _tool("Added 9 lines of output to the chat."),
        _tool("litellm.InternalServerError: AnthropicException - Server disconnected."),
        _tool("Retrying in 0.2 seconds..."))
    assert [(e.step, str(e.failure.kind)) for e in session.failures] == [
        (0, "test_error"), (0, "provider_error")]
    assert session.status == "provider_error"


# -- the OpenHands harness log ---------------------------------------------------------------
def _log(tmp_path: Path, *lines: str) -> list[SessionResult]:
    path = tmp_path / "instance_x.log"
    stamped = [line if line.startswith("-") else f"2024-12-04 12:00:{i:02d},000 - {line}"
               for i, line in enumerate(lines)]
    path.write_text("\n".join(stamped) + "\n", encoding="utf-8")
    return [s for s in triage([path]).sessions if s.session == "proj__proj-1"]


_START = "INFO - Logging LLM completions for instance proj__proj-1 to outputs/proj__proj-1"
_RUNTIME_DOWN = "ERROR - [runtime abc] Unable to start runtime: 400 Client Error"
_RETRY = "----------[The above error occurred. Retrying... (attempt 1 of 5)]----------"


def _state(old: str, new: str) -> str:
    return (f"INFO - [Agent Controller default] Setting agent(CodeActAgent) state from "
            f"AgentState.{old} to AgentState.{new}")


def test_a_finished_agent_after_a_retried_attempt_ended_submitted(tmp_path: Path) -> None:
    (session,) = _log(tmp_path, _START, "INFO - OpenHands runtime starting", _RUNTIME_DOWN,
                      _RETRY, _START, _state("LOADING", "RUNNING"),
                      _state("RUNNING", "FINISHED"))
    assert session.status == "submitted"
    assert [(e.step, str(e.failure.kind)) for e in session.failures] == [(0, "system_error")]


def test_the_iteration_limit_ends_the_session_and_is_no_harness_failure(
        tmp_path: Path) -> None:
    (session,) = _log(tmp_path, _START, "INFO - OpenHands runtime starting",
                      _state("RUNNING", "ERROR"),
                      "ERROR - Agent reached maximum iteration in headless mode. Current "
                      "iteration: 50.00, max iteration: 50.00")
    assert session.status == "limit"
    assert [(e.step, e.failure.code) for e in session.failures] == [(None, "FC-LIFE-009")]


def test_a_retry_after_the_agent_finished_starts_over(tmp_path: Path) -> None:
    (session,) = _log(tmp_path, _START, "INFO - OpenHands runtime starting",
                      _state("RUNNING", "FINISHED"), _RUNTIME_DOWN, _RETRY, _START)
    assert session.status == "unknown"
