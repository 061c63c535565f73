"""The serving side of groove: MCP (stdio or Streamable HTTP), the UI, the watcher.

:func:`serve` is what ``groove serve`` calls once the knowledge base exists.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from groove.errors import ConfigError

if TYPE_CHECKING:
    from groove.kb import KnowledgeBase

log = logging.getLogger("groove.server")

__all__ = ["serve", "resolve_bind"]


def resolve_bind(config_bind: str, bind: str | None, port: int | None) -> str:
    """``--bind`` beats the config's bind; ``--port`` replaces the port of whichever wins."""
    from groove.config import parse_bind

    chosen = bind or config_bind
    try:
        host, old_port = parse_bind(chosen)
    except ValueError as exc:
        raise ConfigError(f"--bind {chosen!r}: {exc}") from None
    port = port or old_port
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def serve(kb: KnowledgeBase, *, transport: str, bind: str | None, port: int | None,
          i_know: bool, watch: bool) -> None:
    """Run the MCP server on ``transport`` ("stdio" | "http") until it is stopped."""
    from groove._logging import configure_logging
    from groove.server.state import ServerState

    configure_logging()
    if transport not in ("stdio", "http"):
        raise ConfigError(f"transport {transport!r} is not one of: stdio, http")
    state = ServerState(kb)
    listener = None
    if transport == "http":  # refuse a bad or busy address before starting anything
        from groove.server.http import open_listener

        http_bind = resolve_bind(kb.config.transport.http.bind, bind, port)
        listener = open_listener(http_bind, i_know)
    if watch:
        from groove.server.watcher import Watcher

        state.watcher = Watcher(kb)
        state.watcher.start()
    try:
        if transport == "stdio":
            from groove.server.stdio import serve_stdio

            serve_stdio(kb, state=state)
        else:
            from groove.server.http import serve_http

            assert listener is not None
            serve_http(kb, kb.config, http_bind, i_know, state=state, listener=listener)
    finally:
        if state.watcher is not None:
            state.watcher.stop()
