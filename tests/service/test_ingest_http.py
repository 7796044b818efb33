"""``POST /v1/events``, the findings it makes and their lifecycle, over HTTP to a real service.

Every event is made by failcode itself from real failures: commands run here through
:mod:`subprocess` (a program that is not installed, a Python import that fails) classified by
:func:`failcode.from_command`, and a provider's error fetched over HTTP from the provider stub
on 127.0.0.1, classified by :func:`failcode.classify_http`. What a query should answer is
computed from the events the test sent, never written down.

Rules tested:

- A body is JSONL or a JSON array of events; each good line is stored, each bad line is a
  problem of the answer (the problems :func:`failcode.events.read_events` finds in the same
  bytes); a retried batch stores nothing twice (``new`` 0, ``duplicates`` n).
- ``GET /v1/findings`` lists one finding per signature, with filters (status, category, code,
  kind, agent, version, model, since/until, signature), sorts and pages whose ``total`` counts
  every match; ``GET /v1/findings/{id}`` adds its days, versions and latest occurrences.
- Lifecycle over HTTP (admin keys only): resolved in V stays resolved for failures from older
  versions and regresses on V or later; resolved without a version regresses on any later
  failure; ignored never reopens; reopened is open again.
- Retention: events older than the project's retention are pruned by the service's schedule;
  the findings' counts stay.
- ``failcode store findings/resolve/ignore/reopen --project`` act on the same findings.
- ``POST /v1/classify`` answers what failcode's own classifiers make of a command result or an
  HTTP error, its user text in the language ``Accept-Language`` asks for.
"""

from __future__ import annotations

import html
import io
import json
import re
import secrets
import string
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, NamedTuple
from urllib.parse import urlencode

import httpx
import msgspec
import pytest

from failcode import (
    FC,
    Failure,
    FrozenDict,
    History,
    classify_http,
    decide,
    from_command,
    render_user,
)
from failcode.events import EventProblem, failure_event, read_events
from failcode.service._findings import NEW_FOR_S
from tests.conftest import BACKENDS
from tests.provider_stub import ProviderStub
from tests.service.conftest import Served, failcode, running

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from failcode.events import Event

NOW: Final = datetime.now(UTC)
DAY: Final = timedelta(days=1)


# -- services --------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
            ) -> Iterator[Served]:
    """A service per backend shared by the tests that each use failures of their own."""
    with running(request.param, tmp_path_factory.mktemp(f"ingest-{request.param}")) as served:
        yield served


