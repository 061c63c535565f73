"""Candidate legs: exclusions drop the same chunks from the vector and the full-text leg."""

from __future__ import annotations

import sys
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from searchkit import Sec, unit


def _school_corpus(fixed):
    # Vectors put every chunk near the query, so the vector leg returns all of them.
    fixed.add("lower.md", [Sec("a guide to the école system", vector=unit((0, 1.0)))])
    fixed.add("upper.md", [Sec("a guide to the ÉCOLE system", vector=unit((0, 1.0), (1, 0.1)))])
    fixed.add("other.md", [Sec("a guide to something else", vector=unit((0, 1.0), (1, 0.2)))])


def test_non_ascii_case_variant_of_an_exclusion_is_dropped_from_the_vector_leg(fixed):
    # "xyzzy" matches nothing in the full-text index: every hit comes from the vector leg.
    _school_corpus(fixed)
    for query in ("xyzzy -école", "xyzzy -ÉCOLE"):
        assert fixed.paths(fixed.search(query, include_low_quality=True)) == ["other.md"], query


def test_both_legs_agree_when_fts_also_matches(fixed):
    _school_corpus(fixed)
    for query in ("guide -école", "guide -ÉCOLE"):
        assert fixed.paths(fixed.search(query, include_low_quality=True)) == ["other.md"], query


def test_short_exclusion_is_enforced_on_both_legs(fixed):
    # Two characters: a word like any other for the full-text index.
    fixed.add("ab.md", [Sec("a guide mentioning QZ twice: qz", vector=unit((0, 1.0)))])
    fixed.add("plain.md", [Sec("a guide without it", vector=unit((0, 1.0), (1, 0.5)))])
    assert fixed.paths(fixed.search("guide -qz", include_low_quality=True)) == ["plain.md"]
    assert fixed.paths(fixed.search("xyzzy -qz", include_low_quality=True)) == ["plain.md"]


def test_exclusion_matching_only_the_heading_drops_the_chunk(fixed):
    fixed.add("h.md", [Sec("a guide body", heading="Deprecated API", vector=unit((0, 1.0)))])
    fixed.add("k.md", [Sec("a guide body too", heading="Current API", vector=unit((1, 1.0)))])
    assert fixed.paths(fixed.search("guide -deprecated", include_low_quality=True)) == ["k.md"]


def test_latin_exclusion_is_a_word_test(fixed):
    # docs/search.md: a Latin-script exclusion drops chunks holding the word (or a word
    # with the same stem), not chunks where it is only part of a longer word.
    fixed.add("word.md", [Sec("a guide to docker setup", vector=unit((0, 1.0)))])
    fixed.add("plural.md", [Sec("a guide for dockers", vector=unit((0, 1.0), (1, 0.2)))])
    fixed.add("longer.md", [Sec("a guide to dockerfile syntax", vector=unit((0, 1.0), (1, 0.4)))])
    assert fixed.paths(fixed.search("guide -docker", include_low_quality=True)) == ["longer.md"]
    assert fixed.paths(fixed.search('guide -"docker setup"', include_low_quality=True)) == [
        "plural.md", "longer.md"]


def test_japanese_exclusion_is_a_substring_test_of_any_length(fixed):
    fixed.add("tokyo.md", [Sec("東京タワーの案内", vector=unit((0, 1.0)))])
    fixed.add("kyoto.md", [Sec("京都の寺の案内", vector=unit((0, 1.0), (1, 0.2)))])
    fixed.add("osaka.md", [Sec("大阪城の案内", vector=unit((0, 1.0), (1, 0.4)))])
    assert fixed.paths(fixed.search("案内 -東京", include_low_quality=True)) == [
        "kyoto.md", "osaka.md"]
    assert fixed.paths(fixed.search("案内 -京", include_low_quality=True)) == ["osaka.md"]
    assert fixed.paths(fixed.search("xyzzy -タワーの案", include_low_quality=True)) == [
        "kyoto.md", "osaka.md"]
# --- the bilingual vector leg ----------------------------------------------------------


