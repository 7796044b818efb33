"""Print what OpenHands' own v0 event models read from event arrays and ``output.jsonl``
records, as JSON (run with the lab's ``openhands-ai`` 0.62.0 oracle, Python 3.12).

Every event goes through ``openhands.events.serialization.event_from_dict``, the function
OpenHands restores a v0 event stream with, so an event it cannot parse fails here. A step is
each observation but ``NullObservation``, ``RecallObservation``,
``AgentStateChangedObservation`` and ``AgentCondensationObservation``, with a
``CmdOutputObservation``'s ``command`` and ``exit_code``. Usage: ``python
openhands_v0_events.py FILE...``; prints ``{file: [{"name", "steps": [...]}]}``, one entry per
session (an event array is one; each record of ``output.jsonl`` is one).
"""

import json
import sys
from importlib.metadata import version

from openhands.events.observation import (
    AgentCondensationObservation,
    AgentStateChangedObservation,
    CmdOutputObservation,
    NullObservation,
    Observation,
)
from openhands.events.observation.agent import RecallObservation
from openhands.events.serialization import event_from_dict

NOT_STEPS = (NullObservation, RecallObservation, AgentStateChangedObservation,
             AgentCondensationObservation)


def steps(events: list[dict]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for raw in events:
        event = event_from_dict(raw)
        if not isinstance(event, Observation) or isinstance(event, NOT_STEPS):
            continue
        command = event.command if isinstance(event, CmdOutputObservation) else None
        code = event.exit_code if isinstance(event, CmdOutputObservation) else None
        out.append({"observation": type(event).__name__, "command": command,
                    "exit_code": code})
    return out


def sessions(path: str) -> list[dict[str, object]]:
    with open(path, encoding="utf-8") as handle:  # noqa: PTH123 - a plain script
        text = handle.read()
    if text.lstrip().startswith("["):
        return [{"name": None, "steps": steps(json.loads(text))}]
    out = []
    for line in text.splitlines():
        if line.strip():
            record = json.loads(line)
            out.append({"name": record.get("instance_id"),
                        "steps": steps(record.get("history") or [])})
    return out


def main() -> None:
    result: dict[str, object] = {"openhands-ai": version("openhands-ai")}
    for path in sys.argv[1:]:
        result[path] = sessions(path)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
