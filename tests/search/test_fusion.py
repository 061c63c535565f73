"""Fusion (docs/search.md): RRF and the convex combination — exact numbers, one-hit and
tied legs, deterministic ties, and the all-stages-off pipeline returning exactly the
fused ranking of its two legs, for both methods."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from searchkit import DIM, Corpus, FixedQueryEmbedder, Sec, unit

from groove.search.fusion import (
    convex_fusion,
    normalise_fts_leg,
    normalise_vector_leg,
    reciprocal_rank_fusion,
)
from groove.search.query import parse_query


def test_each_leg_adds_one_over_k_plus_rank_plus_one() -> None:
    vector = [(10, 0.9), (20, 0.8), (30, 0.1)]
    fts = [(30, -5.0), (40, -1.0)]
    fused = dict(reciprocal_rank_fusion([vector, fts], rrf_k=60))
    assert fused == {
        10: pytest.approx(1 / 61),
        20: pytest.approx(1 / 62),
        30: pytest.approx(1 / 63 + 1 / 61),
        40: pytest.approx(1 / 62),
    }


def test_rrf_k_changes_the_numbers() -> None:
    fused = reciprocal_rank_fusion([[(1, 0.0), (2, 0.0)], [(2, 0.0)]], rrf_k=1)
    assert fused == [(2, pytest.approx(1 / 3 + 1 / 2)), (1, pytest.approx(1 / 2))]


def test_leg_scores_are_ignored_only_ranks_count() -> None:
    a = reciprocal_rank_fusion([[(1, 100.0), (2, -3.0)]], rrf_k=60)
    b = reciprocal_rank_fusion([[(1, 0.0), (2, 0.0)]], rrf_k=60)
    assert a == b


def test_ties_break_by_chunk_id() -> None:
    # 7 is first in one leg and 3 first in the other: same fused score, id 3 first.
    fused = reciprocal_rank_fusion([[(7, 1.0), (3, 0.5)], [(3, 1.0), (7, 0.5)]], rrf_k=60)
    assert [c for c, _ in fused] == [3, 7]
    assert fused[0][1] == fused[1][1]
    # Two single-leg items at the same rank in different legs: again by id.
    fused = reciprocal_rank_fusion([[(9, 1.0)], [(4, 1.0)]], rrf_k=60)
    assert [c for c, _ in fused] == [4, 9]


@given(st.lists(st.integers(0, 30), unique=True), st.lists(st.integers(0, 30), unique=True),
       st.floats(0.5, 200))
def test_fusion_is_the_formula_and_independent_of_leg_order(a: list[int], b: list[int],
                                                          k: float) -> None:
    legs = [[(c, 0.0) for c in a], [(c, 0.0) for c in b]]
    fused = reciprocal_rank_fusion(legs, rrf_k=k)
    expected: dict[int, float] = {}
    for leg in (a, b):
        for rank, c in enumerate(leg):
            expected[c] = expected.get(c, 0.0) + 1 / (k + rank + 1)
    assert dict(fused) == pytest.approx(expected)
    assert [c for c, _ in fused] == sorted(expected, key=lambda c: (-expected[c], c))
    # At most two terms per chunk, and float addition of two terms commutes.
    assert fused == reciprocal_rank_fusion(legs[::-1], rrf_k=k)


WORDS = ["rust", "tokio", "async", "spawn", "runtime", "garden", "tomato", "kernel", "socket"]


@pytest.fixture
def mixed(corpus_factory) -> Corpus:
    """40 chunks with seeded random vectors and word salads, over 8 documents."""
    rng = np.random.default_rng(7)
    pick = random.Random(7)
    query_vec = rng.standard_normal(DIM).astype(np.float32)
    corpus = corpus_factory(FixedQueryEmbedder(query_vec / np.linalg.norm(query_vec)))
    for d in range(8):
        secs = []
        for _ in range(5):
            v = rng.standard_normal(DIM).astype(np.float32)
            text = " ".join(pick.choice(WORDS) for _ in range(12))
            secs.append(Sec(f"{text} filler text to pass quality", vector=v / np.linalg.norm(v)))
        corpus.add(f"doc{d}.md", secs)
    return corpus


def independent_legs(corpus: Corpus, query: str, limit: int
                     ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    """The two legs recomputed from the store's raw data."""
    ids, matrix = corpus.store.load_vectors()
    n = max(50, limit * 5)
    cos = matrix @ corpus.embedder.embed_query(query)
    vector = sorted(zip(ids.tolist(), cos.tolist(), strict=True), key=lambda t: (-t[1], t[0]))[:n]
    phrases = parse_query(query).fulltext_phrases
    fts = sorted(corpus.store.fulltext_search(phrases, 10_000), key=lambda t: (t[1], t[0]))[:n]
    return vector, fts


