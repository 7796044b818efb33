"""The ``failcode triage`` and ``failcode report`` commands.

Faults never cost the report: a ``--store`` that cannot be opened or fails while recording
(FC-STORE-004 a foreign file, -005 read-only, -006 full, ...) stops only the recording; the
finished report is printed, then the store's error and remedy on stderr, exit 1 (2 when an
input could not be read). An output that cannot be written is one line on stderr naming it
and the reason, never a traceback: ``error: cannot write the HTML report PATH: REASON`` (the
report still goes to stdout), ``error: cannot write to stdout: REASON`` (closed, full, a
closed pipe); exit 1. ``failcode report`` and ``--baseline URL`` open the store read-only:
a URL naming no store is FC-STORE-001.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from failcode.triage._result import TriageResult

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from failcode import Failure
    from failcode.store import Store
    from failcode.triage._record import Recorder, Reporter
    from failcode.triage._result import SessionResult
    from failcode.triage._window import Split, Window
    from failcode.triage.analysis._cache import Cache
    from failcode.triage.analysis._compare import Comparison
    from failcode.triage.report._agents_md import FirstParams
    from failcode.triage.report._stream import Summary

__all__ = ["report_command", "triage_command"]


@click.command("triage", epilog="\b\nExamples:\n  failcode triage\n"
               "  failcode triage runs/ --html report.html\n"
               "  failcode triage runs/ --finding 1\n"
               "  failcode triage runs/ --session django__django-11265\n"
               "  failcode triage runs/new --baseline runs/old --fail-on regressed\n"
               "  failcode triage runs/ --format markdown >> \"$GITHUB_STEP_SUMMARY\"\n"
               "  failcode triage runs/ --format agents-md\n"
               "  failcode triage --home --rank cost\n"
               "  failcode triage --home --since 2026-11-01\n"
               "  failcode triage --home --changed-at AGENTS.md\n"
               "  failcode triage runs/ --fix-file AGENTS.md --apply\n"
               "  failcode triage session.traj.json --json > triage.json\n"
               "  failcode triage runs/ --store sqlite:///failcode.db\n"
               "  failcode triage --home --no-cache\n"
               "  failcode triage runs/ --cache")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON document on stdout (e.g. --json > triage.json).")
@click.option("--format", "output_format",
              type=click.Choice(["text", "markdown", "agents-md"]),
              default="text", show_default=True,
              help="The summary's format: text for a terminal or a log, markdown for a pull "
                   "request or $GITHUB_STEP_SUMMARY, agents-md for instructions to paste in an "
                   "agent's AGENTS.md or CLAUDE.md (e.g. --format agents-md).")
@click.option("--fix-file", "fix_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Show the diff that puts the agents-md instructions into this file, between "
                   "failcode's markers, and change nothing (e.g. --fix-file AGENTS.md).")
@click.option("--apply", "apply", is_flag=True,
              help="With --fix-file, write the file after showing the diff "
                   "(e.g. --fix-file AGENTS.md --apply).")
@click.option("--html", "html_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write a self-contained HTML report to this file "
                   "(e.g. --html report.html).")
@click.option("--rank", "rank", type=click.Choice(["steps", "cost", "tokens", "time"]),
              default="steps", show_default=True,
              help="The order of what to fix first: steps (the steps each finding took), cost "
                   "(US dollars of the model turns its failures cost, where the log records "
                   "tokens), tokens, time (to the next success) (e.g. --rank cost).")
@click.option("--top", default=10, show_default=True, type=click.IntRange(1, 1000),
              help="How many findings the summary lists (e.g. --top 20).")
@click.option("--verbose", "-v", is_flag=True,
              help="List every input in the summary, not only those that had problems.")
@click.option("--finding", "finding_rank", type=click.IntRange(1), metavar="N",
              help="Show every occurrence of the finding ranked N in \"What to fix first\" "
                   "(e.g. --finding 1).")
@click.option("--signature", metavar="SIG",
              help="Show every occurrence of one signature (e.g. --signature "
                   "dependency_error:python.run:missing_module:none:83f5d36f).")
@click.option("--session", "session_name", metavar="NAME",
              help="Show one session's timeline: its name, or the path of a file holding "
                   "one session (e.g. --session django__django-11265).")
@click.option("--baseline", multiple=True, metavar="PATH|URL",
              help="Compare with an earlier run: its logs (repeatable) or a store URL "
                   "(e.g. --baseline runs/last-week or --baseline sqlite:///old.db).")
@click.option("--since", metavar="DATE",
              help="Only the sessions that started at or after DATE (YYYY-MM-DD or an ISO "
                   "8601 time, UTC without a zone; e.g. --since 2026-11-01).")
@click.option("--until", metavar="DATE",
              help="Only the sessions that started before DATE (e.g. --until 2026-12-01).")
@click.option("--changed-at", "changed_at", metavar="DATE|FILE",
              help="Compare the sessions before and after a change: a date, or an "
                   "instruction file whose last commit (else modification) is the time "
                   "(e.g. --changed-at AGENTS.md).")
@click.option("--fail-on", type=click.Choice(["new", "regressed", "any"]),
              help="Exit 1 when the run has findings of that class: new (not in the "
                   "baseline), regressed (new, or significantly more frequent), any.")
@click.option("--store", "store_url", metavar="URL",
              help="Also record every failure and outcome as events in this store, each "
                   "once however often the same input is triaged "
                   "(e.g. --store sqlite:///failcode.db).")
@click.option("--report-to", "report_url", metavar="URL",
              help="Also send every failure and outcome to a failcode service (failcode "
                   "serve) at URL, with the ingest key in FAILCODE_KEY; each once however "
                   "often the same input is triaged (e.g. --report-to http://failcode:8321).")
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
                   "~/.copilot/session-state, ~/.qwen/projects, Cline's and Roo Code's "
                   "task folders, ~/.local/share/opencode/opencode.db, "
                   "~/.openhands/conversations, mini-swe-agent's config folder, "
                   "./.aider.chat.history.md; CODEX_HOME and the like honoured).")
@click.option("--cache/--no-cache", "cache", default=None,
              help="Take the inputs unchanged since an earlier run from the triage cache "
                   "(the user's cache folder, or FAILCODE_CACHE_DIR) and keep the others' "
                   "results in it; the report is the same. Default: on with --home, off "
                   "otherwise (e.g. --no-cache).")
def triage_command(  # noqa: PLR0917 - click passes each option by name
        paths: tuple[Path, ...], as_json: bool, output_format: str, html_file: Path | None,
        top: int, verbose: bool, finding_rank: int | None, signature: str | None,
        session_name: str | None, baseline: tuple[str, ...], fail_on: str | None,
        store_url: str | None, report_url: str | None, jobs: int | None,
        include: tuple[str, ...], exclude: tuple[str, ...], home: bool,
        cache: bool | None, fix_file: Path | None = None, apply: bool = False,
        rank: str = "steps", since: str | None = None, until: str | None = None,
        changed_at: str | None = None) -> None:
    """Read agent session logs and report why they fail, and what to fix first.

    PATHS are files or directories (walked recursively; files that are no session log are
    skipped and counted), or ``-`` for standard input; the format of each file is detected
    from its content, and a file given twice is read once. With no PATHS, triage runs on a
    small set of sessions shipped with failcode (a demo, never sent: --report-to needs PATHS
    or --home). With --store, every failure and outcome is recorded in the store too
    (``failcode report --store URL`` renders them). Exit status: 0 when every input was
    read; 1 when --fail-on's condition holds; 2 when any input could not be read or has an
    unknown format (the others are still triaged).
    """
    from failcode.store._cli import stdout_guard  # noqa: PLC0415 - start-up cost

    problems: list[str] = []
    with stdout_guard(problems):
        _triage(paths, as_json=as_json, output_format=output_format, html_file=html_file,
                top=top, verbose=verbose, finding_rank=finding_rank, signature=signature,
                session_name=session_name, baseline=baseline, fail_on=fail_on,
                store_url=store_url, report_url=report_url, jobs=jobs, include=include,
                exclude=exclude, home=home, problems=problems,
                cache=home if cache is None else cache, fix_file=fix_file, apply=apply,
                rank=rank, window=_window(since, until), split=_split(changed_at, baseline))


def _triage(
        paths: tuple[Path, ...], *, as_json: bool, output_format: str, html_file: Path | None,
        top: int, verbose: bool, finding_rank: int | None, signature: str | None,
        session_name: str | None, baseline: tuple[str, ...], fail_on: str | None,
        store_url: str | None, jobs: int | None, include: tuple[str, ...],
        exclude: tuple[str, ...], home: bool, problems: list[str],
        report_url: str | None = None, cache: bool = False, fix_file: Path | None = None,
        apply: bool = False, rank: str = "steps", window: Window | None = None,
        split: Split | None = None) -> None:
    from failcode.store._cli import write_file  # noqa: PLC0415 - start-up cost
    from failcode.triage.report._terminal import sample_paths  # noqa: PLC0415 - start-up cost

    if fail_on is not None and not baseline and split is None and fail_on != "any":
        raise click.UsageError(f"--fail-on {fail_on} compares with a run: give --baseline "
                               "(or --changed-at)")
    if report_url is not None and not paths and not home:
        raise click.UsageError("--report-to sends to a team's service: name the PATHS to "
                               "triage, or --home; the sessions shipped with failcode are a "
                               "demo and are never sent")
    if apply and fix_file is None:
        raise click.UsageError("--apply writes the file of --fix-file: give --fix-file PATH")
    clash = [name for name, given in (
        ("--json", as_json), ("--format markdown", output_format == "markdown"),
        ("--finding", finding_rank is not None), ("--signature", signature is not None),
        ("--session", session_name is not None)) if given]
    if fix_file is not None and clash:
        raise click.UsageError(f"--fix-file shows a diff on stdout: leave out {clash[0]}")
    inputs: list[Path | tuple[Path, str]] = [_stdin() if str(p) == "-" else p for p in paths]
    if home:
        inputs += _home_logs()
    elif not paths:
        inputs = list(sample_paths())
    earlier = _baseline(baseline, top, jobs) if baseline else None
    run = _Run(top, keep_all=finding_rank is not None or signature is not None,
               session_name=session_name, jsonl=as_json, html=html_file is not None,
               problems=problems,
               agents_md=fix_file is not None or output_format == "agents-md")
    run.summary.tables.findings.rank_by = rank
    run.window, run.split = window, split
    run.read(inputs, include=include, exclude=exclude, jobs=jobs, store_url=store_url,
             report_url=report_url, cache=cache)
    if run.left_out:
        click.echo(f"failcode triage: {run.left_out:,} sessions left out: started outside "
                   "--since/--until, or their logs give no time", err=True)
    comparison = None
    if earlier is not None:
        from failcode.triage.analysis._compare import compare  # noqa: PLC0415

        comparison = compare(run.summary, earlier)
    elif split is not None:
        comparison = run.compare_split(split)
    if html_file is not None and run.held is not None:
        from failcode.triage.report._html import render_html  # noqa: PLC0415

        failed = write_file(html_file, render_html(run.held, top=top, comparison=comparison,
                                                   rank=rank), "the HTML report")
        if failed is not None:
            problems.append(failed)
    _output(run, as_json=as_json, output_format=output_format, top=top, verbose=verbose,
            finding_rank=finding_rank, signature=signature, session_name=session_name,
            comparison=comparison, fix_file=fix_file, apply=apply)
    if sys.stdout is not None:
        sys.stdout.flush()
    for line in problems:
        click.echo(line, err=True)
    if not run.summary.ok or run.fix_failed:
        sys.exit(2)
    if problems:
        sys.exit(1)
    if fail_on is not None and (comparison.gate(fail_on) if comparison is not None
                                else bool(run.summary.failures)):
        click.echo(f"failcode triage: --fail-on {fail_on}: the run has such findings", err=True)
        sys.exit(1)


class _Run:
    """One triage run: each input's sessions go to the outputs as the input is read, then are
    let go; only --html (and --session's matches) keep them."""

    def __init__(self, top: int, *, keep_all: bool = False, session_name: str | None = None,
                 jsonl: bool = False, html: bool = False,
                 problems: list[str] | None = None, agents_md: bool = False) -> None:
        from failcode.triage.report._stream import JsonDocument, Summary  # noqa: PLC0415

        self.summary = Summary(top, keep_all=keep_all)
        self.held = TriageResult() if html else None
        self.document = JsonDocument(lambda text: click.echo(text, nl=False)) if jsonl else None
        self.session_name = session_name
        self.matches: list[SessionResult] = []
        self.skipped: list[str] = []
        self.problems = [] if problems is None else problems
        """Lines printed on stderr after the report (a store's failure), exit 1."""
        self.params = _first_params(self.summary) if agents_md else None
        """Each finding's first params, for --format agents-md and --fix-file."""
        self.fix_failed = False
        """--fix-file's file is unreadable or its markers are broken: exit 2."""
        self.window: Window | None = None
        """--since/--until: the sessions kept (:mod:`failcode.triage._window`)."""
        self.split: Split | None = None
        """--changed-at: the time the sessions are compared before and after."""
        self.left_out = 0
        """Sessions --since/--until left out."""
        self.sides: tuple[Summary, Summary] | None = None
        """--changed-at: the sessions before and after its time."""

    def _kept(self, sessions: list[SessionResult]) -> list[SessionResult]:
        """The sessions the window keeps (all without one); each counted into the side of
        --changed-at it falls on."""
        if self.window is not None:
            kept = [s for s in sessions if self.window.keeps(s)]
            self.left_out += len(sessions) - len(kept)
            sessions = kept
        if self.split is not None:
            if self.sides is None:
                from failcode.triage.report._stream import Summary  # noqa: PLC0415

                self.sides = (Summary(self.summary.top), Summary(self.summary.top))
            for session in sessions:
                if session.started is not None:
                    self.sides[session.started >= self.split.at].add(session)
        return sessions

    def compare_split(self, split: Split) -> Comparison:
        """The findings before --changed-at's time compared with those after."""
        import dataclasses  # noqa: PLC0415

        from failcode.triage.analysis._compare import compare  # noqa: PLC0415
        from failcode.triage.report._stream import Summary  # noqa: PLC0415

        before, after = self.sides or (Summary(self.summary.top), Summary(self.summary.top))
        return dataclasses.replace(compare(after, before), title=split.title,
                                   changed_at=split.at)

    def read(self, inputs: list[Path | tuple[Path, str]], *,  # noqa: PLR0915 - one pass
             include: tuple[str, ...] = (),
             exclude: tuple[str, ...] = (), jobs: int | None = None,
             store_url: str | None = None, report_url: str | None = None,
             cache: bool = False) -> None:
        from failcode.store._cli import printable  # noqa: PLC0415
        from failcode.triage.analysis._analyze import (  # noqa: PLC0415 - start-up cost
            empty_folder,
            expand,
            skipped_in,
        )
        from failcode.triage.analysis._run import FileResults, default_jobs  # noqa: PLC0415
        from failcode.triage.report._terminal import Progress  # noqa: PLC0415

        files = expand(inputs, include=include, exclude=exclude)
        summary, held = self.summary, self.held
        with contextlib.ExitStack() as stack:
            recorder = self._recorder(store_url, stack) if store_url is not None else None
            reporter = self._reporter(report_url) if report_url is not None else None
            bar = Progress(sum(_size(path) for path, _ in files),
                           enabled=sys.stderr.isatty() and self.document is None)
            store = _cache() if cache else None
            results = stack.enter_context(FileResults(
                files, jobs=default_jobs() if jobs is None else jobs, progress=bar.advance,
                cache=store))
            with bar:
                for item, read in results:
                    sessions = self._kept(read)
                    for session in sessions:
                        summary.add(session)
                        if self.params is not None:
                            self.params.add(session)
                        if self.document is not None:
                            self.document.session(session)
                        if recorder is not None:
                            recorder.add(session)
                        if reporter is not None:
                            reporter.add(session)
                        if self.session_name is not None and self.session_name in (
                                session.session, session.path):
                            self.matches.append(session)
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
            self.skipped = list(files.skipped)
            if store is not None:
                summary.cached = results.cached
                summary.resumed = results.resumed
            if held is not None:
                held.skipped = list(files.skipped)
                held.cached_inputs = summary.cached
                held.resumed_inputs = summary.resumed
            if recorder is not None:
                new, known = recorder.close()
                if recorder.failure is None:
                    click.echo(f"recorded {new} new events in {printable(recorder.store.url)} "
                               f"({known} already there)", err=True)
                else:
                    self._store_failed(recorder.failure, new)

            if reporter is not None:
                sent, failed = reporter.close()
                if sent is not None:
                    click.echo(sent, err=True)
                self.problems.extend(failed)

    def _reporter(self, url: str) -> Reporter | None:
        """The uploader to the service at ``url``; None (the problem kept for after the
        report) without a key or with a malformed URL."""
        from failcode.triage._record import Reporter  # noqa: PLC0415 - start-up cost

        key = os.environ.get("FAILCODE_KEY", "").strip()
        if not key:
            self.problems.append(f"--report-to {url}: set FAILCODE_KEY to an ingest key of "
                                 "the service (failcode token create --scope ingest); nothing "
                                 "was sent")
            return None
        try:
            return Reporter(url, key)
        except ValueError as exc:
            self.problems.append(f"--report-to: {exc}; nothing was sent")
            return None

    def _recorder(self, url: str, stack: contextlib.ExitStack) -> Recorder | None:
        """The recorder into the store at ``url``; None (the failure kept for after the
        report) when it cannot be opened."""
        from failcode.store import StoreError  # noqa: PLC0415 - start-up cost
        from failcode.store._cli import open_configured  # noqa: PLC0415
        from failcode.triage._record import Recorder  # noqa: PLC0415

        try:
            store = open_configured(url)
        except StoreError as exc:
            self._store_failed(exc.failure, None)
            return None
        stack.callback(self._close, store)
        return Recorder(store)

    def _close(self, store: Store) -> None:
        from failcode.store import StoreError  # noqa: PLC0415 - start-up cost

        try:
            store.close()
        except StoreError as exc:
            self._store_failed(exc.failure, None)

    def _store_failed(self, failure: Failure, recorded: int | None) -> None:
        from failcode.store._cli import failure_lines  # noqa: PLC0415

        self.problems.extend(failure_lines(failure))
        if recorded is not None:
            self.problems.append(f"  {recorded} new events were recorded before it failed; "
                                 "triage again with --store to record the rest (each once)")


def _first_params(summary: Summary) -> FirstParams:
    from failcode.triage.report._agents_md import FirstParams  # noqa: PLC0415 - start-up cost

    return FirstParams(summary.tables.findings)


def _fix(run: _Run, top: int, fix_file: Path | None, apply: bool) -> None:
    """--format agents-md: the block on stdout; --fix-file: the diff, then (--apply) the
    write; a broken file is one line on stderr, then exit 2 (1 when it cannot be written)."""
    from failcode.triage.report import _agents_md  # noqa: PLC0415 - start-up cost

    assert run.params is not None  # _Run was told agents_md
    block = _agents_md.block_lines(run.summary.tables.findings.ranked(), run.params, top=top)
    if fix_file is None:
        click.echo("\n".join(block))
        return
    try:
        fix = _agents_md.plan_fix(fix_file, block)
        click.echo(fix.diff, nl=False)
        if apply:
            fix.write()
    except _agents_md.FixFileError as exc:
        run.problems.append(f"error: {exc}")
        run.fix_failed = exc.status == 2  # unreadable, broken markers (1: unwritable)
        return
    click.echo(f"no change: {fix.label} already holds this block" if not fix.changed
               else f"wrote {fix.label}" if apply
               else f"{fix.label} not written: add --apply to write it", err=True)


def _cache() -> Cache:
    """The triage cache (``failcode.triage.analysis._cache``)."""
    from failcode.triage.analysis._cache import Cache  # noqa: PLC0415 - only with a cache

    return Cache()


def _window(since: str | None, until: str | None) -> Window | None:
    """--since and --until (a usage error for a value that is no date)."""
    if since is None and until is None:
        return None
    from failcode.triage._window import Window, parse_time  # noqa: PLC0415

    try:
        window = Window(None if since is None else parse_time(since),
                        None if until is None else parse_time(until))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--since/--until") from None
    if window.since is not None and window.until is not None and window.since >= window.until:
        raise click.BadParameter(f"--since {since} is not before --until {until}",
                                 param_hint="--since/--until")
    return window


def _split(changed_at: str | None, baseline: tuple[str, ...]) -> Split | None:
    """--changed-at (a usage error beside --baseline, or for a value neither a date nor a
    file)."""
    if changed_at is None:
        return None
    if baseline:
        raise click.UsageError("--changed-at compares the run's sessions before and after a "
                               "change; --baseline compares with another run: give one")
    from failcode.triage._window import split_at  # noqa: PLC0415

    try:
        return split_at(changed_at)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--changed-at") from None


def _baseline(baseline: tuple[str, ...], top: int, jobs: int | None) -> Summary:
    """The baseline run's summary, from its logs or a store (read before the new run, so the
    new run's outputs stream as usual)."""
    from failcode.triage.report._stream import Summary  # noqa: PLC0415

    if len(baseline) == 1 and "://" in baseline[0]:
        from failcode.triage._record import result_from_store  # noqa: PLC0415

        with _open(baseline[0], read_only=True) as store:
            return Summary.of(result_from_store(store, label=store.url), top=top)
    earlier = _Run(top)
    earlier.read([Path(path) for path in baseline], jobs=jobs)
    for item in earlier.summary.inputs:
        if item.error_code:
            click.echo(f"baseline: error {item.error_code}: {item.error_message}", err=True)
    return earlier.summary


def _output(run: _Run, *, as_json: bool, output_format: str, top: int, verbose: bool,
            finding_rank: int | None, signature: str | None, session_name: str | None,
            comparison: Comparison | None, fix_file: Path | None = None,
            apply: bool = False) -> None:
    """What stdout shows: a drill-down, the JSON document, or the summary."""
    from failcode.store._cli import require_stdout  # noqa: PLC0415
    from failcode.triage.report._terminal import (  # noqa: PLC0415
        Out,
        render_comparison,
        render_summary,
    )

    require_stdout()
    summary = run.summary
    findings = summary.tables.findings
    if finding_rank is not None or signature is not None:
        from failcode.triage.report._drill import render_finding  # noqa: PLC0415

        ranked = findings.ranked()
        chosen = (findings.find(signature) if signature is not None
                  else ranked[finding_rank - 1] if finding_rank is not None
                  and finding_rank <= len(ranked) else None)
        if chosen is None:
            what = (f"signature {signature}" if signature is not None
                    else f"finding {finding_rank} (the run has {len(ranked)})")
            raise click.UsageError(f"no {what} in this run")
        rank = next(i for i, finding in enumerate(ranked, 1) if finding is chosen)
        render_finding(chosen, rank, Out(sys.stdout), signature)
        return
    if session_name is not None:
        from failcode.triage.report._drill import render_session  # noqa: PLC0415

        if not run.matches:
            raise click.UsageError(f"no session named {session_name!r} (or file holding one) "
                                   "in this run")
        for session in run.matches:
            render_session(session, findings, Out(sys.stdout))
        return
    if as_json and run.document is not None:
        extra: dict[str, object] = {}
        if summary.cached is not None:
            extra["cached_inputs"] = summary.cached
            extra["resumed_inputs"] = summary.resumed or 0
        if comparison is not None:
            extra["comparison"] = comparison.to_dict()
        run.document.close(summary.inputs, summary.tables, run.skipped, extra)
        return
    if fix_file is not None or output_format == "agents-md":
        _fix(run, top, fix_file, apply)
        return
    if output_format == "markdown":
        from failcode.triage.report._markdown import render_markdown  # noqa: PLC0415

        click.echo(render_markdown(summary, top=top, comparison=comparison))
        return
    render_summary(summary, top=top, verbose=verbose)
    if comparison is not None:
        render_comparison(comparison, top=top)


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
              help="How many findings the summary lists (e.g. --top 20).")
