"""How the ``failcode`` command prints: rich on a terminal, plain text when piped.

On a terminal (or with ``FORCE_COLOR`` set) output goes through a ``rich`` Console: colour,
tables, and text wrapped to the terminal's width; ``NO_COLOR`` turns colour off (rich reads it).
When the stream is a pipe or a file, output is plain, unwrapped text with no escape codes, so
scripts can parse it. Commands call :func:`echo`, :func:`table` and :func:`failure_text`
and never decide this themselves.

Rule (the terminal is not an attack surface): :func:`echo` and :func:`table` print values that
may come from a log, a store or a path, so both print them inert. Control characters other
than a line break are escaped as ``\\xNN`` (ESC, NUL, CR, DEL, the C1 range; a tab becomes a
space) and lone surrogates become U+FFFD (:func:`printable`), on a terminal and piped alike;
on a terminal the text goes to rich as a ``Text`` object, never as a markup string, so
``[/x]`` or ``[link=...]`` prints as it is and styles come only from ``style``.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import click

from failcode.render._printable import printable

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.console import Console

    from failcode import Failure

__all__ = ["count", "echo", "failure_text", "is_terminal", "printable", "table"]

def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 code``, ``2 codes`` (``plural`` for irregular nouns: ``1 retry``, ``2 retries``)."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def is_terminal(err: bool = False) -> bool:
    """Whether the stream is a terminal (``FORCE_COLOR`` counts as one, as rich does)."""
    if os.environ.get("FORCE_COLOR"):
        return True
    stream = sys.stderr if err else sys.stdout
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


_CONSOLES: dict[bool, Console] = {}


def _console(err: bool) -> Console:
    console = _CONSOLES.get(err)
    if console is None or console.file is not (sys.stderr if err else sys.stdout):
        from rich.console import Console  # noqa: PLC0415 - the CLI only, and only on a terminal

        console = Console(stderr=err, highlight=False, emoji=False)
        _CONSOLES[err] = console
    return console


def echo(text: str = "", *, err: bool = False, style: str | None = None) -> None:
    """Print a line: styled and wrapped on a terminal, as it is otherwise."""
    text = printable(text)
    if is_terminal(err):
        from rich.text import Text  # noqa: PLC0415 - only on a terminal

        _console(err).print(Text(text, style=style or ""))
    else:
        click.echo(text, err=err)


def table(header: Sequence[str], rows: Sequence[Sequence[str]], *, err: bool = False) -> None:
    """A table: rich's on a terminal; aligned columns of plain text otherwise (the header first,
    cells separated by at least two spaces, so ``split()`` reads a row)."""
    header = [printable(str(name)) for name in header]
    rows = [[printable(str(cell)).replace("\n", " ") for cell in row] for row in rows]
    if is_terminal(err):
        from rich.table import Table  # noqa: PLC0415 - only on a terminal
        from rich.text import Text  # noqa: PLC0415

        grid = Table(box=None, header_style="bold", pad_edge=False)
        for name in header:
            grid.add_column(Text(name), overflow="fold")
        for row in rows:
            grid.add_row(*(Text(cell) for cell in row))  # Text: never parsed as markup
        _console(err).print(grid)
        return
    all_rows = [tuple(header), *(tuple(row) for row in rows)]
    widths = [max(len(row[i]) for row in all_rows) for i in range(len(header))]
    for row in all_rows:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
                   .rstrip(), err=err)


def failure_text(failure: Failure, *, decision: Any = None, err: bool = True) -> None:
    """The user rendering of a failure (what failed, why, what to try): a rich panel on a
    terminal, :func:`failcode.render_user`'s text otherwise."""
    from failcode import render_rich, render_user  # noqa: PLC0415 - on demand

    if is_terminal(err):
        _console(err).print(render_rich(failure, decision=decision))
    else:
        click.echo(render_user(failure, decision=decision), err=err, nl=False)
