"""A writer process for the reliability tests: ``python -m tests.store.writer URL TAG N BATCH``.

Appends N events with ids ``TAG-00000``... in batches, printing ``ack <last index>`` after each
batch is durable; prints ``ready`` once the store is open. Every writer uses the same seven
session names, half of its events from its own input (``runs/TAG.jsonl``) and half from none,
so writers share session names and, without an input, sessions: their batches lock the same
session rows.
"""

from __future__ import annotations

import sys

from failcode.events import failure_event
from failcode.store import open_store
from tests.store.sample import PROGRAMS, SURFACES, T0, failure


def main(url: str, tag: str, count: int, batch: int) -> None:
    failures = [[failure(surface, program, input=source) for surface in SURFACES
                 for program in PROGRAMS] for source in (None, f"runs/{tag}.jsonl")]
    events = [failure_event(failures[i % 2][i % len(failures[0])], event="tool.failed",
                            session=f"s{i % 7}", ts=T0, event_id=f"{tag}-{i:05d}")
              for i in range(count)]
    store = open_store(url, timeout_s=30)
    print("ready", flush=True)
    for start in range(0, count, batch):
        store.append(events[start:start + batch])
        print(f"ack {min(start + batch, count) - 1}", flush=True)
    store.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
