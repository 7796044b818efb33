"""The commands: ``failcode hook AGENT EVENT`` (what the agent runs) and ``failcode hooks
install|uninstall|status`` (what a person runs)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from failcode.live._agents import AGENTS
from failcode.live._settings import (
    SettingsError,
    install,
    installed,
    settings_file,
    uninstall,
)

__all__ = ["hook_command", "hooks_group"]

_AGENT = click.Choice(sorted(AGENTS))


def _examples(*lines: str) -> str:
    return "\b\nExamples:\n" + "".join(f"  {line}\n" for line in lines)


@click.command("hook", short_help="Run by an agent's hook: classify its last step and answer.",
               epilog=_examples(
                   "echo '{\"session_id\": \"s1\"}' | failcode hook claude-code PostToolUse",
                   "failcode hooks install claude-code   # registers it for every event"))
@click.argument("agent")
@click.argument("event")
def hook_command(agent: str, event: str) -> None:
    """Read the hook input of AGENT's EVENT on stdin and answer in the agent's hook format.

    The agent runs this, not a person ('failcode hooks install' registers it). It classifies a
    failed tool call as triage does, records it in the session's history, and answers: nothing
    for a failure the agent can fix, a message to the model when the same cause fails again
    (a loop), a stop when only a person can fix it. It always exits 0: whatever goes wrong is
    logged to failcode's hook log, never shown to the agent. See docs/live.md.
    """
    from failcode.live._hook import hook_main  # noqa: PLC0415

    hook_main(agent, event)


@click.group("hooks", short_help="Install failcode's hooks in an agent, remove them, show them.",
             epilog=_examples("failcode hooks install claude-code",
                              "failcode hooks install gemini-cli --project",
                              "failcode hooks status",
                              "failcode hooks uninstall claude-code"))
def hooks_group() -> None:
    """failcode inside the agent's loop: its hooks classify each failed tool call as it
    happens, tell the model when it loops and stop the agent when only a person can help.

    Agents: claude-code, gemini-cli, qwen-code, codex, cline. See docs/live.md for what the
    agent is told and why.
    """


def _scope(project: bool) -> str:
    return "project" if project else "user"


def _project_option(function: click.decorators.FC) -> click.decorators.FC:
    function = click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
                            default=None,
                            help="The project's root for --project (default: here).")(function)
    return click.option("--project/--user", "project", default=False,
                        help="The project's settings (shared with its repository), or the "
                             "user's, for every project (default: --user).")(function)


@hooks_group.command("install", epilog=_examples(
    "failcode hooks install claude-code", "failcode hooks install codex --project",
    "failcode hooks install gemini-cli --command failcode"))
@click.argument("agent", type=_AGENT)
@_project_option
@click.option("--command", "command", default=None, metavar="CMD",
              help="Run CMD instead of this interpreter's failcode (e.g. failcode, when it is on "
                   "the agent's PATH).")
def install_command(agent: str, project: bool, directory: Path | None,
                    command: str | None) -> None:
    """Add failcode's hook entries to AGENT's settings (the rest is kept; a backup first)."""
    hooks = AGENTS[agent]
    path = settings_file(hooks, _scope(project), project=directory)
    try:
        changed = install(hooks, path, command=command)
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"{path}: cannot be written ({exc})") from None
    events = ", ".join(hooks.events)
    if changed:
        click.echo(f"{hooks.title}: failcode's hooks installed in {path} ({events}).")
    else:
        click.echo(f"{hooks.title}: failcode's hooks were already installed in {path}.")
    if hooks.note:
        click.echo(hooks.note)


@hooks_group.command("uninstall", epilog=_examples(
    "failcode hooks uninstall claude-code", "failcode hooks uninstall cline --project"))
@click.argument("agent", type=_AGENT)
@_project_option
def uninstall_command(agent: str, project: bool, directory: Path | None) -> None:
    """Remove failcode's hook entries from AGENT's settings (nothing else)."""
    hooks = AGENTS[agent]
    path = settings_file(hooks, _scope(project), project=directory)
    try:
        changed = uninstall(hooks, path)
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"{path}: cannot be written ({exc})") from None
    if changed:
        click.echo(f"{hooks.title}: failcode's hooks removed from {path}.")
    else:
        click.echo(f"{hooks.title}: no hooks of failcode's in {path}.")


@hooks_group.command("status", epilog=_examples(
    "failcode hooks status", "failcode hooks status claude-code --dir ../other-project"))
@click.argument("agent", type=_AGENT, required=False)
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="The project's root (default: here).")
def status_command(agent: str | None, directory: Path | None) -> None:
    """Where failcode's hooks are installed, per agent and settings file."""
    problems = 0
    for name in [agent] if agent else sorted(AGENTS):
        hooks = AGENTS[name]
        for scope in ("user", "project"):
            path = settings_file(hooks, scope, project=directory)
            try:
                found = installed(hooks, path)
            except SettingsError as exc:  # a read, not a write: no "nothing was written"
                problem = str(exc).split("; nothing was written", 1)[0].split(
                    ", so nothing was written", 1)[0]
                click.echo(f"{hooks.title} ({scope}): {problem}")
                problems += 1
                continue
            if found.commands:
                missing = [e for e in hooks.events if e not in found.commands]
                note = f"; missing: {', '.join(missing)}" if missing else ""
                click.echo(f"{hooks.title} ({scope}): installed in {path} "
                           f"({', '.join(found.commands)}{note})")
            else:
                click.echo(f"{hooks.title} ({scope}): not installed ({path})")
    if problems:
        sys.exit(1)