def test_an_other_language_answer_outranks_same_language_neighbours_by_the_offset(
        corpus_factory) -> None:
    from searchkit import FixedQueryEmbedder, Sec, unit

    corpus = corpus_factory(FixedQueryEmbedder(unit((0, 1.0))))
    # Three English notes a little closer to the question than the Japanese answer.
    for i in range(3):
        corpus.add(f"en{i}.md", [Sec(f"ferry notes number {i} with enough words",
                                     vector=unit((0, 1.0), (1 + i, 0.45)))], title=f"Notes {i}")
    corpus.add("ja.md", [Sec("台風のときは乗組員三名が船内に残って当直します",
                             vector=unit((0, 1.0), (5, 0.5)))], title="台風対策")
    off = corpus.config(search={"fusion": {"cross_language_offset": 0.0,
                                           "cross_language_imputation": 0.0},
                                "document_margin": 0})
    on = corpus.config(search={"fusion": {"cross_language_offset": 0.04,
                                          "cross_language_imputation": 0.5},
                               "document_margin": 0})
    assert corpus.paths(corpus.search("crew on standby during a typhoon", config=off))[-1] == "ja.md"
    assert corpus.paths(corpus.search("crew on standby during a typhoon", config=on))[0] == "ja.md"
    # A Japanese question sees the English notes as the other language: they gain instead.
    question = "台風のときに船に残る当直の人数は"
    assert corpus.paths(corpus.search(question, config=off))[0] == "en0.md"
    assert corpus.paths(corpus.search(question, config=on))[-1] == "ja.md"
    # A lookup of a few terms is matched in their own language: no help across scripts.
    assert corpus.paths(corpus.search("typhoon crew", config=on))[-1] == "ja.md"


def test_the_other_script_pool_joins_above_the_ordinary_floor_only(corpus_factory) -> None:
    from searchkit import FixedQueryEmbedder, Sec, unit

    from groove.search.candidates import across_languages, vector_pools

    corpus = corpus_factory(FixedQueryEmbedder(unit((0, 1.0))))
    for i in range(3):
        corpus.add(f"en{i}.md", [Sec(f"english note {i} with enough words",
                                     vector=unit((0, 1.0), (1, 0.2 * (i + 1))))], title=f"Note {i}")
    corpus.add("ja-near.md", [Sec("近いノート", vector=unit((0, 1.0), (2, 0.45)))], title="近い")
    corpus.add("ja-far.md", [Sec("遠いノート", vector=unit((3, 1.0)))], title="遠い")
    corpus.search("anything", limit=1)  # loads the resident vectors
    vectors = corpus._vectors
    query = unit((0, 1.0))
    allowed = np.ones(len(vectors), dtype=bool)
    plain = dict(vectors.top_n(query, 2, allowed))
    leg = dict(across_languages(vector_pools(query, vectors, allowed, 2, query_cjk=False,
                                             calibrate=lambda cosine: cosine + 0.05),
                                own_match=False))
    assert set(plain) <= set(leg)
    assert all(leg[c] == plain[c] for c in plain)  # English members keep their cosines
    floor = min(plain.values())
    joined = set(leg) - set(plain)
    assert joined and all(leg[c] >= floor for c in joined)
    assert len(leg) <= 4


@given(st.lists(st.tuples(st.integers(0, 40), st.floats(0, 1), st.booleans()), min_size=1,
                max_size=25, unique_by=lambda t: t[0]),
       st.lists(st.tuples(st.integers(41, 80), st.floats(0, 1)), max_size=10,
                unique_by=lambda t: t[0]),
       st.floats(0.5, 2.0), st.floats(-0.5, 0.5), st.booleans())
def test_across_languages_keeps_the_floor_and_under_an_own_match_the_top(base, extra, scale,
                                                                          shift, own_match):
    """Calibrated other-script chunks join only at or above the ordinary pool's floor, same-
    script members keep their cosines, and with an own-language match nothing from the other
    script scores above the ordinary pool's best."""
    from groove.search.candidates import ScriptCalibration, VectorPools, across_languages

    ranked = sorted(((c, s) for c, s, _ in base), key=lambda t: (-t[1], t[0]))
    other = frozenset(c for c, _, foreign in base if foreign)
    extra_ranked = sorted(extra, key=lambda t: (-t[1], t[0]))
    pools = VectorPools(ranked, extra_ranked, other, ScriptCalibration(scale, shift))
    leg = dict(across_languages(pools, own_match=own_match))
    floor, top = ranked[-1][1], ranked[0][1]
    for chunk_id, score in ranked:
        if chunk_id not in other:
            assert leg[chunk_id] == score
    for chunk_id, score in leg.items():
        if chunk_id in other or chunk_id > 40:
            if chunk_id > 40:
                assert score >= floor
            if own_match:
                assert score <= top
    assert across_languages(VectorPools(ranked), own_match=False) == ranked


