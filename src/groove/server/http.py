"""Streamable HTTP transport and the small admin surface (docs/deployment.md, 'HTTP transport').

Routes: ``/mcp`` (the SDK's Streamable HTTP app, with the SDK's own
Host/Origin gate, body limit and session cap), ``/healthz``, and the
loopback-only ``/ui`` and ``/api/admin/status``.

What the SDK does not do, done here in one ASGI wrapper:
``X-Content-Type-Options: nosniff`` on every response, and the session cap
answered as 429 with ``Retry-After`` (the SDK answers 503 without it).
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import logging
import socket
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from groove._logging import note
from groove.config.bind import BindAddress
from groove.errors import ConfigError, GrooveError
from groove.server import refusals
from groove.server.http_limits import CompleteBody
from groove.server.state import ServerState

if TYPE_CHECKING:
    from groove.config import Config
    from groove.kb import KnowledgeBase

log = logging.getLogger("groove.server.http")

MAX_BODY_BYTES = 1024 * 1024
#: Seconds a refused client is asked to wait: sessions free up on DELETE or idle expiry.
RETRY_AFTER_S = 30
SESSION_IDLE_TIMEOUT_S = 15 * 60

UI_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_STATIC = {"ui.js": "text/javascript; charset=utf-8", "ui.css": "text/css; charset=utf-8"}


def is_loopback_peer(host: str | None) -> bool:
    """True for a loopback client address (127/8, ::1, and IPv4-mapped ::ffff:127.x)."""
    if not host:
        return False
    try:
        addr = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return addr.is_loopback


_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def security_settings(config: Config, address: BindAddress | None) -> TransportSecuritySettings:
    """The DNS-rebinding gate: configured allow-lists, else loopback names + the bind address.

    ``address`` None is a Unix socket: no port to name, so the defaults are the
    loopback names with any port or none (an allow-list is never left empty:
    empty would mean "do not check").
    """
    http = config.transport.http
    if address is None:
        names = ["[::1]" if h == "::1" else h for h in _LOOPBACK_NAMES]
        loopback = [*names, *(f"{n}:*" for n in names)]
    else:
        loopback = [str(address._replace(host=h)) for h in _LOOPBACK_NAMES]
    hosts = http.allowed_hosts
    if not hosts:
        hosts = loopback if address is None or str(address) in loopback \
            else [*loopback, str(address)]
    origins = http.allowed_origins
    if not origins:
        origins = [f"http://{netloc}" for netloc in loopback]
    refusals.install()  # the gate's refusals: one line a minute, no caller bytes
    # lower-cased like the request's headers (lowercase_names): host names ignore case
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=[h.lower() for h in hosts],
                                     allowed_origins=[o.lower() for o in origins])


#: Request headers whose value is a host name (case-insensitive, RFC 3986 3.2.2).
_HOST_HEADERS = (b"host", b"origin")


def lowercase_names(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``Host`` and ``Origin`` lower-cased, so ``Host: LOCALHOST:3100`` is the loopback name.

    Both carry only a scheme, a host name and a port, all case-insensitive;
    the DNS-rebinding gate compares them to its allow-lists exactly.
    """
    return [(k, v.lower()) if k.lower() in _HOST_HEADERS else (k, v) for k, v in headers]


#: What the SDK's DNS-rebinding gate answers a refused ``Host`` with.
MISDIRECTED = 421


