"""Print what the OpenHands SDK reads from V1 conversation folders, as JSON (run with the
lab's OpenHands Python, which carries ``openhands-sdk`` and ``openhands-tools``).

The SDK's own ``EventLog`` (``openhands.sdk.conversation.event_store``) reads a
conversation's ``events/`` folder the way a resumed conversation does: each file through the
``Event`` model (``Event.model_validate_json``, a discriminated union on ``kind``), so a file
the SDK cannot parse fails here. The tools are imported first: their ``Action`` and
``Observation`` kinds register with the union as they do when the CLI runs. A step is each
tool result the SDK yields (an ``ObservationBaseEvent``: ``ObservationEvent``,
``UserRejectObservation``, ``AgentErrorEvent``), with the command of the call it answers and
a terminal observation's ``exit_code``. Usage: ``python openhands_events.py FOLDER...``;
prints ``{folder: {"steps": [{"kind", "command", "exit_code", "timeout", "is_error"}]}}``.
"""

import json
import os
import sys
from importlib.metadata import version

os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")  # the SDK prints it on stdout

import openhands.tools  # the tools' kinds register with the Event union
import openhands.tools.preset.default  # noqa: F401
from openhands.sdk.conversation.event_store import EventLog
from openhands.sdk.event import ActionEvent
from openhands.sdk.event.llm_convertible.observation import ObservationBaseEvent
from openhands.sdk.io import LocalFileStore


def steps(folder: str) -> list[dict[str, object]]:
    commands: dict[str, str | None] = {}
    out: list[dict[str, object]] = []
    for event in EventLog(LocalFileStore(folder)):
        if isinstance(event, ActionEvent):
            command = getattr(event.action, "command", None)
            commands[event.id] = command if isinstance(command, str) else None
            continue
        if not isinstance(event, ObservationBaseEvent):
            continue
        observation = getattr(event, "observation", None)
        command = getattr(observation, "command", None)
        if not isinstance(command, str) or not command:
            command = commands.get(getattr(event, "action_id", ""))
        exit_code = getattr(observation, "exit_code", None)
        out.append({
            "kind": type(event).__name__,
            "observation": type(observation).__name__ if observation is not None else None,
            "command": command,
            "exit_code": exit_code if isinstance(exit_code, int) else None,
            "timeout": getattr(observation, "timeout", False) is True,
            "is_error": getattr(observation, "is_error", False) is True,
        })
    return out


def main() -> None:
    result: dict[str, object] = {"openhands-sdk": version("openhands-sdk")}
    for folder in sys.argv[1:]:
        result[folder] = {"steps": steps(folder)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
