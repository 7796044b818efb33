"""The terminal summary (rich) and the progress bar; rich is imported only here."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import TracebackType

    from failcode.triage._result import TriageResult
    from failcode.triage._stream import Summary

__all__ = ["Progress", "render_summary", "sample_paths"]


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


def _bar(count: int, largest: int, width: int = 30) -> str:
    filled = max(1, round(width * count / largest)) if count else 0
    return "█" * filled


def render_summary(result: TriageResult | Summary, *, top: int = 10, file: Any = None,
                   ) -> None:
    """Print the summary: inputs, top signatures, blame bars, loops, outcomes.

    ``result`` is a whole result, or the :class:`~failcode.triage._stream.Summary` a streamed
    run added its sessions to (built with at least ``top``).
    """
    from rich.console import Console  # noqa: PLC0415 - rich loads only to render
    from rich.table import Table  # noqa: PLC0415

    from failcode.triage._stream import Summary  # noqa: PLC0415

    summary = result if isinstance(result, Summary) else Summary.of(result, top=top)
    console = Console(file=file or sys.stdout, highlight=False)
    skipped = (f" ({summary.skipped} {'file' if summary.skipped == 1 else 'files'} skipped: "
               "not session logs)" if summary.skipped else "")
    console.print(f"[bold]failcode triage[/]: {len(summary.inputs)} inputs{skipped}, "
                  f"{summary.sessions} sessions, {summary.steps} steps, {summary.failures} "
                  "failing steps")

    inputs = Table(title="Inputs", title_justify="left", show_edge=False)
    inputs.add_column("input", overflow="fold")
    for column in ("format", "sessions", "failing steps"):
        inputs.add_column(column, justify="left" if column == "format" else "right")
    per_input = summary.per_input
    for item in summary.inputs:
        inputs.add_row(item.path, item.format or "-", str(item.sessions),
                       str(per_input.get(item.path, 0)))
    console.print(inputs)
    for item in summary.inputs:
        if item.error_code:
            console.print(f"[red]error[/] {item.error_code}: {item.error_message}",
                          soft_wrap=True)

    signatures = summary.tables.signatures()
    table = Table(title=f"Top signatures ({min(top, len(signatures))} of {len(signatures)})",
                  title_justify="left", show_edge=False)
    table.add_column("count", justify="right")
    table.add_column("sessions", justify="right")
    table.add_column("code")
    table.add_column("signature", overflow="fold")
    for row in signatures[:top]:
        table.add_row(str(row["count"]), str(row["sessions"]), row["code"], row["signature"])
    console.print(table)

    blame = summary.tables.blame()
    largest = max((row["count"] for row in blame), default=1)
    bars = Table(title="Blame (category x kind)", title_justify="left", show_edge=False)
    for column in ("category", "kind", "count", ""):
        bars.add_column(column)
    for row in blame:
        bars.add_row(row["category"], row["kind"], str(row["count"]),
                     f"[cyan]{_bar(row['count'], largest)}[/]")
    console.print(bars)

    console.print(f"[bold]Loops[/]: {summary.loops} in "
                  f"{summary.looping} of {summary.sessions} sessions")
    for session in summary.top_looping()[:top]:
        longest = max(session.loops, key=lambda loop: len(loop.steps))
        console.print(f"  {session.session} ({session.format}): {len(session.loops)} loops, "
                      f"longest {len(longest.steps)} steps of {longest.cause or longest.signature}")
    counts = summary.tables.outcome_counts()
    console.print("[bold]Outcomes, not failures[/]: "
                  f"{counts.get('no_match', 0)} probes that found nothing, "
                  f"{counts.get('rejected_action', 0)} rejected actions"
                  + "".join(f", {n} {t}" for t, n in counts.items()
                            if t not in {"no_match", "rejected_action"}))
    console.print("[bold]Ended[/]: " + ", ".join(f"{n} {status}"
                                                 for status, n in sorted(summary.ended.items())))
