"""Starting groove for a benchmark: the command, a free loopback port, and waiting for
``/healthz`` (shared by run.py and mcp_overhead.py)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time


def groove_cmd() -> list[str]:
    exe = shutil.which("groove")
    return [exe] if exe else [sys.executable, "-m", "groove"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(server: subprocess.Popen[bytes], port: int, timeout: float = 60) -> str | None:
    """Poll ``/healthz`` until the server answers; the reason when it exits or never does."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            err = server.stderr.read().decode()[-1500:] if server.stderr else ""
            return f"server exited {server.returncode}: {err}"
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return None
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    return f"server not healthy within {timeout:.0f} s"
