"""Parent retriever (SPEC §5): whole-document and adjacent-sibling expansion;
score, order and path unchanged; match_spans point into the expanded content."""

from __future__ import annotations

import pytest
from searchkit import Corpus, Sec, unit

from groove.search.query import query_phrases


def parent_config(corpus: Corpus, *, threshold: int = 100, cap: int = 2000):
    return corpus.config(search={"parent_retriever": {
        "enabled": True, "whole_doc_threshold_tokens": threshold, "max_expanded_tokens": cap}})


@pytest.fixture
def kb(fixed: Corpus) -> Corpus:
    # short.md: the hit (chunk 1) is short -> whole document.
    fixed.add("short.md", [
        Sec("Intro paragraph about the garden.", heading="Intro", level=2, vector=unit((5, 1.0))),
        Sec("Zebra crossing rules for cyclists.", heading="Rules", level=2, token_count=10,
            vector=unit((0, 1.0), (1, 0.2))),
        Sec("Closing remarks about the garden.", heading="End", level=2, vector=unit((6, 1.0))),
    ])
    # long.md: every chunk is 300 tokens; the hit is chunk 2 (level 2).
    levels = [2, 2, 2, 2, 3, 2]
    secs = [Sec(f"Long body {i} about gardens and soil.", heading=f"Part {i}", level=lv,
                token_count=300, vector=unit((7 + i, 1.0))) for i, lv in enumerate(levels)]
    secs[2] = Sec("Walrus migration patterns in the arctic sea.", heading="Part 2", level=2,
                  token_count=300, vector=unit((0, 1.0), (2, 0.3)))
    fixed.add("long.md", secs)
    fixed.add("plain.md", [Sec("zebra and walrus together at the zoo, a long story.", token_count=400,
                               vector=unit((0, 1.0), (3, 0.4)))])
    return fixed


def by_path(response) -> dict:
    return {h.path: h for h in response.results}


def test_short_hit_becomes_the_whole_document(kb: Corpus) -> None:
    hit = by_path(kb.search("zebra crossing", limit=3, config=parent_config(kb)))["short.md"]
    assert hit.expanded_from == {"kind": "whole_document", "total_chunks": 3}
    for text in ("Intro paragraph about the garden.", "Zebra crossing rules for cyclists.",
                 "Closing remarks about the garden.", "Intro", "Rules", "End"):
        assert text in hit.content
    order = [hit.content.index(t) for t in ("Intro paragraph", "Zebra crossing", "Closing remarks")]
    assert order == sorted(order)


def test_long_hit_absorbs_same_level_neighbours_within_the_cap(kb: Corpus) -> None:
    hit = by_path(kb.search("walrus migration", limit=3, config=parent_config(kb, cap=1000)))["long.md"]
    # 300 (hit) + 300 (part 1) + 300 (part 3) = 900; part 0 would make 1200 > 1000;
    # part 4 is level 3, not a sibling.
    assert hit.expanded_from == {"kind": "adjacent", "from_index": 1, "to_index": 3}
    assert "Long body 1" in hit.content and "Walrus migration" in hit.content
    assert "Long body 3" in hit.content
    assert "Long body 0" not in hit.content and "Long body 4" not in hit.content
    assert hit.content.index("Long body 1") < hit.content.index("Walrus") < hit.content.index("Long body 3")


def test_adjacent_expansion_alternates_before_and_after(kb: Corpus) -> None:
    # Cap 650: the hit (300) + one neighbour (600); the next would exceed it. "before" goes first.
    hit = by_path(kb.search("walrus migration", limit=3, config=parent_config(kb, cap=650)))["long.md"]
    assert hit.expanded_from == {"kind": "adjacent", "from_index": 1, "to_index": 2}


def test_no_room_for_any_neighbour_leaves_the_hit_alone(kb: Corpus) -> None:
    hit = by_path(kb.search("walrus migration", limit=3, config=parent_config(kb, cap=400)))["long.md"]
    assert hit.expanded_from is None
    assert hit.content == "Walrus migration patterns in the arctic sea."


