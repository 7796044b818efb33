"""The ``failcode triage`` and ``failcode report`` commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from failcode.store import Store
    from failcode.triage._result import TriageResult

__all__ = ["report_command", "triage_command"]


@click.command("triage", epilog="\b\nExamples:\n  failcode triage\n"
               "  failcode triage runs/ --html report.html\n"
               "  failcode triage session.traj.json --json > triage.json\n"
               "  failcode triage runs/ --store sqlite:///failcode.db")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON document on stdout (e.g. --json > triage.json).")
@click.option("--html", "html_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write a self-contained HTML report to this file "
                   "(e.g. --html report.html).")
@click.option("--top", default=10, show_default=True, type=click.IntRange(1, 1000),
              help="How many signatures the terminal summary lists (e.g. --top 20).")
@click.option("--store", "store_url", metavar="URL",
              help="Also record every failure and outcome as events in this store, each "
                   "once however often the same input is triaged "
                   "(e.g. --store sqlite:///failcode.db).")
def triage_command(paths: tuple[Path, ...], as_json: bool, html_file: Path | None,
                   top: int, store_url: str | None) -> None:
    """Read agent session logs and report why they fail.

    PATHS are files or directories (walked recursively); the format of each file is detected
    from its content. With no PATHS, triage runs on a small set of sessions shipped with
    failcode. With --store, every failure and outcome is recorded in the store too
    (``failcode report --store URL`` renders them). Exit status: 0 when every input was
    read, 2 when any input could not be read or has an unknown format (the others are still
    triaged).
    """
    from failcode.triage._analyze import expand, triage  # noqa: PLC0415 - CLI start-up cost
    from failcode.triage._report import Progress, sample_paths  # noqa: PLC0415

    inputs: list[Path | tuple[Path, str]] = list(paths) if paths else list(sample_paths())
    total = sum(_size(path) for path, _ in expand(inputs))
    with Progress(total, enabled=sys.stderr.isatty() and not as_json) as progress:
        result = triage(inputs, progress=progress.advance)
    if store_url is not None:
        from failcode.triage._record import record  # noqa: PLC0415

        with _open(store_url) as store:
            new, known = record(result, store)
        click.echo(f"recorded {new} new events in {store.url} ({known} already there)",
                   err=True)
    _render(result, as_json=as_json, html_file=html_file, top=top)
    if not result.ok:
        sys.exit(2)


@click.command("report", epilog="\b\nExamples:\n"
               "  failcode report --store sqlite:///failcode.db\n"
               "  failcode report --store sqlite:///failcode.db --json > report.json\n"
               "  failcode report --store postgresql://failcode@db/failcode --html report.html")
@click.option("--store", "store_url", metavar="URL",
              help="The store to read (e.g. --store sqlite:///failcode.db); default "
                   "$FAILCODE_STORE, else the store in the user data directory.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON document on stdout, shaped as triage --json "
                   "(e.g. --json > report.json).")
@click.option("--html", "html_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write a self-contained HTML report to this file "
                   "(e.g. --html report.html).")
@click.option("--top", default=10, show_default=True, type=click.IntRange(1, 1000),
              help="How many signatures the terminal summary lists (e.g. --top 20).")
def report_command(store_url: str | None, as_json: bool, html_file: Path | None,
                   top: int) -> None:
    """Render the triage report of every failure and outcome recorded in a store.

    The report has triage's shape (signatures, blame, loops per session), built from the
    events ``failcode triage --store`` recorded, and any other failure and outcome events in
    the store; sessions in which nothing was found leave no event and are not listed.
    """
    from failcode.triage._record import result_from_store  # noqa: PLC0415

    with _open(store_url) as store:
        result = result_from_store(store, label=store.url)
    _render(result, as_json=as_json, html_file=html_file, top=top)


def _open(url: str | None) -> AbstractContextManager[Store]:
    """The store as ``failcode store`` opens it (the URL, else $FAILCODE_STORE, else
    failcode.toml's ``[store] url``, else the default); a store that cannot be opened prints
    its FC-STORE code, message and remedy and exits with the code's status."""
    from failcode.store._cli import _opened  # noqa: PLC0415 - the same rules as `store`

    return _opened(url)


def _render(result: TriageResult, *, as_json: bool, html_file: Path | None,
            top: int) -> None:
    from failcode.triage._report import render_summary  # noqa: PLC0415

    if html_file is not None:
        from failcode.triage._html import render_html  # noqa: PLC0415

        html_file.write_text(render_html(result), encoding="utf-8")
    if as_json:
        click.echo(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        render_summary(result, top=top)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
