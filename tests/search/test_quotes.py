"""Quoted phrases are requirements (docs/search.md, "Quotes")."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from searchkit import Corpus, Sec, unit

from groove.search.query import parse_query
from groove.search.quotes import quoted_count, require_quoted


def test_hits_holding_the_phrase_go_first_in_their_fused_order() -> None:
    ranked = [(1, 0.9), (2, 0.8), (3, 0.7), (4, 0.6)]
    texts = {1: "rebinding attacks", 2: "A DNS\nrebinding gate", 3: "nothing", 4: "dns  REBINDING"}
    out, met = require_quoted(ranked, texts, ["DNS rebinding"])
    assert out == [(2, 0.8), (4, 0.6), (1, 0.9), (3, 0.7)]
    assert met


def test_unmet_requirement_keeps_the_order_and_says_so() -> None:
    ranked = [(1, 0.9), (2, 0.8)]
    out, met = require_quoted(ranked, {1: "a", 2: "b"}, ["zebra crossing"])
    assert out == ranked and not met
    assert require_quoted(ranked, {}, []) == (ranked, True)


def test_more_quoted_phrases_rank_first() -> None:
    ranked = [(1, 0.9), (2, 0.8), (3, 0.7)]
    texts = {1: "alpha", 2: "alpha and beta", 3: "beta"}
    out, met = require_quoted(ranked, texts, ["alpha", "beta"])
    assert [c for c, _ in out] == [2, 1, 3] and met


@given(st.lists(st.tuples(st.integers(0, 30), st.text(max_size=20)), unique_by=lambda t: t[0]),
       st.lists(st.text(min_size=1, max_size=5), max_size=3))
def test_a_stable_partition_by_the_number_of_phrases_held(items, phrases) -> None:
    ranked = [(c, 1.0 / (i + 1)) for i, (c, _) in enumerate(items)]
    texts = dict(items)
    out, _ = require_quoted(ranked, texts, phrases)
    assert sorted(out) == sorted(ranked)
    counts = [quoted_count(texts[c], phrases) for c, _ in out]
    assert counts == sorted(counts, reverse=True)
    for n in set(counts):  # within one count the fused order is kept
        same = [c for c, _ in out if quoted_count(texts[c], phrases) == n]
        assert same == [c for c, _ in ranked if c in same]


def test_parsed_query_knows_its_quoted_phrases_and_content() -> None:
    assert parse_query('"DNS rebinding" gate -"old gate"').quoted == ("DNS rebinding",)
    assert parse_query('unclosed "DNS rebinding').quoted == ()
    assert parse_query('"***" docs').quoted == ()
    for empty in ('"', "-", "*", '""', "- * -", "***"):
        assert not parse_query(empty).has_content
    assert parse_query("-Windows").has_content is False  # only an exclusion: nothing to look for
    assert parse_query("install -Windows").has_content


def test_search_puts_chunks_with_the_quoted_phrase_first_and_flags_an_unmet_quote(
        fixed: Corpus) -> None:
    fixed.add("near.md", [Sec("rebinding of keys in the editor, nothing about names",
                              vector=unit((0, 1.0)))])
    fixed.add("gate.md", [Sec("the server refuses DNS rebinding by checking the Host header",
                              vector=unit((0, 0.7), (1, 0.7)))])
    hits = fixed.search('"DNS rebinding"', limit=2)
    assert fixed.paths(hits) == ["gate.md", "near.md"]
    assert fixed.search('"zebra crossing"', limit=2).low_confidence


def test_a_query_without_a_content_word_is_flagged(fixed: Corpus) -> None:
    fixed.add("a.md", [Sec("some words to find here", vector=unit((0, 1.0)))])
    for query in ('"', "-", "*"):
        assert fixed.search(query, limit=2).low_confidence, query
