"""Webhook alerts: the rules of evaluate() and delivery to a real HTTP receiver on 127.0.0.1."""

from __future__ import annotations

import base64
import http.server
import json
import logging
import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import failcode
from failcode import FailureError
from failcode.service._alerts import (
    ALLOW_ENV,
    FINDING_PATH,
    RULES,
    Alerter,
    AlertState,
    BatchFacts,
    FindingFact,
    Webhook,
    allow_networks,
    check_target,
    evaluate,
    payload,
    redact_url,
    slack_body,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

MINUTE_US = 60_000_000
T0 = 29_000_000 * MINUTE_US  # a whole minute (February 2025)
BASE = "https://failcode.example.org"


def fact(signature: str = "sig-a", finding_id: int = 1, *, project: str = "acme",
         message: str = "The provider rate-limited the request.",
         remedy: str | None = "Wait, then retry.", version: str | None = None) -> FindingFact:
    return FindingFact(project=project, finding_id=finding_id, signature=signature,
                       code="FC-PROV-003", category="transient", message=message, remedy=remedy,
                       count=3, sessions=2, first_us=T0 - 3600 * 1_000_000, last_us=T0,
                       version=version)


def batch(now_us: int, *, project: str = "acme", new: Sequence[FindingFact] = (),
          regressions: Sequence[FindingFact] = (),
          counts: Sequence[tuple[FindingFact, int]] = ()) -> BatchFacts:
    return BatchFacts(project=project, now_us=now_us, new_findings=tuple(new),
                      regressions=tuple(regressions), counts=tuple(counts))


def hook(hook_id: str = "w1", *, project: str = "acme", on: Sequence[str] = ("new_finding",),
         url: str = "http://127.0.0.1:9/hook", **kw: Any) -> Webhook:
    return Webhook(id=hook_id, project=project, url=url, on=frozenset(on), **kw)


def rules_of(alerts: Sequence[Any]) -> list[tuple[str, str, str]]:
    return [(a.webhook_id, a.rule, a.finding.signature) for a in alerts]


# ---------------------------------------------------------------------------------------------
# evaluate: the rules


class TestRules:
    def test_new_finding_fires_once_per_new_finding(self) -> None:
        """Each finding the batch created fires new_finding on each webhook listening to it."""
        hooks = [hook("w1"), hook("w2", on=("regression",))]
        new = [fact("sig-a", 1), fact("sig-b", 2)]
        alerts = evaluate(hooks, batch(T0, new=new), AlertState())
        assert rules_of(alerts) == [("w1", "new_finding", f.signature) for f in new]
        assert all(a.fired_us == T0 and a.window_s is None and a.observed is None
                   for a in alerts)

    def test_regression_fires_for_each_reopened_finding(self) -> None:
        """Each resolved finding the batch reopened fires regression, naming the version."""
        reopened = fact("sig-r", 7, version="1.4.2")
        alerts = evaluate([hook(on=("regression", "new_finding"))],
                          batch(T0, regressions=[reopened]), AlertState())
        assert rules_of(alerts) == [("w1", "regression", "sig-r")]
        assert "1.4.2" in alerts[0].why

    def test_rate_fires_when_the_window_goes_over_the_threshold(self) -> None:
        """Failures of one finding add up across batches; the batch that passes the threshold
        fires, and says how many it counted."""
        state = AlertState()
        rate = [hook(on=("rate",), rate_threshold=10, rate_window_s=3600)]
        first, second = 6, 5
        assert evaluate(rate, batch(T0, counts=[(fact(), first)]), state) == []
        alerts = evaluate(rate, batch(T0 + 10 * MINUTE_US, counts=[(fact(), second)]), state)
        assert rules_of(alerts) == [("w1", "rate", "sig-a")]
        assert alerts[0].observed == first + second
        assert alerts[0].window_s == 3600
        assert f"{first + second} failures in the last 60 min (threshold 10)" == alerts[0].why

    def test_rate_at_the_threshold_does_not_fire(self) -> None:
        """'More than the threshold': exactly the threshold fires nothing."""
        rate = [hook(on=("rate",), rate_threshold=10)]
        assert evaluate(rate, batch(T0, counts=[(fact(), 10)]), AlertState()) == []

    def test_rate_counts_each_signature_apart(self) -> None:
        """Two findings under the threshold each do not add up to an alert."""
        rate = [hook(on=("rate",), rate_threshold=5)]
        counts = [(fact("sig-a"), 4), (fact("sig-b", 2), 4)]
        assert evaluate(rate, batch(T0, counts=counts), AlertState()) == []

    def test_the_window_slides_with_now(self) -> None:
        """A failure counts for the window's minutes from its own; after that it has left."""
        rate = [hook(on=("rate",), rate_threshold=10, rate_window_s=3600, throttle_s=0)]
        inside = AlertState()
        evaluate(rate, batch(T0, counts=[(fact(), 8)]), inside)
        late = evaluate(rate, batch(T0 + 59 * MINUTE_US, counts=[(fact(), 8)]), inside)
        assert [a.observed for a in late] == [16]
        outside = AlertState()
        evaluate(rate, batch(T0, counts=[(fact(), 8)]), outside)
        assert evaluate(rate, batch(T0 + 60 * MINUTE_US, counts=[(fact(), 8)]), outside) == []

    def test_an_older_batch_counts_while_its_minute_is_in_the_window(self) -> None:
        """Time never runs back for a window: a late batch adds to its own minute's bucket."""
        rate = [hook(on=("rate",), rate_threshold=10, rate_window_s=600, throttle_s=0)]
        state = AlertState()
        evaluate(rate, batch(T0 + 9 * MINUTE_US, counts=[(fact(), 6)]), state)
        alerts = evaluate(rate, batch(T0, counts=[(fact(), 6)]), state)
        assert [a.observed for a in alerts] == [12]
        stale = AlertState()
        evaluate(rate, batch(T0 + 10 * MINUTE_US, counts=[(fact(), 6)]), stale)
        assert evaluate(rate, batch(T0, counts=[(fact(), 6)]), stale) == []

    def test_only_webhooks_of_the_batch_project_hear_it(self) -> None:
        """A webhook of another project never fires, whatever it listens to."""
        other = hook("w-other", project="other", on=sorted(RULES), rate_threshold=0)
        facts = batch(T0, new=[fact()], regressions=[fact("sig-r")], counts=[(fact(), 9)])
        assert evaluate([other], facts, AlertState()) == []

    def test_a_webhook_without_a_rule_hears_nothing_of_it(self) -> None:
        """A webhook listening to new findings only fires nothing for a regression or a rate."""
        facts = batch(T0, regressions=[fact()], counts=[(fact(), 1000)])
        assert evaluate([hook(on=("new_finding",))], facts, AlertState()) == []


class TestThrottle:
    def test_the_same_condition_within_throttle_fires_once(self) -> None:
        """A second alert for (webhook, rule, signature) waits throttle_s of batch time."""
        rate = [hook(on=("rate",), rate_threshold=1, throttle_s=600)]
        state = AlertState()
        fired = [rules_of(evaluate(rate, batch(T0 + minutes * MINUTE_US,
                                                counts=[(fact(), 5)]), state))
                 for minutes in (0, 5, 9, 10)]
        assert fired == [[("w1", "rate", "sig-a")], [], [], [("w1", "rate", "sig-a")]]

    def test_throttle_is_per_rule_and_signature(self) -> None:
        """Another rule or another signature is not held back by a throttled one."""
        hooks = [hook(on=("new_finding", "regression", "rate"), rate_threshold=0)]
        state = AlertState()
        evaluate(hooks, batch(T0, new=[fact("sig-a")]), state)
        facts = batch(T0 + MINUTE_US, new=[fact("sig-a"), fact("sig-b", 2)],
                      regressions=[fact("sig-a")], counts=[(fact("sig-a"), 1)])
        assert rules_of(evaluate(hooks, facts, state)) == [
            ("w1", "new_finding", "sig-b"), ("w1", "regression", "sig-a"),
            ("w1", "rate", "sig-a")]

    def test_throttle_zero_never_holds_back(self) -> None:
        """throttle_s=0 fires every time the condition holds."""
        rate = [hook(on=("rate",), rate_threshold=0, throttle_s=0)]
        state = AlertState()
        assert all(len(evaluate(rate, batch(T0, counts=[(fact(), 1)]), state)) == 1
                   for _ in range(3))

    def test_the_state_forgets_what_can_no_longer_matter(self) -> None:
        """Windows whose failures all left and quiet times that ended are dropped, and a window
        never holds more buckets than it has minutes."""
        rate = [hook(on=("rate", "new_finding"), rate_threshold=100, rate_window_s=600,
                     throttle_s=60)]
        state = AlertState()
        for minute in range(30):
            evaluate(rate, batch(T0 + minute * MINUTE_US, new=[fact("sig-n")],
                                 counts=[(fact(), 1)]), state)
            assert state.footprint()["buckets"] <= 600 // 60
        evaluate(rate, batch(T0 + 100 * MINUTE_US), state)
        assert state.footprint() == {"windows": 0, "buckets": 0, "throttles": 0}


class TestInputs:
    @pytest.mark.parametrize(("field", "change"), [
        ("id", {"id": ""}),
        ("url", {"url": "ftp://127.0.0.1/x"}),
        ("url", {"url": "http:///no-host"}),
        ("on", {"on": frozenset({"new_finding", "everything"})}),
        ("on", {"on": frozenset()}),
        ("rate_threshold", {"on": frozenset({"rate"})}),
        ("rate_threshold", {"rate_threshold": -1}),
        ("rate_window_s", {"rate_window_s": 90}),
        ("rate_window_s", {"rate_window_s": 0}),
        ("throttle_s", {"throttle_s": -5}),
        ("format", {"format": "xml"}),
    ])
    def test_a_bad_webhook_is_refused_naming_the_field(self, field: str,
                                                      change: dict[str, Any]) -> None:
        """A webhook out of its contract is FC-DATA-001 naming the field."""
        fields: dict[str, Any] = {"id": "w1", "project": "acme", "url": "http://127.0.0.1/h",
                                  "on": frozenset({"new_finding"}), **change}
        with pytest.raises(FailureError) as caught:
            Webhook(**fields)
        assert caught.value.failure.code == failcode.FC.DATA_INVALID_INPUT.value
        assert f"Webhook.{field}" in caught.value.failure.message

    def test_a_refused_url_never_shows_its_secret(self) -> None:
        """The error about a bad URL shows it redacted."""
        with pytest.raises(FailureError) as caught:
            hook(url="ftp://bob:pa55-w0rd-x@example.org/x?token=abc-very-secret")
        text = msgspec.json.encode(caught.value.failure).decode()
        assert "abc-very-secret" not in text
        assert "pa55-w0rd-x" not in text

    def test_a_webhook_from_json_takes_a_list_of_rules(self) -> None:
        """Decoded from JSON, ``on`` is a list and becomes a frozenset."""
        decoded = msgspec.convert({"id": "w", "project": "p", "url": "https://h.example/x",
                                   "on": ["rate", "regression"], "rate_threshold": 3}, Webhook)
        assert decoded.on == frozenset({"rate", "regression"})

    def test_a_negative_count_is_refused(self) -> None:
        """A batch cannot add a negative number of failures."""
        with pytest.raises(FailureError, match=r"BatchFacts\.counts\[0\]"):
            batch(T0, counts=[(fact(), -1)])

    @pytest.mark.parametrize(("url", "hidden"), [
        ("https://user:pw-secret-1@hooks.example.org/in?token=tk-secret-2#frag-secret-3",
         ("pw-secret-1", "tk-secret-2", "frag-secret-3", "user")),
        ("https://hooks.slack.com/services/T0AAAA1AA/B0BBBB2BB/abcdefghijklmnopqrstuvwx",
         ("abcdefghijklmnopqrstuvwx",)),
        ("https://discord.com/api/webhooks/123456789012345678/Ab3dEfGh1jKlMnOpQrStUvWxYz0123456789",
         ("Ab3dEfGh1jKlMnOpQrStUvWxYz0123456789",)),
    ])
    def test_redact_url_keeps_the_host_and_drops_what_authenticates(
            self, url: str, hidden: tuple[str, ...]) -> None:
        """The shown URL keeps scheme and host, and none of the credentials."""
        shown = redact_url(url)
        host = url.split("://")[1].split("/", maxsplit=1)[0].rpartition("@")[2]
        assert shown.startswith(f"https://{host}/")
        assert not any(piece in shown for piece in hidden)
        assert not any(piece in repr(hook(url=url)) for piece in hidden)


# ---------------------------------------------------------------------------------------------
# evaluate: invariants

SIGNATURES = ("sig-a", "sig-b", "sig-c")


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[Webhook], list[BatchFacts]]:
    hooks = []
    for index in range(draw(st.integers(1, 3))):
        on = draw(st.sets(st.sampled_from(sorted(RULES)), min_size=1))
        hooks.append(Webhook(
            id=f"w{index}", project=draw(st.sampled_from(["acme", "other"])),
            url="http://127.0.0.1:9/h", on=frozenset(on),
            rate_threshold=draw(st.integers(0, 6)),
            rate_window_s=draw(st.sampled_from([60, 120, 300, 600])),
            throttle_s=draw(st.sampled_from([0, 30, 60, 90, 300]))))
    batches, now = [], T0 + draw(st.integers(0, MINUTE_US))
    for _ in range(draw(st.integers(1, 25))):
        now += draw(st.integers(0, 200)) * 1_000_000
        facts = {s: fact(s, i) for i, s in enumerate(SIGNATURES)}
        batches.append(batch(
            now,
            new=[facts[s] for s in draw(st.lists(st.sampled_from(SIGNATURES), max_size=2))],
            regressions=[facts[s] for s in draw(st.lists(st.sampled_from(SIGNATURES),
                                                         max_size=2))],
            counts=[(facts[s], n) for s, n in draw(st.lists(
                st.tuples(st.sampled_from(SIGNATURES), st.integers(0, 4)), max_size=4))]))
    return hooks, batches


