"""SPEC section 5 full-text query compilation: examples and properties."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from groove.fulltext import Stamp, TextRow
from groove.fulltext.tantivy import TantivyIndex
from groove.search.query import PHRASE_CAP, ParsedQuery, parse_query, query_phrases

# --- SPEC and citations.md examples ---------------------------------------------


@pytest.mark.parametrize(
    ("raw", "phrases"),
    [
        ("再ランキングの評価について", ("再ランキング", "ランキング", "の評価", "について")),
        ('"Foundry Local" の設定', ("Foundry Local", "の設定")),
        ("AI について", ("について",)),
        ("ML pipelines", ("pipelines",)),
        ("tokio::spawn", ("tokio", "spawn")),
        ("rust、tokio", ("rust", "tokio")),
    ],
)
def test_spec_examples_compile_exactly(raw: str, phrases: tuple[str, ...]) -> None:
    assert parse_query(raw).fulltext_phrases == phrases


def test_ml_pipelines_searches_only_pipelines() -> None:
    assert query_phrases("ML pipelines") == ["pipelines"]


# --- step 1: exclusions -----------------------------------------------------------


def test_term_exclusion_is_removed_from_positive_text_and_negated_in_fts() -> None:
    parsed = parse_query("rust -async runtime")
    assert parsed.positive_text == "rust  runtime"
    assert parsed.exclusions == ("async",)
    assert parsed.phrases == ("rust", "runtime")
    assert parsed.fulltext_phrases == ("rust", "runtime") and parsed.exclusions == ("async",)


def test_quoted_exclusion_spans_whitespace() -> None:
    parsed = parse_query('tokio -"thread pool" spawn')
    assert parsed.exclusions == ("thread pool",)
    assert parsed.phrases == ("tokio", "spawn")
    assert parsed.exclusions[-1] == "thread pool"


@pytest.mark.parametrize("raw", ["tokio-rs", "e-mail setup", "a - b", "rust -", "- rust"])
def test_in_word_and_lone_hyphens_are_not_exclusions(raw: str) -> None:
    parsed = parse_query(raw)
    assert parsed.exclusions == ()
    assert parsed.positive_text == raw


def test_in_word_hyphen_stays_in_the_phrase() -> None:
    assert query_phrases("tokio-rs e-mail") == ["tokio-rs", "e-mail"]


@pytest.mark.parametrize("raw", ["cargo --release", "Result -> Option", "a --- b", '"x"-y'])
def test_dash_groups_without_a_term_are_plain_text(raw: str) -> None:
    assert parse_query(raw).exclusions == ()


def test_hyphen_inside_a_positive_quoted_phrase_is_not_an_exclusion() -> None:
    parsed = parse_query('"rust -async" guide')
    assert parsed.exclusions == ()
    assert parsed.phrases == ("rust -async", "guide")


def test_quoted_exclusion_followed_by_dash_term_excludes_both() -> None:
    # citations.md's lost-highlight case: here positive text and FTS agree, both drop baz.
    parsed = parse_query('foo -"bar"-baz')
    assert parsed.positive_text == "foo "
    assert parsed.exclusions == ("bar", "baz")
    assert parsed.fulltext_phrases == ("foo",) and parsed.exclusions == ("bar", "baz")


def test_text_glued_after_a_quoted_exclusion_stays_positive() -> None:
    parsed = parse_query('foo -"bar"baz')
    assert parsed.exclusions == ("bar",)
    assert parsed.phrases == ("foo", "baz")


def test_exclusion_term_is_verbatim_up_to_whitespace() -> None:
    assert parse_query("rust -tokio-rs -foo,bar").exclusions == ("tokio-rs", "foo,bar")


def test_unclosed_quote_after_dash_excludes_the_literal_text() -> None:
    parsed = parse_query('rust -"async runtime')
    assert parsed.exclusions == ('"async',)
    assert parsed.phrases == ("rust", "runtime")


def test_blank_quoted_exclusion_excludes_nothing() -> None:
    parsed = parse_query('rust -"" -"  "')
    assert parsed.exclusions == ()
    assert parsed.fulltext_phrases == ("rust",)


def test_short_exclusions_are_exclusions_like_any_other() -> None:
    parsed = parse_query("rust -ab -async")
    assert parsed.exclusions == ("ab", "async")
    assert parsed.fulltext_phrases == ("rust",)


def test_exclusions_only_is_vector_only() -> None:
    parsed = parse_query("-foo -bar")
    assert parsed.fulltext_phrases == ()
    assert parsed.exclusions == ("foo", "bar")


def test_duplicate_exclusions_are_listed_once() -> None:
    assert parse_query("x -foo -foo").exclusions == ("foo",)


def test_exclusion_quote_escapes_are_undone() -> None:
    parsed = parse_query('rust -"say ""hi"""')
    assert parsed.exclusions == ('say "hi"',)


