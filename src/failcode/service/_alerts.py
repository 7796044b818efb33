"""Webhook alerts: which findings a batch makes worth telling someone, and telling them.

Two halves. :func:`evaluate` is the rule, pure apart from the :class:`AlertState` it updates;
:class:`Alerter` delivers its alerts from a daemon thread, so ingest never waits for a webhook.

Rules (a webhook takes part only when its ``project`` is the batch's project):

- ``new_finding`` fires once for each finding the batch created.
- ``regression`` fires once for each resolved finding the batch reopened.
- ``rate`` fires for a finding when its failures within the webhook's rolling window, after
  adding the batch's, are more than ``rate_threshold``. Only a finding the batch added failures
  to is tested. Windows are counted per (webhook, signature) in whole-minute buckets (the
  minute of the batch's ``now_us``, UTC): a failure counts while its minute is one of the
  ``rate_window_s / 60`` minutes ending with the newest minute the window has seen, so a
  window holds at most that many buckets however many failures arrive. Time never runs back
  for a window: a batch older than the newest adds to its own minute's bucket when that is
  still inside the window, and to nothing when it is not.
- One batch fires at most one alert per (webhook, rule, signature): a finding listed twice
  counts once (its failures in ``counts`` add up).
- Throttling: at most one alert per (webhook, rule, signature) per ``throttle_s`` seconds of
  batch time; ``throttle_s = 0`` never throttles. A throttled condition fires nothing and is
  not remembered: the next batch that meets it after the quiet time fires.
- Alerts come out per webhook in the order the webhooks were given, and per webhook in the
  order new findings, regressions, rates; within a rule in the batch's order.
- :class:`AlertState` keeps the state in memory: when it is made again, every window starts
  empty and nothing is throttled. Entries whose window and quiet time are over are forgotten
  (checked once per minute of batch time), so the state holds only what can still matter. The
  service uses :class:`~failcode.service._shared.SharedAlertState` instead, the same rule over
  the control store: every worker and replica adds to the same windows and sees the same
  quiet times, and a restart forgets nothing.

Delivery (:class:`Alerter`):

- :meth:`Alerter.submit` evaluates and enqueues; it never blocks on the network and never
  raises for a delivery problem. Each project has its own queue: more than ``queue_size``
  alerts of one project waiting or in flight, that project's new one is dropped and counted
  (``dropped``, and a warning naming the project); other projects' alerts are not. One
  submitted after :meth:`Alerter.close` is dropped too.
- Each project with alerts to deliver has its own daemon thread (started by its first alert,
  ended when its queue is empty), so one project's receivers never hold up another's. It
  POSTs each alert's JSON body (:func:`payload`, or :func:`slack_body` for
  ``format="slack"``) with urllib, headers ``Content-Type: application/json``,
  ``User-Agent: failcode/<version>`` and ``X-Failcode-Alert: <rule>``. A 2xx answer delivers
  it. Redirects are not followed (a webhook that moved must be configured again), and a URL's
  userinfo is sent as HTTP Basic authorization, never as part of the address.
- A failed attempt becomes a :class:`~failcode.Failure` (:func:`~failcode.classify_http` for
  an HTTP status, :func:`~failcode.classify` for an exception) and :func:`~failcode.decide`
  says what next, with the webhook's own :class:`~failcode.Budget` and the operation class
  ``webhook`` (``max_attempts`` attempts in all, full-jitter backoff from
  ``initial_delay_s`` to ``max_delay_s``, a 15-minute deadline from the first attempt). Only
  ``retry`` retries: what failcode classifies as transient (429, 408, 409, 5xx, timeouts,
  connection errors), after the decided delay, which honours Retry-After up to 5 minutes; any
  other 4xx (e.g. 404) and every other decision give up at once (``failed``, and
  ``last_failure``).
- A retry waits in a queue ordered by due time, so a waiting retry holds up no other delivery,
  and a due retry goes after the project's queued first tries. A project's thread does one
  request at a time, so a receiver that hangs holds up that project's other alerts up to
  ``timeout_s`` per request, and no other project's.
- Targets (against blind SSRF from the service's host): a webhook may reach only public
  addresses unless an allow-list (``allow``; by default :data:`ALLOW_ENV`) holds the
  address. :func:`check_target` refuses a URL at registration; every delivery checks again the
  very address it connects to (after resolving the name then, so a DNS change cannot slip
  past), and a refused one is given up at once (FC-DATA-001, no retry). No proxy from the
  environment is used: the service connects to the receiver itself.
- A webhook URL's query, fragment and userinfo are never logged, kept in a Failure or shown:
  every message names the webhook by its id and :func:`redact_url` (scheme, host, port and
  the path passed through :func:`~failcode.redact`, with every long random-looking path
  segment, a token in the path, replaced by ``<secret>``).
"""

from __future__ import annotations

import base64
import collections
import functools
import heapq
import http.client
import ipaddress
import itertools
import logging
import os
import queue
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Literal

import msgspec

from failcode import (
    FC,
    Budget,
    Failure,
    FailureError,
    History,
    Policy,
    RetryClass,
    __version__,
    classify,
    classify_http,
    classify_text,
    decide,
    redact,
)
from failcode.policy._decide import Action
from failcode.record._frozen import FrozenDict

if TYPE_CHECKING:
    from collections.abc import Sequence

    from failcode.service._shared import SharedAlertState

__all__ = [
    "Alert",
    "AlertState",
    "Alerter",
    "AlerterStats",
    "BatchFacts",
    "FINDING_PATH",
    "FindingFact",
    "PAYLOAD_VERSION",
    "RULES",
    "Webhook",
    "allow_networks",
    "check_target",
    "check_webhook_url",
    "evaluate",
    "payload",
    "redact_url",
    "slack_body",
]

RULES: Final = frozenset({"new_finding", "regression", "rate"})
"""The rules a webhook may subscribe to."""
FINDING_PATH: Final = "/v1/findings/{finding_id}?project={project}"
"""Where a finding is read, under the service's public URL (linked from every alert)."""
PAYLOAD_VERSION: Final = 1
"""The ``failcode`` key of every JSON payload: bumped when a field changes meaning."""

MAX_WINDOW_S: Final = 7 * 86_400
MAX_THROTTLE_S: Final = 30 * 86_400
MAX_ATTEMPTS: Final = 20
_MINUTE_US: Final = 60_000_000
_SURFACE: Final = "service.alerts"
_POST_SURFACE: Final = "webhook.post"
_OPERATION: Final = "webhook"
_DEADLINE_S: Final = 900.0
_RETRY_AFTER_CEILING_S: Final = 300.0
_MAX_BODY_READ: Final = 4096
_SECRET_SEGMENT: Final = 24
_TITLES: Final = {"new_finding": "New finding", "regression": "Regression",
                  "rate": "Failure rate"}
