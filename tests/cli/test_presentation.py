"""How the `failcode` command presents itself: help, examples, wording, terminal output."""

from __future__ import annotations

import os
import pty
import re
import subprocess
from typing import TYPE_CHECKING

import click
import pytest

from failcode.cli import main
from tests.cli._console import SCRIPT, failcode

if TYPE_CHECKING:
    from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-9;]*m")
COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-79]|9[0-7]|38;[25];[0-9;]+)m")


def _commands(group: click.Group, ctx: click.Context, path: tuple[str, ...] = (),
              ) -> list[tuple[str, ...]]:
    found = [path]
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            found += _commands(command, ctx, (*path, name))
        else:
            found.append((*path, name))
    return found


COMMANDS = _commands(main, click.Context(main))


def test_no_command_prints_help_and_exits_0() -> None:
    """`failcode` alone prints the usage and the command list, exit 0."""
    result = failcode()
    assert result.returncode == 0
    assert result.stdout.startswith("Usage: failcode")
    assert "Commands:" in result.stdout


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) or "failcode" for p in COMMANDS])
def test_every_help_has_examples_and_no_cut_line(path: tuple[str, ...]) -> None:
    """Each command's --help shows examples, and no summary in its lists is cut off ('...')."""
    result = failcode(*path, "--help", env={"COLUMNS": "100"})
    assert result.returncode == 0, result.stderr
    assert "Examples:" in result.stdout
    example_lines = result.stdout.split("Examples:", 1)[1].strip().splitlines()
    assert any(line.strip().startswith(("failcode", "python", "echo")) for line in example_lines)
    cut = [line for line in result.stdout.splitlines()
           if line.rstrip().endswith("...") and not line.startswith("Usage:")]  # [ARGS]...
    assert not cut


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) or "failcode" for p in COMMANDS])
def test_every_option_has_help(path: tuple[str, ...]) -> None:
    """Every option of every command says what it does."""
    command: click.Command = main
    ctx = click.Context(main)
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(ctx, name)
        assert found is not None
        command = found
    for parameter in command.params:
        if isinstance(parameter, click.Option):
            assert parameter.help or parameter.name in ("help", "version"), parameter.name


def test_codes_plural_for_one_code(tmp_path: Path) -> None:
    """A one-code catalog says '1 code', not '1 codes'."""
    (tmp_path / "one_catalog.py").write_text(
        "from failcode import Catalog, Category, CodeEnum, CodeSpec, Kind\n"
        "class OneCode(CodeEnum):\n"
        "    A = CodeSpec(code='ONE-NET-001', slug='net-down', kind=Kind.ENV_ERROR,\n"
        "                 category=Category.ENVIRONMENT, error_class='net_down',\n"
        "                 message='The network is down.', remedy='Reconnect.',\n"
        "                 impact='Nothing can be fetched.', example='Wi-Fi off.', since='1.0')\n"
        "ONE = Catalog('ONE', areas={'NET': 'networking'}, codes=OneCode)\n")
    result = failcode("codes", "--catalog", "one_catalog:ONE", cwd=tmp_path)
    assert "\n1 code in ONE;" in result.stdout
    missing = failcode("codes", "check", "--catalog", "one_catalog:ONE", cwd=tmp_path)
    # the hint keeps the --catalog the user gave, so it can be pasted as is
    assert "`failcode codes lock --catalog one_catalog:ONE`" in missing.stderr
    assert failcode("codes", "lock", "--catalog", "one_catalog:ONE", cwd=tmp_path).stdout \
        .startswith("locked 1 code in")


def test_explain_has_no_repository_relative_docs_line() -> None:
    """`failcode explain` never points a pip user at a path inside the repository."""
    result = failcode("explain", "FC-CMD-001")
    assert result.returncode == 0
    assert "docs/codes.md" not in result.stdout
    assert not [line for line in result.stdout.splitlines()
                if line.startswith("Docs:") and "://" not in line]


def test_config_check_shows_real_key_names(tmp_path: Path) -> None:
    """`failcode config check` names the keys as they are written in failcode.toml."""
    result = failcode("config", "check", cwd=tmp_path)
    assert result.returncode == 0
    header = result.stdout.splitlines()[1].split()
    assert header == ["[retry.<class>]", "attempts", "initial_delay_s", "max_delay_s",
                      "multiplier", "deadline_s"]
    assert "INITIAL_S" not in result.stdout


def test_doctor_without_checks_says_how_to_add_some(tmp_path: Path) -> None:
    """`failcode doctor` with nothing configured shows a [preflight] table to start from."""
    result = failcode("doctor", cwd=tmp_path)
    assert result.returncode == 0
    assert "[preflight]" in result.stdout
    assert "programs = [" in result.stdout


def test_doctor_plural_for_one_check(tmp_path: Path) -> None:
    """One configured check is reported as '1 check'."""
    (tmp_path / "failcode.toml").write_text('[preflight]\nprograms = ["sh"]\n')
    result = failcode("doctor", cwd=tmp_path)
    assert result.returncode == 0
    assert re.search(r"^1 check from \S*failcode\.toml, 0 failed\.$", result.stdout, re.MULTILINE)


def _on_terminal(*args: str, env: dict[str, str]) -> str:
    """Run the console script with a pseudo-terminal as stdout and stderr; its output."""
    leader, follower = pty.openpty()
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS")}
    environment.update(TERM="xterm-256color", **env)
    with subprocess.Popen([SCRIPT, *args], stdout=follower, stderr=follower,
                          stdin=subprocess.DEVNULL, env=environment) as process:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the process is done
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_terminal_output_is_coloured() -> None:
    """On a terminal the failure report is coloured."""
    text = _on_terminal("run", "--", "failcode-test-nonexistent-program", env={"COLUMNS": "80"})
    assert COLOUR.search(text)
    assert "FC-CMD-001" in ANSI.sub("", text)


def test_no_color_turns_colour_off() -> None:
    """NO_COLOR=1 keeps the terminal output free of colour codes."""
    text = _on_terminal("run", "--", "failcode-test-nonexistent-program",
                        env={"COLUMNS": "80", "NO_COLOR": "1"})
    assert "FC-CMD-001" in ANSI.sub("", text)
    assert not COLOUR.search(text)


def test_terminal_output_wraps_to_its_width() -> None:
    """On a narrow terminal no printed line is wider than the terminal."""
    text = ANSI.sub("", _on_terminal("doctor", env={"COLUMNS": "50", "NO_COLOR": "1"}))
    lines = text.replace("\r", "").splitlines()
    assert lines
    assert max(len(line) for line in lines) <= 50


def test_piped_output_is_plain() -> None:
    """Piped, the output has no escape codes even where a terminal would get colour."""
    result = failcode("run", "--", "failcode-test-nonexistent-program")
    assert "\x1b[" not in result.stderr + result.stdout
