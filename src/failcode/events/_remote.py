"""The client of a failcode service (``failcode serve``): :class:`RemoteSink` and :func:`report_to`.

::

    sink = failcode.report_to("https://failcode.example.com", key)
    @retry("provider", on_failure=failure_hook(sink))
    logging.getLogger().addHandler(EventHandler(sink))

Rules:

- The caller never waits for the network. ``emit`` encodes the event, appends its line to a
  bounded buffer and returns; it raises only for misuse (not an Event, the sink closed), never
  because the service is slow, down or refusing. One daemon thread per sink does all the
  sending, started on the first ``emit``.
- Batches: the thread posts up to ``batch`` events at once, as soon as that many are waiting;
  fewer once the first of them has waited ``flush_interval_s``, or at once while a ``flush``
  or ``close`` waits. A request is ``POST {url}/v1/events`` with one ``Event.to_json()`` line
  per event, ``Content-Type: application/x-ndjson``, ``Authorization: Bearer <key>``,
  ``User-Agent: failcode/<version>``, and ``Content-Encoding: gzip`` when the body is over
  :data:`GZIP_ABOVE` bytes.
- The buffer holds at most ``buffer`` events not yet acknowledged (those in a request that is
  under way included). When it is full the oldest are dropped and counted in
  ``stats.dropped``; a batch under way that is then acknowledged after all counts as sent.
- What an answer means (the service's contract):

  ====================================  =====================================================
  2xx                                   acknowledged: ``sent``, ``new``, ``duplicates``;
                                        lines the service rejected count as ``rejected``
  400, 422                              the batch is malformed: not retried, ``rejected``
  413                                   split in halves, each sent on its own, down to one
                                        event; one event refused alone is ``dropped``; later
                                        batches hold at most half as many events
  408, 425, 429, 5xx, no answer         transient: the same events are sent again later
  (refused, reset, timed out)
  401, 403, any other status            sending stops for good: every event held and every
                                        later one is ``dropped``; one line on stderr names
                                        the URL, the status and the service's FC code
  ====================================  =====================================================

- Retrying: the service stores each event id once, so sending a batch again is always safe.
  A transient failure is classified (:func:`~failcode.classify_http` for an answer,
  :func:`~failcode.classify` for a connection error) and :func:`~failcode.decide` chooses the
  delay, with the sink's own history and retry budget (operation class ``events.remote``: up
  to 8 attempts, backoff from 0.5 s doubling with full jitter, and the server's
  ``Retry-After`` honoured). Every delay is capped at ``max_delay_s``. When the decision is
  not to retry (attempts or budget spent: the outage outlasts the retry class), the sink keeps
  its events and tries again every ``max_delay_s`` until the service answers. A success starts
  a new history and refunds the budget. :func:`_retry_delay` is that rule.
- ``flush`` waits until every event emitted before it is acknowledged, rejected or dropped
  (True) or its timeout passes (False); without a timeout it waits as long as the service is
  down. ``close`` flushes for at most ``exit_timeout_s``, stops the thread and counts what is
  still held as dropped, with one line on stderr saying so; at interpreter exit the same
  happens by itself (an ``atexit`` hook, so it runs before ``logging.shutdown`` flushes the
  handlers). A process that exits normally while the service answers loses nothing.
  A retry wait under way when ``close`` begins is cut short, once: the last attempt goes at
  once (resending is safe), later waits run their course. ``emit`` after ``close`` raises
  ValueError; after the exit hook it counts the event as dropped (other exit hooks may still
  log).
- A forked child starts with an empty buffer and zeroed stats (its parent delivers what it
  held) and a sender thread of its own on its first ``emit``; a sink stopped for good stays
  stopped in the child.
- The key is sent in the header only: it appears in no error, repr, stats, Failure or stderr
  line, and any text the service sends back has it replaced by ``[key]`` before it is kept.
"""

from __future__ import annotations

