"""Did the fix work: a resolved finding's sessions before the fix and since, through a real
``failcode serve`` on both backends.

Real failures (commands run here) are posted as sessions of agent versions; findings are
resolved through the API, in a version or at a time, and ``GET /v1/findings/{id}`` must give
back, per side, the sessions and sessions hit that the test built (:data:`PLAN`), counted here
from the plan, not by the service's code. The plan puts enough sessions on each side that a
reversed comparison (before and since swapped) or a text order of versions (``1.10.0`` before
``1.9.5``) gives other numbers.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from failcode import Failure, SessionEnded, SessionStarted, from_command
from failcode.events import failure_event, outcome_event
from failcode.service._findings import effect_agents, fix_effect, split_at_version

if TYPE_CHECKING:
    from pathlib import Path

    from tests.service.conftest import Served

FIXED_IN = "1.10.0"

# (agent, version, phase, sessions, {finding: sessions hit}); the phase says whether the sessions
# are posted before the resolutions or after them. Sessions hit by a finding come first.
PLAN: tuple[tuple[str, str, str, int, dict[str, int]], ...] = (
    ("codex", "1.9.5", "before", 10, {"a": 7, "b": 2, "c": 6, "d": 5}),
    ("codex", "1.10.0rc1", "before", 6, {"a": 5, "b": 1, "d": 4}),
    ("claude-code", "2.1.3", "before", 3, {"a": 2, "b": 1}),
    ("codex", "1.10.0", "after", 8, {"a": 1, "b": 1, "d": 1}),
    ("codex", "1.11.2", "after", 12, {}),
)
"""Finding ``a`` (resolved in 1.10.0) falls far: significant. Finding ``b`` (resolved in
1.10.0) falls a little: too few sessions to tell. Finding ``c`` (resolved at a time, between the
two phases) no session after hits: gone. Finding ``d`` (resolved at a time) one session after
hits: it regressed, and its comparison stays, from the resolution's time. ``claude-code`` hit
``a`` and ``b`` too, but has no session of 1.10.0: the comparisons are codex's only."""


def command_failure(tmp_path: Path, *argv: str) -> Failure:
    """The failure of a real command run here."""
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, check=False)
    failure = from_command(list(argv), done.returncode, stdout=done.stdout, stderr=done.stderr)
    assert isinstance(failure, Failure)
    return failure


def failures(tmp_path: Path) -> dict[str, Failure]:
    python = (sys.executable, "-c")
    found = {"a": command_failure(tmp_path, *python, "import fix_effect_missing_module_a"),
             "b": command_failure(tmp_path, *python, "open('no-such-file-for-fix-effect')"),
             "c": command_failure(tmp_path, "sh", "-c", "fix-effect-no-such-program --version"),
             "d": command_failure(tmp_path, *python, "import json; json.loads('{')")}
    assert len({f.signature for f in found.values()}) == 4, found
    return found


def post_phase(served: Served, phase: str, found: dict[str, Failure], ts: datetime) -> None:
    """Post the plan's sessions of ``phase``: a start, the failures of the findings that hit
    it, an end; every event names the agent and its version."""
    events = []
    for agent, version, when, count, hits in PLAN:
        if when != phase:
            continue
        context = {"agent": agent, "agent_version": version}
        for index in range(count):
            session = f"{agent}-{version}-{index}"
            events.append(outcome_event(SessionStarted(by=f"{agent} hook", context=context),
                                        session=session, ts=ts))
            for step, (name, hit) in enumerate(sorted(hits.items()), start=1):
                if index < hit:
                    failure = msgspec.structs.replace(
                        found[name], context={**found[name].context, **context})
                    events.append(failure_event(failure, event="command.failed",
                                                session=session, step=step,
                                                ts=ts + timedelta(seconds=step)))
            events.append(outcome_event(SessionEnded(status="submitted", by=f"{agent} hook",
                                                     context=context),
                                        session=session, ts=ts + timedelta(seconds=9)))
    body = b"\n".join(event.to_json() for event in events)
    status, answer = served.json("POST", "/v1/events", key=served.keys["ingest"], body=body,
                                 headers={"Content-Type": "application/x-ndjson"})
    assert status == 200, answer
    assert answer["new"] == len(events), answer


