"""The serving side of groove: MCP (stdio or Streamable HTTP), the UI, the watcher.

:func:`serve` is what ``groove serve`` calls once the knowledge base exists.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from groove.config.bind import BindAddress
from groove.errors import ConfigError

if TYPE_CHECKING:
    from groove.collections import Collections
    from groove.kb import KnowledgeBase
    from groove.server.http import Listener

log = logging.getLogger("groove.server")

__all__ = ["build_in_background", "serve", "resolve_bind"]


def build_in_background(kb: KnowledgeBase) -> threading.Thread | None:
    """Start building (or finishing) the index in a thread, so serving starts at once.

    The recorded model is checked and the model loaded first, in the caller:
    a mismatch or a model that cannot load stops ``serve`` before it listens.
    Meanwhile tools answer from what is indexed, with the index state in each
    answer (docs/index-lifecycle.md). Returns the thread, or None when the
    index is complete or another process is writing it.
    """
    kb.check_model()
    state = kb.index_state(files=False)
    if state.state not in ("missing", "incomplete"):
        return None
    kb.embedder  # noqa: B018 - load now: a failure must stop serve, not a background thread

    def build() -> None:
        try:
            kb.ensure_index(wait=False)
        except Exception:  # serving goes on; status shows the index as incomplete
            log.exception("building the index in the background failed")

    thread = threading.Thread(target=build, name="groove-build", daemon=True)
    thread.start()
    return thread


def resolve_bind(configured: BindAddress, bind: str | None, port: int | None) -> BindAddress:
    """``--bind`` beats the config's bind; ``--port`` replaces the port of whichever wins."""
    chosen = configured
    if bind is not None:
        try:
            chosen = BindAddress.parse(bind)
        except ValueError as exc:
            raise ConfigError(f"--bind {bind!r}: {exc}") from None
    return chosen.with_port(port or None)


def check_systemd_socket(kb: KnowledgeBase, transport: str, bind: str | None,
                         port: int | None) -> None:
    """``--systemd-socket`` stands alone: no address of our own beside it, HTTP only."""
    if transport != "http":
        raise ConfigError("--systemd-socket serves Streamable HTTP on the inherited socket; "
                          f"it cannot be used with --transport {transport}")
    clash = [f"--bind {bind}" if bind is not None else None,
             f"--port {port}" if port is not None else None,
             "[transport.http] bind" if "bind" in kb.config.transport.http.model_fields_set
             else None]
    named = [c for c in clash if c is not None]
    if named:
        raise ConfigError(f"--systemd-socket takes the socket systemd passes; {' and '.join(named)} "
                          "would name a second address: remove it (the .socket unit's "
                          "ListenStream= says where groove listens)")


def serve(kb: KnowledgeBase, *, transport: str, bind: str | None, port: int | None,
          i_know: bool, watch: bool, listener: Listener | None = None,
          collections: Collections | None = None) -> None:
    """Run the MCP server on ``transport`` ("stdio" | "http") until it is stopped.

    ``listener``: an HTTP listener already taken (the socket systemd passed,
    :func:`groove.server.http.adopt_listener`); otherwise ``bind``/``port``
    decide where it listens. ``collections``: serve all of them (``kb`` is the
    first, whose settings hold the file's server-wide keys), each watched.
    """
    from groove._logging import configure_logging
    from groove.server.state import ServerState

    configure_logging()
    if transport not in ("stdio", "http"):
        raise ConfigError(f"transport {transport!r} is not one of: stdio, http")
    state = ServerState(kb, collections=collections)
    if listener is None and transport == "http":  # refuse a bad or busy address before starting anything
        from groove.server.http import open_listener

        listener = open_listener(resolve_bind(kb.config.transport.http.address, bind, port),
                                 i_know)
    if watch:
        from groove.server.watcher import Watcher

        watched = dict(collections) if collections is not None else {"": kb}
        for name, one in watched.items():
            if collections is not None and not one.config.watch.enabled:
                continue
            state.watchers[name] = Watcher(one, on_documents_changed=state.documents_changed)
            state.watchers[name].start()
        state.watcher = next(iter(state.watchers.values()), None)
    try:
        if transport == "stdio":
            from groove.server.stdio import serve_stdio

            serve_stdio(kb, state=state)
        else:
            from groove.server.http import serve_http

            assert listener is not None
            serve_http(kb, listener, state=state)
    finally:
        for running in state.watchers.values():
            running.stop()