_log = logging.getLogger("failcode.service.alerts")


def _bad(problem: str) -> FailureError:
    return FailureError(FC.DATA_INVALID_INPUT.failure(surface=_SURFACE,
                                                      params={"problem": problem}))


def _int(value: object) -> bool:
    return type(value) is int


# ---------------------------------------------------------------------------------------------
# URLs: what may be shown of one, and what must never be


def _looks_secret(segment: str) -> bool:
    """A path segment long and mixed enough to be a token (Discord's, a generic hook id)."""
    return (len(segment) >= _SECRET_SEGMENT and any(c.isdigit() for c in segment)
            and any(c.isalpha() for c in segment))


def redact_url(url: str) -> str:
    """``url`` as it may be shown: scheme, host, port and path, nothing that authenticates.

    The userinfo, the query and the fragment are dropped; the path goes through
    :func:`~failcode.redact`, and each path segment of 24 or more characters that mixes
    letters and digits becomes ``<secret>``. Never raises: a URL that does not parse shows as
    ``<unparsable url>``.
    """
    try:
        parts = urllib.parse.urlsplit(str(url))
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<unparsable url>"
    if ":" in host:
        host = f"[{host}]"
    shown_host = f"{host}:{port}" if port is not None else host
    path = "/".join("<secret>" if _looks_secret(segment) else segment
                    for segment in parts.path.split("/"))
    return redact(f"{parts.scheme}://{shown_host}{path}")