def test_script_calibration_matches_the_families_distributions(corpus_factory) -> None:
    """Read on the question's scale, the other family's cosines have the own family's mean."""
    from searchkit import FixedQueryEmbedder, Sec, unit

    from groove.search.candidates import MIN_FAMILY_ROWS, script_calibration

    corpus = corpus_factory(FixedQueryEmbedder(unit((0, 1.0))))
    for i in range(MIN_FAMILY_ROWS):
        corpus.add(f"en{i}.md", [Sec(f"english note {i} with enough words",
                                     vector=unit((0, 1.0), (1 + i % 5, 0.5 + 0.05 * i)))])
        corpus.add(f"ja{i}.md", [Sec(f"日本語のノート{i}、十分な長さの本文です。",
                                     vector=unit((0, 0.6), (7 + i % 5, 0.5 + 0.05 * i)))],
                   title=f"日本語のノート{i}")
    corpus.search("anything", limit=1)  # loads the resident vectors
    vectors = corpus._vectors
    query = unit((0, 1.0))
    calibrate = script_calibration(query, vectors, query_cjk=False)
    assert calibrate is not None and calibrate.scale > 0
    rows = vectors.vectors_for([int(i) for i in vectors.ids]).astype(np.float64)
    cos = rows @ query.astype(np.float64)
    ja = vectors.script_mask(True)
    mapped = np.array([calibrate(c) for c in cos[ja]])
    assert mapped.mean() == pytest.approx(cos[~ja].mean(), abs=1e-6)


def test_a_family_too_small_for_a_distribution_gets_no_calibration(corpus_factory) -> None:
    from searchkit import FixedQueryEmbedder, Sec, unit

    from groove.search.candidates import script_calibration

    query = unit((0, 1.0))
    small = corpus_factory(FixedQueryEmbedder(query))
    small.add("ja.md", [Sec("日本語のノート、十分な長さの本文です。", vector=unit((0, 1.0)))],
              title="日本語のノート")
    small.add("en.md", [Sec("english note with enough words", vector=unit((0, 1.0)))])
    small.search("anything", limit=1)
    assert script_calibration(query, small._vectors, query_cjk=False) is None


# --- the full-text leg under a filter ------------------------------------------------------


def test_full_text_leg_under_a_narrow_filter_is_the_exact_filtered_top_n(fixed):
    """The engine cannot see the filter mask: the leg fetches deeper until it has n allowed."""
    from groove.search.candidates import fulltext_leg
    from groove.search.query import parse_query
    from groove.search.vectors import VectorIndex

    for d in range(12):  # 120 chunks that say "kayak" often, outside the filter
        fixed.add(f"loud/{d}.md", [Sec(f"kayak kayak kayak trip {d} {j}", vector=unit((0, 1.0)))
                                   for j in range(10)])
    quiet = fixed.add("quiet.md", [Sec(f"a long note that mentions a kayak once, part {j}, "
                                       "among many other words about rivers and weather",
                                       vector=unit((1, 1.0))) for j in range(6)])
    vectors = VectorIndex(fixed.store)
    vectors.refresh()
    allowed = np.isin(vectors.ids, quiet)
    parsed = parse_query("kayak")
    everything = fixed.store.fulltext_search(parsed.fulltext_phrases, 1000)
    expected = [row for row in everything if row[0] in set(quiet)][:4]
    assert [c for c, _ in expected] and set(c for c, _ in expected) <= set(quiet)
    assert fulltext_leg(fixed.store, vectors, parsed, allowed, 4) == expected
    assert fulltext_leg(fixed.store, vectors, parsed, allowed, 50) == [
        row for row in everything if row[0] in set(quiet)]


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 500), share=st.floats(1e-4, 1.0))
def test_a_filtered_fetch_expects_n_allowed_hits_with_three_deviations_to_spare(n, share):
    """The first full-text fetch under a filter: its binomial count of allowed hits,
    less three standard deviations, still reaches n; it is the least such fetch (but
    for one hit of rounding); and without a filter it is exactly n."""
    from groove.search.candidates import FETCH_SIGMAS, filtered_fetch

    def enough(fetch: int) -> bool:
        mean = fetch * share
        return mean - FETCH_SIGMAS * np.sqrt(fetch * share * (1 - share)) >= n - 1e-6

    fetch = filtered_fetch(n, share)
    assert fetch >= n / share - 1e-6 and enough(fetch)
    assert fetch <= n + 1 or not enough(fetch - 2)
    assert filtered_fetch(n, 1.0) == n