# --- step 2: quoted phrases -------------------------------------------------------


def test_doubled_quote_inside_a_phrase_is_a_literal_quote() -> None:
    parsed = parse_query('"say ""hi""" now')
    assert parsed.phrases == ('say "hi"', "now")


def test_unclosed_quote_is_plain_text() -> None:
    assert query_phrases('"Foundry Local') == ["Foundry", "Local"]


def test_unclosed_quote_turns_later_quotes_plain_too() -> None:
    # The opening quote never closes (its later quotes are escapes), so all of it is plain.
    assert query_phrases('"alpha """""""" beta') == ["alpha", "beta"]


def test_short_quoted_phrase_is_dropped() -> None:
    assert query_phrases('"ab" pipelines') == ["pipelines"]


def test_quoted_phrase_is_verbatim_including_punctuation() -> None:
    assert query_phrases('"tokio::spawn()" x') == ["tokio::spawn()"]


def test_whitespace_only_quoted_phrase_is_dropped() -> None:
    assert query_phrases('"    " tokio') == ["tokio"]


# --- steps 3-4: groups, runs, joining -----------------------------------------------


@pytest.mark.parametrize(
    ("text", "phrases"),
    [
        ("foo.bar/baz_qux", ["foo", "bar", "baz_qux"]),
        ("人々の暮らし", ["人々の", "暮らし"]),
        ("時々刻々の", ["時々刻々の", "時々刻々"]),  # 々 is kanji: one run of 4
        ("〆切日の", ["〆切日の", "〆切日"]),  # 〆 is kanji: one run of 3
        ("〆切の延長", ["〆切の延長"]),  # trailing short run joins the previous unit
        ("データベースの設計", ["データベース", "の設計"]),  # ー is katakana
        ("ﾃﾞｰﾀの", ["ﾃﾞｰﾀの", "ﾃﾞｰﾀ"]),  # half-width katakana, trailing short run
        ("ランキングの", ["ランキングの", "ランキング"]),
        ("再ランキングの", ["再ランキングの", "ランキング"]),
        ("の評", []),  # never reaches 3
        ("AIについて", ["AIについて", "について"]),
        ("Rust入門", ["Rust入門", "Rust"]),
        ("AIで入門", ["AIで入門"]),
        ("第3章", ["第3章"]),
        ("ランキング・評価基準", ["ランキング", "評価基準"]),  # ・ separates
        ("cafe\u0301 menu", ["cafe\u0301", "menu"]),  # combining accent stays in the word
    ],
)
def test_groups_and_script_runs(text: str, phrases: list[str]) -> None:
    assert query_phrases(text) == phrases


def test_phrases_are_deduplicated_in_order() -> None:
    assert query_phrases("tokio rust tokio Rust") == ["tokio", "rust", "Rust"]


# --- step 5: cap ----------------------------------------------------------------------


