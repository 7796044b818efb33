"""``failcode mcp``: failcode's questions as tools an agent calls over MCP (stdio).

::

    from failcode.mcp import build_server, run_stdio

    run_stdio()  # what `failcode mcp` runs: serve the tools on stdin/stdout until closed

The tools (``triage``, ``explain``, ``classify``, ``findings``, ``timeline``) answer with the
JSON failcode already gives on its other doors: triage's ``--json`` document, a code's entry
of the code reference, the service's classify answer, ``failcode store findings --json`` or the
service's ``GET /v1/findings``, the sessions of triage's document. docs/mcp.md is the reference.

Needs the ``mcp`` extra (the official MCP SDK); ``import failcode`` never imports this package,
and importing this package does not import the SDK (its functions do). It may use every layer
below the CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server import MCPServer

__all__ = ["build_server", "run_stdio"]


def build_server() -> MCPServer:
    """The MCP server with failcode's tools registered (not yet running)."""
    from failcode.mcp._tools import build_server as _build  # noqa: PLC0415 - needs the SDK

    return _build()


def run_stdio() -> None:
    """Serve the tools over stdio (JSON-RPC on stdin and stdout) until the client closes."""
    build_server().run("stdio")