@given(scenarios())
def test_evaluate_matches_the_rules(scenario: tuple[list[Webhook], list[BatchFacts]]) -> None:
    """Against a plain model of the rules: every alert (and only those) whose condition holds
    and whose (webhook, rule, signature) is not quiet fires; at most one per throttle window;
    never for another project's webhook; a rate alert counts exactly the window's failures."""
    hooks, batches = scenario
    state = AlertState()
    history: dict[tuple[str, str], list[tuple[int, int]]] = {}  # (hook, sig) -> (minute, n)
    last: dict[tuple[str, str, str], int] = {}
    times: dict[tuple[str, str, str], list[int]] = {}
    by_id = {h.id: h for h in hooks}
    for facts in batches:
        alerts = evaluate(hooks, facts, state)
        fired = {(a.webhook_id, a.rule, a.finding.signature): a for a in alerts}
        assert len(fired) == len(alerts)  # never two alerts for one key in one batch
        minute = facts.now_us // MINUTE_US
        expected: set[tuple[str, str, str]] = set()
        observed: dict[tuple[str, str], int] = {}
        for h in hooks:
            if h.project != facts.project:
                continue
            conditions = []
            if "new_finding" in h.on:
                conditions += [("new_finding", f.signature) for f in facts.new_findings]
            if "regression" in h.on:
                conditions += [("regression", f.signature) for f in facts.regressions]
            if "rate" in h.on:
                for f, n in facts.counts:
                    if n:
                        history.setdefault((h.id, f.signature), []).append((minute, n))
                added = {f.signature for f, n in facts.counts if n}
                for signature in added:
                    width = h.rate_window_s // 60
                    total = sum(n for m, n in history[h.id, signature] if m > minute - width)
                    observed[h.id, signature] = total
                    assert h.rate_threshold is not None
                    if total > h.rate_threshold:
                        conditions.append(("rate", signature))
            for rule, signature in conditions:
                key = (h.id, rule, signature)
                quiet = last.get(key)
                if key in expected or (quiet is not None
                                       and facts.now_us < quiet + h.throttle_s * 1_000_000):
                    continue
                expected.add(key)
                last[key] = facts.now_us
        assert set(fired) == expected
        for (hook_id, rule, signature), alert in fired.items():
            assert by_id[hook_id].project == facts.project
            if rule == "rate":
                assert alert.observed == observed[hook_id, signature]
            before = times.setdefault((hook_id, rule, signature), [])
            if before:  # at most one alert per key per throttle window
                assert alert.fired_us - before[-1] >= by_id[hook_id].throttle_s * 1_000_000
            before.append(alert.fired_us)