# --- the bilingual leg equals its definition (one matrix pass, any masks) -------------------

class _VectorStore:
    """Just what VectorIndex reads: chunk rows with given titles and vectors."""

    def __init__(self, rows, vectors, embedded) -> None:
        self.rows, self.vectors, self.embedded = rows, vectors, embedded

    def generation(self) -> int:
        return 1

    def read_snapshot(self):
        from contextlib import nullcontext
        return nullcontext()

    def chunk_columns(self):
        from groove.store.base import columns_from_rows
        return columns_from_rows(self.rows)

    def iter_vectors(self, block_rows: int = 65536):
        ids = np.array([r.id for r in self.rows], dtype=np.int64)
        yield ids[self.embedded], self.vectors[self.embedded]


def _reference_top_n(ids, matrix, embedded, query, n, allowed):
    """Every allowed embedded row scored on its own, best n by (score desc, id asc)."""
    scored = sorted((-float(matrix[r] @ query), int(ids[r])) for r in range(len(ids))
                    if allowed[r] and embedded[r])
    return [(c, -s) for s, c in scored[:n]]


def _reference_bilingual(ids, matrix, embedded, cjk, query, n, allowed, query_cjk, offset):
    base = _reference_top_n(ids, matrix, embedded, query, n, allowed)
    if offset <= 0.0 or not base:
        return base
    row_of = {int(c): r for r, c in enumerate(ids)}
    floor = base[-1][1]
    merged = {c: s + (offset if cjk[row_of[c]] != query_cjk else 0.0) for c, s in base}
    other = allowed & (cjk != query_cjk)
    for c, s in _reference_top_n(ids, matrix, embedded, query, n, other):
        if s + offset >= floor:
            merged[c] = s + offset
    return sorted(merged.items(), key=lambda item: (-item[1], item[0]))


_bilingual_cases = st.integers(1, 40).flatmap(lambda size: st.tuples(
    st.lists(st.lists(st.integers(-3, 3), min_size=4, max_size=4), min_size=size, max_size=size),
    st.lists(st.booleans(), min_size=size, max_size=size),  # the document is Japanese
    st.lists(st.booleans(), min_size=size, max_size=size),  # allowed
    st.lists(st.booleans(), min_size=size, max_size=size),  # embedded
    st.lists(st.integers(-3, 3), min_size=4, max_size=4),  # the query
    st.integers(1, 12),  # n
    st.booleans(),  # the question is Japanese
    st.sampled_from([0.0, 0.5, 2.0, 7.0]),  # offset (small integers: exact sums)
))


@settings(max_examples=150, deadline=None)
@given(_bilingual_cases)
def test_bilingual_leg_equals_two_separate_exact_scans(case):
    """The leg scores the matrix once for both masks; the answer is the two-scan definition.

    Integer vectors make every score exact and ties frequent, so the id tie-break is tested too.
    """
    from groove.models import ChunkRow
    from groove.search.candidates import across_languages, vector_pools
    from groove.search.vectors import VectorIndex

    raw, japanese, allowed_list, embedded_list, query_list, n, query_cjk, offset = case
    rows = [ChunkRow(id=3 * i + 1, doc_id=i, chunk_index=0, heading=None, level=None,
                     context="", content="", token_count=1, quality=1.0, path=f"d{i}.md",
                     title="台風対策" if ja else "Notes", category=None, topic=None, date=None,
                     tags=(), binary_format=False) for i, ja in enumerate(japanese)]
    matrix = np.asarray(raw, dtype=np.float32)
    embedded = np.asarray(embedded_list, dtype=bool)
    index = VectorIndex(_VectorStore(rows, matrix, embedded))  # type: ignore[arg-type]
    index.refresh()
    ids = np.array([r.id for r in rows], dtype=np.int64)
    cjk = np.asarray(japanese, dtype=bool)
    allowed = np.asarray(allowed_list, dtype=bool)
    query = np.asarray(query_list, dtype=np.float32)
    shift = (lambda cosine: cosine + offset) if offset > 0 else None
    got = across_languages(vector_pools(query, index, allowed, n, query_cjk=query_cjk,
                                        calibrate=shift), own_match=False)
    assert got == _reference_bilingual(ids, matrix, embedded, cjk, query, n, allowed,
                                       query_cjk, offset)
    masks = (allowed, ~allowed, np.ones(len(rows), dtype=bool))
    assert index.top_n_each(query, n, masks) == [
        _reference_top_n(ids, matrix, embedded, query, n, m) for m in masks]


