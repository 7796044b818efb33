"""Every reader, step by step, against its ground truth: the labels of the real sessions in
../shared/data/agent-sessions/ (tests/fixtures/triage_labels.json) and the lab's scenarios.

The other tests of the labelled sets check shares against floors, with margins a reader could
pass while shifting every step by one. These compare every labelled step exactly: the failing
steps and their kinds, the rejected actions and how each session ended, per session. Where
triage and a label disagree today the step is in :data:`DISAGREEMENTS`, named one by one (a
probe or unlabelled command triage reports, a kind it reads differently, a provider error
outside any step); a new disagreement fails, and so does one that went away (take it off the
list: the labels then hold a little more). Endings that differ are named the same way, per
session, in :data:`ENDING_DISAGREEMENTS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from failcode.triage import triage
from tests.lab.score import score_fixtures
from tests.triage._data import labels, sessions_dir

# per file: (step, labelled kind or None, kind triage reports or None)
DISAGREEMENTS: dict[str, list[tuple[int | None, str | None, str | None]]] = {
    # aider 0.51 logged the status of a command it ran for the model's suggestion the person
    # approved ("Command 'python -m unittest ...' exited with status 1", session 2024-08-21
    # 21:45:37): a failed test run the labels do not name
    'aider/chat-history.md': [
        (2, None, 'test_error'),
    ],
    'mini-swe-agent/deepseek_reasoner_dev/pvlib__pvlib-python-1072.traj.json': [
        (None, None, 'provider_error'),
    ],
    'mini-swe-agent/deepseek_reasoner_dev/pvlib__pvlib-python-1154.traj.json': [
        (None, None, 'provider_error'),
    ],
    'mini-swe-agent/deepseek_reasoner_dev/pvlib__pvlib-python-1707.traj.json': [
        (None, None, 'provider_error'),
    ],
    'mini-swe-agent/deepseek_reasoner_dev/pylint-dev__astroid-1196.traj.json': [
        (None, None, 'provider_error'),
    ],
    # `pip install -e . | tail`: the project's own extension failed to compile inside pip; the
    # labels call it the build's failure, triage pip's verdict on the install (package_build_failed)
    'mini-swe-agent/pr854_example_trajectories/astropy__astropy-12907.traj.json': [
        (3, 'build_error', 'dependency_error'), (8, 'build_error', 'dependency_error'),
    ],
    'openhands/multi_swe_bench_examples/output.jsonl': [
        (None, None, 'agent_error'),
    ],
    'openhands/swebench_verified_claude35_run1/infer_logs/instance_django__django-10097.log': [
        (None, None, 'agent_error'),  # the iteration limit that ended it, outside any step
    ],
}

# per file and session: (labelled end, end triage reports), where they differ today
ENDING_DISAGREEMENTS: dict[str, dict[str, tuple[str, str]]] = {}


def _sessions() -> dict[tuple[str, str], Any]:
    root = sessions_dir()
    result = triage([root / path for path in labels()])
    return {(str(Path(s.path).relative_to(root)), s.session): s for s in result.sessions}


def test_every_labelled_step_of_every_real_session_is_read_as_labelled() -> None:
    """Failing steps and kinds, step by step, equal the labels but for DISAGREEMENTS."""
    found = _sessions()
    differences: dict[str, list[tuple[int | None, str | None, str | None]]] = {}
    for path, by_session in sorted(labels().items()):
        for name, label in sorted(by_session.items()):
            session = found.get((path, name))
            assert session is not None, (path, name)
            reported = {e.step: str(e.failure.kind) for e in session.failures}
            wanted = {int(step): kind for step, kind in label["failures"].items()}
            for step in sorted(set(reported) | set(wanted), key=lambda s: -1 if s is None else s):
                if reported.get(step) != wanted.get(step):
                    differences.setdefault(path, []).append(
                        (step, wanted.get(step), reported.get(step)))
    assert differences == DISAGREEMENTS


def test_every_rejected_action_and_ending_is_read_as_labelled() -> None:
    """The rejected actions (as outcomes, at their steps) exactly, and each session's end but
    for ENDING_DISAGREEMENTS."""
    found = _sessions()
    endings: dict[str, dict[str, tuple[str, str]]] = {}
    for path, by_session in sorted(labels().items()):
        for name, label in sorted(by_session.items()):
            session = found[(path, name)]
            rejected = sorted(e.step for e in session.outcomes
                              if type(e.outcome).__name__ == "RejectedAction")
            assert rejected == sorted(label["rejected"]), (path, name)
            if session.status != label["ended"]:
                endings.setdefault(path, {})[name] = (label["ended"], str(session.status))
    assert endings == ENDING_DISAGREEMENTS


def test_every_observable_lab_check_passes() -> None:
    """Each step of each lab fixture, per agent: the failure expected there (and its kind), the
    outcome, the quiet step, the loops and the end, all of them (the floors in floors.toml are
    shares; this is every check a log can support)."""
    failed = [(c.agent, c.scenario, c.step, c.name, c.detail)
              for c in score_fixtures() if c.observable and not c.passed]
    assert failed == []
