"""A resolved finding's page says whether the fix worked: one sentence and a small table per
comparison, in a real Chromium at 1280 pixels wide, on both backends.

The service gets the sessions of :data:`tests.service.test_fix_effect.PLAN` (real failures of
commands run here); the sentences expected are written from the plan's counts.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest

from tests.conftest import BACKENDS
from tests.dashboard._browser import DESKTOP, Browser
from tests.dashboard.test_dashboard import sign_in
from tests.service.conftest import running
from tests.service.test_fix_effect import (
    FIXED_IN,
    PLAN,
    failures,
    finding_id,
    post_phase,
    resolve,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.service.conftest import Served

HOSTILE = 'v<img src=x id="injected">'
"""A version typed into the resolve form: shown as text, never as markup."""


@pytest.fixture(scope="module", params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
            ) -> Iterator[tuple[Served, dict[str, int]]]:
    """A service holding the plan: ``a`` and ``b`` resolved in 1.10.0, ``c`` at a time;
    yields the service and the findings' numbers."""
    tmp = tmp_path_factory.mktemp(f"fix-effect-{request.param}")
    with running(request.param, tmp) as served:
        found = failures(tmp)
        post_phase(served, "before", found, datetime.now(UTC) - timedelta(hours=2))
        ids = {name: finding_id(served, failure) for name, failure in found.items()}
        resolve(served, ids["a"], FIXED_IN)
        resolve(served, ids["b"], FIXED_IN)
        resolve(served, ids["c"], None)
        post_phase(served, "after", found, datetime.now(UTC))
        yield served, ids


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as b:
        yield b


def codex(name: str) -> tuple[int, int, int, int]:
    """(sessions, hit) before 1.10.0 and from it on, of codex, read off the plan."""
    rows = [(version, n, hits.get(name, 0)) for agent, version, _p, n, hits in PLAN
            if agent == "codex"]
    before = [(n, h) for version, n, h in rows if version in ("1.9.5", "1.10.0rc1")]
    after = [(n, h) for version, n, h in rows if version in ("1.10.0", "1.11.2")]
    return (sum(n for n, _ in before), sum(h for _, h in before),
            sum(n for n, _ in after), sum(h for _, h in after))


def per_100(hit: int, sessions: int) -> str:
    return f"{round(100 * hit / sessions, 1):g}"


def open_finding(browser: Browser, served: Served, number: int) -> str:
    """The finding's page, signed in with a read key: the fix section's text."""
    sign_in(browser, served, "read", then=f"/ui/findings/{number}")
    return browser.wait_for("#fix-effect").text


def test_a_significant_fall_reads_as_one_sentence_and_a_table(
        service: tuple[Served, dict[str, int]], browser: Browser) -> None:
    """Resolved in 1.10.0: codex's sessions before and since, per 100, down, significant;
    the table has both sides; the section fits a 1280-pixel window."""
    served, ids = service
    n1, h1, n2, h2 = codex("a")
    text = open_finding(browser, served, ids["a"])
    assert (f"Resolved in {FIXED_IN} (codex): before, {h1} of {n1} sessions hit it "
            f"({per_100(h1, n1)} per 100); since, {h2} of {n2} ({per_100(h2, n2)} per 100; "
            "down; significant).") in text
    rows = [row.text for row in browser.driver.find_elements(
        "css selector", "#fix-effect table tbody tr")]
    assert rows == [f"before {FIXED_IN} {n1} {h1} {per_100(h1, n1)}",
                    f"{FIXED_IN} and later {n2} {h2} {per_100(h2, n2)}"]
    assert browser.viewport()[0] == DESKTOP[0]
    wide = browser.driver.execute_script(
        "const s = document.getElementById('fix-effect');"
        "return [s.scrollWidth, s.clientWidth, document.documentElement.scrollWidth,"
        " window.innerWidth];")
    assert wide[0] <= wide[1], wide  # nothing in the section runs past its edge
    assert wide[2] <= wide[3], wide  # and the page does not scroll sideways
    browser.screenshot("fix-effect-desktop")
    assert browser.console_errors() == []
    assert browser.foreign_requests(served.url) == []


def test_a_small_fall_is_too_few_to_tell(service: tuple[Served, dict[str, int]],
                                         browser: Browser) -> None:
    """Resolved in 1.10.0 with a small fall: the sentence says too few sessions to tell."""
    served, ids = service
    n1, h1, n2, h2 = codex("b")
    text = open_finding(browser, served, ids["b"])
    assert (f"before, {h1} of {n1} sessions hit it ({per_100(h1, n1)} per 100); since, {h2} "
            f"of {n2} ({per_100(h2, n2)} per 100; down; too few sessions to tell).") in text


def test_a_fix_at_a_time_that_no_session_since_hit_is_gone(
        service: tuple[Served, dict[str, int]], browser: Browser) -> None:
    """Resolved without a version: every session before the resolution and since; none since
    hit it: gone."""
    served, ids = service
    before = sum(n for *_x, phase, n, _h in PLAN if phase == "before")
    hit = sum(hits.get("c", 0) for *_x, phase, _n, hits in PLAN if phase == "before")
    after = sum(n for *_x, phase, n, _h in PLAN if phase == "after")
    text = open_finding(browser, served, ids["c"])
    assert text.startswith("Did the fix work?\nResolved at ")
    assert (f" UTC: before, {hit} of {before} sessions hit it ({per_100(hit, before)} per 100);"
            f" since, 0 of {after} (gone; significant).") in text


def test_a_version_is_shown_as_text(service: tuple[Served, dict[str, int]],
                                    browser: Browser) -> None:
    """A version holding markup is shown as typed; no session has it yet, so each agent of
    the finding says it has none since. The page keeps its content security policy."""
    served, ids = service
    resolve(served, ids["a"], HOSTILE)
    try:
        status, headers, _page = served.request("GET", f"/ui/findings/{ids['a']}",
                                                headers={"Cookie": served.session_cookie()})
        assert status == 200
        assert "script-src 'self'" in headers["content-security-policy"]
        text = open_finding(browser, served, ids["a"])
        assert f"Resolved in {HOSTILE} (codex): " in text
        assert f"; since, no session of {HOSTILE} or later yet." in text
        assert browser.driver.find_elements("css selector", "#injected") == []
        assert browser.serious_violations("#fix-effect") == []
        browser.screenshot("fix-effect-version-not-seen")
    finally:
        resolve(served, ids["a"], FIXED_IN)  # as the other tests of the module expect it
