"""``failcode hooks install|uninstall|status``: failcode's entries in an agent's settings file.

Rules:

- Install merges one entry per event failcode registers (:class:`AgentHooks.events`) into the
  settings file's ``hooks`` table, in the shape the agent reads (``{"matcher": "*", "hooks":
  [{"type": "command", "command": ..., "timeout": ...}]}``), and touches nothing else: every
  other key, hook and value stays as it was, in its order. It is idempotent: an entry of
  failcode's already there is kept (its command brought up to date), never added twice.
- Before a file is changed, its old text is kept beside it (``<name>.failcode-backup``, the
  last one before failcode's change); the new text is written to a temporary file and renamed
  over it, so a crash leaves the old or the new file, never half of one.
- A settings file that is not a JSON object (broken JSON, a ``hooks`` that is not a table, an
  event that is not a list) is a :class:`SettingsError` naming the file, the line and column
  or the key, and what was expected; nothing is written.
- Uninstall removes failcode's entries, and the lists and tables that only held them; when
  what is left reads as the backup, the backup's text is written back byte for byte (its
  formatting, key order and escapes), and a file install created (no backup) that is left
  empty is removed, so install then uninstall leaves the settings as they were.
  A file written in between keeps its new content (a ``hooks`` table that was empty before
  install is then removed with the last entry). The file's own indentation is kept.
- An entry is failcode's when its command runs ``failcode hook`` (the ``failcode`` program,
  or ``python -m failcode``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from failcode.live._agents import AgentHooks

__all__ = ["HOOK_TIMEOUT_S", "Installed", "SettingsError", "default_command", "install",
           "installed", "settings_file", "uninstall"]

HOOK_TIMEOUT_S: Final = 10
"""The timeout failcode's entries give the agent (the hook bounds itself far below it)."""
_OURS: Final = re.compile(r"(?:^|[\s/\\\"'])(?:failcode(?:\.exe)?|-m failcode)[\"']?\s+hook\s")
BACKUP: Final = ".failcode-backup"


class SettingsError(ValueError):
    """A settings file failcode cannot merge into (the message names it and the problem)."""


@dataclass(frozen=True, slots=True)
class Installed:
    """failcode's entries found in one settings file: event -> command."""

    path: Path
    commands: dict[str, str]


def default_command(agent: str, event: str) -> str:
    """The command an entry runs: this interpreter's failcode, so it works from any PATH."""
    return shlex.join([sys.executable, "-m", "failcode", "hook", agent, event])