def report_command(store_url: str | None, as_json: bool, html_file: Path | None,
                   top: int) -> None:
    """Render the triage report of every failure and outcome recorded in a store.

    The report has triage's shape (signatures, blame, loops per session), built from the
    events ``failcode triage --store`` recorded, and any other failure and outcome events in
    the store; sessions in which nothing was found leave no event and are not listed.
    """
    from failcode.store._cli import stdout_guard  # noqa: PLC0415
    from failcode.triage._record import result_from_store  # noqa: PLC0415

    with _open(store_url, read_only=True) as store:
        result = result_from_store(store, label=store.url)
    problems: list[str] = []
    with stdout_guard(problems):
        _render(result, as_json=as_json, html_file=html_file, top=top, problems=problems)
    for line in problems:
        click.echo(line, err=True)
    if problems:
        sys.exit(1)


def _open(url: str | None, *, read_only: bool = False) -> AbstractContextManager[Store]:
    """The store as ``failcode store`` opens it (the URL, else $FAILCODE_STORE, else
    failcode.toml's ``[store] url``, else the default); a store that cannot be opened prints
    its FC-STORE code, message and remedy and exits with the code's status."""
    from failcode.store._cli import _opened  # noqa: PLC0415 - the same rules as `store`

    return _opened(url, read_only=read_only)


