"""Write the sessions ``failcode triage`` shows with no arguments (src/failcode/triage/data/).

A scripted agent works in a temporary project and really runs each command (gcc, pytest, grep,
git) with ``bash -c``; its steps, their exit statuses and output are written as
mini-swe-agent trajectories (``trajectory_format: mini-swe-agent-1.1``). Nothing is typed by
hand: run this again and the files are rewritten from new runs.

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
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "failcode" / "triage" / "data"
TOOLS = ("bash", "gcc", "git", "grep")

# Each session: a name, files to write first, then the commands the agent runs in order.
SESSIONS: list[tuple[str, dict[str, str], list[str | tuple[str, dict[str, str]]]]] = [
    ("c-build-fix", {
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
    ("python-test-fix", {
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
    ("git-merge-conflict", {"notes.txt": "base\n"}, [
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
]


def _run(command: str, cwd: Path) -> tuple[int, str, float]:
    # `python` is this interpreter (it has pytest), without naming its path in the sample
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False, env=env)
    return done.returncode, (done.stdout + done.stderr), time.time()


def _session(name: str, files: dict[str, str], steps: list[str | tuple[str, dict[str, str]]],
             ) -> dict[str, object]:
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are a scripted agent."},
        {"role": "user", "content": f"Task: {name}"},
    ]
    with tempfile.TemporaryDirectory(prefix="failcode-sample-") as tmp:
        root = Path(tmp)
        for relative, text in files.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_text(text)
        for index, step in enumerate(steps):
            command, edits = (step, {}) if isinstance(step, str) else step
            for relative, text in edits.items():
                (root / relative).write_text(text)
            code, output, stamp = _run(command, root)
            output = output.replace(tmp, "/project")
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


def main() -> int:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        print(f"missing tools: {', '.join(missing)}", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    for name, files, steps in SESSIONS:
        path = OUT / f"{name}.traj.json"
        path.write_text(json.dumps(_session(name, files, steps), indent=1) + "\n")
        print(f"wrote {path.relative_to(OUT.parents[3])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
