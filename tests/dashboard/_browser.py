"""A real headless Chromium for the dashboard tests: Selenium 4, Debian's chromium and driver.

Rules:

- The browser is Debian's ``chromium`` and the driver Debian's ``chromium-driver``
  (``chromedriver``), both found on PATH through :func:`tests._needs.need_tool`, and
  ``selenium`` through :func:`tests._needs.need_module`: outside CI a missing one skips the
  test, under ``CI=true`` it fails it (``scripts/test.sh`` installs all three).
- Nothing is downloaded: the driver's path is given to ``Service`` and the browser's to
  ``options.binary_location``, so Selenium Manager is never asked for either; ``SE_OFFLINE``
  and ``SE_AVOID_STATS`` are set as well, should anything start it anyway. The browser's own
  background traffic (component updates, sync, safe-browsing lists, first-run pages) is off.
- Each :class:`Browser` has a fresh profile in a temporary folder, removed by :meth:`close`.
- :meth:`Browser.console_errors` and :meth:`Browser.requests` cover what the page did since
  the last :meth:`Browser.open`: the driver's logs are read (and emptied) as they are asked
  for, and kept until the next ``open``.
- axe-core is the npm package ``scripts/test.sh`` installs into the repository's git-ignored
  ``.cache/npm`` (:data:`AXE_JS`); :func:`axe_script` skips (fails under ``CI=true``) without it.
- Screenshots go to ``.artifacts/dashboard/<name>.png`` under the repository (git-ignored).

One browser per test module is the intended use (starting Chromium takes about a second)::

    @pytest.fixture(scope="module")
    def browser() -> Iterator[Browser]:
        with Browser() as b:
            yield b
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit

from tests._needs import missing, need_module, need_tool
from tests._paths import REPO

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType

    from selenium.webdriver.chrome.webdriver import WebDriver
    from selenium.webdriver.remote.webelement import WebElement

DESKTOP = (1280, 800)
"""The window size a :class:`Browser` starts with (width, height in CSS pixels)."""
PHONE = (390, 844)
"""A phone's viewport (width, height): :meth:`Browser.phone` resizes to it."""

AXE_JS = REPO / ".cache" / "npm" / "node_modules" / "axe-core" / "axe.min.js"
"""axe-core's browser bundle, installed by ``scripts/test.sh`` (``npm install axe-core@4``)."""
ARTIFACTS = REPO / ".artifacts" / "dashboard"
"""Where :meth:`Browser.screenshot` writes (``.artifacts/`` is git-ignored)."""

SERIOUS = frozenset({"serious", "critical"})
"""The axe impacts :meth:`Browser.serious_violations` keeps."""
LOCAL_SCHEMES = frozenset({"data", "blob", "about"})
"""URL schemes that never reach a host: :meth:`Browser.foreign_requests` ignores them."""
INTERNAL_SCHEMES = frozenset({"chrome", "chrome-untrusted", "chrome-extension", "devtools"})
"""Chromium's own pages (it starts on its new-tab page): what they log or request is never the
page under test's, and the logs leave it out."""

FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-default-apps",
    "--disable-extensions",
)
"""Chromium's command line, besides the profile folder and the window size."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def axe_script() -> str:
    """The text of axe-core's ``axe.min.js``; skips the test (fails when ``CI=true``) if absent."""
    if not AXE_JS.is_file():
        missing(f"axe-core is not installed at {AXE_JS.relative_to(REPO)} "
                "(npm install --prefix .cache/npm axe-core@4)")
    return AXE_JS.read_text(encoding="utf-8")


def _scheme(text: str) -> str:
    """The scheme of ``text`` read as a URL, in lower case (empty when it has none)."""
    try:
        return urlsplit(text).scheme.lower()
    except ValueError:  # not a URL at all (say, an unbalanced "[")
        return ""


def origin_of(url: str) -> str:
    """``scheme://host:port`` of ``url`` (the port always written, defaults filled in)."""
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443, "ws": 80, "wss": 443}.get(parts.scheme, 0)
    return f"{parts.scheme}://{parts.hostname or ''}:{port}"