def independent_fusion(corpus: Corpus, query: str, limit: int, k: float) -> list[tuple[int, float]]:
    """The two legs recomputed from the store's raw data, fused by the SPEC formula."""
    ids, matrix = corpus.store.load_vectors()
    n = max(50, limit * 5)
    cos = matrix @ corpus.embedder.embed_query(query)
    vector = sorted(zip(ids.tolist(), cos.tolist(), strict=True), key=lambda t: (-t[1], t[0]))[:n]
    phrases = parse_query(query).fulltext_phrases
    fts = sorted(corpus.store.fulltext_search(phrases, 10_000), key=lambda t: (t[1], t[0]))[:n]
    fused: dict[int, float] = {}
    for leg in (vector, fts):
        for rank, (c, _) in enumerate(leg):
            fused[c] = fused.get(c, 0.0) + 1 / (k + rank + 1)
    return sorted(fused.items(), key=lambda t: (-t[1], t[0]))[:limit]


@pytest.mark.parametrize(("query", "limit", "k"), [("tokio spawn", 5, 60.0), ("garden tomato", 20, 60.0),
                                                    ("kernel socket runtime", 7, 3.0)])
def test_all_stages_off_output_is_the_fused_ranking(mixed: Corpus, query: str, limit: int,
                                                    k: float) -> None:
    config = mixed.config(search={"fusion": {"method": "rrf", "rrf_k": k},
                                  "min_confidence_ratio": 0, "max_chunks_per_document": 0,
                                  "document_margin": 0})
    response = mixed.search(query, limit=limit, config=config, rerank=False, mmr=False,
                            parent_retriever=False)
    expected = independent_fusion(mixed, query, limit, k)
    got = [(h.chunk_id, h.score) for h in response.results]
    assert [c for c, _ in got] == [c for c, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected])


@pytest.mark.parametrize(("query", "limit", "w"), [("tokio spawn", 5, 0.5), ("garden tomato", 20, 0.8),
                                                    ("kernel socket runtime", 7, 0.0)])
def test_all_stages_off_output_is_the_convex_ranking(mixed: Corpus, query: str, limit: int,
                                                     w: float) -> None:
    config = mixed.config(search={"fusion": {"method": "convex", "vector_weight": w},
                                  "min_confidence_ratio": 0, "max_chunks_per_document": 0,
                                  "document_margin": 0})
    response = mixed.search(query, limit=limit, config=config, rerank=False, mmr=False,
                            parent_retriever=False)
    vector, fts = independent_legs(mixed, query, limit)
    lo, hi = min(s for _, s in vector), max(s for _, s in vector)
    best = min(s for _, s in fts)
    fused: dict[int, float] = {}
    for c, s in vector:
        fused[c] = w * (s - lo) / (hi - lo)
    for c, s in fts:
        fused[c] = fused.get(c, 0.0) + (1 - w) * s / best
    expected = sorted(fused.items(), key=lambda t: (-t[1], t[0]))[:limit]
    got = [(h.chunk_id, h.score) for h in response.results]
    assert [c for c, _ in got] == [c for c, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected])


