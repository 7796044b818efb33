"""``failcode serve``: agents on many machines report their failures to one place, live.

::

    from failcode.service import ServiceConfig, create_app, serve

    serve(ServiceConfig(store_url="sqlite:///failcode.db"), host="127.0.0.1", port=8321)

Three doors in (failcode events, OTLP/HTTP logs and traces, raw failures to classify), every
one idempotent; findings per project and signature with a lifecycle; keys with scopes;
retention; webhooks. The reference is docs/service.md. Needs the ``serve`` extra (FastAPI,
uvicorn, opentelemetry-proto); ``import failcode`` never imports it.

It may use every layer below the CLI (the store, the events, triage, the integrations).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from failcode.service._config import DEFAULT_PORT, ServiceConfig

if TYPE_CHECKING:
    from fastapi import FastAPI

    from failcode.service._service import Service

__all__ = ["DEFAULT_PORT", "ServiceConfig", "create_app", "open_service", "serve"]


def create_app(config: ServiceConfig, *, service: Service | None = None) -> FastAPI:
    """The FastAPI application (routes, errors, limits); the service opens at its startup."""
    from failcode.service._app import create_app as _create  # noqa: PLC0415 - needs FastAPI

    return _create(config, service=service)


def open_service(config: ServiceConfig) -> Service:
    """The service without HTTP: projects, keys, ingest and findings (close it when done)."""
    from failcode.service._service import Service  # noqa: PLC0415

    return Service(config)


def serve(config: ServiceConfig, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
          log_level: str = "info", workers: int = 1) -> None:
    """Run the service on uvicorn until interrupted, with ``config``'s connection bounds (read
    timeout, keep-alive, connection cap, request head size), in ``workers`` processes that
    share their state through the control store."""
    from failcode.service._server import run  # noqa: PLC0415 - the server is only needed here

    run(create_app(config), config, host=host, port=port, log_level=log_level, workers=workers)
