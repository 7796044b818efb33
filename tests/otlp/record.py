"""A recording OTLP/HTTP endpoint on 127.0.0.1: what an agent's exporter really sends.

Rules:

- ``POST /v1/logs``, ``/v1/traces`` and ``/v1/metrics`` are accepted with an
  ``application/x-protobuf`` or ``application/json`` body, gzip-compressed or not
  (``Content-Encoding: gzip``); each is answered 200 with an empty ``Export*ServiceResponse``
  in the request's own encoding. Any other path is 404, any other type 415, a body that does
  not decode 400: each is recorded too (an exporter that gets them says so in its own log).
- Every request is kept in OTLP/JSON form: a protobuf body through ``opentelemetry-proto``'s
  messages and ``google.protobuf.json_format.MessageToDict`` (lowerCamelCase names, 64-bit
  integers as decimal strings, enums as integers, ``traceId``/``spanId``/``parentSpanId`` as
  hex: the form an OTLP/JSON exporter writes), a JSON body as sent. Its path, the answer and
  its headers are kept beside it, without ``authorization`` (only whether one came).
- :meth:`Recorder.wait_quiet` returns once no request arrived for ``quiet_s`` seconds (the
  exporter's last flush after the agent exited), bounded by ``bound_s``: it waits on a
  condition the handler signals, it never sleeps a fixed time.
"""

from __future__ import annotations

import base64
import gzip
import json
import threading
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from google.protobuf.message import Message

SIGNALS: Final = {"/v1/logs": "logs", "/v1/traces": "traces", "/v1/metrics": "metrics"}
_IDS: Final = ("traceId", "spanId", "parentSpanId")


def _messages(signal: str) -> tuple[type[Message], type[Message]]:
    """The request and response message classes of one signal."""
    if signal == "logs":
        from opentelemetry.proto.collector.logs.v1 import logs_service_pb2 as logs

        return logs.ExportLogsServiceRequest, logs.ExportLogsServiceResponse
    if signal == "traces":
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as trace

        return trace.ExportTraceServiceRequest, trace.ExportTraceServiceResponse
    from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2 as metrics

    return metrics.ExportMetricsServiceRequest, metrics.ExportMetricsServiceResponse


def _hex_ids(value: Any) -> Any:
    """``MessageToDict`` writes bytes as base64; OTLP/JSON writes trace and span ids as hex."""
    if isinstance(value, dict):
        return {key: (base64.b64decode(item).hex() if key in _IDS and isinstance(item, str)
                      else _hex_ids(item)) for key, item in value.items()}
    if isinstance(value, list):
        return [_hex_ids(item) for item in value]
    return value


def decode(signal: str, body: bytes, content_type: str) -> dict[str, Any]:
    """One request body in OTLP/JSON form (raises ``ValueError`` when it does not decode)."""
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError

    if content_type == "application/json":
        decoded = json.loads(body)
        if not isinstance(decoded, dict):
            raise ValueError("an OTLP/JSON body is an object")
        return decoded
    request, _ = _messages(signal)
    message = request()
    try:
        message.ParseFromString(body)
    except DecodeError as exc:
        raise ValueError(str(exc)) from exc
    as_dict = json_format.MessageToDict(message, use_integers_for_enums=True)
    return dict(_hex_ids(as_dict))


@dataclass(slots=True)
class Received:
    """One request as the endpoint saw it."""

    path: str
    signal: str | None
    content_type: str
    encoding: str
    """``Content-Encoding`` (``identity`` when none)."""
    headers: dict[str, str]
    authorized: bool
    """Whether an ``authorization`` header came (its value is never kept)."""
    status: int
    body: dict[str, Any] | None = None
    error: str | None = None
    at: float = field(default=0.0, repr=False)
    """``time.monotonic()`` when it arrived."""


class _Handler(BaseHTTPRequestHandler):
    server: Recorder
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        del format, args

    def _answer(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            return self.rfile.read(length)
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        return b""

    def do_GET(self) -> None:
        self._answer(404, b'{"error": "the recorder only takes POST"}', "application/json")

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        signal = SIGNALS.get(path)
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
        headers = {name.lower(): value for name, value in self.headers.items()
                   if name.lower() != "authorization"}
        received = Received(path=path, signal=signal, content_type=content_type,
                            encoding=encoding, headers=headers,
                            authorized="authorization" in {n.lower() for n in self.headers},
                            status=200)
        raw = self._body()
        if signal is None:
            received.status, received.error = 404, f"no route {path}"
        elif content_type not in ("application/x-protobuf", "application/json"):
            received.status, received.error = 415, f"content type {content_type!r}"
        else:
            try:
                if encoding == "gzip":
                    raw = gzip.decompress(raw)
                elif encoding == "deflate":
                    raw = zlib.decompress(raw)
                received.body = decode(signal, raw, content_type)
            except (ValueError, OSError, EOFError, zlib.error) as exc:
                received.status, received.error = 400, f"{type(exc).__name__}: {exc}"
        self.server.keep(received)
        if received.status != 200 or signal is None:
            self._answer(received.status, json.dumps({"error": received.error}).encode(),
                         "application/json")
        elif content_type == "application/json":
            self._answer(200, b"{}", "application/json")
        else:
            _, response = _messages(signal)
            self._answer(200, response().SerializeToString(), "application/x-protobuf")


class Recorder(ThreadingHTTPServer):
    """The recording endpoint (use as a context manager: it serves while inside)."""

    daemon_threads = True

    def __init__(self, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.received: list[Received] = []
        self._changed = threading.Condition()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def keep(self, received: Received) -> None:
        with self._changed:
            received.at = time.monotonic()
            self.received.append(received)
            self._changed.notify_all()

    def clear(self) -> None:
        with self._changed:
            self.received.clear()

    def wait_quiet(self, quiet_s: float = 2.0, bound_s: float = 30.0) -> bool:
        """Wait until no request arrived for ``quiet_s`` seconds (counted from the last one,
        or from now when none came yet), at most ``bound_s``; True when it went quiet."""
        start = time.monotonic()
        deadline = start + bound_s
        with self._changed:
            while True:
                last = max([start, *(r.at for r in self.received)])
                now = time.monotonic()
                if now - last >= quiet_s:
                    return True
                if now >= deadline:
                    return False
                self._changed.wait(min(quiet_s - (now - last), deadline - now))

    def __enter__(self) -> Recorder:
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                         name="otlp-recorder", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
