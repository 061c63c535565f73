"""Server test fixtures: a copied KB with hostile entries, and real server processes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _helpers import (
    RunningServer,
    ServerKB,
    build_hostile_kb,
    start_http_server,
    stop_server,
)


@pytest.fixture(scope="session")
def server_kb(tmp_path_factory, embedder) -> ServerKB:
    """The hostile KB of :func:`build_hostile_kb`, indexed once per session."""
    from groove.config import load_config
    from groove.kb import KnowledgeBase

    hostile = build_hostile_kb(tmp_path_factory.mktemp("serverkb"))
    knowledge = KnowledgeBase(load_config(config_path=hostile.config), embedder=embedder)
    try:
        knowledge.index()
    finally:
        knowledge.close()
    return hostile


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
