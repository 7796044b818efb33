"""``failcode hooks install|uninstall|status``: failcode's entries in an agent's settings file.

Rules:

- Install merges one entry per event failcode registers (:class:`AgentHooks.events`) into the
  settings file's ``hooks`` table, in the shape the agent reads (``{"matcher": "*", "hooks":
  [{"type": "command", "command": ..., "timeout": ...}]}``; no matcher for an event that is not
  a tool's: Claude Code matches ``StopFailure``'s against the error type, which ``*`` is not),
  and touches nothing else: every
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
- An agent whose hooks are files (Cline: one executable per event, named after it, in a
  folder) gets one short shell script per event; one of another's for the same event is a
  :class:`SettingsError` (the agent runs one file per event: the person merges them), and
  uninstall removes only failcode's scripts (and the folder, when it is left empty).
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
    """The settings file (or hook folder) of ``scope`` (``user`` or ``project``)."""
    if scope == "user":
        moved = os.environ.get(hooks.home_env) if hooks.home_env and home is None else None
        if moved:  # $CODEX_HOME/hooks.json, $CLINE_DIR/hooks
            return Path(moved) / Path(hooks.user_settings).name
        return (home or Path.home()) / hooks.user_settings
    return (project or Path.cwd()) / hooks.project_settings


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _without_comments(text: str) -> str:
    """``text`` with ``//`` and ``/* */`` comments outside strings removed (JSONC, which
    Gemini CLI and Qwen Code read their settings as)."""
    out, i, n = [], 0, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i:end + 1])
            i = end + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _commented(text: str) -> bool:
    """Whether ``text`` is JSON once its comments are removed."""
    try:
        json.loads(_without_comments(text))
    except ValueError:
        return False
    return True


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
        if _commented(text):
            raise SettingsError(
                f"{path}: has comments (which the agent allows); failcode would lose them "
                "by writing the file, so nothing was written: remove them, or add failcode's "
                "entries yourself (failcode hooks install --help shows the commands)") from None
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


def _run(hooks: AgentHooks, event: str, command: str | None) -> str:
    if command is None:
        return default_command(hooks.name, event)
    return f"{command} hook {shlex.quote(hooks.name)} {shlex.quote(event)}"


def install(hooks: AgentHooks, path: Path, *, command: str | None = None) -> bool:
    """Merge failcode's entries into ``path``; whether the file changed.

    Args:
        hooks: the agent.
        path: its settings file (created when missing).
        command: the command prefix to run instead of this interpreter's failcode
            (``failcode`` when it is on the agent's PATH); the agent and event are appended.
    """
    if hooks.kind == "files":
        return _install_files(hooks, path, command)
    data, before = _load(path)
    table = _hooks_table(path, data, create=True)
    assert table is not None
    timeout = round(HOOK_TIMEOUT_S / hooks.timeout_unit)
    for event in hooks.events:
        run = _run(hooks, event, command)
        groups = _groups(path, table, event)
        ours = [g for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
                and any(_ours(h) for h in g["hooks"])]
        if ours:
            for found in ours:
                for entry in found["hooks"]:
                    if _ours(entry):
                        entry["command"] = run
                if "Tool" not in event and found.get("matcher") == "*":
                    del found["matcher"]  # an older failcode's: "*" matches no error type
            continue
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": run,
                                            "timeout": timeout}]}
        if "Tool" in event:  # a tool event's matcher names tools; another event's (a
            # session's source, StopFailure's error type) is left out: every one matches
            group = {"matcher": "*", **group}
        table[event] = [*groups, group]
    changed = _dumps(data, before) != before
    _write(path, data, before)
    return changed


def uninstall(hooks: AgentHooks, path: Path) -> bool:
    """Remove failcode's entries from ``path``; whether the file changed."""
    if hooks.kind == "files":
        return _uninstall_files(hooks, path)
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
    if hooks.kind == "files":
        return Installed(path, {event: _script_command(path / event) for event in hooks.events
                                if _script_command(path / event)})
    data, before = _load(path)
    table = _hooks_table(path, data, create=False) if before is not None else None
    found: dict[str, str] = {}
    for event, groups in (table or {}).items():
        for group in groups if isinstance(groups, list) else []:
            for entry in group.get("hooks", []) if isinstance(group, dict) else []:
                if _ours(entry):
                    found[event] = str(entry.get("command"))
    return Installed(path, found)


# -- an agent whose hooks are files (Cline: one executable per event, named after it) --------
_SCRIPT: Final = ("#!/bin/sh\n# failcode's hook (failcode hooks uninstall {agent} removes it)\n"
                  "exec {run}\n")


def _script_command(path: Path) -> str:
    """The command of failcode's hook file at ``path`` ("" when there is none of failcode's)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    for line in text.splitlines():
        if line.startswith("exec ") and _OURS.search(f" {line[5:]}"):
            return line[5:]
    return ""


def _taken(folder: Path, event: str) -> Path | None:
    """Another hook file for ``event`` in ``folder`` (the agent matches names without case
    and with any of its extensions), not failcode's."""
    if not folder.is_dir():
        return None
    for path in folder.iterdir():
        if path.name.split(".", 1)[0].lower() == event.lower() and not _script_command(path):
            return path
    return None


def _install_files(hooks: AgentHooks, folder: Path, command: str | None) -> bool:
    if folder.exists() and not folder.is_dir():
        raise SettingsError(f"{folder}: a folder of hook files is expected, found a file; "
                            "nothing was written")
    for event in hooks.events:
        other = _taken(folder, event)
        if other is not None:
            raise SettingsError(f"{other}: {hooks.title} already has a {event} hook that is not "
                                "failcode's; it runs one file per event, so add the line "
                                f"`{_run(hooks, event, command)}` to it yourself; nothing "
                                "was written")
    changed = False
    folder.mkdir(parents=True, exist_ok=True)
    for event in hooks.events:
        path = folder / event
        text = _SCRIPT.format(agent=hooks.name, run=_run(hooks, event, command))
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        staged = folder / f".{event}.failcode-{os.getpid()}"
        staged.write_text(text, encoding="utf-8")
        staged.chmod(0o755)
        staged.replace(path)
        changed = True
    return changed


def _uninstall_files(hooks: AgentHooks, folder: Path) -> bool:
    removed = False
    for event in hooks.events:
        path = folder / event
        if _script_command(path):
            path.unlink()
            removed = True
    if removed and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
    return removed
