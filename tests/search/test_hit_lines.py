"""Every hit can be opened at path:line: prose hits carry their lines, both spellings of a
line range come back and are accepted, and source files are tagged and kinded the way their
language names things. Real indexing of small knowledge bases."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from groove.search.request import SearchRequest

WINTER = ("From November to March only two ferries cross each day, one in the morning and "
          "one in the afternoon; both are cancelled when the wind blows harder than force eight.")
FILES = {
    "ops/timetable.md": f"""
        ---
        title: Ferry timetable
        tags: [ops]
        ---

        # Timetable

        The first ferry leaves the harbour at six in the morning, every day of the week.
        The last one leaves the island at ten in the evening.

        ## Winter crossings

        {WINTER}
        """,
    "notes/readme.txt": "Plain notes about the harbour office and its opening hours.\n",
    "src/shapes.rs": """
        /// A point on the map of the harbour.
        pub struct Point { x: f64, y: f64 }

        /// Anything that has an area on the map.
        pub trait Area {
            fn area(&self) -> f64;
        }

        impl Point {
            /// How far this point lies from the harbour master's office.
            pub fn distance_to_office(&self) -> f64 {
                (self.x * self.x + self.y * self.y).sqrt()
            }
        }
        """,
    "src/berths.py": '''
        class Berth:
            """One mooring place in the harbour."""

            def reserve(self, boat):
                """Reserve this mooring place for a visiting boat."""
                self.boat = boat
        ''',
}


@pytest.fixture
def harbour(make_kb, write_files, tmp_path):
    root = write_files(tmp_path / "kb", FILES)
    kb = make_kb(root, parsers={"enabled": ["md", "txt", "py", "rust"]})
    kb.index()
    return kb


def _file_lines(kb, path):
    return (kb.kb_path / path).read_text().split("\n")


def test_a_prose_hit_carries_the_lines_of_its_chunk_in_the_file(harbour):
    hit = harbour.search(SearchRequest(query="how many ferries run in winter", limit=1,
                                       path_globs=["ops/**"])).results[0]
    assert hit.heading == "Winter crossings"
    lines = _file_lines(harbour, hit.path)
    assert (hit.line_start, hit.line_end) == (13, 13)  # counted from the frontmatter's first line
    assert lines[hit.line_start - 1].strip() == WINTER
    assert hit.location() == "ops/timetable.md:13"
    data = hit.to_json()
    assert (data["line_start"], data["line_end"], data["start_line"], data["end_line"]) == (
        13, 13, 13, 13)


def test_a_plain_text_hit_has_lines_too(harbour):
    hit = harbour.search(SearchRequest(query="harbour office opening hours", limit=1,
                                       path_globs=["notes/**"])).results[0]
    assert (hit.path, hit.line_start, hit.line_end) == ("notes/readme.txt", 1, 1)


def test_source_files_are_tagged_with_their_language(harbour):
    rust = harbour.search(SearchRequest(query="harbour", limit=10, tags_any=["lang:rust"]))
    assert rust.results and {h.path for h in rust.results} == {"src/shapes.rs"}
    assert "lang:python" in harbour.read_document("src/berths.py").document.tags
    prose = harbour.read_document("ops/timetable.md").document.tags
    assert not any(tag.startswith("lang:") for tag in prose)


@pytest.mark.parametrize(("kind", "query", "expected"), [
    ("struct", "a point on the map", ("src/shapes.rs", "Point")),
    ("trait", "something with an area", ("src/shapes.rs", "Area")),
    ("method", "how far from the harbour master's office", ("src/shapes.rs",
                                                            "distance_to_office")),
    ("class", "one mooring place in the harbour", ("src/berths.py", "Berth")),
])
def test_the_symbol_kind_filter_takes_the_languages_own_words(harbour, kind, query, expected):
    hits = harbour.search(SearchRequest(query=query, limit=3, symbol_kind=[kind])).results
    assert [(h.path, h.heading, h.symbol_kind) for h in hits][:1] == [(*expected, kind)]


def test_a_rust_struct_is_no_longer_a_class(harbour):
    hits = harbour.search(SearchRequest(query="a point on the map", limit=10,
                                        symbol_kind=["class"])).results
    assert "Point" not in {h.heading for h in hits}


def test_mcp_search_and_get_document_speak_both_spellings_of_a_line_range(harbour):
    from mcp import Client

    from groove.server.mcp import build_mcp_server

    async def go():
        async with Client(build_mcp_server(harbour)) as client:
            found = await client.call_tool("search", {"query": "how many ferries run in winter",
                                                      "path_globs": ["ops/**"], "limit": 1})
            hit = found.structured_content["results"][0]
            by_alias = await client.call_tool("get_document", {
                "path": hit["path"], "start_line": hit["start_line"],
                "end_line": hit["end_line"]})
            by_name = await client.call_tool("get_document", {
                "path": hit["path"], "line_start": hit["line_start"],
                "line_end": hit["line_end"]})
            both = await client.call_tool("get_document", {
                "path": hit["path"], "line_start": 2, "start_line": 3})
            several = await client.call_tool("multi_get", {"paths": [f"{hit['path']}:13"]})
            return hit, by_alias, by_name, both, several

    hit, by_alias, by_name, both, several = asyncio.run(go())
    assert (hit["line_start"], hit["line_end"]) == (hit["start_line"], hit["end_line"]) == (13, 13)
    doc = by_alias.structured_content
    assert doc["text"] == WINTER and doc == by_name.structured_content
    assert (doc["line_start"], doc["line_end"], doc["start_line"], doc["end_line"]) == (
        13, 13, 13, 13)
    assert both.is_error and "line_start (2) and start_line (3) disagree" in both.content[0].text
    part = several.structured_content["documents"][0]
    assert (part["line_start"], part["start_line"], part["end_line"]) == (13, 13, 13)


def test_an_index_built_before_prose_lines_gets_them_on_its_next_run(harbour):
    """The Markdown and text parsers changed their rule: an index that recorded the old one
    re-reads their unchanged files once, and its prose chunks gain their lines."""
    with sqlite3.connect(harbour.config.db_path) as conn:
        conn.execute("UPDATE chunks SET line_start = NULL, line_end = NULL WHERE doc_id IN"
                     " (SELECT id FROM documents WHERE language IS NULL)")
        conn.execute("UPDATE index_meta SET value = '{}' WHERE key = 'parser_policies'")
    harbour.close()
    before = harbour.search(SearchRequest(query="how many ferries run in winter", limit=1,
                                          path_globs=["ops/**"])).results[0]
    assert before.line_start is None
    harbour.index()
    after = harbour.search(SearchRequest(query="how many ferries run in winter", limit=1,
                                         path_globs=["ops/**"])).results[0]
    assert (after.line_start, after.line_end) == (13, 13)