import atexit
import contextlib
import gzip
import http.client
import math
import os
import re
import sys
import threading
import time
import weakref
from collections import deque
from itertools import islice
from typing import TYPE_CHECKING, Any, Final, NamedTuple
from urllib.parse import urlsplit

import msgspec

import failcode
from failcode import FC, Failure, redact
from failcode.events._event import Event
from failcode.policy._decide import Action, Budget, History, Policy, RetryClass, decide

if TYPE_CHECKING:
    from types import TracebackType

    from failcode import Decision

__all__ = ["GZIP_ABOVE", "RemoteSink", "RemoteStats", "report_to"]

GZIP_ABOVE: Final = 1024
"""Request bodies longer than this many bytes are sent gzip-compressed."""

EVENTS_PATH: Final = "/v1/events"
_SURFACE: Final = "events.remote"
_OPERATION: Final = "events.remote"
_MAX_ANSWER: Final = 1 << 20
"""The most of an answer's body read (bytes); the rest is not needed."""
_CODE: Final = re.compile(r"[A-Z][A-Z0-9]{0,15}-[A-Z0-9]{1,16}-[0-9]{3}")
_TRANSIENT: Final = frozenset({408, 425, 429})
_MALFORMED: Final = frozenset({400, 422})


class RemoteStats(msgspec.Struct, frozen=True, kw_only=True):
    """What a :class:`RemoteSink` did so far (a snapshot).

    ``emitted == sent + rejected + dropped + pending`` once the requests under way are settled.

    Attributes:
        emitted: events given to ``emit``.
        sent: events the service acknowledged (stored now or before).
        new: of those, events the service had not stored before (its count).
        duplicates: of those, events it already had (a batch sent again).
        rejected: events the service refused as malformed (never sent again).
        dropped: events given up: the buffer was full, one event was too large, sending
            stopped for good, or the sink closed before they were acknowledged.
        pending: events held, not yet acknowledged.
        retries: requests sent again after a transient failure.
        stopped: sending stopped for good (the key was refused, or the URL is wrong).
        last_failure: the Failure of the last problem (a transient one included), or None.
    """

    emitted: int = 0
    sent: int = 0
    new: int = 0
    duplicates: int = 0
    rejected: int = 0
    dropped: int = 0
    pending: int = 0
    retries: int = 0
    stopped: bool = False
    last_failure: Failure | None = None


class _Ack(msgspec.Struct):
    """The service's answer to a batch (fields it adds are ignored)."""

    received: int = 0
    new: int = 0
    duplicates: int = 0
    rejected: int = 0
    problems: list[Any] = msgspec.field(default_factory=list)


_ACK: Final = msgspec.json.Decoder(_Ack).decode


class _Target(NamedTuple):
    """Where the events go: ``shown`` is the endpoint's URL as messages name it."""

    https: bool
    host: str
    port: int | None
    path: str
    shown: str


def _shown_url(url: str) -> str:
    """A URL as an error message may quote it: credentials masked, redacted, cut."""
    text = re.sub(r"(?<=//)[^/@]*@", "***@", url)
    return redact(text)[:200]


def _target(url: object) -> _Target:
    """The endpoint of a service URL (``http`` or ``https``, a host, a path prefix)."""
    if not isinstance(url, str):
        msg = f"url={url!r:.80}: expected the service URL as a str (https://host[:port])"
        raise ValueError(msg)
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        msg = f"url={_shown_url(url)!r}: not a valid URL ({exc})"
        raise ValueError(msg) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        msg = (f"url={_shown_url(url)!r}: expected an http:// or https:// URL with a host "
               "(https://host[:port][/prefix])")
        raise ValueError(msg)
    if parts.username is not None or parts.password is not None:
        msg = (f"url={_shown_url(url)!r}: expected no credentials in the URL; pass the key "
               "as key")
        raise ValueError(msg)
    if parts.query or parts.fragment:
        msg = f"url={_shown_url(url)!r}: expected no query or fragment"
        raise ValueError(msg)
    path = parts.path.rstrip("/") + EVENTS_PATH
    netloc = parts.netloc
    return _Target(parts.scheme == "https", parts.hostname, port, path,
                   f"{parts.scheme}://{netloc}{path}")


