"""Where each supported agent keeps its session logs for the current user (``triage --home``).

Rules (each agent's documented default location, and the environment variable it honours):

- Claude Code: ``$CLAUDE_CONFIG_DIR/projects``, else ``~/.claude/projects``: ``*.jsonl``
  transcripts, one folder per project (subagent transcripts below them).
- Codex CLI: ``$CODEX_HOME/sessions``, else ``~/.codex/sessions``: ``YYYY/MM/DD/rollout-*.jsonl``.
- Gemini CLI: ``$GEMINI_CLI_HOME/.gemini/tmp``, else ``~/.gemini/tmp``:
  ``<project hash>/chats/session-*.json`` (and ``.jsonl``).
- GitHub Copilot CLI: ``~/.copilot/session-state/<session id>/events.jsonl``, and
  ``~/.copilot/session-state/<session id>.jsonl`` of the versions before the folder per
  session.
- Qwen Code: ``$QWEN_RUNTIME_DIR``, else ``$QWEN_HOME``, else ``~/.qwen`` (Qwen Code's
  ``Storage.getRuntimeBaseDir``): ``projects/<project>/chats/<session id>.jsonl``.
- Cline: the VS Code extension's global storage (``saoudrizwan.claude-dev``; Roo Code, its
  fork, ``rooveterinaryinc.roo-cline``) under VS Code's user folder (``$XDG_CONFIG_HOME/Code``,
  else ``~/.config/Code``; ``~/Library/Application Support/Code`` on macOS), and the Cline
  CLI's ``$CLINE_DATA_DIR``, else ``$CLINE_DIR/data``, else ``~/.cline/data``:
  ``tasks/<task id>/ui_messages.json``; the 3.x CLI's sessions in the same data folder:
  ``sessions/<id>/<id>.messages.json``.
- OpenHands CLI: ``$OPENHANDS_CONVERSATIONS_DIR``, else
  ``$OPENHANDS_PERSISTENCE_DIR/conversations``, else ``~/.openhands/conversations``: one
  conversation folder each.
- mini-swe-agent: ``$MSWEA_GLOBAL_CONFIG_DIR``, else the user config directory
  (``platformdirs.user_config_dir("mini-swe-agent")``: ``~/.config/mini-swe-agent`` on Linux):
  ``*.traj.json`` (``last_mini_run.traj.json`` is where ``mini`` writes by default).
- aider writes ``.aider.chat.history.md`` into the project it runs in, not under HOME: the
  current directory's history is read when there is one.
- OpenCode (1.2 and later): its SQLite database, ``$XDG_DATA_HOME/opencode/opencode.db``,
  else ``~/.local/share/opencode/opencode.db``, on every system (OpenCode takes its data
  folder from ``xdg-basedir``, which has no macOS or Windows folder), and
  ``opencode-<channel>.db`` beside it (a build of another channel than ``latest``, ``beta`` or
  ``prod``); ``$OPENCODE_DB`` (absolute, or relative to that folder) replaces them (OpenCode's
  ``storage/db.ts``). It is read in place, its write-ahead log too
  (:mod:`failcode.triage.readers._opencode_db`). The JSON files of the versions before 1.2
  (``storage/session``, ``storage/message``, ``storage/part``) split one session over three
  folders, none of them a session alone: not looked for.

A location that does not exist is skipped; none existing is an error (FC-DATA-005) naming
every place looked in. A location that exists but cannot be listed (permission denied) is
found as an input of its own, so that triage reports its error (FC-DATA-005), never skips it.
"""

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["Location", "default_locations", "home_logs"]


class Location(NamedTuple):
    """One agent's log folder and the pattern of its session logs inside it (``|`` between
    alternatives)."""

    agent: str
    folder: Path
    pattern: str


_CONVERSATION: Final = "*"


def _config_dir(env: Mapping[str, str], home: Path) -> Path:
    explicit = env.get("MSWEA_GLOBAL_CONFIG_DIR")
    if explicit:
        return Path(explicit)
    if env is os.environ and home == Path.home():
        import platformdirs  # noqa: PLC0415 - only --home needs it

        return Path(platformdirs.user_config_dir("mini-swe-agent"))
    base = env.get("XDG_CONFIG_HOME")
    return (Path(base) if base else home / ".config") / "mini-swe-agent"


