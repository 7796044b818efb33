"""Event times at the service's doors and on the dashboard, over a real ``failcode serve``.

Rules tested (docs/service.md, "Event times"; docs/service-otlp.md for OTLP):

- Both doors (``POST /v1/events`` and ``POST /v1/logs``) keep an event whose time is inside
  the window (no earlier than 2000-01-01T00:00:00Z, no later than one hour after the request
  arrived) as it is, and clamp a time outside it to the window's nearer edge, keeping the
  time the event named in its failure's (or outcome's) context as ``ts.original``.
- Every dashboard page answers 200 over a store that holds events stored before the doors
  bounded times (written with :meth:`Findings.append`, as the doors did): a failure in year
  9999, one 26 hours ahead and one at the oldest time an event allows (0001-01-01); the
  per-day tables (a finding's last 30 days, how sessions ended per day) hold no day after
  the window's.
"""

from __future__ import annotations

import urllib.parse
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

from failcode import FC, Failure, FrozenDict, SessionEnded
from failcode.events import Event, failure_event, outcome_event
from failcode.service import _pages
from failcode.service._findings import Findings
from failcode.service._projects import ProjectStores
from failcode.store import open_store
from tests.conftest import BACKENDS
from tests.service._otlp_payloads import CLAUDE, Record, logs
from tests.service.conftest import Served, running

if TYPE_CHECKING:
    from collections.abc import Iterator

    from failcode.store import Store

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
OLDEST_KEPT = datetime(2000, 1, 1, tzinfo=UTC)
AHEAD = timedelta(hours=1)
PAGES = ("/ui/", "/ui/sessions", "/ui/compare?by=version", "/ui/blame", "/ui/loops",
         "/ui/?since=24h", "/ui/?since=7d&sort=recent", "/ui/sessions?clean=1",
         "/ui/compare?by=window&a=9999-12-30..9999-12-31&b=0001-01-01..0001-01-02")


@pytest.fixture(scope="module", params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
            ) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp(f"times-{request.param}")
    with running(request.param, tmp, extra=("--rate", "1000000")) as served:
        yield served


@pytest.fixture(scope="module")
def store(service: Served) -> Iterator[Store]:
    """The project ``web``'s store, opened here beside the service."""
    control = open_store(service.store)
    stores = ProjectStores(control, service.store)
    try:
        yield stores.get("web")
    finally:
        stores.close()
        control.close()


def _failure(message: str, **context: Any) -> Failure:
    failure = FC.CMD_NOT_FOUND.failure(surface="tool.shell", params={"program": message})
    return msgspec.structs.replace(failure, context=FrozenDict(
        {"agent": "lab-agent", "agent_version": "1.0.0", **context}))


def _post(service: Served, events: list[Event]) -> dict[str, Any]:
    body = b"".join(e.to_json() + b"\n" for e in events)
    status, answer = service.json("POST", "/v1/events", key=service.keys["ingest"], body=body,
                                  headers={"Content-Type": "application/x-ndjson"})
    assert status == 200, answer
    return dict(answer)


def _stored(store: Store, event_id: str) -> Event:
    rows = store.fetch("SELECT body FROM events WHERE event_id = ?", (event_id,))
    assert rows, f"{event_id} was not stored"
    return Event.from_json(rows[0][0])


def _original(event: Event) -> Any:
    subject = event.failure if event.failure is not None else event.outcome
    assert subject is not None
    return subject.context.get("ts.original")


# -- the events door ---------------------------------------------------------------------------
def test_events_door_keeps_times_inside_the_window(service: Served, store: Store) -> None:
    now = datetime.now(UTC)
    inside = [failure_event(_failure("inside-soon"), event="command.failed", session="t-in",
                            ts=now + timedelta(minutes=50)),
              failure_event(_failure("inside-edge"), event="command.failed", session="t-in",
                            ts=OLDEST_KEPT),
              outcome_event(SessionEnded(status="submitted", by="lab"), session="t-in",
                            ts=now - timedelta(days=400))]
    _post(service, inside)
    for sent in inside:
        kept = _stored(store, sent.event_id)
        assert kept.ts == sent.ts
        assert _original(kept) is None


@pytest.mark.parametrize(("label", "when"), [
    ("year 9999", datetime(9999, 12, 31, 23, 59, tzinfo=UTC)),
    ("26 h ahead", None),
    ("oldest", datetime(1, 1, 1, tzinfo=UTC)),
    ("just before 2000", OLDEST_KEPT - timedelta(microseconds=1)),
])
def test_events_door_clamps_times_outside_the_window(service: Served, store: Store, label: str,
                                                     when: datetime | None) -> None:
    before = datetime.now(UTC)
    ts = when or before + timedelta(hours=26)
    sent = [failure_event(_failure(f"out-{label}"), event="command.failed",
                          session=f"t-out-{label}", ts=ts),
            outcome_event(SessionEnded(status="limit", by="lab", reason="x"),
                          session=f"t-out-{label}", ts=ts)]
    answer = _post(service, sent)
    after = datetime.now(UTC)
    assert (answer["new"], answer["rejected"]) == (2, 0)
    for event in sent:
        kept = _stored(store, event.event_id)
        if ts > before:
            assert before + AHEAD <= kept.ts <= after + AHEAD
        else:
            assert kept.ts == OLDEST_KEPT
        assert _original(kept) == ts.isoformat()