def test_a_single_chunk_document_has_no_siblings(kb: Corpus) -> None:
    hit = by_path(kb.search("zebra walrus", limit=3, config=parent_config(kb)))["plain.md"]
    assert hit.expanded_from is None


def test_score_order_and_path_are_unchanged(kb: Corpus) -> None:
    for query in ("zebra crossing", "walrus migration", "garden soil"):
        off = kb.search(query, limit=5, parent_retriever=False)
        on = kb.search(query, limit=5, config=parent_config(kb, cap=1000))
        assert [(h.chunk_id, h.score, h.path, h.heading, h.title) for h in on.results] == \
               [(h.chunk_id, h.score, h.path, h.heading, h.title) for h in off.results]
        assert all(h.expanded_from is None for h in off.results)
        assert any(h.expanded_from is not None for h in on.results)


def test_parent_retriever_off_by_default_and_per_call_override(kb: Corpus) -> None:
    assert all(h.expanded_from is None for h in kb.search("zebra crossing", limit=3).results)
    on = kb.search("zebra crossing", limit=3, parent_retriever=True)
    assert by_path(on)["short.md"].expanded_from["kind"] == "whole_document"
    off = kb.search("zebra crossing", limit=3, config=parent_config(kb), parent_retriever=False)
    assert all(h.expanded_from is None for h in off.results)


@pytest.mark.parametrize(("query", "cap"), [("zebra crossing garden", 2000), ("walrus garden", 1000),
                                            ('"arctic sea" soil', 1000)])
def test_match_spans_are_offsets_into_the_expanded_content(kb: Corpus, query: str, cap: int) -> None:
    terms = [t.lower() for t in query_phrases(query)]
    # Rank fusion keeps the lexical hits of this fixture in the top 3 (the test is about offsets).
    response = kb.search(query, limit=3, config=parent_config(kb, cap=cap), fusion="rrf")
    expanded = [h for h in response.results if h.expanded_from is not None]
    assert expanded
    for hit in expanded:
        data = hit.content.encode("utf-8")
        assert hit.match_spans, hit.content
        for span in hit.match_spans:
            snippet = data[span["start"]:span["end"]].decode("utf-8").lower()
            assert any(t in snippet or snippet in t for t in terms), snippet
        # A term that only occurs in an absorbed sibling is highlighted there too.
        spans_text = {data[s["start"]:s["end"]].decode().lower() for s in hit.match_spans}
        assert spans_text & set(terms)


def test_whole_document_cap_keeps_the_hit(fixed: Corpus) -> None:
    """When the whole document exceeds the cap, the returned text still contains the hit."""
    secs = [Sec(f"Filler section {i} about nothing much at all.", heading=f"H{i}", token_count=50,
                vector=unit((4 + i, 1.0))) for i in range(5)]
    secs[4] = Sec("Quokka sightings on the island.", heading="H4", token_count=50,
                  vector=unit((0, 1.0)))
    fixed.add("big.md", secs)
    response = fixed.search("quokka sightings", limit=1, config=parent_config(fixed, cap=120))
    hit = response.results[0]
    assert "Quokka sightings on the island." in hit.content
    assert hit.match_spans
    # 50 + 50 (chunk 3) fits 120; chunk 2 would not; there is nothing after.
    assert hit.expanded_from == {"kind": "whole_document", "total_chunks": 5,
                                 "from_index": 3, "to_index": 4}
    assert "Filler section 3" in hit.content and "Filler section 2" not in hit.content
    # A document that fits the cap exactly is returned whole, with no range keys.
    whole = fixed.search("quokka sightings", limit=1, config=parent_config(fixed, cap=250))
    assert whole.results[0].expanded_from == {"kind": "whole_document", "total_chunks": 5}


