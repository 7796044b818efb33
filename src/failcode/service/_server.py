"""The HTTP server under the service: uvicorn, with the connection bounds of :class:`ServiceConfig`.

Rules:

- **A request arrives in time, or its connection is closed.** From the moment a connection
  opens, and again from each response sent on it, the next request (its request line, headers
  and body) must have arrived whole within ``read_timeout_s``; else the connection is closed
  without an answer (a client that sends half a request line and waits holds nothing longer).
  uvicorn itself has no such bound: its keep-alive timeout runs only between requests and is
  cancelled by the first byte of the next one. The time the application takes to answer is not
  counted.
- **An idle connection is closed** ``keep_alive_s`` after its last response (uvicorn's
  ``timeout_keep_alive``).
- **A cap on connections.** With ``max_connections`` connections open, a request on a new one
  is answered 503 and its connection closed (uvicorn's ``limit_concurrency``; the connections
  counted include the new one): the others are served on.
- **A bound on a request's head.** A request line and headers larger than ``max_head_bytes``
  are answered 400 (uvicorn's ``h11_max_incomplete_event_size``).
- **Proxies are believed only when named.** ``X-Forwarded-Proto`` and ``X-Forwarded-For`` are
  read (uvicorn's proxy headers) only from the addresses in ``forwarded_allow``; from any other
  client they are ignored, so nobody sets their own scheme or address by a header.
- **HTTPS** when ``tls_cert`` and ``tls_key`` are given (uvicorn's ``ssl_certfile`` and
  ``ssl_keyfile``); the bounds above hold the same.
- **Workers.** With ``workers`` > 1, uvicorn starts that many processes on the one listening
  socket (and starts a new one when one dies); each builds the application from
  :func:`app_from_environment`, which reads the :class:`ServiceConfig` the parent put in
  :data:`CONFIG_ENV` as JSON. Every bound above holds per worker (``max_connections`` is each
  worker's cap). What decides (rates, sessions, alerts, retention) is shared through the
  control store (:mod:`failcode.service._shared`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Final

import h11
import msgspec
from uvicorn.protocols.http.h11_impl import H11Protocol

if TYPE_CHECKING:
    import asyncio

    from fastapi import FastAPI

    from failcode.service._config import ServiceConfig

__all__ = ["CONFIG_ENV", "WorkerProtocol", "app_from_environment", "bounded_protocol", "run"]

CONFIG_ENV: Final = "FAILCODE_SERVE_CONFIG"
"""The environment variable through which ``failcode serve --workers N`` hands its
:class:`ServiceConfig` (JSON) to its workers."""

_RECEIVED: frozenset[type[h11._util.Sentinel]] = frozenset(
    {h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR, h11.SWITCHED_PROTOCOL})
"""Where the client's side of h11's state machine stands once its request has arrived whole."""


class _ReadBounded(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request does not arrive in time."""

    read_timeout_s: float = 30.0
    _read_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state in _RECEIVED:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._read_timer = self.loop.call_later(self.read_timeout_s, self._too_slow)

    def _disarm(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _too_slow(self) -> None:
        self._read_timer = None
        if not self.transport.is_closing():
            self.transport.close()


def bounded_protocol(read_timeout_s: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, closing a connection whose request takes longer than
    ``read_timeout_s`` to arrive (see the module's rules)."""
    return type("ReadBoundedH11", (_ReadBounded,), {"read_timeout_s": read_timeout_s})


class WorkerProtocol(_ReadBounded):
    """The bounded protocol of a worker process (importable, so uvicorn can hand it to the
    workers it spawns): its read timeout is set by :func:`app_from_environment`."""


def app_from_environment() -> FastAPI:
    """A worker's application: the :class:`ServiceConfig` in :data:`CONFIG_ENV` (uvicorn's
    factory for ``--workers``)."""
    from failcode.service import create_app  # noqa: PLC0415 - the service, in the worker
    from failcode.service._config import ServiceConfig  # noqa: PLC0415

    config = msgspec.json.decode(os.environ[CONFIG_ENV], type=ServiceConfig)
    WorkerProtocol.read_timeout_s = config.read_timeout_s
    return create_app(config)


def run(app: FastAPI, config: ServiceConfig, *, host: str, port: int, log_level: str,
        workers: int = 1) -> None:
    """Serve ``app`` on uvicorn with ``config``'s connection bounds until interrupted; with
    ``workers`` > 1, that many worker processes each build their own (``app`` is not used)."""
    import uvicorn  # noqa: PLC0415 - the server is only needed here

    options: dict[str, Any] = {
        "host": host, "port": port, "log_level": log_level, "proxy_headers": False,
        "server_header": False, "access_log": False,
        "http": bounded_protocol(config.read_timeout_s) if workers == 1 else WorkerProtocol,
        "timeout_keep_alive": config.keep_alive_s,
        "limit_concurrency": config.max_connections,
        "h11_max_incomplete_event_size": config.max_head_bytes,
    }
    if config.forwarded_allow:  # uvicorn's ProxyHeadersMiddleware, for these proxies only
        options.update(proxy_headers=True, forwarded_allow_ips=list(config.forwarded_allow))
    if config.tls_cert is not None:
        options.update(ssl_certfile=config.tls_cert, ssl_keyfile=config.tls_key)
    if workers == 1:
        uvicorn.run(app, **options)
        return
    os.environ[CONFIG_ENV] = msgspec.json.encode(config).decode()
    uvicorn.run("failcode.service._server:app_from_environment", factory=True, workers=workers,
                **options)