def api(served: Served, method: str, path: str, *, key: str, payload: Any = None,
        raw: bytes | None = None, content_type: str = "application/json",
        headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """One JSON request: (status, decoded answer or None)."""
    body = raw if raw is not None else (None if payload is None else json.dumps(payload).encode())
    sent = {**({"Content-Type": content_type} if body is not None else {}), **(headers or {})}
    status, _headers, data = served.request(method, path, key=key, body=body, headers=sent)
    return status, json.loads(data) if data else None


def post_events(served: Served, events: list[Event], *, as_array: bool = False,
                key: str | None = None) -> dict[str, Any]:
    """POST events as JSONL (or a JSON array); the answer, asserting 200."""
    if as_array:
        raw = b"[" + b",".join(e.to_json() for e in events) + b"]"
        content_type = "application/json"
    else:
        raw = b"".join(e.to_json() + b"\n" for e in events)
        content_type = "application/x-ndjson"
    status, answer = api(served, "POST", "/v1/events", key=key or served.keys["ingest"],
                         raw=raw, content_type=content_type)
    assert status == 200, answer
    assert isinstance(answer, dict)
    return answer


def findings(served: Served, **query: Any) -> dict[str, Any]:
    path = "/v1/findings" + ("?" + urlencode(query) if query else "")
    status, answer = api(served, "GET", path, key=served.keys["read"])
    assert status == 200, answer
    assert isinstance(answer, dict)
    return answer


def finding_of(served: Served, signature: str) -> dict[str, Any]:
    found = findings(served, signature=signature)["findings"]
    assert len(found) == 1, found
    finding: dict[str, Any] = found[0]
    return finding


def events_stored(served: Served) -> int:
    status, answer = api(served, "GET", "/v1/project", key=served.keys["read"])
    assert status == 200
    return int(answer["stats"]["events_stored"])


# -- real failures ---------------------------------------------------------------------------


def run_command(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60,
                          check=False)
    return done.returncode, done.stdout, done.stderr


def command_failure(argv: list[str], cwd: Path) -> Failure:
    """What failcode makes of ``argv`` run here (it must fail)."""
    code, out, err = run_command(argv, cwd)
    failure = from_command(argv, code, out, err, cwd=cwd)
    assert isinstance(failure, Failure), failure
    return failure


def unique_word() -> str:
    """Eight random letters: a name of its own (hex digits would read as a volatile token,
    which the signature ignores)."""
    return "".join(secrets.choice(string.ascii_lowercase) for _ in range(8))


def missing_module(cwd: Path, name: str | None = None) -> Failure:
    """``python -c "import <a module that does not exist>"``, a name of its own by default."""
    module = name or f"failcode_missing_{unique_word()}"
    return command_failure([sys.executable, "-c", f"import {module}"], cwd)


def missing_program(cwd: Path, name: str | None = None) -> Failure:
    """A shell running a program that is not installed."""
    program = name or f"failcode-missing-{unique_word()}"
    return command_failure(["sh", "-c", program], cwd)


def provider_failure(stub: ProviderStub, scenario: str, path: str) -> Failure:
    """A provider's real error answer, fetched over HTTP and classified."""
    response = httpx.post(stub.url(scenario) + path, json={"model": "m", "messages": []})
    return classify_http(response.status_code, response.text, dict(response.headers))


def by(failure: Failure, *, agent: str | None = None, version: str | None = None,
       model: str | None = None) -> Failure:
    """``failure`` as produced by an agent (the context keys the service reads)."""
    context = {**failure.context, **{k: v for k, v in (
        ("agent", agent), ("agent_version", version), ("model", model)) if v is not None}}
    return msgspec.structs.replace(failure, context=FrozenDict(context))


def event(failure: Failure, *, ts: datetime | None = None, session: str = "s-1") -> Event:
    name = "tool.failed" if failure.kind == "provider_error" else "command.failed"
    return failure_event(failure, event=name, session=session, ts=ts)


# -- the door --------------------------------------------------------------------------------


class TestEventsDoor:
    def test_jsonl_batch_is_stored(self, service: Served, tmp_path: Path) -> None:
        """A JSONL batch: every event new, stored, counted in its finding."""
        failure = by(missing_program(tmp_path), agent="claude-code", version="1.0.0")
        batch = [event(failure, session=f"s-{i}") for i in range(5)]
        before = events_stored(service)
        answer = post_events(service, batch)
        assert (answer["received"], answer["new"], answer["duplicates"], answer["rejected"]) \
            == (5, 5, 0, 0)
        assert answer["problems"] == []
        assert events_stored(service) == before + 5
        finding = finding_of(service, failure.signature)
        assert (finding["count"], finding["code"], finding["sessions"]) == (
            5, failure.code, 5)

    def test_json_array_batch_is_stored(self, service: Served, tmp_path: Path) -> None:
        """A JSON array of events is read like JSONL."""
        failure = missing_module(tmp_path)
        batch = [event(failure) for _ in range(3)]
        answer = post_events(service, batch, as_array=True)
        assert (answer["received"], answer["new"], answer["duplicates"]) == (3, 3, 0)
        assert finding_of(service, failure.signature)["count"] == 3

    @pytest.mark.parametrize("as_array", [False, True])
    def test_retried_batch_stores_nothing_twice(self, service: Served, tmp_path: Path,
                                                as_array: bool) -> None:
        """The same batch again: new 0, duplicates n; events and finding counts unchanged."""
        failure = missing_module(tmp_path)
        batch = [event(failure, session=f"r-{i}") for i in range(4)]
        first = post_events(service, batch, as_array=as_array)
        stored = events_stored(service)
        again = post_events(service, batch, as_array=as_array)
        assert (first["new"], first["duplicates"]) == (4, 0)
        assert (again["received"], again["new"], again["duplicates"]) == (4, 0, 4)
        assert events_stored(service) == stored
        assert finding_of(service, failure.signature)["count"] == 4
        half = post_events(service, [*batch[:2], event(failure)], as_array=as_array)
        assert (half["new"], half["duplicates"]) == (1, 2)
        assert finding_of(service, failure.signature)["count"] == 5

    def test_bad_lines_are_problems_good_lines_are_stored(self, service: Served,
                                                          tmp_path: Path) -> None:
        """Bad lines are the answer's problems (those read_events finds), good ones stored."""
        failure = missing_module(tmp_path)
        good = [event(failure) for _ in range(3)]
        wrong_version = json.loads(good[0].to_json())
        wrong_version.update(version=999, event_id=good[0].event_id[:-4] + "ZZZZ")
        unknown_field = {**json.loads(good[1].to_json()), "surprise": 1}
        lines = [good[0].to_json(), b"{ this is not json", json.dumps(wrong_version).encode(),
                 good[1].to_json(), json.dumps(unknown_field).encode(), b"[1, 2, 3]",
                 good[2].to_json()]
        body = b"\n".join(lines) + b"\n"
        status, answer = api(service, "POST", "/v1/events", key=service.keys["ingest"],
                             raw=body, content_type="application/x-ndjson")
        assert status == 200, answer
        expected = [p for p in read_events(io.BytesIO(body), name="request body", redacted=True)
                    if isinstance(p, EventProblem)]
        assert (answer["received"], answer["new"], answer["rejected"]) == (
            len(lines), 3, len(expected))
        assert [(p["code"], p["message"]) for p in answer["problems"]] == [
            (p.failure().code, p.failure().message) for p in expected]
        assert finding_of(service, failure.signature)["count"] == 3

    def test_a_lone_surrogate_costs_an_array_no_more_than_jsonl(self, service: Served,
                                                                 tmp_path: Path) -> None:
        """One event whose session is a lone surrogate escape (valid JSON text, no valid
        UTF-8): a JSON array body is read as its JSONL lines are, the other events stored."""
        answers = []
        for as_array in (False, True):
            failure = missing_module(tmp_path)
            events = [event(failure, session=f"{name}-{as_array}")
                      for name in ("first", "SURROGATE", "third")]
            lines = [e.to_json().replace(b'"SURROGATE-', b'"\\ud800-') for e in events]
            assert b"\\ud800" in lines[1]
            body = (b"[" + b",".join(lines) + b"]") if as_array else b"\n".join(lines) + b"\n"
            status, answer = api(service, "POST", "/v1/events", key=service.keys["ingest"],
                                 raw=body, content_type="application/x-ndjson")
            assert status == 200, (as_array, answer)
            assert finding_of(service, failure.signature)["count"] == answer["new"] >= 2
            answers.append({k: answer[k] for k in ("received", "new", "rejected")})
        assert answers[0] == answers[1]
        assert answers[0]["received"] == 3

    def test_body_without_a_valid_event_is_400(self, service: Served) -> None:
        """No valid event at all: 400 FC-DATA-001, nothing stored."""
        before = events_stored(service)
        for body in (b"not json at all\n", b"[]", b"", b"[{\"version\": 1}]"):
            status, answer = api(service, "POST", "/v1/events", key=service.keys["ingest"],
                                 raw=body, content_type="application/x-ndjson")
            assert status == 400, (body, answer)
            assert answer["code"] == FC.DATA_INVALID_INPUT.value
        assert events_stored(service) == before


# -- the queries -----------------------------------------------------------------------------


class Sent(NamedTuple):
    """One event the catalog sent, with what the queries read of it."""

    failure: Failure
    event: Event
    agent: str | None
    version: str | None
    model: str | None


@pytest.fixture(scope="module")
def stub() -> Iterator[ProviderStub]:
    with ProviderStub() as server:
        yield server


class Catalog(NamedTuple):
    served: Served
    sent: list[Sent]

    def signatures(self) -> list[str]:
        return sorted({s.failure.signature for s in self.sent})

    def of(self, signature: str) -> list[Sent]:
        return [s for s in self.sent if s.failure.signature == signature]

    def matching(self, **wanted: str) -> set[str]:
        """Signatures having an event whose attributes all equal ``wanted``."""
        return {s.failure.signature for s in self.sent
                if all(getattr(s, k) == v for k, v in wanted.items())}


@pytest.fixture(scope="module", params=BACKENDS)
def catalog(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
            stub: ProviderStub) -> Iterator[Catalog]:
    """A service holding real failures from three agents, their versions and models, over
    eleven days (the queries' tests only read it)."""
    tmp = tmp_path_factory.mktemp(f"catalog-{request.param}")
    failures = [missing_program(tmp, "failcode-catalog-tool"),
                missing_program(tmp, "failcode-catalog-other"),
                missing_module(tmp, "failcode_catalog_a"),
                missing_module(tmp, "failcode_catalog_b"),
                missing_module(tmp, "failcode_catalog_c"),
                command_failure([sys.executable, "-c", "1/0"], tmp),
                provider_failure(stub, "an_429", "/v1/messages"),
                provider_failure(stub, "oa_429_quota", "/chat/completions"),
                provider_failure(stub, "oa_401", "/chat/completions")]
    producers = [("claude-code", "1.0.0", "opus"), ("claude-code", "1.1.0", "sonnet"),
                 ("codex", "0.9.2", "gpt-5"), (None, None, None)]
    sent: list[Sent] = []
    for index, failure in enumerate(failures):
        for repeat in range(index % 4 + 1):
            agent, version, model = producers[(index + repeat) % len(producers)]
            ts = NOW - timedelta(days=(index * 3 + repeat) % 11, minutes=index + 1)
            made = by(failure, agent=agent, version=version, model=model)
            sent.append(Sent(made, event(made, ts=ts, session=f"cat-{index}-{repeat % 2}"),
                             agent, version, model))
    with running(request.param, tmp) as served:
        answer = post_events(served, [s.event for s in sent])
        assert answer["new"] == len(sent)
        yield Catalog(served, sent)


def all_findings(served: Served, **query: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    offset = 0
    while True:
        page = findings(served, limit=500, offset=offset, **query)
        found.extend(page["findings"])
        offset += 500
        if offset >= page["total"]:
            return found


def _iso(value: datetime) -> str:
    return value.isoformat()


class TestFindingsQueries:
    def test_one_finding_per_signature(self, catalog: Catalog) -> None:
        """Every signature sent is one finding; its count, code, kind and category agree."""
        listed = {f["signature"]: f for f in all_findings(catalog.served)}
        assert sorted(listed) == catalog.signatures()
        for signature, finding in listed.items():
            events = catalog.of(signature)
            first = events[0].failure
            assert finding["count"] == len(events)
            assert (finding["code"], finding["kind"], finding["category"]) == (
                first.code, first.kind.value, first.category.value)
            assert finding["sessions"] == len({s.event.session for s in events})
            assert _time(finding["first_seen"]) == min(s.event.ts for s in events)
            assert _time(finding["last_seen"]) == max(s.event.ts for s in events)

    @pytest.mark.parametrize("status", ["new", "ongoing", "resolved", "regressed", "ignored"])
    def test_status_filter(self, catalog: Catalog, status: str) -> None:
        """``new`` while the first failure is under 7 days old, ``ongoing`` after."""
        now = datetime.now(UTC)
        expected = set()
        for signature in catalog.signatures():
            first = min(s.event.ts for s in catalog.of(signature))
            shown = "new" if (now - first).total_seconds() < NEW_FOR_S else "ongoing"
            if shown == status:
                expected.add(signature)
        found = findings(catalog.served, status=status)
        assert {f["signature"] for f in found["findings"]} == expected
        assert found["total"] == len(expected)
        assert {f["status"] for f in found["findings"]} <= {status}

    def test_category_code_and_kind_filters(self, catalog: Catalog) -> None:
        """``category``, ``code`` and ``kind`` each keep the findings with that value."""
        for field in ("category", "code", "kind"):
            values = {str(getattr(s.failure, field)) for s in catalog.sent}
            assert len(values) > 1, field
            for value in values:
                expected = {s.failure.signature for s in catalog.sent
                            if str(getattr(s.failure, field)) == value}
                found = findings(catalog.served, **{field: value})
                assert {f["signature"] for f in found["findings"]} == expected, (field, value)
                assert found["total"] == len(expected)

    def test_agent_version_and_model_filters(self, catalog: Catalog) -> None:
        """``agent``, ``version``, ``model`` (alone or together) keep findings having a failure
        from that producer."""
        producers = {(s.agent, s.version, s.model) for s in catalog.sent if s.agent}
        for agent, version, model in producers:
            for wanted in ({"agent": agent}, {"version": version}, {"model": model},
                           {"agent": agent, "version": version, "model": model}):
                found = findings(catalog.served, **wanted)
                expected = catalog.matching(**wanted)
                assert {f["signature"] for f in found["findings"]} == expected, wanted
                assert found["total"] == len(expected)
        assert findings(catalog.served, agent="nobody-sent-this")["total"] == 0

    def test_since_and_until(self, catalog: Catalog) -> None:
        """``since`` keeps findings last seen from then on, ``until`` first seen before."""
        for days in (1, 4, 8):
            cut = NOW - timedelta(days=days, hours=12)
            since = {sig for sig in catalog.signatures()
                     if max(s.event.ts for s in catalog.of(sig)) >= cut}
            until = {sig for sig in catalog.signatures()
                     if min(s.event.ts for s in catalog.of(sig)) < cut}
            found = findings(catalog.served, since=_iso(cut))
            assert {f["signature"] for f in found["findings"]} == since, days
            found = findings(catalog.served, until=_iso(cut))
            assert {f["signature"] for f in found["findings"]} == until, days
            both = findings(catalog.served, since=_iso(cut), until=_iso(NOW + DAY))
            assert both["total"] == len(since)

    @pytest.mark.parametrize(("sort", "field", "descending"), [
        ("count", "count", True), ("sessions", "sessions", True),
        ("first_seen", "first_seen", True), ("last_seen", "last_seen", True),
        ("id", "id", False)])
    def test_sort(self, catalog: Catalog, sort: str, field: str, descending: bool) -> None:
        """Each sort orders the findings by its field."""
        listed = findings(catalog.served, sort=sort)["findings"]
        values = [_time(f[field]) if field.endswith("_seen") else f[field] for f in listed]
        assert values == sorted(values, reverse=descending)
        assert len(listed) == len(catalog.signatures())

    def test_paging(self, catalog: Catalog) -> None:
        """Pages of ``limit`` from ``offset`` cover every finding once; ``total`` is all."""
        everything = [f["id"] for f in findings(catalog.served, sort="id")["findings"]]
        paged: list[int] = []
        for offset in range(0, len(everything) + 2, 2):
            page = findings(catalog.served, sort="id", limit=2, offset=offset)
            assert page["total"] == len(everything)
            assert (page["limit"], page["offset"]) == (2, offset)
            paged.extend(f["id"] for f in page["findings"])
        assert paged == everything
        assert findings(catalog.served, limit=2, offset=10_000)["findings"] == []

    def test_signature_lookup(self, catalog: Catalog) -> None:
        """``signature`` finds its one finding; a signature never sent finds none."""
        for signature in catalog.signatures():
            assert finding_of(catalog.served, signature)["signature"] == signature
        assert findings(catalog.served, signature="tool_error:x:y:none:00000000")["total"] == 0

    def test_finding_detail(self, catalog: Catalog) -> None:
        """``GET /v1/findings/{id}``: failures per UTC day, per producer, latest occurrences."""
        for finding in all_findings(catalog.served):
            status, detail = api(catalog.served, "GET", f"/v1/findings/{finding['id']}",
                                 key=catalog.served.keys["read"])
            assert status == 200, detail
            sent = catalog.of(finding["signature"])
            assert detail["finding"] == finding
            days = Counter(s.event.ts.astimezone(UTC).date().isoformat() for s in sent)
            assert dict(detail["days"]) == dict(days)
            versions = Counter((s.agent, s.version, s.model) for s in sent)
            assert {(v["agent"], v["version"], v["model"]): v["count"]
                    for v in detail["versions"]} == dict(versions)
            latest = sorted(sent, key=lambda s: (s.event.ts, s.event.event_id), reverse=True)
            assert [o["event_id"] for o in detail["occurrences"]] == [
                s.event.event_id for s in latest[:10]]
            assert {o["session"] for o in detail["occurrences"]} <= {
                s.event.session for s in sent}


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)


# -- the lifecycle ---------------------------------------------------------------------------


def change(served: Served, finding_id: int, action: str, *, key: str | None = None,
           payload: Any = None) -> tuple[int, Any]:
    return api(served, "POST", f"/v1/findings/{finding_id}/{action}",
               key=key or served.keys["admin"], payload=payload)


class TestLifecycle:
    def test_resolved_in_a_version(self, service: Served, tmp_path: Path) -> None:
        """Resolved in 2.0.0: a failure from 1.9.0 leaves it resolved, one from 2.0.1 makes
        it regressed."""
        failure = by(missing_module(tmp_path), agent="claude-code", version="1.8.0")
        post_events(service, [event(failure)])
        finding_id = finding_of(service, failure.signature)["id"]
        status, resolved = change(service, finding_id, "resolve",
                                  payload={"in_version": "2.0.0"})
        assert status == 200, resolved
        assert (resolved["status"], resolved["resolved_in"]) == ("resolved", "2.0.0")
        post_events(service, [event(by(failure, version="1.9.0"))])
        still = finding_of(service, failure.signature)
        assert (still["status"], still["count"], still["regressions"]) == ("resolved", 2, 0)
        post_events(service, [event(by(failure, version="2.0.1"))])
        back = finding_of(service, failure.signature)
        assert (back["status"], back["count"], back["regressions"]) == ("regressed", 3, 1)
        assert back["last_version"] == "2.0.1"

    def test_resolved_without_a_version(self, service: Served, tmp_path: Path) -> None:
        """Resolved without a version: any later failure, of any version or none, regresses."""
        failure = missing_program(tmp_path)
        post_events(service, [event(by(failure, agent="codex", version="9.9.9"))])
        finding_id = finding_of(service, failure.signature)["id"]
        status, resolved = change(service, finding_id, "resolve")
        assert status == 200
        assert (resolved["status"], resolved["resolved_in"]) == ("resolved", None)
        post_events(service, [event(failure)])  # no agent, no version
        assert finding_of(service, failure.signature)["status"] == "regressed"

    def test_ignored_stays_ignored_and_reopen_opens(self, service: Served,
                                                    tmp_path: Path) -> None:
        """Ignored: failures count, nothing reopens it; reopened: open (``new``) again."""
        failure = missing_module(tmp_path)
        post_events(service, [event(failure)])
        finding_id = finding_of(service, failure.signature)["id"]
        status, ignored = change(service, finding_id, "ignore")
        assert (status, ignored["status"]) == (200, "ignored")
        post_events(service, [event(by(failure, version="99.0")), event(failure)])
        kept = finding_of(service, failure.signature)
        assert (kept["status"], kept["count"]) == ("ignored", 3)
        status, resolved = change(service, finding_id, "resolve", payload={"in_version": "1"})
        assert (status, resolved["status"]) == (200, "resolved")
        status, reopened = change(service, finding_id, "reopen")
        assert status == 200
        assert (reopened["status"], reopened["resolved_in"]) == ("new", None)
        assert {f["id"] for f in findings(service, status="new")["findings"]} >= {finding_id}

    def test_only_admin_keys_change_a_finding(self, service: Served, tmp_path: Path) -> None:
        """Read and ingest keys cannot resolve, ignore or reopen (403); nothing changes."""
        failure = missing_module(tmp_path)
        post_events(service, [event(failure)])
        before = finding_of(service, failure.signature)
        for scope in ("read", "ingest"):
            for action, payload in (("resolve", {"in_version": "2.0.0"}), ("resolve", None),
                                    ("ignore", None), ("reopen", None)):
                status, answer = change(service, before["id"], action,
                                        key=service.keys[scope], payload=payload)
                assert status == 403, (scope, action, answer)
                assert answer["code"] == FC.SVC_FORBIDDEN.value
        assert finding_of(service, failure.signature) == before

    def test_bad_resolve_bodies_are_400(self, service: Served, tmp_path: Path) -> None:
        """An empty version or an unknown field: 400 naming the field; nothing changes."""
        failure = missing_module(tmp_path)
        post_events(service, [event(failure)])
        before = finding_of(service, failure.signature)
        for payload in ({"in_version": ""}, {"in_version": "1.0", "why": "x"},
                        {"in_version": 3}):
            status, answer = change(service, before["id"], "resolve", payload=payload)
            assert status == 400, (payload, answer)
            assert answer["code"] == FC.DATA_INVALID_INPUT.value
        assert finding_of(service, failure.signature) == before


class TestCli:
    def test_store_findings_lists_what_the_api_lists(self, service: Served,
                                                     tmp_path: Path) -> None:
        """``failcode store findings --project web --json`` shows the API's findings."""
        post_events(service, [event(missing_module(tmp_path))])
        listed = json.loads(failcode("store", "findings", "--project", "web", "--limit",
                                     "10000", "--json", store=service.store))
        over_http = all_findings(service)
        assert listed["total"] == len(over_http)
        assert {(f["id"], f["signature"], f["status"], f["count"]) for f in listed["findings"]} \
            == {(f["id"], f["signature"], f["status"], f["count"]) for f in over_http}

    def test_store_resolve_ignore_reopen(self, service: Served, tmp_path: Path) -> None:
        """The CLI's status changes (by id or signature) are what the API then shows, and
        a resolution in a version is kept as the API's is."""
        failure = by(missing_module(tmp_path), version="3.0.0")
        post_events(service, [event(failure)])
        finding_id = finding_of(service, failure.signature)["id"]
        failcode("store", "resolve", str(finding_id), "--in-version", "3.1", "--project", "web",
                 store=service.store)
        shown = finding_of(service, failure.signature)
        assert (shown["status"], shown["resolved_in"]) == ("resolved", "3.1")
        post_events(service, [event(failure)])  # 3.0.0 < 3.1: stays resolved
        assert finding_of(service, failure.signature)["status"] == "resolved"
        post_events(service, [event(by(failure, version="3.1"))])
        assert finding_of(service, failure.signature)["status"] == "regressed"
        failcode("store", "ignore", failure.signature, "--project", "web", store=service.store)
        assert finding_of(service, failure.signature)["status"] == "ignored"
        failcode("store", "reopen", failure.signature, "--project", "web", store=service.store)
        assert finding_of(service, failure.signature)["status"] == "new"


class TestRetention:
    @pytest.fixture(params=BACKENDS)
    def pruning(self, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
        """A service that enforces retention every second."""
        with running(request.param, tmp_path, extra=("--prune-interval", "1")) as served:
            yield served

    def test_old_events_are_pruned_and_counts_stay(self, pruning: Served,
                                                   tmp_path: Path) -> None:
        """Retention 1 day: events older than that go, newer stay; findings keep counting
        every failure they saw."""
        failure = missing_module(tmp_path)
        other = missing_program(tmp_path)
        old = [event(failure, ts=NOW - timedelta(days=3, minutes=i), session="old-a")
               for i in range(4)]
        old += [event(other, ts=NOW - timedelta(days=2), session="old-b")]
        recent = [event(failure, ts=NOW - timedelta(minutes=5), session="new-a")
                  for _ in range(2)]
        post_events(pruning, [*old, *recent])
        # what every aggregate must say before and after, from the events posted
        counts = {failure.signature: 6, other.signature: 1}
        sessions = {failure.signature: 2, other.signature: 1}  # old-a and new-a; old-b
        per_session = {"old-a": 4, "old-b": 1, "new-a": 2}  # failures = events here

        def aggregates() -> tuple[dict[str, int], dict[str, int], dict[str, int], int]:
            found = all_findings(pruning)
            _status, project = api(pruning, "GET", "/v1/project", key=pruning.keys["read"])
            return ({f["signature"]: f["count"] for f in found},
                    {f["signature"]: f["sessions"] for f in found},
                    _session_rows(pruning), project["stats"]["sessions"])

        before = aggregates()
        assert before == (counts, sessions, per_session, 3)
        assert events_stored(pruning) == 7
        failcode("project", "retention", "web", "1", store=pruning.store)
        deadline = time.monotonic() + 60
        while events_stored(pruning) != len(recent) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert events_stored(pruning) == len(recent)
        assert aggregates() == before
        status, detail = api(pruning, "GET", f"/v1/findings/"
                             f"{finding_of(pruning, failure.signature)['id']}",
                             key=pruning.keys["read"])
        assert status == 200
        assert [o["event_id"] for o in detail["occurrences"]] == sorted(
            (e.event_id for e in recent), reverse=True)


def _session_rows(served: Served) -> dict[str, int]:
    """Each session's failures as the dashboard's sessions page lists them (its one page)."""
    status, _headers, page = served.request("GET", "/ui/sessions",
                                            headers={"Cookie": served.session_cookie()})
    assert status == 200, page
    rows = re.findall(r'<tr data-failures="(\d+)"><td><a href="[^"]*">([^<]+)</a>',
                      page.decode())
    return {html.unescape(name): int(failures) for failures, name in rows}


# -- the classify door -----------------------------------------------------------------------


class TestClassifyDoor:
    def test_command_result(self, service: Served, tmp_path: Path) -> None:
        """A command's result: the record failcode's from_command makes of it."""
        program = f"failcode-missing-{unique_word()}"
        argv = ["sh", "-c", program]
        exit_code, out, err = run_command(argv, tmp_path)
        local = from_command(argv, exit_code, out, err)
        assert isinstance(local, Failure)
        status, answer = api(service, "POST", "/v1/classify", key=service.keys["ingest"],
                             payload={"command": {"argv": argv, "exit_code": exit_code,
                                                  "stdout": out, "stderr": err},
                                      "session": "c-1", "context": {"agent": "claude-code"}})
        assert status == 200, answer
        assert answer["kind"] == "failure"
        assert (answer["code"], answer["signature"], answer["category"]) == (
            local.code, local.signature, local.category.value)
        assert answer["failure"]["context"]["agent"] == "claude-code"
        assert answer["failure"]["context"]["session"] == "c-1"
        assert answer["locale"] == "en"

    def test_command_that_succeeded_is_none(self, service: Served, tmp_path: Path) -> None:
        """A command that exited 0 is no failure."""
        argv = [sys.executable, "-c", "print('fine')"]
        exit_code, out, err = run_command(argv, tmp_path)
        status, answer = api(service, "POST", "/v1/classify", key=service.keys["read"],
                             payload={"command": {"argv": argv, "exit_code": exit_code,
                                                  "stdout": out, "stderr": err}})
        assert (status, answer["kind"], answer["failure"]) == (200, "none", None)

    def test_http_error(self, service: Served, stub: ProviderStub) -> None:
        """A provider's real error answer: the record classify_http makes of it, and the
        decision honours its Retry-After."""
        response = httpx.post(stub.url("an_429") + "/v1/messages", json={})
        headers = dict(response.headers)
        local = classify_http(response.status_code, response.text, headers)
        status, answer = api(service, "POST", "/v1/classify", key=service.keys["admin"],
                             payload={"http": {"status": response.status_code,
                                               "body": response.text, "headers": headers}})
        assert status == 200, answer
        assert (answer["code"], answer["signature"], answer["retryable"]) == (
            local.code, local.signature, True)
        assert answer["decision"]["action"] == "retry"
        assert answer["decision"]["server_delay_s"] == float(headers["retry-after"])

    @pytest.mark.parametrize("header", ["de-DE,de;q=0.9,en;q=0.5", "de", "fr;q=0.9, de;q=0.5"])
    def test_accept_language_picks_the_user_text_language(self, service: Served,
                                                          tmp_path: Path, header: str) -> None:
        """``Accept-Language`` naming a shipped language: the user text is in it, exactly as
        render_user writes the returned record in that language."""
        argv = ["sh", "-c", f"failcode-missing-{unique_word()}"]
        exit_code, out, err = run_command(argv, tmp_path)
        payload = {"command": {"argv": argv, "exit_code": exit_code, "stdout": out,
                               "stderr": err}}
        status, german = api(service, "POST", "/v1/classify", key=service.keys["read"],
                             payload=payload, headers={"Accept-Language": header})
        assert status == 200, german
        status, english = api(service, "POST", "/v1/classify", key=service.keys["read"],
                              payload=payload)
        assert status == 200
        assert (german["locale"], english["locale"]) == ("de", "en")
        assert german["user_text"] != english["user_text"]
        returned = Failure.from_dict(german["failure"])
        assert german["user_text"] == render_user(
            returned, locale="de", decision=decide(returned, History()))

    def test_unshipped_language_is_english(self, service: Served) -> None:
        """A language failcode ships no catalog for falls back to English."""
        status, answer = api(service, "POST", "/v1/classify", key=service.keys["read"],
                             payload={"exception": {"type": "TimeoutError",
                                                    "message": "read timed out"}},
                             headers={"Accept-Language": "xx-YY, zz;q=0.5"})
        assert (status, answer["locale"]) == (200, "en")
