"""resources/list_changed reaches connected clients when the watcher changes the documents.

Real `groove serve` processes with the watcher on, the official client in
both protocol eras: the 2025 handshake (notification on the connection's
standing channel) and 2026-07-28 (`subscriptions/listen`), over Streamable
HTTP and over stdio.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from _helpers import FIXTURE_KB, groove_cmd, write_config
from mcp import Client, StdioServerParameters

LIST_CHANGED = "notifications/resources/list_changed"
WAIT_S = 30


@pytest.fixture
def live_kb(tmp_path, embedder) -> tuple[Path, Path]:
    """A small indexed KB of its own (the tests add and remove files) and its config."""
    from groove.config import load_config
    from groove.kb import KnowledgeBase

    kb = tmp_path / "kb"
    shutil.copytree(FIXTURE_KB / "notes", kb / "notes")
    config = write_config(tmp_path / "groove.toml", kb, extra="\n[watch]\ndebounce_ms = 50\n")
    knowledge = KnowledgeBase(load_config(config_path=config), embedder=embedder)
    try:
        knowledge.index()
    finally:
        knowledge.close()
    return kb, config


def _method(message: Any) -> str | None:
    return getattr(message, "method", None) or getattr(getattr(message, "root", None), "method", None)


class Seen:
    """A message handler that counts list_changed notifications."""

    def __init__(self) -> None:
        self.count = 0
        self.event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if _method(message) == LIST_CHANGED:
            self.count += 1
            self.event.set()

    async def next(self) -> None:
        with anyio.fail_after(WAIT_S):
            await self.event.wait()
        self.event = anyio.Event()


def add_doc(kb: Path, name: str = "fresh/new-topic.md") -> Path:
    path = kb / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# Brand new\n\nA document that appeared while serving.\n", encoding="utf-8")
    return path


async def _handshake_era(target: Any, kb: Path, change: Callable[[], object]) -> tuple[Any, int]:
    seen = Seen()
    async with Client(target, mode="legacy", message_handler=seen) as client:
        capabilities = client.session.server_capabilities
        await client.list_resources()
        change()
        await seen.next()
        return capabilities, seen.count


async def _listen_era(target: Any, kb: Path, change: Callable[[], object]) -> bool:
    async with Client(target) as client, client.listen(resources_list_changed=True) as sub:
        change()
        with anyio.fail_after(WAIT_S):
            event = await sub.__anext__()
        return type(event).__name__ == "ResourcesListChanged"


def indexed_paths(config: Path) -> list[str]:
    """The documents the server's index holds now (read beside the server, as another reader)."""
    from groove.config import load_config
    from groove.kb import KnowledgeBase

    knowledge = KnowledgeBase(load_config(config_path=config))
    try:
        return [d.path for d in knowledge.list_documents()]
    finally:
        knowledge.close()


def test_http_handshake_client_hears_add_rename_and_remove(live_kb, server_factory):
    kb, config = live_kb
    server = server_factory(config)
    doc = kb / "fresh" / "new-topic.md"

    async def go() -> int:
        seen = Seen()
        async with Client(server.mcp_url, mode="legacy", message_handler=seen) as client:
            assert client.session.server_capabilities.resources.list_changed is True

            async def listed() -> set[str]:
                await client.list_resources()  # the client's view is served, too
                return set(indexed_paths(config))

            async def heard_until(done: Callable[[set[str]], bool]) -> None:
                # A rename's two halves may reach the watcher in one batch or in two;
                # either way every change is announced and the listing converges.
                with anyio.fail_after(WAIT_S):
                    while True:
                        await seen.next()
                        if done(await listed()):
                            return

            await listed()  # a round trip: the standing channel is open after the handshake
            add_doc(kb)
            await heard_until(lambda uris: any(u.endswith("new-topic.md") for u in uris))
            doc.rename(doc.with_name("renamed.md"))
            await heard_until(lambda uris: any(u.endswith("renamed.md") for u in uris)
                              and not any(u.endswith("new-topic.md") for u in uris))
            doc.with_name("renamed.md").unlink()
            await heard_until(lambda paths: not any("fresh" in p for p in paths))
            return seen.count

    assert anyio.run(go) >= 3


def test_http_listen_client_hears_a_new_document(live_kb, server_factory):
    kb, config = live_kb
    server = server_factory(config)
    assert anyio.run(_listen_era, server.mcp_url, kb, lambda: add_doc(kb))


def _stdio(config: Path) -> StdioServerParameters:
    cmd = groove_cmd("serve", "--config", str(config))
    # The SDK starts stdio servers with a minimal environment; keep PYTHONPATH so
    # the server runs the groove under test.
    return StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ))


def test_stdio_handshake_client_hears_a_removed_document(live_kb):
    kb, config = live_kb
    capabilities, count = anyio.run(_handshake_era, _stdio(config), kb,
                                    lambda: (kb / "notes" / "markup.md").unlink())
    assert capabilities.resources.list_changed is True and count >= 1


def test_stdio_listen_client_hears_a_new_document(live_kb):
    kb, config = live_kb
    assert anyio.run(_listen_era, _stdio(config), kb, lambda: add_doc(kb))


def test_content_edits_alone_do_not_notify(live_kb, server_factory):
    """Only the document set matters to resources/list; an edit then an add gives one notice."""
    kb, config = live_kb
    server = server_factory(config)

    async def go() -> int:
        seen = Seen()
        async with Client(server.mcp_url, mode="legacy", message_handler=seen) as client:
            await client.list_resources()
            note = kb / "notes" / "unicode.md"
            note.write_text(note.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
            add_doc(kb)  # the marker: its notice arrives after the edit was synced
            await seen.next()
            return seen.count

    assert anyio.run(go) == 1
