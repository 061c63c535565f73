"""Three collections (Markdown EN, Markdown JA, Python) served by one process, over stdio.

The SDK's stdio client spawns ``groove serve`` with a groove.toml naming the
three; each question is answered from the collection that holds it, named in
the hit, and read back through ``get_document`` and the hit's URI. Searching
one collection gives the same first five hits as that collection's own
single-folder server.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from _helpers import groove_cmd, start_http_server, stop_server
from mcp import Client, StdioServerParameters

from _browser import launch_browser, needs_chromium, wait_for_answer

FIXTURES = Path(__file__).parent.parent / "fixtures" / "collections"
CODE_PARSERS = 'parsers.enabled = ["python"]\n'
TABLES = {"notes-en": "", "notes-ja": "", "code": CODE_PARSERS}
#: Per collection: a question, the file and section that answer it, and a word of the answer.
QUESTIONS = {
    "notes-en": ("how often should a sourdough starter be fed", "sourdough.md",
                 "Feeding schedule", "five parts flour"),
    "notes-ja": ("緑茶を淹れるお湯は何度がいい", "ryokucha.md", "お湯の温度", "七十度"),
    "code": ("function computing the area of a polygon", "geometry.py", "polygon_area",
             "shoelace"),
}


@pytest.fixture(scope="module")
def served(tmp_path_factory, embedder) -> Path:
    """The three folders, their groove.toml and one single-folder groove.toml each, indexed."""
    from groove.config import load_settings
    from groove.kb import KnowledgeBase

    root = tmp_path_factory.mktemp("collections")
    text = ""
    for name, extra in TABLES.items():
        shutil.copytree(FIXTURES / name, root / name)
        text += f'[collections.{name}]\nkb_path = "{name}"\n{extra}\n'
        (root / f"single-{name}.toml").write_text(f'kb_path = "{name}"\n{extra}')
    (root / "groove.toml").write_text(text)
    configs = load_settings(config_path=root / "groove.toml")
    assert isinstance(configs, dict)
    for config in configs.values():
        kb = KnowledgeBase(config, embedder=embedder)
        try:
            kb.index()
        finally:
            kb.close()
    return root


def params(config: Path) -> StdioServerParameters:
    cmd = groove_cmd("serve", "--config", str(config), "--no-watch")
    return StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ),
                                 cwd=str(config.parent))


def top(result: Any) -> list[tuple[str, str | None, str]]:
    assert not result.is_error, result.content
    return [(h["path"], h["heading"], h["content"])
            for h in result.structured_content["results"]]


def test_one_process_answers_from_each_collection_naming_it(served: Path) -> None:
    async def go() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(params(served / "groove.toml")) as client:
            out["tools"] = {t.name: t.input_schema for t in (await client.list_tools()).tools}
            for name, (question, *_rest) in QUESTIONS.items():
                hit = (await client.call_tool("search", {"query": question}))\
                    .structured_content["results"][0]
                doc = await client.call_tool("get_document", {"path": hit["path"],
                                                              "collection": hit["collection"]})
                resource = await client.read_resource(hit["uri"])
                out[name] = (hit, doc.structured_content, resource.contents[0].text)
            out["no_collection"] = await client.call_tool("get_document",
                                                          {"path": "geometry.py"})
            out["resources"] = [str(r.uri) for r in (await client.list_resources()).resources]
        return out

    out = asyncio.run(go())
    for name, (_question, path, heading, word) in QUESTIONS.items():
        hit, doc, resource = out[name]
        assert (hit["collection"], hit["path"], hit["heading"]) == (name, path, heading)
        assert hit["uri"] == f"groove://{name}/{path}"
        assert word in hit["content"] and word in doc["text"] and word in resource
        assert doc["uri"] == hit["uri"]  # the document's own URI names its collection too
    assert out["tools"]["get_document"]["properties"]["collection"]["enum"] == list(TABLES)
    refused = out["no_collection"]
    assert refused.is_error
    assert "collection is required" in refused.structured_content["error"]
    assert out["resources"] == [f"groove://{name}/" for name in TABLES]


def test_one_collection_gives_its_own_servers_top_five(served: Path) -> None:
    async def search(config: Path, arguments: dict[str, Any]) -> list[Any]:
        async with Client(params(config)) as client:
            return top(await client.call_tool("search", arguments))

    for name, (question, *_rest) in QUESTIONS.items():
        together = asyncio.run(search(served / "groove.toml",
                                      {"query": question, "limit": 5, "collection": [name]}))
        alone = asyncio.run(search(served / f"single-{name}.toml", {"query": question,
                                                                    "limit": 5}))
        assert together == alone and len(alone) >= 3, name


def test_http_status_lists_each_collection_watched_and_the_page_offers_them(served: Path,
                                                                            tmp_path: Path) -> None:
    server = start_http_server(served / "groove.toml", tmp_path)
    try:
        deadline = time.monotonic() + 30
        while True:  # the watchers start beside the server
            status = httpx.get(server.base + "/api/admin/status").json()
            states = {n: s["watcher"] for n, s in status["collections"].items()}
            if set(states.values()) == {"watching"} or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        page = httpx.get(server.base + "/ui").text
        script = httpx.get(server.base + "/ui/ui.js").text
    finally:
        stop_server(server)
    assert list(status["collections"]) == list(TABLES)
    assert states == dict.fromkeys(TABLES, "watching")  # one watcher per collection
    assert {n: s["documents"] for n, s in status["collections"].items()} == dict.fromkeys(TABLES, 3)
    assert {s["kb_path"] for s in status["collections"].values()} == set(TABLES)  # names only
    assert 'id="collection"' in page and "offerCollections" in script


@needs_chromium
def test_the_page_searches_the_collection_picked(served: Path, tmp_path: Path) -> None:
    server = start_http_server(served / "groove.toml", tmp_path, "--no-watch")
    try:
        for browser in launch_browser():
            page = browser.new_context().new_page()
            page.goto(server.base + "/ui")
            page.wait_for_selector("#collection:not([hidden])", timeout=15_000)
            assert page.locator("#collection option").all_text_contents() == [
                "all collections", *TABLES]
            page.select_option("#collection", "notes-en")
            page.fill("#q", QUESTIONS["code"][0])  # asked of the collection that lacks it
            page.click("button[type=submit]")
            wait_for_answer(page)
            named = page.locator("#results .hit-collection").all_text_contents()
            address = page.url
    finally:
        stop_server(server)
    assert named and set(named) == {"notes-en"}
    assert "collection=notes-en" in address  # the choice is in the address, as every filter
