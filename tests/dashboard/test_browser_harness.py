"""The browser harness itself, on small real pages served over HTTP from 127.0.0.1.

Each check has a page where it must find nothing and one where it must find something, so a
harness that always answers "fine" (or always "broken") fails here before it misleads the
dashboard tests. The foreign host is 127.0.0.2, port 9: nothing listens there, and Chromium
refuses the port anyway (``net::ERR_UNSAFE_PORT``), so the request is seen and no traffic
leaves the machine.
"""
from __future__ import annotations

import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

from tests._paths import REPO
from tests.dashboard._browser import ARTIFACTS, DESKTOP, PHONE, Browser

if TYPE_CHECKING:
    from collections.abc import Iterator

FOREIGN_IMAGE = "http://127.0.0.2:9/x.png"
ICON = '<link rel="icon" href="data:,">'  # no /favicon.ico request (its 404 would log an error)

PAGES = {
    "ok.html": f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Fine</title>{ICON}</head>
<body><main><h1>Fine</h1><p>Nothing to see.</p>
<button id="go" type="button">Go</button></main></body></html>
""",
    "boom.html": f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Boom</title>{ICON}</head>
<body><main><h1>Boom</h1></main>
<script>console.error("boom"); throw new Error("kaput");</script></body></html>
""",
    "foreign.html": f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Foreign</title>{ICON}</head>
<body><main><h1>Foreign</h1><img src="{FOREIGN_IMAGE}" alt="x"></main></body></html>
""",
    "inaccessible.html": f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Inaccessible</title>{ICON}</head>
<body><main><h1>Inaccessible</h1><img src="data:,">
<form><input type="text" name="q"></form></main></body></html>
""",
}


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        """No access log on the test output."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL (``http://127.0.0.1:<port>``) of a server holding :data:`PAGES`."""
    root = tmp_path_factory.mktemp("site")
    for name, text in PAGES.items():
        (root / name).write_text(text, encoding="utf-8")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as b:
        yield b


def test_a_clean_page_logs_no_console_error(browser: Browser, site: str) -> None:
    browser.open(f"{site}/ok.html")
    assert browser.console_errors() == []


def test_console_error_and_uncaught_exception_are_reported(browser: Browser, site: str) -> None:
    browser.open(f"{site}/boom.html")
    # the console call and the uncaught exception: two entries
    errors = browser.wait_until(lambda: (e := browser.console_errors()) and len(e) >= 2 and e)
    assert any('"boom"' in message for message in errors), errors
    assert any("kaput" in message for message in errors), errors


def test_open_starts_fresh_logs(browser: Browser, site: str) -> None:
    browser.open(f"{site}/boom.html")
    browser.wait_until(browser.console_errors)
    browser.open(f"{site}/ok.html")
    assert browser.console_errors() == []
    assert browser.requests() == [f"{site}/ok.html"]


def test_a_same_origin_page_makes_no_foreign_request(browser: Browser, site: str) -> None:
    browser.open(f"{site}/ok.html")
    assert browser.requests() == [f"{site}/ok.html"]
    assert browser.foreign_requests(site) == []
    assert browser.foreign_requests(f"{site}/any/path") == []


def test_a_fresh_browser_has_logged_nothing() -> None:
    """Chromium's own start page (it opens on chrome://new-tab-page...) is not the test's."""
    with Browser() as fresh:
        assert fresh.requests() == []
        assert fresh.console_errors() == []
        assert fresh.driver.current_url == "about:blank"
    fresh.close()  # a second close does nothing


def test_a_request_to_another_host_is_foreign(browser: Browser, site: str) -> None:
    browser.open(f"{site}/foreign.html")
    assert browser.foreign_requests(site) == [FOREIGN_IMAGE]
    # the refused image is also a console error: a failed resource is one
    assert any(FOREIGN_IMAGE in message for message in browser.console_errors())
    # the same URLs, seen from the other host's side: the page itself is the foreign one
    assert browser.foreign_requests("http://127.0.0.2:9") == [f"{site}/foreign.html"]


def test_a_clean_page_has_no_serious_axe_violation(browser: Browser, site: str) -> None:
    browser.open(f"{site}/ok.html")
    assert browser.serious_violations() == []


def test_missing_alt_and_label_are_serious_axe_violations(browser: Browser, site: str) -> None:
    browser.open(f"{site}/inaccessible.html")
    violations = browser.axe()
    rules = {v["id"] for v in browser.serious_violations()}
    assert {"image-alt", "label"} <= rules, violations
    assert all(v["impact"] in {"serious", "critical"} for v in browser.serious_violations())
    # a context narrows the run: the form holds the unlabelled input, not the image
    assert "image-alt" not in {v["id"] for v in browser.axe("form")}


def test_screenshot_writes_a_png_under_artifacts(browser: Browser, site: str) -> None:
    browser.open(f"{site}/ok.html")
    path = browser.screenshot("harness-ok")
    assert path == ARTIFACTS / "harness-ok.png"
    assert path.is_relative_to(REPO / ".artifacts")
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 8
    with pytest.raises(ValueError, match="plain file name"):
        browser.screenshot("../escape")


def test_phone_resize_changes_the_viewport(browser: Browser, site: str) -> None:
    browser.open(f"{site}/ok.html")
    assert browser.viewport()[0] == DESKTOP[0]
    try:
        browser.phone()
        assert browser.driver.execute_script("return window.innerWidth;") == PHONE[0]
    finally:
        browser.desktop()
    assert browser.viewport()[0] == DESKTOP[0]


def test_tab_reaches_the_button(browser: Browser, site: str) -> None:
    browser.open(f"{site}/ok.html")
    assert not browser.active_matches("#go")
    assert browser.press_tab_until("#go")
    assert browser.driver.switch_to.active_element.text == "Go"


def test_tab_never_reaches_what_is_not_there(browser: Browser, site: str) -> None:
    browser.open(f"{site}/ok.html")
    assert not browser.press_tab_until("#absent", max_presses=5)


def test_wait_for_finds_an_element_and_times_out_on_a_missing_one(
        browser: Browser, site: str) -> None:
    from selenium.common.exceptions import TimeoutException

    browser.open(f"{site}/ok.html")
    assert browser.wait_for("#go", timeout=2).tag_name == "button"
    with pytest.raises(TimeoutException):
        browser.wait_for("#absent", timeout=0.3)
    with pytest.raises(TimeoutError):
        browser.wait_until(lambda: False, timeout=0.2)