def test_cap_keeps_the_first_32_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    words = [f"word{i:02d}" for i in range(40)]
    with caplog.at_level(logging.WARNING, logger="groove.search.query"):
        parsed = parse_query(" ".join(words))
    assert parsed.phrases == tuple(words[:PHRASE_CAP])
    assert parsed.capped
    assert [r.name for r in caplog.records] == ["groove.search.query"]
    assert caplog.records[0].levelno == logging.WARNING


def test_exactly_32_is_not_capped(caplog: pytest.LogCaptureFixture) -> None:
    words = [f"word{i:02d}" for i in range(PHRASE_CAP)]
    with caplog.at_level(logging.WARNING, logger="groove.search.query"):
        parsed = parse_query(" ".join(words * 3))  # duplicates do not count
    assert len(parsed.phrases) == PHRASE_CAP
    assert not parsed.capped
    assert caplog.records == []


def test_cap_warning_can_be_silenced_for_per_hit_callers(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="groove.search.query"):
        phrases = query_phrases(" ".join(f"w{i:03d}" for i in range(50)), warn_on_cap=False)
    assert len(phrases) == PHRASE_CAP
    assert caplog.records == []


# --- step 6: whole-text fallback ---------------------------------------------------------


def test_no_phrase_falls_back_to_the_whole_trimmed_text_for_fts_only() -> None:
    assert query_phrases("  ab cd  ") == []  # match_spans then uses its whitespace fallback
    assert parse_query("  ab cd  ").fulltext_phrases == ("ab cd",)


@pytest.mark.parametrize(("raw", "searched"), [("AI", ("AI",)), ("  ab  ", ("ab",)),
                                               ("猫", ("猫",)), ("ab -async", ("ab",))])
def test_under_three_characters_is_still_searched_as_a_whole(raw: str, searched) -> None:
    assert parse_query(raw).phrases == ()
    assert parse_query(raw).fulltext_phrases == searched


@pytest.mark.parametrize("raw", ["", "   ", "-"])
def test_blank_is_vector_only(raw: str) -> None:
    assert parse_query(raw).fulltext_phrases == ()


def test_nul_and_lone_surrogates_become_spaces() -> None:
    parsed = parse_query("foo\x00bar \ud800baz")
    assert parsed.positive_text == "foo bar  baz"
    assert parsed.phrases == ("foo", "bar", "baz")
    assert parsed.raw == "foo\x00bar \ud800baz"


# --- the phrases against a real full-text index ---------------------------------------------

_ROWS = [
    ("Async runtime", "tokio", "tokio spawns tasks on a thread pool"),
    ("Threads", "", "rust threads without tokio"),
    ("Mail", "", "e-mail setup with ASYNC hooks"),
    ("再ランキング", "", "再ランキングの評価について説明する"),
]


def _index():  # type: ignore[no-untyped-def]
    directory = tempfile.mkdtemp(prefix="groove-query-")
    index = TantivyIndex(Path(directory) / "x.fts")
    index.add([TextRow(i, i, h, c, b) for i, (h, c, b) in enumerate(_ROWS, start=1)])
    index.commit(Stamp("t", 1))
    index.release_writer()
    return index


_INDEX = _index()


def _match(raw: str) -> list[int]:
    parsed = parse_query(raw)
    excluded = _INDEX.matching(parsed.exclusions)
    return sorted(c for c, _ in _INDEX.search(parsed.fulltext_phrases, 10) if c not in excluded)


def test_exclusion_drops_rows_by_heading_breadcrumb_or_content_case_insensitively() -> None:
    assert _match("tokio") == [1, 2]
    # row 1 has "Async" in its heading, row 3 "ASYNC" in its content
    assert _match("tokio -async") == [2]
    assert _match('tokio -"thread pool"') == [2]
    assert _match("spawns -tokio") == []  # row 1 holds "tokio" in its breadcrumb only
    assert _match("Async -okio") == [1, 3]  # a word test: "okio" is not a word here


