"""The terminal summary and the progress bar (rich, imported only on a terminal).

Rule (the terminal is not an attack surface): every value that comes from a log, a store or a
path (session names, paths, formats, statuses, commands, messages, signatures, error texts) is
printed through :func:`safe`: redacted (a secret a reader let through never reaches the
terminal, the Markdown or the HTML), C0 and C1 control characters (ESC, NUL, DEL, CR...) are escaped
as ``\\xNN`` (as ``--json`` escapes them), a line break or a tab becomes a space (a row is one
line) and a lone surrogate (an undecodable byte of a file name) becomes U+FFFD, so nothing
printed can move the cursor, retitle the window, hide text or fail to encode. The summary is
written as plain text (never through rich's markup), so ``[/x]`` or ``[link=...]`` in a path
prints as it is. The drill-downs (:mod:`~failcode.triage.report._drill`), the Markdown summary
and the HTML report apply the same function before their own escaping.
"""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from failcode import redact
from failcode.render._printable import printable
from failcode.triage._events import END_STATUSES
from failcode.triage._findings import RANK_WORDS, suggested_words
from failcode.triage.readers._unread import UNREAD_FORMATS

if TYPE_CHECKING:
    from types import TracebackType

    from failcode.triage._result import Breakdown, TriageResult
    from failcode.triage.analysis._compare import Comparison
    from failcode.triage.report._stream import Summary

__all__ = ["Out", "Progress", "plural", "render_comparison", "render_summary", "safe",
           "sample_paths"]


def sample_paths() -> list[tuple[Path, str]]:
    """The sessions shipped with failcode (``failcode/triage/data``), labelled
    ``sample/<name>``, for a first look."""
    from importlib import resources  # noqa: PLC0415 - only with no PATHS: start-up cost

    root = resources.files("failcode.triage") / "data"
    return sorted((Path(str(item)), f"sample/{item.name}") for item in root.iterdir()
                  if item.is_file() and not item.name.startswith((".", "_")))


class Progress:
    """A byte-count progress bar on stderr, shown only when ``enabled`` (a terminal)."""

    def __init__(self, total: int, *, enabled: bool) -> None:
        self._total = total
        self._enabled = enabled and total > 0
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Progress:
        if self._enabled:
            from rich.console import Console  # noqa: PLC0415 - only on a terminal
            from rich.progress import (  # noqa: PLC0415
                BarColumn,
                DownloadColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as Bar  # noqa: PLC0415

            self._bar = Bar("triage", BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                            console=Console(stderr=True), transient=True)
            self._bar.__enter__()
            self._task = self._bar.add_task("triage", total=self._total)
        return self

    def advance(self, count: int) -> None:
        """Count ``count`` more bytes read."""
        if self._bar is not None:
            self._bar.advance(self._task, count)

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.__exit__(kind, value, tb)




def safe(text: object) -> str:
    """A value from a log or a path, printable and redacted: every secret
    :func:`failcode.redact` recognises replaced (whichever reader let it through), then
    :func:`~failcode.render._printable.printable` on one line (control characters as ``\\xNN``,
    a line break or tab as a space, a lone surrogate as U+FFFD)."""
    flat = str(text)
    if not flat.isascii():
        flat = printable(flat)  # one U+FFFD per surrogate, before redact's decoding
    return printable(redact(flat), one_line=True)


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count:,} {word if count == 1 else many or word + 's'}"


def _bar(count: int, largest: int, width: int = 24) -> str:
    filled = max(1, round(width * count / largest)) if count else 0
    return "#" * filled


class Out:
    """Lines to a file: on a terminal, cut to its width with an ellipsis and headings in bold;
    piped, plain text, one row per line however long (never wrapped, no box drawing)."""

    def __init__(self, file: Any) -> None:
        self.file = file
        self.tty = bool(getattr(file, "isatty", lambda: False)())
        self.width = shutil.get_terminal_size((80, 24)).columns if self.tty else 0

    def line(self, text: str = "") -> None:
        if self.width and len(text) > self.width:
            text = text[: self.width - 1] + "…"
        self.file.write(text + "\n")

    def heading(self, text: str) -> None:
        self.line()
        self.line(f"\x1b[1m{text}\x1b[0m" if self.tty else text)


