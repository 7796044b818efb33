"""Learned suggestions seen in a real browser (issue 39): the dashboard's page of a finding the
rules left unknown, and the ``--html`` triage report of the same failures.

Real parts: a started ``failcode serve`` filled by ``failcode triage --report-to`` from a
trajectory of real tools run in a temporary folder (awk's syntax error, which the rules leave
unknown; Python's, which they know), a remedy reported on Python's through ``/v1/events``,
headless Chromium. What the page must show is read from the service's own API.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from failcode.events import remedy_event
from tests._needs import need_tool
from tests.conftest import BACKENDS
from tests.dashboard._browser import Browser
from tests.dashboard.test_dashboard import check_page, sign_in
from tests.service.conftest import Served, running
from tests.triage.test_suggested import UNKNOWN_TOOLS, Project

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

REMEDY = "close the bracket the parser names"


@pytest.fixture(scope="module", params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
            ) -> Iterator[tuple[Served, Project]]:
    """A service holding a triage run of awk's and Python's syntax errors, and a remedy
    reported on Python's."""
    need_tool("awk")
    tmp = tmp_path_factory.mktemp(f"suggested-{request.param}")
    project = Project(tmp / "work")
    project.root.mkdir()
    project.run(dict(UNKNOWN_TOOLS)["awk"])
    python = project.run(f"{sys.executable} -c 'x = ('")
    with running(request.param, tmp) as served:
        env = {**os.environ, "FAILCODE_KEY": served.keys["ingest"]}
        done = subprocess.run([sys.executable, "-m", "failcode", "triage",
                               str(project.trajectory()), "--report-to", served.url],
                              capture_output=True, text=True, timeout=600, env=env, check=False)
        assert done.returncode in (0, 1), done.stderr[-2000:]
        body = remedy_event(python.failure.signature, REMEDY, worked=True).to_json() + b"\n"
        status, _h, answer = served.request(
            "POST", "/v1/events", key=served.keys["ingest"], body=body,
            headers={"Content-Type": "application/x-ndjson"})
        assert status == 200, answer
        yield served, project


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as b:
        yield b


def test_the_finding_page_shows_the_suggestion_marked(service: tuple[Served, Project],
                                                      browser: Browser) -> None:
    """The unknown finding's page has the marked box with the API's suggestion, the nearest
    examples and the remedy of the stored finding of the suggested kind and class."""
    served, project = service
    awk = project.runs[0].failure
    status, found = served.json("GET", f"/v1/findings?signature={awk.signature}",
                                key=served.keys["read"])
    assert status == 200, found
    finding_id = found["findings"][0]["id"]
    status, detail = served.json("GET", f"/v1/findings/{finding_id}", key=served.keys["read"])
    assert status == 200, detail
    suggested = detail["suggested"]
    assert suggested is not None
    assert [r["known_remedies"][0]["remedy"] for r in detail["suggested_remedies"]] == [REMEDY]
    sign_in(browser, served, "read", f"/ui/findings/{finding_id}")
    box = browser.wait_for("#suggested")
    text = box.text
    assert "a suggestion, not the rules'" in text
    assert f"{suggested['kind']}" in text
    assert f"{round(suggested['confidence'] * 100)}% confident" in text
    assert REMEDY in text
    assert suggested["model"] in text
    assert len(box.find_elements("css selector", "tbody tr")) == len(suggested["nearest"])
    check_page(browser, served, "finding-suggested")


def test_the_html_report_shows_the_suggestion_marked(service: tuple[Served, Project],
                                                     browser: Browser, tmp_path: Path) -> None:
    """The --html report's unknown finding has a visible, marked suggestion; the known one
    has none."""
    _served, project = service
    out = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "failcode", "triage",
                           str(project.trajectory()), "--html", str(out)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    browser.open(out.as_uri())
    spans = browser.driver.find_elements("css selector", "span.suggested")
    assert len(spans) == 1
    assert spans[0].is_displayed()
    assert spans[0].text.startswith("suggested (learned, ")
    assert spans[0].get_attribute("title").startswith("A learned model's suggestion")
    browser.screenshot("report-suggested")
