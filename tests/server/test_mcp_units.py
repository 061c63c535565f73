"""In-process checks of the MCP layer's own rules (path gate, errors, sections, truncation note)."""

from __future__ import annotations

import asyncio
import logging
import string
from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client

from groove.errors import PathRefused
from groove.paths import check_rel_path, doc_uri, topic_prefixes
from groove.server.tools import document_json, markdown_section


@given(st.lists(st.sampled_from(["a", "b.md", "..", ".", "", "%2e%2e", "%2E%2e", "x%00", "~"]),
                min_size=1, max_size=6))
def test_path_gate_never_lets_a_climb_through(parts):
    path = "/".join(parts)
    try:
        out = check_rel_path(path)
    except PathRefused:
        return
    decoded = unquote(out)
    assert ".." not in decoded.split("/") and "\x00" not in decoded
    assert not out.startswith(("/", "~"))


@given(st.text(min_size=1).filter(lambda s: "\x00" not in s))
def test_doc_uri_round_trips_through_decoding(name):
    path = f"notes/{name}.md"
    uri = doc_uri(path)
    assert unquote(uri.removeprefix("kb://doc/")) == path
    assert set(uri.removeprefix("kb://doc/")) <= set(string.ascii_letters + string.digits + "-._~/%")


def test_topic_prefixes_are_one_or_two_folders():
    assert topic_prefixes("a/b/c/d.md") == ["a", "a/b"]
    assert topic_prefixes("a/d.md") == ["a"]
    assert topic_prefixes("top.md") == ["top.md"]


def test_markdown_section_stops_at_the_next_heading():
    text = "# T\n\nintro\n\n## Levels\n\nuse info\n\n### Sub\n\nkept\n\n## Other\n\ngone\n"
    assert markdown_section(text, "levels", "x.md") == "## Levels\n\nuse info\n\n### Sub\n\nkept\n"
    with pytest.raises(Exception, match="sections: Levels, Other"):
        markdown_section(text, "Missing", "x.md")


def test_truncated_document_carries_a_note(server_kb, make_kb):
    from groove.kb import DocumentText

    kb = make_kb(server_kb.kb)
    row = kb.store.get_document("guides/setup.md")
    out = document_json(DocumentText(row, "cut", True))
    assert out["truncated"] is True and "truncated at 1048576 bytes" in out["note"]
    assert "note" not in document_json(DocumentText(row, "all", False))


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_unexpected_exception_is_a_generic_tool_error(server_kb, make_kb):
    from groove.server.mcp import build_mcp_server

    kb = make_kb(server_kb.kb)
    records = _Records()
    logging.getLogger("groove.server").addHandler(records)

    def broken(_request):
        raise RuntimeError("internal detail /secret/path")

    kb.search = broken  # type: ignore[method-assign]

    async def go():
        async with Client(build_mcp_server(kb)) as client:
            return (await client.call_tool("search", {"query": "setup"}),
                    await client.call_tool("list_topics", {}))

    try:
        failed, after = asyncio.run(go())
    finally:
        logging.getLogger("groove.server").removeHandler(records)
    text = "".join(c.text for c in failed.content)
    assert failed.is_error and "internal error" in text
    assert "secret" not in text and "Traceback" not in text and "RuntimeError" not in text
    assert not after.is_error
    assert any(r.exc_info and "internal detail" in str(r.exc_info[1]) for r in records.records)


def test_best_practice_without_templates_says_not_configured(server_kb, make_kb):
    from groove.server.mcp import build_mcp_server

    kb = make_kb(server_kb.kb)  # no config file: no path_templates

    async def go():
        async with Client(build_mcp_server(kb)) as client:
            return await client.call_tool("get_best_practice", {"target": "logging"})

    result = asyncio.run(go())
    assert result.is_error and "not configured" in result.content[0].text


def test_graph_tool_reports_a_missing_module(server_kb, make_kb, monkeypatch):
    import sys

    from groove.server.mcp import build_mcp_server

    monkeypatch.setitem(sys.modules, "groove.graph", None)
    kb = make_kb(server_kb.kb)

    async def go():
        async with Client(build_mcp_server(kb)) as client:
            return await client.call_tool("get_connection_graph", {"start": "guides/setup.md"})

    result = asyncio.run(go())
    assert result.is_error and "not available in this build" in result.content[0].text