def _render(result: TriageResult, *, as_json: bool, html_file: Path | None,
            top: int, problems: list[str]) -> None:
    from failcode.store._cli import require_stdout, write_file  # noqa: PLC0415
    from failcode.triage.report._terminal import render_summary  # noqa: PLC0415

    if html_file is not None:
        from failcode.triage.report._html import render_html  # noqa: PLC0415

        failed = write_file(html_file, render_html(result, top=top), "the HTML report")
        if failed is not None:
            problems.append(failed)
    require_stdout()
    if as_json:
        from failcode.triage.report._stream import JsonDocument  # noqa: PLC0415

        JsonDocument.write_result(result, lambda text: click.echo(text, nl=False))
    else:
        render_summary(result, top=top)


def _stdin() -> tuple[Path, str]:
    """``-``: standard input, saved to a temporary file (removed at exit) and labelled
    ``<stdin>``; its format is detected like any file's."""
    import atexit  # noqa: PLC0415 - only with `-`
    import shutil  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    with tempfile.NamedTemporaryFile(prefix="failcode-stdin-", delete=False) as handle:
        shutil.copyfileobj(sys.stdin.buffer, handle, 1024 * 1024)
    path = Path(handle.name)
    atexit.register(path.unlink, missing_ok=True)
    return path, "<stdin>"


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
