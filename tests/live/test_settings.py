"""``failcode hooks install|uninstall|status``: merged into the agent's settings, nothing else
touched, idempotent, a backup first, a broken file refused with nothing written.

The commands run as a person runs them (the real program, HOME pointed at a temporary
folder); the settings files start as what the lab's agents write for themselves, plus hooks of
someone else's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from failcode.live import AGENTS, install, installed, uninstall

if TYPE_CHECKING:
    from pathlib import Path

# what the lab's Gemini CLI launch writes, and a hook of the user's own
GEMINI = {"security": {"auth": {"selectedType": "gemini-api-key"},
                       "folderTrust": {"enabled": False}},
          "general": {"maxAttempts": 3},
          "hooks": {"AfterTool": [{"matcher": "write_file",
                                   "hooks": [{"type": "command", "command": "prettier -w",
                                              "timeout": 5000}]}]}}
CLAUDE = {"permissions": {"allow": ["Bash(npm test)"]}, "model": "sonnet",
          "hooks": {"PreToolUse": [{"matcher": "Bash",
                                    "hooks": [{"type": "command", "command": "./guard.sh"}]}]}}


def failcode_cli(*args: str, home: Path, cwd: Path,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), **(env or {})}
    return subprocess.run([sys.executable, "-m", "failcode", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False, timeout=60)


def _write(path: Path, data: dict[str, Any]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2) + "\n"
    path.write_text(text)
    return text


@pytest.mark.parametrize(("agent", "before"), [("claude-code", CLAUDE), ("gemini-cli", GEMINI)])
def test_install_adds_only_failcodes_entries_and_uninstall_restores_the_file(
        agent: str, before: dict[str, Any], tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    hooks = AGENTS[agent]
    path = home / hooks.user_settings
    original = _write(path, before)

    done = failcode_cli("hooks", "install", agent, home=home, cwd=project)
    assert done.returncode == 0, done.stderr
    assert str(path) in done.stdout
    after = json.loads(path.read_text())
    # every key of the file is still there with its value; only hooks grew
    assert {k: v for k, v in after.items() if k != "hooks"} == \
        {k: v for k, v in before.items() if k != "hooks"}
    for event, groups in before["hooks"].items():
        assert after["hooks"][event][:len(groups)] == groups
    assert set(installed(hooks, path).commands) == set(hooks.events)
    assert (path.parent / (path.name + ".failcode-backup")).read_text() == original

    again = failcode_cli("hooks", "install", agent, home=home, cwd=project)
    assert again.returncode == 0
    assert "already installed" in again.stdout
    assert json.loads(path.read_text()) == after

    status = failcode_cli("hooks", "status", agent, home=home, cwd=project)
    assert status.returncode == 0
    assert f"({'user'}): installed in {path}" in status.stdout

    gone = failcode_cli("hooks", "uninstall", agent, home=home, cwd=project)
    assert gone.returncode == 0, gone.stderr
    assert path.read_text() == original


def test_project_scope_writes_the_projects_file(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    done = failcode_cli("hooks", "install", "claude-code", "--project", home=home, cwd=project)
    assert done.returncode == 0, done.stderr
    path = project / ".claude" / "settings.json"
    assert set(installed(AGENTS["claude-code"], path).commands) == set(
        AGENTS["claude-code"].events)
    assert not (home / ".claude").exists()
    gone = failcode_cli("hooks", "uninstall", "claude-code", "--project", home=home, cwd=project)
    assert gone.returncode == 0
    assert not path.exists()  # install created it


@pytest.mark.parametrize(("text", "where"), [
    ('{"model": "sonnet",\n  "hooks": {,}\n}\n', "line 2, column 13"),
    ("[1, 2]\n", "a JSON object is expected"),
    ('{"hooks": []}\n', "key 'hooks' must be an object"),
    ('{"hooks": {"PostToolUse": {"matcher": "*"}}}\n', "key 'hooks.PostToolUse' must be a list"),
])
def test_a_settings_file_failcode_cannot_merge_is_refused_and_left_alone(
        text: str, where: str, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    done = failcode_cli("hooks", "install", "claude-code", home=home, cwd=project)
    assert done.returncode == 1
    assert str(path) in done.stderr
    assert where in done.stderr
    assert "nothing was written" in done.stderr
    assert "Traceback" not in done.stderr
    assert path.read_text() == text
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


def test_a_settings_file_with_comments_is_left_alone_with_the_reason(tmp_path: Path) -> None:
    """Gemini CLI reads its settings as JSON with comments (``stripJsonComments`` in its
    bundle): failcode would lose them by writing the file, so it says so and writes nothing."""
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    text = '{\n  // my model\n  "model": {"name": "gemini-2.5-pro"} /* pinned */\n}\n'
    path.write_text(text)
    done = failcode_cli("hooks", "install", "gemini-cli", home=home, cwd=project)
    assert done.returncode == 1
    assert f"{path}: has comments" in done.stderr
    assert path.read_text() == text
    status = failcode_cli("hooks", "status", "gemini-cli", home=home, cwd=project)
    assert "has comments" in status.stdout
    assert "nothing was written" not in status.stdout


def test_an_entry_failcode_wrote_before_is_updated_not_added_twice(tmp_path: Path) -> None:
    hooks = AGENTS["gemini-cli"]
    path = tmp_path / "settings.json"
    install(hooks, path, command="/old/venv/bin/failcode")
    install(hooks, path)
    data = json.loads(path.read_text())
    commands = [h["command"] for groups in data["hooks"].values() for g in groups
                for h in g["hooks"]]
    assert len(commands) == len(hooks.events)
    assert all("/old/venv" not in c and c.startswith(sys.executable) for c in commands)


@pytest.mark.parametrize("agent", sorted(n for n, a in AGENTS.items() if a.kind == "settings"))
def test_only_a_tool_event_gets_a_matcher(agent: str, tmp_path: Path) -> None:
    """A tool event's group matches every tool (``*``); another event's has no matcher (Claude
    Code matches ``StopFailure``'s against the error type, and ``*`` is none: the hook never
    ran). An older install's ``*`` on such an event is taken away on the next install."""
    hooks = AGENTS[agent]
    path = tmp_path / "settings.json"
    install(hooks, path)
    table = json.loads(path.read_text())["hooks"]
    assert {event: [g.get("matcher") for g in groups] for event, groups in table.items()} == {
        event: ["*" if "Tool" in event else None] for event in hooks.events}
    for groups in table.values():  # as an older failcode wrote them
        groups[0] = {"matcher": "*", **groups[0]}
    path.write_text(json.dumps({"hooks": table}))
    install(hooks, path)
    again = json.loads(path.read_text())["hooks"]
    assert {event: [g.get("matcher") for g in groups] for event, groups in again.items()} == {
        event: ["*" if "Tool" in event else None] for event in hooks.events}