def test_the_ranking_is_deterministic_across_calls(mixed: Corpus) -> None:
    first = [(h.chunk_id, h.score) for h in mixed.search("async runtime", limit=30).results]
    for _ in range(3):
        assert [(h.chunk_id, h.score) for h in mixed.search("async runtime", limit=30).results] == first


def test_vector_ties_at_the_cut_are_broken_by_chunk_id(fixed: Corpus) -> None:
    """1000 chunks with one identical vector: the vector leg keeps the lowest ids.

    Whatever subset a partial sort happens to keep must not decide which of
    several equal candidates survive the cut to N (duplicated files do this).
    """
    ids = fixed.add("dups.md", [Sec(f"copy {i}", vector=unit((0, 1.0))) for i in range(1000)])
    response = fixed.search("zz", limit=100)  # under 3 characters: vector leg only
    assert [h.chunk_id for h in response.results] == sorted(ids)[:100]
    assert fixed.search("zz", limit=3).results[0].chunk_id == min(ids)


# --- convex combination --------------------------------------------------------------


def test_convex_normalises_each_leg_and_mixes_them_by_the_weight() -> None:
    vector = [(10, 0.9), (20, 0.8), (30, 0.5)]
    fts = [(30, -4.0), (40, -1.0)]
    # vec: 10 → 1, 20 → 0.3/0.4 = 0.75, 30 → 0; fts: 30 → 1, 40 → 0.25.
    fused = convex_fusion(vector, fts, vector_weight=0.6)
    assert fused == [(10, pytest.approx(0.6)), (20, pytest.approx(0.45)),
                     (30, pytest.approx(0.4)), (40, pytest.approx(0.1))]


def test_a_one_hit_leg_scores_its_hit_one_and_ties_break_by_id() -> None:
    assert normalise_vector_leg([(5, 0.3)]) == {5: 1.0}
    assert normalise_fts_leg([(6, -2.0)]) == {6: 1.0}
    assert convex_fusion([(5, 0.3)], [(6, -2.0)], vector_weight=0.5) == [(5, 0.5), (6, 0.5)]


def test_tied_legs_and_a_zero_bm25_stay_defined() -> None:
    assert normalise_vector_leg([(1, 0.7), (2, 0.7)]) == {1: 1.0, 2: 1.0}
    assert normalise_fts_leg([(1, 0.0), (2, 0.0)]) == {1: 1.0, 2: 1.0}
    assert normalise_vector_leg([]) == {} and normalise_fts_leg([]) == {}


def test_a_weak_lexical_match_stays_weak_next_to_a_strong_one() -> None:
    """bm25 is scaled by the best score, not min-max: the second of two matches keeps
    its share instead of dropping to 0 like a non-match."""
    assert normalise_fts_leg([(1, -10.0), (2, -2.0)]) == {1: 1.0, 2: pytest.approx(0.2)}


legs = st.lists(st.tuples(st.integers(0, 40), st.floats(-1, 1)), unique_by=lambda t: t[0],
                max_size=20)
bm25_legs = st.lists(st.tuples(st.integers(0, 40), st.floats(-50, 0)), unique_by=lambda t: t[0],
                     max_size=20)


@given(legs, bm25_legs, st.floats(0, 1))
def test_convex_scores_are_in_the_unit_interval_sorted_with_id_ties(vector, fts, w) -> None:
    fused = convex_fusion(vector, fts, vector_weight=w)
    assert {c for c, _ in fused} == {c for c, _ in vector} | {c for c, _ in fts}
    assert all(-1e-12 <= s <= 1 + 1e-12 for _, s in fused)
    assert [item for item in fused] == sorted(fused, key=lambda t: (-t[1], t[0]))


@given(legs)
def test_weight_one_is_the_vector_order(vector) -> None:
    fused = convex_fusion(sorted(vector, key=lambda t: -t[1]), [], vector_weight=1.0)
    by_score = sorted(vector, key=lambda t: (-t[1], t[0]))
    assert [s for _, s in by_score] == sorted((s for _, s in vector), reverse=True)
    assert [c for c, _ in fused] == [c for c, _ in sorted(
        ((c, v) for c, v in normalise_vector_leg(vector).items()), key=lambda t: (-t[1], t[0]))]


