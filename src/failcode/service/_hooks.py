"""A project's webhooks, stored in the control store (``svc_webhooks``).

Rules: those of :class:`~failcode.service._alerts.Webhook` (an http or https URL with a host;
rules a non-empty subset of ``new_finding``, ``regression`` and ``rate``; a rate window of
whole minutes up to 7 days; a throttle up to 30 days), and a ``rate`` rule needs a threshold of
at least 1. A URL is shown back only without its query and credentials (they often hold a
token).
"""

from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from failcode import FC, FailureError
from failcode.service._alerts import Webhook

if TYPE_CHECKING:
    from failcode.store import Store

__all__ = ["RULES", "add_webhook", "remove_webhook", "shown_url", "webhooks"]

RULES: Final = ("new_finding", "regression", "rate")
_COLUMNS: Final = ("id, project, url, rules, rate_threshold, rate_window_s, throttle_s, format")


def _bad(problem: str) -> FailureError:
    return FailureError(FC.DATA_INVALID_INPUT.failure(surface="service.webhooks",
                                                      params={"problem": problem}))


def shown_url(url: str) -> str:
    """``url`` without credentials, query or fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _row(row: Any) -> Webhook:
    return Webhook(id=row[0], project=row[1], url=row[2],
                   on=frozenset(r for r in str(row[3]).split(",") if r),
                   rate_threshold=None if row[4] is None else int(row[4]),
                   rate_window_s=int(row[5]), throttle_s=int(row[6]), format=row[7])


def webhooks(store: Store, project: str) -> list[Webhook]:
    """The webhooks of ``project``."""
    rows = store.fetch(f"SELECT {_COLUMNS} FROM svc_webhooks WHERE project = ? ORDER BY "
                       "created_us, id", (project,))
    return [_row(row) for row in rows]


def add_webhook(store: Store, project: str, url: str, *, on: list[str] | tuple[str, ...],
                rate_threshold: int | None = None, rate_window_s: int = 3600,
                throttle_s: int = 600, format: str = "json",  # noqa: A002 - the option's name
                ) -> Webhook:
    """Add a webhook (the rules are :class:`~failcode.service._alerts.Webhook`'s).

    Raises:
        FailureError: FC-DATA-001 naming the value that breaks a rule.
    """
    hook = Webhook(id="wh_" + secrets.token_hex(6), project=project, url=url,
                   on=frozenset(on), rate_threshold=rate_threshold,
                   rate_window_s=rate_window_s, throttle_s=throttle_s,
                   format=format)  # type: ignore[arg-type]
    if "rate" in hook.on and not hook.rate_threshold:
        raise _bad(f"the rate rule needs a threshold of at least 1, not {rate_threshold!r}")
    rules = sorted(hook.on)
    with store.transaction() as tx:
        tx.run("INSERT INTO svc_webhooks (id, project, url, rules, rate_threshold, "
               "rate_window_s, throttle_s, format, created_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
               "?)", (hook.id, project, url, ",".join(rules), rate_threshold, rate_window_s,
                      throttle_s, format, time.time_ns() // 1000))
    return hook


def remove_webhook(store: Store, project: str, webhook_id: str) -> None:
    """Remove a webhook of ``project`` (FC-SVC-003 when it has none with that id)."""
    with store.transaction() as tx:
        rows = tx.run("DELETE FROM svc_webhooks WHERE project = ? AND id = ? RETURNING id",
                      (project, webhook_id))
    if not rows:
        raise FailureError(FC.SVC_NOT_FOUND.failure(surface="service.webhooks", params={
            "what": f"The webhook {webhook_id[:40]!r} of project {project}"}))