def _location(path: str, session: str, step: int | None) -> str:
    where = f"{safe(path)}"
    if session and session != Path(path).stem:
        where += f", session {safe(session)}"
    return where + (f", step {step}" if step is not None else "")


def render_summary(result: TriageResult | Summary, *, top: int = 10, file: Any = None,
                   verbose: bool = False) -> None:
    """Print the summary: totals, what to fix first, how sessions ended, who acts, loops,
    outcomes, then the inputs that had problems (every input with ``verbose``).

    ``result`` is a whole result, or the :class:`~failcode.triage.report._stream.Summary` a streamed
    run added its sessions to (built with at least ``top``). Empty sections are left out.
    """
    from failcode.triage.report._stream import Summary  # noqa: PLC0415

    summary = result if isinstance(result, Summary) else Summary.of(result, top=top)
    out = Out(file or sys.stdout)
    failed = sum(1 for item in summary.inputs if item.error_code)
    read = len(summary.inputs) - failed
    skipped = (f"{summary.skipped:,} skipped (not session logs)" if summary.skipped
               else "0 skipped")
    unread = sum(1 for item in summary.inputs
                 if item.error_code == "FC-DATA-002" and item.format in UNREAD_FORMATS)
    later = f" ({unread:,} in formats not read yet)" if unread else ""
    resumed = f", {summary.resumed:,} resumed" if summary.resumed else ""
    cached = "" if summary.cached is None else f" ({summary.cached:,} from the cache{resumed})"
    out.line(f"failcode triage: {plural(read, 'input')} read{cached}, {skipped}, "
             f"{failed:,} failed{later}")
    out.line(f"{plural(summary.sessions, 'session')}, {plural(summary.steps, 'step')}, "
             f"{plural(summary.failures, 'failing step')} in "
             f"{plural(summary.failing_sessions, 'session')}")
    _fix_first(out, summary, top)
    _ended(out, summary)
    _trials(out, summary)
    _breakdown(out, "By model", summary.by_model)
    _breakdown(out, "By agent version", summary.by_agent)
    _regressions(out, summary)
    _blame(out, summary)
    _loops(out, summary, top)
    _outcomes(out, summary)
    _inputs(out, summary, verbose=verbose)


def _fix_first(out: Out, summary: Summary, top: int) -> None:
    findings = summary.tables.findings.ranked()
    if not findings:
        return
    shown = findings[:top]
    order = RANK_WORDS[summary.tables.findings.rank_by]
    out.heading(f"What to fix first ({len(shown)} of {plural(len(findings), 'finding')}, "
                f"{order})")
    for rank, finding in enumerate(shown, 1):
        variants = f", {finding.variants} variants" if finding.variants > 1 else ""
        out.line(f"{rank:>2}. {safe(finding.message)}")
        out.line(f"    {safe(finding.code)} · cost {plural(finding.cost, 'step')} · "
                 f"{plural(finding.count, 'failure')} in "
                 f"{plural(finding.sessions, 'session')}{variants}")
        if spent := finding.spent():
            out.line(f"    spent: {spent}")
        fix = f" · fix: {safe(finding.remedy)}" if finding.remedy else ""
        who = f"    who acts: {finding.who}"
        if out.width and len(who) + len(fix) > out.width:  # the fix gets a line of its own
            out.line(who)
            out.line(f"    fix: {safe(finding.remedy)}")
        else:
            out.line(who + fix)
        if finding.suggested is not None:
            out.line(f"    {safe(suggested_words(finding.suggested))}")
        example = finding.examples[0]
        where = _location(example.path, example.session, example.step)
        if out.width and len(where) + 9 > out.width:  # keep the file's name and the step
            keep = max(10, out.width - 10)
            where = "…" + where[-keep:]
        out.line(f"    e.g. {where}")
    if len(findings) > len(shown):
        out.line(f"    …and {plural(len(findings) - len(shown), 'more finding')} "
                 "(--top N lists more; --finding N shows one)")


