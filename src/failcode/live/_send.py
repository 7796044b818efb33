"""The hooks' sender: ``python -m failcode.live._send`` delivers the outbox to the service.

A hook never waits for the network: it writes each failure's event to the outbox (one file
per event, ``outbox/<event id>.json`` beside the history) and starts this process without
waiting for it. The sender takes every event in the outbox (renaming each file first, so two
senders never send one file), posts them to ``FAILCODE_URL`` with ``FAILCODE_KEY`` through
the service's client (:func:`failcode.report_to`: batches, retries with backoff, the service
stores each event id once), and deletes the files the service acknowledged, rejected or
dropped. What is left when it gives up (after :data:`GIVE_UP_S`, the service down) goes back
to the outbox for the next sender. Failures of its own go to the hook log. What must be
stored before the agent goes on (a session's start; Codex's failures) is posted by the hook
itself instead (:func:`post_now`), and queued only when that fails.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING, Final

from failcode.live._history import state_dir

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["GIVE_UP_S", "outbox", "post_now", "send_outbox"]

GIVE_UP_S: Final = 30.0


def outbox() -> Path:
    """The folder of events waiting for the service."""
    return state_dir() / "outbox"


def post_now(event_json: bytes, url: str, key: str, *, timeout_s: float) -> bool:
    """Post one event and wait for the service's answer (at most ``timeout_s``): whether it
    took it. What must arrive before the agent goes on (a session's start, which tells the
    service that the hooks report the session's tool calls) is sent so; anything that goes
    wrong is False (the caller queues the event in the outbox instead)."""
    import http.client  # noqa: PLC0415
    from urllib.parse import urlsplit  # noqa: PLC0415

    try:
        target = urlsplit(url)
        kind = (http.client.HTTPSConnection if target.scheme == "https"
                else http.client.HTTPConnection)
        connection = kind(target.hostname or "", target.port, timeout=timeout_s)
        try:
            connection.request("POST", target.path.rstrip("/") + "/v1/events", event_json,
                               {"Content-Type": "application/x-ndjson",
                                "Authorization": f"Bearer {key}"})
            status = connection.getresponse().status
        finally:
            connection.close()
    except (OSError, ValueError, http.client.HTTPException):
        return False
    return 200 <= status < 300


def send_outbox(url: str, key: str, *, give_up_s: float = GIVE_UP_S) -> int:
    """Send every event in the outbox; how many the service took."""
    from failcode.events._event import Event  # noqa: PLC0415
    from failcode.events._remote import report_to  # noqa: PLC0415

    box = outbox()
    taken: list[Path] = []
    for path in sorted(box.glob("*.json")):
        claimed = path.with_suffix(f".sending-{os.getpid()}")
        with contextlib.suppress(OSError):  # another sender took it
            path.rename(claimed)
            taken.append(claimed)
    if not taken:
        return 0
    sink = report_to(url, key, exit_timeout_s=give_up_s)
    for path in taken:
        try:
            sink.emit(Event.from_json(path.read_bytes()))
        except (OSError, ValueError):
            path.unlink(missing_ok=True)  # unreadable: never sendable
    delivered = sink.flush(timeout_s=give_up_s)
    stats = sink.stats
    sink.close()
    for path in taken:
        if delivered:
            path.unlink(missing_ok=True)
        else:  # back to the outbox for the next sender
            with contextlib.suppress(OSError):
                path.rename(path.with_suffix(".json"))
    return stats.new + stats.duplicates


def main() -> int:
    url, key = os.environ.get("FAILCODE_URL", ""), os.environ.get("FAILCODE_KEY", "")
    if not url or not key:
        return 0
    try:
        send_outbox(url, key)
    except Exception as exc:  # noqa: BLE001 - a sender's failure is logged, never shown
        from failcode.live._hook import _log  # noqa: PLC0415

        _log(f"sender: {type(exc).__name__}: {str(exc)[:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
