"""Document diversity (docs/search.md): at most N hits per document, after fusion."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from searchkit import Corpus, Sec, unit

from groove.search.diversity import cap_per_document

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