# ---------------------------------------------------------------------------------------------
# bodies


def test_payload_has_the_documented_fields() -> None:
    """The JSON body names the rule, why, project and the finding, with a one-line text."""
    alert = evaluate([hook()], batch(T0, new=[fact(message="a <b> & c")]), AlertState())[0]
    body = payload(alert, base_url=BASE)
    assert body["failcode"] == 1
    assert (body["rule"], body["why"], body["project"]) == (alert.rule, alert.why, "acme")
    assert body["finding"]["url"] == BASE + FINDING_PATH.format(project="acme", finding_id=1)
    assert body["finding"]["signature"] == alert.finding.signature
    assert "\n" not in body["text"]
    assert "&lt;b&gt; &amp; c" in body["text"]
    assert payload(alert, base_url=None)["finding"]["url"] is None


def test_the_documented_payload_is_what_payload_makes() -> None:
    """docs/service-alerts.md's example body is payload()'s output for the alert it describes."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "service-alerts.md").read_text()
    example = json.loads(doc.split("```json\n", 1)[1].split("```", 1)[0])
    described = FindingFact(
        project="acme", finding_id=42, signature=example["finding"]["signature"],
        code="FC-PROV-003", category="transient",
        message="The provider openai rate-limited the request (HTTP 429).", remedy=None,
        count=57, sessions=9, first_us=T0 - 86_400_000_000, last_us=T0, version="1.8.2")
    webhook = Webhook(id="ops-alerts", project="acme", url="https://hooks.example.org/in",
                      on=frozenset({"rate"}), rate_threshold=10)
    [alert] = evaluate([webhook], batch(T0, counts=[(described, 12)]), AlertState())
    assert payload(alert, base_url="https://failcode.example.org") == example


def test_slack_body_has_slack_incoming_webhook_shape() -> None:
    """Slack's shape: a fallback text and blocks within Slack's limits, mrkdwn escaped."""
    alert = evaluate([hook(format="slack")],
                     batch(T0, new=[fact(message="x" * 5000 + " <!channel> & more",
                                         remedy="r" * 4000, version="2.0")]),
                     AlertState())[0]
    body = slack_body(alert, base_url=BASE)
    assert set(body) == {"text", "blocks"}
    assert body["text"]
    header, *rest = body["blocks"]
    assert header["type"] == "header"
    assert header["text"]["type"] == "plain_text"
    assert len(header["text"]["text"]) <= 150
    for block in rest:
        assert block["type"] in {"section", "context"}
        for text in [block.get("text"), *block.get("fields", []), *block.get("elements", [])]:
            if text is not None:
                assert text["type"] == "mrkdwn"
                assert len(text["text"]) <= (2000 if text in block.get("fields", []) else 3000)
                assert "<!channel>" not in text["text"]
    assert len(next(b for b in rest if "fields" in b)["fields"]) <= 10
    link = BASE + FINDING_PATH.format(project="acme", finding_id=1)
    assert f"<{link}|" in rest[-1]["elements"][0]["text"]


# ---------------------------------------------------------------------------------------------
# delivery to a real receiver


LOCAL = ["127.0.0.1/32"]
"""The allow-list every delivery test needs: its receivers listen on 127.0.0.1, which the
default refuses (see TestTargets)."""


class Receiver:
    """A ThreadingHTTPServer on 127.0.0.1 that records every POST and answers from a script."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: list[tuple[int, dict[str, str]]] = []  # answered first, then 200
        self.hang: threading.Event | None = None  # set: answer; unset: wait (hang)
        self.arrived = threading.Event()
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.requests.append({"path": self.path, "headers": dict(self.headers),
                                              "body": json.loads(body)})
                    status, headers = (receiver.script.pop(0) if receiver.script
                                       else (200, {}))
                    hang = receiver.hang
                receiver.arrived.set()
                if hang is not None:
                    hang.wait(60)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *_: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        if self.hang is not None:
            self.hang.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def alerters() -> Iterator[list[Alerter]]:
    made: list[Alerter] = []
    try:
        yield made
    finally:
        for alerter in made:
            alerter.close(timeout_s=1.0)


