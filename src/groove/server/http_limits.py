"""Connection limits for the HTTP server: slow clients must not take it down.

uvicorn has a keep-alive timeout but none for reading a request's headers
(any byte received cancels its idle timer), and its ``limit_concurrency``
answers 503 only after reading a whole request, holding the connection's
descriptor all along. So a client trickling header bytes, times a few
hundred, used to exhaust the descriptor limit and crash the event loop.
:class:`GuardedH11Protocol` adds what is missing, per connection:

* a **header timeout**: from the moment a connection opens, or the first
  byte of its next request arrives, the request line and headers must be
  complete within ``header_timeout_s``, however slowly they trickle;
* a **body timeout**: once the headers are in, the whole body must arrive
  within ``body_timeout_s`` (in total, not reset by each byte), else the
  client gets ``408`` and the connection is closed;
* a **complete body before the app** (:class:`CompleteBody`): the body is read
  whole (and capped) before any route runs, and a client that leaves mid-body
  never reaches the app at all, so a trickled ``POST /mcp`` never opens an MCP
  session (the SDK's own body limit passes a half body on, and the session
  manager opens a session for it);
* a **connection cap** below the process's descriptor limit: a connection
  over the cap is answered 503 at once and closed, before it reads anything;
* ``X-Content-Type-Options: nosniff`` on the 400 that uvicorn writes itself
  for malformed or oversized headers (the ASGI middleware never sees those).

The idle timeout between requests is uvicorn's ``timeout_keep_alive``.
See docs/deployment.md (limits and the security model).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import Any

import h11
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("groove.server.http")

#: Descriptors kept free for everything that is not a client connection
#: (the index, the model, the watcher, logs, the listening socket).
RESERVED_FDS = 64
#: Connections accepted per event-loop turn (uvicorn's ``backlog``, which asyncio
#: also uses as its accept burst). Refused ones are closed a turn or two later,
#: so two bursts' worth of descriptors are kept free on top of the reserve.
ACCEPT_BURST = 64
_NOSNIFF = (b"x-content-type-options", b"nosniff")
REFUSAL_LOG_INTERVAL_S = 10


def connection_cap(configured: int, fd_soft_limit: int | None) -> int:
    """``configured``, lowered to keep the reserve and two accept bursts under the fd limit."""
    if fd_soft_limit is None or fd_soft_limit <= 0:
        return configured
    return max(1, min(configured, fd_soft_limit - RESERVED_FDS - 2 * ACCEPT_BURST))


def loop_exception_handler(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """Log what the event loop reports, and never raise while doing so.

    asyncio reports an ``accept()`` that ran out of descriptors here and
    retries a second later; the default handler's logging can itself need a
    descriptor (a lazy import), and an error raised from the handler used
    to end the server.
    """
    try:
        exc = context.get("exception")
        log.warning("event loop: %s%s", context.get("message", "error"),
                    f" ({type(exc).__name__}: {exc})" if exc is not None else "")
    except Exception:  # noqa: BLE001 - nothing may escape the handler
        pass


def fd_soft_limit(wanted: int | None = None) -> int | None:
    """The soft RLIMIT_NOFILE (None: no such limit, e.g. Windows), raised first if asked.

    With ``wanted``, a soft limit below it is raised toward it, as far as the
    hard limit allows (macOS starts processes at 256, which would otherwise
    cap a server at a few dozen connections).
    """
    try:
        import resource
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if wanted is not None and soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:
            log.debug("could not raise the open-file limit to %d: %s", target, exc)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def fds_needed(connections: int) -> int:
    """The open-file limit at which ``connections`` fit under :func:`connection_cap`."""
    return connections + RESERVED_FDS + 2 * ACCEPT_BURST


def guarded_protocol(*, header_timeout_s: float, max_connections: int,
                     body_timeout_s: float = 30.0) -> type[H11Protocol]:
    """A :class:`GuardedH11Protocol` subclass carrying these limits (uvicorn's ``http=``)."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,),
                {"header_timeout_s": header_timeout_s, "max_connections": max_connections,
                 "body_timeout_s": body_timeout_s})


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header timeout, a connection cap and nosniff on its 400s."""

    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    max_connections: int = 256
    _last_refusal_log: float = float("-inf")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            now = time.monotonic()
            if now - GuardedH11Protocol._last_refusal_log >= REFUSAL_LOG_INTERVAL_S:
                GuardedH11Protocol._last_refusal_log = now
                log.warning("refusing connections: %d open, max_connections is %d (this warning "
                            "repeats at most every %d s)", len(self.connections) - 1,
                            self.max_connections, REFUSAL_LOG_INTERVAL_S)
            transport.write(b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n"
                            b"x-content-type-options: nosniff\r\nretry-after: 5\r\n"
                            b"connection: close\r\ncontent-length: 21\r\n\r\n"
                            b"too many connections\n")
            transport.close()
            return
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.is_closing():
            self._cancel_header_timer()
            self._cancel_body_timer()
        elif self.conn.their_state is h11.IDLE:  # still inside a request's headers
            self._arm_header_timer()
        elif self.conn.their_state is h11.SEND_BODY:  # headers in, body on its way
            self._cancel_header_timer()
            if self._body_timer is None:
                self._body_timer = self.loop.call_later(self.body_timeout_s, self._body_timeout)
        else:
            self._cancel_header_timer()
            self._cancel_body_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        self._cancel_body_timer()
        super().connection_lost(exc)

    def _cancel_body_timer(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _body_timeout(self) -> None:
        self._body_timer = None
        if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
            log.debug("closed a connection whose request body did not arrive within %.0f s",
                      self.body_timeout_s)
            if self.conn.our_state is h11.SEND_RESPONSE:  # nothing answered yet: say why
                self.transport.write(
                    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain\r\n"
                    b"x-content-type-options: nosniff\r\nconnection: close\r\n"
                    b"content-length: 41\r\n\r\nthe request body took too long to arrive\n")
            self.transport.close()

    def _arm_header_timer(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout_s, self._header_timeout)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            log.debug("closed a connection that sent no complete headers within %.0f s",
                      self.header_timeout_s)
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's own 400 (bad or oversized headers), with nosniff like every other response."""
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close"),
                   _NOSNIFF]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                      h11.Data(data=msg.encode("ascii")), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()


class CompleteBody:
    """ASGI middleware: read the whole request body (at most ``max_body_size``) before the app.

    Over the cap: ``413``. A client that disconnects before its body is complete
    is dropped here; the app (and the MCP session manager) never sees it.
    """

    def __init__(self, app: ASGIApp, max_body_size: int) -> None:
        self.app = app
        self.max_body_size = max_body_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_body_size:
            await _too_large(self.max_body_size)(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":  # gone mid-body: nothing to answer
                log.debug("a client left before its request body was complete")
                return
            body += message.get("body", b"")
            if len(body) > self.max_body_size:
                await _too_large(self.max_body_size)(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        pending: deque[Message] = deque([{"type": "http.request", "body": bytes(body),
                                          "more_body": False}])

        async def replay() -> Message:
            return pending.popleft() if pending else await receive()

        await self.app(scope, replay, send)


def _too_large(limit: int) -> PlainTextResponse:
    return PlainTextResponse(f"request body too large; accepted: at most {limit} bytes\n", 413)