_CLINE_TASK: Final = "*/ui_messages.json"


def _vscode_user(env: Mapping[str, str], home: Path) -> Path:
    """VS Code's user folder (where extensions keep their global storage)."""
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Code" / "User"
    base = env.get("XDG_CONFIG_HOME")
    return (Path(base) if base else home / ".config") / "Code" / "User"


def _opencode(env: Mapping[str, str], home: Path) -> Location:
    """OpenCode's session database (the module's rules)."""
    data = (Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME")
            else home / ".local" / "share") / "opencode"
    chosen = env.get("OPENCODE_DB")
    if chosen and chosen != ":memory:":
        path = data / chosen  # an absolute $OPENCODE_DB replaces the folder
        return Location("opencode", path.parent, glob.escape(path.name))
    return Location("opencode", data, "opencode.db|opencode-*.db")


def default_locations(env: Mapping[str, str] | None = None, home: Path | None = None,
                      cwd: Path | None = None) -> list[Location]:
    """Every agent's documented log location for this user (existing or not), in a fixed
    order; ``env``, ``home`` and ``cwd`` default to the process's."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    cwd = Path.cwd() if cwd is None else cwd
    claude = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    codex = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
    gemini = (Path(env["GEMINI_CLI_HOME"]) if env.get("GEMINI_CLI_HOME") else home) / ".gemini"
    qwen = Path(env.get("QWEN_RUNTIME_DIR") or env.get("QWEN_HOME") or home / ".qwen")
    persistence = (Path(env["OPENHANDS_PERSISTENCE_DIR"]) if env.get("OPENHANDS_PERSISTENCE_DIR")
                   else home / ".openhands")
    conversations = (Path(env["OPENHANDS_CONVERSATIONS_DIR"])
                     if env.get("OPENHANDS_CONVERSATIONS_DIR") else persistence / "conversations")
    cline = Path(env.get("CLINE_DATA_DIR") or Path(env.get("CLINE_DIR") or home / ".cline")
                 / "data")
    storage = _vscode_user(env, home) / "globalStorage"
    return [
        Location("claude-code", claude / "projects", "**/*.jsonl"),
        Location("codex", codex / "sessions", "**/rollout-*.jsonl"),
        Location("gemini-cli", gemini / "tmp", "*/chats/session-*.json*"),
        Location("copilot-cli", home / ".copilot" / "session-state",
                 "*/events.jsonl|*.jsonl"),
        Location("qwen-code", qwen / "projects", "*/chats/*.jsonl"),
        Location("cline", cline / "tasks", _CLINE_TASK),
        Location("cline-cli", cline / "sessions", "*/*.messages.json"),
        Location("cline", storage / "saoudrizwan.claude-dev" / "tasks", _CLINE_TASK),
        Location("cline", storage / "rooveterinaryinc.roo-cline" / "tasks", _CLINE_TASK),
        Location("openhands", conversations, _CONVERSATION),
        Location("mini-swe-agent", _config_dir(env, home), "*.traj.json"),
        _opencode(env, home),
        Location("aider", cwd, ".aider.chat.history.md"),
    ]


def home_logs(locations: list[Location] | None = None) -> tuple[list[Path], list[Path]]:
    """``(logs found, folders looked in)``: every session log at the default locations, in
    sorted order per location (an OpenHands conversation folder is one log)."""
    from failcode.triage.analysis._analyze import is_conversation  # noqa: PLC0415 - no import cycle

    found: list[Path] = []
    looked: list[Path] = []
    for location in locations if locations is not None else default_locations():
        looked.append(location.folder)
        if not location.folder.is_dir():
            continue
        try:
            with os.scandir(location.folder) as entries:  # glob drops a folder it cannot list
                next(entries, None)
        except OSError:
            found.append(location.folder)  # triage reports why (FC-DATA-005)
            continue
        paths = {p for pattern in location.pattern.split("|")
                 for p in location.folder.glob(pattern)}
        for path in sorted(paths):
            if location.pattern == _CONVERSATION:
                if path.is_dir() and is_conversation(path):
                    found.append(path)
            elif path.is_file():
                found.append(path)
    return found, looked