def _check_key(key: object) -> str:
    """The key, checked; no message shows it."""
    if not isinstance(key, str):
        msg = f"key: expected the service key as a str, not {type(key).__name__}"
        raise ValueError(msg)
    if not key:
        msg = "key='': expected a non-empty key (one made by `failcode token create`)"
        raise ValueError(msg)
    if not all(" " < char < "\x7f" for char in key):
        msg = (f"key: expected printable ASCII without spaces; this key of {len(key)} "
               "characters has others (the key is not shown)")
        raise ValueError(msg)
    return key


def _number(name: str, value: object, *, integer: bool = False,
            zero: bool = False) -> float:
    """A positive (or, with ``zero``, non-negative) finite option; ValueError naming it."""
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if (number is None or (integer and not isinstance(number, int))
            or not math.isfinite(number) or number < 0 or (number == 0 and not zero)):
        what = "an integer" if integer else "a finite number of seconds"
        msg = f"{name}={value!r:.40}: expected {what} {'>= 0' if zero else '> 0'}"
        raise ValueError(msg)
    return number


def _retry_delay(decision: Decision, max_delay_s: float) -> float:
    """How long the sink waits before sending a batch again after a transient failure.

    The decision's delay when it retries (the backoff, or the server's ``Retry-After`` when
    longer); ``max_delay_s`` when it does not (attempts or budget spent: probe at the cap);
    never more than ``max_delay_s``.
    """
    delay = decision.delay_s if decision.action is Action.RETRY else max_delay_s
    return min(max(delay, 0.0), max_delay_s)


def _policy(max_delay_s: float) -> Policy:
    """The decision policy of a sink: its own operation class, capped at ``max_delay_s``."""
    return Policy(classes={_OPERATION: RetryClass(
        max_attempts=8, initial_delay_s=min(0.5, max_delay_s), max_delay_s=max_delay_s,
        multiplier=2.0, deadline_s=math.inf)})


def _events(count: int) -> str:
    return f"{count} event" if count == 1 else f"{count} events"


def _say(line: str) -> None:
    with contextlib.suppress(Exception):  # stderr may be closed at exit
        print(line, file=sys.stderr, flush=True)


