"""The tantivy full-text index: what a phrase matches, exclusions, stamps, damage."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from groove.errors import GrooveError
from groove.fulltext import Stamp, TextRow
from groove.fulltext.irregular import BASE_FORMS
from groove.fulltext.tantivy import TantivyIndex, bigrams

LATIN = ["index", "indexes", "search", "searching", "vector", "run", "running", "tokio", "rs",
         "the", "a", "of", "Kernel", "kernels"]
CJK = ["検索", "文書", "見出し", "評価", "速度", "の", "は", "猫", "東京タワー", "再ランキング"]


def stems(index: TantivyIndex, text: str) -> list[str]:
    return index._words.analyze(text)


def contains_phrase(index: TantivyIndex, row: TextRow, phrase: str) -> bool:
    """The test the engine must agree with. The phrase is cut at its CJK runs; every
    piece must occur in one of the chunk's values: a CJK run as a substring, the words
    between runs in order (as stems; CJK characters are not words)."""
    values = [row.heading or "", row.context, row.content]
    pieces = [p for p in re.split(f"({_CJK}+)", phrase) if p]
    parts_ok = []
    for piece in pieces:
        if re.fullmatch(f"{_CJK}+", piece):
            parts_ok.append(any(piece in v for v in values))
        elif words := stems(index, piece):
            parts_ok.append(any(_sublist(words, stems(index, v)) for v in values))
    return bool(parts_ok) and all(parts_ok)


_CJK = "[\u3041-\u30ff\u4e00-\u9fff]"


def _sublist(needle: list[str], hay: list[str]) -> bool:
    return any(hay[i:i + len(needle)] == needle for i in range(len(hay) - len(needle) + 1))


_text = st.lists(st.sampled_from(LATIN + CJK), min_size=1, max_size=12).map(" ".join)
_rows = st.lists(st.tuples(st.one_of(st.none(), _text), _text), min_size=1, max_size=12)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("fts")


def _build(path: Path, rows: list[tuple[str | None, str]]) -> tuple[TantivyIndex, list[TextRow]]:
    index = TantivyIndex(path)
    index.delete_all()
    text_rows = [TextRow(i, i, heading, "", content)
                 for i, (heading, content) in enumerate(rows, start=1)]
    index.add(text_rows)
    index.commit(Stamp("test", 1))
    return index, text_rows


@settings(max_examples=80, deadline=None)
@given(rows=_rows, data=st.data())
def test_a_phrase_finds_exactly_the_chunks_that_contain_it(scratch, rows, data) -> None:
    index, text_rows = _build(scratch / "prop", rows)
    try:
        source = data.draw(st.sampled_from(text_rows))
        words = (source.content).split()
        start = data.draw(st.integers(0, len(words) - 1))
        end = data.draw(st.integers(start + 1, min(len(words), start + 3)))
        # half the time a phrase from a chunk, half the time any words
        phrase = data.draw(st.one_of(st.just(" ".join(words[start:end])), _text))
        hits = {cid for cid, _ in index.search([phrase], 100)}
        expected = {r.chunk_id for r in text_rows if contains_phrase(index, r, phrase)}
        assert hits == expected, phrase
        assert index.matching([phrase]) == expected
        # The bound a search trusts before fetching a whole exclusion set.
        other = data.draw(_text)
        assert index.most_matching([phrase, other]) >= len(index.matching([phrase, other]))
    finally:
        index.release_writer()


def test_english_matching_is_stemmed_and_case_folded(tmp_path) -> None:
    index, _ = _build(tmp_path / "x", [("Kernel notes", "Running the scheduler"),
                                       (None, "schedulers run here")])
    assert {c for c, _ in index.search(["kernels"], 10)} == {1}
    assert {c for c, _ in index.search(["runs"], 10)} == {1, 2}
    assert {c for c, _ in index.search(["the scheduler"], 10)} == {1}  # a phrase: in order
    assert index.search(["scheduler the"], 10) == []


def test_japanese_of_any_length(tmp_path) -> None:
    index, _ = _build(tmp_path / "x", [(None, "東京タワーの評価"), (None, "猫は速い"),
                                       (None, "タワー")])
    assert {c for c, _ in index.search(["猫"], 10)} == {2}
    assert {c for c, _ in index.search(["タワ"], 10)} == {1, 3}
    assert {c for c, _ in index.search(["タワーの評"], 10)} == {1}
    assert index.search(["ーの評価は"], 10) == []  # a substring test, not a bag of bigrams
    assert bigrams("東京") == ["東京"] and bigrams("猫") == []


def test_a_single_character_run_does_not_match_across_runs(tmp_path) -> None:
    index, _ = _build(tmp_path / "x", [(None, "東 京")])
    assert index.search(["東京"], 10) == []


def test_the_best_chunk_comes_first(tmp_path) -> None:
    index, _ = _build(tmp_path / "x", [(None, "a vector of notes and more notes on other things"),
                                       ("Vector", "vector vector")])
    assert [c for c, _ in index.search(["vector"], 10)] == [2, 1]


def test_stamp_survives_reopening_and_deletes_apply(tmp_path) -> None:
    index, _ = _build(tmp_path / "x", [(None, "alpha"), (None, "beta")])
    index.delete_document(1)
    index.commit(Stamp("db", 7))
    index.close()
    again = TantivyIndex(tmp_path / "x")
    assert again.stamp() == Stamp("db", 7)
    assert again.count() == 1 and again.search(["alpha"], 10) == []


def test_an_unreadable_directory_is_recreated_empty(tmp_path) -> None:
    path = tmp_path / "x"
    path.mkdir()
    (path / "meta.json").write_text("{ not json", encoding="utf-8")
    index = TantivyIndex(path)
    assert index.stamp() is None  # empty: the store rebuilds it from the database
    assert index.count() == 0


def test_damaged_segments_make_an_empty_index_to_rebuild(tmp_path) -> None:
    index, _ = _build(tmp_path / "x", [(None, "alpha beta")])
    index.close()
    for f in (tmp_path / "x").iterdir():
        if f.suffix in (".idx", ".term", ".pos", ".store", ".fast", ".fieldnorm"):
            f.write_bytes(b"\0" * 16)
    damaged = TantivyIndex(tmp_path / "x")
    assert damaged.stamp() is None and damaged.search(["alpha"], 10) == []


def test_tied_chunks_make_the_cut_in_chunk_id_order(tmp_path) -> None:
    index = TantivyIndex(tmp_path / "x")
    for batch in (range(20, 10, -1), range(10, 0, -1)):  # later ids first, two segments
        index.add([TextRow(i, i, None, "", "identical text") for i in batch])
        index.commit(Stamp("t", 1))
    assert [c for c, _ in index.search(["identical"], 3)] == [1, 2, 3]


def test_a_place_it_cannot_be_created_is_one_clear_error(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(GrooveError, match="cannot open the full-text index") as exc:
        TantivyIndex(blocker / "x.fts")  # a path below a regular file
    assert "db_path" in str(exc.value)


@pytest.fixture
def engine_searches(monkeypatch) -> list[int]:
    """The limit of every search the engine runs from here on."""
    import tantivy

    calls: list[int] = []
    real = tantivy.Searcher.search

    def counting(self, *args, **kwargs):
        calls.append(args[1] if len(args) > 1 else kwargs.get("limit"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(tantivy.Searcher, "search", counting)
    return calls


def test_a_cut_without_a_tie_takes_one_search(tmp_path, engine_searches) -> None:
    """The hit beyond the cut settles whether a tie continues: no second search for it."""
    index = TantivyIndex(tmp_path / "x")
    index.add([TextRow(i, i, None, "", "word " * i) for i in range(1, 30)])  # distinct scores
    index.commit(Stamp("t", 1))
    engine_searches.clear()
    assert len(index.search(["word"], 5)) == 5
    assert len(engine_searches) == 1


def test_a_tie_across_the_cut_is_settled_by_the_first_search(tmp_path, engine_searches) -> None:
    """A tie at the cut that ends within twice the limit needs no second search (at a
    million templated chunks most queries had such a tie), and the cut still goes by
    chunk id."""
    index = TantivyIndex(tmp_path / "x")
    rows = [TextRow(i, i, None, "", "word " * (20 - i)) for i in range(1, 4)]  # three clear bests
    rows += [TextRow(i, i, None, "", "word word tail") for i in range(29, 22, -1)]  # a tie of 7
    index.add(rows)
    index.commit(Stamp("t", 1))
    engine_searches.clear()
    assert [c for c, _ in index.search(["word"], 5)] == [1, 2, 3, 23, 24]
    assert len(engine_searches) == 1


def test_an_irregular_past_form_also_searches_its_base_form(tmp_path) -> None:
    index, _ = _build(tmp_path / "x", [(None, "where we take the lock"),
                                       (None, "the lock is taken"),
                                       (None, "she wrote it"), (None, "the writer writes")])
    assert {c for c, _ in index.search(["taken"], 10)} == {1, 2}
    assert {c for c, _ in index.search(["Took"], 10)} == {1}
    assert {c for c, _ in index.search(["written"], 10)} == {4}
    assert {c for c, _ in index.search(["write"], 10)} == {4}  # a base form does not find "wrote"
    assert index.matching(["taken"]) == {2}  # an exclusion stays a word test
    assert {c for c, _ in index.search(["is taken"], 10)} == {2}  # a phrase: words as written


@settings(max_examples=60, deadline=None)
@given(form=st.sampled_from(sorted(BASE_FORMS)), inflection=st.sampled_from(["", "s"]))
def test_every_listed_form_finds_its_base_form(scratch, form, inflection) -> None:
    """The table's guarantee: a searched irregular form finds the chunks holding its base
    form (inflected regularly); excluding the form does not drop them."""
    word = BASE_FORMS[form] + inflection
    index, _ = _build(scratch / "irregular", [(None, f"notes on {word} here"), (None, "other notes")])
    try:
        # "fly" + "s" is no English word ("flies" is): only a regular inflection that
        # the stemmer itself folds into the base form is a fair test.
        assume(index._words.analyze(word) == index._words.analyze(BASE_FORMS[form]))
        assert {c for c, _ in index.search([form], 10)} == {1}, (form, word)
        assert index.matching([form]) == set()
    finally:
        index.release_writer()


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(st.text(alphabet="あいう東", min_size=1, max_size=14), min_size=1,
                      max_size=8),
       data=st.data())
def test_a_long_japanese_phrase_matches_exactly_the_chunks_holding_it(scratch, texts,
                                                                       data) -> None:
    """A CJK run is asked as every other character pair (and the last) at its position:
    still exactly a substring test, however repetitive the text (few distinct characters
    make near misses such as あいあい against あいうあい common)."""
    index, rows = _build(scratch / "cjk", [(None, t) for t in texts])
    try:
        source = data.draw(st.sampled_from(texts))
        start = data.draw(st.integers(0, len(source) - 1))
        phrase = data.draw(st.one_of(
            st.just(source[start:start + data.draw(st.integers(1, 9))]),
            st.text(alphabet="あいう東", min_size=2, max_size=9)))
        assert {c for c, _ in index.search([phrase], 100)} == {
            r.chunk_id for r in rows if phrase in r.content}, phrase
    finally:
        index.release_writer()