class _ResponseHeaders:
    """nosniff everywhere; Host/Origin compared case-insensitively; the SDK's
    session-cap 503 becomes 429 + Retry-After; its refused-Host 421 becomes 403,
    as GrooveSeek answers it and as every other refusal of the gate is."""

    def __init__(self, app: ASGIApp, mcp_path: str = "/mcp") -> None:
        self.app = app
        self.mcp_path = mcp_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope = {**scope, "headers": lowercase_names(scope["headers"])}
        opening = scope["path"].rstrip("/") == self.mcp_path and not any(
            k == b"mcp-session-id" for k, _ in scope["headers"])

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])
                           if k.lower() != b"x-content-type-options"]
                headers.append((b"x-content-type-options", b"nosniff"))
                if opening and message["status"] == 503:
                    message = {**message, "status": 429}
                    headers.append((b"retry-after", str(RETRY_AFTER_S).encode()))
                elif message["status"] == MISDIRECTED:  # the SDK's refused Host
                    message = {**message, "status": 403}
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def build_http_app(kb: KnowledgeBase, *, state: ServerState | None = None,
                   address: BindAddress | None = None, unix: bool = False) -> Starlette:
    """The whole HTTP surface as one Starlette app (``address`` defaults to the config's bind).

    ``unix``: served on a Unix socket, whose owner and mode already decided who
    may connect; the admin routes then need no loopback peer (there is no peer
    address), and the Host/Origin gate takes the port-less loopback defaults.
    """
    from groove.server.mcp import build_mcp_server

    config = kb.config
    http = config.transport.http
    state = state or ServerState(kb)
    address = None if unix else (address or http.address)
    settings = security_settings(config, address)
    gate = TransportSecurityMiddleware(settings)
    if state.collections is not None:
        from groove.server.collections_mcp import build_collections_server

        server = build_collections_server(state.collections, state)
    else:
        server = build_mcp_server(kb, state)

    async def admin_refusal(request: Request) -> Response | None:
        """Loopback peers only, and the same Host/Origin gate as /mcp."""
        peer = request.client.host if request.client else None
        if not unix and not is_loopback_peer(peer):
            return PlainTextResponse("this page is only served to loopback clients", 403)
        return await gate.validate_request(request)

    @server.custom_route("/healthz", methods=["GET"])
    async def healthz(request: Request) -> Response:
        if not http.healthz_public and (refused := await admin_refusal(request)):
            return refused
        return JSONResponse({"status": "ok"})

    @server.custom_route("/api/admin/status", methods=["GET"])
    async def admin_status(request: Request) -> Response:
        if refused := await admin_refusal(request):
            return refused
        body = await anyio.to_thread.run_sync(state.status)
        return JSONResponse(body, headers={"Cache-Control": "no-store"})

    @server.custom_route("/", methods=["GET"])
    async def root(request: Request) -> Response:
        """A person who opens the server's address in a browser lands on the page."""
        if refused := await admin_refusal(request):
            return refused
        return RedirectResponse("/ui", status_code=307)

    @server.custom_route("/ui", methods=["GET"])
    async def ui(request: Request) -> Response:
        if refused := await admin_refusal(request):
            return refused
        return Response(_static_text("ui.html"), media_type="text/html; charset=utf-8",
                        headers=_ui_headers())

    @server.custom_route("/ui/{name}", methods=["GET"])
    async def ui_asset(request: Request) -> Response:
        if refused := await admin_refusal(request):
            return refused
        name = request.path_params["name"]
        if name not in _STATIC:
            return PlainTextResponse("not found", 404)
        return Response(_static_text(name), media_type=_STATIC[name], headers=_ui_headers())

    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        # One JSON body per POST instead of an event stream: no tool sends progress or
        # asks the client anything mid-call, and server-initiated notifications
        # (resources/list_changed) travel on the GET stream / subscriptions/listen,
        # which stay event streams (docs/deployment.md, "Latency").
        json_response=True,
        max_request_body_size=MAX_BODY_BYTES,
        max_sessions=http.max_sessions,
        session_idle_timeout=SESSION_IDLE_TIMEOUT_S,
        transport_security=settings,
        host="localhost" if address is None else address.host,
    )
    app.add_middleware(CompleteBody, max_body_size=MAX_BODY_BYTES)
    # Outermost, outside even Starlette's error handler, so its 500s get nosniff too.
    inner_stack = app.build_middleware_stack
    app.build_middleware_stack = lambda: _ResponseHeaders(inner_stack())  # type: ignore[method-assign]
    app.state.groove = state
    return app


