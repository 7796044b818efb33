"""``failcode run -- CMD ARGS...``: run a command, stream its output, explain its failure.

Useful in CI scripts and as an agent's shell wrapper: the command's output passes through as it
comes; when it fails, the failure is classified (:func:`failcode.from_command`, by purpose) and
its user rendering goes to stderr, and the exit code is the boundary table's for that failure. A
probe that found nothing (``grep`` exit 1 with no output) is no failure: failcode prints nothing
and exits like the command.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from failcode.cli._output import failure_text

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["run"]

_TAIL_BYTES = 256 * 1024
"""How much of each stream is kept for classification (the end of it, where tools put errors)."""

_PURPOSES = ("build", "test", "static_analysis", "doctor", "debug", "merge", "general")


def _pump(source: IO[bytes], sink: IO[bytes], tail: bytearray) -> None:
    """Copy ``source`` to ``sink`` as it comes, keeping the last bytes in ``tail``."""
    read = getattr(source, "read1", source.read)
    while True:
        chunk = read(65536)
        if not chunk:
            break
        try:
            sink.write(chunk)
            sink.flush()
        except (BrokenPipeError, ValueError):  # our reader went away: keep draining the child
            pass
        tail += chunk
        if len(tail) > 2 * _TAIL_BYTES:
            del tail[:-_TAIL_BYTES]
    source.close()


def _execute(argv: Sequence[str], *, quiet_stdout: bool, timeout: float | None,
             ) -> tuple[int | None, bytes, bytes, bool]:
    """Run ``argv``; return (exit status or None, stdout tail, stderr tail, timed out).

    A program that cannot be started is reported as a shell reports it: 127 and ``not found``
    when it does not exist, 126 and ``Permission denied`` when it cannot be executed.
    """
    program = argv[0]
    try:
        child = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except FileNotFoundError:
        return 127, b"", f"failcode: {program}: command not found\n".encode(), False
    except (PermissionError, IsADirectoryError, NotADirectoryError, OSError) as exc:
        reason = exc.strerror or type(exc).__name__
        return 126, b"", f"failcode: {program}: {reason}\n".encode(), False
    assert child.stdout is not None
    assert child.stderr is not None
    out_tail, err_tail = bytearray(), bytearray()
    out_sink = sys.stderr.buffer if quiet_stdout else sys.stdout.buffer
    pumps = [threading.Thread(target=_pump, args=(child.stdout, out_sink, out_tail), daemon=True),
             threading.Thread(target=_pump, args=(child.stderr, sys.stderr.buffer, err_tail),
                              daemon=True)]
    for pump in pumps:
        pump.start()
    timed_out = False
    try:
        status: int | None = child.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        child.kill()
        child.wait()
        status = None
    except KeyboardInterrupt:
        child.send_signal(signal.SIGINT)
        child.wait()
        raise
    for pump in pumps:
        pump.join()
    return status, bytes(out_tail[-_TAIL_BYTES:]), bytes(err_tail[-_TAIL_BYTES:]), timed_out


def _decision_dict(decision: Any) -> dict[str, Any]:
    return {"action": str(decision.action), "delay_s": decision.delay_s,
            "route": str(decision.route), "outcome": str(decision.outcome),
            "rule": int(decision.rule), "reason": decision.reason,
            "hints": [str(hint) for hint in decision.hints]}


_EPILOG = """\b
Examples:
  failcode run -- make build
  failcode run --purpose test -- python -m pytest -x
  failcode run --json --timeout 600 -- cargo build
  failcode run -- grep -rn TODO src     (no match: exits 1, prints nothing)
"""


@click.command("run", short_help="Run a command; explain and exit-code its failure.",
               epilog=_EPILOG)
@click.option("--purpose", type=click.Choice(_PURPOSES), default=None,
              help="What the command is for; picks how its failure is classified. By default "
                   "it is inferred from the command, then its output, by the rule "
                   "from_command and triage use (a linter is static_analysis).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the result as one JSON object on stdout (the command's own output "
                   "then goes to stderr).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Stop the command after this many seconds (classified as a timeout).")
@click.option("--profile", type=click.Choice(["default", "sysexits"]), default="default",
              show_default=True, help="The exit-code column of the boundary table to use.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def run(purpose: str | None, as_json: bool, timeout: float | None, profile: str,
        command: tuple[str, ...]) -> None:
    """Run COMMAND, stream its output, and on failure explain it and exit with its code.

    Put `--` before the command so its own options are not read as failcode's. On success
    failcode exits 0 and prints nothing of its own. On failure it classifies the command by its
    purpose (given, or inferred as from_command and triage infer it) and output, prints what
    failed, why it matters and what to try on stderr, and exits with the code failcode's
    boundary table gives that failure (1 for most failures in the default profile). A probe
    that found nothing (grep exit 1, no output) exits like the command, silently. A program
    that is not installed is reported as such.
    """
    from failcode import Cancelled, Failure, History, NoMatch, decide, from_command  # noqa: PLC0415
    from failcode.boundary import exit_code  # noqa: PLC0415 - only this command

    try:
        status, out, err, timed_out = _execute(command, quiet_stdout=as_json, timeout=timeout)
    except KeyboardInterrupt:
        status, out, err, timed_out = 130, b"", b"", False
    result = (None if status == 0 and not timed_out else
              from_command(list(command), status, out, err, purpose=purpose, cwd=Path.cwd(),
                           timed_out=timed_out))
    document: dict[str, Any] = {"command": list(command), "returncode": status,
                                "timed_out": timed_out}
    if isinstance(result, Failure):
        decision = decide(result, History())
        code = exit_code(result, profile)
        document.update(result="failure", exit_code=code, failure=result.to_dict(),
                        decision=_decision_dict(decision))
        if not as_json:
            # `failcode run` runs the command once: a decision to retry is said as what a
            # retry can do, never as "retrying in N s"
            failure_text(result, decision=None if decision.retries else decision)
    elif isinstance(result, (NoMatch, Cancelled)):
        code = status if status is not None else 1
        if isinstance(result, Cancelled):
            code = exit_code(result, profile)
        name = "no_match" if isinstance(result, NoMatch) else "cancelled"
        document.update(result=name, exit_code=code, outcome={"type": name, **_fields(result)})
    else:
        code = 0 if status == 0 else (status or 1)
        document.update(result="success" if code == 0 else "exit", exit_code=code)
    if as_json:
        click.echo(json.dumps(document, indent=2, default=str))
    sys.exit(code)


def _fields(outcome: object) -> dict[str, Any]:
    """An outcome's fields as JSON-ready values."""
    names = getattr(outcome, "__struct_fields__", ())
    return {name: dict(value) if hasattr(value, "items") else value
            for name in names for value in (getattr(outcome, name),)}
