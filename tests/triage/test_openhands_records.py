"""OpenHands ``output.jsonl`` records of every writer, and harness logs that end at the limit.

Records: OpenHands' evaluation harness (v0 ``EvalOutput``) and ``OpenHands/benchmarks`` (V1,
the same fields: ``instance_id``, ``test_result``, ``instruction``, ``metadata``, ``history``,
``metrics``, ``error``) write ``test_result`` (the ``git_patch``) before ``history``, so a long
patch pushes ``history`` past the bytes detection sees; the resolver (``ResolverOutput``:
``issue``, ``issue_type``, ``instruction``, ``base_commit``, ``git_patch``, ``history``,
``success``, ``error``...) writes no ``instance_id``. The events in the records built here are
real: a lab conversation the OpenHands CLI wrote (V1) and a v0 event array from OpenHands' own
repository (the first corpus), wrapped in each writer's record fields.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from failcode.triage import triage
from tests.lab.runner import FIXTURES
from tests.triage._data import sessions_dir

if TYPE_CHECKING:
    from pathlib import Path

    from failcode.triage import SessionResult

_PATCH = "diff --git a/x.py b/x.py\n" + "+print('x')\n" * 20_000  # past detection's head


def _v1_events(scenario: str) -> list[dict[str, Any]]:
    folder = next((FIXTURES / "openhands" / scenario / "session").rglob("events"))
    return [json.loads(p.read_text()) for p in sorted(folder.glob("event-*.json"))]


def _v0_events() -> list[dict[str, Any]]:
    path = sessions_dir() / "openhands" / "runtime_trajs" / "basic_gui_mode.json"
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def _sessions(path: Path) -> list[SessionResult]:
    result = triage([path])
    assert [(i.format, i.error_code) for i in result.inputs] == [("openhands", None)]
    return result.sessions


def _failures(session: SessionResult) -> list[tuple[int | None, str]]:
    return [(e.step, e.failure.code) for e in session.failures]


def test_an_evaluation_record_with_a_long_patch_is_read(tmp_path: Path) -> None:
    """V1 benchmarks' record: the same steps and failures as the conversation folder."""
    folder = FIXTURES / "openhands" / "ruff-lint" / "session"
    record = {"instance_id": "demo__demo-1", "test_result": {"git_patch": _PATCH},
              "instruction": "Fix the lint.", "metadata": {"llm": {"model": "stub-model"}},
              "history": _v1_events("ruff-lint"), "metrics": {}, "error": None}
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(record) + "\n")
    [session] = _sessions(path)
    [direct] = _sessions(folder)
    assert session.session == "demo__demo-1"
    assert session.model == "stub-model"
    assert session.steps == direct.steps >= 1
    assert _failures(session) == _failures(direct) != []


def test_a_resolver_record_is_read_and_named_by_its_issue(tmp_path: Path) -> None:
    events = _v0_events()
    array = tmp_path / "events.json"
    array.write_text(json.dumps(events))
    record = {"issue": {"owner": "octo", "repo": "demo", "number": 7, "title": "t",
                        "body": "b"},
              "issue_type": "issue", "instruction": "Resolve the issue.",
              "base_commit": "0" * 40, "git_patch": _PATCH, "history": events,
              "metrics": None, "success": True, "comment_success": None,
              "result_explanation": "done", "error": None}
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(record) + "\n" + json.dumps(
        {**record, "issue": {**record["issue"], "number": 8}}) + "\n")
    sessions = _sessions(path)
    [direct] = _sessions(array)
    assert [s.session for s in sessions] == ["octo/demo#7", "octo/demo#8"]
    assert direct.steps > 0
    assert {s.steps for s in sessions} == {direct.steps}
    assert _failures(sessions[0]) == _failures(direct)


def test_a_harness_log_that_ends_at_the_iteration_limit_holds_its_attempt(
        tmp_path: Path) -> None:
    """The attempt that ran the agent to its limit is a step: a log of that attempt alone
    (the real log from its last retry banner on) is one step ended at the limit."""
    log = (sessions_dir() / "openhands" / "swebench_verified_claude35_run1" / "infer_logs"
           / "instance_django__django-10097.log")
    lines = log.read_text().splitlines(keepends=True)
    last_banner = max(i for i, line in enumerate(lines) if "Retrying..." in line)
    first_line = next(i for i in range(last_banner + 1, len(lines))
                      if lines[i][:4].isdigit())
    cut = tmp_path / "instance_django__django-10097.log"
    cut.write_text("".join(lines[first_line:]))
    [only] = _sessions(cut)  # the harness names the instance after the attempt's end
    assert (only.session, only.steps, only.status, _failures(only)) == (
        "instance_django__django-10097", 1, "limit", [(None, "FC-LIFE-009")])
    whole = {s.session: s for s in _sessions(log)}["django__django-10097"]
    failed_attempts = {e.step for e in whole.failures if e.step is not None}
    assert whole.status == "limit"
    assert whole.steps == len(failed_attempts) + 1  # every failed attempt, then the last