def test_an_exclusion_held_by_every_near_chunk_is_fetched_past(fixed):
    # 120 chunks nearer the query than the answers all hold the excluded word: the
    # vector leg must look past its first 2N = 100 candidates (then 400) to fill the cut.
    fixed.add("noise.md", [Sec(f"legacy note {i}", vector=unit((0, 1.0), (1, 0.001 * i)))
                           for i in range(120)])
    fixed.add("answer.md", [Sec("current note", vector=unit((0, 1.0), (1, 0.5)))])
    fixed.add("second.md", [Sec("another current note", vector=unit((0, 1.0), (1, 0.6)))])
    assert fixed.paths(fixed.search("xyzzy -legacy", include_low_quality=True)) == [
        "answer.md", "second.md"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.floats(min_value=0.0, max_value=1.0)),
                min_size=1, max_size=40),
       st.integers(min_value=1, max_value=12))
def test_surviving_is_the_exact_top_n_of_the_survivors(rows, n) -> None:
    """Fetching more until N survive equals removing the excluded chunks first."""
    from groove.search.candidates import _surviving

    class Held:
        def among(self, ids):
            return {c for c in ids if rows[c][0]}

    ranked = sorted(((c, s) for c, (_, s) in enumerate(rows)), key=lambda h: (-h[1], h[0]))
    expected = [h for h in ranked if not rows[h[0]][0]][:n]
    calls = []

    def search(k):
        calls.append(k)
        return [ranked[:k]]

    assert _surviving(search, n, Held())[0] == expected
    assert calls[0] == 2 * n and all(b == 4 * a for a, b in pairwise(calls))


def test_the_query_embedding_is_under_way_before_the_full_text_leg_starts(fixed,
                                                                          monkeypatch) -> None:
    """The embedding is what a search waits for; the full-text leg runs on the calling
    thread meanwhile, and must not hold back its start (a thread handed the embedding
    could not begin until the leg let go of the interpreter)."""
    import threading

    import groove.search.candidates as candidates

    fixed.add("a.md", [Sec("a guide to the school system", vector=unit((0, 1.0)))])
    entered = threading.Event()
    embed = fixed.embedder.embed_query

    def embed_query(text: str) -> np.ndarray:
        entered.set()
        return embed(text)

    seen: list[bool] = []
    leg = candidates.fulltext_leg

    def fulltext_leg(*args, **kwargs):
        seen.append(entered.is_set())
        return leg(*args, **kwargs)

    monkeypatch.setattr(fixed.embedder, "embed_query", embed_query)
    monkeypatch.setattr(candidates, "fulltext_leg", fulltext_leg)
    # The interpreter changes threads only when one waits (never on a timer): whoever
    # runs first is decided by the code, not by the scheduler.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(10.0)
    try:
        for _ in range(20):
            entered.clear()
            found = fixed.paths(fixed.search("school guide", include_low_quality=True))
            assert found == ["a.md"]
    finally:
        sys.setswitchinterval(interval)
    assert seen == [True] * 20


def test_a_search_queued_behind_other_embeddings_runs_its_full_text_leg_meanwhile(
        fixed, monkeypatch) -> None:
    """With every embedding thread busy (other searches), a search does not hold its
    full-text leg back until its own embedding can start."""
    import threading

    import groove.search.candidates as candidates

    fixed.add("a.md", [Sec("a guide to the school system", vector=unit((0, 1.0)))])
    leg_ran = threading.Event()
    leg = candidates.fulltext_leg

    def fulltext_leg(*args, **kwargs):
        leg_ran.set()
        return leg(*args, **kwargs)

    monkeypatch.setattr(candidates, "fulltext_leg", fulltext_leg)
    release = threading.Event()
    busy = [candidates._EMBED_POOL.submit(release.wait) for _ in range(2)]
    found: list[list[str]] = []
    search = threading.Thread(target=lambda: found.append(
        fixed.paths(fixed.search("school guide", include_low_quality=True))))
    search.start()
    try:
        assert leg_ran.wait(30), "the full-text leg waited for a free embedding thread"
    finally:
        release.set()
        search.join(30)
        for job in busy:
            job.result(30)
    assert found == [["a.md"]]
