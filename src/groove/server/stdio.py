"""MCP over stdio: stdout carries MCP frames and nothing else.

The SDK's ``stdio_server`` already points fd 1 at stderr while it serves (so
stray prints from any library miss the wire); groove's logging goes to stderr
as everywhere else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groove._logging import configure_logging
from groove.server.state import ServerState

if TYPE_CHECKING:
    from groove.kb import KnowledgeBase


def serve_stdio(kb: KnowledgeBase, *, state: ServerState | None = None) -> None:
    """Serve until the client closes stdin."""
    from groove.server.mcp import build_mcp_server

    configure_logging()
    build_mcp_server(kb, state or ServerState(kb)).run("stdio")
