"""The team walkthrough (docs/team.md, "Run it for a team") works as written.

The bash block runs as it stands on the page, in a fresh shell with a fresh HOME, with four
substitutions a reader makes too: the store URL (a fresh schema on the test server, or a fresh
SQLite file), the port (a free one, in the service's URL as well), the logs to send (the session
lab's Claude Code transcripts) and the install line (this environment is the one
``pip install ".[serve,postgres]"`` made). It starts the real service, makes the keys,
sends a failure from a Python agent and a triage run, and reads the findings; the test then
checks what the block printed and what the service stored.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests._needs import need_tool
from tests.conftest import BACKENDS, fresh_url
from tests.service.conftest import _drop_project_schemas, free_port

if TYPE_CHECKING:
    from collections.abc import Iterator

TEAM = Path(__file__).parents[2] / "docs" / "team.md"
CLAUDE_LOGS = Path(__file__).parents[1] / "lab" / "fixtures" / "claude-code"


def walkthrough() -> str:
    """The first bash block of the team walkthrough (docs/team.md)."""
    text = TEAM.read_text(encoding="utf-8")
    match = re.search(r"```bash\n(.*?)```", text, re.DOTALL)
    assert match, "the team walkthrough has no bash block"
    return match.group(1)


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    for url in fresh_url(request.param, tmp_path):
        yield url
        if request.param == "postgresql":
            _drop_project_schemas(url)


def test_the_walkthrough_runs_as_written(store: str, tmp_path: Path) -> None:
    need_tool("curl")
    block = walkthrough()
    port = free_port()
    assert 'pip install ".[serve,postgres]"' in block
    script = block.replace('pip install ".[serve,postgres]"', "true  # installed already")
    script, stores = re.subn(r"^export FAILCODE_STORE=\S+", f"export FAILCODE_STORE='{store}'",
                             script, flags=re.MULTILINE)
    assert stores == 1
    assert script.count("8321") == 2  # the service's URL and its --port
    script = script.replace("8321", str(port))
    # the logs a reader names: here, the session lab's Claude Code transcripts
    assert script.count("~/.claude/projects/") == 1
    script = script.replace("~/.claude/projects/", str(CLAUDE_LOGS))
    home = tmp_path / "home"  # failcode hooks install writes the agent's settings there
    home.mkdir()
    env = {**os.environ, "HOME": str(home),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for name in ("FAILCODE_STORE", "FAILCODE_KEY", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        env.pop(name, None)
    # files, not pipes: the service the block leaves running keeps its descriptors open
    out_path, err_path = tmp_path / "out.txt", tmp_path / "err.txt"
    with out_path.open("w") as out_file, err_path.open("w") as err_file:
        process = subprocess.Popen(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path,
                                   env=env, stdout=out_file, stderr=err_file, text=True,
                                   start_new_session=True)
        try:
            process.wait(timeout=600)
        finally:
            os.killpg(process.pid, signal.SIGTERM)  # the service the block left running
    out, err = out_path.read_text(), err_path.read_text()
    assert process.returncode == 0, err[-4000:]
    # the findings the read key sees: the Python agent's failure and the triage run's
    first = out.index("{")
    answer, end = json.JSONDecoder().raw_decode(out[first:])
    assert answer["project"] == "web-agents"
    assert answer["total"] > 1
    assert len(answer["findings"]) == 5
    counts = [finding["count"] for finding in answer["findings"]]
    assert counts == sorted(counts, reverse=True)
    assert "reported" in err  # triage --report-to said what it sent
    assert "new" in err
    # the CLI's table lists the findings, the Python agent's among them: the code failcode
    # gives the same command run here
    import failcode

    argv = ["sh", "-c", "cargo build"]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, check=False)
    assert done.returncode != 0
    expected = failcode.from_command(argv, done.returncode, stdout=done.stdout,
                                     stderr=done.stderr)
    table = out[first + end:]
    assert "STATUS" in table
    assert expected.code in table, table
    assert "dashboard: 200 " in out  # the sign-in page of the dashboard answers
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert "PostToolUseFailure" in settings["hooks"]  # the hooks the block installed
