"""multi_get over a real index: caps, order, globs, line windows and what the answer says."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groove.documents.read import multi_get
from groove.documents.request import DEFAULT_DOCUMENT_BYTES, DEFAULT_TOTAL_BYTES, GetRequest
from groove.errors import InvalidArgument

NOTES = {
    "guides/setup.md": "# Setup\n\n" + "".join(f"Step {i}: run the bootstrap script.\n" for i in range(1, 61)),
    "guides/rust/async.md": "# Async\n\nSpawn tasks with Tokio.\n",
    "日本語/お茶.md": "# お茶\n\n" + "急須にお湯を注ぎ、一分待ちます。\n" * 40,
    "one-line.md": "# Long\n\n" + "é" * 5000,
}


@pytest.fixture(scope="module")
def kb(tmp_path_factory, embedder):
    from groove.config import load_config
    from groove.kb import KnowledgeBase

    root = tmp_path_factory.mktemp("multi")
    folder = root / "kb"
    for rel, text in NOTES.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    knowledge = KnowledgeBase(load_config(kb_path=folder, cwd=root), embedder=embedder)
    knowledge.index()
    yield knowledge
    knowledge.close()


def _file(kb, rel: str) -> str:
    return Path(kb.kb_path / rel).read_text(encoding="utf-8")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(1, 3000), st.integers(1, 6000),
       st.lists(st.sampled_from(["**/*.md", "guides/setup.md:5", "日本語/お茶.md",
                                 "one-line.md", "guides/**"]), min_size=1, max_size=4))
def test_caps_are_never_exceeded_and_every_text_is_the_files_own_lines(kb, per, total, entries):
    answer = multi_get(kb, GetRequest(paths=entries, max_bytes=per, max_total_bytes=total))
    sizes = [len(d["text"].encode("utf-8")) for d in answer["documents"]]
    assert all(size <= per for size in sizes) and sum(sizes) <= total
    assert answer["bytes"] == sum(sizes)
    assert len({(d["path"], d["line_start"]) for d in answer["documents"]}) == len(sizes)
    for doc in answer["documents"]:
        lines = _file(kb, doc["path"]).split("\n")
        start = "\n".join(lines[doc["line_start"] - 1:])
        assert start.startswith(doc["text"])  # the file's own text, from line_start, not cut in a character
        whole = start == doc["text"] or start.rstrip("\n") == doc["text"].rstrip("\n")
        assert ("cut" in doc) is not whole
        if "cut" in doc:
            assert doc["next_line"] == doc["line_start"] + doc["text"].count("\n")
    cut = [d for d in answer["documents"] if "cut" in d]
    assert bool(cut or answer["not_returned_count"]) == ("note" in answer)


def test_a_glob_returns_its_documents_by_path_with_the_cut_stated(kb):
    answer = multi_get(kb, GetRequest(paths=["guides/**/*.md"], max_bytes=300))
    assert [d["path"] for d in answer["documents"]] == ["guides/rust/async.md", "guides/setup.md"]
    whole, cut = answer["documents"]
    assert whole["text"] == _file(kb, "guides/rust/async.md") and "cut" not in whole
    assert cut["text"].endswith("\n") and cut["line_start"] == 1
    assert cut["next_line"] == cut["line_end"] + 1 == len(cut["text"].splitlines()) + 1
    assert (f"text cut at 300 bytes (max_bytes) after line {cut['line_end']} of 62; ask for "
            f"'guides/setup.md:{cut['next_line']}' for the rest") == cut["cut"]
    assert answer["note"] == "1 of 2 document(s) cut at max_bytes (300 bytes each)"


def test_the_total_cap_lists_what_it_left_out(kb):
    first = len(NOTES["guides/rust/async.md"].encode())
    answer = multi_get(kb, GetRequest(paths=["**/*.md"], max_total_bytes=first + len("# Setup\n\n")))
    assert [d["path"] for d in answer["documents"]] == ["guides/rust/async.md", "guides/setup.md"]
    assert answer["documents"][1]["text"] == "# Setup\n\n"
    assert "max_total_bytes" in answer["documents"][1]["cut"]
    assert answer["not_returned"] == ["one-line.md", "日本語/お茶.md"]
    assert answer["not_returned_count"] == 2
    assert "2 more document(s) not returned" in answer["note"]


def test_a_line_in_the_path_and_a_line_too_long_for_the_cap(kb):
    window = multi_get(kb, GetRequest(paths=["guides/setup.md:10-12"]))["documents"][0]
    assert window["text"] == "\n".join(f"Step {i}: run the bootstrap script." for i in (8, 9, 10))
    assert (window["line_start"], window["line_end"], window["lines"]) == (10, 12, 62)
    blank_end = multi_get(kb, GetRequest(paths=["guides/setup.md:1-2"]))["documents"][0]
    assert (blank_end["text"], blank_end["line_end"]) == ("# Setup\n", 2)  # line 2 is empty
    long_line = multi_get(kb, GetRequest(paths=["one-line.md:3"], max_bytes=101))["documents"][0]
    assert long_line["text"] == "é" * 50 and long_line["bytes"] == 100  # 101 would split an é
    assert "inside line 3, which is longer than 101 bytes" in long_line["cut"]
    assert long_line["next_line"] == 3


def test_bad_entries_are_reported_and_the_rest_returned(kb):
    answer = multi_get(kb, GetRequest(paths=["../etc/passwd", "nope.md", "guides/setup.md:99",
                                             "none/**", "guides/rust/async.md"]))
    assert [d["path"] for d in answer["documents"]] == ["guides/rust/async.md"]
    errors = {e["entry"]: e["error"] for e in answer["errors"]}
    assert "climbs out" in errors["../etc/passwd"]
    assert "not an indexed document" in errors["nope.md"]
    assert errors["guides/setup.md:99"] == ("line_start: 99 is past the end of 'guides/setup.md' "
                                            "(62 lines); accepted: 1..62")
    assert "matches no indexed document" in errors["none/**"]
    assert "4 entries could not be read" in answer["note"]


def test_the_request_bounds():
    assert (GetRequest(paths=["a.md"]).max_bytes, GetRequest(paths=["a.md"]).max_total_bytes) == (
        DEFAULT_DOCUMENT_BYTES, DEFAULT_TOTAL_BYTES)
    with pytest.raises(InvalidArgument, match="paths: lists nothing"):
        GetRequest(paths=[])
    with pytest.raises(InvalidArgument, match="max_bytes: 0 is out of range; accepted: an integer"):
        GetRequest(paths=["a.md"], max_bytes=0)
    with pytest.raises(InvalidArgument, match="is not a valid glob"):
        GetRequest(paths=["[z-a]*.md"])
    with pytest.raises(InvalidArgument, match="expected"):
        GetRequest(paths="a.md")