def settings_file(hooks: AgentHooks, scope: str, *, home: Path | None = None,
                  project: Path | None = None) -> Path:
    """The settings file of ``scope`` (``user`` or ``project``)."""
    if scope == "user":
        return (home or Path.home()) / hooks.user_settings
    return (project or Path.cwd()) / hooks.project_settings


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _load(path: Path) -> tuple[dict[str, Any], str | None]:
    """The settings object and the file's text (None: no file yet)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: cannot be read ({exc}); nothing was written") from None
    if not text.strip():
        return {}, text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        line, col = _line_col(text, exc.pos)
        raise SettingsError(f"{path}, line {line}, column {col}: not JSON ({exc.msg}); "
                            "fix the file or move it away, then run again; nothing was "
                            "written") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: a JSON object is expected, found "
                            f"{type(data).__name__}; nothing was written")
    return data, text


def _hooks_table(path: Path, data: dict[str, Any], *, create: bool) -> dict[str, Any] | None:
    table = data.get("hooks")
    if table is None:
        if not create:
            return None
        table = data["hooks"] = {}
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: key 'hooks' must be an object of event -> list of "
                            f"hook groups, found {type(table).__name__}; nothing was written")
    return table


def _groups(path: Path, table: dict[str, Any], event: str) -> list[Any]:
    groups = table.get(event, [])
    if not isinstance(groups, list):
        raise SettingsError(f"{path}: key 'hooks.{event}' must be a list of hook groups, "
                            f"found {type(groups).__name__}; nothing was written")
    return groups


def _ours(entry: object) -> bool:
    return isinstance(entry, dict) and bool(_OURS.search(f" {entry.get('command', '')}"))


def _indent(text: str | None) -> int | str:
    """The file's own indentation (its first indented line's), else two spaces."""
    for line in (text or "").splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            lead = line[:len(line) - len(stripped)]
            return lead if "\t" in lead else len(lead)
    return 2


def _dumps(data: dict[str, Any], like: str | None) -> str:
    return json.dumps(data, indent=_indent(like), ensure_ascii=False) + "\n"


def _write(path: Path, data: dict[str, Any], before: str | None, *,
           restore: str | None = None) -> None:
    """Write ``data`` (or the text ``restore`` when it reads as ``data``: the file as it was
    before failcode changed it, byte for byte)."""
    text = restore if restore is not None else _dumps(data, before)
    if text == before:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if before is not None:
        (path.parent / (path.name + BACKUP)).write_text(before, encoding="utf-8")
    staged = path.parent / f".{path.name}.failcode-{os.getpid()}"
    staged.write_text(text, encoding="utf-8")
    staged.replace(path)


def install(hooks: AgentHooks, path: Path, *, command: str | None = None) -> bool:
    """Merge failcode's entries into ``path``; whether the file changed.

    Args:
        hooks: the agent.
        path: its settings file (created when missing).
        command: the command prefix to run instead of this interpreter's failcode
            (``failcode`` when it is on the agent's PATH); the agent and event are appended.
    """
    data, before = _load(path)
    table = _hooks_table(path, data, create=True)
    assert table is not None
    timeout = round(HOOK_TIMEOUT_S / hooks.timeout_unit)
    for event in hooks.events:
        run = (default_command(hooks.name, event) if command is None
               else f"{command} hook {shlex.quote(hooks.name)} {shlex.quote(event)}")
        groups = _groups(path, table, event)
        mine = [h for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
                for h in g["hooks"] if _ours(h)]
        if mine:
            for entry in mine:
                entry["command"] = run
            continue
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": run,
                                            "timeout": timeout}]}
        if event != "SessionStart":
            group = {"matcher": "*", **group}
        table[event] = [*groups, group]
    changed = _dumps(data, before) != before
    _write(path, data, before)
    return changed


def uninstall(hooks: AgentHooks, path: Path) -> bool:
    """Remove failcode's entries from ``path``; whether the file changed."""
    data, before = _load(path)
    if before is None:
        return False
    table = _hooks_table(path, data, create=False)
    if table is None:
        return False
    removed = False
    for event in list(table):
        groups = _groups(path, table, event)
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list) \
                    and any(_ours(h) for h in group["hooks"]):
                removed = True
                rest = [h for h in group["hooks"] if not _ours(h)]
                if rest:
                    kept.append({**group, "hooks": rest})
                continue
            kept.append(group)
        if kept:
            table[event] = kept
        elif groups:
            del table[event]
    if not removed:
        return False
    if not table:
        del data["hooks"]
    backup = path.parent / (path.name + BACKUP)
    if not data and not backup.exists():  # failcode created the file: it goes again
        path.unlink()
        return True
    _write(path, data, before, restore=_backup_of(path, data))
    return True


def _backup_of(path: Path, data: dict[str, Any]) -> str | None:
    """The backup's text when it reads as ``data`` (the file is back to what it was)."""
    backup = path.parent / (path.name + BACKUP)
    try:
        text = backup.read_text(encoding="utf-8")
        return text if json.loads(text) == data else None
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def installed(hooks: AgentHooks, path: Path) -> Installed:
    """failcode's entries in ``path`` (none when the file is missing)."""
    data, before = _load(path)
    table = _hooks_table(path, data, create=False) if before is not None else None
    found: dict[str, str] = {}
    for event, groups in (table or {}).items():
        for group in groups if isinstance(groups, list) else []:
            for entry in group.get("hooks", []) if isinstance(group, dict) else []:
                if _ours(entry):
                    found[event] = str(entry.get("command"))
    return Installed(path, found)
