"""The ``failcode triage`` and ``failcode report`` commands."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from failcode.triage._result import TriageResult

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from failcode.store import Store

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
@click.option("--jobs", "-j", type=click.IntRange(1, 1024), metavar="N",
              help="Triage files in N processes; default: the number of CPU cores. The "
                   "output is the same whatever N (e.g. --jobs 1 for one process).")
@click.option("--include", multiple=True, metavar="GLOB",
              help="Walking folders, read only the files whose path under the folder or "
                   "name matches (repeatable; e.g. --include '*.jsonl').")
@click.option("--exclude", multiple=True, metavar="GLOB",
              help="Walking folders, leave out the files whose path under the folder or name "
                   "matches (repeatable; e.g. --exclude 'archive/*').")
@click.option("--home", "home", is_flag=True,
              help="Also read the logs every supported agent keeps for you, where each "
                   "documents them (~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp, "
                   "~/.copilot/session-state, ~/.openhands/conversations, mini-swe-agent's "
                   "config folder, ./.aider.chat.history.md; CODEX_HOME and the like "
                   "honoured).")
def triage_command(  # noqa: PLR0917 - click passes each option by name
        paths: tuple[Path, ...], as_json: bool, html_file: Path | None, top: int,
        store_url: str | None, jobs: int | None, include: tuple[str, ...],
        exclude: tuple[str, ...], home: bool) -> None:
    """Read agent session logs and report why they fail.

    PATHS are files or directories (walked recursively; files that are no session log are
    skipped and counted); the format of each file is detected from its content. With no
    PATHS, triage runs on a small set of sessions shipped with failcode. With --store, every
    failure and outcome is recorded in the store too (``failcode report --store URL`` renders
    them). Exit status: 0 when every input was read, 2 when any input could not be read or
    has an unknown format (the others are still triaged).
    """
    from failcode.triage._analyze import (  # noqa: PLC0415 - start-up cost
        empty_folder,
        expand,
        skipped_in,
    )
    from failcode.triage._report import Progress, render_summary, sample_paths  # noqa: PLC0415
    from failcode.triage._run import FileResults, default_jobs  # noqa: PLC0415
    from failcode.triage._stream import JsonDocument, Summary  # noqa: PLC0415

    inputs: list[Path | tuple[Path, str]] = list(paths)
    if home:
        inputs += _home_logs()
    elif not paths:
        inputs = list(sample_paths())
    files = expand(inputs, include=include, exclude=exclude)
    # each input's sessions go to the outputs as the input is read, then are let go; only
    # --html keeps them all
    summary = Summary(top)
    held = TriageResult() if html_file is not None else None
    document = JsonDocument(lambda text: click.echo(text, nl=False)) if as_json else None
    with contextlib.ExitStack() as stack:
        recorder = None
        if store_url is not None:
            from failcode.triage._record import Recorder  # noqa: PLC0415

            recorder = Recorder(stack.enter_context(_open(store_url)))
        bar = Progress(sum(_size(path) for path, _ in files),
                       enabled=sys.stderr.isatty() and not as_json)
        results = stack.enter_context(FileResults(
            files, jobs=default_jobs() if jobs is None else jobs, progress=bar.advance))
        with bar:
            for item, sessions in results:
                for session in sessions:
                    summary.add(session)
                    if document is not None:
                        document.session(session)
                    if recorder is not None:
                        recorder.add(session)
                summary.add_input(item)
                if held is not None:
                    held.inputs.append(item)
                    held.sessions.extend(sessions)
        for folder in files.empty:  # a folder named that holds no session log
            item = empty_folder(folder, skipped_in(folder, files.skipped))
            summary.add_input(item)
            if held is not None:
                held.inputs.append(item)
        summary.skipped = len(files.skipped)
        if held is not None:
            held.skipped = list(files.skipped)
        if recorder is not None:
            new, known = recorder.close()
            click.echo(f"recorded {new} new events in {recorder.store.url} ({known} already "
                       "there)", err=True)
    if html_file is not None and held is not None:
        from failcode.triage._html import render_html  # noqa: PLC0415

        html_file.write_text(render_html(held), encoding="utf-8")
    if document is not None:
        document.close(summary.inputs, summary.tables, files.skipped)
    else:
        render_summary(summary, top=top)
    if not summary.ok:
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
        from failcode.triage._stream import JsonDocument  # noqa: PLC0415

        JsonDocument.write_result(result, lambda text: click.echo(text, nl=False))
    else:
        render_summary(result, top=top)


def _home_logs() -> list[Path]:
    """The logs at every agent's default location; none found is an error naming them."""
    from failcode.triage._discover import home_logs  # noqa: PLC0415

    found, looked = home_logs()
    if not found:
        click.echo("error FC-DATA-004: --home found no session log; looked in "
                   + ", ".join(map(str, looked)), err=True)
        sys.exit(2)
    return found


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
