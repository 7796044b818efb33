"""Event ids of the formats whose steps carry no time of their own.

An event's id (``failcode.triage._record``) is 48 bits of the step's time, 0 when the format
has none, then 80 bits of a digest of the input's path, the session, the step and the
failure's signature (an outcome: its type, evidence and place among the step's outcomes). For
SWE-agent, OpenHands' ``llm_completions`` and aider (one time per session, the heading's, or
none before the first heading) the time cannot tell two events apart, so the digest must:
every component counts, and two different real files in one store keep every event.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import msgspec
import pytest

from failcode.store import open_store
from failcode.triage import triage
from failcode.triage._record import record, result_events
from failcode.triage._result import (
    FailureEntry,
    OutcomeEntry,
    SessionResult,
    TriageResult,
)
from tests.triage._data import sessions_dir

if TYPE_CHECKING:
    from pathlib import Path

# two real inputs of each format whose steps have no time (relative to the shared sessions)
NO_STEP_TIME = {
    "swe-agent": (
        "swe-agent/ctf/crypto/BabyEncryption.traj",
        ("swe-agent/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00"
         "__install-1/pydicom__pydicom-1458.traj")),
    "openhands": (  # llm_completions: one model call per file, no time per step
        ("openhands/swebench_verified_claude35_run1/llm_completions/django__django-11087/"
         "litellm_proxy__claude-3-5-sonnet-20241022-1733345045.476485.json"),
        ("openhands/swebench_verified_claude35_run1/llm_completions/django__django-11265/"
         "litellm_proxy__claude-3-5-sonnet-20241022-1733345320.117138.json")),
    "aider": ("aider/add-test.md", "aider/chat-history.md"),
}


def _paths(fmt: str) -> list[Path]:
    root = sessions_dir()
    return [root / name for name in NO_STEP_TIME[fmt]]


def _count(result: TriageResult) -> int:
    return sum(len(s.failures) + len(s.outcomes) for s in result.sessions)


def _stored(url: str) -> list[str]:
    store = open_store(url)
    try:
        return [row[0] for row in store.fetch("SELECT event_id FROM events", ())]
    finally:
        store.close()


def _base(fmt: str) -> tuple[SessionResult, FailureEntry, OutcomeEntry]:
    """A real session of ``fmt``, one of its failures that has no time, and an outcome."""
    result = triage(_paths(fmt))
    for session in result.sessions:
        untimed = [e for e in session.failures if e.timestamp is None]
        if untimed and session.outcomes:
            return session, untimed[0], session.outcomes[0]
    for session in result.sessions:  # aider: the headless session has no outcome
        untimed = [e for e in session.failures if e.timestamp is None]
        if untimed:
            other = next(s for s in result.sessions if s.outcomes)
            return session, untimed[0], other.outcomes[0]
    pytest.fail(f"no {fmt} failure without a time in {NO_STEP_TIME[fmt]}")


def _session(base: SessionResult, *, path: str | None = None, name: str | None = None,
             failures: list[FailureEntry] | None = None,
             outcomes: list[OutcomeEntry] | None = None) -> SessionResult:
    return SessionResult(name if name is not None else base.session,
                         path if path is not None else base.path, base.format, base.steps,
                         base.status, None, failures or [], outcomes or [])


def _ids(*sessions: SessionResult) -> list[str]:
    return [event.event_id for event in result_events(TriageResult(sessions=list(sessions)))]


def _entry(entry: FailureEntry, *, step: int | None = None, signature: str | None = None,
           ) -> FailureEntry:
    failure = entry.failure if signature is None else msgspec.structs.replace(
        entry.failure, signature=signature)
    return FailureEntry(entry.step if step is None else step, entry.source, entry.evidence,
                        failure, entry.repeats, None, entry.masked)


def _other(signature: str) -> str:
    """The same signature but for its hash (the last 8 hex digits)."""
    return f"{signature[:-8]}{int(signature[-8:], 16) ^ 1:08x}"


@pytest.mark.parametrize("fmt", sorted(NO_STEP_TIME))
def test_every_component_of_a_failure_tells_its_events_apart(fmt: str) -> None:
    """Two failures without a time that differ only in the input's path, only in the session,
    only in the step or only in the signature are two events; the same four are one."""
    base, entry, _ = _base(fmt)
    step = (entry.step or 0) + 1
    signature = entry.failure.signature
    pairs = {
        "path": (_session(base, failures=[_entry(entry)]),
                 _session(base, path=base.path + ".copy", failures=[_entry(entry)])),
        "session": (_session(base, failures=[_entry(entry)]),
                    _session(base, name=base.session + "-2", failures=[_entry(entry)])),
        "step": (_session(base, failures=[_entry(entry)]),
                 _session(base, failures=[_entry(entry, step=step)])),
        "signature": (_session(base, failures=[_entry(entry)]),
                       _session(base, failures=[_entry(entry, signature=_other(signature))])),
    }
    for component, (one, other) in pairs.items():
        ids = _ids(one, other)
        assert len(ids) == 2, component
        assert ids[0] != ids[1], f"{fmt}: {component} does not count"
    again = _ids(_session(base, failures=[_entry(entry)]), _session(base, failures=[_entry(entry)]))
    assert again[0] == again[1]  # nothing else (no clock) goes into the id


@pytest.mark.parametrize("fmt", sorted(NO_STEP_TIME))
def test_every_component_of_an_outcome_tells_its_events_apart(fmt: str) -> None:
    """The same for outcomes (which never carry a time): path, session, step, and the place
    of one outcome among identical ones of its step."""
    base, _, outcome = _base(fmt)
    moved = OutcomeEntry((outcome.step or 0) + 1, outcome.source, outcome.evidence,
                         outcome.outcome)
    variants = [
        _session(base, outcomes=[outcome]),
        _session(base, path=base.path + ".copy", outcomes=[outcome]),
        _session(base, name=base.session + "-2", outcomes=[outcome]),
        _session(base, outcomes=[moved]),
    ]
    ids = _ids(*variants)
    assert len(set(ids)) == len(variants)
    twice = _ids(_session(base, outcomes=[outcome, outcome]))
    assert len(set(twice)) == 2  # the same outcome twice at one step: two events


@pytest.mark.parametrize("fmt", sorted(NO_STEP_TIME))
def test_two_real_files_in_one_store_keep_every_event(tmp_path: Path, fmt: str) -> None:
    """Triaging two different real files of the format into one store stores one event per
    failure and outcome triage found (no silent merge); doing it again stores none."""
    result = triage(_paths(fmt))
    assert [item.error_code for item in result.inputs] == [None, None]
    assert any(e.timestamp is None for s in result.sessions for e in s.failures)
    expected = _count(result)
    assert expected > 0
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = open_store(url)
    try:
        assert record(result, store) == (expected, 0)
        assert record(triage(_paths(fmt)), store) == (0, expected)
    finally:
        store.close()
    assert len(set(_stored(url))) == expected


@pytest.mark.parametrize("fmt", sorted(NO_STEP_TIME))
def test_the_same_file_under_two_paths_is_two_inputs(tmp_path: Path, fmt: str) -> None:
    """A copy of a real file at another path: its events are new ones (the path counts), each
    copy's as many as the file's own."""
    source = _paths(fmt)[1]
    copies = []
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        copies.append(tmp_path / folder / source.name)
        shutil.copyfile(source, copies[-1])
    one = _count(triage(copies[:1]))
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = open_store(url)
    try:
        assert record(triage(copies), store) == (2 * one, 0)
    finally:
        store.close()
