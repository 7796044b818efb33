"""A session reported by both an agent's hooks and its OpenTelemetry export is stored once,
from the better record of each call, on both backends.

The inputs are the lab's recordings of the same scenario: the hook payloads the pinned agent
sent (``tests/live/fixtures``), run through the real ``failcode hook`` with ``FAILCODE_URL``
and ``FAILCODE_KEY``, and the OTLP requests it exported (``tests/otlp/fixtures``), posted as
they came. Both name the run's session alike (the recordings normalize it). The hook of the
session's start runs first, as it does in the agent, and the export's requests follow.

- Claude Code's hooks see each call's exit status and output: the service drops the export's
  records of the session's calls (its ``Shell command failed`` of unknown cause) and keeps the
  hooks' failure, classified and at its step; the session ends as the ``Stop`` hook says.
- Codex's hooks see no exit status: the export's records of calls are kept, and the hook's
  report of a call the export reported first gives it its step (nothing else changes).
- Without the hooks the export's records are the session's.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import pytest

from failcode.events import Event
from failcode.service._projects import ProjectStores
from failcode.store import open_store
from tests.conftest import BACKENDS
from tests.live.test_hook import hook, log_of, recorded
from tests.otlp.capture import FIXTURES as EXPORTS
from tests.service.conftest import Served, failcode, running

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture(scope="module", params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
            ) -> Iterator[Served]:
    with running(request.param, tmp_path_factory.mktemp(f"hooked-{request.param}")) as served:
        yield served


def _project(served: Served, name: str) -> str:
    """A fresh project and its ingest key."""
    failcode("project", "create", name, store=served.store)
    return failcode("token", "create", "--project", name, "--scope", "ingest",
                    store=served.store).splitlines()[-1]


def _export(served: Served, agent: str, scenario: str, key: str) -> None:
    run = EXPORTS / agent / scenario
    meta = json.loads((run / "meta.json").read_text())
    for entry in meta["otlp"]:
        signal = entry["path"].rsplit("/", 1)[1]
        if signal in ("logs", "traces"):
            status, _headers, body = served.request(
                "POST", f"/v1/{signal}", key=key, body=(run / entry["file"]).read_bytes(),
                headers={"Content-Type": "application/json"})
            assert status == 200, body


def _events(served: Served, project: str, done: Any) -> list[Event]:
    """The project's stored events, in time order, once ``done(events)`` holds (the hooks'
    sender delivers on its own) or a minute passed."""
    with open_store(served.store, read_only=True) as control:
        url = ProjectStores(control, served.store).url(project)
    deadline = time.monotonic() + 60
    events: list[Event] = []
    while time.monotonic() < deadline:
        with open_store(url, read_only=True) as store:
            events = [Event.from_json(body) for (body,) in store.fetch(
                "SELECT body FROM events ORDER BY ts_us, event_id")]
        if done(events):
            break
        time.sleep(0.2)
    return events


def _run(served: Served, agent: str, scenario: str, project: str, tmp_path: Path, *,
         hooks: bool, done: Any) -> list[Event]:
    key = _project(served, project)
    env = {"FAILCODE_URL": served.url, "FAILCODE_KEY": key}
    state = tmp_path / project
    calls = recorded(agent, scenario)
    if hooks:  # the session's start, before the agent does anything
        assert hook(agent, *calls[0], state=state, env=env).returncode == 0
    _export(served, agent, scenario, key)
    if hooks:
        for event, data in calls[1:]:
            assert hook(agent, event, data, state=state, env=env).returncode == 0
    events = _events(served, project, done)
    assert done(events), (log_of(state), [(e.event, e.step, e.source) for e in events])
    return events


def _failures(events: list[Event]) -> list[tuple[str, int | None, str | None]]:
    return [(e.failure.code, e.step, e.source) for e in events if e.failure is not None]


def _ended(events: list[Event]) -> bool:
    return any(e.event == "session.ended" for e in events)


def test_claude_codes_hooks_are_the_record_of_its_calls(service: Served,
                                                         tmp_path: Path) -> None:
    with_hooks = _run(service, "claude-code", "pytest-failure", "cc-hooks", tmp_path,
                      hooks=True, done=_ended)
    assert _failures(with_hooks) == [("FC-TEST-003", 1, "claude-code hook")]
    assert [e.event for e in with_hooks if e.outcome is not None] == [
        "session.started", "session.started", "session.ended"]
    ended = next(e.outcome for e in with_hooks if e.event == "session.ended")
    assert getattr(ended, "status", None) == "submitted"
    export_only = _run(service, "claude-code", "pytest-failure", "cc-export", tmp_path,
                       hooks=False, done=lambda events: bool(_failures(events)))
    assert _failures(export_only) == [("FC-SYS-001", None, "otlp")]


def test_codex_hooks_give_the_exports_records_their_steps(service: Served,
                                                           tmp_path: Path) -> None:
    events = _run(service, "codex", "pytest-failure", "codex-hooks", tmp_path, hooks=True,
                  done=lambda found: _ended(found) and all(
                      step is not None for _c, step, _s in _failures(found)))
    # the export's record (its exit status and output), stored first, at the hook's step
    assert _failures(events) == [("FC-TEST-003", 1, "otlp")]
