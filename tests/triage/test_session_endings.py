"""How a session ended, where the format writes no end record (Claude Code, aider).

The rule, the same in every reader: a session whose last word is the agent's answer (no tool
call, prompt or tool result pending after it) ended ``submitted``; a provider error nothing
answered after ended it; Claude Code's ``max_turns_reached`` is the turn limit; anything else
is ``unknown``. The transcripts are the session lab's real runs (``tests/lab/fixtures/``), cut
where an interrupted session would stop.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from failcode.triage import triage
from tests.lab.runner import FIXTURES

if TYPE_CHECKING:
    from pathlib import Path


def _claude(scenario: str) -> list[str]:
    (path,) = (FIXTURES / "claude-code" / scenario / "session").rglob("*.jsonl")
    return path.read_text().splitlines()


def _aider(scenario: str) -> str:
    (path,) = (FIXTURES / "aider" / scenario / "session").rglob("*.md")
    return path.read_text()


def _status(path: Path) -> tuple[str, str | None]:
    (session,) = triage([path]).sessions
    return session.status, session.ended_failure.code if session.ended_failure else None


def _kinds(lines: list[str]) -> list[str]:
    return [json.loads(line).get("type", "") for line in lines]


def test_claude_code_final_answer_is_submitted(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(_claude("pytest-failure")) + "\n")
    assert _status(path) == ("submitted", None)


def test_claude_code_cut_after_a_tool_result_is_unknown(tmp_path: Path) -> None:
    lines = _claude("pytest-failure")
    last_result = max(i for i, kind in enumerate(_kinds(lines)) if kind == "user")
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines[:last_result + 1]) + "\n")
    assert _status(path) == ("unknown", None)


def test_claude_code_subagent_answer_does_not_end_the_session(tmp_path: Path) -> None:
    lines = _claude("pytest-failure")
    last_result = max(i for i, kind in enumerate(_kinds(lines)) if kind == "user")
    answer = json.loads(next(line for line in lines[last_result:]
                             if json.loads(line).get("type") == "assistant"))
    answer["isSidechain"] = True  # the same answer, written by a subagent
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join([*lines[:last_result + 1], json.dumps(answer)]) + "\n")
    assert _status(path) == ("unknown", None)


def test_claude_code_turn_limit() -> None:
    status, code = _status(FIXTURES / "claude-code" / "turn-limit" / "session")
    assert (status, code) == ("limit", "FC-LIFE-009")


def test_claude_code_provider_error_last_ends_it() -> None:
    status, code = _status(FIXTURES / "claude-code" / "provider-fatal-500" / "session")
    assert status == "provider_error"
    assert code is not None
    assert code.startswith("FC-PROV-")


def test_aider_reply_then_exit_is_submitted(tmp_path: Path) -> None:
    path = tmp_path / "h.md"
    path.write_text(_aider("pytest-failure"))
    assert _status(path) == ("submitted", None)


def test_aider_prompt_without_reply_is_unknown(tmp_path: Path) -> None:
    path = tmp_path / "h.md"
    path.write_text(_aider("pytest-failure") + "\n#### and now fix it  \n")
    assert _status(path) == ("unknown", None)


@pytest.mark.parametrize("scenario", ["provider-fatal-500", "provider-fatal-429",
                                      "provider-auth"])
def test_aider_provider_error_nothing_answered_ends_it(scenario: str, tmp_path: Path) -> None:
    path = tmp_path / "h.md"
    path.write_text(_aider(scenario))
    status, code = _status(path)
    assert status == "provider_error"
    assert code is not None
    assert code.startswith("FC-PROV-")


def test_aider_reply_after_a_retried_error_is_submitted(tmp_path: Path) -> None:
    path = tmp_path / "h.md"
    path.write_text(_aider("provider-overloaded-malformed"))
    assert _status(path)[0] == "submitted"
