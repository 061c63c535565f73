"""Helpers shared by the server tests: config files and real `groove serve` processes."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

FIXTURE_KB = Path(__file__).parent.parent / "fixtures" / "server" / "kb"
SECRET = "TOP-SECRET-OUTSIDE-THE-KB"


@dataclass
class ServerKB:
    root: Path
    kb: Path
    config: Path
    outside: Path


def build_hostile_kb(root: Path) -> ServerKB:
    """The fixture KB copied to ``root/kb``, plus what a hostile KB holds.

    A symlink (``notes/link.md``) and a hard link (``notes/hard.md``) to
    ``root/outside/secret.md``, whose text is :data:`SECRET`, and a binary file
    with an extension no parser handles (``notes/binary.exe``). Not indexed.
    """
    kb = root / "kb"
    shutil.copytree(FIXTURE_KB, kb)
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Secret\n\n{SECRET}\n", encoding="utf-8")
    os.symlink(outside / "secret.md", kb / "notes" / "link.md")
    os.link(outside / "secret.md", kb / "notes" / "hard.md")
    (kb / "notes" / "binary.exe").write_bytes(b"MZ\x00\x00")
    return ServerKB(root, kb, write_config(root / "groove.toml", kb), outside)


def write_config(path: Path, kb: Path, *, max_sessions: int = 256, extra: str = "") -> Path:
    path.write_text(
        f'kb_path = "{kb.as_posix()}"\n\n'
        '[best_practice]\npath_templates = ["best-practices/{target}.md", "guides/{target}.md"]\n\n'
        f"[transport.http]\nmax_sessions = {max_sessions}\n" + extra,
        encoding="utf-8",
    )
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class RunningServer:
    proc: subprocess.Popen
    port: int
    stderr_path: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def mcp_url(self) -> str:
        return self.base + "/mcp"

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None and httpx.get(self.base + "/healthz").status_code == 200


def groove_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "groove", *args]


def start_http_server(config: Path, log_dir: Path, *extra: str, port: int | None = None,
                      env: dict[str, str] | None = None,
                      preexec_fn: Callable[[], None] | None = None) -> RunningServer:
    """``env`` adds to the environment; ``preexec_fn`` runs in the child (e.g. to lower limits)."""
    port = port or free_port()
    stderr_path = log_dir / f"server-{port}.log"
    with stderr_path.open("wb") as err:
        proc = subprocess.Popen(
            groove_cmd("serve", "--config", str(config), "--transport", "http",
                       "--bind", f"127.0.0.1:{port}", *extra),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
            env={**os.environ, **(env or {})}, preexec_fn=preexec_fn,
        )
    server = RunningServer(proc, port, stderr_path)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited with {proc.returncode}:\n{server.stderr()}")
        try:
            if httpx.get(server.base + "/healthz", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    stop_server(server)
    raise AssertionError(f"server did not come up in 60 s:\n{server.stderr()}")


def stop_server(server: RunningServer) -> None:
    if server.proc.poll() is None:
        server.proc.terminate()
        try:
            server.proc.wait(10)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait(5)