# --- language-aware fusion ------------------------------------------------------------


def test_an_other_script_chunk_gets_an_imputed_full_text_score() -> None:
    vector = [(1, 0.90), (2, 0.85), (3, 0.80)]  # normalised 1.0, 0.5, 0.0
    fts = [(1, -4.0)]
    plain = dict(convex_fusion(vector, fts, 0.5))
    imputed = dict(convex_fusion(vector, fts, 0.5, foreign={2}, imputation=0.5))
    assert plain[2] == pytest.approx(0.25)
    assert imputed[2] == pytest.approx(0.5 * 0.5 + 0.5 * (0.5 * 0.5 ** 3))
    top = dict(convex_fusion(vector, fts, 0.5, foreign={1, 2}, imputation=0.5))
    assert top[1] == plain[1]  # a real full match is larger than any stand-in
    assert imputed[1] == plain[1] and imputed[3] == plain[3]  # same-script chunks untouched


def test_a_real_full_text_match_of_an_other_script_chunk_counts_when_larger() -> None:
    vector = [(1, 0.9), (2, 0.8)]
    fts = [(1, -4.0), (2, -4.0)]  # a shared code: both match fully
    fused = dict(convex_fusion(vector, fts, 0.5, foreign={2}, imputation=1.0))
    assert fused[2] == pytest.approx(0.5 * 0.0 + 0.5 * 1.0)


def test_rrf_counts_an_other_script_chunks_vector_rank_for_the_missing_leg() -> None:
    vector = [(1, 0.9), (2, 0.8)]
    fts = [(1, -1.0)]
    fused = dict(reciprocal_rank_fusion([vector, fts], rrf_k=60, imputed={2}))
    assert fused[2] == pytest.approx(2 / 62)
    assert fused[1] == pytest.approx(2 / 61)


@given(st.lists(st.tuples(st.integers(0, 40), st.floats(-1, 1)), unique_by=lambda t: t[0]),
       st.lists(st.tuples(st.integers(0, 40), st.floats(-20, 0)), unique_by=lambda t: t[0]),
       st.sets(st.integers(0, 40)), st.floats(0, 1), st.floats(0, 1))
def test_imputation_only_ever_raises_other_script_chunks(vector, fts, foreign, w, g) -> None:
    vector = sorted(vector, key=lambda t: -t[1])
    fts = sorted(fts, key=lambda t: t[1])
    plain = dict(convex_fusion(vector, fts, w))
    imputed = dict(convex_fusion(vector, fts, w, foreign=foreign, imputation=g))
    assert plain.keys() == imputed.keys()
    for c, score in plain.items():
        if c in foreign:
            assert imputed[c] >= score - 1e-12
        else:
            assert imputed[c] == score
    assert dict(convex_fusion(vector, fts, w, foreign=foreign, imputation=0.0)) == plain


# --- fusion during a build (vectors still pending) -------------------------------------


def test_a_chunk_without_a_vector_counts_its_full_text_score_for_the_vector_leg() -> None:
    """Few documents embedded must not outrank a better full-text match in the rest."""
    vector = [(1, 0.60), (2, 0.55)]  # the only embedded chunks, both off-topic
    fts = [(9, -6.0), (2, -1.0)]  # 9: the real answer, its vector still pending
    plain = convex_fusion(vector, fts, vector_weight=0.7)
    assert plain[0][0] == 1  # what happened during a build: an embedded chunk first
    during = convex_fusion(vector, fts, vector_weight=0.7, vectorless={9})
    assert during[0] == (9, pytest.approx(1.0))
    assert reciprocal_rank_fusion([vector, fts], 60.0, vectorless={9})[0][0] == 9


