"""The dashboard of ``failcode serve`` over 1,000,000 stored events: server time per page.

Run:  python bench/bench_dashboard.py [--backend sqlite|postgresql|both]
          [--findings-events 1000000] [--requests 40] [--pg URL] [--cache-dir DIR] [--refill]

The store is ``bench_service.py``'s findings store (imported, not copied: the same fill of
``--findings-events`` events over about 2,000 signatures, 50 events a session, the context keys
``agent``, ``agent_version`` and ``model`` of four agents, cached under ``--cache-dir``, default
the system temp dir, with the same cache key, so either bench reuses the other's fill;
``--refill`` ignores the cache). That fill draws each event's signature on its own, so a
session of 50 events hits about 44 signatures and ``session_signatures`` holds about 0.9 rows
per event: harsher on the pages that read it (compare by window, a finding's sessions) than
agent sessions, which mostly repeat a few failures. PostgreSQL comes from ``--pg`` or
``$FAILCODE_TEST_PG_URL``; every schema the run makes is dropped at the end. The service is
the real command, ``python -m failcode serve`` in its own process (``bench_service.served``:
the rate limit raised, pruning off); a ``read`` key is made with ``failcode token create`` and
exchanged for the dashboard's session cookie by ``POST /ui/signin``, which every page request
then carries.

Rules:

- **Pages.** Every page kind of ``/ui`` with several URL variants taken from the store itself:
  ``/ui/`` (the default page, each ``since``, statuses, a category, an agent, a model, a
  version, each sort, offsets to the last page, a combination), ``/ui/findings/{id}`` (the
  findings with the most and the fewest failures, the median one, a regressed and an ignored
  one), ``/ui/sessions`` (offsets to the last page, ``clean=1``), ``/ui/sessions/{name}`` (the
  first of the list, the latest, the median and the oldest session, with and without
  ``input``), ``/ui/compare`` (by version within the two busiest agents, by model, by agent,
  and by window: 1, 7 and 15 UTC days against as many before, the later side ending on the
  store's last day), ``/ui/blame``, ``/ui/loops`` and ``/ui/live``. Before anything is timed
  every variant must answer 200 (the bench stops otherwise, printing the body's first 500
  characters); ``/ui/live`` must say it is signed in.
- **Server time** is the wall time of a request measured by the client, from its first byte
  sent to the answer's last byte read, on one keep-alive ``http.client`` connection over
  loopback. The service sends no ``Server-Timing`` header, so nothing is subtracted: the figure
  includes HTTP parsing and loopback, which ``GET /healthz`` on the same connection (the HTTP
  floor) shows to be about a millisecond.
- **In-process**: beside each request, the same page's data functions called in this process
  on the same store (``_pages.findings_page``, ``finding_page``, ``sessions_page``,
  ``session_page``, ``compare_page``, ``Store.blame``, ``Store.loops``, the two queries of
  ``/ui/live``): the store's part of the page. HTTP minus in-process is templates, the
  session and key checks and HTTP.
- **Order.** 3 untimed warm-up requests per page kind, then ``--requests`` per kind (default 40),
  kinds round-robin, variants in turn within a kind; each request's three steps (HTTP page,
  in-process, ``/healthz``) rotate their order request by request, so drift hits all alike.
- **Goal**: p95 < 300 ms per page kind. Percentiles are nearest-rank on the sorted
  times (``bench_service._pct``): with 40 requests p95 is the second slowest, p99 the slowest.

It prints a table per backend (per page kind: p50 / p95 / p99 / max, in-process p50, the goal
met or not; then per variant HTTP and in-process p50) and, last, one JSON line of every figure.
"""

from __future__ import annotations

import argparse
import http.client
import http.cookies
import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import bench_service
from failcode.service import _pages
from failcode.service._dashboard import _FILTERS, _SINCE, COOKIE, SIGNIN_COOKIE
from failcode.service._findings import Findings, version_key
from failcode.store import open_store

if TYPE_CHECKING:
    from collections.abc import Callable

    from failcode.store import Store

