"""Read Harbor ATIF trajectories with the ``atif`` package's pydantic models; print JSON.

Run with the Python of the ``atif`` oracle environment (``tests/lab/oracles.toml``), never
with failcode's: it imports only that package and the standard library.

    python atif_trajectory.py FILE...

Per file: each tool call that has an observation result (the result's ``source_call_id``
names it), in file order, with the call's function name and arguments, as the models parse
the document (``Trajectory.model_validate_json``: a file they reject is an error).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from atif import Trajectory


def calls(path: str) -> dict[str, object]:
    trajectory = Trajectory.model_validate_json(Path(path).read_text(encoding="utf-8"))
    known: dict[str, tuple[str, dict[str, object]]] = {}
    out = []
    for step in trajectory.steps:
        for call in step.tool_calls or []:
            known[call.tool_call_id] = (call.function_name, call.arguments)
        for result in (step.observation.results if step.observation else []):
            if result.source_call_id in known:
                name, arguments = known[result.source_call_id]
                out.append({"step_id": step.step_id, "function": name, "arguments": arguments})
    return {"schema_version": trajectory.schema_version, "agent": trajectory.agent.name,
            "calls": out}


if __name__ == "__main__":
    print(json.dumps({path: calls(path) for path in sys.argv[1:]}))