@given(st.lists(st.floats(-1.0, 1.0), min_size=1, max_size=12),
       st.lists(st.floats(-20.0, -0.01), min_size=1, max_size=12),
       st.floats(0.0, 1.0), st.sampled_from(["convex", "rrf"]))
def test_pending_vectors_score_like_their_full_text_and_change_nothing_else(
        cosines: list[float], bm25s: list[float], weight: float, method: str) -> None:
    from groove.search.fusion import fuse

    vector = sorted(((i, c) for i, c in enumerate(cosines)), key=lambda x: (-x[1], x[0]))
    pending = range(100, 100 + len(bm25s))  # chunks the vector leg cannot hold
    fts = sorted(zip(pending, sorted(bm25s), strict=True), key=lambda x: (x[1], x[0]))
    kwargs = {"method": method, "rrf_k": 60.0, "vector_weight": weight}
    during = dict(fuse(vector, fts, vectorless=set(pending), **kwargs))
    before = dict(fuse(vector, fts, **kwargs))
    for chunk_id, _ in vector:  # embedded chunks keep their score
        assert during[chunk_id] == pytest.approx(before[chunk_id])
    lex = normalise_fts_leg(fts)
    for rank, (chunk_id, _) in enumerate(fts):  # a pending one: its full-text score, twice
        expected = (lex[chunk_id] if method == "convex" else 2.0 / (60.0 + rank + 1))
        assert during[chunk_id] == pytest.approx(expected)


def _reference_rrf(vector, fts, rrf_k, imputed, vectorless):
    """The RRF sum as written before explain split it into shares: leg by leg, then the
    imputed and vectorless stand-ins added to the total."""
    fused: dict[int, float] = {}
    for leg in (vector, fts):
        for rank, (chunk_id, _s) in enumerate(leg):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + 1.0 / (rrf_k + rank + 1)
    in_fts = {c for c, _ in fts}
    for rank, (chunk_id, _s) in enumerate(vector):
        if chunk_id in imputed:
            fused[chunk_id] += (chunk_id not in in_fts) / (rrf_k + rank + 1)
    in_vector = {c for c, _ in vector}
    for rank, (chunk_id, _s) in enumerate(fts):
        if chunk_id in vectorless and chunk_id not in in_vector:
            fused[chunk_id] += 1.0 / (rrf_k + rank + 1)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


_LEG_IDS = st.lists(st.integers(0, 40), unique=True, max_size=25)


@given(_LEG_IDS, _LEG_IDS, st.sets(st.integers(0, 40)), st.sets(st.integers(0, 40)),
       st.sampled_from(["rrf", "convex"]), st.floats(0, 1), st.floats(1, 100))
def test_the_shares_explain_shows_add_up_to_the_fused_score_exactly(
        vec_ids, fts_ids, foreign, pending, method, weight, rrf_k):
    """explain's vector_part + fulltext_part is the score fuse() ranks by, bit for bit, and
    RRF ranks exactly as its leg-by-leg sum did (the ranking did not move)."""
    from groove.search.fusion import fuse, fusion_parts

    rng = random.Random(len(vec_ids) * 41 + len(fts_ids))
    vector = sorted(((c, rng.uniform(0.2, 0.9)) for c in vec_ids), key=lambda x: -x[1])
    fts = sorted(((c, -rng.uniform(0.1, 9.0)) for c in fts_ids), key=lambda x: x[1])
    foreign = {c for c in foreign if c not in set(fts_ids)}
    vectorless = {c for c in pending if c not in set(vec_ids)}
    args = dict(method=method, rrf_k=rrf_k, vector_weight=weight, foreign=foreign,
                imputation=0.5, vectorless=vectorless)
    ranked = fuse(vector, fts, **args)
    parts = fusion_parts(vector, fts, **args)
    assert {c: v + f for c, (v, f) in parts.items()} == dict(ranked)
    if method == "rrf":
        assert ranked == _reference_rrf(vector, fts, rrf_k, foreign, vectorless)
