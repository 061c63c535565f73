"""match_spans per citations.md: examples and the six guarantees as properties."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from groove.search.query import PHRASE_CAP, parse_query, query_phrases
from groove.search.spans import (
    MATCH_SPAN_CONTENT_MAX_BYTES,
    MATCH_SPAN_MAX_COUNT,
    fold_spans,
    match_spans,
    match_terms,
)


def _pairs(spans: list[dict[str, int]] | None) -> list[tuple[int, int]] | None:
    return None if spans is None else [(s["start"], s["end"]) for s in spans]


def _texts(content: str, spans: list[dict[str, int]]) -> list[str]:
    data = content.encode("utf-8")
    return [data[s["start"] : s["end"]].decode("utf-8") for s in spans]


# --- citations.md examples ------------------------------------------------------------


def test_tokio_spawn_example() -> None:
    spans = match_spans("tokio::spawn", "Use tokio::spawn for async tasks.")
    assert spans == [{"start": 4, "end": 9}, {"start": 11, "end": 16}]


def test_quoted_phrase_and_its_word_do_not_overlap() -> None:
    content = "Foundry Local runs models. Foundry is the brand."
    spans = match_spans('"Foundry Local" Foundry', content)
    assert _texts(content, spans) == ["Foundry Local", "Foundry"]
    assert _pairs(spans) == [(0, 13), (27, 34)]


def test_quoted_phrase_is_one_span_not_one_per_word() -> None:
    content = "Install Foundry Local, then Local models work."
    assert _texts(content, match_spans('"Foundry Local"', content)) == ["Foundry Local"]


def test_non_ascii_separator_does_not_suppress_spans() -> None:
    content = "rust and Tokio"
    assert _texts(content, match_spans("rust、tokio", content)) == ["rust", "Tokio"]


def test_whitespace_fallback_when_no_phrase_exists() -> None:
    content = "ab and cd, abcd"
    assert _texts(content, match_spans("ab cd", content)) == ["ab", "cd", "ab", "cd"]


def test_fallback_is_not_used_when_a_phrase_exists() -> None:
    content = "ML pipelines for ML"
    assert _texts(content, match_spans("ML pipelines", content)) == ["pipelines"]


@pytest.mark.parametrize("query", ["再ランキングの評価", "AI について", "rust 設定です"])
def test_non_ascii_term_gives_none(query: str) -> None:
    assert match_spans(query, "rust AI ランキング") is None


@pytest.mark.parametrize("query", ["", "   ", "\t\n\u3000"])
def test_empty_query_gives_none(query: str) -> None:
    assert match_spans(query, "anything") is None


def test_no_match_gives_empty_list() -> None:
    assert match_spans("tokio", "nothing relevant here") == []


def test_content_size_limit_is_in_utf8_bytes() -> None:
    at_limit = "tokio " + "x" * (MATCH_SPAN_CONTENT_MAX_BYTES - 6)
    assert match_spans("tokio", at_limit) == [{"start": 0, "end": 5}]
    over = "tokio " + "é" * ((MATCH_SPAN_CONTENT_MAX_BYTES - 6) // 2 + 1)  # fewer chars, more bytes
    assert len(over) < MATCH_SPAN_CONTENT_MAX_BYTES
    assert match_spans("tokio", over) is None


def test_adjacent_matches_stay_separate() -> None:
    assert _pairs(match_spans("abc", "abcabc")) == [(0, 3), (3, 6)]


def test_overlapping_matches_of_different_terms_merge() -> None:
    assert _pairs(match_spans("foob obar", "xfoobarx")) == [(1, 7)]


def test_occurrences_of_one_term_do_not_overlap() -> None:
    assert _pairs(match_spans("aaa", "aaaaa")) == [(0, 3)]


def test_ascii_case_fold_only() -> None:
    content = "TOKIO \u212aelvin kelvin"  # U+212A KELVIN SIGN lower-cases to ASCII k in Unicode
    assert _texts(content, match_spans("Tokio Kelvin", content)) == ["TOKIO", "kelvin"]


def test_offsets_are_bytes_after_multibyte_text() -> None:
    content = "İ日本語 tokio 🎉 tokio"
    spans = match_spans("tokio", content)
    assert _pairs(spans) == [(12, 17), (23, 28)]
    assert _texts(content, spans) == ["tokio", "tokio"]


def test_span_cap_is_100() -> None:
    spans = match_spans("tokio", "tokio " * 500)
    assert len(spans) == MATCH_SPAN_MAX_COUNT
    assert _pairs(spans)[-1] == (594, 599)


def test_budget_is_shared_so_a_rare_term_is_covered() -> None:
    content = "common " * 500 + "rare"
    spans = match_spans("common rare", content)
    texts = _texts(content, spans)
    assert texts.count("common") == 50
    assert texts.count("rare") == 1


def test_leftover_budget_is_not_redistributed() -> None:
    words = [f"t{i:02d}x" for i in range(32)]
    content = " ".join(words * 10)
    assert len(match_spans(" ".join(words), content)) == 32 * (100 // 32)


def test_case_variants_are_one_term() -> None:
    assert match_terms("Rust rust RUST") == (b"rust",)
    assert len(match_spans("Rust rust", "rust " * 200)) == 100


def test_fallback_is_sorted_then_cut_to_100() -> None:
    words = [f"{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(150)]  # 2-char words
    content = " ".join(words)
    forward = match_spans(" ".join(words), content)
    backward = match_spans(" ".join(reversed(words)), content)
    assert forward == backward
    assert _texts(content, forward) == sorted(words)[:100]


def test_excluded_group_produces_no_span() -> None:
    content = "rust async foo bar baz"
    assert _texts(content, match_spans(parse_query("rust -async").positive_text, content)) == [
        "rust"
    ]
    positive = parse_query('foo -"bar"-baz').positive_text
    assert _texts(content, match_spans(positive, content)) == ["foo"]


def test_content_with_lone_surrogate_gives_none() -> None:
    assert match_spans("tokio", "tokio \ud800") is None


def test_fold_is_idempotent_and_keeps_adjacent() -> None:
    assert fold_spans([(5, 9), (0, 3), (3, 5), (2, 4)]) == [(0, 5), (5, 9)]
    assert fold_spans([(0, 5), (5, 9)]) == [(0, 5), (5, 9)]


# --- the six guarantees, and byte safety, as properties ------------------------------------

_ascii_word = st.text(alphabet="abcAB_-:.", min_size=1, max_size=6)
_other_char = st.one_of(st.characters(), st.sampled_from(list("日本語のé🎉 \n")))


def _occurrences_any(term: bytes, data: bytes) -> list[tuple[int, int]]:
    """Every occurrence, overlapping ones included."""
    found, pos = [], data.find(term)
    while pos != -1:
        found.append((pos, pos + len(term)))
        pos = data.find(term, pos + 1)
    return found


def _check(query: str, content: str, spans: list[dict[str, int]] | None) -> None:
    terms = match_terms(query)
    if terms is None:
        assert spans is None
        return
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogate: no UTF-8 offsets exist
        assert spans is None
        return
    if len(data) > MATCH_SPAN_CONTENT_MAX_BYTES:
        assert spans is None
        return
    assert spans is not None
    pairs = _pairs(spans)
    assert len(pairs) <= MATCH_SPAN_MAX_COUNT  # bounded
    assert all(s < e for s, e in pairs)  # non-empty
    assert all(a[1] <= b[0] for a, b in zip(pairs, pairs[1:], strict=False))  # sorted, disjoint
    assert fold_spans(pairs) == pairs  # idempotent
    folded = data.lower()
    for s, e in pairs:
        data[:s].decode("utf-8")  # codepoint boundaries: both slices decode
        data[s:e].decode("utf-8")
        # the slice is exactly a union of term occurrences lying inside it
        piece = folded[s:e]
        covered = bytearray(len(piece))
        for term in terms:
            for a, b in _occurrences_any(term, piece):
                covered[a:b] = b"\x01" * (b - a)
        assert all(covered)
    if len(terms) <= 100:  # covering
        for term in terms:
            occ = _occurrences_any(term, folded)
            if occ:
                assert any(s <= a and b <= e for a, b in occ for s, e in pairs)


@st.composite
def _query_and_content(draw):
    words = draw(st.lists(_ascii_word, min_size=1, max_size=8))
    pieces = draw(
        st.lists(
            st.one_of(st.sampled_from(words), st.sampled_from(words).map(str.upper), _other_char),
            max_size=40,
        )
    )
    return words, "".join(pieces)


@settings(max_examples=400)
@given(_query_and_content(), st.randoms(use_true_random=False))
def test_guarantees_and_order_independence(qc, rnd) -> None:
    words, content = qc
    query = " ".join(words)
    spans = match_spans(query, content)
    _check(query, content, spans)
    if len(query_phrases(query, warn_on_cap=False)) < PHRASE_CAP:
        shuffled = words[:]
        rnd.shuffle(shuffled)
        assert match_spans(" ".join(shuffled), content) == spans  # order-independent


@settings(max_examples=300)
@given(st.text(max_size=40), st.text(max_size=80))
def test_guarantees_hold_on_arbitrary_unicode(query: str, content: str) -> None:
    _check(query, content, match_spans(query, content))


@settings(max_examples=200)
@given(
    st.lists(st.text(alphabet="ab", min_size=1, max_size=3), min_size=1, max_size=120),
    st.text(alphabet="ab ", max_size=400),
)
def test_guarantees_on_dense_matches(words: list[str], content: str) -> None:
    query = " ".join(words)
    spans = match_spans(query, content)
    _check(query, content, spans)
    assert match_spans(" ".join(reversed(words)), content) == spans


@settings(max_examples=200)
@given(st.lists(st.text(alphabet="xyz", min_size=3, max_size=5), min_size=1, max_size=6))
def test_many_occurrences_stay_bounded_and_cover_every_term(words: list[str]) -> None:
    query = " ".join(words)
    content = " ".join(words * 60)
    spans = match_spans(query, content)
    _check(query, content, spans)
    assume(spans)
    assert len(spans) <= MATCH_SPAN_MAX_COUNT


# --- all-language spans (opt-in, docs/citations.md) ------------------------------------


def test_japanese_terms_are_highlighted_only_when_asked() -> None:
    content = "台風のときは避泊地へ移動します。台風警報"
    assert match_spans("避泊地 台風警報", content) is None
    spans = match_spans("避泊地 台風警報", content, all_languages=True)
    assert _texts(content, spans) == ["避泊地", "台風警報"]


def test_unicode_case_folding_and_a_widened_expansion() -> None:
    content = "ÉCOLE and straße"
    assert _texts(content, match_spans("école", content, all_languages=True)) == ["ÉCOLE"]
    # "ss" matches inside the folding of ß ("ss"): the span is the whole ß.
    assert _texts(content, match_spans("straße strass", content, all_languages=True)) == ["straße"]


def test_ascii_queries_are_unchanged_by_the_opt_in() -> None:
    content = "Use tokio::spawn for async tasks. K is Kelvin here: \u212a"
    for query in ("tokio::spawn", "k", "async tasks"):
        assert match_spans(query, content, all_languages=True) == match_spans(query, content)


text_st = st.text(alphabet=st.sampled_from(list("aAß台風ÉéİiΣσς 、.\u0301k\u212a")), max_size=60)


@settings(max_examples=300, deadline=None)
@given(text_st, text_st)
def test_all_language_spans_keep_the_guarantees(query: str, content: str) -> None:
    spans = match_spans(query, content, all_languages=True)
    if spans is None:
        assert not query.strip()
        return
    data = content.encode("utf-8")
    pairs = _pairs(spans)
    assert pairs == sorted(pairs)
    assert all(s < e for s, e in pairs)
    assert all(e1 <= s2 for (_, e1), (s2, _) in zip(pairs, pairs[1:], strict=False))
    assert len(pairs) <= MATCH_SPAN_MAX_COUNT
    for s, e in pairs:
        data[s:e].decode("utf-8")  # on codepoint boundaries
    plain = match_spans(query, content)
    if plain is not None:
        assert spans == plain


def test_the_fallback_cut_keeps_100_distinct_terms_after_folding() -> None:
    # 60 two-letter words, each written in two cases: 120 tokens, 60 distinct terms.
    words = [f"{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(60)]
    query = " ".join(w for word in words for w in (word, word.upper()))
    assert match_terms(query) == tuple(w.encode() for w in words)
    # 150 distinct words in mixed case: the cut keeps the first 100 folded ones.
    many = [f"{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(150)]
    mixed = " ".join(w.upper() if i % 2 else w for i, w in enumerate(many))
    assert match_terms(mixed) == tuple(w.encode() for w in sorted(many)[:100])


@given(st.lists(st.sampled_from(["rust", "Rust", "RUST", "tokio", "Tokio"]), min_size=1,
                max_size=8))
def test_case_variants_never_split_the_budget(words) -> None:
    content = "rust tokio " * 150
    spans = match_spans(" ".join(words), content)
    distinct = {w.lower() for w in words}
    assert spans is not None and len(spans) == len(distinct) * (100 // len(distinct))
