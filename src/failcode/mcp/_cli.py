"""The ``failcode mcp`` command: the MCP server over stdio, or a clear error without the SDK."""

from __future__ import annotations

import importlib.util
import sys

import click

__all__ = ["mcp_command"]

_EPILOG = """\b
Examples:
  failcode mcp
  claude mcp add failcode -- failcode mcp
"""


@click.command("mcp", short_help="Serve failcode's tools to an agent over MCP (stdio).",
               epilog=_EPILOG)
def mcp_command() -> None:
    """Serve failcode's tools (triage, explain, classify, findings, timeline) to an agent over
    the Model Context Protocol on stdin and stdout, until the client closes them.

    An agent starts it itself: register the command in its MCP configuration (docs/mcp.md).
    Needs the mcp extra: pip install 'failcode[mcp]'. Without it: exit 2.
    """
    try:
        found = importlib.util.find_spec("mcp") is not None
    except (ImportError, ValueError):  # a broken or half-removed installation
        found = False
    if not found:
        click.echo("error: failcode mcp needs the MCP SDK, which is not installed: "
                   "pip install 'failcode[mcp]'", err=True)
        sys.exit(2)
    from failcode.mcp import run_stdio  # noqa: PLC0415 - imports the SDK

    run_stdio()
