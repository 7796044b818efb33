"""Walking a folder finds the agents' own hidden logs, and only those.

The logs are the session lab's (``tests/lab/fixtures/``), put back where each agent writes
them (the fixtures drop the leading dots); beside them sit the other files those hidden
folders hold (settings, prompt histories, caches), which are not sessions.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from failcode.triage import triage
from failcode.triage._analyze import expand
from tests.lab.runner import FIXTURES

if TYPE_CHECKING:
    from pathlib import Path


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    for agent, top in (("claude-code", "claude"), ("codex", "codex"),
                       ("gemini-cli", "gemini"), ("openhands", "openhands")):
        shutil.copytree(FIXTURES / agent / "missing-program" / "session" / top, home / f".{top}")
    project = home / "project"
    project.mkdir()
    shutil.copy(FIXTURES / "aider" / "missing-program" / "session" / "aider"
                / "aider.chat.history.md", project / ".aider.chat.history.md")
    # what else those folders hold: not session logs
    (home / ".claude" / "settings.json").write_text('{"theme": "dark"}')
    (home / ".claude" / "todos").mkdir()
    (home / ".claude" / "todos" / "a.json").write_text("[]")
    (home / ".codex" / "config.toml").write_text('model = "x"\n')
    (home / ".gemini" / "settings.json").write_text("{}")
    (home / ".gemini" / "tmp" / "project" / "logs.json").write_text("[]")
    (home / ".cache").mkdir()
    (home / ".cache" / "x.json").write_text("{}")
    (project / ".env").write_text("A=1\n")
    return home


def test_walking_a_home_finds_every_agents_logs(tmp_path: Path) -> None:
    """Claude Code, Codex, Gemini CLI, OpenHands and aider logs are found and read."""
    result = triage([_home(tmp_path)])
    assert [item.error_code for item in result.inputs] == [None] * len(result.inputs)
    assert sorted(item.format or "" for item in result.inputs) == [
        "aider", "claude-code", "codex", "gemini-cli", "openhands"]
    # the missing program at step 0 (aider's history records no output or status)
    assert all(s.failures for s in result.sessions if s.format != "aider")


def test_the_other_files_of_agent_folders_are_not_inputs(tmp_path: Path) -> None:
    """Settings, todo lists, prompt logs and caches in hidden folders are never walked."""
    names = {path.name for path, _ in expand([_home(tmp_path)])}
    assert not names & {"settings.json", "a.json", "config.toml", "logs.json", "x.json",
                        ".env"}


def test_a_hidden_folder_named_explicitly_is_walked_whole(tmp_path: Path) -> None:
    """Naming ``~/.codex/sessions`` itself walks it like any folder."""
    home = _home(tmp_path)
    found = [path for path, _ in expand([home / ".codex" / "sessions"])]
    assert len(found) == 1
    assert found[0].name.startswith("rollout-")


def test_an_agent_folder_named_itself_gives_its_logs_only(tmp_path: Path) -> None:
    """``failcode triage ~/.claude`` reads its transcripts, not its settings or todo lists."""
    home = _home(tmp_path)
    result = triage([home / ".claude", home / ".gemini"])
    assert [(item.format, item.error_code) for item in result.inputs] == [
        ("claude-code", None), ("gemini-cli", None)]


def _copilot_session(home: Path) -> Path:
    """A Copilot CLI session where the model's bash call fails (shapes: tests/triage/
    test_copilot.py, from the format's published events)."""
    from tests.triage.test_copilot import START, _answer, _bash, _prompt, _shell_result, _write

    records = [START, _prompt(), *_bash("c1", "pytest -q"),
               _shell_result("c1", "1 failed, 2 passed in 0.1s\n", 1), *_answer()]
    return _write(home / ".copilot", records)


def test_walking_a_home_finds_copilot_sessions(tmp_path: Path) -> None:
    home = _home(tmp_path)
    path = _copilot_session(home)
    (home / ".copilot" / "config.json").write_text("{}")  # its settings: not a session
    found = [p for p, _ in expand([home])]
    assert path in found
    assert home / ".copilot" / "config.json" not in found


def test_home_logs_reads_every_agents_default_location(tmp_path: Path) -> None:
    """``triage --home``: each agent's documented location under a user's home, honouring the
    variables that move them; aider's history from the current directory."""
    from failcode.triage._discover import default_locations, home_logs

    home = _home(tmp_path)
    _copilot_session(home)
    mini = tmp_path / "mini-config"
    mini.mkdir()
    shutil.copy(FIXTURES / "mini-swe-agent" / "missing-program" / "session" / "runs"
                / "lab.traj.json", mini / "last_mini_run.traj.json")
    moved = tmp_path / "codex-home"
    shutil.move(home / ".codex", moved)
    env = {"MSWEA_GLOBAL_CONFIG_DIR": str(mini), "CODEX_HOME": str(moved)}
    found, looked = home_logs(default_locations(env=env, home=home, cwd=home / "project"))
    assert len(looked) == 7
    result = triage(found)
    assert sorted(item.format or "" for item in result.inputs) == [
        "aider", "claude-code", "codex", "copilot-cli", "gemini-cli", "mini-swe-agent",
        "openhands"]
    assert [item.error_code for item in result.inputs] == [None] * 7


def test_home_logs_with_nothing_there_finds_nothing(tmp_path: Path) -> None:
    from failcode.triage._discover import default_locations, home_logs

    found, looked = home_logs(default_locations(env={}, home=tmp_path, cwd=tmp_path))
    assert found == []
    assert tmp_path / ".claude" / "projects" in looked
