"""``python -m failcode.pipeline``: validate a trace, dry-run an input, or show a trace.

The same commands as ``failcode pipeline validate|dry-run|show``. ``validate`` and ``dry-run``
print JSON on stdout; ``show`` prints the trace's timeline.

Exit codes (failcode.boundary's table): 0 valid; 2 a missing or invalid input path, an invalid
input, a missing or invalid trace; 1 anything unexpected.
"""

from __future__ import annotations

import argparse
import sys

from failcode.pipeline._boundary import dry_run_artifact, read_input, run_cli
from failcode.pipeline._timeline import format_timeline
from failcode.pipeline._trace import load_trace_file


def validate_result(path: str) -> object:
    """What ``validate`` prints for a trace file that validates (raises when it does not)."""
    trace = load_trace_file(path)
    return {"valid": True, "trace_version": trace.trace_version,
            "run_id": trace.run_id, "final": trace.final.model_dump(mode="json")}


def show(path: str) -> int:
    """Print the timeline of a trace file; returns the exit code (0, or 2 for a bad trace)."""
    from failcode.boundary import report_and_exit_code  # noqa: PLC0415 - only when it fails

    try:
        trace = load_trace_file(path)
    except Exception as exc:  # noqa: BLE001 - the boundary reports every failure
        return report_and_exit_code(exc)
    sys.stdout.write(format_timeline(trace))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the sub-command; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m failcode.pipeline",
                                     description="failcode pipeline traces and inputs")
    commands = parser.add_subparsers(dest="command", required=True)
    validate = commands.add_parser("validate", help="validate a trace file")
    validate.add_argument("trace")
    dry_run = commands.add_parser("dry-run", help="validate an AgentInput file")
    dry_run.add_argument("input")
    show_parser = commands.add_parser("show", help="print a trace file as a timeline")
    show_parser.add_argument("trace")
    args = parser.parse_args(argv)
    if args.command == "validate":
        return run_cli(lambda: validate_result(args.trace))
    if args.command == "show":
        return show(args.trace)
    return run_cli(lambda: dry_run_artifact(read_input(args.input)))


if __name__ == "__main__":
    sys.exit(main())
