"""What keeps a /mcp call close to in-process speed (docs/deployment.md, "Latency")."""

from __future__ import annotations

import asyncio
import socket

import httpx
from test_http import INIT, MCP_HEADERS

from groove.config import BindAddress
from groove.server.http import bind_socket


def test_accepted_connections_get_tcp_nodelay():
    """Without TCP_NODELAY, Nagle holds a response body behind its headers until
    the client's delayed ACK (~40 ms per call); asyncio sets it only when the
    listening socket says it is TCP."""

    async def accepted_nodelay() -> int:
        sock = bind_socket(BindAddress("127.0.0.1", 0))
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                accepted = transport.get_extra_info("socket")
                seen.set_result(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

        server = await asyncio.get_running_loop().create_server(Probe, sock=sock)
        _reader, writer = await asyncio.open_connection(*sock.getsockname()[:2])
        try:
            return await asyncio.wait_for(seen, 10)
        finally:
            writer.close()
            server.close()

    assert asyncio.run(accepted_nodelay()) == 1


def test_a_request_is_answered_with_one_json_body(http_server):
    response = httpx.post(http_server.mcp_url, json=INIT, headers=MCP_HEADERS, timeout=30)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["result"]["serverInfo"]["name"] == "groove"