def _secret_parts(url: str) -> tuple[str, ...]:
    """The pieces of ``url`` that must never appear in a message (4+ characters each)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return (url,)
    found: list[str] = []
    if parts.query:
        found.append(parts.query)
        found.extend(value for _, value in urllib.parse.parse_qsl(parts.query))
    if parts.fragment:
        found.append(parts.fragment)
    userinfo, at, _ = parts.netloc.rpartition("@")
    if at:
        found.append(userinfo)
        found.extend(urllib.parse.unquote(piece) for piece in userinfo.split(":"))
    shown_path = redact_url(url).split("://", 1)[-1].partition("/")[2]
    if shown_path != parts.path.lstrip("/"):
        found.extend(segment for segment in parts.path.split("/")
                     if segment and segment not in shown_path.split("/"))
    unique = {piece for piece in found if len(piece) >= 4}
    unique |= {urllib.parse.unquote(piece) for piece in unique}
    return tuple(sorted(unique, key=len, reverse=True))


def _scrub(text: str, secrets: Sequence[str]) -> str:
    for piece in secrets:
        text = text.replace(piece, "<secret>")
    return redact(text)


# ---------------------------------------------------------------------------------------------
# where a webhook may point: public addresses, and what the allow-list opens

ALLOW_ENV: Final = "FAILCODE_WEBHOOK_ALLOW"
"""The environment variable an :class:`Alerter` reads its allow-list from when given none:
networks in CIDR notation separated by commas (``10.0.0.0/8,127.0.0.1/32``)."""

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def allow_networks(values: Sequence[str] | str | None = None) -> tuple[Network, ...]:
    """The networks a webhook may reach although they are not public.

    ``values`` is a list of CIDR networks (``"10.0.0.0/8"``, ``"127.0.0.1/32"``, ``"fd00::/8"``)
    or one text of them separated by commas; None reads :data:`ALLOW_ENV` (unset or empty:
    none). A network with host bits set (``10.0.0.1/8``) is refused, not widened.

    Raises:
        FailureError: FC-DATA-001 naming the value and what is expected.
    """
    if values is None:
        values = os.environ.get(ALLOW_ENV, "")
    if isinstance(values, str):
        values = [piece for piece in (part.strip() for part in values.split(",")) if piece]
    found: list[Network] = []
    for value in values:
        try:
            found.append(ipaddress.ip_network(str(value).strip(), strict=True))
        except ValueError as error:
            msg = (f"webhook_allow entry {value!r:.60} is not a network in CIDR notation "
                   f"(e.g. 10.0.0.0/8 or 127.0.0.1/32): {error}")
            raise _bad(msg) from None
    return tuple(found)


def _refusal(address: str, allow: Sequence[Network]) -> str | None:
    """Why ``address`` may not be reached (a few words), or None when it may.

    A public (globally routable) address may; any other only when one of ``allow`` holds it.
    An IPv4-mapped IPv6 address is judged as its IPv4 address.
    """
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "not an IP address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if any(ip.version == net.version and ip in net for net in allow):
        return None
    checks = (("loopback", ip.is_loopback), ("link-local", ip.is_link_local),
              ("unspecified", ip.is_unspecified), ("multicast", ip.is_multicast),
              ("private", ip.is_private), ("reserved", ip.is_reserved),
              ("not public", not ip.is_global))
    return next((f"a {name} address" if name != "not public" else "not a public address"
                 for name, hit in checks if hit), None)


def _refused_message(url: str, address: str, why: str) -> str:
    return (f"webhook URL {redact_url(url)!r} reaches {address}, {why}; webhooks may reach "
            "only public addresses unless the service's webhook_allow lists the network "
            "(failcode serve --webhook-allow 10.0.0.0/8, or FAILCODE_WEBHOOK_ALLOW)")


def check_target(url: str, allow: Sequence[Network] = ()) -> None:
    """Refuse a webhook ``url`` whose host is, or resolves to, an address it may not reach.

    Checked when a webhook is registered; delivery checks again, on the address it connects
    to (a name's DNS may change after registration). A name that does not resolve now passes
    here (delivery refuses it if it later resolves somewhere refused). Every address a name
    resolves to must be allowed (see :func:`_refusal`).

    Raises:
        FailureError: FC-DATA-001 naming the redacted URL, the address and why.
    """
    try:
        host = urllib.parse.urlsplit(url).hostname or ""
    except ValueError:
        return  # Webhook itself refuses a URL that does not parse
    try:
        addresses = [str(ipaddress.ip_address(host))]
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            return
        addresses = sorted({str(info[4][0]) for info in infos})
    for address in addresses:
        why = _refusal(address, allow)
        if why is not None:
            raise _bad(_refused_message(url, address, why))


def check_webhook_url(url: str, allow: Sequence[str] | str | None = None) -> None:
    """:func:`check_target` with the allow-list as the service's ``webhook_allow`` holds it
    (None: :data:`ALLOW_ENV`); what the service calls before it registers a webhook.

    Raises:
        FailureError: FC-DATA-001 (answered 400) naming the redacted URL, the address and why,
            or a bad allow-list entry.
    """
    check_target(url, allow_networks(allow))


class _RefusedError(OSError):
    """A connection not made: every address of the host is one a webhook may not reach."""


def _guarded_connect(allow: Sequence[Network], address: tuple[str, int],
                     timeout: float | None = None,
                     source_address: tuple[str, int] | None = None,
                     *_: object, **__: object) -> socket.socket:
    """:func:`socket.create_connection`, connecting only to addresses :func:`_refusal` allows:
    the address checked is the address connected to, so a DNS change cannot slip past."""
    host, port = address
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    last: OSError | None = None
    refused: list[str] = []
    for family, kind, proto, _name, sockaddr in infos:
        why = _refusal(str(sockaddr[0]), allow)
        if why is not None:
            refused.append(f"{sockaddr[0]} ({why})")
            continue
        sock = socket.socket(family, kind, proto)
        try:
            if timeout is not None:
                sock.settimeout(timeout)
            if source_address is not None:
                sock.bind(source_address)
            sock.connect(sockaddr)
        except OSError as error:
            sock.close()
            last = error
            continue
        return sock
    if last is not None:
        raise last
    shown = ", ".join(sorted(set(refused))) or "no address"
    msg = (f"host {host} reaches only {shown}; webhooks may reach only public addresses "
           "unless the service's webhook_allow lists the network")
    raise _RefusedError(msg)


class _GuardedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, *args: Any, allow: Sequence[Network], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = functools.partial(_guarded_connect, allow)


class _GuardedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, *args: Any, allow: Sequence[Network], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = functools.partial(_guarded_connect, allow)


class _GuardedHTTPHandler(urllib.request.HTTPHandler):
    """Plain HTTP through :func:`_guarded_connect`."""

    def __init__(self, allow: Sequence[Network]) -> None:
        super().__init__()
        self._allow = tuple(allow)

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        """Open ``req`` on a guarded connection."""
        return self.do_open(functools.partial(_GuardedHTTPConnection, allow=self._allow), req)


class _GuardedHTTPSHandler(urllib.request.HTTPSHandler):
    """HTTPS through :func:`_guarded_connect` (the certificate is checked for the host name)."""

    def __init__(self, allow: Sequence[Network]) -> None:
        super().__init__()
        self._allow = tuple(allow)

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        """Open ``req`` on a guarded TLS connection."""
        return self.do_open(functools.partial(_GuardedHTTPSConnection, allow=self._allow), req,
                            context=self._context)  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------
# the records


class Webhook(msgspec.Struct, frozen=True, kw_only=True):
    """One webhook of a project: where to POST and which rules it listens to.

    Attributes:
        id: the webhook's id (names it in every message; its URL never does).
        project: the project whose batches it hears.
        url: an ``http`` or ``https`` URL with a host; its query and userinfo may hold a token.
        on: the rules it listens to, a non-empty subset of :data:`RULES`.
        rate_threshold: the ``rate`` rule fires when a finding's failures within the window
            are more than this (required with ``rate``).
        rate_window_s: the rolling window of the ``rate`` rule, whole minutes, up to 7 days.
        throttle_s: at most one alert per (webhook, rule, signature) per this many seconds.
        format: ``json`` (:func:`payload`) or ``slack`` (:func:`slack_body`).

    Raises:
        FailureError: FC-DATA-001 naming the field, the value and what is expected.
    """

    id: str
    project: str
    url: str
    on: frozenset[str]
    rate_threshold: int | None = None
    rate_window_s: int = 3600
    throttle_s: int = 600
    format: Literal["json", "slack"] = "json"

    def __post_init__(self) -> None:
        for name in ("id", "project"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip() or len(value) > 200:
                msg = f"Webhook.{name} {value!r:.60} is not a non-empty text of 200 characters"
                raise _bad(msg)
        self._check_url()
        on = self.on
        if isinstance(on, str) or not isinstance(on, (set, frozenset, list, tuple)):
            msg = (f"Webhook.on {on!r:.80} is not a set of rules; expected a subset of "
                   f"{', '.join(sorted(RULES))}")
            raise _bad(msg)
        unknown = sorted(str(rule) for rule in on if rule not in RULES)
        if unknown or not on:
            shown = ", ".join(repr(rule)[:40] for rule in unknown) or "an empty set"
            msg = (f"Webhook.on has {shown}; expected a non-empty subset of "
                   f"{', '.join(sorted(RULES))}")
            raise _bad(msg)
        if type(on) is not frozenset:
            msgspec.structs.force_setattr(self, "on", frozenset(on))
        threshold = self.rate_threshold
        if threshold is not None and (not _int(threshold) or threshold < 0):
            msg = f"Webhook.rate_threshold {threshold!r:.40} is not a whole number >= 0"
            raise _bad(msg)
        if "rate" in on and threshold is None:
            raise _bad("Webhook.rate_threshold is missing; the rule 'rate' needs one")
        window = self.rate_window_s
        if not _int(window) or not 60 <= window <= MAX_WINDOW_S or window % 60:
            msg = (f"Webhook.rate_window_s {window!r:.40} is not a whole number of minutes "
                   f"(a multiple of 60) from 60 to {MAX_WINDOW_S}")
            raise _bad(msg)
        throttle = self.throttle_s
        if not _int(throttle) or not 0 <= throttle <= MAX_THROTTLE_S:
            msg = (f"Webhook.throttle_s {throttle!r:.40} is not a whole number from 0 to "
                   f"{MAX_THROTTLE_S}")
            raise _bad(msg)
        if self.format not in ("json", "slack"):
            msg = f"Webhook.format {self.format!r:.40} is not 'json' or 'slack'"
            raise _bad(msg)

    def _check_url(self) -> None:
        url = self.url
        if not isinstance(url, str):
            msg = f"Webhook.url is a {type(url).__name__}, not a text"
            raise _bad(msg)
        try:
            parts = urllib.parse.urlsplit(url)
            scheme, host, _ = parts.scheme, parts.hostname, parts.port
        except ValueError:
            scheme, host = "", None
        shown = redact_url(url)
        if (len(url) > 2048 or not url.isprintable() or any(c.isspace() for c in url)
                or scheme not in ("http", "https") or not host):
            msg = (f"Webhook.url {shown!r} is not an http or https URL with a host of at most "
                   "2048 printable characters without spaces")
            raise _bad(msg)

    def __repr__(self) -> str:
        return (f"Webhook(id={self.id!r}, project={self.project!r}, "
                f"url={redact_url(self.url)!r}, on={sorted(self.on)!r}, "
                f"rate_threshold={self.rate_threshold!r}, rate_window_s={self.rate_window_s!r}, "
                f"throttle_s={self.throttle_s!r}, format={self.format!r})")


class FindingFact(msgspec.Struct, frozen=True, kw_only=True):
    """What an alert tells of one finding (its row after the batch).

    Attributes:
        project: the finding's project.
        finding_id: its number within the project.
        signature: the failure signature it groups.
        code: the failure code (``FC-PROV-003``).
        category: who acts (``transient``, ``user``...).
        message: its last message (already redacted by the store; redacted again on the way out).
        remedy: what to do, when known.
        count: its failures in all.
        sessions: the sessions it failed in.
        first_us: its first failure, microseconds since the epoch (UTC).
        last_us: its last failure, likewise.
        version: the agent version of the event that triggered the alert, when known.
    """

    project: str
    finding_id: int
    signature: str
    code: str
    category: str
    message: str
    remedy: str | None
    count: int
    sessions: int
    first_us: int
    last_us: int
    version: str | None = None


class BatchFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What one ingested batch did to a project's findings.

    Attributes:
        project: the project.
        now_us: the batch's time (microseconds since the epoch, UTC): windows and throttles
            run on it, not on the wall clock.
        new_findings: findings created by this batch.
        regressions: resolved findings this batch reopened.
        counts: every finding the batch touched and how many failures of it the batch added.

    Raises:
        FailureError: FC-DATA-001 for a count that is not a whole number >= 0.
    """

    project: str
    now_us: int
    new_findings: tuple[FindingFact, ...] = ()
    regressions: tuple[FindingFact, ...] = ()
    counts: tuple[tuple[FindingFact, int], ...] = ()

    def __post_init__(self) -> None:
        if not _int(self.now_us):
            msg = f"BatchFacts.now_us {self.now_us!r:.40} is not a whole number of microseconds"
            raise _bad(msg)
        for index, (_, added) in enumerate(self.counts):
            if not _int(added) or added < 0:
                msg = f"BatchFacts.counts[{index}] adds {added!r:.40}; expected a whole number >= 0"
                raise _bad(msg)


class Alert(msgspec.Struct, frozen=True, kw_only=True):
    """One alert :func:`evaluate` fired.

    Attributes:
        webhook_id: the webhook it goes to.
        rule: ``new_finding``, ``regression`` or ``rate``.
        project: the project.
        finding: the finding it is about.
        why: one human sentence saying why it fired.
        fired_us: the batch time it fired at.
        window_s: the rate rule's window (None for the other rules).
        observed: the failures the rate rule counted in the window (None for the others).
    """

    webhook_id: str
    rule: str
    project: str
    finding: FindingFact
    why: str
    fired_us: int
    window_s: int | None = None
    observed: int | None = None


# ---------------------------------------------------------------------------------------------
# the state: per-minute windows and quiet times


class _Window:
    """One (webhook, signature)'s failures per minute, oldest first, and their total."""

    __slots__ = ("buckets", "newest", "total", "width")

    def __init__(self, width: int) -> None:
        self.buckets: collections.deque[list[int]] = collections.deque()
        self.newest: int | None = None
        self.total = 0
        self.width = width

    def _expire(self) -> None:
        if self.newest is None:
            return
        floor = self.newest - self.width
        buckets = self.buckets
        while buckets and buckets[0][0] <= floor:
            self.total -= buckets.popleft()[1]

    def add(self, minute: int, failures: int, width: int) -> int:
        """Add ``failures`` at ``minute``; the window's total afterwards."""
        if width != self.width:
            self.width = width
            self._expire()
        if self.newest is None or minute > self.newest:
            self.newest = minute
            self._expire()
        elif minute <= self.newest - self.width:
            return self.total  # older than the window: it no longer counts
        buckets = self.buckets
        if buckets and buckets[-1][0] == minute:
            buckets[-1][1] += failures
        elif not buckets or buckets[-1][0] < minute:
            buckets.append([minute, failures])
        else:  # a batch older than the newest minute: rare, found from the newest end
            for position in range(len(buckets) - 1, -1, -1):
                if buckets[position][0] == minute:
                    buckets[position][1] += failures
                    break
                if buckets[position][0] < minute:
                    buckets.insert(position + 1, [minute, failures])
                    break
            else:
                buckets.appendleft([minute, failures])
        self.total += failures
        return self.total

    def over(self, minute: int) -> bool:
        """Whether every bucket has left the window at ``minute``."""
        return self.newest is None or self.newest <= minute - self.width


_WindowKey = tuple[str, str, str]
_QuietKey = tuple[str, str, str, str]


class AlertState:
    """The memory :func:`evaluate` keeps between batches (not thread-safe; :class:`Alerter`
    serializes it).

    Per (project, webhook, signature): the rate window, at most ``rate_window_s / 60``
    per-minute buckets. Per (project, webhook, rule, signature): the batch time until which it
    is quiet. In memory only: after a restart every window is empty and nothing is quiet.
    """

    __slots__ = ("_next_sweep", "_quiet", "_windows")

    def __init__(self) -> None:
        self._windows: dict[_WindowKey, _Window] = {}
        self._quiet: dict[_QuietKey, int] = {}
        self._next_sweep: int | None = None

    def footprint(self) -> dict[str, int]:
        """How much the state holds: ``windows``, ``buckets`` and ``throttles``."""
        return {"windows": len(self._windows),
                "buckets": sum(len(w.buckets) for w in self._windows.values()),
                "throttles": len(self._quiet)}

    def _add(self, key: _WindowKey, now_us: int, failures: int, window_s: int) -> int:
        width = window_s // 60
        window = self._windows.get(key)
        if window is None:
            window = self._windows[key] = _Window(width)
        return window.add(now_us // _MINUTE_US, failures, width)

    def _allow(self, key: _QuietKey, now_us: int, throttle_s: int) -> bool:
        """Whether ``key`` may fire at ``now_us``; if so, it is quiet for ``throttle_s``."""
        until = self._quiet.get(key)
        if until is not None and now_us < until:
            return False
        if throttle_s:
            self._quiet[key] = now_us + throttle_s * 1_000_000
        else:
            self._quiet.pop(key, None)
        return True

    def _sweep(self, now_us: int) -> None:
        """Forget windows whose buckets all left and quiet times that ended (once a minute)."""
        if self._next_sweep is not None and now_us < self._next_sweep:
            return
        self._next_sweep = now_us + _MINUTE_US
        minute = now_us // _MINUTE_US
        for key in [k for k, w in self._windows.items() if w.over(minute)]:
            del self._windows[key]
        for quiet in [k for k, until in self._quiet.items() if until <= now_us]:
            del self._quiet[quiet]


# ---------------------------------------------------------------------------------------------
# the rule


def _plural(number: int, word: str) -> str:
    return f"{number} {word}" if number == 1 else f"{number} {word}s"


def _span(window_s: int) -> str:
    if window_s >= 7200 and window_s % 3600 == 0:
        return f"{window_s // 3600} h"
    return f"{window_s // 60} min"


def _in_version(fact: FindingFact) -> str:
    return f" in agent version {fact.version}" if fact.version else ""


def _unique(facts: Sequence[FindingFact]) -> list[FindingFact]:
    """``facts`` with each signature once (its first), in order."""
    first: dict[str, FindingFact] = {}
    for fact in facts:
        first.setdefault(fact.signature, fact)
    return list(first.values())


def evaluate(webhooks: Sequence[Webhook], facts: BatchFacts,
             state: AlertState | SharedAlertState) -> list[Alert]:
    """The alerts ``facts`` fires for ``webhooks`` (the module's rules).

    Pure apart from ``state``: it adds the batch's failures to the rate windows and starts the
    quiet time of every alert it fires.

    Args:
        webhooks: every webhook that might hear the batch (others' projects are skipped).
        facts: what the batch did.
        state: the windows and quiet times, kept by the caller between batches.

    Returns:
        The alerts, in the module's order.
    """
    now = facts.now_us
    project = facts.project
    state._sweep(now)
    totals: dict[str, list[Any]] = {}
    for fact, added in facts.counts:
        if added > 0:
            entry = totals.setdefault(fact.signature, [fact, 0])
            entry[0] = fact
            entry[1] += added
    new = _unique(facts.new_findings)
    regressions = _unique(facts.regressions)
    alerts: list[Alert] = []
    for hook in webhooks:
        if hook.project != project:
            continue
        on, hook_id, throttle = hook.on, hook.id, hook.throttle_s
        if "new_finding" in on:
            for fact in new:
                if state._allow((project, hook_id, "new_finding", fact.signature), now,
                                throttle):
                    why = (f"a new finding: {fact.code} failed for the first time"
                           f"{_in_version(fact)} ({_plural(fact.count, 'failure')} in "
                           f"{_plural(fact.sessions, 'session')} so far)")
                    alerts.append(Alert(webhook_id=hook_id, rule="new_finding",
                                        project=project, finding=fact, why=why, fired_us=now))
        if "regression" in on:
            for fact in regressions:
                if state._allow((project, hook_id, "regression", fact.signature), now,
                                throttle):
                    why = (f"a regression: the resolved finding {fact.code} failed again"
                           f"{_in_version(fact)}")
                    alerts.append(Alert(webhook_id=hook_id, rule="regression",
                                        project=project, finding=fact, why=why, fired_us=now))
        threshold = hook.rate_threshold
        if "rate" in on and threshold is not None:
            window_s = hook.rate_window_s
            for signature, (fact, added) in totals.items():
                observed = state._add((project, hook_id, signature), now, added, window_s)
                if observed > threshold and state._allow((project, hook_id, "rate", signature),
                                                         now, throttle):
                    why = (f"{_plural(observed, 'failure')} in the last {_span(window_s)} "
                           f"(threshold {threshold})")
                    alerts.append(Alert(webhook_id=hook_id, rule="rate", project=project,
                                        finding=fact, why=why, fired_us=now, window_s=window_s,
                                        observed=observed))
    return alerts


# ---------------------------------------------------------------------------------------------
# bodies


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _finding_url(alert: Alert, base_url: str | None) -> str | None:
    if not base_url:
        return None
    path = FINDING_PATH.format(project=urllib.parse.quote(alert.project, safe=""),
                               finding_id=alert.finding.finding_id)
    return base_url.rstrip("/") + path


def _slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _summary(alert: Alert, url: str | None) -> str:
    fact = alert.finding
    text = (f"[failcode] {_TITLES.get(alert.rule, alert.rule)} in {alert.project}: {fact.code} "
            f"{_one_line(redact(fact.message), 200)} — {alert.why}")
    text = _slack_escape(_one_line(text, 600))
    return f"{text} {url}" if url else text


def payload(alert: Alert, *, base_url: str | None) -> dict[str, Any]:
    """The JSON body of ``alert`` for a ``json`` webhook.

    Keys: ``failcode`` (:data:`PAYLOAD_VERSION`), ``rule``, ``why``, ``project``, ``webhook``,
    ``fired_us``, ``window_s`` and ``observed`` (the rate rule's, else null), ``finding``
    (``id``, ``signature``, ``code``, ``category``, ``message``, ``remedy``, ``count``,
    ``sessions``, ``first_us``, ``last_us``, ``version``, ``url``) and ``text``: a one-line
    summary, Slack-safe (``&``, ``<`` and ``>`` written as entities), so the body posts to a
    Slack-compatible incoming webhook as it is. ``url`` is the finding's page under
    ``base_url`` (:data:`FINDING_PATH`), null without one. Message and remedy are redacted.
    """
    fact = alert.finding
    url = _finding_url(alert, base_url)
    return {
        "failcode": PAYLOAD_VERSION,
        "rule": alert.rule,
        "why": alert.why,
        "project": alert.project,
        "webhook": alert.webhook_id,
        "fired_us": alert.fired_us,
        "window_s": alert.window_s,
        "observed": alert.observed,
        "finding": {
            "id": fact.finding_id,
            "signature": fact.signature,
            "code": fact.code,
            "category": fact.category,
            "message": redact(fact.message),
            "remedy": redact(fact.remedy) if fact.remedy is not None else None,
            "count": fact.count,
            "sessions": fact.sessions,
            "first_us": fact.first_us,
            "last_us": fact.last_us,
            "version": fact.version,
            "url": url,
        },
        "text": _summary(alert, url),
    }


def _when(micros: int) -> str:
    try:
        return datetime.fromtimestamp(micros / 1_000_000, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    except (OverflowError, OSError, ValueError):
        return str(micros)


def _code(text: str) -> str:
    return "`" + _slack_escape(text.replace("`", "'")) + "`"


def slack_body(alert: Alert, *, base_url: str | None) -> dict[str, Any]:
    """The body of ``alert`` for a Slack incoming webhook: ``{"text": ..., "blocks": [...]}``.

    ``text`` is the notification's fallback (the same summary as :func:`payload`'s); the
    blocks are a ``header`` (plain text, at most 150 characters), a ``section`` with the code,
    the message and why it fired, a ``section`` of ``fields`` (category, failures, sessions,
    first and last seen, version), a ``section`` with the remedy when there is one, and a
    ``context`` with the signature and a link to the finding when ``base_url`` is set. Text is
    mrkdwn with ``&``, ``<`` and ``>`` escaped, cut to Slack's limits (3000 characters a
    section, 2000 a field).
    """
    fact = alert.finding
    url = _finding_url(alert, base_url)
    title = _one_line(f"{_TITLES.get(alert.rule, alert.rule)} in {alert.project}: {fact.code}",
                      150)
    main = (f"*{_slack_escape(fact.code)}* {_slack_escape(_one_line(redact(fact.message), 1500))}"
            f"\n{_slack_escape(_one_line(alert.why, 1000))}")
    fields = [("Category", _slack_escape(fact.category)),
              ("Failures", str(fact.count)),
              ("Sessions", str(fact.sessions)),
              ("First seen", _when(fact.first_us)),
              ("Last seen", _when(fact.last_us))]
    if fact.version:
        fields.append(("Version", _slack_escape(_one_line(fact.version, 200))))
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": title, "emoji": True}},
        {"type": "section", "text": {"type": "mrkdwn", "text": main[:3000]}},
        {"type": "section", "fields": [{"type": "mrkdwn", "text": f"*{name}*\n{value}"[:2000]}
                                       for name, value in fields]},
    ]
    if fact.remedy:
        remedy = _slack_escape(_one_line(redact(fact.remedy), 2900))
        blocks.append({"type": "section", "text": {"type": "mrkdwn",
                                                   "text": f"*Remedy*\n{remedy}"[:3000]}})
    context = f"Signature {_code(_one_line(fact.signature, 500))}"
    if url:
        context += f" · <{url.replace('|', '%7C').replace('>', '%3E')}|Open the finding>"
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": context[:3000]}]})
    return {"text": _summary(alert, url), "blocks": blocks}


# ---------------------------------------------------------------------------------------------
# delivery


class AlerterStats(msgspec.Struct, frozen=True, kw_only=True):
    """What an :class:`Alerter` did since it started.

    Attributes:
        fired: alerts :func:`evaluate` fired.
        delivered: alerts a webhook accepted (2xx).
        failed: alerts given up (a refusal or the retries exhausted).
        dropped: alerts not sent: the queue was full, or the alerter closed.
        retries: attempts after the first.
        pending: alerts waiting, retrying or in flight.
        last_failure: the last failure that made an alert be given up (its context names the
            webhook and its :func:`redact_url`), or None.
    """

    fired: int
    delivered: int
    failed: int
    dropped: int
    retries: int
    pending: int
    last_failure: Failure | None


class _Delivery:
    """One alert on its way: its target, body, attempts so far and when it may go next."""

    __slots__ = ("alert", "attempts", "body", "history", "hook")

    def __init__(self, alert: Alert, hook: Webhook, body: bytes) -> None:
        self.alert = alert
        self.hook = hook
        self.body = body
        self.attempts = 0
        self.history = History(operation=_OPERATION)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuse every redirect: the 3xx is answered as the failure it is."""

    def redirect_request(  # noqa: PLR0917 - urllib's own signature
            self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
            newurl: str) -> None:
        """None: urllib then raises the 3xx as an HTTPError."""


class _Lane:
    """One project's deliveries: its queue, what it holds and the thread that works it."""

    __slots__ = ("pending", "project", "queue", "thread")

    def __init__(self, project: str) -> None:
        self.project = project
        self.queue: queue.SimpleQueue[tuple[Alert, Webhook] | None] = queue.SimpleQueue()
        self.pending = 0
        self.thread: threading.Thread | None = None


class Alerter:
    """Evaluates batches and delivers their alerts, one daemon thread per project (see the
    module).

    Args:
        timeout_s: the longest one request may take (connect and answer).
        queue_size: the most alerts of one project waiting, retrying or in flight; more of
            that project are dropped (other projects' are not).
        max_attempts: attempts per alert, the first included (1 to 20).
        base_url: the service's public URL, for the link to each finding; None: no link.
        initial_delay_s: the backoff of the first retry (full jitter: a random share of it).
        max_delay_s: the cap of the backoff (a Retry-After up to 5 minutes is honoured beyond).
        allow: networks (CIDR) a webhook may reach although they are not public; None: those
            of :data:`ALLOW_ENV` (unset: none). See :func:`allow_networks`.
        state: the rate windows and quiet times; None: a new in-memory :class:`AlertState`
            (the service passes its :class:`~failcode.service._shared.SharedAlertState`).

    Raises:
        FailureError: FC-DATA-001 for an argument out of its range.
    """

    def __init__(self, *, timeout_s: float = 5.0, queue_size: int = 1000, max_attempts: int = 5,
                 base_url: str | None = None, initial_delay_s: float = 1.0,
                 max_delay_s: float = 60.0, allow: Sequence[str] | str | None = None,
                 state: AlertState | SharedAlertState | None = None) -> None:
        checks = (("timeout_s", timeout_s, 0.0, 600.0), ("queue_size", queue_size, 1, 1_000_000),
                  ("max_attempts", max_attempts, 1, MAX_ATTEMPTS),
                  ("initial_delay_s", initial_delay_s, 0.0, 3600.0),
                  ("max_delay_s", max_delay_s, 0.0, 3600.0))
        for name, value, low, high in checks:
            number = type(value) in (int, float) if isinstance(low, float) else _int(value)
            if not number or not low <= value <= high or (name == "timeout_s" and value == 0):
                msg = f"Alerter {name} {value!r:.40} is not a number in {low}..{high}"
                raise _bad(msg)
        if base_url is not None:
            parts = urllib.parse.urlsplit(str(base_url))
            if parts.scheme not in ("http", "https") or not parts.netloc:
                msg = f"Alerter base_url {redact_url(str(base_url))!r} is not an http(s) URL"
                raise _bad(msg)
        self.timeout_s = float(timeout_s)
        self.queue_size = queue_size
        self.max_attempts = max_attempts
        self.base_url = base_url
        self._policy = Policy(
            classes={_OPERATION: RetryClass(max_attempts=max_attempts,
                                            initial_delay_s=float(initial_delay_s),
                                            max_delay_s=float(max_delay_s),
                                            deadline_s=_DEADLINE_S)},
            retry_after_ceiling_s=_RETRY_AFTER_CEILING_S)
        self._budgets: dict[str, Budget] = {}
        self.allow = allow_networks(allow)
        self._opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({}), _NoRedirect(), _GuardedHTTPHandler(self.allow),
            _GuardedHTTPSHandler(self.allow))
        self._state = AlertState() if state is None else state
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._lanes: dict[str, _Lane] = {}
        self._closed = False
        self._stop_at: float | None = None
        self._fired = self._delivered = self._failed = self._dropped = self._retries = 0
        self._pending = 0
        self._last_failure: Failure | None = None
        self._order = itertools.count()

    # -- the caller's side --------------------------------------------------------------------

    def submit(self, webhooks: Sequence[Webhook], facts: BatchFacts) -> list[Alert]:
        """Evaluate ``facts`` and enqueue its alerts; returns them (delivered or not).

        Never blocks on delivery and never raises for it: a full queue of the batch's project
        or a closed alerter drops the alert and counts it (a warning names the project).
        """
        by_id = {hook.id: hook for hook in webhooks if hook.project == facts.project}
        dropped = 0
        with self._lock:
            alerts = evaluate(list(by_id.values()), facts, self._state)
            self._fired += len(alerts)
            for alert in alerts:
                lane = self._lanes.get(facts.project)
                if self._closed or (lane is not None and lane.pending >= self.queue_size):
                    dropped += 1
                    continue
                if lane is None:
                    lane = self._lanes[facts.project] = _Lane(facts.project)
                    lane.thread = threading.Thread(target=self._run, args=(lane,),
                                                   name="failcode-alerts", daemon=True)
                    lane.thread.start()
                lane.pending += 1
                self._pending += 1
                lane.queue.put((alert, by_id[alert.webhook_id]))
            self._dropped += dropped
            total = self._dropped
        if dropped and (total == dropped or total // 1000 != (total - dropped) // 1000):
            _log.warning("failcode alerts: project %s: %d alert(s) dropped (its queue of %d is "
                         "full or the alerter is closed); %d dropped in all", facts.project,
                         dropped, self.queue_size, total,
                         extra={"failcode_project": facts.project})
        return alerts

    def stats(self) -> AlerterStats:
        """The counts so far."""
        with self._lock:
            return AlerterStats(fired=self._fired, delivered=self._delivered,
                                failed=self._failed, dropped=self._dropped,
                                retries=self._retries, pending=self._pending,
                                last_failure=self._last_failure)

    def wait_idle(self, timeout_s: float = 5.0) -> bool:
        """Wait until nothing is pending (at most ``timeout_s``); whether that happened."""
        deadline = time.monotonic() + timeout_s
        with self._idle:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def close(self, timeout_s: float = 5.0) -> None:
        """Stop accepting alerts and give the worker ``timeout_s`` to deliver what waits.

        A retry due later than that, and whatever is still queued then, is dropped (counted).
        Returns after ``timeout_s`` at the latest even when a request still hangs (the thread
        is a daemon; its request ends with its own timeout). Closing twice is harmless.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._stop_at = stop_at = time.monotonic() + max(float(timeout_s), 0.0)
            threads = []
            for lane in self._lanes.values():
                lane.queue.put(None)  # its worker stops when it reads this
                if lane.thread is not None:
                    threads.append(lane.thread)
        for thread in threads:
            thread.join(max(stop_at - time.monotonic(), 0.0))

    def __enter__(self) -> Alerter:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- the worker ---------------------------------------------------------------------------

    def _finish(self, lane: _Lane, *, delivered: bool = False, failure: Failure | None = None,
                dropped: int = 0) -> None:
        with self._lock:
            lane.pending -= int(delivered or failure is not None) + dropped
            if delivered:
                self._delivered += 1
                self._pending -= 1
            elif failure is not None:
                self._failed += 1
                self._pending -= 1
                self._last_failure = failure
            if dropped:
                self._dropped += dropped
                self._pending -= dropped
            if not self._pending:
                self._idle.notify_all()

    def _run(self, lane: _Lane) -> None:
        """Work one project's lane: first tries before due retries, one request at a time;
        ends when the lane holds nothing (a later alert starts a new worker) or at close."""
        waiting: list[tuple[float, int, _Delivery]] = []
        stopping = False
        while True:
            now = time.monotonic()
            stop_at = self._stop_at
            if stop_at is not None:
                if now >= stop_at:
                    self._drop_queued(lane, len(waiting))
                    return
                keep = [entry for entry in waiting if entry[0] <= stop_at]
                if len(keep) < len(waiting):  # due after the close's deadline: never sent
                    self._finish(lane, dropped=len(waiting) - len(keep))
                    waiting = keep
                    heapq.heapify(waiting)
            try:
                item = lane.queue.get_nowait()  # a first try goes before any due retry
            except queue.Empty:
                pass
            else:
                stopping = self._take(lane, item, waiting) or stopping
                continue
            if waiting and waiting[0][0] <= now:
                self._attempt(lane, heapq.heappop(waiting)[2], waiting)
                continue
            if stopping and not waiting:
                return
            if not waiting and stop_at is None:
                with self._lock:
                    if not lane.pending:  # nothing queued, retrying or in flight: end
                        if self._lanes.get(lane.project) is lane:
                            del self._lanes[lane.project]
                        return
            timeout = waiting[0][0] - now if waiting else None
            if stop_at is not None:
                timeout = stop_at - now if timeout is None else min(timeout, stop_at - now)
            try:
                item = lane.queue.get(timeout=timeout)
            except queue.Empty:
                continue
            stopping = self._take(lane, item, waiting) or stopping

    def _take(self, lane: _Lane, item: tuple[Alert, Webhook] | None,
              waiting: list[tuple[float, int, _Delivery]]) -> bool:
        """Make the first try of ``item``; True when it is the stop mark instead."""
        if item is None:
            return True
        alert, hook = item
        try:
            body = self._body(alert, hook)
        except Exception as error:  # noqa: BLE001 - one bad alert never stops the worker
            self._give_up(lane, alert, hook, self._failure_of(error, hook), attempts=0)
            return False
        self._attempt(lane, _Delivery(alert, hook, body), waiting)
        return False

    def _drop_queued(self, lane: _Lane, count: int) -> None:
        """Count ``count`` waiting retries and everything still queued as dropped."""
        while True:
            try:
                item = lane.queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                count += 1
        if count:
            self._finish(lane, dropped=count)

    def _body(self, alert: Alert, hook: Webhook) -> bytes:
        shape = slack_body if hook.format == "slack" else payload
        return msgspec.json.encode(shape(alert, base_url=self.base_url))

    def _attempt(self, lane: _Lane, delivery: _Delivery,
                 waiting: list[tuple[float, int, _Delivery]]) -> None:
        hook, alert = delivery.hook, delivery.alert
        if delivery.attempts:
            with self._lock:
                self._retries += 1
        else:
            delivery.history = History(operation=_OPERATION, started_at=time.monotonic())
        delivery.attempts += 1
        try:
            failure = self._post(delivery)
        except Exception as error:  # noqa: BLE001 - a bug in delivery never stops the worker
            failure = self._failure_of(error, hook)
        if failure is None:
            budget = self._budgets.get(hook.id)
            if budget is not None:
                self._budgets[hook.id] = budget.refunded(self._policy)
            self._finish(lane, delivered=True)
            return
        failure = self._with_context(failure, delivery)
        decision = decide(failure, delivery.history, self._policy,
                          self._budgets.get(hook.id) or Budget.full(self._policy))
        self._budgets[hook.id] = decision.budget
        delivery.history = delivery.history.after(failure)
        if decision.action is Action.RETRY and delivery.attempts < self.max_attempts:
            _log.debug("failcode alerts: webhook %s (%s): %s alert attempt %d failed (%s); "
                       "retry in %.3g s", hook.id, redact_url(hook.url), alert.rule,
                       delivery.attempts, failure.code, decision.delay_s,
                       extra={"failcode_webhook": hook.id, "failcode_delay_s": decision.delay_s,
                              "failcode_code": failure.code})
            heapq.heappush(waiting, (time.monotonic() + decision.delay_s, next(self._order),
                                     delivery))
            return
        self._give_up(lane, alert, hook, failure, attempts=delivery.attempts,
                      reason=decision.reason)

    def _give_up(self, lane: _Lane, alert: Alert, hook: Webhook, failure: Failure, *,
                 attempts: int, reason: str = "") -> None:
        _log.warning("failcode alerts: webhook %s (%s): %s alert for %s not delivered after %s: "
                     "%s %s %s", hook.id, redact_url(hook.url), alert.rule,
                     alert.finding.signature, _plural(attempts, "attempt"), failure.code,
                     failure.message, reason,
                     extra={"failcode_webhook": hook.id, "failcode_code": failure.code})
        self._finish(lane, failure=failure)

    def _post(self, delivery: _Delivery) -> Failure | None:
        """One POST: None when delivered, else the failure (already free of the URL's secrets)."""
        hook = delivery.hook
        parts = urllib.parse.urlsplit(hook.url)
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        if parts.port is not None:
            netloc += f":{parts.port}"
        target = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query,
                                          ""))
        headers = {"Content-Type": "application/json",
                   "User-Agent": f"failcode/{__version__}",
                   "X-Failcode-Alert": delivery.alert.rule}
        if parts.username is not None:
            user = urllib.parse.unquote(parts.username)
            password = urllib.parse.unquote(parts.password or "")
            token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            headers["Authorization"] = f"Basic {token}"
        # S310: the scheme is http or https, checked when the Webhook was made
        request = urllib.request.Request(target, data=delivery.body, headers=headers,  # noqa: S310
                                         method="POST")
        try:
            with self._opener.open(request, timeout=self.timeout_s) as response:
                response.read(65536)
            return None
        except urllib.error.HTTPError as error:
            secrets = _secret_parts(hook.url)
            try:
                raw = error.read(_MAX_BODY_READ)
            except (OSError, http.client.HTTPException):
                raw = b""
            finally:
                error.close()
            body = _scrub(raw.decode("utf-8", "replace"), secrets)
            answer = {str(k): _scrub(str(v), secrets) for k, v in error.headers.items()}
            return self._clean(classify_http(error.code, body, answer, surface=_POST_SURFACE),
                               secrets, f"HTTP {error.code}")
        except urllib.error.URLError as error:
            reason = error.reason
            cause = reason if isinstance(reason, BaseException) else error
            if isinstance(cause, _RefusedError):
                return _bad(f"webhook {hook.id} ({redact_url(hook.url)}): {cause}").failure
            return self._failure_of(cause, hook)
        except _RefusedError as error:
            return _bad(f"webhook {hook.id} ({redact_url(hook.url)}): {error}").failure
        except (OSError, http.client.HTTPException, ValueError) as error:
            return self._failure_of(error, hook)

    def _failure_of(self, error: BaseException, hook: Webhook) -> Failure:
        """``error`` classified, free of the URL's secrets (classified again from its scrubbed
        text when the first record would hold one)."""
        secrets = _secret_parts(hook.url)
        found: object = classify(error, surface=_POST_SURFACE)
        if not isinstance(found, Failure) or _leaks(found, secrets):
            found = classify_text(f"{type(error).__module__}.{type(error).__qualname__}",
                                  _scrub(str(error), secrets), surface=_POST_SURFACE)
        return self._clean(found, secrets, type(error).__name__)

    @staticmethod
    def _clean(failure: object, secrets: Sequence[str], name: str) -> Failure:
        """``failure`` when it holds none of ``secrets``, else a bare FC-SYS-001 naming ``name``."""
        if isinstance(failure, Failure) and not _leaks(failure, secrets):
            return failure
        return FC.SYS_UNKNOWN.failure(surface=_POST_SURFACE, params={"exception": name[:100]})

    def _with_context(self, failure: Failure, delivery: _Delivery) -> Failure:
        hook = delivery.hook
        context = {**failure.context, "webhook": hook.id, "project": hook.project,
                   "target": redact_url(hook.url), "rule": delivery.alert.rule,
                   "attempts": delivery.attempts}
        try:
            return msgspec.structs.replace(failure, context=FrozenDict(context))
        except Exception:  # noqa: BLE001 - a context that does not fit leaves the record as it was
            return failure


def _leaks(failure: Failure, secrets: Sequence[str]) -> bool:
    if not secrets:
        return False
    text = msgspec.json.encode(failure).decode("utf-8", "replace")
    return any(piece in text or msgspec.json.encode(piece).decode()[1:-1] in text
               for piece in secrets)
