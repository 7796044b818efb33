"""The ``failcode`` program's entry point (and ``python -m failcode``'s).

``failcode hook AGENT EVENT`` is run by an agent after every tool call, so it starts without
the command line's own libraries (click and the command registry): the agent waits for it.
Every other command line is the click group's (:mod:`failcode.cli`).
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Run the command line."""
    argv = sys.argv[1:]
    if len(argv) == 3 and argv[0] == "hook" and not argv[1].startswith("-"):
        from failcode.live._hook import hook_main  # noqa: PLC0415 - the fast path only

        sys.exit(hook_main(argv[1], argv[2]))
    from failcode.cli._main import main as command_line  # noqa: PLC0415

    command_line()
