"""``failcode store ...``: the store's queries, import, pruning and stats on the command line.

Every command takes ``--store URL`` (default: ``$FAILCODE_STORE``, else ``[store] url`` of
failcode.toml, else the embedded store in the user data directory) and ``--json``. A store
that cannot be opened prints its FC-STORE code, message and remedy and exits with the code's
exit status (never a traceback).

The commands that only read (``diagnostics``, ``blame``, ``loops``, ``clusters``, ``show``,
``stats``, and ``failcode report``) open the store read-only: a store on a read-only mount is
readable, nothing is written, and a URL naming no store is FC-STORE-001 (a typo never creates
an empty store). ``import`` and ``prune`` open it for writing (creating it when missing).

Every value that comes from the store (session names, signatures, messages, remedies, event
names, the URL) is printed through :func:`printable`: control characters escaped as ``\\xNN``,
a line break or tab as a space (a row is one line), lone surrogates as U+FFFD. Output is plain
``click.echo`` text, never rich markup, so ``[/x]`` or ``[link=...]`` print as they are. A
stdout that cannot be written (closed, a full disk, a closed pipe) is one line on stderr,
``error: cannot write to stdout: REASON``, exit 1 (:func:`stdout_guard`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn

import click
import msgspec

from failcode.render._printable import printable as _printable

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from click import Group as DidYouMeanGroup

    from failcode import Failure
    from failcode.store import Store
else:  # a group that answers a mistyped command with the nearest ones
    from click_didyoumean import DYMGroup as DidYouMeanGroup

__all__ = ["OutputFailed", "failure_lines", "open_configured", "parse_duration", "printable",
           "require_stdout", "stdout_guard", "store", "write_file"]

_DURATION_RE: Final = re.compile(r"(\d+(?:\.\d+)?)\s*(s|m|h|d|w)")
_UNIT_S: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> float:
    """Seconds in ``30d``, ``12h``, ``15m``, ``90s`` or ``2w``.

    Raises:
        ValueError: any other text.
    """
    match = _DURATION_RE.fullmatch(text.strip().lower())
    if match is None:
        msg = f"{text!r} is not a duration; expected a number and a unit: 30d, 12h, 15m, 90s, 2w"
        raise ValueError(msg)
    return float(match.group(1)) * _UNIT_S[match.group(2)]


def _when(value: str | None, option: str) -> datetime | None:
    """An ISO time (UTC when it has no zone) or a duration back from now (``7d``)."""
    if value is None:
        return None
    try:
        return datetime.now(UTC) - timedelta(seconds=parse_duration(value))
    except ValueError:
        pass
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        msg = f"{value!r}: expected an ISO time (2026-12-01T09:00Z) or a duration back (7d, 12h)"
        raise click.BadParameter(msg, param_hint=option) from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)



def printable(value: object) -> str:
    """``value`` as one printable line (:func:`failcode.render._printable.printable`)."""
    return _printable(value, one_line=True)


def failure_lines(failure: Failure) -> list[str]:
    """The lines an FC-STORE failure is reported with: the code and message, the remedy."""
    lines = [f"error: [{failure.code}] {printable(failure.message)}"]
    if failure.remedy:
        lines.append(f"  remedy: {printable(failure.remedy)}")
    return lines


def _report(failure: Failure) -> NoReturn:
    from failcode.boundary import exit_code  # noqa: PLC0415 - only on the error path

    for line in failure_lines(failure):
        click.echo(line, err=True)
    raise SystemExit(exit_code(failure))


_CLOSED: Final = "error: cannot write to stdout: it is closed"


class OutputFailed(Exception):  # noqa: N818 - a signal, reported by stdout_guard
    """Writing an output (stdout or a file) failed; ``line`` says which and why."""

    def __init__(self, line: str, stream: Any = None) -> None:
        super().__init__(line)
        self.line = line
        self.stream = stream
        """The stream that failed (its later writes go to the null device)."""


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return printable(exc) or type(exc).__name__


class _GuardedStdout:
    """``sys.stdout`` while a command prints: a failed write or flush raises
    :class:`OutputFailed` (so it is told from any other error); the rest is the stream's."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def _failed(self, exc: BaseException) -> BaseException:
        closed = getattr(self._stream, "closed", False)
        if not isinstance(exc, OSError) and not closed:
            return exc  # not the stream's failure (a str where bytes were meant)
        return OutputFailed(_CLOSED if closed else
                            f"error: cannot write to stdout: {_reason(exc)}", self._stream)

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except (OSError, ValueError) as exc:
            raise self._failed(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except (OSError, ValueError) as exc:
            raise self._failed(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def stdout_guard(then: Sequence[str] = ()) -> Iterator[None]:
    """Run a command's printing: a stdout that is closed or whose write fails (a full disk, a
    closed pipe) ends it with one line, ``error: cannot write to stdout: REASON``, then the
    ``then`` lines, exit 1, never a traceback (later writes go to the null device, so the
    interpreter's own last flush stays quiet). Any other error passes through."""
    real = sys.stdout
    if real is not None:
        sys.stdout = _GuardedStdout(real)
    try:
        yield
        if sys.stdout is None:
            raise OutputFailed(_CLOSED)
        sys.stdout.flush()
    except OutputFailed as failed:
        line = failed.line
        if failed.stream is not None:  # the interpreter's own last flush: quiet
            with contextlib.suppress(OSError, ValueError, AttributeError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, failed.stream.fileno())
                os.close(devnull)
    else:
        return
    finally:
        if real is not None:
            sys.stdout = real
    click.echo(line, err=True)
    for more in then:
        click.echo(more, err=True)
    raise SystemExit(1)


def require_stdout() -> None:
    """Raise :class:`OutputFailed` when there is no stdout (closed before the start)."""
    if sys.stdout is None:
        raise OutputFailed(_CLOSED)


def write_file(path: Path, text: str, what: str) -> str | None:
    """Write ``text`` to ``path``; None, or the one line saying why it could not be."""
    try:
        path.write_text(text, encoding="utf-8")
    except (OSError, ValueError) as exc:
        return f"error: cannot write {what} {printable(path)}: {_reason(exc)}"
    return None


def _settings(url: str | None) -> tuple[str | None, dict[str, int]]:
    """The store URL and knowledge thresholds from the options, the environment and the
    configuration file of the working directory."""
    from failcode import ConfigError, load_config  # noqa: PLC0415 - only the CLI needs it

    try:
        values = load_config().values.get("store", {})
    except ConfigError as exc:
        _report(exc.problems[0])
    thresholds = {key: values[key] for key in ("promote_after", "demote_after") if key in values}
    if url is None and not os.environ.get("FAILCODE_STORE", "").strip() and values.get("url"):
        url = values["url"]
    return url, thresholds


def open_configured(url: str | None, *, read_only: bool = False) -> Store:
    """The store the options, the environment and failcode.toml name (see the module).

    Raises:
        StoreError: it cannot be opened.
    """
    from failcode.store import open_store  # noqa: PLC0415 - loaded on use

    resolved, thresholds = _settings(url)
    return open_store(resolved, read_only=read_only, **thresholds)


@contextmanager
def _opened(url: str | None, *, read_only: bool = False) -> Iterator[Store]:
    from failcode.store import StoreError  # noqa: PLC0415 - loaded on use

    try:
        with open_configured(url, read_only=read_only) as opened:
            yield opened
    except StoreError as exc:
        _report(exc.failure)


_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")


def _print_json(value: Any) -> None:
    text = json.dumps(msgspec.to_builtins(value), indent=2, ensure_ascii=False)
    click.echo(_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def _guarded(function: Callable[..., Any]) -> Callable[..., Any]:
    """Run the command under :func:`stdout_guard`."""
    import functools  # noqa: PLC0415 - decoration time only

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        with stdout_guard():
            return function(*args, **kwargs)

    return run


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    if not rows:
        click.echo("(nothing stored matches)")
        return
    cells = [list(headers)] + [[printable(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def _short(when: datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S")


def _common(function: Callable[..., Any]) -> Callable[..., Any]:
    function = _guarded(function)
    function = click.option("--json", "as_json", is_flag=True, help="Print JSON.")(function)
    return click.option("--store", "url", metavar="URL",
                        help="sqlite:///path.db or postgresql://...; default: FAILCODE_STORE, "
                             "[store] url, or the embedded store.")(function)


def _filters(function: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--session", help="Only this session."),
        click.option("--since", help="From this time (ISO, UTC) or this long ago (7d, 12h)."),
        click.option("--until", help="Before this time (ISO, UTC) or this long ago."),
        click.option("--kind", help="Only this kind (e.g. build_error)."),
        click.option("--code", help="Only this code (e.g. FC-CMD-001)."),
        click.option("--category", help="Only this category (user, transient, ...)."),
        click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True,
                     help="At most this many rows."),
        click.option("--offset", type=click.IntRange(0), default=0, show_default=True,
                     help="Skip this many rows first (paging)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _query_args(session: str | None, since: str | None, until: str | None, kind: str | None,
                code: str | None, category: str | None, limit: int,
                offset: int) -> dict[str, Any]:
    return {"session": session, "since": _when(since, "--since"),
            "until": _when(until, "--until"), "kind": kind, "code": code,
            "category": category, "limit": limit, "offset": offset}


_EXAMPLES: dict[str, tuple[str, ...]] = {
    "store": (
        'failcode store stats',
        'failcode store diagnostics --since 7d',
        'failcode store import events.jsonl --store sqlite:///team.db',
    ),
    "diagnostics": (
        'failcode store diagnostics',
        'failcode store diagnostics --kind build_error --since 7d --json',
    ),
    "blame": (
        'failcode store blame',
        'failcode store blame --by area --session s-42',
    ),
    "loops": (
        'failcode store loops',
        'failcode store loops --session s-42 --json',
    ),
    "clusters": (
        'failcode store clusters',
        'failcode store clusters --min-sessions 2',
    ),
    "show": (
        'failcode store show "build_error:cpp.build:undeclared_identifier:src/main.c:8b71a243"',
    ),
    "import": (
        'failcode store import events.jsonl',
        'failcode store import events.jsonl --store postgresql://failcode@db/failcode',
    ),
    "prune": (
        'failcode store prune --older-than 30d',
        'failcode store prune --older-than 12h --json',
    ),
    "stats": (
        'failcode store stats',
        'failcode store stats --json',
    ),
}
"""Examples shown at the end of each command's --help."""


def _examples(*lines: str) -> str:
    """A help epilog listing examples, kept as written (click does not rewrap it)."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


@click.group("store", cls=DidYouMeanGroup, epilog=_examples(*_EXAMPLES["store"]))
def store() -> None:
    """Query and maintain the failure event store (SQLite or PostgreSQL)."""


@store.command("diagnostics", epilog=_examples(*_EXAMPLES["diagnostics"]))
@_common
@_filters
def diagnostics_command(url: str | None, as_json: bool, **filters: Any) -> None:
    """The diagnostics table by signature, most frequent first."""
    with _opened(url, read_only=True) as opened:
        rows = opened.diagnostics(**_query_args(**filters))
    if as_json:
        _print_json(rows)
        return
    _table(("COUNT", "SESSIONS", "CODE", "CATEGORY", "LAST SEEN", "SIGNATURE", "LAST MESSAGE",
            "KNOWN REMEDY"),
           [(d.count, d.sessions, d.code, d.category, _short(d.last_seen), d.signature,
             d.last_message, "; ".join(d.known_remedies)) for d in rows])


@store.command("blame", epilog=_examples(*_EXAMPLES["blame"]))
@_common
@_filters
@click.option("--by", type=click.Choice(["code", "area"]), default="code", show_default=True,
              help="Group the kinds by code or by area.")
def blame_command(url: str | None, as_json: bool, by: str, **filters: Any) -> None:
    """The blame histogram: who acts (category) x what failed (kind) x code or area."""
    with _opened(url, read_only=True) as opened:
        rows = opened.blame(by=by, **_query_args(**filters))
    if as_json:
        _print_json(rows)
        return
    _table(("COUNT", "CATEGORY", "KIND", by.upper()),
           [(b.count, b.category, b.kind, b.group) for b in rows])


@store.command("loops", epilog=_examples(*_EXAMPLES["loops"]))
@_common
@_filters
def loops_command(url: str | None, as_json: bool, **filters: Any) -> None:
    """Retry loops: a signature failing 3+ times in a session, or twice in a row."""
    with _opened(url, read_only=True) as opened:
        rows = opened.loops(**_query_args(**filters))
    if as_json:
        _print_json(rows)
        return
    if any(x.input for x in rows):  # one session name in several inputs: say which
        _table(("COUNT", "IN A ROW", "SESSION", "INPUT", "CODE", "LAST SEEN", "SIGNATURE"),
               [(x.count, x.max_run, x.session, x.input or "-", x.code, _short(x.last_seen),
                 x.signature) for x in rows])
        return
    _table(("COUNT", "IN A ROW", "SESSION", "CODE", "LAST SEEN", "SIGNATURE"),
           [(x.count, x.max_run, x.session, x.code, _short(x.last_seen), x.signature)
            for x in rows])


@store.command("clusters", epilog=_examples(*_EXAMPLES["clusters"]))
@_common
@click.option("--min-sessions", type=click.IntRange(1), default=1, show_default=True,
              help="Only clusters seen in this many sessions (2: cross-session).")
@click.option("--kind", help="Only this kind.")
@click.option("--code", help="Only this code.")
@click.option("--category", help="Only this category.")
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True,
              help="At most this many rows.")
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True,
              help="Skip this many rows first (paging).")
def clusters_command(url: str | None, as_json: bool, **filters: Any) -> None:
    """Clusters of signatures with one message template, across sessions."""
    with _opened(url, read_only=True) as opened:
        rows = opened.clusters(**filters)
    if as_json:
        _print_json(rows)
        return
    _table(("COUNT", "SESSIONS", "SIGNATURES", "CLUSTER", "TEMPLATE"),
           [(c.count, c.sessions, len(c.signatures), c.cluster_id, c.template) for c in rows])


@store.command("show", epilog=_examples(*_EXAMPLES["show"]))
@click.argument("signature")
@_common
@click.option("--session", help="Only events of this session.")
@click.option("--limit", type=click.IntRange(1, 10_000), default=20, show_default=True,
              help="At most this many events.")
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True,
              help="Skip this many events first (paging).")
def show_command(signature: str, url: str | None, as_json: bool, session: str | None,
                 limit: int, offset: int) -> None:
    """One signature: its counts, known remedies (best first) and latest events."""
    with _opened(url, read_only=True) as opened:
        found = opened.history(signature, session=session, limit=limit, offset=offset)
    if as_json:
        _print_json(found)
        return
    d = found.diagnostic
    if d is None:
        click.echo(f"no failure with signature {printable(signature)} is stored", err=True)
        raise SystemExit(1)
    p = printable
    click.echo(f"{p(d.signature)}\n  {p(d.code)} {p(d.kind)} / {p(d.category)}: {d.count} "
               f"failures in {d.sessions} sessions, {_short(d.first_seen)} .. "
               f"{_short(d.last_seen)}")
    click.echo(f"  last message: {p(d.last_message)}")
    click.echo("known remedies (best first):" if found.remedies else "no remedy recorded yet")
    for r in found.remedies:
        click.echo(f"  [{p(r.status)}] {p(r.remedy)}  (worked {r.worked} of {r.tried}, "
                   f"failed {r.streak_failed} in a row)")
    click.echo(f"latest events ({len(found.events)}):")
    for event in found.events:
        click.echo(f"  {_short(event.ts)}  {p(event.event)}  session={p(event.session or '-')}"
                   f"  {p(event.event_id)}")


@store.command("import", epilog=_examples(*_EXAMPLES["import"]))
@click.argument("file", type=click.Path(path_type=Path))
@_common
@click.option("--batch", type=click.IntRange(1, 100_000), default=1000, show_default=True,
              help="Events written per transaction.")
def import_command(file: Path, url: str | None, as_json: bool, batch: int) -> None:
    """Read a JSONL event file into the store; bad lines are reported and skipped."""
    from failcode.events import Event, EventProblem, read_events  # noqa: PLC0415

    if not file.is_file():
        raise click.BadParameter(f"no file at {file}", param_hint="FILE")
    problems: list[EventProblem] = []
    stored = read = 0
    with _opened(url) as opened:
        pending: list[Event] = []
        for item in read_events(file):
            if isinstance(item, EventProblem):
                problems.append(item)
                if not as_json:
                    failure = item.failure()
                    click.echo(f"skipped: [{failure.code}] {printable(failure.message)}",
                               err=True)
                continue
            read += 1
            pending.append(item)
            if len(pending) >= batch:
                stored += opened.append(pending)
                pending = []
        stored += opened.append(pending)
    if as_json:
        _print_json({"read": read, "stored": stored, "duplicates": read - stored,
                     "skipped": [p.failure().to_dict() for p in problems]})
    else:
        skipped = len(problems)
        click.echo(f"{_count(read, 'event')} read, {stored} stored ({read - stored} already "
                   f"there), {_count(skipped, 'line')} skipped")
    if problems:
        raise SystemExit(1)


@store.command("prune", epilog=_examples(*_EXAMPLES["prune"]))
@click.option("--older-than", "older_than", required=True, metavar="AGE",
              help="Delete events older than this (30d, 12h); counts and knowledge stay.")
@_common
def prune_command(older_than: str, url: str | None, as_json: bool) -> None:
    """Delete old events; the per-signature aggregates and the knowledge stay."""
    try:
        seconds = parse_duration(older_than)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--older-than") from None
    with _opened(url) as opened:
        deleted = opened.prune(seconds)
    if as_json:
        _print_json({"deleted": deleted})
    else:
        click.echo(f"deleted {deleted} events older than {older_than}")


@store.command("stats", epilog=_examples(*_EXAMPLES["stats"]))
@_common
def stats_command(url: str | None, as_json: bool) -> None:
    """What the store holds."""
    with _opened(url, read_only=True) as opened:
        found = opened.stats()
        where = opened.url
    if as_json:
        _print_json({"store": where, **msgspec.to_builtins(found)})
        return
    click.echo(f"store: {printable(where)} (schema {found.schema_version})")
    click.echo(f"events: {found.events_stored} stored, {found.events_ingested} ever ingested")
    for name, count in found.by_event.items():
        click.echo(f"  {printable(name)}: {count}")
    click.echo(f"signatures: {found.signatures}; sessions: {found.sessions}; clusters: "
               f"{found.clusters}; remedies: {found.remedies}")
    if found.oldest and found.newest:
        click.echo(f"stored events span {_short(found.oldest)} .. {_short(found.newest)}")


def _count(number: int, noun: str) -> str:
    """``1 line``, ``2 lines``."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