def _ended(out: Out, summary: Summary) -> None:
    if not summary.ended:
        return
    order = {status: index for index, status in enumerate(END_STATUSES)}
    counts = sorted(summary.ended.items(), key=lambda item: (order.get(item[0], 99), item[0]))
    out.heading("How sessions ended")
    out.line("  " + ", ".join(f"{count:,} {safe(status)}" for status, count in counts))
    verdicts = summary.verdicts()
    if verdicts:
        out.line("  verifier: " + ", ".join(f"{n:,} {verdict}" for verdict, n in verdicts.items()))


_TRIAL_WIDTH: Final = 36
"""The widest trial name the trials' table shows whole (longer ones end in an ellipsis)."""


def _trials(out: Out, summary: Summary) -> None:
    """One line per graded trial: its verdict, how the agent stopped, its failing steps."""
    if not summary.trials:
        return
    out.heading("Trials (graded by their verifier; failed first)")
    trials = summary.trials_in_order()
    width = min(_TRIAL_WIDTH, max(len(trial.session) for trial in trials))
    graded = max(len("verdict"), *(len(trial.verdict_text) for trial in trials))
    ended = max(len("ended"), *(len(trial.status) for trial in trials))
    out.line(f"  {'trial':<{width}}  {'verdict':<{graded}}  {'ended':<{ended}}  failing steps")
    for trial in trials:
        name = safe(trial.session)
        if len(name) > width:
            name = name[: width - 1] + "…"
        code = f"  {safe(trial.code)}" if trial.code else ""
        out.line(f"  {name:<{width}}  {trial.verdict_text:<{graded}}  "
                 f"{safe(trial.status):<{ended}}  {trial.failures:>5,}{code}")


def _breakdown(out: Out, title: str, table: dict[str, Breakdown]) -> None:
    """Sessions, sessions with failures and failures per model or agent version, what the
    failures cost where the log records tokens, and what the sessions cost where the log
    records their total (sessions that record no model or version are not counted here)."""
    if not table:
        return
    out.heading(f"{title} (where the log records it)")
    width = min(40, max(len(key) for key in table))
    for key, row in sorted(table.items(), key=lambda kv: -kv[1].sessions):
        share = row.failing / row.sessions if row.sessions else 0.0
        out.line(f"  {safe(key):<{width}}  {plural(row.sessions, 'session'):>14}, "
                 f"{row.failing:,} with failures ({share:.0%}), "
                 f"{plural(row.failures, 'failure')}")
        if spent := row.spent():
            out.line(f"  {'':<{width}}  {spent}")


def _regressions(out: Out, summary: Summary) -> None:
    """The findings that rose significantly from one agent version to the next."""
    rows = summary.tables.findings.regressions()
    if not rows:
        return
    out.heading("Regressions (a finding hit significantly more sessions than in the version "
                "before)")
    for row in rows:
        out.line(f"  {safe(row['code'])} {safe(row['message'])}")
        out.line(f"    {safe(row['agent'])} {safe(row['version'])}: "
                 f"{row['sessions_hit']:,} of {plural(row['sessions'], 'session')}; "
                 f"{safe(row['previous'])}: {row['previous_sessions_hit']:,} of "
                 f"{plural(row['previous_sessions'], 'session')}")


def _blame(out: Out, summary: Summary) -> None:
    blame = summary.tables.blame()
    if not blame:
        return
    largest = max(row["count"] for row in blame)
    out.heading("Who acts (failing steps by category and kind)")
    for row in blame:
        out.line(f"  {row['category']:<12} {row['kind']:<22} {row['count']:>6,}  "
                 f"{_bar(row['count'], largest)}")