GOAL_MS: Final = 300.0
WARMUP: Final = 3
KINDS: Final = ("findings", "finding", "sessions", "session", "compare", "blame", "loops",
                "live")
SHOWN: Final = {"findings": "/ui/ (findings)", "finding": "/ui/findings/{id}",
                "sessions": "/ui/sessions", "session": "/ui/sessions/{name}",
                "compare": "/ui/compare", "blame": "/ui/blame", "loops": "/ui/loops",
                "live": "/ui/live (JSON)"}


@dataclass(frozen=True)
class Variant:
    """One URL of a page kind and the same page's data functions in this process."""

    kind: str
    label: str
    path: str
    direct: Callable[[], object]


def _one(store: Store, sql: str, params: tuple[Any, ...] = ()) -> Any:
    rows = store.fetch(sql, params)
    return rows[0][0] if rows else None


def _findings_variants(store: Store, findings: Findings) -> list[Variant]:
    """``/ui/`` with filters, sorts and offsets the store's findings make meaningful."""
    total = int(_one(store, "SELECT count(*) FROM svc_findings"))
    category = _one(store, "SELECT s.category FROM svc_findings f JOIN signatures s ON "
                    "s.signature = f.signature GROUP BY s.category ORDER BY count(*) DESC, "
                    "s.category LIMIT 1")
    agent, model = store.fetch("SELECT agent, model FROM svc_finding_versions GROUP BY agent, "
                               "model ORDER BY sum(count) DESC, agent LIMIT 1")[0]
    version = _one(store, "SELECT version FROM svc_finding_versions WHERE version <> '' "
                   "GROUP BY version ORDER BY sum(count) DESC, version LIMIT 1")
    last_page = _pages.PAGE * max(0, (total - 1) // _pages.PAGE)
    queries: list[dict[str, str]] = [
        {}, {"since": "24h"}, {"since": "7d"}, {"since": "90d"}, {"status": "new"},
        {"status": "regressed"}, {"status": "ignored"}, {"category": str(category)},
        {"agent": str(agent)}, {"model": str(model)}, {"version": str(version)},
        {"sort": "sessions"}, {"sort": "last_seen"}, {"sort": "first_seen"},
        {"offset": str(_pages.PAGE)}, {"offset": str(last_page)},
        {"since": "7d", "status": "ongoing", "agent": str(agent), "sort": "last_seen"},
    ]
    out = []
    for query in queries:
        filters: dict[str, Any] = {k: query[k] for k in _FILTERS if k in query}
        since = query.get("since")
        sort = query.get("sort", "count")
        offset = int(query.get("offset", "0"))

        def direct(filters: dict[str, Any] = filters, since: str | None = since,
                   sort: str = sort, offset: int = offset) -> object:
            when = {"since": datetime.now(UTC) - _SINCE[since]} if since else {}
            return _pages.findings_page(store, findings, filters={**filters, **when},
                                        sort=sort, offset=offset)

        label = urlencode(query) or "(default)"
        out.append(Variant("findings", label, "/ui/" + ("?" + urlencode(query) if query else ""),
                           direct))
    return out


def _finding_variants(store: Store, findings: Findings) -> list[Variant]:
    """A few findings: most and fewest failures, the median one, a regressed and an ignored."""
    total = int(_one(store, "SELECT count(*) FROM svc_findings"))
    picks = [
        ("most failures", "SELECT id FROM svc_findings ORDER BY count DESC, id LIMIT 1", ()),
        ("median", "SELECT id FROM svc_findings ORDER BY count DESC, id LIMIT 1 OFFSET ?",
         (total // 2,)),
        ("fewest failures", "SELECT id FROM svc_findings ORDER BY count, id LIMIT 1", ()),
        ("regressed", ("SELECT id FROM svc_findings WHERE status = 'regressed' ORDER BY "
                       "count DESC, id LIMIT 1"), ()),
        ("ignored", ("SELECT id FROM svc_findings WHERE status = 'ignored' ORDER BY count "
                     "DESC, id LIMIT 1"), ()),
    ]
    out = []
    seen: set[int] = set()
    for what, sql, params in picks:
        found = _one(store, sql, params)
        if found is None or int(found) in seen:
            continue
        finding_id = int(found)
        seen.add(finding_id)
        out.append(Variant("finding", f"{finding_id} ({what})", f"/ui/findings/{finding_id}",
                           lambda i=finding_id: _pages.finding_page(store, findings, i)))
    return out


def _sessions_variants(store: Store) -> list[Variant]:
    """``/ui/sessions``: offsets to the last page, with and without the clean sessions."""
    failing = int(_one(store, "SELECT count(*) FROM sessions WHERE failures > 0"))
    every = int(_one(store, "SELECT count(*) FROM sessions"))
    page = _pages.PAGE
    plan = [(False, 0), (False, page), (False, page * (failing // page // 2)),
            (False, page * max(0, (failing - 1) // page)), (True, 0),
            (True, page * (every // page // 2))]
    out = []
    for clean, offset in plan:
        query = {**({"clean": "1"} if clean else {}), **({"offset": str(offset)} if offset else {})}
        out.append(Variant("sessions", urlencode(query) or "(default)",
                           "/ui/sessions" + ("?" + urlencode(query) if query else ""),
                           lambda c=clean, o=offset: _pages.sessions_page(store, clean=c,
                                                                           offset=o)))
    return out


def _session_variants(store: Store) -> list[Variant]:
    """A few sessions' timelines: the list's first, the latest, the median, the oldest."""
    every = int(_one(store, "SELECT count(*) FROM sessions"))
    picks = [
        ("first listed", ("SELECT session, input FROM sessions ORDER BY failures DESC, "
                          "last_us DESC, session LIMIT 1"), (), True),
        ("latest, no input", ("SELECT session, input FROM sessions ORDER BY last_us DESC, "
                              "session LIMIT 1"), (), False),
        ("median", ("SELECT session, input FROM sessions ORDER BY session, input LIMIT 1 "
                    "OFFSET ?"), (every // 2,), True),
        ("oldest", "SELECT session, input FROM sessions ORDER BY first_us, session LIMIT 1", (),
         True),
    ]
    out = []
    for what, sql, params, with_input in picks:
        rows = store.fetch(sql, params)
        if not rows:
            continue
        name, input_ = str(rows[0][0]), str(rows[0][1])
        path = f"/ui/sessions/{quote(name, safe='')}"
        if with_input:
            path += "?" + urlencode({"input": input_})
        out.append(Variant("session", f"{name} ({what})", path,
                           lambda n=name, i=(input_ if with_input else None):
                           _pages.session_page(store, n, i)))
    return out


def _compare_variants(store: Store) -> list[Variant]:
    """``/ui/compare`` by version (within the two busiest agents), model, agent and window."""
    sides: list[tuple[str, str, str]] = []
    by_agent: dict[str, list[str]] = {}
    for agent, version in store.fetch("SELECT agent, version FROM svc_finding_versions WHERE "
                                      "version <> '' GROUP BY agent, version ORDER BY "
                                      "sum(count) DESC, agent, version"):
        by_agent.setdefault(str(agent), []).append(str(version))
    for versions in [v for v in by_agent.values() if len(v) > 1][:2]:
        older, newer = sorted(versions, key=version_key)[-2:]
        sides.append(("version", older, newer))
    for column in ("model", "agent"):
        top = [str(r[0]) for r in store.fetch(
            f"SELECT {column} FROM svc_finding_versions WHERE {column} <> '' GROUP BY {column} "
            f"ORDER BY sum(count) DESC, {column} LIMIT 2")]
        if len(top) == 2:
            sides.append((column, top[1], top[0]))
    last_us = _one(store, "SELECT max(last_us) FROM sessions")
    last = (datetime(1970, 1, 1, tzinfo=UTC)
            + timedelta(microseconds=int(last_us or time.time_ns() // 1000))).date()

    def window(first: int, end: int) -> str:
        return f"{last - timedelta(days=first)}..{last - timedelta(days=end)}"

    sides += [("window", window(13, 7), window(6, 0)), ("window", window(1, 1), window(0, 0)),
              ("window", window(29, 15), window(14, 0))]
    return [Variant("compare", f"by={by} {a} vs {b}",
                    "/ui/compare?" + urlencode({"by": by, "a": a, "b": b}),
                    lambda by=by, a=a, b=b: _pages.compare_page(store, by=by, a=a, b=b))
            for by, a, b in sides]


def _live(store: Store) -> object:
    """What ``/ui/live`` reads (its two queries)."""
    events = store.fetch("SELECT coalesce(sum(count), 0) FROM event_counts")[0][0]
    regressed = store.fetch(
        "SELECT f.id, s.code, s.last_message, f.status_us FROM svc_findings f JOIN "
        "signatures s ON s.signature = f.signature WHERE f.status = 'regressed' "
        "ORDER BY f.status_us DESC LIMIT 5")
    return events, regressed


def variants_of(store: Store, findings: Findings) -> dict[str, list[Variant]]:
    """Every page kind's variants."""
    every = [*_findings_variants(store, findings), *_finding_variants(store, findings),
             *_sessions_variants(store), *_session_variants(store), *_compare_variants(store),
             Variant("blame", "(default)", "/ui/blame",
                     lambda: store.blame(by="code", limit=100)),
             Variant("loops", "(default)", "/ui/loops", lambda: store.loops(limit=100)),
             Variant("live", "(default)", "/ui/live", lambda: _live(store))]
    out: dict[str, list[Variant]] = {kind: [] for kind in KINDS}
    for variant in every:
        out[variant.kind].append(variant)
    empty = [kind for kind, found in out.items() if not found]
    if empty:
        msg = f"the store gave no variant of {empty}: is it filled?"
        raise RuntimeError(msg)
    return out


class Client:
    """One keep-alive connection to the service, signed in to the dashboard."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.cookie = ""

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[float, int, bytes, Any]:
        """(ms, status, body, response) of one request, from its first byte to the last."""
        sent = dict(headers or {})
        if self.cookie:
            sent["Cookie"] = f"{COOKIE}={self.cookie}"
        t0 = time.perf_counter()
        self.connection.request(method, path, body=body, headers=sent)
        response = self.connection.getresponse()
        data = response.read()
        return (time.perf_counter() - t0) * 1000, response.status, data, response

    def sign_in(self, key: str) -> None:
        """Load the sign-in page (its token and cookie), then post the key with them."""
        _ms, status, data, response = self.request("GET", "/ui/signin")
        token = re.search(rb'name="signin" value="([^"]+)"', data)
        page_jar = http.cookies.SimpleCookie(response.getheader("Set-Cookie") or "")
        if status != 200 or token is None or SIGNIN_COOKIE not in page_jar:
            msg = f"GET /ui/signin answered {status} without its token: {data[:500]!r}"
            raise RuntimeError(msg)
        _ms, status, data, response = self.request(
            "POST", "/ui/signin", urlencode({"key": key, "next": "/ui/",
                                              "signin": token.group(1).decode()}).encode(),
            {"Content-Type": "application/x-www-form-urlencoded",
             "Cookie": f"{SIGNIN_COOKIE}={page_jar[SIGNIN_COOKIE].value}"})
        jar = http.cookies.SimpleCookie(response.getheader("Set-Cookie") or "")
        if status != 303 or COOKIE not in jar:
            msg = f"POST /ui/signin answered {status} without a {COOKIE} cookie: {data[:500]!r}"
            raise RuntimeError(msg)
        self.cookie = jar[COOKIE].value

    def page(self, path: str) -> tuple[float, bytes]:
        """GET a page; anything but 200 stops the bench."""
        ms, status, data, _response = self.request("GET", path)
        if status != 200:
            text = data[:500].decode("utf-8", "replace")
            msg = f"GET {path} answered {status}, not 200: {text}"
            raise RuntimeError(msg)
        return ms, data

    def close(self) -> None:
        self.connection.close()


def _ms(call: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    call()
    return (time.perf_counter() - t0) * 1000


def _figures(values: list[float]) -> dict[str, float]:
    pct = bench_service._pct  # the same nearest-rank percentiles
    return {"p50": round(pct(values, 0.5), 2), "p95": round(pct(values, 0.95), 2),
            "p99": round(pct(values, 0.99), 2), "max": round(max(values), 2)}


def bench_pages(backend: bench_service.Backend, item: bench_service.FindingsStore,
                requests: int) -> dict[str, Any]:
    """Every page kind on one backend (see the module)."""
    key = bench_service.cli("token", "create", "--project", "web", "--scope", "read",
                            store=item.control)
    log = backend.tmp / f"serve-dashboard-{backend.name}.log"
    with open_store(item.project) as store:
        findings = Findings(store)
        events = int(_one(store, "SELECT coalesce(sum(count), 0) FROM event_counts"))
        sessions = int(_one(store, "SELECT count(*) FROM sessions"))
        finding_count = int(_one(store, "SELECT count(*) FROM svc_findings"))
        plan = variants_of(store, findings)
        http_ms: dict[str, list[float]] = {kind: [] for kind in KINDS}
        direct_ms: dict[str, list[float]] = {kind: [] for kind in KINDS}
        by_variant: dict[str, dict[str, list[float]]] = {
            f"{v.kind}\x1f{v.label}": {"http": [], "direct": []}
            for variants in plan.values() for v in variants}
        floor_ms: list[float] = []
        with bench_service.served(item.control, log) as (port, _pid):
            client = Client(port)
            try:
                client.sign_in(key)
                for variants in plan.values():  # every URL answers 200 before any timing
                    for variant in variants:
                        body = client.page(variant.path)[1]
                        if variant.kind == "live" and not json.loads(body).get("signed_in"):
                            msg = f"GET {variant.path} is not signed in: {body[:500]!r}"
                            raise RuntimeError(msg)
                        variant.direct()
                for n in range(WARMUP):
                    for variants in plan.values():
                        variant = variants[n % len(variants)]
                        client.page(variant.path)
                        variant.direct()
                        client.page("/healthz")
                turn = 0
                for n in range(requests):
                    for kind, variants in plan.items():
                        variant = variants[n % len(variants)]
                        times = by_variant[f"{kind}\x1f{variant.label}"]
                        steps = ("http", "direct", "floor")
                        k = turn % 3
                        turn += 1
                        for step in steps[k:] + steps[:k]:
                            if step == "http":
                                elapsed = client.page(variant.path)[0]
                                http_ms[kind].append(elapsed)
                                times["http"].append(elapsed)
                            elif step == "direct":
                                elapsed = _ms(variant.direct)
                                direct_ms[kind].append(elapsed)
                                times["direct"].append(elapsed)
                            else:
                                floor_ms.append(client.page("/healthz")[0])
            finally:
                client.close()
    pct = bench_service._pct
    pages = {}
    for kind in KINDS:
        figures = _figures(http_ms[kind])
        pages[kind] = {"requests": len(http_ms[kind]), "variants": len(plan[kind]),
                       "http_ms": figures,
                       "direct_ms": {"p50": round(pct(direct_ms[kind], 0.5), 2),
                                     "p95": round(pct(direct_ms[kind], 0.95), 2)},
                       "goal_met": figures["p95"] < GOAL_MS}
    return {
        "events": events, "findings": finding_count, "sessions": sessions,
        "fill": item.fill, "restored_s": item.restored_s, "cache": item.cache is not None,
        "requests_per_page": requests, "pages": pages,
        "healthz_ms": {"p50": round(pct(floor_ms, 0.5), 2), "p99": round(pct(floor_ms, 0.99), 2)},
        "variants": [{"page": name.split("\x1f")[0], "variant": name.split("\x1f")[1],
                      "requests": len(t["http"]), "http_p50": round(pct(t["http"], 0.5), 2),
                      "http_max": round(max(t["http"]), 2),
                      "direct_p50": round(pct(t["direct"], 0.5), 2)}
                     for name, t in by_variant.items() if t["http"]],
        "all_goals_met": all(p["goal_met"] for p in pages.values()),
    }


def print_pages(label: str, result: dict[str, Any]) -> None:
    fill = result["fill"]
    how = (f"filled in {fill['seconds']:.0f} s" if fill.get("seconds") is not None else "filled")
    if result["restored_s"] is not None:
        how = f"from the cache ({result['restored_s']:.0f} s to restore); when made: {how}"
    print(f"\n## Dashboard pages, {label}: {result['events']:,} stored events, "
          f"{result['findings']:,} findings, {result['sessions']:,} sessions ({how})")
    print(f"  {'page':<22} {'requests':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} "
          f"{'max ms':>8} {'in-proc p50':>12}  p95 < {GOAL_MS:.0f} ms")
    for kind, row in result["pages"].items():
        h = row["http_ms"]
        print(f"  {SHOWN[kind]:<22} {row['requests']:>8} {h['p50']:>8.1f} {h['p95']:>8.1f} "
              f"{h['p99']:>8.1f} {h['max']:>8.1f} {row['direct_ms']['p50']:>12.1f}  "
              f"{'yes' if row['goal_met'] else 'NO'}")
    f = result["healthz_ms"]
    print(f"  {'GET /healthz (floor)':<22} {'':>8} {f['p50']:>8.2f} {'':>8} {f['p99']:>8.2f}")
    print(f"  {'page':<20} {'variant':<58} {'n':>3} {'HTTP p50':>9} {'HTTP max':>9} "
          f"{'in-proc p50':>12}")
    for row in result["variants"]:
        print(f"  {row['page']:<20} {row['variant'][:58]:<58} {row['requests']:>3} "
              f"{row['http_p50']:>9.1f} {row['http_max']:>9.1f} {row['direct_p50']:>12.1f}")


def _arguments() -> tuple[argparse.Namespace, list[str], str]:
    """The command line: (options, backends to run, the PostgreSQL server URL or "")."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--findings-events", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=40, help="timed requests per page kind")
    parser.add_argument("--pg", default=os.environ.get("FAILCODE_TEST_PG_URL", ""))
    parser.add_argument("--cache-dir", type=Path,
                        default=Path(tempfile.gettempdir()) / "failcode-bench-service")
    parser.add_argument("--refill", action="store_true", help="ignore a cached store")
    args = parser.parse_args()
    if args.findings_events < bench_service.FILL_BATCH or args.requests < 1:
        parser.error(f"--findings-events must be >= {bench_service.FILL_BATCH} and "
                     "--requests >= 1")
    names, pg = bench_service.chosen_backends(parser, args)
    return args, names, pg


def main() -> None:
    args, names, pg = _arguments()
    if args.refill:
        for name in names:
            shutil.rmtree(args.cache_dir / bench_service.cache_key(name, args.findings_events),
                          ignore_errors=True)
    t_run = time.perf_counter()
    report: dict[str, Any] = {"bench": "dashboard", "goal_p95_ms": GOAL_MS,
                              "findings_events": args.findings_events}
    failed = False
    with tempfile.TemporaryDirectory(prefix="failcode-bench-dashboard-") as tmp_name:
        tmp = Path(tmp_name)
        work = tmp / "commands"
        work.mkdir()
        outputs = bench_service.capture_outputs(work)  # what a fill is made of, if one is due
        backends = [bench_service.Backend(name, tmp / name, pg) for name in names]
        for backend in backends:
            backend.tmp.mkdir()
        try:
            t0 = time.perf_counter()
            prepared = bench_service.prepare_findings(backends, args.findings_events, outputs,
                                                      args.cache_dir)
            report["prepare_s"] = round(time.perf_counter() - t0, 1)
            for backend in backends:
                result = bench_pages(backend, prepared[backend.name], args.requests)
                print_pages(backend.label, result)
                report[backend.name] = result
                failed |= not result["all_goals_met"]
        finally:
            for backend in backends:
                backend.close()
    report["wall_s"] = round(time.perf_counter() - t_run, 1)
    print(f"\n(whole run {report['wall_s']:.0f} s; every page p95 < {GOAL_MS:.0f} ms: "
          f"{'yes' if not failed else 'NO'})")
    print(json.dumps(report, separators=(",", ":")))


if __name__ == "__main__":
    main()
