"""The dashboard in a real headless Chromium, over a real ``failcode serve`` on both backends.

The service is seeded the way a team fills it: ``failcode triage ../shared/data/agent-sessions
--report-to URL`` (the real sessions, triaged and uploaded), plus failures of commands run
here posted by the client (``failcode.report_to``) for the live and regression checks. What a
page should show is read from the service's own API (``/v1/findings``...), never written here.

Rules tested:

- A page without a session redirects to sign-in and back; an ingest key cannot sign in; the
  session cookie is HttpOnly and SameSite=Strict; signing out ends the session.
- Findings are ranked by cost (the API's ``sort=count`` order); a filter changes the URL and
  the list (the list is the API's for the same filter), and the back button restores both.
- A click leads from a finding to its page, and from an occurrence to its session's timeline.
- Resolving as ``admin`` works (the API says so); a ``read`` session has no form and a forged
  POST is refused (403), and a POST without the session's CSRF token is refused.
- An event the client posts appears on the open page without a reload; a regression (a
  failure from a version at or after the one a finding was resolved in) is announced live.
- Compare by version shows a finding seeded only in the newer version as ``new``.
- Every page: no console error, no request to any host but the service, no serious or
  critical axe-core violation at 1280 x 800 and at phone width, reachable by keyboard (Tab
  reaches the navigation); a screenshot of each is kept under ``.artifacts/dashboard/``.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
from typing import TYPE_CHECKING, Any

import pytest

from failcode import Failure, FrozenDict, from_command, report_to
from failcode.events import failure_event
from tests.conftest import BACKENDS
from tests.dashboard._browser import Browser
from tests.service.conftest import Served, failcode, running
from tests.triage._data import sessions_dir

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from selenium.webdriver.remote.webdriver import WebDriver

PAGES = ("/ui/", "/ui/sessions", "/ui/compare?by=version", "/ui/blame", "/ui/loops")


def command_failure(cwd: Path, program: str, *, version: str) -> Failure:
    """A program that is not installed, run here; as reported by an agent of ``version``."""
    argv = ["sh", "-c", program]
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    failure = from_command(argv, done.returncode, done.stdout, done.stderr)
    assert isinstance(failure, Failure)
    import msgspec

    return msgspec.structs.replace(failure, context=FrozenDict(
        {**failure.context, "agent": "lab-agent", "agent_version": version}))


def post(served: Served, failures: list[Failure], session: str) -> None:
    body = b"".join(failure_event(f, event="command.failed", session=f"{session}-{i}").to_json()
                    + b"\n" for i, f in enumerate(failures))
    status, _h, answer = served.request("POST", "/v1/events", key=served.keys["ingest"],
                                        body=body,
                                        headers={"Content-Type": "application/x-ndjson"})
    assert status == 200, answer


def raw(served: Served, method: str, path: str, *, body: bytes | None = None,
        headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request that does not follow redirects: (status, headers in lower case, body)."""
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return (response.status, {k.lower(): v for k, v in response.getheaders()},
                response.read())
    finally:
        connection.close()


def api(served: Served, path: str) -> Any:
    status, answer = served.json("GET", path, key=served.keys["read"])
    assert status == 200, answer
    return answer


@pytest.fixture(scope="module", params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
            ) -> Iterator[Served]:
    """A service holding a real triage run of the shared sessions and two versions' failures."""
    tmp = tmp_path_factory.mktemp(f"dashboard-{request.param}")
    data = sessions_dir()
    with running(request.param, tmp, extra=("--rate", "1000000")) as served:
        env = {**os.environ, "FAILCODE_KEY": served.keys["ingest"]}
        done = subprocess.run([sys.executable, "-m", "failcode", "triage", str(data),
                               "--report-to", served.url], capture_output=True, text=True,
                              timeout=600, env=env, check=False)
        assert done.returncode in (0, 1), done.stderr[-2000:]
        old = command_failure(tmp, "failcode-dash-old-tool", version="1.0.0")
        fresh = command_failure(tmp, "failcode-dash-new-tool", version="2.0.0")
        post(served, [old, old], "v1")
        post(served, [command_failure(tmp, "failcode-dash-old-tool", version="2.0.0"), fresh],
             "v2")
        yield served


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as b:
        yield b


def sign_in(browser: Browser, served: Served, scope: str, then: str = "/ui/") -> None:
    driver = browser.driver
    driver.delete_all_cookies()
    browser.open(served.url + then)
    browser.wait_for("#key")
    assert "/ui/signin" in driver.current_url
    driver.find_element("css selector", "#key").send_keys(served.keys[scope])
    driver.find_element("css selector", "form.signin button").click()
    browser.wait_until(lambda: "/ui/signin" not in driver.current_url)
    browser.wait_until(lambda: driver.find_element("tag name", "body").get_attribute(
        "data-ready") == "1")