class Browser:
    """One headless Chromium under chromedriver, with its console and network logs at hand.

    Starts in :meth:`__init__` (or on ``with``); :meth:`close` (or leaving the ``with`` block)
    quits the browser and removes its profile folder. A missing tool or package skips the test,
    or fails it under ``CI=true``.
    """

    def __init__(self, width: int = DESKTOP[0], height: int = DESKTOP[1]) -> None:
        """Start Chromium with a ``width`` x ``height`` window and a fresh profile."""
        need_module("selenium")
        chromium = need_tool("chromium")
        chromedriver = need_tool("chromedriver")
        # Selenium Manager only runs when a path is missing; these keep it offline regardless.
        os.environ.setdefault("SE_OFFLINE", "true")
        os.environ.setdefault("SE_AVOID_STATS", "true")
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self._profile = Path(tempfile.mkdtemp(prefix="failcode-chromium-"))
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in (*FLAGS, f"--user-data-dir={self._profile}",
                     f"--window-size={width},{height}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        try:
            self._driver: WebDriver = webdriver.Chrome(
                service=Service(executable_path=chromedriver), options=options)
        except BaseException:
            shutil.rmtree(self._profile, ignore_errors=True)
            raise
        self._closed = False
        self._driver.set_script_timeout(60)
        self._console: list[dict[str, Any]] = []
        self._requests: list[str] = []
        # Chromium starts on its own new-tab page: leave it (its late log entries are filtered)
        self.open("about:blank")

    # -- life cycle ------------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Quit the browser and remove its profile folder (a second call does nothing)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._driver.quit()
        finally:
            shutil.rmtree(self._profile, ignore_errors=True)

    @property
    def driver(self) -> WebDriver:
        """The Selenium driver itself, for anything this class does not wrap."""
        return self._driver

    # -- navigation --------------------------------------------------------------------------

    def open(self, url: str) -> None:
        """Load ``url`` (returns once its ``load`` event fired) and start fresh logs for it.

        The console and request logs of the previous page are dropped first, so what
        :meth:`console_errors` and :meth:`requests` report afterwards is this page's.
        """
        self._drain()
        self._console.clear()
        self._requests.clear()
        self._driver.get(url)

    def wait_for(self, css: str, timeout: float = 10.0) -> WebElement:
        """The first element matching ``css``, waiting up to ``timeout`` seconds for it to exist.

        Raises selenium's ``TimeoutException`` when none appears in time.
        """
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions
        from selenium.webdriver.support.wait import WebDriverWait

        element: WebElement = WebDriverWait(self._driver, timeout).until(
            expected_conditions.presence_of_element_located((By.CSS_SELECTOR, css)))
        return element

    def wait_until(self, condition: Callable[[], Any], timeout: float = 10.0,
                   interval: float = 0.05) -> Any:
        """Call ``condition`` until it returns something truthy, and return that.

        Raises ``TimeoutError`` (naming the last value) when ``timeout`` seconds pass first.
        """
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() >= deadline:
                raise TimeoutError(f"not true within {timeout} s (last value: {value!r})")
            time.sleep(interval)

    # -- window size -----------------------------------------------------------------------

    def resize(self, width: int, height: int) -> None:
        """Resize the window to ``width`` x ``height``; waits until the page's viewport follows."""
        self._driver.set_window_size(width, height)
        self.wait_until(lambda: self.viewport()[0] == width, timeout=5.0)

    def phone(self) -> None:
        """Resize to a phone's viewport (:data:`PHONE`, 390 x 844)."""
        self.resize(*PHONE)

    def desktop(self) -> None:
        """Resize back to the starting desktop size (:data:`DESKTOP`, 1280 x 800)."""
        self.resize(*DESKTOP)

    def viewport(self) -> tuple[int, int]:
        """The page's ``window.innerWidth`` and ``window.innerHeight``."""
        width, height = self._driver.execute_script(
            "return [window.innerWidth, window.innerHeight];")
        return int(width), int(height)

    # -- what the page did -------------------------------------------------------------------

    def _drain(self) -> None:
        """Move the driver's new log entries (it forgets them once read) into this object.

        Entries of Chromium's own pages (:data:`INTERNAL_SCHEMES`) are dropped: a console
        message starting with such a URL, a request made by such a document.
        """
        self._console.extend(
            entry for entry in self._driver.get_log("browser")
            if _scheme(str(entry.get("message", "")).split(" ", 1)[0]) not in INTERNAL_SCHEMES)
        for entry in self._driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") != "Network.requestWillBeSent":
                continue
            params = message["params"]
            if _scheme(params.get("documentURL", "")) not in INTERNAL_SCHEMES:
                self._requests.append(params["request"]["url"])

    def console_log(self) -> list[dict[str, Any]]:
        """Every browser-log entry since :meth:`open`: dicts with level, message, source."""
        self._drain()
        return list(self._console)

    def console_errors(self) -> list[str]:
        """The messages of the ``SEVERE`` browser-log entries since :meth:`open`.

        Chromium logs as ``SEVERE``: ``console.error(...)`` calls, uncaught exceptions and
        unhandled promise rejections, resources that failed to load (a 404 answer, a refused
        connection, a blocked URL) and Content-Security-Policy violations. Each message starts
        with where it came from (the script's URL and line, or the failed resource's URL), and
        a console call's string arguments appear quoted. A page without an icon makes the
        browser ask for ``/favicon.ico``; a 404 answer to it is an error like any other.
        """
        return [entry["message"] for entry in self.console_log() if entry["level"] == "SEVERE"]

    def requests(self) -> list[str]:
        """Every URL the page asked for since :meth:`open`, in order, the page itself first.

        Collected from the DevTools ``Network.requestWillBeSent`` events: documents, scripts,
        styles, images, fonts, fetch/XHR, and requests the browser blocked or that failed.
        """
        self._drain()
        return list(self._requests)

    def foreign_requests(self, allowed_origin: str) -> list[str]:
        """The requested URLs (:meth:`requests`) not on ``allowed_origin``.

        Origins compare as scheme, host and port (``http://127.0.0.1:8000``, trailing path
        ignored); ``data:``, ``blob:`` and ``about:`` URLs never leave the page and are ignored.
        """
        allowed = origin_of(allowed_origin)
        return [url for url in self.requests()
                if urlsplit(url).scheme not in LOCAL_SCHEMES and origin_of(url) != allowed]

    # -- artefacts -------------------------------------------------------------------------

    def screenshot(self, name: str) -> Path:
        """Save the viewport as ``.artifacts/dashboard/<name>.png`` and return that path.

        ``name`` is a plain file name (letters, digits, ``.``, ``_``, ``-``); an existing file
        of that name is replaced.
        """
        if not _NAME.fullmatch(name):
            raise ValueError(f"screenshot name must be a plain file name, not {name!r}")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        path.write_bytes(self._driver.get_screenshot_as_png())
        return path

    # -- accessibility -----------------------------------------------------------------------

    def axe(self, context: str | None = None) -> list[dict[str, Any]]:
        """Run axe-core on the page (or on the elements matching the CSS ``context``).

        Returns axe's violations as it reports them: dicts with ``id`` (the rule, such as
        ``image-alt``), ``impact`` (minor, moderate, serious or critical), ``help``,
        ``helpUrl`` and ``nodes``. axe is injected into the current page on each call.
        Raises ``RuntimeError`` when axe itself fails (say, a ``context`` matching nothing).
        """
        self._driver.execute_script(axe_script())
        result = self._driver.execute_async_script(
            """
            const [context, done] = arguments;
            axe.run(context === null ? document : context, {resultTypes: ["violations"]})
              .then(r => done({violations: r.violations}), e => done({error: String(e)}));
            """, context)
        if "error" in result:
            raise RuntimeError(f"axe.run failed: {result['error']}")
        violations: list[dict[str, Any]] = result["violations"]
        return violations

    def serious_violations(self, context: str | None = None) -> list[dict[str, Any]]:
        """The violations of :meth:`axe` whose impact is serious or critical."""
        return [v for v in self.axe(context) if v.get("impact") in SERIOUS]

    # -- keyboard --------------------------------------------------------------------------

    def active_matches(self, css: str) -> bool:
        """Whether the focused element (``document.activeElement``) matches ``css``."""
        return bool(self._driver.execute_script(
            "const a = document.activeElement; return a !== null && a.matches(arguments[0]);",
            css))

    def press_tab_until(self, css: str, max_presses: int = 50) -> bool:
        """Press Tab until the focused element matches ``css``; whether it ever did.

        The focus already on a match counts (no key pressed); otherwise at most
        ``max_presses`` Tab presses are sent, each to whatever has the focus, as a keyboard
        user would.
        """
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.keys import Keys

        if self.active_matches(css):
            return True
        for _ in range(max_presses):
            ActionChains(self._driver).send_keys(Keys.TAB).perform()
            if self.active_matches(css):
                return True
        return False
