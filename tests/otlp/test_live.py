"""Live: the pinned agents still export what the committed records hold, and the team path
holds what triage finds.

- Each agent docs/team.md sets up plays ``pytest-failure`` with its export pointed at the
  recording endpoint (:func:`tests.otlp.capture.capture`, as the fixtures were made); what the
  OTLP mapping reads of the new records (each record it reads by name, with its attribute
  names) and what it makes of them (the events, by name and code) must equal what it reads
  and makes of the committed ones. A new agent version that exports something else fails
  here, with the command that records it again.
- Claude Code plays ``mixed-session`` through a real ``failcode serve`` with its export and
  its hooks set up as docs/team.md says (:func:`tests.otlp.team.team_run`): every check of
  the scenario's ground truth that the channel carries passes on the service's events.

An agent that cannot be installed is a skip with the reason, and a failure under ``CI=true``
(``scripts/test.sh`` installs them).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

import pytest

from failcode.service._otlp import parse_otlp
from tests._needs import missing
from tests.lab.agents import agents
from tests.otlp.capture import FIXTURES, capture
from tests.otlp.team import TeamRun, serving, team_run

if TYPE_CHECKING:
    from pathlib import Path

    from failcode.events import Event

READ: Final = ("tool_result", "tool_call", "tool_decision", "api_error", "api_request",
               "api_response", "user_prompt", "conversation_starts", "session.start")
"""The record names the mapping reads (by their last part), and what it keys on."""


def _attributes(node: dict[str, Any]) -> tuple[str, ...]:
    return tuple(sorted(a["key"] for a in node.get("attributes", [])))


def _records(run: Path) -> list[tuple[str, dict[str, Any]]]:
    meta = json.loads((run / "meta.json").read_text())
    return [(entry["path"].rsplit("/", 1)[1], json.loads((run / entry["file"]).read_text()))
            for entry in meta["otlp"] if entry["status"] == 200
            and entry["path"].rsplit("/", 1)[1] in ("logs", "traces")]


def read_shape(run: Path) -> set[tuple[str, tuple[str, ...]]]:
    """Each record the mapping reads by name (a log record's ``event.name``), with the names
    of its attributes."""
    shape = set()
    for signal, body in _records(run):
        if signal != "logs":
            continue
        for resource in body.get("resourceLogs", []):
            for scope in resource.get("scopeLogs", []):
                for record in scope.get("logRecords", []):
                    keys = _attributes(record)
                    name = next((a["value"].get("stringValue") for a in
                                 record.get("attributes", []) if a["key"] == "event.name"),
                                None) or record.get("eventName") or ""
                    if name.endswith(READ):
                        shape.add((name, keys))
    return shape


def mapped(run: Path) -> list[tuple[str, str]]:
    """The events the mapping makes of a run's requests, each id once: (name, code or
    outcome type), sorted."""
    events: dict[str, Event] = {}
    for signal, body in _records(run):
        for event in parse_otlp(signal, json.dumps(body).encode(),  # type: ignore[arg-type]
                                content_type="application/json").events:
            events.setdefault(event.event_id, event)
    return sorted((e.event, e.failure.code if e.failure is not None
                   else str(e.outcome.__struct_config__.tag) if e.outcome is not None else "")
                  for e in events.values())


def _agent(name: str) -> Any:
    agent = agents()[name]
    if not agent.installed():
        missing(f"{name} is not installed (python -m tests.lab install)")
    return agent


@pytest.mark.parametrize("name", ["claude-code", "codex", "gemini-cli"])
def test_the_agent_exports_what_its_records_hold(name: str, tmp_path: Path) -> None:
    said = capture(_agent(name), "pytest-failure", tmp_path, None)
    fresh, committed = tmp_path / name / "pytest-failure", FIXTURES / name / "pytest-failure"
    assert (fresh / "meta.json").is_file(), said
    again = f"record them again: python -m tests.otlp.capture --agent {name}"
    assert read_shape(fresh) == read_shape(committed), again
    assert mapped(fresh) == mapped(committed), again


def test_the_team_path_holds_what_triage_finds(tmp_path: Path) -> None:
    _agent("claude-code")
    with serving(tmp_path) as served:
        done = team_run("claude-code", "mixed-session", served, tmp_path)
    service, triaged = TeamRun.passed(done.service), TeamRun.passed(done.triage)
    assert service[0] == service[1] > 0, [c for c in done.service if c.observable and not c.passed]
    assert triaged[0] == triaged[1]