def rows(driver: WebDriver, table: str) -> list[Any]:
    return driver.find_elements("css selector", f"#{table} tbody tr")


def check_page(browser: Browser, served: Served, name: str) -> None:
    """No console error, nothing fetched elsewhere, no serious axe violation (desktop and
    phone), Tab reaches the navigation; a screenshot of each width."""
    browser.wait_until(lambda: browser.driver.find_element("tag name", "body").get_attribute(
        "data-ready") == "1")
    assert browser.console_errors() == []
    assert browser.foreign_requests(served.url) == []
    assert browser.serious_violations() == [], name
    browser.screenshot(f"{name}-desktop")
    assert browser.press_tab_until("nav a")
    browser.phone()
    try:
        assert browser.serious_violations() == [], f"{name} at phone width"
        browser.screenshot(f"{name}-phone")
    finally:
        browser.desktop()


# -- access ------------------------------------------------------------------------------------


def test_pages_need_a_session_and_return_after_sign_in(service: Served,
                                                       browser: Browser) -> None:
    sign_in(browser, service, "read", then="/ui/sessions")
    assert browser.driver.current_url.endswith("/ui/sessions")
    cookie = browser.driver.get_cookie("failcode_ui")
    assert cookie is not None
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict", "/ui")
    assert service.keys["read"] not in json.dumps(browser.driver.get_cookies())


def test_an_ingest_key_cannot_sign_in(service: Served) -> None:
    body, form_headers = service.signin_form(service.keys["ingest"])
    status, headers, page = raw(service, "POST", "/ui/signin", body=body, headers=form_headers)
    assert status == 403
    assert "failcode_ui=" not in headers.get("set-cookie", "")
    assert b"read or admin key" in page
    status, headers, _page = raw(service, "GET", "/ui/blame")
    assert status == 303
    assert headers["location"] == "/ui/signin?" + urllib.parse.urlencode({"next": "/ui/blame"})


def test_sign_out_ends_the_session(service: Served, browser: Browser) -> None:
    sign_in(browser, service, "read")
    sid = browser.driver.get_cookie("failcode_ui")
    assert sid is not None
    browser.driver.find_element("css selector", "form.signout button").click()
    browser.wait_for("#key")
    # the old cookie, sent again, is no session any more
    status, headers, _page = raw(service, "GET", "/ui/",
                                 headers={"Cookie": f"failcode_ui={sid['value']}"})
    assert status == 303
    assert headers["location"].startswith("/ui/signin")


# -- findings ----------------------------------------------------------------------------------


def test_findings_are_ranked_by_cost(service: Served, browser: Browser) -> None:
    sign_in(browser, service, "read")
    shown = [r.get_attribute("data-finding") for r in rows(browser.driver, "findings")]
    expected = api(service, "/v1/findings?sort=count&limit=50")["findings"]
    assert shown == [str(f["id"]) for f in expected]
    costs = [int(r.find_elements("css selector", "td.n")[1].text.replace(",", ""))
             for r in rows(browser.driver, "findings")]
    assert costs == sorted(costs, reverse=True)
    check_page(browser, service, "findings")


def test_a_filter_changes_the_url_and_the_list(service: Served, browser: Browser) -> None:
    sign_in(browser, service, "read")
    driver = browser.driver
    before = driver.current_url
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("name", "category")).select_by_visible_text("environment")
    driver.find_element("css selector", "form.filters button").click()
    browser.wait_until(lambda: "category=environment" in driver.current_url)
    expected = api(service, "/v1/findings?category=environment&sort=count&limit=50")
    shown = [r.get_attribute("data-finding") for r in rows(driver, "findings")]
    assert shown == [str(f["id"]) for f in expected["findings"]]
    assert f"{expected['total']} finding" in driver.find_element("css selector", "main p").text
    driver.back()
    browser.wait_until(lambda: driver.current_url == before)
    assert len(rows(driver, "findings")) == min(50, api(service, "/v1/findings")["total"])


def test_click_through_to_a_finding_and_its_session(service: Served, browser: Browser) -> None:
    sign_in(browser, service, "read")
    driver = browser.driver
    first = rows(driver, "findings")[0]
    finding_id = first.get_attribute("data-finding")
    first.find_element("css selector", "td.what a").click()
    browser.wait_until(lambda: driver.current_url.endswith(f"/ui/findings/{finding_id}"))
    expected = api(service, f"/v1/findings/{finding_id}")
    assert driver.find_element("tag name", "h1").text == expected["finding"]["message"]
    check_page(browser, service, "finding")
    link = driver.find_element("css selector", "#occurrences tbody a")
    session = link.text
    link.click()
    browser.wait_for("#timeline")
    assert session in driver.find_element("tag name", "h1").text
    assert rows(driver, "timeline")
    check_page(browser, service, "session")