def _ui_headers() -> dict[str, str]:
    return {"Content-Security-Policy": UI_CSP, "X-Frame-Options": "DENY",
            "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}


def _static_text(name: str) -> str:
    return resources.files("groove.server").joinpath("static", name).read_text(encoding="utf-8")


def bind_socket(address: BindAddress) -> socket.socket:
    """Bind the listening socket ourselves, so "port in use" is a clear error at start.

    The protocol is given explicitly (``IPPROTO_TCP``, not 0): asyncio only sets
    ``TCP_NODELAY`` on accepted sockets whose ``proto`` says TCP, and without it
    Nagle's algorithm holds a response body behind its headers until the
    client's delayed ACK, ~40 ms on every MCP call (docs/deployment.md, "Latency").
    """
    family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(tuple(address))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise GrooveError(f"port {address.port} is in use — is another groove running? "
                              f"(stop it, or pick another port with --port)") from None
        raise GrooveError(f"cannot listen on {address}: {exc.strerror}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


@dataclass(frozen=True)
class Listener:
    """A listening socket and its TCP address (None: a Unix socket, ``path`` its file)."""

    address: BindAddress | None
    sock: socket.socket
    path: str | None = None

    def describe(self) -> str:
        return f"http://{self.address}" if self.address is not None else \
            f"unix:{self.path or '(unnamed)'} (HTTP)"


def _check_reach(address: BindAddress, i_know: bool) -> None:
    if not address.is_loopback and not i_know:
        raise ConfigError(
            f"refusing to listen on non-loopback address {address.host}: groove has no "
            "authentication, anyone who reaches the port reads the knowledge base. Pass "
            "--i-know to do it anyway.")


def open_listener(address: BindAddress, i_know: bool) -> Listener:
    """Check and bind ``address``: non-loopback needs ``i_know``; a busy port fails."""
    _check_reach(address, i_know)
    return Listener(address, bind_socket(address))


def adopt_listener(i_know: bool) -> Listener:
    """The socket systemd passed (:mod:`groove.server.systemd_socket`), under the same
    reach rule as a bind: an inherited non-loopback TCP socket needs ``i_know`` too."""
    from groove.server.systemd_socket import take_inherited_socket

    inherited = take_inherited_socket()
    if inherited.address is not None:
        try:
            _check_reach(inherited.address, i_know)
        except ConfigError:
            inherited.sock.detach()  # the descriptor stays the service manager's
            raise
    return Listener(inherited.address, inherited.sock, inherited.path)


def serve_http(kb: KnowledgeBase, listener: Listener, *, state: ServerState | None = None) -> None:
    """Serve on an already bound ``listener`` until interrupted."""
    import uvicorn

    from groove.server.http_limits import (
        ACCEPT_BURST,
        connection_cap,
        fd_soft_limit,
        fds_needed,
        guarded_protocol,
        loop_exception_handler,
    )

    app = build_http_app(kb, state=state, address=listener.address,
                         unix=listener.address is None)
    sock = listener.sock
    http = kb.config.transport.http
    cap = connection_cap(http.max_connections, fd_soft_limit(fds_needed(http.max_connections)))
    if cap < http.max_connections:
        log.warning("max_connections lowered from %d to %d to stay below the open-file limit",
                    http.max_connections, cap)
    note(log, "serving MCP on %s/mcp (UI: /ui)", listener.describe())
    uv_config: Any = uvicorn.Config(
        app, log_config=None, access_log=False, lifespan="on", timeout_graceful_shutdown=3,
        http=guarded_protocol(header_timeout_s=http.header_timeout_s, max_connections=cap,
                              body_timeout_s=http.body_timeout_s),
        timeout_keep_alive=http.keepalive_timeout_s, backlog=ACCEPT_BURST)
    server = uvicorn.Server(uv_config)

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(loop_exception_handler)
        await server.serve(sockets=[sock])

    asyncio.run(main())
