"""The service's settings and bounds, with their defaults (documented in docs/service.md)."""

from __future__ import annotations

from typing import Final

import msgspec

__all__ = ["DEFAULT_PORT", "ServiceConfig"]

DEFAULT_PORT: Final = 8321


class ServiceConfig(msgspec.Struct, frozen=True, kw_only=True):
    """How one ``failcode serve`` process runs; every bound is a refusal, never a clamp.

    Attributes:
        store_url: the control store (projects, keys, webhooks); each project's events live
            beside it (:mod:`failcode.service._projects`).
        public_url: how people reach the service (links in alerts); None: not linked.
        max_body_bytes: the largest request body, as sent (compressed or not): 413 above.
        max_decoded_bytes: the largest body after gzip: 413 above.
        max_batch_events: events (or OTLP log records and spans) in one request: 413 above.
        rate_per_minute: requests one key may make in a minute: 429 with Retry-After above.
        key_cache_s: how long a checked key is trusted before it is checked again (a
            revoked key is refused at most this long after it was revoked).
        prune_interval_s: how often retention is enforced (0: never, only by the CLI).
        store_timeout_s: how long to wait for the store's locks and connections.
        webhook_allow: networks in CIDR notation (``"10.0.0.0/8"``, ``"127.0.0.1/32"``) a
            webhook may reach although they are not public (loopback, link-local, private...
            are refused otherwise, at registration and at delivery); None: those of the
            ``FAILCODE_WEBHOOK_ALLOW`` environment variable (comma-separated; unset: none).
        read_timeout_s: how long a request (line, headers and body) may take to arrive, from
            the connection's opening or the previous response: the connection is closed after.
        keep_alive_s: how long an idle connection is kept open after a response.
        max_connections: connections open at once; a request on one more is answered 503.
        max_head_bytes: the largest request line and headers: 400 above.
        forwarded_allow: addresses of the proxies in front (``"10.0.0.5"``, ``"*"``: any)
            whose ``X-Forwarded-Proto`` and ``X-Forwarded-For`` are believed: the scheme
            (``Secure`` cookies behind a TLS proxy) and the client's address (sign-in limits)
            are theirs. Empty: those headers are ignored.
        tls_cert: a PEM certificate chain to serve HTTPS with (with ``tls_key``); None: HTTP.
        tls_key: the PEM private key of ``tls_cert``.
        signin_failures_per_minute: failed dashboard sign-ins one client address may make in
            a minute: the page answers 429 with Retry-After above, whatever the key.
        dashboard_sessions: signed-in dashboard sessions held at once: the least recently
            used one ends when one more signs in.
    """

    store_url: str
    public_url: str | None = None
    max_body_bytes: int = 8 * 1024 * 1024
    max_decoded_bytes: int = 32 * 1024 * 1024
    max_batch_events: int = 10_000
    rate_per_minute: int = 1200
    key_cache_s: float = 5.0
    prune_interval_s: float = 3600.0
    store_timeout_s: float = 5.0
    webhook_allow: tuple[str, ...] | None = None
    read_timeout_s: float = 30.0
    keep_alive_s: int = 5
    max_connections: int = 1000
    max_head_bytes: int = 16 * 1024
    forwarded_allow: tuple[str, ...] = ()
    tls_cert: str | None = None
    tls_key: str | None = None
    signin_failures_per_minute: int = 10
    dashboard_sessions: int = 10_000
