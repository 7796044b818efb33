"""A recording hook: ``python -m tests.live.record EVENT`` copies its stdin, unchanged, to
``$FAILCODE_CAPTURE/<n>-<EVENT>.json`` (``n`` counts the payloads of one run, from 1, under a
lock: an agent may run hooks at once), prints nothing and exits 0, so the agent goes on as if
no hook were there. Without ``FAILCODE_CAPTURE`` it records nothing."""

from __future__ import annotations

import fcntl
import os
import re
import sys
from pathlib import Path


def record(folder: Path, event: str, payload: bytes) -> Path:
    """Write ``payload`` as the next numbered file of ``folder`` for ``event``."""
    folder.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", event) or "event"
    with (folder / ".counter").open("a+") as counter:
        fcntl.flock(counter, fcntl.LOCK_EX)
        counter.seek(0)
        number = int(counter.read().strip() or 0) + 1
        counter.seek(0)
        counter.truncate()
        counter.write(str(number))
        counter.flush()
        path = folder / f"{number:02d}-{name}.json"
        path.write_bytes(payload)
    return path


def main(argv: list[str]) -> int:
    payload = sys.stdin.buffer.read()
    target = os.environ.get("FAILCODE_CAPTURE")
    if target:
        record(Path(target), argv[0] if argv else "event", payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
