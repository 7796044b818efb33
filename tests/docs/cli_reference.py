"""The command reference of docs/cli.md, generated from the click commands themselves.

Every command and group under ``failcode`` (``failcode.cli.main``), depth first in the order
``failcode --help`` lists them, rendered with click's own help formatter at a fixed width, so
the page shows exactly what ``failcode COMMAND --help`` prints (piped, without colour) and
cannot drift from it. The page keeps its hand-written part above :data:`BEGIN`; everything
between :data:`BEGIN` and :data:`END` is generated.

Regenerate (from the repository root)::

    python -m tests.docs.cli_reference            # rewrite docs/cli.md's generated part
    python -m tests.docs.cli_reference --check    # exit 1 when docs/cli.md is out of date
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

import click

from failcode.cli import main as failcode_main
from tests._paths import REPO

if TYPE_CHECKING:
    from collections.abc import Iterator

PAGE = REPO / "docs" / "cli.md"
BEGIN = "<!-- BEGIN generated command reference: python -m tests.docs.cli_reference -->"
END = "<!-- END generated command reference -->"
WIDTH = 100
"""The help's width: the CLI's own ``max_content_width``, fixed so the page does not depend on
the terminal it was generated in."""
REGENERATE = "python -m tests.docs.cli_reference"


def _commands(command: click.Command, ctx: click.Context) -> Iterator[click.Context]:
    """``ctx`` and the context of every command below it, depth first, in listed order."""
    yield ctx
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            yield from _commands(sub, click.Context(sub, info_name=name, parent=ctx,
                                                    **sub.context_settings))


def render() -> str:
    """The generated part of docs/cli.md: one section per command, its ``--help`` verbatim."""
    settings = {**failcode_main.context_settings, "terminal_width": WIDTH,
                "max_content_width": WIDTH, "color": False}
    root = click.Context(failcode_main, info_name="failcode", **settings)
    sections = []
    for ctx in _commands(failcode_main, root):
        text = ctx.command.get_help(ctx).rstrip()
        fence = "````" if "```" in text else "```"
        sections.append(f"### `{ctx.command_path}`\n\n{fence}text\n{text}\n{fence}\n")
    return "\n".join(sections)


def updated(page: str) -> str:
    """``page`` with its generated part replaced by :func:`render`'s (markers kept)."""
    head, begin, rest = page.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        msg = f"{PAGE.relative_to(REPO)} lacks the markers {BEGIN!r} ... {END!r}"
        raise ValueError(msg)
    return f"{head}{BEGIN}\n\n{render()}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    """Rewrite docs/cli.md's generated part, or with ``--check`` report whether it is stale."""
    parser = argparse.ArgumentParser(prog=REGENERATE, description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when docs/cli.md is out of date; write nothing")
    args = parser.parse_args(argv)
    current = PAGE.read_text(encoding="utf-8")
    wanted = updated(current)
    if args.check:
        if current != wanted:
            print(f"docs/cli.md is out of date: run `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    if current != wanted:
        PAGE.write_text(wanted, encoding="utf-8")
        print("docs/cli.md: command reference regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