_scalar = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
_json = _scalar | st.lists(_scalar, max_size=3) | st.dictionaries(
    st.text(max_size=6), _scalar | st.lists(_scalar, max_size=2), max_size=3)
_hooks_table = st.dictionaries(
    st.sampled_from(["PreToolUse", "PostToolUse", "AfterTool", "Stop", "Custom"]),
    st.lists(st.fixed_dictionaries({"matcher": st.text(max_size=5), "hooks": st.lists(
        st.fixed_dictionaries({"type": st.just("command"), "command": st.text(max_size=12)}),
        min_size=1, max_size=2)}), min_size=1, max_size=2),
    max_size=3)


@settings(max_examples=150, deadline=None)
@given(rest=st.dictionaries(st.text(max_size=6).filter(lambda k: k != "hooks"), _json,
                            max_size=4),
       table=_hooks_table,
       agent=st.sampled_from(sorted(n for n, a in AGENTS.items() if a.kind == "settings")))
def test_uninstall_after_install_gives_back_any_settings_file(
        rest: dict[str, Any], table: dict[str, Any], agent: str,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    path = tmp_path_factory.mktemp("settings") / "settings.json"
    original = {**rest, **({"hooks": table} if table else {})}
    text = _write(path, original)
    install(AGENTS[agent], path)
    assert installed(AGENTS[agent], path).commands
    uninstall(AGENTS[agent], path)
    assert path.read_text() == text


def test_cline_gets_one_hook_file_per_event_and_loses_only_those(tmp_path: Path) -> None:
    """Cline's hooks are executable files named after their events in ``$CLINE_DIR/hooks``;
    one of the user's own stays, and one for an event failcode needs is refused."""
    home, project, cline = tmp_path / "home", tmp_path / "project", tmp_path / "cline"
    project.mkdir()
    hooks_dir = cline / "hooks"
    hooks_dir.mkdir(parents=True)
    (hooks_dir / "PreToolUse.sh").write_text("#!/bin/sh\nexit 0\n")
    env = {"CLINE_DIR": str(cline)}
    done = failcode_cli("hooks", "install", "cline", home=home, cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    for event in AGENTS["cline"].events:
        script = hooks_dir / event
        assert os.access(script, os.X_OK)
        # the file runs failcode's hook for that event: run it as Cline does
        ran = subprocess.run([str(script)], input=b"{}", capture_output=True, check=False,
                             timeout=60, env={**os.environ, "FAILCODE_STATE_DIR": str(tmp_path)})
        assert (ran.returncode, ran.stdout) == (0, b"")
    assert set(installed(AGENTS["cline"], hooks_dir).commands) == set(AGENTS["cline"].events)
    gone = failcode_cli("hooks", "uninstall", "cline", home=home, cwd=project, env=env)
    assert gone.returncode == 0
    assert sorted(p.name for p in hooks_dir.iterdir()) == ["PreToolUse.sh"]

    (hooks_dir / "posttooluse.py").write_text("#!/usr/bin/env python3\n")
    refused = failcode_cli("hooks", "install", "cline", home=home, cwd=project, env=env)
    assert refused.returncode == 1
    assert "posttooluse.py" in refused.stderr
    assert "nothing was written" in refused.stderr
    assert sorted(p.name for p in hooks_dir.iterdir()) == ["PreToolUse.sh", "posttooluse.py"]


def test_codex_hooks_follow_codex_home_and_install_says_to_trust_them(tmp_path: Path) -> None:
    home, project, codex = tmp_path / "home", tmp_path / "project", tmp_path / "codex"
    project.mkdir()
    done = failcode_cli("hooks", "install", "codex", home=home, cwd=project,
                        env={"CODEX_HOME": str(codex)})
    assert done.returncode == 0, done.stderr
    assert "trust" in done.stdout
    assert set(installed(AGENTS["codex"], codex / "hooks.json").commands) == set(
        AGENTS["codex"].events)
    assert not (home / ".codex").exists()