def new_batch(*signatures: str, now_us: int = T0) -> BatchFacts:
    return batch(now_us, new=[fact(s, i + 1) for i, s in enumerate(signatures)])


class RetryScheduled(logging.Handler):
    """Sets ``seen`` when the alerter logs that it scheduled a retry."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if hasattr(record, "failcode_delay_s"):
            self.seen.set()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class TestDelivery:
    def test_an_alert_is_posted_with_its_headers(self, receiver: Receiver,
                                                 alerters: list[Alerter]) -> None:
        """One POST per alert: the payload as JSON, the failcode User-Agent and the rule."""
        alerter = Alerter(allow=LOCAL, base_url=BASE)
        alerters.append(alerter)
        alerts = alerter.submit([hook(url=receiver.url())], new_batch("sig-a"))
        assert alerter.wait_idle(30)
        [request] = receiver.requests
        assert request["body"] == json.loads(msgspec.json.encode(payload(alerts[0],
                                                                         base_url=BASE)))
        assert request["headers"]["User-Agent"] == f"failcode/{failcode.__version__}"
        assert request["headers"]["X-Failcode-Alert"] == "new_finding"
        assert request["headers"]["Content-Type"] == "application/json"
        stats = alerter.stats()
        assert (stats.fired, stats.delivered, stats.failed, stats.retries) == (1, 1, 0, 0)

    def test_a_slack_webhook_gets_the_slack_body(self, receiver: Receiver,
                                                 alerters: list[Alerter]) -> None:
        """format="slack" posts slack_body()."""
        alerter = Alerter(allow=LOCAL, base_url=BASE)
        alerters.append(alerter)
        alerts = alerter.submit([hook(url=receiver.url(), format="slack")], new_batch("sig-a"))
        assert alerter.wait_idle(30)
        expected = json.loads(msgspec.json.encode(slack_body(alerts[0], base_url=BASE)))
        assert receiver.requests[0]["body"] == expected

    def test_server_errors_are_retried_until_delivered(self, receiver: Receiver,
                                                       alerters: list[Alerter]) -> None:
        """500 twice then 200: three attempts, delivered once, two retries counted."""
        receiver.script = [(500, {}), (500, {})]
        alerter = Alerter(allow=LOCAL, initial_delay_s=0.01, max_delay_s=0.05)
        alerters.append(alerter)
        alerter.submit([hook(url=receiver.url())], new_batch("sig-a"))
        assert alerter.wait_idle(30)
        assert len(receiver.requests) == 3
        assert receiver.requests[0]["body"] == receiver.requests[2]["body"]
        stats = alerter.stats()
        assert (stats.delivered, stats.failed, stats.retries, stats.pending) == (1, 0, 2, 0)
        assert stats.last_failure is None

    def test_retry_after_is_respected(self, receiver: Receiver, alerters: list[Alerter],
                                      caplog: pytest.LogCaptureFixture) -> None:
        """429 with Retry-After: 1: the retry is decided no sooner than the server asked."""
        receiver.script = [(429, {"Retry-After": "1"})]
        alerter = Alerter(allow=LOCAL, initial_delay_s=0.01, max_delay_s=0.05)
        alerters.append(alerter)
        with caplog.at_level(logging.DEBUG, logger="failcode.service.alerts"):
            alerter.submit([hook(url=receiver.url())], new_batch("sig-a"))
            assert alerter.wait_idle(30)
        delays = [r.failcode_delay_s for r in caplog.records if hasattr(r, "failcode_delay_s")]
        assert len(delays) == 1
        assert delays[0] >= 1.0
        assert len(receiver.requests) == 2
        assert alerter.stats().delivered == 1

    def test_a_404_is_given_up_without_retrying(self, receiver: Receiver,
                                                alerters: list[Alerter]) -> None:
        """A refusal decide() does not retry is given up at once, its failure kept."""
        receiver.script = [(404, {})]
        alerter = Alerter(allow=LOCAL, initial_delay_s=0.01)
        alerters.append(alerter)
        alerter.submit([hook(url=receiver.url())], new_batch("sig-a"))
        assert alerter.wait_idle(30)
        assert len(receiver.requests) == 1
        stats = alerter.stats()
        assert (stats.delivered, stats.failed, stats.retries) == (0, 1, 0)
        assert stats.last_failure is not None
        assert stats.last_failure.metadata["http_status"] == 404
        assert stats.last_failure.context["webhook"] == "w1"

    def test_retries_stop_at_max_attempts(self, receiver: Receiver,
                                          alerters: list[Alerter]) -> None:
        """A webhook that keeps failing gets max_attempts attempts, then the alert is given up."""
        receiver.script = [(503, {})] * 10
        alerter = Alerter(allow=LOCAL, max_attempts=3, initial_delay_s=0.01, max_delay_s=0.02)
        alerters.append(alerter)
        alerter.submit([hook(url=receiver.url())], new_batch("sig-a"))
        assert alerter.wait_idle(30)
        assert len(receiver.requests) == 3
        stats = alerter.stats()
        assert (stats.delivered, stats.failed, stats.retries) == (0, 1, 2)

    def test_submit_never_waits_for_a_hanging_receiver(self, receiver: Receiver,
                                                       alerters: list[Alerter]) -> None:
        """While the worker is stuck in a request, submit still evaluates and enqueues."""
        receiver.hang = threading.Event()
        alerter = Alerter(allow=LOCAL, timeout_s=60)
        alerters.append(alerter)
        hooks = [hook(url=receiver.url())]
        alerter.submit(hooks, new_batch("sig-0"))
        assert receiver.arrived.wait(30)  # the worker is now inside the hanging request
        later = [alerter.submit(hooks, new_batch(f"sig-{i}")) for i in range(1, 21)]
        assert [len(alerts) for alerts in later] == [1] * 20
        stats = alerter.stats()
        assert (stats.fired, stats.pending, stats.delivered) == (21, 21, 0)
        receiver.hang.set()
        assert alerter.wait_idle(60)
        assert alerter.stats().delivered == 21

    def test_a_full_queue_drops_and_counts(self, receiver: Receiver,
                                           alerters: list[Alerter]) -> None:
        """Past queue_size alerts waiting or in flight, new ones are dropped and counted."""
        receiver.hang = threading.Event()
        alerter = Alerter(allow=LOCAL, timeout_s=60, queue_size=3)
        alerters.append(alerter)
        hooks = [hook(url=receiver.url())]
        alerter.submit(hooks, new_batch("sig-0"))
        assert receiver.arrived.wait(30)
        alerts = alerter.submit(hooks, new_batch(*(f"sig-{i}" for i in range(1, 6))))
        assert len(alerts) == 5
        assert alerter.stats().dropped == 5 - 2
        receiver.hang.set()
        assert alerter.wait_idle(60)
        stats = alerter.stats()
        assert (stats.fired, stats.delivered, stats.dropped) == (6, 3, 3)
        assert len(receiver.requests) == 3

    def test_close_drops_a_retry_due_after_it(self, receiver: Receiver,
                                              caplog: pytest.LogCaptureFixture) -> None:
        """A retry waiting past close()'s time is dropped and counted, not waited for; an alert
        submitted after close is dropped too."""
        receiver.script = [(429, {"Retry-After": "120"})]
        scheduled = RetryScheduled()
        logger = logging.getLogger("failcode.service.alerts")
        alerter = Alerter(allow=LOCAL, initial_delay_s=0.01)
        with caplog.at_level(logging.DEBUG, logger=logger.name):
            logger.addHandler(scheduled)
            try:
                alerter.submit([hook(url=receiver.url())], new_batch("sig-a"))
                assert scheduled.seen.wait(30)
                alerter.close(timeout_s=5.0)
            finally:
                logger.removeHandler(scheduled)
        stats = alerter.stats()
        assert (stats.delivered, stats.failed, stats.dropped, stats.pending) == (0, 0, 1, 0)
        assert alerter.submit([hook(url=receiver.url())], new_batch("sig-b")) != []
        assert alerter.stats().dropped == 2
        assert len(receiver.requests) == 1


class TestSecrets:
    SECRETS = ("hunter2-pass", "tok-s3cr3t-value")

    def assert_hidden(self, alerter: Alerter, caplog: pytest.LogCaptureFixture,
                      webhook: Webhook) -> None:
        stats = alerter.stats()
        assert stats.last_failure is not None
        shown = [repr(stats), msgspec.json.encode(stats.last_failure).decode(), caplog.text,
                 repr(webhook), failcode.render_user(stats.last_failure)]
        for text in shown:
            for secret in self.SECRETS:
                assert secret not in text
        assert stats.last_failure.context["target"] == redact_url(webhook.url)

    def test_a_refused_delivery_never_shows_the_url_secret(
            self, receiver: Receiver, alerters: list[Alerter],
            caplog: pytest.LogCaptureFixture) -> None:
        """Query and userinfo reach the receiver, and appear in no stat, failure or log line."""
        receiver.script = [(404, {})]
        url = f"http://alice:hunter2-pass@127.0.0.1:{receiver.port}/hook?token=tok-s3cr3t-value"
        webhook = hook(url=url)
        alerter = Alerter(allow=LOCAL)
        alerters.append(alerter)
        with caplog.at_level(logging.DEBUG, logger="failcode.service.alerts"):
            alerter.submit([webhook], new_batch("sig-a"))
            assert alerter.wait_idle(30)
        [request] = receiver.requests
        assert request["path"] == "/hook?token=tok-s3cr3t-value"
        auth = base64.b64encode(b"alice:hunter2-pass").decode()
        assert request["headers"]["Authorization"] == f"Basic {auth}"
        self.assert_hidden(alerter, caplog, webhook)

    def test_an_unreachable_webhook_never_shows_the_url_secret(
            self, alerters: list[Alerter], caplog: pytest.LogCaptureFixture) -> None:
        """A connection refused is retried, given up, and named without the URL's secrets."""
        url = f"http://alice:hunter2-pass@127.0.0.1:{closed_port()}/h?token=tok-s3cr3t-value"
        webhook = hook(url=url)
        alerter = Alerter(allow=LOCAL, max_attempts=2, initial_delay_s=0.01, max_delay_s=0.02)
        alerters.append(alerter)
        with caplog.at_level(logging.DEBUG, logger="failcode.service.alerts"):
            alerter.submit([webhook], new_batch("sig-a"))
            assert alerter.wait_idle(30)
        stats = alerter.stats()
        assert (stats.failed, stats.retries) == (1, 1)
        self.assert_hidden(alerter, caplog, webhook)


