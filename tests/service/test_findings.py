"""Findings: the lifecycle rule, version order, and the tables kept in the ingest transaction,
on both backends."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from failcode import FailureError, from_command
from failcode.events import failure_event, outcome_event
from failcode.service._findings import (
    NEW_FOR_S,
    Findings,
    after_failure,
    ensure_tables,
    event_attributes,
    shown_status,
    version_key,
)
from failcode.store import open_store

if TYPE_CHECKING:
    from pathlib import Path

    from failcode import Failure
    from failcode.events import Event

# noon UTC 20 days ago: the lifecycle test resolves a finding now (the store's clock) and then
# sends failures from days 30-33, which must come after that resolution
T0 = (datetime.now(UTC) - timedelta(days=20)).replace(hour=12, minute=0, second=0, microsecond=0)


def real_failure(tmp_path: Path, program: str = "no-such-tool-xyz") -> Failure:
    """A failure of a real command run here: a missing program."""
    argv = ["sh", "-c", f"{program} --version"]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, check=False)
    return from_command(argv, done.returncode, stdout=done.stdout, stderr=done.stderr)


def module_failure(tmp_path: Path) -> Failure:
    argv = [sys.executable, "-c", "import no_such_module_xyz"]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, check=False)
    return from_command(argv, done.returncode, stdout=done.stdout, stderr=done.stderr)


def event_of(failure: Failure, ts: datetime, *, version: str | None = None,
             agent: str | None = "codex", model: str | None = None,
             session: str = "s1") -> Event:
    given = (("agent", agent), ("agent_version", version), ("model", model))
    context = {**failure.context, **{k: v for k, v in given if v is not None}}
    import msgspec

    return failure_event(msgspec.structs.replace(failure, context=context),
                         event="command.failed", session=session, ts=ts)


# -- the rules -------------------------------------------------------------------------------
@pytest.mark.parametrize(("older", "newer"), [
    ("1.9.2", "1.10.0"), ("1.4.0rc1", "1.4.0"), ("2.0.0-beta.2", "2.0.0"), ("v1.2", "1.3"),
    ("1.2", "1.2.1"), ("0.9.dev0", "0.9"), ("1.0", "nightly"), ("1.2.0", "1.2.0.post1"),
])
def test_versions_compare_by_their_numbers(older: str, newer: str) -> None:
    assert version_key(older) < version_key(newer)


def test_trailing_zeros_do_not_make_a_newer_version() -> None:
    assert version_key("1.4") == version_key("1.4.0") == version_key("v1.4.0.0")


@given(st.lists(st.integers(0, 50), min_size=1, max_size=4),
       st.lists(st.integers(0, 50), min_size=1, max_size=4))
def test_version_order_is_the_order_of_the_numbers(a: list[int], b: list[int]) -> None:
    def trimmed(parts: list[int]) -> tuple[int, ...]:
        out = list(parts)
        while len(out) > 1 and out[-1] == 0:
            out.pop()
        return tuple(out)

    left, right = ".".join(map(str, a)), ".".join(map(str, b))
    assert (version_key(left) < version_key(right)) == (trimmed(a) < trimmed(b))


def test_a_resolved_finding_reopens_only_from_its_version_on() -> None:
    resolved = {"resolved_in": "2.0.0", "status_us": 100}
    assert after_failure("resolved", version="1.9.9", ts_us=200, **resolved) == "resolved"
    assert after_failure("resolved", version=None, ts_us=200, **resolved) == "resolved"
    assert after_failure("resolved", version="2.0.0", ts_us=200, **resolved) == "regressed"
    assert after_failure("resolved", version="2.1", ts_us=200, **resolved) == "regressed"
    # a failure from before the resolution (a late upload) reopens nothing
    assert after_failure("resolved", version="3.0", ts_us=50, **resolved) == "resolved"


def test_without_a_version_any_later_failure_reopens() -> None:
    assert after_failure("resolved", resolved_in=None, status_us=100, version=None,
                         ts_us=101) == "regressed"
    assert after_failure("resolved", resolved_in=None, status_us=100, version="0.1",
                         ts_us=101) == "regressed"


@given(st.sampled_from(["open", "regressed", "ignored"]), st.one_of(st.none(), st.text()),
       st.integers(), st.one_of(st.none(), st.text(max_size=10)), st.integers())
def test_only_resolved_findings_change_on_a_failure(status: str, resolved_in: str | None,
                                                    status_us: int, version: str | None,
                                                    ts: int) -> None:
    assert after_failure(status, resolved_in=resolved_in, status_us=status_us,  # type: ignore[arg-type]
                         version=version, ts_us=ts) == status


def test_open_reads_new_then_ongoing() -> None:
    now = 10 * NEW_FOR_S * 1_000_000
    assert shown_status("open", now - 1, now) == "new"
    assert shown_status("open", now - NEW_FOR_S * 1_000_000, now) == "ongoing"
    assert shown_status("resolved", now, now) == "resolved"


def test_who_produced_a_failure(tmp_path: Path) -> None:
    failure = real_failure(tmp_path)
    event = event_of(failure, T0, version="1.2.3", agent="claude-code", model="claude-x")
    assert event_attributes(event) == ("claude-code", "1.2.3", "claude-x")
    import msgspec

    recorded = msgspec.structs.replace(failure, context={
        "triage.format": "mini-swe-agent", "triage.agent_version": "2.1",
        "triage.model": "gpt-x"})
    assert event_attributes(failure_event(recorded, event="command.failed")) == (
        "mini-swe-agent", "2.1", "gpt-x")


# -- over a real store -----------------------------------------------------------------------
def test_findings_follow_the_lifecycle(store_url: str, tmp_path: Path) -> None:
    missing = real_failure(tmp_path)
    module = module_failure(tmp_path)
    assert missing.signature != module.signature
    with open_store(store_url) as store:
        ensure_tables(store)
        findings = Findings(store)
        batch = [event_of(missing, T0 + timedelta(minutes=i), version="1.0.0", session=f"s{i}")
                 for i in range(3)] + [event_of(module, T0, version="1.0.0", model="m1")]
        new, changes = findings.append(batch)
        assert new == 4
        assert sorted(c.created for c in changes) == [True, True]
        # a retried batch changes nothing
        again, changes = findings.append(batch)
        assert (again, changes) == (0, [])
        page, total = findings.list(sort="count", now_us=_us(T0 + timedelta(days=1)))
        assert total == 2
        top = page[0]
        assert (top.signature, top.count, top.sessions, top.status) == (
            missing.signature, 3, 3, "new")
        later, _ = findings.list(now_us=_us(T0 + timedelta(days=8)))
        assert {f.status for f in later} == {"ongoing"}
        # resolve in 2.0.0: an old build's failure leaves it, a new one's reopens it
        findings.set_status(top.id, "resolve", in_version="2.0.0")
        findings.append([event_of(missing, T0 + timedelta(days=30), version="1.9.0")])
        assert findings.get(top.id).status == "resolved"
        _, changes = findings.append([event_of(missing, T0 + timedelta(days=31),
                                               version="2.0.1")])
        assert [(c.finding_id, c.regressed, c.version) for c in changes] == [
            (top.id, True, "2.0.1")]
        reopened = findings.get(top.id)
        assert (reopened.status, reopened.regressions, reopened.count) == ("regressed", 1, 5)
        # ignored: counts go on, nothing reopens it
        findings.set_status(top.id, "ignore")
        findings.append([event_of(missing, T0 + timedelta(days=32), version="9.0")])
        assert (findings.get(top.id).status, findings.get(top.id).count) == ("ignored", 6)
        findings.set_status(top.id, "reopen")
        assert findings.get(top.id).status == "ongoing"
        # filters
        by_model, n = findings.list(model="m1")
        assert n == 1
        assert by_model[0].signature == module.signature
        assert findings.list(version="1.9.0")[1] == 1
        assert findings.list(agent="nobody")[1] == 0
        assert findings.list(status="ignored")[1] == 0
        detail = findings.detail(top.id, days=40, now_us=_us(T0 + timedelta(days=33)))
        assert sum(n for _d, n in findings.detail(top.id, days=3, now_us=_us(
            T0 + timedelta(days=32))).days) == 3  # days 30, 31 and 32
        assert sum(count for _day, count in detail.days) == 6
        assert {v.version for v in detail.versions} == {"1.0.0", "1.9.0", "2.0.1", "9.0"}
        assert len(detail.occurrences) == 6
        assert detail.occurrences[0].ts == T0 + timedelta(days=32)


def test_status_changes_name_what_is_wrong(store_url: str) -> None:
    with open_store(store_url) as store:
        ensure_tables(store)
        findings = Findings(store)
        with pytest.raises(FailureError) as missing:
            findings.set_status(99, "resolve")
        assert missing.value.failure.code == "FC-SVC-003"
        with pytest.raises(FailureError) as misplaced:
            findings.set_status(1, "ignore", in_version="1.0")
        assert misplaced.value.failure.code == "FC-DATA-001"


def test_a_store_triage_filled_gets_its_findings(store_url: str, tmp_path: Path) -> None:
    """Signatures stored before the findings tables existed become findings when they are
    made (a store `failcode triage --store` filled, then served)."""
    failure = real_failure(tmp_path)
    with open_store(store_url) as store:
        store.append([event_of(failure, T0), event_of(failure, T0 + timedelta(hours=1))])
        ensure_tables(store)
        ensure_tables(store)  # once only
        page, total = Findings(store).list()
        assert total == 1
        assert (page[0].signature, page[0].count) == (failure.signature, 2)


def test_outcomes_are_never_findings(store_url: str) -> None:
    from failcode import NoMatch

    with open_store(store_url) as store:
        ensure_tables(store)
        findings = Findings(store)
        new, changes = findings.append([outcome_event(NoMatch(probe="grep -r TODO"))])
        assert (new, changes) == (1, [])
        assert findings.list()[1] == 0


def _us(when: datetime) -> int:
    return int(when.timestamp() * 1_000_000)


def test_a_version_1_findings_store_gets_the_session_ends_table(store_url: str,
                                                                tmp_path: Path) -> None:
    """A store whose findings tables are version 1 (before svc_session_ends) is upgraded once;
    its sessions then say how they ended from the next failure on."""
    failure = real_failure(tmp_path)
    with open_store(store_url) as store:
        ensure_tables(store)
        with store.transaction() as tx:  # as version 1 left it
            tx.run("DROP TABLE svc_session_ends")
            tx.run("DROP TABLE svc_session_agents")
            tx.run("ALTER TABLE svc_findings DROP COLUMN resolved_us")
            tx.run("UPDATE meta SET value = '1' WHERE key = 'service_findings_schema'")
        ensure_tables(store)
        ensure_tables(store)  # once is enough
        assert store.fetch("SELECT value FROM meta WHERE key = 'service_findings_schema'") == [
            ("4",)]
        findings = Findings(store)
        findings.append([event_of(failure, T0, session="s-on")])  # says nothing of the end
        ended = msgspec.structs.replace(
            failure, context={**failure.context, "session.ended": "provider_error"})
        findings.append([event_of(ended, T0, session="s-ended")])
        assert store.fetch("SELECT session, ended FROM svc_session_ends") == [
            ("s-ended", "provider_error")]


def test_a_version_2_findings_store_gets_the_session_agents_table(store_url: str,
                                                                  tmp_path: Path) -> None:
    """A store whose findings tables are version 2 (before svc_session_agents) is upgraded
    once, keeping how its sessions ended."""
    failure = real_failure(tmp_path)
    ended = msgspec.structs.replace(
        failure, context={**failure.context, "session.ended": "provider_error"})
    with open_store(store_url) as store:
        ensure_tables(store)
        Findings(store).append([event_of(ended, T0, session="s-old")])
        with store.transaction() as tx:  # as version 2 left it
            tx.run("DROP TABLE svc_session_agents")
            tx.run("ALTER TABLE svc_findings DROP COLUMN resolved_us")
            tx.run("UPDATE meta SET value = '2' WHERE key = 'service_findings_schema'")
        ensure_tables(store)
        assert store.fetch("SELECT value FROM meta WHERE key = 'service_findings_schema'") == [
            ("4",)]
        assert store.fetch("SELECT session, ended FROM svc_session_ends") == [
            ("s-old", "provider_error")]
        assert store.fetch("SELECT count(*) FROM svc_session_agents") == [(0,)]


def test_a_session_names_its_agent_and_version_from_any_of_its_events(store_url: str,
                                                                       tmp_path: Path) -> None:
    """A hook's events name the agent only, the export's the version and model too: the
    session keeps each one named last, never an empty one over a named one."""
    from failcode import SessionEnded, SessionStarted
    from failcode.service._findings import session_agent

    failure = real_failure(tmp_path)
    by_export = msgspec.structs.replace(failure, context={
        **failure.context, "agent": "codex", "agent_version": "0.171.0", "model": "gpt-5"})
    with open_store(store_url) as store:
        ensure_tables(store)
        findings = Findings(store)
        findings.append([outcome_event(SessionStarted(by="codex hook",
                                                      context={"agent": "codex"}),
                                       session="s1", ts=T0)])
        assert session_agent(store, "s1", "") == "codex"
        findings.append([event_of(by_export, T0 + timedelta(seconds=1), session="s1")])
        findings.append([outcome_event(SessionEnded(status="submitted", by="codex hook",
                                                    context={"agent": "codex"}),
                                       session="s1", ts=T0 + timedelta(seconds=2))])
        assert store.fetch("SELECT agent, version, model FROM svc_session_agents") == [
            ("codex", "0.171.0", "gpt-5")]
        assert session_agent(store, "s1", "") == "codex 0.171.0"
        assert session_agent(store, "s2", "") == ""


def test_a_version_3_findings_store_keeps_when_its_findings_were_resolved(
        store_url: str, tmp_path: Path) -> None:
    """A store whose findings tables are version 3 (before resolved_us) is upgraded once: a
    finding resolved then keeps that time as its resolution's; an open one has none."""
    failure = real_failure(tmp_path)
    other = real_failure(tmp_path, "another-no-such-tool-xyz")
    assert other.signature != failure.signature
    with open_store(store_url) as store:
        ensure_tables(store)
        findings = Findings(store)
        findings.append([event_of(failure, T0, session="s-1"), event_of(other, T0, session="s-2")])
        resolved = findings.id_of(failure.signature)
        findings.set_status(resolved, "resolve")
        with store.transaction() as tx:  # as version 3 left it
            tx.run("ALTER TABLE svc_findings DROP COLUMN resolved_us")
            tx.run("UPDATE meta SET value = '3' WHERE key = 'service_findings_schema'")
        ensure_tables(store)
        ensure_tables(store)  # once is enough
        assert store.fetch("SELECT value FROM meta WHERE key = 'service_findings_schema'") == [
            ("4",)]
        rows = dict(store.fetch("SELECT id, resolved_us = status_us FROM svc_findings"))
        assert rows[resolved] in (True, 1)
        assert rows[findings.id_of(other.signature)] is None
