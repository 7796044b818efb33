"""Walking a folder finds the agents' own hidden logs, and only those.

The logs are the session lab's (``tests/lab/fixtures/``), put back where each agent writes
them (the fixtures drop the leading dots); beside them sit the other files those hidden
folders hold (settings, prompt histories, caches), which are not sessions.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from failcode.triage import triage
from failcode.triage.analysis._analyze import expand
from tests.lab.runner import FIXTURES
from tests.triage._data import sessions_2_dir


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
    assert len(looked) == 13  # Qwen Code's, Cline's and OpenCode's are looked in too (empty)
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


def _folder_with_notes(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURES / "mini-swe-agent" / "pytest-failure" / "session" / "runs", runs)
    (runs / "README.md").write_text("# what these runs are\n")
    (runs / "config.yaml").write_text("model: x\n")
    (runs / "notes.json").write_text('{"not": "a session"}')
    (runs / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (runs / "empty.log").write_text("")
    return runs


def test_walked_files_that_are_not_logs_are_skipped_and_counted(tmp_path: Path) -> None:
    runs = _folder_with_notes(tmp_path)
    result = triage([runs])
    assert result.ok
    assert [(Path(i.path).name, i.format) for i in result.inputs] == [
        ("lab.traj.json", "mini-swe-agent")]
    assert sorted(Path(p).name for p in result.skipped) == [
        "README.md", "config.yaml", "empty.log", "image.png", "notes.json"]
    assert result.to_dict()["skipped"] == result.skipped


def test_a_named_file_that_is_not_a_log_is_still_an_error(tmp_path: Path) -> None:
    runs = _folder_with_notes(tmp_path)
    result = triage([runs / "README.md"])
    assert [i.error_code for i in result.inputs] == ["FC-DATA-002"]
    assert result.skipped == []


def test_include_and_exclude_select_walked_files(tmp_path: Path) -> None:
    runs = _folder_with_notes(tmp_path)
    (runs / "old").mkdir()
    shutil.copy(runs / "lab.traj.json", runs / "old" / "a.traj.json")
    names = [Path(p).relative_to(runs).as_posix() for p, _ in expand([runs])]
    assert names == ["lab.traj.json", "old/a.traj.json"]
    assert [Path(p).name for p, _ in expand([runs], exclude=["old/*"])] == ["lab.traj.json"]
    assert [Path(p).name for p, _ in expand([runs], include=["a.*"])] == ["a.traj.json"]


def test_an_empty_folder_is_an_error_naming_it(tmp_path: Path) -> None:
    empty = tmp_path / "nothing"
    empty.mkdir()
    (empty / "notes.txt").write_text("todo\n")
    result = triage([empty])
    assert not result.ok
    (item,) = result.inputs
    assert (item.path, item.error_code) == (str(empty), "FC-DATA-004")
    assert "holds no session log (1 file in it is not a session log)" in (
        item.error_message or "")


def test_a_fifo_in_a_walked_folder_is_never_opened(tmp_path: Path) -> None:
    """Opening a FIFO with no writer blocks for ever: walking skips what is not a file."""
    runs = _folder_with_notes(tmp_path)
    os.mkfifo(runs / "pipe")
    found = expand([runs])
    assert str(runs / "pipe") in found.skipped


def test_cli_reports_what_it_skipped(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from failcode.cli import main

    runs = _folder_with_notes(tmp_path)
    done = CliRunner().invoke(main, ["triage", str(runs), "--json", "--jobs", "1"])
    assert done.exit_code == 0, done.output
    document = json.loads(done.output)
    assert len(document["skipped"]) == 5
    plain = CliRunner().invoke(main, ["triage", str(runs), "--jobs", "1"])
    assert "1 input read, 5 skipped (not session logs)" in plain.output.replace("\n", " ")
    empty = tmp_path / "none"
    empty.mkdir()
    failed = CliRunner().invoke(main, ["triage", str(empty), "--jobs", "1"])
    assert failed.exit_code == 2
    assert "holds no session log" in failed.output


def test_cline_tasks_are_found_where_cline_and_roo_code_keep_them(tmp_path: Path) -> None:
    """Cline's CLI (``~/.cline/data``, or ``$CLINE_DIR``), the VS Code extension's global
    storage and Roo Code's: each task's ``ui_messages.json``; walking a folder that holds a
    ``.cline`` folder finds its tasks too (VS Code's own folders are no agent's: not walked)."""
    from failcode.triage._discover import default_locations, home_logs

    task = next((sessions_2_dir() / "cline").rglob("ui_messages.json")).read_bytes()
    home = tmp_path / "home"
    places = [home / ".cline" / "data" / "tasks" / "1770000000001",
              home / ".config" / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev"
              / "tasks" / "1770000000002",
              home / ".config" / "Code" / "User" / "globalStorage"
              / "rooveterinaryinc.roo-cline" / "tasks" / "1770000000003"]
    for place in places:
        place.mkdir(parents=True)
        (place / "ui_messages.json").write_bytes(task)
        (place / "api_conversation_history.json").write_text("[]")
    found, _ = home_logs(default_locations(env={}, home=home, cwd=tmp_path))
    assert sorted(found) == sorted(place / "ui_messages.json" for place in places)
    result = triage(found)
    assert [s.session for s in result.sessions] == ["1770000000001", "1770000000002",
                                                    "1770000000003"]
    walked = triage([home])
    assert [Path(i.path).parent.name for i in walked.inputs] == ["1770000000001"]


def test_the_cline_clis_sessions_are_found_in_its_data_folder(tmp_path: Path) -> None:
    """Cline's 3.x CLI keeps ``sessions/<id>/<id>.messages.json`` in its data folder
    (``~/.cline/data``, ``$CLINE_DIR/data``, ``$CLINE_DATA_DIR``): found and read as its
    format (a session of the lab's kept runs of the pinned CLI)."""
    from failcode.triage._discover import default_locations, home_logs

    kept = next((FIXTURES / "cline" / "pytest-failure").rglob("*.messages.json"))
    for env, data in (({}, tmp_path / "home" / ".cline" / "data"),
                      ({"CLINE_DIR": str(tmp_path / "dir")}, tmp_path / "dir" / "data"),
                      ({"CLINE_DATA_DIR": str(tmp_path / "own")}, tmp_path / "own")):
        session = data / "sessions" / kept.parent.name / kept.name
        session.parent.mkdir(parents=True)
        shutil.copy(kept, session)
        found, _ = home_logs(default_locations(env=env, home=tmp_path / "home", cwd=tmp_path))
        assert found == [session], (env, found)
        assert [i.format for i in triage(found).inputs] == ["cline-cli"]
    (tmp_path / "home" / ".cline" / "data" / "settings.json").write_text("{}")
    walked = triage([tmp_path / "home"])  # a hidden .cline folder: its sessions only
    assert [(Path(i.path).name, i.format) for i in walked.inputs] == [(kept.name, "cline-cli")]


def _opencode_database(path: Path) -> Path:
    """An OpenCode database: the lab's kept ``opencode.db`` of a run (OpenCode's schema)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "opencode" / "pytest-failure" / "opencode.db", path)
    return path


def test_opencodes_database_is_found_where_opencode_keeps_it(tmp_path: Path) -> None:
    """OpenCode: ``~/.local/share/opencode/opencode.db`` (and a channel's
    ``opencode-<channel>.db`` beside it), ``$XDG_DATA_HOME/opencode/`` when set, and
    ``$OPENCODE_DB`` in their place; found and read as OpenCode sessions."""
    from failcode.triage._discover import default_locations, home_logs

    home = tmp_path / "home"
    share = home / ".local" / "share" / "opencode"
    default = [_opencode_database(share / "opencode.db"),
               _opencode_database(share / "opencode-dev.db")]
    (share / "opencode.db-wal").write_bytes(b"")
    found, _ = home_logs(default_locations(env={}, home=home, cwd=tmp_path))
    assert found == sorted(default)
    result = triage(found)
    assert {(i.format, i.error_code) for i in result.inputs} == {("opencode-db", None)}
    assert {s.agent_version for s in result.sessions} == {"1.18.33"}

    data = _opencode_database(tmp_path / "xdg" / "opencode" / "opencode.db")
    found, _ = home_logs(default_locations(env={"XDG_DATA_HOME": str(tmp_path / "xdg")},
                                           home=home, cwd=tmp_path))
    assert found == [data]
    chosen = _opencode_database(tmp_path / "elsewhere" / "sessions.db")
    found, _ = home_logs(default_locations(env={"OPENCODE_DB": str(chosen)}, home=home,
                                           cwd=tmp_path))
    assert found == [chosen]
