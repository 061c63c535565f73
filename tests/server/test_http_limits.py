"""Slow clients against a real `groove serve --transport http` with a lowered descriptor limit.

The red-team's reproduction: 600 connections trickling header bytes with the
open-file limit at 512 made the server exit. Here the limit is 256 and 300
slow clients connect (more than the limit allows), trickling a byte each
every 0.2 s for a bounded time. Expected: the excess is refused at once with
503, the others are closed by the header timeout while still trickling, a
client connected before the flood keeps being served, and afterwards the
server answers new clients.
"""

from __future__ import annotations

import resource
import socket
import sys
import time
from collections.abc import Callable

import httpx
import pytest
from _helpers import start_http_server, stop_server, write_config

from groove.server.http_limits import ACCEPT_BURST, RESERVED_FDS, connection_cap, fds_needed

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_NOFILE is POSIX")

FD_LIMIT = 256
SLOW_CLIENTS = 300
DEADLINE_S = 20.0


def _limit_fds() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))


def _trickle(socks: list[socket.socket], next_byte: Callable[[int], bytes],
             established: httpx.Client) -> tuple[list[bytes], bool, int]:
    """Send ``next_byte(turn)`` on every open socket each 0.2 s until the server answers or
    closes each, or DEADLINE_S passes. Returns the replies (``b""``: closed without one),
    whether ``established`` was served meanwhile, and how many were never closed."""
    replies: list[bytes] = []
    open_socks = list(socks)
    served = False
    turn = 0
    deadline = time.monotonic() + DEADLINE_S
    while open_socks and time.monotonic() < deadline:
        still = []
        for sock in open_socks:
            try:
                reply: bytes | None = sock.recv(4096)
            except BlockingIOError:
                reply = None
            except OSError:
                reply = b""
            if reply is not None:
                replies.append(reply)
                continue
            try:
                sock.send(next_byte(turn))
                still.append(sock)
            except OSError:
                replies.append(b"")
        turn += 1
        open_socks = still
        if not served and open_socks:
            served = established.get("/healthz").status_code == 200
        time.sleep(0.2)
    return replies, served, len(open_socks)


def test_connection_cap_stays_below_the_descriptor_limit():
    assert connection_cap(512, 1024) == 512
    assert connection_cap(512, 512) == 512 - RESERVED_FDS - 2 * ACCEPT_BURST
    assert connection_cap(512, None) == 512
    assert connection_cap(512, 10) == 1


def test_slow_header_clients_cannot_take_the_server_down(server_kb, tmp_path):
    config = write_config(tmp_path / "groove.toml", server_kb.kb, extra=(
        "header_timeout_s = 1\nkeepalive_timeout_s = 60\n"))
    server = start_http_server(config, tmp_path, "--no-watch", preexec_fn=_limit_fds)
    slow: list[socket.socket] = []
    try:
        established = httpx.Client(base_url=server.base, timeout=5)
        assert established.get("/healthz").status_code == 200
        head = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n".encode()
        for _ in range(SLOW_CLIENTS):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            sock.sendall(head)
            sock.setblocking(False)
            slow.append(sock)

        replies, served_during_flood, left = _trickle(slow, lambda _step: b"X", established)
        refused = sum(1 for reply in replies if reply.startswith(b"HTTP/1.1 503"))
        assert all(b"nosniff" in reply for reply in replies if reply)
        closed = sum(1 for reply in replies if reply == b"")
        assert not left, f"{left} trickling connections were never closed"
        assert refused + closed == SLOW_CLIENTS
        assert refused > 0 and closed >= connection_cap(512, FD_LIMIT) - 1  # all slots timed out
        assert served_during_flood
        assert server.proc.poll() is None, server.stderr()
        assert httpx.get(server.base + "/healthz", timeout=5).status_code == 200
        assert "Too many open files" not in server.stderr()
        established.close()
    finally:
        for sock in slow:
            sock.close()
        stop_server(server)


def test_groove_log_warning_silences_the_http_stack(server_kb, tmp_path):
    config = write_config(tmp_path / "groove.toml", server_kb.kb)
    server = start_http_server(config, tmp_path, "--no-watch", env={"GROOVE_LOG": "warning"})
    try:
        import asyncio

        from mcp import Client  # noqa: F401  (the client an MCP user would use)

        async def talk() -> None:

            async with Client(server.mcp_url) as client:
                await client.list_tools()

        asyncio.run(talk())
        for _ in range(3):
            httpx.get(server.base + "/healthz", timeout=5)
    finally:
        stop_server(server)
    info = [ln for ln in server.stderr().splitlines() if ln.startswith("INFO") or " INFO " in ln]
    assert info == []


