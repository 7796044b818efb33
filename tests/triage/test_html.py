"""The --html report in a real headless Chromium: it renders, logs no error, fetches nothing.

Chromium is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``), so the
test sees the page's own console messages, exceptions and network requests, apart from the
browser's background traffic. The screenshot is saved under ``.artifacts/`` (git-ignored).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import os
import select
import shutil
import subprocess
import time
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner

from failcode.cli import main
from failcode.triage import triage
from tests._needs import need_tool
from tests._paths import REPO
from tests.triage._data import session_files, sessions_dir

if TYPE_CHECKING:
    from pathlib import Path

ARTIFACTS = REPO / ".artifacts"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--remote-debugging-pipe"]


def _chromium() -> str:
    return shutil.which("chromium-browser") or need_tool("chromium")


class _Browser:
    """A minimal DevTools client over the pipe (fd 3 in, fd 4 out of Chromium)."""

    def __init__(self, binary: str, profile: Path) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        def wire() -> None:  # Chromium reads commands on fd 3 and answers on fd 4
            read_end, write_end = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self._proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire)  # noqa: PLW1509 - the test starts no threads before this
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read(30)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise AssertionError(f"{method}: {reply['error']}")
                return reply.get("result", {})  # type: ignore[no-any-return]
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._read(max(0.1, deadline - time.monotonic())))

    def _read(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_child], [], [], max(0.0, left))
            if not ready:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise ConnectionError("chromium closed the pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)  # type: ignore[no-any-return]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._to_child, json.dumps({"id": 0, "method": "Browser.close"}).encode()
                     + b"\0")
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    binary = _chromium()
    root = tmp_path_factory.mktemp("html")
    report = root / "report.html"
    result = CliRunner().invoke(main, ["triage", "--html", str(report),
                                       *map(str, session_files(sessions_dir()))])
    assert result.exit_code == 0, result.output
    browser = _Browser(binary, root / "profile")
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target,
                                                         "flatten": True})["sessionId"]
        for domain in ("Page", "Network", "Runtime", "Log"):
            browser.send(f"{domain}.enable", session=session)
        browser.send("Emulation.setDeviceMetricsOverride", {
            "width": 1280, "height": 1800, "deviceScaleFactor": 1, "mobile": False},
            session=session)
        browser.send("Page.navigate", {"url": report.as_uri()}, session=session)
        browser.wait_for("Page.loadEventFired", 30)
        ready = browser.send("Runtime.evaluate", {
            "expression": "document.body.dataset.ready + '|' + "
                          "document.querySelectorAll('svg').length + '|' + "
                          "document.querySelectorAll('details.session').length"},
            session=session)["result"]["value"]
        shown = ("Array.from(document.querySelectorAll('details.session')).filter("
                 "d => !d.hidden).length")
        filtered = browser.send("Runtime.evaluate", {
            "expression": f"var a = {shown}; "
                          "document.querySelector('.bar[data-key=finding][data-value=\"1\"]')"
                          ".dispatchEvent(new MouseEvent('click', {bubbles: true})); "
                          f"var b = {shown}; var chip = !document.getElementById('chip').hidden;"
                          " [a, b, chip].join('|')"}, session=session)["result"]["value"]
        after = browser.send("Page.captureScreenshot", {"format": "png"}, session=session)
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "triage-report-filtered.png").write_bytes(base64.b64decode(after["data"]))
        rest = browser.send("Runtime.evaluate", {
            "expression": "document.getElementById('clear').click(); "
                          f"var c = {shown}; document.getElementById('clean').click(); "
                          f"var d = {shown}; document.getElementById('clean').click(); "
                          "window.scrollTo(0, 0); [c, d].join('|')"},
            session=session)["result"]["value"]
        clicks = f"{filtered}|{rest}"
        shot = browser.send("Page.captureScreenshot", {"format": "png"}, session=session)
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "triage-report.png").write_bytes(base64.b64decode(shot["data"]))
        events = [e for e in browser.events if e.get("sessionId") == session]
    finally:
        browser.close()
    result = triage(session_files(sessions_dir()))
    return {"ready": ready, "events": events, "sessions": len(result.sessions),
            "clicks": clicks, "result": result}


def test_report_renders_its_plots_and_sessions(page: dict[str, Any]) -> None:
    """The script ran, the SVG plots and one collapsible table per session are there."""
    ready, svgs, sessions = page["ready"].split("|")
    assert ready == "1"
    assert int(svgs) >= 3
    assert int(sessions) == page["sessions"]


def test_report_logs_no_console_error(page: dict[str, Any]) -> None:
    """No console error, no uncaught exception, no error log entry."""
    errors = [e for e in page["events"]
              if e.get("method") == "Runtime.exceptionThrown"
              or (e.get("method") == "Runtime.consoleAPICalled"
                  and e["params"].get("type") in {"error", "assert"})
              or (e.get("method") == "Log.entryAdded"
                  and e["params"]["entry"].get("level") == "error")]
    assert errors == []


def test_report_makes_no_outside_request(page: dict[str, Any]) -> None:
    """The page requests nothing but itself (file://) and inline data: URLs."""
    urls = [e["params"]["request"]["url"] for e in page["events"]
            if e.get("method") == "Network.requestWillBeSent"]
    assert urls
    assert [u for u in urls if not u.startswith(("file://", "data:"))] == []


def test_screenshot_is_saved_as_an_artifact(page: dict[str, Any]) -> None:
    """The screenshot is a PNG under .artifacts/."""
    assert (ARTIFACTS / "triage-report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_click_on_a_bar_filters_the_sessions(page: dict[str, Any]) -> None:
    """Sessions with failures are shown, clean ones hidden; a click on the costliest
    finding's bar shows only the sessions it hit, with a chip that clears the filter; the
    toggle shows the clean ones too."""
    result = page["result"]
    failing = sum(1 for s in result.sessions if s.failures)
    first = result.to_dict()["findings"][0]
    before, after, chip, cleared, everything = page["clicks"].split("|")
    assert int(before) == failing
    assert int(after) == first["sessions"]
    assert chip == "true"
    assert int(cleared) == failing
    assert int(everything) == page["sessions"]


def test_the_report_opens_on_what_to_fix_first(tmp_path: Path) -> None:
    """The first table is the ranked findings; every colour has a legend entry; a time axis
    only when the failures span more than a day."""
    from failcode.triage.report._html import render_html

    result = triage(session_files(sessions_dir()))
    html = render_html(result)
    assert html.index("What to fix first") < html.index("<h2 id=\"sessions\">")
    assert html.index("<table>") > html.index("What to fix first")
    for category in ("task", "environment", "transient", "user", "defect"):
        assert f"<b>{category}</b>" in html
    assert "Failing steps over time" in html  # the shared sessions span two years
    assert "date of the failing step" in html
    for session in result.sessions:  # one session spans less than a day
        stamps = [e.timestamp for e in session.failures if e.timestamp is not None]
        if len(stamps) >= 2 and max(stamps) - min(stamps) < 3600:
            one = dataclasses.replace(result, sessions=[session], inputs=[])
            assert "over time" not in render_html(one)
            break
    else:
        pytest.fail("no session with failures less than an hour apart")

