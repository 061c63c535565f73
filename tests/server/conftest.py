"""Server test fixtures: a copied KB with hostile entries, and real server processes."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _helpers import (
    FIXTURE_KB,
    SECRET,
    RunningServer,
    ServerKB,
    start_http_server,
    stop_server,
    write_config,
)


@pytest.fixture(scope="session")
def server_kb(tmp_path_factory, embedder) -> ServerKB:
    """The fixture KB plus a symlink and a hard link that point at a file outside it; indexed."""
    from groove.config import load_config
    from groove.kb import KnowledgeBase

    root = tmp_path_factory.mktemp("serverkb")
    kb = root / "kb"
    shutil.copytree(FIXTURE_KB, kb)
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Secret\n\n{SECRET}\n", encoding="utf-8")
    os.symlink(outside / "secret.md", kb / "notes" / "link.md")
    os.link(outside / "secret.md", kb / "notes" / "hard.md")
    (kb / "notes" / "binary.exe").write_bytes(b"MZ\x00\x00")
    config = write_config(root / "groove.toml", kb)
    knowledge = KnowledgeBase(load_config(config_path=config), embedder=embedder)
    try:
        knowledge.index()
    finally:
        knowledge.close()
    return ServerKB(root, kb, config, outside)


@pytest.fixture(scope="session")
def http_server(server_kb, tmp_path_factory) -> Iterator[RunningServer]:
    server = start_http_server(server_kb.config, tmp_path_factory.mktemp("logs"))
    yield server
    stop_server(server)


@pytest.fixture
def server_factory(tmp_path) -> Iterator[Callable[..., RunningServer]]:
    started: list[RunningServer] = []

    def start(config: Path, *extra: str, port: int | None = None) -> RunningServer:
        server = start_http_server(config, tmp_path, *extra, port=port)
        started.append(server)
        return server

    yield start
    for server in started:
        stop_server(server)
