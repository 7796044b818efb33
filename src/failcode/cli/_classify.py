"""``failcode classify``: what failcode makes of an error it is shown.

Input, one of: a Python traceback, a log line or an exception's text on stdin; an exception type
and message (``--type T --message M``); or an HTTP status with an optional body and headers
(``--http 429 --body FILE``). Output: the Failure (code, axes, class, signature), the decision
:func:`failcode.decide` takes on a first occurrence, and the user text; ``--json`` prints all
three as one JSON object.

When the rules leave the error unknown (``unknown_error``, or a ``command_error`` of class
``unknown``: :func:`failcode.learned.wants_suggestion`), the learned model's suggestion for
the text it was shown (stdin's whole text; else the record's message and detail) follows the
summary, marked as a suggestion, and is ``suggested`` in ``--json`` (null otherwise). It never
changes the Failure or the decision.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from failcode.cli._output import echo, failure_text

if TYPE_CHECKING:
    from failcode import Decision, Failure
    from failcode.learned import Suggestion

__all__ = ["classify", "exception_of", "suggestion_lines"]

_TRACEBACK_HEADER = "Traceback (most recent call last):"
_EXCEPTION_LINE = re.compile(
    r"(?P<type>(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning|Timeout)"
    r"|[a-z_]\w*error|timeout))(?::\s?(?P<message>.*))?$")
"""An exception's ``Type: message`` at the end of a line (``openai.RateLimitError: ...``,
``socket.gaierror: ...``, ``KeyboardInterrupt``)."""


def exception_of(text: str) -> tuple[str, str, str | None]:
    """The exception type, message and traceback in ``text`` (a traceback, a log line...).

    In a traceback, the exception is the first unindented line after the last ``Traceback
    (most recent call last):`` (so a chained traceback gives the exception raised last), and
    the lines after it continue its message;
    otherwise the last line naming an exception (``... openai.RateLimitError: Error code:
    429 ...``); otherwise the whole text is the message of a plain ``Exception``.
    """
    stripped = text.strip()
    lines = stripped.splitlines()
    if _TRACEBACK_HEADER in stripped:
        start = stripped.rindex(_TRACEBACK_HEADER)
        block = stripped[start:].splitlines()
        for index in range(1, len(block)):
            line = block[index]
            if line and not line[0].isspace():  # frames are indented; the exception is not
                first = line.split(":", 1)
                message = first[1].strip() if len(first) > 1 else ""
                # a multi-line message continues below its first line
                rest = "\n".join(block[index + 1:]).strip()
                return first[0].strip(), (message + ("\n" + rest if rest else "")).strip(), \
                    stripped
    for line in reversed(lines):
        for match in re.finditer(r"(?:^|[\s\[(])(?=[A-Za-z_])", line):
            found = _EXCEPTION_LINE.match(line, match.end())
            if found:
                return found["type"], (found["message"] or "").strip(), None
    return "Exception", stripped, None


def _decision_text(decision: Decision) -> str:
    action = str(decision.action)
    if decision.retries and decision.delay_s:
        action += f" after {decision.delay_s:.2f} s"
    return (f"decision: {action} (rule {int(decision.rule)}; route {decision.route}; "
            f"if it stops here: {decision.outcome})")


def _summary(failure: Failure) -> list[str]:
    from failcode import UnknownCodeError, lookup  # noqa: PLC0415 - this command only

    try:
        slug = lookup(failure.code).slug
    except UnknownCodeError:
        slug = failure.error_class
    return [
        f"{failure.code}  {slug}",
        (f"  kind {failure.kind}, category {failure.category}, severity {failure.severity}, "
        f"retryability {failure.retryability}"),
        (f"  class {failure.error_class}, surface {failure.surface}, location "
        f"{failure.location or 'none'}"),
        f"  signature {failure.signature}",
    ]


def suggestion_lines(suggested: Suggestion) -> list[str]:
    """A suggestion as text, marked as one: the kind, class and confidence, then the nearest
    known examples (program, kind and class, similarity, excerpt, remedy when known)."""
    klass = f", class {suggested.klass}" if suggested.klass != "unknown" else ""
    lines = [(f"suggested (learned, {suggested.confidence:.0%}; the rules say unknown): "
              f"kind {suggested.kind}{klass}")]
    for near in suggested.nearest:
        lines.append(f"  like {near.program} ({near.kind} / {near.klass}, "
                     f"{near.similarity:.0%} similar): {near.excerpt[:160]}")
        if near.remedy:
            lines.append(f"    fix: {near.remedy}")
    lines.append(f"  model {suggested.model}: a suggestion, not the rules' classification")
    return lines


def _read_body(path: str) -> object:
    """The body file's JSON, or its text when it is not JSON; ``-`` reads stdin."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        msg = f"--body {path}: cannot read it ({exc})"
        raise click.UsageError(msg) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _headers(values: tuple[str, ...]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            msg = f"--header {value!r}: expected NAME: VALUE, e.g. 'retry-after: 2'"
            raise click.UsageError(msg)
        headers[name.strip()] = content.strip()
    return headers


_EPILOG = """\b
Examples:
  python app.py 2> err.txt; failcode classify < err.txt
  echo 'openai.RateLimitError: Error code: 429' | failcode classify
  failcode classify --type TimeoutError --message 'read timed out'
  failcode classify --http 429 --body body.json --header 'retry-after: 2'
  failcode classify --json < traceback.txt
"""


@click.command("classify", short_help="Classify a traceback, log line or HTTP error.",
               epilog=_EPILOG)
@click.option("--type", "type_name", metavar="TYPE",
              help="The exception type, qualified or not (openai.RateLimitError); needs "
                   "--message.")
@click.option("--message", metavar="TEXT", help="The exception's message (str(exc)).")
@click.option("--http", "status", type=click.IntRange(100, 599), metavar="STATUS",
              help="An HTTP status from 100 to 599 (a provider's response).")
@click.option("--body", metavar="FILE",
              help="With --http: the response body, JSON or text (- reads stdin).")
@click.option("--header", "header_values", multiple=True, metavar="'NAME: VALUE'",
              help="With --http: a response header, e.g. 'retry-after: 2' (repeatable).")
@click.option("--surface", metavar="NAME",
              help="Where it failed (llm.openai, shell.run...); default: inferred.")
@click.option("--operation", default="default", show_default=True, metavar="CLASS",
              help="The operation class whose retry bounds the decision uses (provider...).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the failure, the decision and the user text as one JSON object.")
def classify(  # noqa: PLR0917 - click passes each option by name; the signature is click's
        type_name: str | None, message: str | None, status: int | None, body: str | None,
        header_values: tuple[str, ...], surface: str | None, operation: str,
        as_json: bool) -> None:
    """Classify an error and print the Failure, the decision and the user text.

    Reads a Python traceback, a log line or an exception's text from stdin, unless --type and
    --message, or --http, say what to classify. The decision is the one failcode takes the first
    time this failure happens in an operation of the given class.
    """
    from failcode import (  # noqa: PLC0415 - this command only
        Cancelled,
        History,
        classify_http,
        classify_text,
        decide,
        render_user,
    )

    shown = ""  # stdin's text, the suggestion's input when there is one
    if status is not None:
        if type_name or message:
            msg = "pass either --http or --type/--message, not both"
            raise click.UsageError(msg)
        result: Any = classify_http(status, _read_body(body) if body else None,
                                    _headers(header_values), surface=surface)
    elif type_name is not None or message is not None:
        if body or header_values:
            msg = "--body and --header go with --http"
            raise click.UsageError(msg)
        result = classify_text(type_name or "Exception", message or "", surface=surface)
    else:
        if sys.stdin.isatty():
            msg = ("nothing to classify: pipe a traceback or log line on stdin "
                   "(failcode classify < err.txt), or pass --type/--message or --http")
            raise click.UsageError(msg)
        text = sys.stdin.read()
        if not text.strip():
            msg = "stdin is empty: nothing to classify"
            raise click.UsageError(msg)
        shown = text
        found_type, found_message, traceback = exception_of(text)
        result = classify_text(found_type, found_message, traceback=traceback, surface=surface)
    if isinstance(result, Cancelled):
        if as_json:
            click.echo(json.dumps({"outcome": {"type": "cancelled", "reason": result.reason,
                                               "signal": result.signal}}, indent=2))
        else:
            echo(f"cancelled: {result.reason} (a cancellation is an outcome, not a failure)")
        return
    decision = decide(result, History(operation=operation))
    from failcode.learned import suggest_for  # noqa: PLC0415 - this command only

    suggested = suggest_for(result, None, None, shown)
    if as_json:
        click.echo(json.dumps({
            "failure": result.to_dict(),
            "decision": {"action": str(decision.action), "delay_s": decision.delay_s,
                         "route": str(decision.route), "outcome": str(decision.outcome),
                         "rule": int(decision.rule), "reason": decision.reason,
                         "hints": [str(hint) for hint in decision.hints]},
            "user_text": render_user(result, decision=decision),
            "suggested": None if suggested is None else suggested.to_dict()}, indent=2))
        return
    for index, line in enumerate(_summary(result)):
        echo(line, style="bold" if index == 0 else None)
    if suggested is not None:
        for line in suggestion_lines(suggested):
            echo(f"  {line}", style="italic")
    echo(_decision_text(decision))
    echo(f"  {decision.reason}")
    echo()
    failure_text(result, decision=decision, err=False)