# ---------------------------------------------------------------------------------------------
# one project never holds up another


class TestProjectsApart:
    TIMEOUT_S = 10.0
    """The alerter's timeout_s here: the documented bound on how long another project's
    hanging receivers may hold up an alert (they hold it up not at all)."""

    def test_hanging_receivers_of_one_project_do_not_delay_another(
            self, alerters: list[Alerter]) -> None:
        """Project a has two receivers that accept and never answer; project b's alert reaches
        its receiver within timeout_s (with one shared worker it would wait 2 x timeout_s)."""
        hanging = [Receiver(), Receiver()]
        other = Receiver()
        try:
            for server in hanging:
                server.hang = threading.Event()  # never set while the test waits
            alerter = Alerter(allow=LOCAL, timeout_s=self.TIMEOUT_S)
            alerters.append(alerter)
            hooks_a = [hook(f"a{i}", project="a", url=server.url())
                       for i, server in enumerate(hanging)]
            alerter.submit(hooks_a, batch(T0, project="a", new=[fact("sig-a", project="a")]))
            assert hanging[0].arrived.wait(30)  # project a's first request now hangs
            alerter.submit([hook("b", project="b", url=other.url())],
                           batch(T0, project="b", new=[fact("sig-b", project="b")]))
            assert other.arrived.wait(self.TIMEOUT_S), (
                f"project b's alert did not arrive within timeout_s={self.TIMEOUT_S}")
            [request] = other.requests
            assert request["body"]["project"] == "b"
            assert hanging[0].requests[0]["body"]["project"] == "a"
        finally:
            for server in (*hanging, other):
                server.stop()

    def test_a_full_queue_drops_only_its_own_projects_alerts(
            self, receiver: Receiver, alerters: list[Alerter],
            caplog: pytest.LogCaptureFixture) -> None:
        """queue_size bounds each project: a's full queue drops a's alerts, counted and logged
        with its name, and b's alert is queued and delivered."""
        receiver.hang = threading.Event()
        other = Receiver()
        try:
            alerter = Alerter(allow=LOCAL, timeout_s=60, queue_size=2)
            alerters.append(alerter)
            hooks_a = [hook("a", project="a", url=receiver.url())]
            alerter.submit(hooks_a, batch(T0, project="a", new=[fact("sig-0", project="a")]))
            assert receiver.arrived.wait(30)
            with caplog.at_level(logging.WARNING, logger="failcode.service.alerts"):
                more = [fact(f"sig-{i}", i + 1, project="a") for i in range(1, 4)]
                alerter.submit(hooks_a, batch(T0, project="a", new=more))
                assert alerter.stats().dropped == 2  # 1 in flight + 1 queued = 2: 2 of 3 dropped
                alerter.submit([hook("b", project="b", url=other.url())],
                               batch(T0, project="b", new=[fact("sig-b", project="b")]))
            assert other.arrived.wait(30)
            assert [r["body"]["project"] for r in other.requests] == ["b"]
            assert alerter.stats().dropped == 2
            assert "project a: 2 alert(s) dropped" in caplog.text
            assert "project b" not in caplog.text
            receiver.hang.set()
            assert alerter.wait_idle(60)
            stats = alerter.stats()
            assert (stats.fired, stats.delivered, stats.dropped) == (5, 3, 2)
        finally:
            other.stop()

    def test_a_due_retry_goes_behind_a_first_try(self, receiver: Receiver,
                                                 alerters: list[Alerter]) -> None:
        """The first alert fails (500) and its retry is due at once; the second alert, already
        queued, is tried before that retry."""
        receiver.script = [(500, {})]
        receiver.hang = threading.Event()
        alerter = Alerter(allow=LOCAL, initial_delay_s=0.0, max_delay_s=0.0)
        alerters.append(alerter)
        alerter.submit([hook(url=receiver.url())], new_batch("sig-a", "sig-b"))
        receiver.hang.set()  # both are queued: now the receiver answers
        assert alerter.wait_idle(30)
        order = [r["body"]["finding"]["signature"] for r in receiver.requests]
        assert order == ["sig-a", "sig-b", "sig-a"]


