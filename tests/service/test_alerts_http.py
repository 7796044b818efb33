"""Alerts end to end: a webhook made through the API, a receiver on 127.0.0.1, events posted to
the running service. The receiver gets exactly the alerts the rules say, throttled, and the
webhook's secret never shows in an answer or the service's log."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

from failcode import FC
from failcode.events import failure_event
from failcode.service._alerts import ALLOW_ENV
from tests.service.conftest import running

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from failcode import Failure
    from tests.service.conftest import Served


class Receiver:
    """A webhook receiver: every POST's JSON body, in order."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        received = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                with received.lock:
                    received.bodies.append({"rule": self.headers.get("X-Failcode-Alert"),
                                            "path": self.path, **body})
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                """Quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook?token=s3cr3t-hook-token"

    def settled(self, count: int, *, quiet_s: float = 1.5, timeout_s: float = 60) -> list[
            dict[str, Any]]:
        """The bodies once ``count`` arrived and nothing more came for ``quiet_s``."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                seen = len(self.bodies)
            if seen >= count:
                break
            time.sleep(0.05)
        time.sleep(quiet_s)
        with self.lock:
            return list(self.bodies)


@pytest.fixture(autouse=True)
def allow_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    """The receivers listen on 127.0.0.1, which a webhook may not reach by default: the service
    started after this (the ``served`` fixture) inherits the allow-list from its environment."""
    monkeypatch.setenv(ALLOW_ENV, "127.0.0.1/32")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.server.shutdown()
    found.server.server_close()


def post(served: Served, failure: Failure, count: int, version: str) -> None:
    failure = msgspec.structs.replace(failure, context={"agent": "codex",
                                                        "agent_version": version})
    body = b"\n".join(failure_event(failure, event="command.failed", session=f"s-{version}-{i}")
                      .to_json() for i in range(count))
    status, answer = served.json("POST", "/v1/events", key=served.keys["ingest"], body=body,
                                 headers={"Content-Type": "application/x-ndjson"})
    assert status == 200, answer
    assert answer["new"] == count


def test_the_receiver_gets_exactly_the_alerts_the_rules_say(served: Served,
                                                            receiver: Receiver) -> None:
    status, hook = served.json(
        "POST", "/v1/webhooks", key=served.keys["admin"],
        body=json.dumps({"url": receiver.url, "on": ["new_finding", "regression", "rate"],
                         "rate_threshold": 3, "rate_window_s": 3600,
                         "throttle_s": 3600}).encode(),
        headers={"Content-Type": "application/json"})
    assert status == 200, hook
    assert "s3cr3t" not in json.dumps(hook)
    missing = FC.CMD_NOT_FOUND.failure(surface="shell.run", params={"program": "cargo"})
    other = FC.CMD_MISSING_MODULE.failure(surface="python.run", params={"module": "yaml"})

    post(served, missing, 1, "1.0.0")      # a new finding
    post(served, missing, 4, "1.0.0")      # 5 in the window: over 3
    post(served, missing, 4, "1.0.0")      # over again, throttled
    post(served, other, 2, "1.0.0")        # another new finding, under the rate threshold
    first = receiver.settled(3)
    assert [(b["rule"], b["finding"]["code"]) for b in first] == [
        ("new_finding", missing.code), ("rate", missing.code), ("new_finding", other.code)]
    rate = first[1]
    assert rate["why"]
    assert rate["finding"]["signature"] == missing.signature
    assert all(b["path"] == "/hook?token=s3cr3t-hook-token" for b in first)
    assert all(b["text"] for b in first)  # a Slack-compatible line in every JSON payload

    finding_id = first[0]["finding"]["id"]
    status, resolved = served.json(
        "POST", f"/v1/findings/{finding_id}/resolve", key=served.keys["admin"],
        body=b'{"in_version": "2.0.0"}', headers={"Content-Type": "application/json"})
    assert status == 200, resolved
    assert resolved["status"] == "resolved"
    post(served, missing, 1, "1.5.0")      # an old build: stays resolved, no alert
    post(served, missing, 1, "2.0.0")      # the fixed version fails again: a regression
    second = receiver.settled(4)
    assert [(b["rule"], b["finding"]["code"]) for b in second[3:]] == [
        ("regression", missing.code)]
    assert second[3]["finding"]["version"] == "2.0.0"
    status, now = served.json("GET", f"/v1/findings/{finding_id}", key=served.keys["read"])
    assert now["finding"]["status"] == "regressed"
    assert "s3cr3t" not in served.log.read_text(errors="replace")
    status, listed = served.json("GET", "/v1/webhooks", key=served.keys["admin"])
    assert status == 200
    assert [h["url"] for h in listed] == [receiver.url.split("?", 1)[0]]


@pytest.mark.parametrize(("url", "why"), [
    ("http://169.254.169.254/latest/meta-data/?token=s3cr3t-hook-token", "link-local"),
    ("http://127.0.0.2:8080/hook?token=s3cr3t-hook-token", "loopback"),
    ("http://10.0.0.5/hook?token=s3cr3t-hook-token", "private"),
])
def test_a_webhook_to_a_non_public_address_is_refused_with_400(served: Served, url: str,
                                                               why: str) -> None:
    """Outside the allow-list (127.0.0.1/32 here) a loopback, link-local or private target is
    refused at registration: 400 naming the URL (without its token) and why; nothing is kept."""
    status, answer = served.json(
        "POST", "/v1/webhooks", key=served.keys["admin"],
        body=json.dumps({"url": url, "on": ["new_finding"]}).encode(),
        headers={"Content-Type": "application/json"})
    assert status == 400, answer
    shown = json.dumps(answer)
    assert url.split("?", 1)[0] in shown
    assert why in shown
    assert "webhook_allow" in shown
    assert "s3cr3t" not in shown
    status, listed = served.json("GET", "/v1/webhooks", key=served.keys["admin"])
    assert status == 200
    assert listed == []


def test_serve_s_webhook_allow_option_is_the_allow_list(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``failcode serve --webhook-allow`` replaces the environment's list: with the environment
    saying nothing, a service started with ``--webhook-allow 127.0.0.2/32`` takes a receiver on
    127.0.0.2 and still refuses one on 127.0.0.1."""
    monkeypatch.delenv(ALLOW_ENV)
    with running("sqlite", tmp_path, extra=("--webhook-allow", "127.0.0.2/32")) as served:
        for host, status_wanted in (("127.0.0.2", 200), ("127.0.0.1", 400)):
            status, answer = served.json(
                "POST", "/v1/webhooks", key=served.keys["admin"],
                body=json.dumps({"url": f"http://{host}:9/hook", "on": ["new_finding"]}).encode(),
                headers={"Content-Type": "application/json"})
            assert status == status_wanted, (host, answer)


@pytest.mark.parametrize("value", ["10.0.0.1/8", "not-a-network", "10.0.0.0/33"])
def test_a_bad_webhook_allow_option_is_a_usage_error(value: str, tmp_path: Path) -> None:
    """A network the service would refuse is refused before serving: exit 2 naming it."""
    done = subprocess.run([sys.executable, "-m", "failcode", "serve", "--store",
                           f"sqlite:///{tmp_path / 'control.db'}", "--webhook-allow", value],
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "--webhook-allow" in done.stderr
    assert value in done.stderr
    assert "Traceback" not in done.stderr