def finding_id(served: Served, failure: Failure) -> int:
    status, answer = served.json("GET", f"/v1/findings?signature={failure.signature}",
                                 key=served.keys["read"])
    assert status == 200, answer
    return int(answer["findings"][0]["id"])


def resolve(served: Served, number: int, version: str | None) -> dict[str, Any]:
    body = json.dumps({"in_version": version} if version else {}).encode()
    status, answer = served.json("POST", f"/v1/findings/{number}/resolve",
                                 key=served.keys["admin"], body=body,
                                 headers={"Content-Type": "application/json"})
    assert status == 200, answer
    assert answer["status"] == "resolved", answer
    return answer  # type: ignore[no-any-return]


def expected_side(sessions: int, hit: int) -> dict[str, Any]:
    return {"sessions": sessions, "hit": hit, "per_100": round(100 * hit / sessions, 1)}


def z_score(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The two-proportion z of (sessions, hit) pairs, written out here to check the plan."""
    (n1, h1), (n2, h2) = before, after
    pooled = (h1 + h2) / (n1 + n2)
    return abs(h2 / n2 - h1 / n1) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))


def codex_sides(name: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """(sessions, hit) of codex before 1.10.0 and from it on, read off the plan."""
    before = [(n, hits.get(name, 0)) for agent, version, _p, n, hits in PLAN
              if agent == "codex" and version in ("1.9.5", "1.10.0rc1")]
    after = [(n, hits.get(name, 0)) for agent, version, _p, n, hits in PLAN
             if agent == "codex" and version in ("1.10.0", "1.11.2")]
    return ((sum(n for n, _h in before), sum(h for _n, h in before)),
            (sum(n for n, _h in after), sum(h for _n, h in after)))


def detail(served: Served, number: int) -> dict[str, Any]:
    status, answer = served.json("GET", f"/v1/findings/{number}", key=served.keys["read"])
    assert status == 200, answer
    return answer  # type: ignore[no-any-return]


def test_a_fix_s_effect_is_counted_per_side(served: Served, tmp_path: Path) -> None:
    """Resolved in a version: codex's sessions before it and from it on, and those hit, as
    built; a large fall is significant, a small one too few to tell. Resolved at a time: every
    session before and since, by when it started; none since hit it: gone."""
    found = failures(tmp_path)
    post_phase(served, "before", found, datetime.now(UTC) - timedelta(hours=2))
    ids = {name: finding_id(served, failure) for name, failure in found.items()}
    for name in ("a", "b", "c"):
        assert detail(served, ids[name])["effects"] == []  # open: nothing to compare yet
    resolve(served, ids["a"], FIXED_IN)
    resolve(served, ids["b"], FIXED_IN)
    resolve(served, ids["c"], None)
    resolved_d = resolve(served, ids["d"], None)
    post_phase(served, "after", found, datetime.now(UTC))

    for name, significant in (("a", True), ("b", False)):
        before, after = codex_sides(name)
        assert (z_score(before, after) >= 2.5) is significant  # the plan is far from the edge
        assert (z_score(before, after) <= 1.5) is not significant
        shown = detail(served, ids[name])
        # a failure of 1.10.0 after the resolution reopened it; the comparison stays
        assert shown["finding"]["status"] == "regressed"
        assert shown["effects"] == [{
            "agent": "codex", "since": f"version {FIXED_IN}", "version": FIXED_IN, "at": None,
            "before": expected_side(*before), "after": expected_side(*after), "status": "down",
            "significant": significant}], name

    sessions = [(n, hits.get("c", 0), phase) for _a, _v, phase, n, hits in PLAN]
    before = (sum(n for n, _h, p in sessions if p == "before"),
              sum(h for _n, h, p in sessions if p == "before"))
    after = (sum(n for n, _h, p in sessions if p == "after"), 0)
    assert z_score(before, after) >= 2.5
    shown = detail(served, ids["c"])
    assert shown["finding"]["status"] == "resolved"
    [effect] = shown["effects"]
    assert effect["at"] == shown["finding"]["status_changed"]
    assert effect["since"].endswith(" UTC")
    assert effect["agent"] is None
    assert effect["version"] is None
    assert (effect["before"], effect["after"], effect["status"], effect["significant"]) == (
        expected_side(*before), expected_side(*after), "gone", True)

    # d: reopened by one session since; compared from when it was resolved, not reopened
    sessions = [(n, hits.get("d", 0), phase) for _a, _v, phase, n, hits in PLAN]
    before = (sum(n for n, _h, p in sessions if p == "before"),
              sum(h for _n, h, p in sessions if p == "before"))
    after = (sum(n for n, _h, p in sessions if p == "after"),
             sum(h for _n, h, p in sessions if p == "after"))
    shown = detail(served, ids["d"])
    assert shown["finding"]["status"] == "regressed"
    assert shown["finding"]["status_changed"] != resolved_d["status_changed"]
    [effect] = shown["effects"]
    assert effect["at"] == resolved_d["status_changed"]
    assert (effect["before"], effect["after"], effect["status"]) == (
        expected_side(*before), expected_side(*after), "down")


def test_a_version_not_seen_yet_has_no_session_since(served: Served, tmp_path: Path) -> None:
    """Resolved in a version no session has yet: every agent of the finding is compared, each
    with its sessions before and none since (status unknown, not significant)."""
    found = failures(tmp_path)
    post_phase(served, "before", found, datetime.now(UTC) - timedelta(hours=2))
    number = finding_id(served, found["a"])
    resolve(served, number, "9.0")
    expected = []
    for agent in ("claude-code", "codex"):  # sorted by name
        rows = [(n, hits.get("a", 0)) for a, _v, phase, n, hits in PLAN
                if a == agent and phase == "before"]
        expected.append({
            "agent": agent, "since": "version 9.0", "version": "9.0", "at": None,
            "before": expected_side(sum(n for n, _h in rows), sum(h for _n, h in rows)),
            "after": {"sessions": 0, "hit": 0, "per_100": None}, "status": "unknown",
            "significant": False})
    assert detail(served, number)["effects"] == expected


# -- the rules, pure -------------------------------------------------------------------------
@pytest.mark.parametrize(("versions", "fixed", "chosen"), [
    ({"codex": ["1.9.5", "1.10"], "claude-code": ["2.1.3"]}, "1.10.0", ["codex"]),
    ({"codex": ["1.9.5"], "claude-code": ["2.1.3"]}, "1.10.0", ["claude-code", "codex"]),
    ({"codex": ["2.0"], "claude-code": ["2.0.0"]}, "2", ["claude-code", "codex"]),
])
def test_the_agents_compared_are_those_with_the_version(
        versions: dict[str, list[str]], fixed: str, chosen: list[str]) -> None:
    """Of the finding's agents, those with a session of the version (by number), else all."""
    assert effect_agents(versions, fixed) == chosen


def test_versions_split_by_their_numbers_not_their_text() -> None:
    rows = [("1.9.5", 10, 7), ("1.10.0rc1", 6, 5), ("1.10.0", 8, 1), ("1.11.2", 12, 0)]
    assert split_at_version(rows, "1.10.0") == ((16, 12), (20, 1))


sides = st.tuples(st.integers(0, 500), st.integers(0, 500)).map(
    lambda pair: (max(pair), min(pair)))  # (sessions, hit), hit <= sessions


@given(sides, sides)
def test_swapping_the_sides_swaps_up_and_down(before: tuple[int, int],
                                              after: tuple[int, int]) -> None:
    """The comparison is antisymmetric: up one way is down the other, significance alike."""
    there = fix_effect(before, after, since="version 1")
    back = fix_effect(after, before, since="version 1")
    flip = {"up": "down", "down": "up", "same": "same", "unknown": "unknown"}
    if there.status == "gone":
        assert back.status == "up"
    elif back.status != "gone":
        assert back.status == flip[there.status]
    assert there.significant == back.significant
    assert (there.status == "unknown") == (not before[0] or not after[0])
