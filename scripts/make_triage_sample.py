"""Write the sessions ``failcode triage`` shows with no arguments (src/failcode/triage/data/).

A scripted agent works in a temporary project and really runs each command (gcc, pytest, grep,
git) with ``bash -c``. Most sessions are written as mini-swe-agent trajectories
(``trajectory_format: mini-swe-agent-1.1``): the steps, their exit statuses and output. One
session is written the way an agent using failcode writes it: each failing step classified
by ``from_command`` and written through ``failcode.events.JsonlSink`` as a ``command.failed``
or ``probe.no_match`` event (``*.events.jsonl``). Nothing is typed by hand: run this again
(with failcode installed) and the files are rewritten from new runs.

    python scripts/make_triage_sample.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from failcode import Failure, from_command
from failcode.events import JsonlSink, failure_event, outcome_event
from failcode.triage import infer_purpose

OUT = Path(__file__).resolve().parents[1] / "src" / "failcode" / "triage" / "data"
TOOLS = ("bash", "gcc", "git", "grep")

Step = str | tuple[str, dict[str, str]]
"""A command, or a command run after writing files (the agent's edit)."""

# Each session: a name, how it is written, files to write first, then the commands the agent
# runs in order.
SESSIONS: list[tuple[str, str, dict[str, str], list[Step]]] = [
    ("c-build-fix", "mini-swe-agent", {
        "src/main.c": "#include <stdio.h>\nint main(void) {\n  printf(\"%d\\n\", count);\n"
                      "  return 0;\n}\n",
    }, [
        "grep -rn 'int count' src",                          # probe: finds nothing
        "gcc -Wall -o app src/main.c",                       # undeclared identifier
        "gcc -Wall -o app src/main.c",                       # same again: a loop
        ("gcc -Wall -o app src/main.c && ./app", {
            "src/main.c": "#include <stdio.h>\nstatic int count = 3;\nint main(void) {\n"
                          "  printf(\"%d\\n\", count);\n  return 0;\n}\n"}),
        "echo submitting",
    ]),
    ("python-test-fix", "mini-swe-agent", {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
    }, [
        "which definitely-not-installed-tool",               # probe: absent
        "python -m pytest -q -p no:cacheprovider test_calc.py",       # assertion fails
        "python3 -c 'import yaml_not_there'",                # missing module
        "python -m pytest -q -p no:cacheprovider test_calc.py",       # still failing
        "python -m pytest -q -p no:cacheprovider test_calc.py",       # third time: a loop
        ("python -m pytest -q -p no:cacheprovider test_calc.py", {
            "calc.py": "def add(a, b):\n    return a + b\n"}),
    ]),
    ("git-merge-conflict", "mini-swe-agent", {"notes.txt": "base\n"}, [
        ("git init -q -b main . && git add -A && "
        "git -c user.name=a -c user.email=a@x commit -qm base"),
        ("git checkout -q -b feature && echo feature > notes.txt && "
        "git -c user.name=a -c user.email=a@x commit -qam feature"),
        ("git checkout -q main && echo main > notes.txt && "
        "git -c user.name=a -c user.email=a@x commit -qam main"),
        "git -c user.name=a -c user.email=a@x merge feature",  # conflict
        "test -f MERGE_DONE",                                  # probe: absent
        ("git checkout --theirs notes.txt && git add notes.txt && "
        "git -c user.name=a -c user.email=a@x commit -qm merged"),
        "cat missing-file.txt",                                # a plain command failure
    ]),
    ("c-library-events", "failcode-events", {
        "src/util.c": "int add(int a, int b) {\n  return a + b\n}\n",
        "test_util.py": "import cffi_not_installed\n\n\ndef test_add():\n    assert True\n",
    }, [
        "grep -rn 'int sub' src",                            # probe: finds nothing
        "gcc -Wall -c src/util.c -o util.o",                 # missing ';': a syntax error
        "gcc -Wall -c src/util.c -o util.o",                 # same again: a loop
        ("gcc -Wall -c src/util.c -o util.o", {
            "src/util.c": "int add(int a, int b) {\n  return a + b;\n}\n"}),
        "python -m pytest -q -p no:cacheprovider test_util.py",  # a missing module
        "which cffi-build-helper",                           # probe: absent
        "python -m pytest -q -p no:cacheprovider test_util.py",  # still missing
    ]),
]


def _run(command: str, cwd: Path) -> tuple[int, str, float]:
    # `python` is this interpreter (it has pytest), without naming its path in the sample
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False, env=env)
    return done.returncode, (done.stdout + done.stderr), time.time()