def test_uvicorns_own_400_for_oversized_headers_carries_nosniff(http_server):
    with socket.create_connection(("127.0.0.1", http_server.port), timeout=10) as sock:
        sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{http_server.port}\r\n".encode())
        try:
            for _ in range(64):  # 64 separate 16 KiB pieces of one header line, never ended
                sock.sendall(b"X-Big: " + b"a" * 16_384)
        except OSError:
            pass  # the server may answer and close before all of it is sent
        reply = b""
        while b"\r\n\r\n" not in reply:
            piece = sock.recv(4096)
            if not piece:
                break
            reply += piece
    head = reply.split(b"\r\n\r\n")[0].lower()
    assert head.startswith(b"http/1.1 400") and b"x-content-type-options: nosniff" in head


def test_a_low_soft_fd_limit_is_raised_toward_what_the_connections_need():
    """macOS starts processes at 256: the server raises the soft limit as far as the hard allows."""
    import subprocess

    code = (
        "import resource\n"
        "from groove.server.http_limits import connection_cap, fd_soft_limit, fds_needed\n"
        "hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))\n"
        "print(connection_cap(512, fd_soft_limit(fds_needed(512))), hard)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    cap, hard = (int(x) for x in out.stdout.split())
    expected = 512 if hard == resource.RLIM_INFINITY or hard >= fds_needed(512) else \
        connection_cap(512, hard)
    assert cap == expected


def test_an_internal_error_500_carries_nosniff_too(server_kb, make_kb):
    """Starlette's own error handler answers outside every middleware but the outermost."""
    from starlette.testclient import TestClient

    from groove.server.http import build_http_app
    from groove.server.state import ServerState

    kb = make_kb(server_kb.kb)
    state = ServerState(kb)

    def broken_status() -> dict:
        raise RuntimeError("a bug")

    state.status = broken_status  # type: ignore[method-assign]
    client = TestClient(build_http_app(kb, state=state), base_url="http://127.0.0.1:3100",
                        raise_server_exceptions=False, client=("127.0.0.1", 5))
    response = client.get("/api/admin/status")
    assert response.status_code == 500
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "a bug" not in response.text


SLOW_BODIES = 40


def _initialize_body() -> bytes:
    import json

    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "slow", "version": "0"}}}).encode()


def test_slow_request_bodies_time_out_in_total_and_open_no_session(server_kb, tmp_path):
    """The red-team's trickled bodies, bounded: 40 clients each send an MCP ``initialize``
    one byte at a time. With ``max_sessions = 2`` a session opened per slow POST would lock
    real clients out; each slow client must get 408 (total body timeout) while a client that
    was connected before, and a new one, are served."""
    from mcp import Client

    config = write_config(tmp_path / "groove.toml", server_kb.kb, max_sessions=2, extra=(
        "header_timeout_s = 5\nbody_timeout_s = 2\nkeepalive_timeout_s = 60\n"))
    server = start_http_server(config, tmp_path, "--no-watch")
    body = _initialize_body()
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    slow: list[socket.socket] = []
    try:
        established = httpx.Client(base_url=server.base, timeout=5)
        assert established.get("/healthz").status_code == 200
        for _ in range(SLOW_BODIES):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            sock.sendall(head + body[:1])
            sock.setblocking(False)
            slow.append(sock)
        replies, served_during, left = _trickle(  # one more byte each turn: never in time
            slow, lambda step: body[1 + min(step, len(body) - 3):][:1], established)
        assert all(reply.startswith(b"HTTP/1.1 408") for reply in replies), replies[:3]
        timed_out = len(replies)
        assert not left, f"{left} trickling bodies were never cut off"
        assert timed_out == SLOW_BODIES and served_during

        async def new_client() -> bool:
            async with Client(server.base + "/mcp") as client:  # needs a free session slot
                return not (await client.call_tool("list_topics", {})).is_error

        import asyncio

        for sock in slow:  # they leave: nothing to tear down, no session was opened
            sock.close()
        assert asyncio.run(new_client()) and asyncio.run(new_client())
        assert server.proc.poll() is None, server.stderr()
        established.close()
    finally:
        for sock in slow:
            sock.close()
        stop_server(server)
