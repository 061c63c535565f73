"""``notifications/resources/list_changed`` for every connected client (docs/mcp.md).

When the watcher adds, removes or renames documents, the topic groups that
``resources/list`` returns can change, so every client is told, in its era:

* a 2025 (handshake) connection — stdio, or Streamable HTTP with a GET
  stream — gets the notification on its connection-wide channel. Such
  connections are recorded when they ``initialize`` and forgotten by the
  connection's own teardown (its exit stack), so none is kept after it ends;
* a 2026-07-28 client gets it on its ``subscriptions/listen`` stream, through
  the :class:`~mcp.server.subscriptions.InMemorySubscriptionBus` groove hands the
  SDK (the SDK itself refuses to send change notifications outside a listen
  stream at that era).

``listChanged: true`` is advertised on both: the SDK derives it from the
listen handler at 2026-07-28, and :meth:`ListChangedNotifier.__call__` sets it
in the handshake's ``initialize`` result.

The watcher runs in its own thread; :meth:`ListChangedNotifier.resources_changed`
is thread-safe and hands the broadcast to the server's event loop (learnt from
the first request). Before any client has connected there is nobody to tell.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged

log = logging.getLogger("groove.server")

#: Protocol versions whose change notifications travel on subscriptions/listen only.
_LISTEN_ERA_PREFIX = "2026-"


class ListChangedNotifier:
    """Server middleware + fan-out for resources/list_changed (one per MCP server)."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self._connections: dict[int, Any] = {}  # id(connection) -> the request session
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    # --- the middleware ------------------------------------------------------------------
    async def __call__(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        self._loop = asyncio.get_running_loop()
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            resources = result.get("capabilities", {}).get("resources")
            if isinstance(resources, dict):
                resources["listChanged"] = True
            self._remember(ctx.session)
        return result

    def _remember(self, session: Any) -> None:
        # ServerSession keeps its Connection private; the Connection's exit stack is
        # the one public place to learn that it ended.
        connection = getattr(session, "_connection", None)
        if connection is None:
            return
        key = id(connection)
        with self._lock:
            self._connections[key] = session

        async def forget() -> None:
            with self._lock:
                self._connections.pop(key, None)

        connection.exit_stack.push_async_callback(forget)

    @property
    def connected(self) -> int:
        """Handshake-era connections currently recorded."""
        with self._lock:
            return len(self._connections)

    # --- the fan-out ---------------------------------------------------------------------
    def resources_changed(self) -> None:
        """Tell every connected client, from any thread; returns without waiting."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop is shutting down
            asyncio.run_coroutine_threadsafe(self._broadcast(), loop)

    async def _broadcast(self) -> None:
        with self._lock:
            sessions = list(self._connections.values())
        for session in sessions:
            if str(session.protocol_version).startswith(_LISTEN_ERA_PREFIX):
                continue
            try:
                await session.send_resource_list_changed()
            except Exception:  # one broken client must not starve the others
                log.debug("resources/list_changed not delivered to one client", exc_info=True)
        await self.bus.publish(ResourcesListChanged())
