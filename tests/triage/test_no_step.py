"""A file that looks like a format but holds no step of a session is a typed error of that
input (FC-DATA-002 naming the format), never an empty session of that format.

The inputs are the lab's real sessions cut down to the records that only open one: the
detection of each reader still matches them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from failcode.triage import triage
from tests.lab.runner import FIXTURES

if TYPE_CHECKING:
    from pathlib import Path


def _first_line(agent: str, pattern: str) -> str:
    (path,) = (FIXTURES / agent / "pytest-failure" / "session").rglob(pattern)
    return path.read_text().splitlines()[0] + "\n"


@pytest.mark.parametrize(("agent", "pattern", "name"), [
    ("claude-code", "*.jsonl", "s.jsonl"),
    ("codex", "rollout-*.jsonl", "rollout-x.jsonl"),
    ("gemini-cli", "session-*.json*", "session-x.jsonl"),
])
def test_a_session_header_alone_is_no_session(tmp_path: Path, agent: str, pattern: str,
                                              name: str) -> None:
    path = tmp_path / name
    path.write_text(_first_line(agent, pattern))
    result = triage([path])
    assert [(i.format, i.error_code) for i in result.inputs] == [(agent, "FC-DATA-002")]
    assert "holds no step" in (result.inputs[0].error_message or "")
    assert result.sessions == []


def test_a_trajectory_with_no_messages_is_no_session(tmp_path: Path) -> None:
    (lab,) = (FIXTURES / "mini-swe-agent" / "pytest-failure" / "session").rglob("*.traj.json")
    doc = json.loads(lab.read_text())
    doc["messages"], doc["info"] = [], {}
    path = tmp_path / "empty.traj.json"
    path.write_text(json.dumps(doc))
    result = triage([path])
    assert [(i.format, i.error_code) for i in result.inputs] == [
        ("mini-swe-agent", "FC-DATA-002")]


def test_a_session_that_only_answered_is_a_session(tmp_path: Path) -> None:
    """No step but an end (the agent answered without a tool): a session, not an error."""
    lines = (next((FIXTURES / "claude-code" / "pytest-failure" / "session").rglob("*.jsonl"))
             .read_text().splitlines())
    first_prompt = next(i for i, line in enumerate(lines) if json.loads(line).get("type") == "user")
    answer = next(line for line in reversed(lines) if json.loads(line).get("type") == "assistant")
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join([*lines[:first_prompt + 1], answer]) + "\n")
    (session,) = triage([path]).sessions
    assert (session.steps, session.status) == (0, "submitted")
