"""Quoted phrases are requirements, codes soft ones (docs/search.md, "Quotes and codes")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from searchkit import Corpus, Sec, unit

from groove.errors import InvalidArgument
from groove.search.query import code_terms, parse_query
from groove.search.quotes import code_count, quoted_count, require_quoted


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
    for query in ("+", "$", "~ ^"):  # symbols: searched, but nothing to be confident about
        assert fixed.search(query, limit=2).low_confidence, query
    for query in ('"', "-", "*"):  # punctuation alone: no term, refused before the model
        with pytest.raises(InvalidArgument, match="has no term to search for"):
            fixed.search(query, limit=2)


# --- codes ---------------------------------------------------------------------------------


def test_codes_are_letter_led_words_with_a_digit() -> None:
    assert parse_query("改札機に PG-E311 が出たときはどうすればいい？").codes == ("PG-E311",)
    assert parse_query("CO2消火装置を起動してから").codes == ("CO2",)
    assert parse_query("HullBook P2 deadline, P2 again").codes == ("P2",)
    # Quantities, years and words without a digit are not codes.
    assert parse_query("10km in 24h during 2026, days_mask and Wi-Fi").codes == ()
    # A code inside a quote is already a requirement; an excluded one is not searched.
    assert parse_query('"BL-305 fault" and R2 -P4').codes == ("R2",)


_CODE = st.from_regex(r"[A-Za-z]{1,3}(-[A-Za-z]?)?[0-9]{1,4}", fullmatch=True)
_FILLER = st.text(st.sampled_from(list("abc xyz,.。の が-")), max_size=12)


@given(_FILLER, _CODE, _FILLER)
def test_a_code_typed_among_words_is_found_and_matches_only_as_a_whole_word(before, code, after):
    text = f"{before} {code} {after}"
    assert code in code_terms(text)
    assert code_count(f"see {code.lower()}: done", [code]) == 1
    assert code_count(f"see {code}7 or x{code}", [code]) == 0


@given(st.from_regex(r"[0-9][A-Za-z0-9]{0,6}", fullmatch=True))
def test_a_word_that_starts_with_a_digit_is_never_a_code(word) -> None:
    assert code_terms(f"about {word} here") == ()


@given(st.lists(st.tuples(st.integers(0, 30), st.text(st.sampled_from(list("PGE-31 x")), max_size=20)),
                unique_by=lambda t: t[0]),
       st.lists(st.text(st.sampled_from(list("PG31x")), min_size=1, max_size=3), max_size=2),
       st.lists(_CODE, max_size=2))
def test_codes_order_hits_only_within_the_same_number_of_quoted_phrases(items, phrases, codes):
    ranked = [(c, 1.0 / (i + 1)) for i, (c, _) in enumerate(items)]
    texts = dict(items)
    out, met = require_quoted(ranked, texts, phrases, codes)
    assert sorted(out) == sorted(ranked)
    keys = [(quoted_count(texts[c], phrases), code_count(texts[c], codes)) for c, _ in out]
    assert keys == sorted(keys, reverse=True)
    for key in set(keys):  # within one group the fused order is kept
        same = [c for (c, _), k in zip(out, keys, strict=True) if k == key]
        assert same == [c for c, _ in ranked if c in same]
    # Codes never decide low_confidence: only the quoted phrases do.
    assert met == require_quoted(ranked, texts, phrases)[1]


def test_search_puts_the_note_holding_the_code_first_and_keeps_the_order_without_one(
        fixed: Corpus) -> None:
    fixed.add("runbook.md", [Sec("gate readers offline: what staff do when the gate fails",
                                 vector=unit((0, 1.0)))])
    fixed.add("errors.md", [Sec("| PG-E311 | lens obscured | clean the lens |",
                                vector=unit((0, 0.7), (1, 0.7)))])
    hits = fixed.search("the gate shows PG-E311, what do I do", limit=2)
    assert fixed.paths(hits) == ["errors.md", "runbook.md"]
    assert fixed.paths(fixed.search("the gate shows an error, what do I do", limit=2)) == [
        "runbook.md", "errors.md"]
    missing = fixed.search("the gate shows PG-E999, what do I do", limit=2)
    assert fixed.paths(missing) == ["runbook.md", "errors.md"]
