"""In-process checks of the MCP layer's own rules (path gate, errors, sections, truncation note)."""

from __future__ import annotations

import asyncio
import logging
import re
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


@given(st.lists(st.text(string.ascii_letters + "._-", min_size=1, max_size=6), min_size=1, max_size=5))
def test_every_document_lies_in_each_group_it_is_listed_under(parts):
    """resources/list lists groups only, and every document is reachable from one."""
    path = "/".join(parts)
    groups = topic_prefixes(path)
    assert groups and len(groups) <= 2 and path not in groups
    for group in groups:
        assert (group == "" and "/" not in path) or path.startswith(group + "/")


def test_topic_prefixes_are_one_or_two_folders():
    assert topic_prefixes("a/b/c/d.md") == ["a", "a/b"]
    assert topic_prefixes("a/d.md") == ["a"]
    assert topic_prefixes("top.md") == [""]  # the root group, kb://topic/


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


def test_best_practice_serves_only_what_get_document_serves(tmp_path, write_files, make_kb):
    from groove.server.mcp import build_mcp_server

    kb_dir = write_files(tmp_path / "kb", {
        "guides/ok.md": "# OK\n\nThe ok guide.\n",
        "guides/.git/y.md": "# Y\n\nGIT-INTERNAL\n",
        "guides/node_modules/x.md": "# X\n\nVENDORED\n",
        "guides/.obsidian/z.md": "# Z\n\nEDITOR-STATE\n",
        "guides/private.md": "# P\n\nIGNORED-BY-GROOVEIGNORE\n",
        ".grooveignore": "guides/private.md\n",
    })
    kb = make_kb(kb_dir, best_practice={"path_templates": ["guides/{target}.md"]},
                 exclude_dirs=[".obsidian"])
    kb.index()
    (kb_dir / "guides" / "later.md").write_text("# Later\n\nNOT-INDEXED-YET\n")
    targets = [".git/y", "node_modules/x", ".obsidian/z", "private", "later"]

    async def go():
        async with Client(build_mcp_server(kb)) as client:
            ok = await client.call_tool("get_best_practice", {"target": "ok"})
            refused = [await client.call_tool("get_best_practice", {"target": t}) for t in targets]
            docs = [await client.call_tool("get_document", {"path": f"guides/{t}.md"})
                    for t in targets]
            return ok, refused, docs

    ok, refused, docs = asyncio.run(go())
    assert not ok.is_error and "The ok guide." in ok.content[0].text
    for target, result, doc in zip(targets, refused, docs, strict=True):
        text = result.content[0].text
        assert result.is_error and "no best-practice document" in text, (target, text)
        assert doc.is_error, target
        for marker in ("GIT-INTERNAL", "VENDORED", "EDITOR-STATE", "IGNORED-BY", "NOT-INDEXED"):
            assert marker not in text and marker not in doc.content[0].text


def test_a_path_template_that_climbs_out_is_refused_when_the_config_loads(tmp_path):
    from groove.config import load_config
    from groove.errors import ConfigError

    (tmp_path / "groove.toml").write_text('[best_practice]\npath_templates = ["../{target}.md"]\n')
    with pytest.raises(ConfigError, match=r"path_templates.*'\.\.'"):
        load_config(kb_path=tmp_path, cwd=tmp_path)


def _envelope(result) -> str:
    """The error message of a failed call, checked to be GrooveSeek's envelope in both bodies."""
    import json

    assert result.is_error
    assert len(result.content) == 1
    body = json.loads(result.content[0].text)
    assert body == result.structured_content and set(body) == {"error"}
    assert not body["error"].startswith("Error executing tool")
    return body["error"]


def test_a_failed_call_answers_the_error_envelope(server_kb, make_kb):
    from groove.server.mcp import build_mcp_server

    kb = make_kb(server_kb.kb)

    async def go():
        async with Client(build_mcp_server(kb)) as client:
            return {
                "bounds": await client.call_tool("search", {"query": "setup", "limit": 0}),
                "path": await client.call_tool("get_document", {"path": "../x.md"}),
                "unknown_arg": await client.call_tool("search", {"query": "setup", "limt": 3}),
                "unknown_args": await client.call_tool("list_topics", {"b": 1, "a": 2}),
                "unknown_tool": await client.call_tool("serch", {"query": "x"}),
                "ok": await client.call_tool("search", {"query": "setup", "limit": 1}),
            }

    out = asyncio.run(go())
    assert _envelope(out["bounds"]).startswith("limit: 0 is out of range; accepted:")
    assert "climbs out" in _envelope(out["path"])
    limt = _envelope(out["unknown_arg"])
    assert limt.startswith("search does not take limt (did you mean limit?); accepted arguments: "
                           "query, limit")
    assert _envelope(out["unknown_args"]) == "list_topics does not take a, b; accepted arguments: none"
    assert _envelope(out["unknown_tool"]).startswith("unknown tool 'serch' (did you mean search?); "
                                                     "available: ")
    assert not out["ok"].is_error and "error" not in out["ok"].structured_content


def test_an_internal_failure_keeps_the_envelope_without_details(server_kb, make_kb):
    from groove.server.mcp import build_mcp_server

    kb = make_kb(server_kb.kb)

    def broken(_request):
        raise RuntimeError("internal detail /secret/path")

    kb.search = broken  # type: ignore[method-assign]

    async def go():
        async with Client(build_mcp_server(kb)) as client:
            return await client.call_tool("search", {"query": "setup"})

    message = _envelope(asyncio.run(go()))
    assert "internal error" in message and "secret" not in message


