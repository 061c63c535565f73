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