def _steps(files: dict[str, str], steps: list[Step]) -> list[tuple[str, int, str, float]]:
    """Run the session's commands in a new temporary project: (command, exit status,
    output naming no path of this machine, time) per step."""
    done: list[tuple[str, int, str, float]] = []
    with tempfile.TemporaryDirectory(prefix="failcode-sample-") as tmp:
        root = Path(tmp)
        for relative, text in files.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_text(text)
        for step in steps:
            command, edits = (step, {}) if isinstance(step, str) else step
            for relative, text in edits.items():
                (root / relative).write_text(text)
            code, output, stamp = _run(command, root)
            done.append((command, code, _anonymous(output, tmp), stamp))
    return done


def _anonymous(output: str, project: str) -> str:
    """``output`` naming no path of this machine: the project is /project, Python's install
    (a traceback through the standard library) /python, the home directory ~."""
    places = {project: "/project", sys.prefix: "/python", sys.base_prefix: "/python",
              sys.exec_prefix: "/python", str(Path.home()): "~"}
    for place in sorted(places, key=len, reverse=True):
        output = output.replace(place, places[place])
    return output


def _trajectory(name: str, steps: list[tuple[str, int, str, float]]) -> dict[str, object]:
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are a scripted agent."},
        {"role": "user", "content": f"Task: {name}"},
    ]
    for index, (command, code, output, stamp) in enumerate(steps):
        call = f"call_{index}"
        messages.append({"role": "assistant", "content": "",
                         "tool_calls": [{"id": call, "type": "function", "function": {
                             "name": "bash", "arguments": json.dumps({"command": command})}}],
                         "extra": {"actions": [{"command": command}], "timestamp": stamp}})
        messages.append({"role": "tool", "tool_call_id": call,
                         "content": f"<returncode>{code}</returncode>\n<output>\n{output}"
                                    "</output>",
                         "extra": {"returncode": code, "raw_output": output,
                                   "timestamp": stamp}})
    messages.append({"role": "exit", "content": "", "extra": {"exit_status": "Submitted",
                                                              "submission": ""}})
    return {"info": {"exit_status": "Submitted", "submission": "", "mini_version": "scripted",
                     "model_stats": {"instance_cost": 0.0, "api_calls": 0}},
            "messages": messages, "trajectory_format": "mini-swe-agent-1.1",
            "instance_id": name}


def _write_events(path: Path, name: str, steps: list[tuple[str, int, str, float]]) -> None:
    """What an agent using failcode records: each step's result classified by from_command,
    failures and no-match probes written through JsonlSink (a passing step writes nothing)."""
    path.unlink(missing_ok=True)
    with JsonlSink(path) as sink:
        for index, (command, code, output, stamp) in enumerate(steps):
            result = from_command(command, code, output, purpose=infer_purpose(command))
            if result is None:
                continue
            when = datetime.fromtimestamp(stamp, UTC)
            if isinstance(result, Failure):
                sink.emit(failure_event(result, event="command.failed", session=name,
                                        step=index, source="command", ts=when))
            else:
                sink.emit(outcome_event(result, session=name, step=index, source="command",
                                        ts=when))


def main() -> int:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        print(f"missing tools: {', '.join(missing)}", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    for name, kind, files, commands in SESSIONS:
        steps = _steps(files, commands)
        if kind == "failcode-events":
            path = OUT / f"{name}.events.jsonl"
            _write_events(path, name, steps)
        else:
            path = OUT / f"{name}.traj.json"
            path.write_text(json.dumps(_trajectory(name, steps), indent=1) + "\n")
        print(f"wrote {path.relative_to(OUT.parents[3])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
