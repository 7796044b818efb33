"""Harbor's own models as the oracle for the verdict failcode reads from a trial (issue 33).

A Harbor trial's ``result.json`` grades the task: the verifier's ``rewards`` and the trial's
exception. Harbor 0.25.0 (``tests/lab/oracles.toml``) decides whether that reward measures the
agent (``TrialResult.reward_valid``: every exception recorded is one of its error policy's
agent-caused ones). On every trial result of the corpora, and on results written here from one
of them with each exception type of Harbor's policy and each shape of reward, failcode's verdict
is ``ungraded`` exactly when Harbor's reward is not valid, and otherwise its reward is the
primary reward (Harbor's ``rewards["reward"]``, else the only reward) with ``passed`` at 1,
``failed`` at 0 and ``partial`` between.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from failcode.triage import triage
from failcode.triage.readers import _atif
from tests._needs import missing
from tests.lab.oracles import oracles
from tests.triage._data import session_files, sessions_2_dir, sessions_dir
from tests.triage.oracles._lab_python import HERE

if TYPE_CHECKING:
    from pathlib import Path


def _harbor(paths: list[Path]) -> dict[str, Any]:
    oracle = oracles()["harbor"]
    if not oracle.installed():
        missing("the harbor oracle is not installed (python -m tests.lab install)")
    out: dict[str, Any] = json.loads(oracle.run(HERE / "harbor_result.py", *map(str, paths)))
    return out


def _results() -> list[Path]:
    found = [path for root in (sessions_dir(), sessions_2_dir()) for path in session_files(root)
             if path.name == "result.json" and b'"trial_uri"' in path.read_bytes()[:65536]]
    assert len(found) >= 10, found
    return found


def _verdict(path: Path) -> tuple[str | None, float | None]:
    """failcode's verdict of the trial ``path`` belongs to (its folder triaged)."""
    sessions = triage([path.parent]).sessions
    assert len(sessions) == 1, (path, len(sessions))
    return sessions[0].verdict, sessions[0].reward


def _expected(row: dict[str, Any]) -> tuple[str | None, float | None]:
    """The verdict Harbor's own answer implies."""
    rewards = row["rewards"] or {}
    if not rewards and row["exception_type"] is None:
        return None, None
    primary = rewards.get("reward", next(iter(rewards.values())) if len(rewards) == 1 else None)
    if not row["reward_valid"] or primary is None:
        return "ungraded", None
    value = float(primary)
    return ("passed" if value >= 1 else "failed" if value <= 0 else "partial"), value


def test_failcode_knows_harbor_s_policy() -> None:
    """The exception types after which failcode grades a trial are Harbor's own."""
    assert sorted(_atif._REWARD_VALID_TYPES) == _harbor([])["policy"]


def test_every_trial_of_the_corpora_gets_harbor_s_verdict() -> None:
    paths = _results()
    rows = _harbor(paths)["results"]
    wrong = [f"{row['path']}: failcode {_verdict(path)}, Harbor {_expected(row)}"
             for path, row in zip(paths, rows, strict=True)
             if _verdict(path) != _expected(row)]
    assert not wrong, "\n".join(wrong)


def _variants(template: dict[str, Any], policy: list[str]) -> list[dict[str, Any]]:
    """The template with each exception (one Harbor grades after, several it does not, none)
    and each shape of reward (full, none, partial, several named, several unnamed, absent)."""
    stamp = datetime(2026, 1, 1, tzinfo=UTC).isoformat()
    exceptions: list[str | None] = [None, *policy, "VerifierTimeoutError",
                                    "SandboxBuildFailedError", "ApiRateLimitError",
                                    "NonZeroAgentExitCodeError", "CancelledError"]
    rewards: list[dict[str, float] | None] = [
        {"reward": 1.0}, {"reward": 0.0}, {"reward": 0.5}, {"accuracy": 0.25},
        {"reward": 1, "partial": 0.5}, {"a": 1.0, "b": 0.0}, None]
    out = []
    for exception in exceptions:
        for reward in rewards:
            doc = dict(template)
            doc["exception_info"] = None if exception is None else {
                "exception_type": exception, "exception_message": f"{exception} raised",
                "exception_traceback": "Traceback (most recent call last):\n", "occurred_at": stamp}
            doc["verifier_result"] = None if reward is None else {"rewards": reward}
            out.append(doc)
    return out


def test_every_exception_and_reward_shape_gets_harbor_s_verdict(tmp_path: Path) -> None:
    template = json.loads(_results()[0].read_text())
    docs = _variants(template, _harbor([])["policy"])
    paths = []
    for number, doc in enumerate(docs):
        folder = tmp_path / f"trial-{number:03d}"
        folder.mkdir()
        path = folder / "result.json"
        path.write_text(json.dumps(doc))
        paths.append(path)
    rows = _harbor(paths)["results"]
    wrong = [f"{json.dumps([doc['exception_info'], doc['verifier_result']])}: failcode "
             f"{_verdict(path)}, Harbor {_expected(row)}"
             for doc, path, row in zip(docs, paths, rows, strict=True)
             if _verdict(path) != _expected(row)]
    assert not wrong, "\n".join(wrong)
    assert {_expected(row)[0] for row in rows} == {None, "passed", "failed", "partial",
                                                  "ungraded"}