def test_japanese_phrases_match() -> None:
    assert _match("再ランキングの評価について") == [4]
    assert _match("評") == [4]


# --- properties -----------------------------------------------------------------------------

_JA = list("再ランキングの評価について人々〆ーｰﾃﾞﾀ・、。データベース設計")
_SPECIAL = ['"', "-", " ", "\u3000", "_", ":", "\x00"]
_mixed_char = st.one_of(
    st.characters(),
    st.sampled_from(_JA),
    st.sampled_from(list("abcXYZ019")),
    st.sampled_from(_SPECIAL),
)
_mixed_text = st.text(alphabet=_mixed_char, max_size=60)
_storm_text = st.text(alphabet=st.sampled_from(list('"- ab\u3042カ漢')), max_size=60)
_hostile_text = st.text(
    alphabet=st.one_of(_mixed_char, st.sampled_from(["\ud800", "\udfff", "\x00"])), max_size=60
)


def _is_substring(phrase: str, text: str) -> bool:
    return phrase in text or phrase.replace('"', '""') in text


@settings(max_examples=300)
@given(st.one_of(st.text(), _mixed_text, _storm_text))
def test_phrases_are_contiguous_substrings(text: str) -> None:
    phrases = query_phrases(text, warn_on_cap=False)
    assert len(phrases) <= PHRASE_CAP
    assert len(set(phrases)) == len(phrases)
    for phrase in phrases:
        assert len(phrase) >= 3
        assert _is_substring(phrase, text)


_word_char = st.one_of(
    st.characters(exclude_characters='"'),
    st.sampled_from(_JA),
    st.sampled_from(list("abcXYZ01-_:")),
)
_plain_word = st.text(alphabet=_word_char, min_size=1, max_size=10).filter(
    lambda w: w.split() == [w]
)
_quoted_word = st.text(alphabet=st.one_of(_word_char, st.just(" ")), min_size=1, max_size=10).map(
    lambda w: f'"{w}"'
)
_words = st.lists(st.one_of(_plain_word, _quoted_word), min_size=1, max_size=8)


@settings(max_examples=150)
@given(_words, st.randoms(use_true_random=False))
def test_phrases_of_a_query_are_the_deduped_phrases_of_its_words(words, rnd) -> None:
    """The strongest order statement: each word contributes on its own, so below the cap
    reordering words (whole quoted phrases counting as words) gives the same set."""
    query = " ".join(words)
    per_word = list(dict.fromkeys(p for w in words for p in query_phrases(w)))
    assume(len(per_word) <= PHRASE_CAP)
    assert query_phrases(query) == per_word
    shuffled = words[:]
    rnd.shuffle(shuffled)
    assert set(query_phrases(" ".join(shuffled))) == set(per_word)


@settings(max_examples=300)
@given(st.one_of(st.text(), _mixed_text, _storm_text, _hostile_text))
def test_parse_query_never_raises_and_the_index_accepts_the_phrases(raw: str) -> None:
    parsed = parse_query(raw)
    assert isinstance(parsed, ParsedQuery)
    _INDEX.search(parsed.fulltext_phrases, 10)
    _INDEX.matching(parsed.exclusions)


@settings(max_examples=300)
@given(st.one_of(st.text(), _mixed_text, _storm_text, _hostile_text))
def test_positive_text_is_the_single_source(raw: str) -> None:
    parsed = parse_query(raw)
    again = parse_query(parsed.positive_text)
    # nothing left to exclude, and re-reading the positive text finds the same phrases
    assert again.exclusions == ()
    assert again.positive_text == parsed.positive_text
    assert again.phrases == parsed.phrases
    split = query_phrases(parsed.positive_text, warn_on_cap=False)
    if split:
        assert parsed.phrases == tuple(split)
    for excluded in parsed.exclusions:
        assert excluded.strip()