def _loops(out: Out, summary: Summary, top: int) -> None:
    if not summary.loops:
        return
    out.heading(f"Loops: {plural(summary.loops, 'loop')} in "
                f"{summary.looping:,} of {plural(summary.sessions, 'session')}")
    shown = summary.top_looping()[:top]
    findings = summary.tables.findings
    for session in shown:
        longest = max(session.loops, key=lambda loop: len(loop.steps))
        finding = findings.find(longest.signature)
        what = finding.message if finding is not None else longest.signature
        if longest.cause.startswith("missing_dependency:"):
            what = f"missing dependencies, first: {what}"
        out.line(f"  {safe(session.session)} ({safe(session.format)}): "
                 f"{plural(len(session.loops), 'loop')}, longest "
                 f"{plural(len(longest.steps), 'step')}: {safe(what)}")
    if summary.looping > len(shown):
        out.line(f"  …and {plural(summary.looping - len(shown), 'more session')}")


def _outcomes(out: Out, summary: Summary) -> None:
    counts = summary.tables.outcome_counts()
    if not counts:
        return
    words = {"no_match": ("probe that found nothing", "probes that found nothing"),
             "rejected_action": ("rejected action", "rejected actions"),
             "cancelled": ("cancelled call", "cancelled calls")}
    parts = [plural(n, *words.get(kind, (kind, kind))) for kind, n in counts.items()]
    out.heading("Outcomes, not failures")
    out.line("  " + ", ".join(parts))


INPUT_ROWS: Final = 20
"""Inputs with problems listed by name in the terminal summary; beyond them it counts them
per error code (``--verbose`` lists every input, ``--json`` has every one)."""


def _inputs(out: Out, summary: Summary, *, verbose: bool) -> None:
    rows = summary.inputs if verbose else [i for i in summary.inputs if i.error_code]
    if not rows:
        return
    out.heading("Inputs" if verbose else f"Inputs with problems ({len(rows):,})")
    if not verbose and len(rows) > INPUT_ROWS:
        codes = Counter(item.error_code for item in rows)
        out.line("  " + ", ".join(f"{count:,} {safe(code)}"
                                  for code, count in codes.most_common()))
    shown = rows if verbose else rows[:INPUT_ROWS]
    for item in shown:
        if item.error_code:
            out.line(f"  {safe(item.path)}: error {safe(item.error_code)}: "
                     f"{safe(item.error_message)}")
        else:
            out.line(f"  {safe(item.path)}: {safe(item.format or '-')}, "
                     f"{plural(item.sessions, 'session')}, "
                     f"{plural(summary.per_input.get(item.path, 0), 'failing step')}")
    if len(rows) > len(shown):
        out.line(f"  …and {len(rows) - len(shown):,} more (--verbose lists every input; "
                 "--json has every one)")


def render_comparison(comparison: Comparison, *, top: int = 10, file: Any = None) -> None:
    """The comparison with a baseline: changed findings (new and regressed first), then how
    sessions ended in both runs (:mod:`failcode.triage.analysis._compare` has the rules)."""
    out = Out(file or sys.stdout)
    changed = [change for change in comparison.changes if change.status != "same"]
    out.heading(f"{comparison.title} ({plural(comparison.old_sessions, 'session')} "
                f"then, {plural(comparison.new_sessions, 'session')} now)")
    if not changed:
        out.line("  no finding changed")
    for change in changed[: 2 * top]:
        few = "" if change.significant else " (few: within noise)"
        out.line(f"  {change.status:<5} {safe(change.code)} {safe(change.message)}")
        out.line(f"        sessions {change.old_sessions:,} ({change.old_rate:.1%}) -> "
                 f"{change.new_sessions:,} ({change.new_rate:.1%}){few}")
    if len(changed) > 2 * top:
        out.line(f"  …and {plural(len(changed) - 2 * top, 'more change')}")
    for key, (old, new) in comparison.models.items():
        out.line(f"  {safe(key)}: sessions with failures {old[1]:,} of {old[0]:,} then, "
                 f"{new[1]:,} of {new[0]:,} now")
    statuses = sorted(set(comparison.old_ended) | set(comparison.new_ended))
    out.line("  ended then: " + ", ".join(f"{comparison.old_ended.get(s, 0):,} {safe(s)}"
                                          for s in statuses))
    out.line("  ended now:  " + ", ".join(f"{comparison.new_ended.get(s, 0):,} {safe(s)}"
                                          for s in statuses))