class _Client:
    """The sender thread's connection (kept alive between requests when the server allows)."""

    __slots__ = ("conn", "target", "timeout_s")

    def __init__(self, target: _Target, timeout_s: float) -> None:
        self.target = target
        self.timeout_s = timeout_s
        self.conn: http.client.HTTPConnection | None = None

    def _connect(self) -> http.client.HTTPConnection:
        target = self.target
        if target.https:
            return http.client.HTTPSConnection(target.host, target.port, timeout=self.timeout_s)
        return http.client.HTTPConnection(target.host, target.port, timeout=self.timeout_s)

    def post(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        """One POST; the status, the headers (lower-case names) and the start of the body.

        A kept-alive connection the server had closed meanwhile is retried once on a new one
        (the request never reached the service).
        """
        retried = False
        while True:
            conn = self.conn
            if conn is None:
                conn = self.conn = self._connect()
            reused = conn.sock is not None
            try:
                conn.request("POST", self.target.path, body, headers)
                response = conn.getresponse()
                data = response.read(_MAX_ANSWER)
                answer = (response.status,
                          {name.lower(): value for name, value in response.getheaders()}, data)
                if not response.isclosed():  # an answer longer than read: start afresh
                    self.close()
            except (ConnectionResetError, BrokenPipeError):  # RemoteDisconnected included
                self.close()
                if not reused or retried:
                    raise
                retried = True
                continue
            except BaseException:
                self.close()
                raise
            return answer

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()


class _Result:
    """What one delivery of a batch settled: the first ``resolved`` lines, and how."""

    __slots__ = ("dropped", "duplicates", "limit", "new", "problem", "rejected", "resolved",
                 "sent", "stop", "stop_line", "transient")

    def __init__(self, limit: int) -> None:
        self.resolved = self.sent = self.new = self.duplicates = 0
        self.rejected = self.dropped = 0
        self.limit = limit
        self.problem: Failure | None = None
        self.transient: Failure | None = None
        self.stop: Failure | None = None
        self.stop_line = ""


class _Link:
    """Everything the sink, its sender thread and the exit hook share.

    It never refers to the sink, so a sink nobody holds is collected (its thread then sends
    what is left and ends). Every field below ``lock`` is read and written under it; the
    network is used only by the thread, without the lock.
    """

    def __init__(self, target: _Target, key: str, *, batch: int, buffer: int,
                 interval_s: float, timeout_s: float, max_delay_s: float,
                 exit_timeout_s: float) -> None:
        self.target = target
        self._key = key
        self.batch = batch
        self.buffer = buffer
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.max_delay_s = max_delay_s
        self.exit_timeout_s = exit_timeout_s
        self.policy = _policy(max_delay_s)
        base = {"Content-Type": "application/x-ndjson", "Accept": "application/json",
                "User-Agent": f"failcode/{failcode.__version__}",
                "Authorization": f"Bearer {key}"}
        self.plain_headers = base
        self.gzip_headers = {**base, "Content-Encoding": "gzip"}
        self.closed = False  # close() called: emit refuses
        self.exited = False  # closed by the exit hook: emit counts the event as dropped
        self.draining = False  # the sink was collected: send what is left, then end
        self.stopping = False  # the thread ends now
        self.stopped = False  # sending stopped for good
        self._fresh()

    def _fresh(self) -> None:
        """New locks, an empty buffer and zeroed counts (at start and in a forked child)."""
        self.lock = threading.Lock()
        self.wake = threading.Condition(self.lock)  # the thread waits on it
        self.done = threading.Condition(self.lock)  # flush waits on it
        self.queue: deque[bytes] = deque()
        self.head = 0  # the number of the event at queue[0]
        self.tail = 0  # the number the next emitted event gets
        self.emitted = self.sent = self.new = self.duplicates = 0
        self.rejected = self.dropped = self.retries = 0
        if not self.stopped:
            self.last_failure: Failure | None = None
        self.thread: threading.Thread | None = None
        self.flushers = 0
        self.limit = self.batch
        self.history = History(operation=_OPERATION)
        self.budget = Budget.full(self.policy)

    # -- the caller's side --------------------------------------------------------------------

    def emit(self, line: bytes) -> None:
        with self.lock:
            if self.closed and not self.exited:
                msg = f"RemoteSink({self.target.shown!r}) is closed"
                raise ValueError(msg)
            self.emitted += 1
            if self.stopped or self.closed:
                self.tail += 1
                self.head += 1
                self.dropped += 1
                return
            queue = self.queue
            queue.append(line)
            self.tail += 1
            if len(queue) > self.buffer:
                queue.popleft()
                self.head += 1
                self.dropped += 1
            if self.thread is None:
                self._start()
            elif len(queue) in (1, self.limit):
                self.wake.notify()

    def _start(self) -> None:
        """Start the sender thread; the lock is held."""
        thread = threading.Thread(target=self._run, name="failcode-remote-sink", daemon=True)
        try:
            thread.start()
        except RuntimeError as exc:  # the interpreter is shutting down
            failure = FC.SYS_UNKNOWN.failure(surface=_SURFACE, params={
                "exception": "RuntimeError"}, detail=f"no sender thread: {exc}")
            _say(self._halt(failure, "could not start its sender thread"))
            return
        self.thread = thread

    def flush(self, timeout_s: float | None) -> bool:
        with self.lock:
            target = self.tail
            if self.head >= target:
                return True
            end = None if timeout_s is None else time.monotonic() + timeout_s
            self.flushers += 1
            self.wake.notify()
            try:
                while self.head < target:
                    thread = self.thread
                    if self.stopping or thread is None or not thread.is_alive():
                        break
                    if end is None:
                        self.done.wait()
                        continue
                    left = end - time.monotonic()
                    if left <= 0:
                        break
                    self.done.wait(left)
                return self.head >= target
            finally:
                self.flushers -= 1

    def close(self, timeout_s: float, *, at_exit: bool = False) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
            self.exited = at_exit
            self.wake.notify()
        delivered = self.flush(timeout_s)
        with self.lock:
            self.stopping = True
            left = len(self.queue)
            self.dropped += left
            self.head += left
            self.queue.clear()
            failure = self.last_failure
            self.wake.notify_all()
            self.done.notify_all()
            thread = self.thread
        atexit.unregister(self.at_exit)
        if left:
            why = (f"{failure.message} ({failure.code})" if failure is not None
                   else f"not acknowledged within {timeout_s:g} s")
            _say(f"failcode: {_events(left)} not delivered to {self.target.shown} "
                 f"{'at exit' if at_exit else 'on close'}: {why}")
        if delivered and thread is not None and thread is not threading.current_thread():
            thread.join(self.timeout_s)  # idle: it ends at once

    def at_exit(self) -> None:
        """The exit hook: deliver what is held within ``exit_timeout_s``, then stop."""
        if self.thread is not None or self.queue:
            self.close(self.exit_timeout_s, at_exit=True)

    def retire(self) -> None:
        """The sink was collected: the thread sends what is left, then ends."""
        with self.lock:
            self.draining = True
            self.wake.notify()

    def forked(self) -> None:
        """In a forked child: the parent's buffer and thread are the parent's."""
        self._fresh()

    def stats(self) -> RemoteStats:
        with self.lock:
            return RemoteStats(
                emitted=self.emitted, sent=self.sent, new=self.new, duplicates=self.duplicates,
                rejected=self.rejected, dropped=self.dropped, pending=len(self.queue),
                retries=self.retries, stopped=self.stopped, last_failure=self.last_failure)

    # -- the sender thread ----------------------------------------------------------------------

    def _run(self) -> None:
        client = _Client(self.target, self.timeout_s)
        try:
            self._loop(client)
        except Exception as exc:  # noqa: BLE001 - the thread never dies silently
            failure = FC.SYS_UNKNOWN.failure(surface=_SURFACE, params={
                "exception": type(exc).__name__}, detail=self._scrub(str(exc)))
            with self.lock:
                line = self._halt(failure, f"failed unexpectedly ({type(exc).__name__})")
            _say(line)
        finally:
            client.close()

    def _loop(self, client: _Client) -> None:
        due = False
        while True:
            with self.lock:
                lines = self._next_batch(due=due)
                if lines is None:
                    return
                first = self.head
            result = self._deliver(client, lines)
            with self.lock:
                delay, line = self._settle(first, result)
                self.done.notify_all()
                if not line and delay is not None:
                    self._pause(delay)
                stopped = self.stopped
            if line:
                _say(line)
            if stopped:
                return
            due = delay is not None

    def _next_batch(self, *, due: bool) -> list[bytes] | None:
        """Wait until a batch is due and return its lines (None: end); the lock is held."""
        deadline = time.monotonic() if due else None
        while True:
            if self.stopping or self.stopped:
                return None
            count = len(self.queue)
            if not count:
                if self.draining:
                    return None
                deadline = None
                self.wake.wait()
                continue
            if count >= self.limit or self.flushers or self.closed or self.draining:
                break
            now = time.monotonic()
            if deadline is None:
                deadline = now + self.interval_s
            if now >= deadline:
                break
            self.wake.wait(deadline - now)
        return list(islice(self.queue, 0, self.limit))

    def _pause(self, delay: float) -> None:
        """Wait ``delay`` seconds, or until the sink stops, or until it is closed (once: the
        last attempt of a closing sink goes at once); the lock is held."""
        end = time.monotonic() + delay
        closed = self.closed
        while not self.stopping and self.closed == closed:
            left = end - time.monotonic()
            if left <= 0:
                return
            self.wake.wait(left)

    def _settle(self, first: int, result: _Result) -> tuple[float | None, str]:
        """Account for a delivery of the lines numbered from ``first``; the lock is held.

        Returns the delay before sending again (None: no retry) and a line for stderr ("").
        """
        end = first + result.resolved
        gone = max(0, min(self.head, end) - first)  # dropped meanwhile (full buffer, close)
        for _ in range(end - self.head):
            self.queue.popleft()
        self.head = max(self.head, end)
        self.dropped += result.dropped - gone
        self.sent += result.sent
        self.new += result.new
        self.duplicates += result.duplicates
        self.rejected += result.rejected
        self.limit = min(self.limit, result.limit)
        if result.problem is not None:
            self.last_failure = result.problem
        if result.stop is not None:
            return None, self._halt(result.stop, result.stop_line)
        failure = result.transient
        if failure is None:
            self.history = History(operation=_OPERATION)
            self.budget = self.budget.refunded(self.policy)
            return None, ""
        self.retries += 1
        self.last_failure = failure
        decision = decide(failure, self.history, self.policy, self.budget)
        self.budget = decision.budget
        self.history = self.history.after(failure)
        return _retry_delay(decision, self.max_delay_s), ""

    def _halt(self, failure: Failure, why: str) -> str:
        """Stop sending for good, dropping what is held; the lock is held. Returns the stderr
        line (once per sink)."""
        self.stopped = True
        self.last_failure = failure
        left = len(self.queue)
        self.dropped += left
        self.head += left
        self.queue.clear()
        self.done.notify_all()
        return (f"failcode: sending events to {self.target.shown} stopped: {why}; "
                f"{_events(self.dropped)} dropped so far, and every later one "
                "(RemoteSink.stats)")

    def _deliver(self, client: _Client, lines: list[bytes]) -> _Result:
        """Send ``lines``, splitting on 413; the first ``resolved`` lines end settled."""
        result = _Result(self.limit)
        ranges = [(0, len(lines))]
        while ranges:
            start, end = ranges.pop()
            count = end - start
            body = b"".join(lines[start:end])
            headers = self.plain_headers
            if len(body) > GZIP_ABOVE:
                body = gzip.compress(body, compresslevel=6, mtime=0)
                headers = self.gzip_headers
            try:
                status, answer_headers, data = client.post(body, headers)
            except (OSError, http.client.HTTPException) as exc:
                result.transient = self._connection_failure(exc)
                return result
            if 200 <= status < 300:
                self._acknowledged(result, count, data)
            elif status == 413 and count > 1:
                middle = start + count // 2
                ranges += ((middle, end), (start, middle))
                result.limit = min(result.limit, count // 2)
                continue
            elif status == 413:
                result.dropped += 1
                result.problem = FC.SVC_TOO_LARGE.failure(surface=_SURFACE, params={
                    "problem": f"one event of {len(lines[start]) - 1} bytes, sent alone, was "
                               "refused; it is dropped"}, metadata={"http_status": 413})
            elif status in _MALFORMED:
                code, detail = self._problem_of(data)
                result.rejected += count
                result.problem = FC.DATA_INVALID_INPUT.failure(surface=_SURFACE, params={
                    "problem": f"the service refused a batch of {count} events as malformed "
                               f"(HTTP {status}, {code or 'no code'})"},
                    detail=detail or None, metadata={"http_status": status})
            elif status in _TRANSIENT or status >= 500:
                result.transient = self._http_failure(status, answer_headers, data)
                return result
            else:
                result.stop, result.stop_line = self._refused(status, answer_headers, data)
                return result
            result.resolved = end
        return result

    def _acknowledged(self, result: _Result, count: int, data: bytes) -> None:
        try:
            ack: _Ack | None = _ACK(data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            ack = None  # acknowledged all the same; the service's counts are unknown
        if ack is None:
            result.sent += count
            return
        rejected = min(max(ack.rejected, 0), count)
        result.sent += count - rejected
        result.rejected += rejected
        result.new += min(max(ack.new, 0), count)
        result.duplicates += min(max(ack.duplicates, 0), count)
        if rejected:
            first = ack.problems[0] if ack.problems else None
            shown = first if isinstance(first, str) else msgspec.json.encode(first).decode()
            result.problem = FC.DATA_INVALID_INPUT.failure(surface=_SURFACE, params={
                "problem": f"the service rejected {rejected} of {count} events of a batch"},
                detail=self._scrub(shown)[:1000] if first is not None else None)

    def _scrub(self, text: str) -> str:
        """Text from the service, as the sink keeps it: the key replaced, redacted."""
        return redact(text.replace(self._key, "[key]"))

    def _problem_of(self, data: bytes) -> tuple[str | None, str]:
        """The FC code (when valid) and the detail of a problem+json body, scrubbed."""
        try:
            body = msgspec.json.decode(data)
        except msgspec.DecodeError:
            body = None
        code = body.get("code") if isinstance(body, dict) else None
        if not (isinstance(code, str) and _CODE.fullmatch(code)):
            code = None
        detail = body.get("detail") if isinstance(body, dict) else None
        if not isinstance(detail, str):
            detail = data[:1000].decode("utf-8", "replace")
        return code, self._scrub(detail)[:1000]

    def _http_failure(self, status: int, headers: dict[str, str], data: bytes) -> Failure:
        from failcode.classification._classify import classify_http  # noqa: PLC0415 - on failure

        body = self._scrub(data[:65536].decode("utf-8", "replace"))
        return classify_http(status, body, headers, surface=_SURFACE)

    def _connection_failure(self, exc: BaseException) -> Failure:
        from failcode.classification._classify import classify  # noqa: PLC0415 - on failure

        failure = classify(exc, surface=_SURFACE)
        if isinstance(failure, Failure):
            return failure
        return FC.SYS_UNKNOWN.failure(surface=_SURFACE, params={
            "exception": type(exc).__name__})

    def _refused(self, status: int, headers: dict[str, str],
                 data: bytes) -> tuple[Failure, str]:
        """The Failure and the stderr reason of an answer that stops sending for good."""
        code, detail = self._problem_of(data)
        problem = f"the service answered HTTP {status} ({code or 'no code'})"
        extra: dict[str, Any] = {"detail": detail or None, "metadata": {"http_status": status}}
        if status == 401:
            failure = FC.SVC_UNAUTHENTICATED.failure(surface=_SURFACE, params={
                "path": self.target.path, "problem": problem}, **extra)
        elif status == 403:
            failure = FC.SVC_FORBIDDEN.failure(surface=_SURFACE, params={"problem": problem},
                                               **extra)
        elif status == 404:
            failure = FC.SVC_NOT_FOUND.failure(surface=_SURFACE, params={
                "what": f"The event endpoint {self.target.shown}"}, **extra)
        else:
            failure = self._http_failure(status, headers, data)
        why = (f"the key was refused (HTTP {status}, {code or failure.code})"
               if status in (401, 403) else f"HTTP {status} ({code or failure.code})")
        return failure, why


_LINKS: Final[weakref.WeakSet[_Link]] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for link in list(_LINKS):
        link.forked()


if hasattr(os, "register_at_fork"):  # (POSIX)
    os.register_at_fork(after_in_child=_after_fork_in_child)


class RemoteSink:
    """Sends events to a failcode service from a background thread (a :class:`Sink`).

    ``emit`` never waits for the network; while the service is down the events wait in a
    bounded buffer (the oldest are dropped when it is full) and are delivered when it is back.
    The module's docstring has the rules: batching, what each answer means, retrying, exit.

    Args:
        url: the service, ``https://host[:port][/prefix]``; events go to ``{url}/v1/events``.
        key: the service key (``failcode token create``); sent as ``Authorization: Bearer``,
            shown nowhere.
        batch: the most events in one request.
        buffer: the most events held, not yet acknowledged.
        flush_interval_s: how long the first event of a partial batch waits for others.
        timeout_s: the connect and read timeout of one request.
        max_delay_s: the longest wait before sending again after a transient failure (a
            server's ``Retry-After`` included); also the interval of retries during an outage.
        exit_timeout_s: how long ``close`` (and the exit hook) waits for delivery.

    Raises:
        ValueError: the URL is not http(s) with a host (or carries credentials, a query or a
            fragment), the key is empty or not printable ASCII, an option is out of range.
    """

    def __init__(self, url: str, key: str, *, batch: int = 500, buffer: int = 50_000,
                 flush_interval_s: float = 1.0, timeout_s: float = 5.0,
                 max_delay_s: float = 30.0, exit_timeout_s: float = 5.0) -> None:
        target = _target(url)
        link = _Link(
            target, _check_key(key), batch=int(_number("batch", batch, integer=True)),
            buffer=int(_number("buffer", buffer, integer=True)),
            interval_s=_number("flush_interval_s", flush_interval_s),
            timeout_s=_number("timeout_s", timeout_s),
            max_delay_s=_number("max_delay_s", max_delay_s),
            exit_timeout_s=_number("exit_timeout_s", exit_timeout_s, zero=True))
        self._link = link
        _LINKS.add(link)
        atexit.register(link.at_exit)  # after logging's own hook, so it runs before it
        self._finalizer = weakref.finalize(self, link.retire)
        self._finalizer.atexit = False

    @property
    def url(self) -> str:
        """The endpoint events are posted to."""
        return self._link.target.shown

    def emit(self, event: Event) -> None:
        """Buffer one event for the sender thread; returns at once.

        Raises:
            TypeError: ``event`` is not an :class:`Event`.
            ValueError: the sink is closed (after the exit hook the event is counted as
                dropped instead).
        """
        if not isinstance(event, Event):
            msg = f"RemoteSink.emit(event=...): expected an Event, not {type(event).__name__}"
            raise TypeError(msg)
        self._link.emit(event.to_json() + b"\n")

    def flush(self, timeout_s: float | None = None) -> bool:
        """Wait until every event emitted so far is acknowledged, rejected or dropped.

        Args:
            timeout_s: the longest wait in seconds; None: as long as it takes (while the
                service is down, that is until it is back).

        Returns:
            True when nothing emitted before the call is still held; False when the timeout
            passed first.
        """
        if timeout_s is not None:
            _number("timeout_s", timeout_s, zero=True)
        return self._link.flush(timeout_s)

    def close(self) -> None:
        """Flush for at most ``exit_timeout_s`` and stop the thread; what is still held is
        dropped (one line on stderr says how many). Closing twice is harmless."""
        self._link.close(self._link.exit_timeout_s)
        self._finalizer.detach()

    @property
    def stats(self) -> RemoteStats:
        """What the sink did so far (a snapshot)."""
        return self._link.stats()

    def __enter__(self) -> RemoteSink:
        return self

    def __exit__(self, typ: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        link = self._link
        state = "stopped" if link.stopped else "closed" if link.closed else "open"
        return f"RemoteSink({link.target.shown!r}, {state}, pending={len(link.queue)})"


def report_to(url: str, key: str, *, batch: int = 500, buffer: int = 50_000,
              flush_interval_s: float = 1.0, timeout_s: float = 5.0, max_delay_s: float = 30.0,
              exit_timeout_s: float = 5.0) -> RemoteSink:
    """Send this process's events to the failcode service at ``url``: a :class:`RemoteSink`.

    ::

        sink = failcode.report_to("https://failcode.example.com", os.environ["FAILCODE_KEY"])
        logging.getLogger().addHandler(failcode.events.EventHandler(sink))

    The options are :class:`RemoteSink`'s. The sink flushes at interpreter exit by itself.

    Raises:
        ValueError: as :class:`RemoteSink`.
    """
    return RemoteSink(url, key, batch=batch, buffer=buffer, flush_interval_s=flush_interval_s,
                      timeout_s=timeout_s, max_delay_s=max_delay_s,
                      exit_timeout_s=exit_timeout_s)