# -- changing a finding ------------------------------------------------------------------------


def test_resolving_works_for_admin_and_is_refused_for_read(service: Served,
                                                           browser: Browser) -> None:
    finding = api(service, "/v1/findings?sort=count&limit=1&status=ongoing")["findings"][0]
    path = f"/ui/findings/{finding['id']}"
    sign_in(browser, service, "read", then=path)
    driver = browser.driver
    assert driver.find_elements("css selector", "#resolve") == []
    csrf = driver.find_element("css selector", "form.signout input[name=csrf]").get_attribute(
        "value")
    status = driver.execute_async_script("""
        var done = arguments[arguments.length - 1];
        fetch(arguments[0], {method: 'POST', credentials: 'same-origin',
                             headers: {'Content-Type': 'application/x-www-form-urlencoded'},
                             body: 'csrf=' + encodeURIComponent(arguments[1])})
          .then(function (r) { done(r.status); });
    """, path + "/resolve", csrf)
    assert status == 403
    assert api(service, f"/v1/findings/{finding['id']}")["finding"]["status"] == "ongoing"
    sign_in(browser, service, "admin", then=path)
    no_token = driver.execute_async_script("""
        var done = arguments[arguments.length - 1];
        fetch(arguments[0], {method: 'POST', credentials: 'same-origin',
                             headers: {'Content-Type': 'application/x-www-form-urlencoded'},
                             body: 'csrf=forged'}).then(function (r) { done(r.status); });
    """, path + "/ignore")
    assert no_token == 403
    driver.find_element("css selector", "#in_version").send_keys("9.9.9")
    driver.find_element("css selector", "#resolve").click()
    browser.wait_for(".notice")
    assert "resolved in 9.9.9" in driver.find_element("css selector", ".notice").text
    changed = api(service, f"/v1/findings/{finding['id']}")["finding"]
    assert (changed["status"], changed["resolved_in"]) == ("resolved", "9.9.9")
    driver.find_element("css selector", "#reopen").click()
    # the notice of the resolve is still on the page until the redirect after the reopen
    # loads: wait for the reopen's own notice, read in one script call (the page is replaced)
    browser.wait_until(lambda: "reopened" in (driver.execute_script(
        "var n = document.querySelector('.notice'); return n ? n.textContent : '';") or ""))
    assert api(service, f"/v1/findings/{finding['id']}")["finding"]["status"] != "resolved"


# -- live --------------------------------------------------------------------------------------


def test_a_posted_event_appears_without_a_reload(service: Served, browser: Browser,
                                                 tmp_path: Path) -> None:
    sign_in(browser, service, "read", then="/ui/?sort=last_seen")
    driver = browser.driver
    driver.execute_script("window.__still_this_page = 1;")
    failure = command_failure(tmp_path, "failcode-dash-live-tool", version="2.0.0")
    with report_to(service.url, service.keys["ingest"]) as sink:
        sink.emit(failure_event(failure, event="command.failed", session="live-1"))
        assert sink.flush(timeout_s=30)
    # read in one script call: the live update swaps the table in place, so an element found
    # first may be gone by the time its text is asked for
    browser.wait_until(lambda: failure.message in (driver.execute_script(
        "var t = document.getElementById('findings'); return t ? t.textContent : '';") or ""),
        timeout=30)
    assert driver.execute_script("return window.__still_this_page;") == 1
    assert "updated" in driver.find_element("id", "live").text


def test_a_regression_is_announced_live(service: Served, browser: Browser,
                                        tmp_path: Path) -> None:
    failure = command_failure(tmp_path, "failcode-dash-regress-tool", version="3.0.0")
    post(service, [failure], "regress-a")
    finding = api(service, "/v1/findings?signature=" + urllib.parse.quote(
        failure.signature))["findings"][0]
    status, _answer = service.json("POST", f"/v1/findings/{finding['id']}/resolve",
                                   key=service.keys["admin"],
                                   body=json.dumps({"in_version": "3.1.0"}).encode(),
                                   headers={"Content-Type": "application/json"})
    assert status == 200
    sign_in(browser, service, "read")
    driver = browser.driver
    assert driver.find_element("id", "regression").get_attribute("hidden") is not None
    post(service, [command_failure(tmp_path, "failcode-dash-regress-tool", version="3.1.0")],
         "regress-b")
    browser.wait_until(lambda: driver.find_element("id", "regression").is_displayed(),
                       timeout=30)
    alert = driver.find_element("id", "regression")
    assert failure.code in alert.text
    assert alert.find_element("tag name", "a").get_attribute("href").endswith(
        f"/ui/findings/{finding['id']}")


# -- compare, sessions, blame, loops -----------------------------------------------------------