def test_rebuild_index_arguments_are_strict_and_its_busy_answer_has_no_cli_advice(
        tmp_path, write_files, make_kb):
    from groove.server.mcp import build_mcp_server
    from groove.store.writer_lock import WriterLock

    kb = make_kb(write_files(tmp_path / "kb", {"a.md": "# A\n\nheron notes\n"}))

    async def call(arguments: dict):
        async with Client(build_mcp_server(kb)) as client:
            return await client.call_tool("rebuild_index", arguments)

    for force in ("yes", 1, "true"):
        result = asyncio.run(call({"force": force}))
        text = "".join(c.text for c in result.content)
        assert result.is_error and "force: expected" in text and "true or false" in text
    assert not kb.has_index()  # refused before any work: nothing was built

    with WriterLock(kb.db_path).hold():  # another writer (its own open file description)
        result = asyncio.run(call({}))
    text = "".join(c.text for c in result.content)
    assert result.is_error and "is being written by" in text
    assert "--no-wait" not in text and "try again when it has finished" in text


_SEGMENT = st.text(alphabet="ab", min_size=1, max_size=2)


@given(st.lists(st.lists(_SEGMENT, min_size=1, max_size=4).map("/".join), unique=True,
                max_size=30))
def test_the_folder_tree_counts_every_document_below_each_folder(paths):
    """Guarantee: a folder's file_count is the number of documents under it, at every depth."""
    from groove.server.tools import folder_tree

    def walk(nodes, prefix):
        for node in nodes:
            folder = prefix + node["segment"] + "/"
            assert node["file_count"] == sum(p.startswith(folder) for p in paths)
            assert [c["segment"] for c in node["children"]] == sorted(
                c["segment"] for c in node["children"])
            walk(node["children"], folder)

    tree = folder_tree(paths)
    walk(tree, "")
    assert sum(n["file_count"] for n in tree) == sum("/" in p for p in paths)


def test_documents_are_served_with_the_mime_type_of_their_text(tmp_path, make_kb):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "parsers"))
    from office_files import make_pdf, make_pptx

    from groove.server.mcp import build_mcp_server, document_mime

    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    (kb_dir / "note.md").write_text("# Note\n\nmarkdown text about widgets\n", encoding="utf-8")
    (kb_dir / "plain.txt").write_text("plain text about widgets\n", encoding="utf-8")
    (kb_dir / "paper.pdf").write_bytes(make_pdf([["a pdf page about widgets, long enough to count as a text layer and not a scan"]]))
    (kb_dir / "deck.pptx").write_bytes(make_pptx([("Widgets", "a slide about widgets", None)]))
    kb = make_kb(kb_dir, parsers={"enabled": ["md", "txt", "pdf", "pptx"]})
    kb.index()

    async def go():
        async with Client(build_mcp_server(kb)) as client:
            return {name: (await client.read_resource(f"kb://doc/{name}")).contents[0]
                    for name in ("note.md", "plain.txt", "paper.pdf", "deck.pptx")}

    out = asyncio.run(go())
    assert out["note.md"].mime_type == "text/markdown"
    for name in ("plain.txt", "paper.pdf", "deck.pptx"):
        assert out[name].mime_type == "text/plain" and "widgets" in out[name].text, name
    assert document_mime("a/B.MARKDOWN") == "text/markdown"
    assert document_mime("x.PDF") == document_mime("x.docx") == "text/plain"


def test_a_wrongly_typed_argument_is_one_line_naming_it(server_kb, make_kb):
    from groove.server.mcp import build_mcp_server

    kb = make_kb(server_kb.kb)

    async def go():
        async with Client(build_mcp_server(kb)) as client:
            return [await client.call_tool(name, args) for name, args in (
                ("get_document", {"path": 5}), ("get_document", {}),
                ("get_best_practice", {"target": ["x"]}))]

    wrong, missing, listed = (_envelope(r) for r in asyncio.run(go()))
    accepted = ("accepted arguments: path (string), line_start (integer), line_end (integer), "
                "max_lines (integer), start_line (integer), end_line (integer)")
    assert wrong == f"get_document: path must be a string, got int 5; {accepted}"
    assert missing == f"get_document: path is required (a string); {accepted}"
    assert listed.startswith("get_best_practice: target must be a string, got list ['x']")
    for message in (wrong, missing, listed):
        assert "\n" not in message and "validation error" not in message and "pydantic" not in message


@given(st.lists(st.text(string.ascii_letters + "._-", min_size=1, max_size=6)
                .filter(lambda s: s not in (".", "..")), min_size=1, max_size=4),
       st.sampled_from(["./{}", "{}/", "dup", "./dup/"]))
def test_one_spelling_per_document(parts, variant):
    """GrooveSeek v1.12: the canonical path is accepted as it is; every other spelling of
    it is refused, naming the canonical one."""
    from groove.paths import check_doc_path

    path = "/".join(parts)
    try:
        assert check_doc_path(path) == path
    except PathRefused as exc:  # a name that cannot travel: refused whatever the spelling
        assert "cannot travel" in str(exc)
        return
    if variant == "dup":
        other = path.replace("/", "//") if "/" in path else f"./{path}"
    elif variant == "./dup/":
        other = "./" + path.replace("/", "//") + "/"
    else:
        other = variant.format(path)
    with pytest.raises(PathRefused, match=f"write '{re.escape(path)}'"):
        check_doc_path(other)
