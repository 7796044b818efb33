"""docs/cli.md's command reference is what the click commands print: it cannot drift."""

from __future__ import annotations

import click

from failcode.cli import main
from tests.docs.cli_reference import BEGIN, END, PAGE, REGENERATE, render, updated


def test_cli_reference_is_up_to_date() -> None:
    """The generated part of docs/cli.md equals a fresh rendering of every command's help."""
    current = PAGE.read_text(encoding="utf-8")
    assert current == updated(current), (
        f"docs/cli.md is out of date with the click commands: run `{REGENERATE}` "
        "(or `.venv/bin/python -m tests.docs.cli_reference`) and commit docs/cli.md")


def test_cli_reference_keeps_the_hand_written_part() -> None:
    """The page opens with its hand-written introduction, and the markers appear once each."""
    current = PAGE.read_text(encoding="utf-8")
    assert current.count(BEGIN) == 1
    assert current.count(END) == 1
    assert current.index(BEGIN) > current.index("# The `failcode` command")


def test_cli_reference_covers_every_command() -> None:
    """Every command and subcommand of `failcode` has a section with its usage line."""
    ctx = click.Context(main, info_name="failcode")
    text = render()
    assert isinstance(main, click.Group)
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        assert command is not None
        assert f"### `failcode {name}`" in text
        assert f"Usage: failcode {name} " in text
        if isinstance(command, click.Group):
            sub_ctx = click.Context(command, info_name=name, parent=ctx)
            for sub in command.list_commands(sub_ctx):
                assert f"### `failcode {name} {sub}`" in text
                assert f"Usage: failcode {name} {sub} " in text