# --- source-code hits: the line range describes the expanded text -------------------------
def _code_rows(cuts: list[int], blanks: set[int], n_lines: int,
               tokens: list[int]) -> tuple[list[str], list]:
    """A file of ``n_lines`` lines (those in ``blanks`` empty) cut into pieces at ``cuts``
    (0-based starts); as the code chunker does, blank lines at a piece's edges are left
    out of it and an all-blank piece makes no chunk."""
    from groove.models import ChunkRow

    lines = ["" if i in blanks else f"line {i} of the file" for i in range(n_lines)]
    starts = sorted({0, *cuts})
    rows = []
    for a, b in zip(starts, [*starts[1:], n_lines], strict=True):
        kept = [i for i in range(a, b) if lines[i]]
        if not kept:
            continue
        first, last = kept[0], kept[-1]
        i = len(rows)
        rows.append(ChunkRow(
            id=100 + i, doc_id=1, chunk_index=i, heading=f"def_{i}", level=None, context="",
            content="\n".join(lines[first:last + 1]), token_count=tokens[i % len(tokens)],
            quality=1.0, path="m.py", title="m", category=None, topic=None, date=None, tags=(),
            symbol_kind="function", scope="class C", line_start=first + 1, line_end=last + 1,
            language="python"))
    return lines, rows


def _hit_for(row):
    from groove.models import Hit

    return Hit(chunk_id=row.id, score=1.0, path=row.path, title=row.title, heading=row.heading,
               level=None, category=None, topic=None, date=None, tags=[], content=row.content,
               symbol_kind=row.symbol_kind, scope=row.scope, line_start=row.line_start,
               line_end=row.line_end)


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@given(n_lines=st.integers(2, 40), data=st.data(),
       threshold=st.integers(1, 400), cap=st.integers(1, 600))
def test_an_expanded_code_hit_names_exactly_the_lines_it_returns(n_lines, data, threshold, cap):
    """Guarantee: after expansion a code hit's content is lines line_start..line_end of the
    file (blank lines between chunks included), and still holds the hit's own lines; only a
    hit left as one chunk keeps its symbol."""
    from groove.search.parent import expand_hit

    cuts = data.draw(st.lists(st.integers(1, n_lines - 1), max_size=8))
    blanks = data.draw(st.sets(st.integers(1, n_lines - 1), max_size=n_lines // 2))
    tokens = data.draw(st.lists(st.integers(1, 200), min_size=1, max_size=9))
    lines, rows = _code_rows(cuts, blanks, n_lines, tokens)
    row = rows[data.draw(st.integers(0, len(rows) - 1))]
    hit = _hit_for(row)
    expand_hit(hit, row, rows, whole_doc_threshold_tokens=threshold, max_expanded_tokens=cap)
    assert hit.line_start is not None and hit.line_end is not None
    assert hit.content == "\n".join(lines[hit.line_start - 1:hit.line_end])
    assert hit.line_start <= row.line_start and row.line_end <= hit.line_end
    widened = (hit.line_start, hit.line_end) != (row.line_start, row.line_end)
    assert (hit.expanded_from is not None) == widened or len(rows) == 1
    assert (hit.symbol_kind, hit.scope) == (("function", "class C") if not widened else
                                            (None, None))


def test_expansion_stops_where_the_line_ranges_break():
    """A chunk without a range (or after a gap) is not joined to a code hit's lines."""
    import dataclasses

    from groove.search.parent import expand_hit

    lines, rows = _code_rows([3, 6], set(), 9, [5])
    rows[2] = dataclasses.replace(rows[2], line_start=None, line_end=None)
    hit = _hit_for(rows[1])
    expand_hit(hit, rows[1], rows, whole_doc_threshold_tokens=100, max_expanded_tokens=1000)
    assert (hit.line_start, hit.line_end) == (1, 6)
    assert hit.content == "\n".join(lines[:6])
    assert hit.expanded_from == {"kind": "whole_document", "total_chunks": 3,
                                 "from_index": 0, "to_index": 1}
