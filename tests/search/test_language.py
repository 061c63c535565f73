"""Script families for language-aware retrieval (search/language.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.search.language import CJK_SHARE, cjk_share, is_cjk, is_prose, prose_words


def test_japanese_english_and_mixed_texts() -> None:
    assert is_cjk("台風のとき、はまかぜプライドはどこへ避難する？")
    assert is_cjk("改札機に PG-E311 が出たときはどうすればいい？")  # one code in a Japanese question
    assert is_cjk("浜風本社の会議室のWi-Fiパスワードを教えてください")
    assert not is_cjk("What is Hamakaze Pride's maximum draught?")
    assert not is_cjk("how to say 台風 in English when writing to a client")
    assert not is_cjk("")
    assert not is_cjk("--- *** \"\"")


@given(st.text())
def test_the_share_is_a_fraction_and_decides_the_family(text: str) -> None:
    share = cjk_share(text)
    assert 0.0 <= share <= 1.0
    assert is_cjk(text) == (share >= CJK_SHARE)


@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126)))
def test_ascii_text_is_never_cjk(text: str) -> None:
    assert cjk_share(text) == 0.0


@given(st.text(alphabet="あいうえおアイウエオ漢字台風", min_size=1))
def test_kana_and_kanji_text_is_cjk(text: str) -> None:
    assert cjk_share(text) == 1.0


def test_a_question_in_words_is_prose_and_a_term_lookup_is_not() -> None:
    for lookup in ("Retry-After header", "02:00 UTC", "3007 が返ってきた", "scripts/bootstrap",
                   "chore prefix", "台風の当直"):
        assert not is_prose(lookup), lookup
    for question in ("tightening torque for the fuel filter housing cover bolts",
                     "ターミナルの防犯カメラの録画は何日残る？",
                     "days_mask value for a Monday-to-Friday sailing"):
        assert is_prose(question), question


@given(st.text(), st.text())
def test_more_text_never_has_fewer_prose_words(a: str, b: str) -> None:
    assert prose_words(a + " " + b) >= prose_words(a)


def test_a_documents_script_is_judged_on_its_text_not_its_file_name() -> None:
    from groove.search.language import SCRIPT_SAMPLE_CHARS, document_is_cjk

    assert document_is_cjk("ch16 01 threads", ["スレッドを使用して、コードを同時に走らせる。",
                                               "```rust\nlet handle = thread::spawn(|| {});\n```"])
    assert not document_is_cjk("スレッド", ["Threads let a program run code at the same time, "
                                          "and this chapter shows how."])
    # only the first SCRIPT_SAMPLE_CHARS characters are read
    assert not document_is_cjk("notes", ["x" * SCRIPT_SAMPLE_CHARS, "日本語" * 10_000])


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200)
       | st.text(alphabet="あいうアイウ漢字ー・゛゠々〆ｶ0１aéß_ -、。", max_size=60))
def test_the_counted_share_is_the_share_per_character(text: str) -> None:
    """cjk_share counts with regular expressions; the rule is per character."""
    from groove.search.query import is_cjk_char

    letters = [c for c in text if c.isalnum()]
    expected = sum(1 for c in letters if is_cjk_char(c)) / len(letters) if letters else 0.0
    assert cjk_share(text) == pytest.approx(expected, abs=1e-12)
