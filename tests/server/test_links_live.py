"""Links through a running `groove serve` and a real MCP client: the links tool, get_document's
links and backlinks, and the watcher keeping them current on rename and delete."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _helpers import write_config
from mcp import Client

VAULT = Path(__file__).parent.parent / "fixtures" / "vault"
DEBOUNCE_MS = 100
#: The watcher's debounce plus an index run of one file, with room for a loaded machine.
DEADLINE_S = 20.0


def call(url: str, tool: str, args: dict[str, Any]) -> Any:
    async def go() -> Any:
        async with Client(url) as client:
            return await client.call_tool(tool, args)

    return asyncio.run(go())


def wait_for(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"not within {DEADLINE_S:.0f} s: {what}")


def backlinks(url: str, path: str) -> list[tuple[str, str | None]] | None:
    """``(linking document, heading)`` of the links to ``path``; None: not indexed (yet)."""
    result = call(url, "links", {"path": path, "backlinks": True})
    if result.is_error:
        return None
    return sorted(((link["source"], link["heading"])
                   for link in result.structured_content["links"]),
                  key=lambda pair: (pair[0], pair[1] or ""))


def test_backlinks_over_mcp_follow_a_rename_and_a_delete(tmp_path, embedder, server_factory):
    from groove.config import load_config
    from groove.kb import KnowledgeBase

    vault = Path(shutil.copytree(VAULT, tmp_path / "vault"))
    config = write_config(tmp_path / "groove.toml", vault)
    kb = KnowledgeBase(load_config(config_path=config), embedder=embedder)
    try:
        kb.index()
    finally:
        kb.close()
    server = server_factory(config, "--debounce-ms", str(DEBOUNCE_MS))
    url = server.mcp_url

    # get_document: its links, resolved, and who links to it.
    doc = call(url, "get_document", {"path": "api/retries.md"})
    assert not doc.is_error
    body = doc.structured_content
    assert [(link["target"], link["path"], link["heading"]) for link in body["links"]] == [
        ("Rate limiting", "Rate limiting.md", "Quotas")]
    assert {link["source"] for link in body["backlinks"]} == {
        "Home.md", "Rate limiting.md", "api/client.md", "api/overview.md", "guides/overview.md"}
    quoted = next(link for link in body["backlinks"] if link["source"] == "Rate limiting.md")
    assert quoted["line"] and quoted["heading"] == "Backoff"

    # The links tool, both ways; an unresolved link says why.
    out = call(url, "links", {"path": "Home.md"}).structured_content
    assert out["direction"] == "outgoing" and out["total"] == 12
    problems = {link["target"]: link.get("problem") for link in out["links"]}
    assert problems["Missing note"] == "missing" and problems["overview"] == "ambiguous"
    refused = call(url, "links", {"path": "../outside.md"})
    assert refused.is_error and "'..'" in refused.content[0].text
    unknown = call(url, "links", {"path": "Home.md", "backlinks": "yes"})
    assert unknown.is_error and "backlinks" in unknown.content[0].text

    # A rename under the running server: what linked to the note by name follows it.
    before = backlinks(url, "ops/runbook.md")
    assert [source for source, _ in before].count("Home.md") == 2
    (vault / "ops" / "runbook.md").rename(vault / "ops" / "on-call.md")
    # [[ops/runbook]] and ../../ops/runbook.md now miss; nothing resolves to the new name.
    wait_for(lambda: backlinks(url, "ops/on-call.md") == [], "the renamed note, no backlinks")
    home = call(url, "links", {"path": "Home.md"}).structured_content["links"]
    assert {link["path"] for link in home if link["target"].startswith("ops/runbook")} == {None}
    # Moved into another folder under the same name: the links by name follow it.
    (vault / "api" / "retries.md").rename(vault / "guides" / "retries.md")
    wait_for(lambda: ("api/client.md", "Backoff") in (backlinks(url, "guides/retries.md") or ()),
             "[[retries#Backoff]] follows the moved note")
    moved = backlinks(url, "guides/retries.md") or []
    assert ("Home.md", None) in moved  # [[retries.md]], by name
    assert ("Home.md", "Backoff") not in moved  # [[api/retries#Backoff]], by path: missing

    # A delete: the links to it point at no document.
    (vault / "Rate limiting.md").unlink()
    wait_for(lambda: call(url, "links", {"path": "Rate limiting.md"}).is_error,
             "the deleted note gone")
    home = call(url, "links", {"path": "Home.md"}).structured_content["links"]
    gone = [link for link in home if link["target"] in ("Rate limiting", "Throttling")]
    assert gone and all(link["path"] is None and link["problem"] == "missing" for link in gone)