# -- the OTLP door -----------------------------------------------------------------------------
def _api_error(session: str, time_ns: int) -> Record:
    return Record({"event.name": "api_error", "session.id": session, "prompt.id": "p-1",
                   "model": "claude-sonnet-4-5", "error": "Overloaded", "status_code": 529,
                   "attempt": 11}, body="claude_code.api_error", time_ns=time_ns)


def _ns(value: datetime) -> int:
    return (value - EPOCH) // timedelta(microseconds=1) * 1000


def _otlp_events(service: Served, store: Store, session: str, when: datetime) -> list[Event]:
    payload = logs([_api_error(session, _ns(when))], CLAUDE)
    status, answer = service.json("POST", "/v1/logs", key=service.keys["ingest"],
                                  body=payload.body("protobuf"),
                                  headers={"Content-Type": payload.content_type("protobuf")})
    assert status == 200, answer
    rows = store.fetch("SELECT body FROM events WHERE session = ?", (session,))
    assert rows, f"nothing of {session} was stored"
    return [Event.from_json(body) for (body,) in rows]


def test_otlp_door_keeps_times_inside_the_window(service: Served, store: Store) -> None:
    when = datetime.now(UTC).replace(microsecond=0) + timedelta(minutes=50)
    for event in _otlp_events(service, store, "otlp-in", when):
        assert event.ts == when
        assert _original(event) is None


def test_otlp_door_clamps_a_time_far_ahead(service: Served, store: Store) -> None:
    before = datetime.now(UTC)
    when = datetime(2500, 1, 1, tzinfo=UTC)
    events = _otlp_events(service, store, "otlp-ahead", when)
    after = datetime.now(UTC)
    for event in events:
        assert before + AHEAD <= event.ts <= after + AHEAD
        assert _original(event) == when.isoformat()


def test_otlp_door_clamps_a_time_too_old(service: Served, store: Store) -> None:
    when = datetime(1990, 6, 1, tzinfo=UTC)
    for event in _otlp_events(service, store, "otlp-old", when):
        assert event.ts == OLDEST_KEPT
        assert _original(event) == when.isoformat()


# -- the dashboard over times stored before the doors bounded them ----------------------------
def test_every_page_survives_extreme_stored_times(service: Served, store: Store) -> None:
    now = datetime.now(UTC)
    times = {"y9999": datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
             "ahead": now + timedelta(hours=26),
             "oldest": datetime(1, 1, 1, tzinfo=UTC)}
    events: list[Event] = []
    for label, ts in times.items():
        for version in ("1.0.0", "2.0.0"):
            session = f"stored-{label}-{version}"
            failure = _failure(f"stored-{label}", agent_version=version)
            events += [failure_event(failure, event="command.failed", session=session, ts=ts),
                       failure_event(failure, event="command.failed", session=session, ts=ts,
                                     step=1),
                       outcome_event(SessionEnded(status="limit", by="lab", reason="gave up"),
                                     session=session, ts=ts)]
    Findings(store).append(events)  # as the doors stored them before they bounded times
    status, found = service.json("GET", "/v1/findings?limit=100", key=service.keys["read"])
    assert status == 200, found
    items = found["findings"] if isinstance(found, dict) else found
    ids = [item["id"] for item in items]
    assert ids
    cookie = service.session_cookie()
    paths = [*PAGES, *(f"/ui/findings/{i}" for i in ids),
             *(f"/ui/sessions/{urllib.parse.quote(f'stored-{label}-1.0.0')}"
               for label in times)]
    failed = []
    for path in paths:
        code, _headers, _body = service.request("GET", path, headers={"Cookie": cookie})
        if code != 200:
            failed.append((path, code))
    assert not failed, failed
    # the per-day tables count no day after the window's: "last 30 days" holds no year 9999
    today = datetime.now(UTC).date()
    per_day = _pages.sessions_page(store, clean=True).per_day
    assert per_day
    assert all(day <= (today + timedelta(days=1)).isoformat() for day, _n in per_day), per_day
    for finding_id in ids:
        days = _pages.finding_page(store, Findings(store), finding_id).detail.days
        assert all(day <= today.isoformat() for day, _n in days), days
