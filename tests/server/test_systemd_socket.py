"""Socket activation (docs/deployment.md, 'Socket activation'): ``groove serve --systemd-socket``
started by Debian's real ``systemd-socket-activate`` on a TCP port and on a Unix socket,
answering MCP over the socket it inherited; and every refusal, from a real process."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import httpx
import httpx2
import pytest
from _helpers import free_port, groove_cmd
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.skipif(shutil.which("systemd-socket-activate") is None,
                                reason="systemd-socket-activate (Debian's systemd) is missing")


def activate(listen: str, kb: Path, log: Path, *extra: str,
             datagram: bool = False) -> subprocess.Popen:
    """``systemd-socket-activate -l LISTEN groove serve --systemd-socket``: the socket is bound
    by systemd's tool; groove starts on the first connection and inherits it as fd 3."""
    # the tool hands its child a small environment: pass on what selects the groove under test
    passed = [f"--setenv={name}" for name in ("PYTHONPATH", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                                              "GROOVE_MODEL_CACHE") if name in os.environ]
    cmd = ["systemd-socket-activate", *(["--datagram"] if datagram else []), *passed,
           "-l", listen,
           *groove_cmd("serve", "--systemd-socket", "--kb-path", str(kb), "--no-watch", *extra)]
    with log.open("wb") as err:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=err, env=dict(os.environ))


def wait_healthy(client: httpx.Client, url: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        try:
            if client.get(url, timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise AssertionError(f"no answer in 90 s:\n{log.read_text()}")


async def search_over(url: str, http_client: httpx2.AsyncClient) -> dict:
    async with http_client, Client(streamable_http_client(url, http_client=http_client)) as client:
        result = await client.call_tool("search", {"query": "self-test workbench"})
        assert not result.is_error
        return result.structured_content


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@pytest.fixture
def indexed_kb(server_kb) -> Path:
    assert subprocess.run(groove_cmd("index", "--config", str(server_kb.config), "-q"),
                          capture_output=True).returncode == 0
    return server_kb.kb


def test_mcp_over_an_inherited_tcp_socket(indexed_kb, tmp_path):
    port = free_port()
    proc = activate(f"127.0.0.1:{port}", indexed_kb, tmp_path / "tcp.log")
    try:
        with httpx.Client() as http:
            wait_healthy(http, f"http://127.0.0.1:{port}/healthz", proc, tmp_path / "tcp.log")
        answer = asyncio.run(search_over(f"http://127.0.0.1:{port}/mcp", httpx2.AsyncClient()))
        assert answer["results"][0]["path"] == "guides/setup.md"
        log = (tmp_path / "tcp.log").read_text()
        assert f"serving MCP on http://127.0.0.1:{port}/mcp" in log
    finally:
        stop(proc)


def test_mcp_over_an_inherited_unix_socket(indexed_kb, tmp_path):
    path = tmp_path / "groove.sock"
    proc = activate(str(path), indexed_kb, tmp_path / "unix.log")
    try:
        with httpx.Client(transport=httpx.HTTPTransport(uds=str(path))) as http:
            wait_healthy(http, "http://localhost/healthz", proc, tmp_path / "unix.log")
            # no peer address on a Unix socket: the socket's mode decided, so /ui is served
            assert http.get("http://localhost/ui").status_code == 200
            assert http.get("http://localhost/healthz",
                            headers={"Host": "evil.example"}).status_code in (200, 403)
            refused = http.post("http://localhost/mcp", headers={"Host": "evil.example"},
                                json={})
            assert refused.status_code == 403
        client = httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(uds=str(path)))
        answer = asyncio.run(search_over("http://localhost/mcp", client))
        assert answer["results"][0]["path"] == "guides/setup.md"
        assert path.exists(), "groove must not unlink the service manager's socket"
    finally:
        stop(proc)


def run_serve(*args: str, env: dict[str, str] | None = None,
              pass_fds: tuple[int, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run(groove_cmd("serve", *args), capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})}, pass_fds=pass_fds,
                          stdin=subprocess.DEVNULL)


def test_an_address_of_its_own_is_refused_beside_the_socket(indexed_kb, tmp_path):
    for extra in (["--port", "3999"], ["--bind", "127.0.0.1:3999"], ["--transport", "stdio"]):
        done = run_serve("--systemd-socket", "--kb-path", str(indexed_kb), *extra)
        assert done.returncode == 2 and "--systemd-socket" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    config = tmp_path / "groove.toml"
    config.write_text(f'kb_path = "{indexed_kb}"\n[transport.http]\nbind = "127.0.0.1:3999"\n'
                      "systemd_socket = true\n")
    done = run_serve("--config", str(config))
    assert done.returncode == 2 and "[transport.http] bind" in done.stderr


def test_without_a_handover_serve_refuses_and_never_listens(indexed_kb):
    done = run_serve("--systemd-socket", "--kb-path", str(indexed_kb), "--no-watch")
    assert done.returncode == 2 and "LISTEN_PID is not set" in done.stderr
    done = run_serve("--systemd-socket", "--kb-path", str(indexed_kb), "--no-watch",
                     env={"LISTEN_PID": "1", "LISTEN_FDS": "1"})
    assert done.returncode == 2 and "inherited from another process" in done.stderr


def test_two_descriptors_or_a_datagram_socket_are_refused(indexed_kb, tmp_path):
    port = free_port()
    proc = activate(f"127.0.0.1:{port}", indexed_kb, tmp_path / "two.log", datagram=True)
    try:
        deadline = time.monotonic() + 120
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            while proc.poll() is None and time.monotonic() < deadline:
                udp.sendto(b"wake", ("127.0.0.1", port))  # lost until the tool has bound
                time.sleep(0.5)
        assert proc.wait(5) == 2
        log = (tmp_path / "two.log").read_text()
        assert "is a datagram socket, expected a stream socket" in log
    finally:
        stop(proc)
    # LISTEN_FDS=2, by hand: a shell sets LISTEN_PID to the pid groove has after exec
    done = subprocess.run(
        ["sh", "-c", 'LISTEN_PID=$$ LISTEN_FDS=2 exec "$@"', "sh",
         *groove_cmd("serve", "--systemd-socket", "--kb-path", str(indexed_kb), "--no-watch")],
        capture_output=True, text=True, timeout=120, env=dict(os.environ),
        stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "LISTEN_FDS is '2', expected '1'" in done.stderr
