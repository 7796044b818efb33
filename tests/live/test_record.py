"""The recording hook and the capture's settings merge: the payload is kept byte for byte, the
agent sees a hook that says nothing, parallel hooks get distinct numbers, and installing the
hooks keeps what the agent's launch wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.live.capture import hook_command, merge_hooks

REPO = Path(__file__).resolve().parents[2]


def _hook(command: str, payload: bytes, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}  # nothing of the caller's
    return subprocess.run(["bash", "-c", command], input=payload, cwd=cwd, env=env,
                          capture_output=True, check=False, timeout=60)


def test_the_payload_is_kept_unchanged_and_the_hook_says_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "capture"
    payload = '{"hook_event_name": "PostToolUse", "tool_response": "caf\u00e9\\n"}\n'.encode()
    done = _hook(hook_command(folder, "PostToolUse"), payload, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert [p.name for p in folder.glob("*.json")] == ["01-PostToolUse.json"]
    assert (folder / "01-PostToolUse.json").read_bytes() == payload


def test_hooks_run_at_once_get_distinct_numbers(tmp_path: Path) -> None:
    folder = tmp_path / "capture"
    events = [f"Event{n}" for n in range(12)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        done = list(pool.map(lambda e: _hook(hook_command(folder, e), e.encode(), tmp_path),
                             events))
    assert all(d.returncode == 0 for d in done)
    files = sorted(folder.glob("*.json"))
    assert sorted(int(p.name.split("-", 1)[0]) for p in files) == list(range(1, 13))
    assert sorted(p.read_text() for p in files) == sorted(events)
    assert all(p.name.split("-", 1)[1] == f"{p.read_text()}.json" for p in files)


def test_without_a_capture_folder_nothing_is_written(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "tests.live.record", "Stop"], input=b"{}",
                          cwd=tmp_path, env={"PYTHONPATH": str(REPO)}, capture_output=True,
                          check=False, timeout=60)
    assert (done.returncode, done.stdout) == (0, b"")
    assert list(tmp_path.iterdir()) == []


def test_merging_hooks_keeps_the_settings_the_launch_wrote(tmp_path: Path) -> None:
    settings = tmp_path / ".qwen" / "settings.json"
    settings.parent.mkdir()
    before = {"security": {"auth": {"selectedType": "openai"}},
              "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}
    settings.write_text(json.dumps(before))
    group = {"hooks": [{"type": "command", "command": "record", "timeout": 30}]}
    merge_hooks(settings, {"Stop": [group], "PostToolUse": [group]})
    after = json.loads(settings.read_text())
    assert after["security"] == before["security"]
    assert after["hooks"]["Stop"] == [*before["hooks"]["Stop"], group]
    assert after["hooks"]["PostToolUse"] == [group]
