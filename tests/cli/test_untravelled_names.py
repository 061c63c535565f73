"""Names that cannot travel (docs/indexing.md): left out of the index with a warning each and
a count, refused by get_document over MCP, reported by doctor."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client, StdioServerParameters

from groove.paths import travel_problem

NOTES = {
    "good/plan.md": "# Plan\n\nThe storm shelter plan for the harbour.\n",
    "CON.md": "# Con\n\nThe storm shelter plan copy one.\n",
    "ask?.md": "# Ask\n\nThe storm shelter plan copy two.\n",
    "draft./plan.md": "# Draft\n\nThe storm shelter plan copy three.\n",
}


def test_index_leaves_them_out_and_doctor_names_them(kb_dir, run):
    result = run("index", "--kb-path", str(kb_dir), "--json")
    summary = json.loads(result.stdout)
    assert (summary["indexed"], summary["skipped"]) == (1, 3)
    for name in ("CON.md", "ask?.md", "draft."):
        assert result.stderr.count(name) >= 1 and "cannot travel" in result.stderr
    found = json.loads(run("search", "storm shelter plan", "--kb-path", str(kb_dir),
                           "--format", "json", "--limit", "10").stdout)
    assert {hit["path"] for hit in found["results"]} == {"good/plan.md"}
    doctor = json.loads(run("doctor", "--kb-path", str(kb_dir), "--format", "json").stdout)
    named = {f["path"] for f in doctor["findings"] if "cannot travel" in f["message"]}
    assert named == {"CON.md", "ask?.md", "draft."}  # a folder is left out whole


def test_get_document_refuses_such_a_name_before_touching_the_disk(kb_dir, run):
    assert run("index", "--kb-path", str(kb_dir), "-q").exit_code == 0
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "groove", "serve", "--kb-path", str(kb_dir),
                                      "--no-watch"], env=dict(os.environ))

    async def go():
        async with Client(server) as client:
            return (await client.call_tool("get_document", {"path": "CON.md"}),
                    await client.call_tool("get_document", {"path": "good/plan.md"}))

    refused, served = asyncio.run(go())
    assert refused.is_error and "cannot travel" in refused.content[0].text
    assert not served.is_error


@pytest.mark.parametrize("name", ["CON", "con.md", "Lpt1.txt", "a/aux.tar.md", "x./a.md",
                                  "a /b.md", "a:b.md", 'say"hi".md', "a|b.md", "a*b.md",
                                  "a<b.md", "tab\t.md"])
def test_names_windows_cannot_open_are_refused(name):
    assert travel_problem(name) is not None


@given(st.lists(st.text(alphabet="abcXYZ019_-", min_size=1, max_size=8), min_size=1,
                max_size=4))
def test_ordinary_names_travel(segments):
    """Guarantee: letters, digits, '-' and '_' with a plain extension always travel,
    unless the stem is a reserved device name."""
    path = "/".join(segments) + ".md"
    reserved = {"CON", "PRN", "AUX", "NUL"} | {f"COM{i}" for i in range(1, 10)} | {
        f"LPT{i}" for i in range(1, 10)}
    expected_bad = any(seg.upper() in reserved for seg in segments)
    assert (travel_problem(path) is not None) == expected_bad


_SEGMENT = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="/\\"), min_size=1,
                   max_size=8)


@given(st.lists(_SEGMENT, min_size=1, max_size=3), st.data())
def test_a_forbidden_character_or_trailing_dot_anywhere_makes_a_name_refused(segments, data):
    """Guarantee: one character from < > : " | ? * or below U+0020 in any segment, or a
    segment ending in a dot or a space, refuses the whole path, at every gate that asks."""
    from groove.paths import PathRefused, check_doc_path

    where = data.draw(st.integers(0, len(segments) - 1))
    spoil = data.draw(st.sampled_from([*'<>:"|?*', "\x00", "\x1f", "\t", "end.", "end "]))
    segment = segments[where]
    if spoil.startswith("end"):
        segments[where] = segment + spoil[-1]
    else:
        at = data.draw(st.integers(0, len(segment)))
        segments[where] = segment[:at] + spoil + segment[at:]
    path = "/".join(segments)
    assert travel_problem(path) is not None
    with pytest.raises(PathRefused):
        check_doc_path(path)


def test_a_row_an_earlier_version_stored_is_reported_then_swept(kb_dir, run):
    """A row under such a name (as an index from before the rule could hold) is named by
    doctor from the index alone, and the next `groove index` removes it."""
    import sqlite3

    assert run("index", "--kb-path", str(kb_dir), "-q").exit_code == 0
    with sqlite3.connect(kb_dir / ".groove.db") as conn:
        conn.execute("UPDATE documents SET path = 'old/LPT1.md' WHERE path = 'good/plan.md'")
    doctor = json.loads(run("doctor", "--kb-path", str(kb_dir), "--format", "json").stdout)
    held = [f for f in doctor["findings"] if f["path"] == "old/LPT1.md"]
    assert len(held) == 1 and "cannot travel" in held[0]["message"]
    assert run("index", "--kb-path", str(kb_dir), "-q").exit_code == 0
    doctor = json.loads(run("doctor", "--kb-path", str(kb_dir), "--format", "json").stdout)
    assert "old/LPT1.md" not in {f["path"] for f in doctor["findings"]}
    found = json.loads(run("search", "storm shelter plan", "--kb-path", str(kb_dir),
                           "--format", "json").stdout)
    assert {hit["path"] for hit in found["results"]} == {"good/plan.md"}
