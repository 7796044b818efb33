"""``failcode pipeline validate|dry-run|show``: the agent pipeline's traces and inputs.

The same commands as ``python -m failcode.pipeline``; they need the ``pipeline`` extra
(pydantic). ``validate`` and ``dry-run`` print JSON on stdout (machine-readable results);
``show`` prints a trace's timeline. Exit codes come from failcode's boundary table: 0 valid;
2 a missing or invalid input path, an invalid input, a missing or invalid trace; 1 a run that
did not succeed is still a valid trace (``validate`` exits 0 for it), anything unexpected 1.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from failcode.cli._dym import DidYouMeanGroup
from failcode.cli._output import echo

if TYPE_CHECKING:
    from types import ModuleType

__all__ = ["pipeline"]


def _pipeline_main() -> ModuleType:
    """``failcode.pipeline.__main__``, or exit 1 naming the extra to install."""
    try:
        import failcode.pipeline.__main__ as module  # noqa: PLC0415 - needs the pipeline extra
    except ImportError as exc:
        echo(f"error: {exc}", err=True)
        sys.exit(1)
    return module


def _examples(*lines: str) -> str:
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


@click.group("pipeline", cls=DidYouMeanGroup,
             short_help="Validate, dry-run or show agent pipeline traces.",
             epilog=_examples("failcode pipeline show trace.json",
                              "failcode pipeline validate trace.json",
                              "failcode pipeline dry-run examples/input.json"))
def pipeline() -> None:
    """Agent pipeline traces and inputs (needs the pipeline extra:
    pip install 'failcode[pipeline]')."""


@pipeline.command("validate", short_help="Check a trace file; print its final status as JSON.",
                  epilog=_examples("failcode pipeline validate trace.json"))
@click.argument("trace")
def validate(trace: str) -> None:
    """Validate a trace file (phases, ordering, replay fields, final status) and print its
    final status as JSON; exit 2 naming the problem when it is not a valid trace."""
    module = _pipeline_main()
    sys.exit(module.run_cli(lambda: module.validate_result(trace)))


@pipeline.command("dry-run", short_help="Validate an AgentInput file; print the dry run.",
                  epilog=_examples("failcode pipeline dry-run examples/input.json"))
@click.argument("input_path", metavar="INPUT")
def dry_run(input_path: str) -> None:
    """Validate an AgentInput JSON file and print the dry-run artifact (the input, its digest
    and the phase graph) as JSON; exit 2 naming the field when the input is invalid."""
    module = _pipeline_main()
    sys.exit(module.run_cli(lambda: module.dry_run_artifact(module.read_input(input_path))))


_STYLES = (("VETO ", "yellow"), (" failed: ", "red"), ("stop: ", "bold red"),
           ("outcome: success", "bold green"), ("PASS ", "green"))


@pipeline.command("show", short_help="Print a trace as a timeline of phases and events.",
                  epilog=_examples("failcode pipeline show trace.json",
                                   "python examples/pipeline_demo.py && "
                                   "failcode pipeline show /tmp/failcode-demo-*/trace.json"))
@click.argument("trace")
def show(trace: str) -> None:
    """Print a trace file as a timeline: each phase, the model calls, agent errors with their
    retries, pass and veto decisions, failure artifacts, and the stop reason."""
    module = _pipeline_main()
    from failcode.boundary import report_and_exit_code  # noqa: PLC0415 - this command only

    try:
        loaded = module.load_trace_file(trace)
    except Exception as exc:  # noqa: BLE001 - the boundary reports every failure
        sys.exit(report_and_exit_code(exc))
    for line in module.format_timeline(loaded).splitlines():
        style = next((style for marker, style in _STYLES if marker in line), None)
        echo(line, style=style)
