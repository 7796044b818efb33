"""The ``failcode triage`` command."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

__all__ = ["triage_command"]


@click.command("triage")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@click.option("--html", "html_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write a self-contained HTML report to this file.")
@click.option("--top", default=10, show_default=True, type=click.IntRange(1, 1000),
              help="How many signatures the terminal summary lists.")
def triage_command(paths: tuple[Path, ...], as_json: bool, html_file: Path | None,
                   top: int) -> None:
    """Read agent session logs and report why they fail.

    PATHS are files or directories (walked recursively); the format of each file is detected
    from its content. With no PATHS, triage runs on a small set of sessions shipped with
    failcode. Exit status: 0 when every input was read, 2 when any input could not be read
    or has an unknown format (the others are still triaged).
    """
    from failcode.triage._analyze import expand, triage  # noqa: PLC0415 - CLI start-up cost
    from failcode.triage._report import (  # noqa: PLC0415
        Progress,
        render_summary,
        sample_paths,
    )

    inputs: list[Path | tuple[Path, str]] = list(paths) if paths else list(sample_paths())
    total = sum(_size(path) for path, _ in expand(inputs))
    with Progress(total, enabled=sys.stderr.isatty() and not as_json) as progress:
        result = triage(inputs, progress=progress.advance)
    if html_file is not None:
        from failcode.triage._html import render_html  # noqa: PLC0415

        html_file.write_text(render_html(result), encoding="utf-8")
    if as_json:
        click.echo(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        render_summary(result, top=top)
    if not result.ok:
        sys.exit(2)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
