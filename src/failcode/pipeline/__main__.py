"""``python -m failcode.pipeline``: validate a trace, or dry-run an input (JSON on stdout).

Exit codes (seed 001): 0 valid; 2 a missing or invalid input path, an invalid input, a missing
or invalid trace; 1 anything unexpected.
"""

from __future__ import annotations

import argparse
import sys

from failcode.pipeline._boundary import dry_run_artifact, read_input, run_cli
from failcode.pipeline._trace import load_trace_file


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the sub-command; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m failcode.pipeline",
                                     description="failcode pipeline traces and inputs")
    commands = parser.add_subparsers(dest="command", required=True)
    validate = commands.add_parser("validate", help="validate a trace file")
    validate.add_argument("trace")
    dry_run = commands.add_parser("dry-run", help="validate an AgentInput file")
    dry_run.add_argument("input")
    args = parser.parse_args(argv)
    if args.command == "validate":
        def check() -> object:
            trace = load_trace_file(args.trace)
            return {"valid": True, "trace_version": trace.trace_version,
                    "run_id": trace.run_id, "final": trace.final.model_dump(mode="json")}
        return run_cli(check)
    return run_cli(lambda: dry_run_artifact(read_input(args.input)))


if __name__ == "__main__":
    sys.exit(main())