def test_compare_shows_the_seeded_new_finding(service: Served, browser: Browser,
                                              tmp_path: Path) -> None:
    sign_in(browser, service, "read", then="/ui/compare?by=version&a=1.0.0&b=2.0.0")
    driver = browser.driver
    changes = {r.find_element("css selector", "a").get_attribute("href").rsplit("/", 1)[-1]:
               r.find_element("css selector", ".change").text for r in rows(driver, "comparison")}
    fresh = command_failure(tmp_path, "failcode-dash-new-tool", version="2.0.0")
    old = command_failure(tmp_path, "failcode-dash-old-tool", version="1.0.0")
    ids = {f.signature: str(api(service, "/v1/findings?signature=" + urllib.parse.quote(
        f.signature))["findings"][0]["id"]) for f in (fresh, old)}
    assert changes[ids[fresh.signature]] == "new"  # seeded in 2.0.0 only
    assert changes[ids[old.signature]] == "down"  # 2 of 2 failures in 1.0.0, 1 of 2 in 2.0.0
    check_page(browser, service, "compare")


@pytest.mark.parametrize("path", PAGES[1:])
def test_every_page_reads_well(service: Served, browser: Browser, path: str) -> None:
    sign_in(browser, service, "read", then=path)
    assert browser.driver.find_element("tag name", "h1").text
    check_page(browser, service, path.strip("/").split("?")[0].replace("/", "-") or "home")


def test_sessions_hide_the_clean_ones_until_asked(service: Served, browser: Browser) -> None:
    sign_in(browser, service, "read", then="/ui/sessions")
    driver = browser.driver
    failures = [int(r.get_attribute("data-failures")) for r in rows(driver, "sessions")]
    assert failures
    assert all(n > 0 for n in failures)
    assert failures == sorted(failures, reverse=True)
    summary = driver.find_element("css selector", "main p.muted").text
    listed, hidden = (int(n) for n in re.findall(r"(\d+) (?:sessions? listed|without)", summary))
    assert hidden > 0, summary  # the triage run has sessions with outcomes only
    driver.find_element("id", "show-clean").click()
    browser.wait_until(lambda: "clean=1" in driver.current_url)
    after = driver.find_element("css selector", "main p.muted").text
    assert int(after.split()[0]) == listed + hidden, after


def test_a_revoked_key_ends_its_sessions(service: Served, browser: Browser) -> None:
    made = json.loads(failcode("token", "create", "--project", "web", "--scope", "read",
                               "--json", store=service.store))
    driver = browser.driver
    driver.delete_all_cookies()
    browser.open(service.url + "/ui/signin")
    browser.wait_for("#key").send_keys(made["key"])
    driver.find_element("css selector", "form.signin button").click()
    browser.wait_until(lambda: "/ui/signin" not in driver.current_url)
    failcode("token", "revoke", made["key_id"], store=service.store)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        browser.open(service.url + "/ui/blame")
        if "/ui/signin" in driver.current_url:
            break
        time.sleep(0.5)
    assert "/ui/signin" in driver.current_url


def test_compare_by_time_window(service: Served, browser: Browser) -> None:
    """The day of the latest failure (the seeded ones, posted by the fixture) against a day
    long ago: what failed that day is new; the share is failures per failure of the window.
    The day is the stored one, not the clock's: a fixture run before midnight stays right."""
    latest = api(service, "/v1/findings?sort=last_seen&limit=1")["findings"][0]["last_seen"]
    day = latest[:10]
    sign_in(browser, service, "read", then=f"/ui/compare?by=window&a=2001-01-01&b={day}")
    driver = browser.driver
    changes = [r.find_element("css selector", ".change").text for r in rows(driver, "comparison")]
    assert changes
    assert set(changes) == {"new"}
    check_page(browser, service, "compare-window")


def test_how_sessions_ended_is_kept_per_session(service: Served, browser: Browser) -> None:
    """A session whose events are failures posted without saying how it ended (no triage, no
    ``session.ended``) ended ``unknown``: a failure along the way says nothing of the end; the
    triage run's sessions carry the way triage says they ended; the per-day table counts every
    session that says how it ended."""
    sign_in(browser, service, "read", then="/ui/sessions/v2-1?input=")
    driver = browser.driver
    assert driver.find_element("css selector", ".ended").text == "unknown"
    browser.open(service.url + "/ui/sessions?clean=1")
    browser.wait_for("#ended")
    header = [th.text for th in driver.find_elements("css selector", "#ended thead th")][1:]
    assert "failed" not in header
    assert len(header) >= 2  # the triage run's ways
    total = sum(int(td.text) for td in driver.find_elements("css selector",
                                                            "#ended tbody td.n"))
    listed = int(driver.find_element("css selector", "main p.muted").text.split()[0])
    assert 0 < total <= listed
