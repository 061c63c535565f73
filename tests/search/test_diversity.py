"""Document diversity (docs/search.md): the per-document cap and the same-document margin."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from searchkit import Corpus, Sec, unit

from groove.search.diversity import cap_per_document, prefer_new_documents

DOC = {1: 100, 2: 100, 3: 100, 4: 200, 5: 300, 6: 200}


def test_later_chunks_of_a_full_document_are_dropped_and_order_is_kept() -> None:
    ranked = [(1, 0.9), (2, 0.8), (3, 0.7), (4, 0.6), (5, 0.5), (6, 0.4)]
    assert cap_per_document(ranked, DOC.__getitem__, 1) == [(1, 0.9), (4, 0.6), (5, 0.5)]
    assert cap_per_document(ranked, DOC.__getitem__, 2) == [
        (1, 0.9), (2, 0.8), (4, 0.6), (5, 0.5), (6, 0.4)]


def test_zero_means_unlimited() -> None:
    ranked = [(1, 0.9), (2, 0.8), (3, 0.7)]
    assert cap_per_document(ranked, DOC.__getitem__, 0) == ranked


@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 5)), unique_by=lambda t: t[0]),
       st.integers(1, 4))
def test_the_cap_holds_and_only_over_quota_chunks_go(items, cap) -> None:
    doc = dict(items)
    ranked = [(c, 1.0 / (i + 1)) for i, (c, _) in enumerate(items)]
    kept = cap_per_document(ranked, doc.__getitem__, cap)
    counts: dict[int, int] = {}
    for c, _ in kept:
        counts[doc[c]] = counts.get(doc[c], 0) + 1
    assert all(n <= cap for n in counts.values())
    assert [c for c, _ in kept] == [c for c, _ in ranked if c in {k for k, _ in kept}]
    dropped = [c for c, _ in ranked if (c, dict(ranked)[c]) not in kept]
    assert all(counts[doc[c]] == cap for c in dropped)


def test_search_fills_the_limit_from_other_documents_and_echoes_the_cap(fixed: Corpus) -> None:
    fixed.add("big.md", [Sec(f"lamp section {i} with enough words", vector=unit((0, 1.0)))
                         for i in range(4)])
    for name in ("a.md", "b.md", "c.md"):
        fixed.add(name, [Sec(f"lamp notes in {name} with enough words", vector=unit((0, 0.9), (1, 0.3)))])
    uncapped = fixed.search("lamp", limit=4, max_chunks_per_document=0)
    assert [h.path for h in uncapped.results] == ["big.md"] * 4
    capped = fixed.search("lamp", limit=4, max_chunks_per_document=1)
    assert sorted(h.path for h in capped.results) == ["a.md", "b.md", "big.md", "c.md"]
    assert capped.filter_applied["max_chunks_per_document"] == 1
    assert uncapped.filter_applied["max_chunks_per_document"] == 0  # given, so echoed
    assert "max_chunks_per_document" not in fixed.search("lamp", limit=4).filter_applied


# --- the same-document margin ------------------------------------------------------


def test_a_second_chunk_of_a_shown_document_must_beat_the_next_document_by_the_margin() -> None:
    # docs: 1, 2, 3 -> 100; 4, 6 -> 200; 5 -> 300. Scores span 0.4..0.9 (normalised 1..0).
    ranked = [(1, 0.9), (2, 0.85), (4, 0.8), (3, 0.75), (5, 0.5), (6, 0.4)]
    # chunk 2 (0.9 normalised) vs chunk 4 (0.8): 0.1 short of a 0.2 margin, so 4 goes first.
    assert [c for c, _ in prefer_new_documents(ranked, DOC.__getitem__, 0.2, 3)] == [1, 4, 2, 3, 5, 6]
    # With a small margin the second section of document 100 keeps its place.
    assert prefer_new_documents(ranked, DOC.__getitem__, 0.05, 3) == ranked
    assert prefer_new_documents(ranked, DOC.__getitem__, 0.0, 3) == ranked


def test_two_sections_of_one_document_stay_together_when_nothing_else_comes_close() -> None:
    ranked = [(1, 1.0), (2, 0.95), (4, 0.3), (5, 0.2)]
    assert prefer_new_documents(ranked, DOC.__getitem__, 0.2, 5) == ranked


@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 5), st.floats(0, 1)),
                unique_by=lambda t: t[0]),
       st.floats(0, 1), st.integers(1, 8))
def test_the_margin_only_reorders_and_never_passes_over_a_document_by_less_than_it(
        items, margin, limit) -> None:
    doc = {c: d for c, d, _ in items}
    ranked = sorted(((c, s) for c, _, s in items), key=lambda t: (-t[1], t[0]))
    out = prefer_new_documents(ranked, doc.__getitem__, margin, limit)
    assert sorted(out) == sorted(ranked)  # a permutation: nothing dropped, scores unchanged
    assert out[limit:] == [r for r in ranked if r not in out[:limit]]  # the rest keeps its order
    if not ranked:
        return
    low = min(s for _, s in ranked)
    span = max(s for _, s in ranked) - low
    shown: set[int] = set()
    for i, (c, s) in enumerate(out[:limit]):
        later = out[i + 1:]
        fresh = [t for t in later if doc[t[0]] not in shown]
        if doc[c] in shown and fresh and span > 0 and margin > 0:
            best_fresh = max(t[1] for t in fresh)
            assert (s - low) / span >= (best_fresh - low) / span + margin - 1e-9
        shown.add(doc[c])


def test_search_puts_the_second_document_in_the_top_results(fixed: Corpus) -> None:
    fixed.add("big.md", [Sec(f"lamp section {i} with enough words", vector=unit((0, 1.0), (1, 0.02 * i)))
                         for i in range(4)])
    fixed.add("other.md", [Sec("lamp notes elsewhere with enough words", vector=unit((0, 0.95), (1, 0.3)))])
    fixed.add("far.md", [Sec("unrelated text with enough words", vector=unit((2, 1.0)))])
    plain = fixed.search("lamp", limit=3, config=fixed.config(search={"document_margin": 0}))
    assert [h.path for h in plain.results] == ["big.md"] * 3
    margin = fixed.search("lamp", limit=3, config=fixed.config(search={"document_margin": 0.2}))
    assert [h.path for h in margin.results][:2] == ["big.md", "other.md"]