# ---------------------------------------------------------------------------------------------
# where a webhook may point


class TestTargets:
    @pytest.mark.parametrize(("url", "why"), [
        ("http://127.0.0.1:8080/hook", "a loopback address"),
        ("http://169.254.169.254/latest/meta-data", "a link-local address"),
        ("http://10.1.2.3/hook", "a private address"),
        ("http://192.168.0.7/hook", "a private address"),
        ("http://[::1]/hook", "a loopback address"),
        ("http://[::ffff:127.0.0.1]/hook", "a loopback address"),
        ("http://[fe80::1]/hook", "a link-local address"),
        ("http://0.0.0.0/hook", "an unspecified address"),
        ("http://localhost:9/hook", "a loopback address"),
    ])
    def test_a_non_public_target_is_refused_naming_url_and_why(self, url: str,
                                                               why: str) -> None:
        with pytest.raises(FailureError) as caught:
            check_target(url + "?token=tok-s3cr3t-value")
        message = caught.value.failure.message
        assert redact_url(url) in message
        assert why.split(" ", 1)[1] in message
        assert "webhook_allow" in message
        assert "s3cr3t" not in message

    def test_a_public_address_passes(self) -> None:
        check_target("https://93.184.215.14/hook")
        check_target("https://[2606:4700::1111]/hook")

    def test_the_allow_list_opens_exactly_its_networks(self) -> None:
        allow = allow_networks(["127.0.0.1/32", "10.0.0.0/8"])
        check_target("http://127.0.0.1:8080/hook", allow)
        check_target("http://10.200.0.1/hook", allow)
        with pytest.raises(FailureError, match=r"127\.0\.0\.2"):
            check_target("http://127.0.0.2/hook", allow)
        with pytest.raises(FailureError, match=r"169\.254\.169\.254"):
            check_target("http://169.254.169.254/", allow)

    @pytest.mark.parametrize("entry", ["10.0.0.1/8", "not-a-net", "127.0.0.1/33"])
    def test_a_bad_allow_entry_is_refused_naming_it(self, entry: str) -> None:
        with pytest.raises(FailureError, match="webhook_allow entry") as caught:
            allow_networks([entry])
        assert entry in caught.value.failure.message

    def test_the_allow_list_comes_from_the_environment(
            self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv(ALLOW_ENV, " 127.0.0.1/32 , fd00::/8 ")
        assert [str(n) for n in allow_networks()] == ["127.0.0.1/32", "fd00::/8"]
        monkeypatch.delenv(ALLOW_ENV)
        assert allow_networks() == ()

    @pytest.mark.parametrize("scheme", ["http", "https"])
    @pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
    def test_delivery_refuses_the_resolved_address_by_default(
            self, host: str, scheme: str, receiver: Receiver, alerters: list[Alerter],
            monkeypatch: pytest.MonkeyPatch) -> None:
        """Without an allow-list the receiver on 127.0.0.1 never gets a request, by address or
        by a name resolved at delivery time, over http or https; the alert is given up at once,
        not retried."""
        monkeypatch.delenv(ALLOW_ENV, raising=False)
        alerter = Alerter(initial_delay_s=0.01, max_delay_s=0.02)
        alerters.append(alerter)
        alerter.submit([hook(url=f"{scheme}://{host}:{receiver.port}/hook?token=tok-s3cr3t")],
                       new_batch("sig-a"))
        assert alerter.wait_idle(30)
        stats = alerter.stats()
        assert (stats.delivered, stats.failed, stats.retries) == (0, 1, 0)
        assert stats.last_failure is not None
        assert "loopback" in stats.last_failure.message
        assert "s3cr3t" not in msgspec.json.encode(stats.last_failure).decode()
        assert receiver.requests == []

    def test_the_environment_allow_list_lets_delivery_through(
            self, receiver: Receiver, alerters: list[Alerter],
            monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv(ALLOW_ENV, "127.0.0.1/32")
        alerter = Alerter()
        alerters.append(alerter)
        alerter.submit([hook(url=receiver.url())], new_batch("sig-a"))
        assert alerter.wait_idle(30)
        assert alerter.stats().delivered == 1
        assert len(receiver.requests) == 1

    def test_a_redirect_is_not_followed(self, receiver: Receiver,
                                        alerters: list[Alerter]) -> None:
        """A 302 to another address (here an allowed one) is the failure it is: given up, and
        the place it points to gets nothing."""
        inner = Receiver()
        try:
            receiver.script = [(302, {"Location": inner.url("/inner")})]
            alerter = Alerter(allow=LOCAL, initial_delay_s=0.01, max_delay_s=0.02)
            alerters.append(alerter)
            alerter.submit([hook(url=receiver.url())], new_batch("sig-a"))
            assert alerter.wait_idle(30)
            stats = alerter.stats()
            assert (stats.delivered, stats.failed) == (0, 1)
            assert len(receiver.requests) == 1
            assert inner.requests == []
        finally:
            inner.stop()
