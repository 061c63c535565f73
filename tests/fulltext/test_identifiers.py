"""Identifiers cut into their words (groove.fulltext.identifiers) and the ``parts`` field
of the full-text index that holds them: ``redirect url`` finds ``_redirect_url``."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from groove.fulltext import Stamp, TextRow
from groove.fulltext.identifiers import (
    MAX_PARTS,
    identifier_parts,
    query_parts,
    split_identifier,
)
from groove.fulltext.tantivy import TantivyIndex


def test_each_naming_style_is_cut_into_its_words():
    assert split_identifier("_redirect_url") == ["redirect", "url"]
    assert split_identifier("hybridQuery") == ["hybrid", "Query"]
    assert split_identifier("PascalCase") == ["Pascal", "Case"]
    assert split_identifier("kebab-case-name") == ["kebab", "case", "name"]
    assert split_identifier("MAX_CHUNK_CHARS") == ["MAX", "CHUNK", "CHARS"]
    assert split_identifier("HTTPServer") == ["HTTP", "Server"]
    assert split_identifier("sha256_hex") == ["sha256", "hex"]
    assert split_identifier("plain") == ["plain"]


def test_only_compound_identifiers_give_parts():
    text = "def _redirect_url(self):\n    return buildUrl(self.base)  # the plain words stay"
    assert identifier_parts(text) == ["redirect url", "build Url"]
    assert identifier_parts("A sentence of Plain prose, well-known words.") == []


def test_a_question_is_cut_word_by_word():
    assert query_parts("where is hybridQuery built") == ["where", "is", "hybrid", "Query",
                                                         "built"]


_PIECE = st.text(alphabet=st.characters(categories=("Lu", "Ll", "Nd")), min_size=1,
                 max_size=8)
_IDENTIFIER = st.lists(_PIECE, min_size=1, max_size=5).flatmap(
    lambda pieces: st.lists(st.sampled_from(["_", "-", "__", ""]), min_size=len(pieces) - 1,
                            max_size=len(pieces) - 1).map(
        lambda seps: "".join(p + s for p, s in zip(pieces, [*seps, ""], strict=True))))


@given(_IDENTIFIER)
def test_parts_keep_every_letter_in_order(identifier):
    parts = split_identifier(identifier)
    assert "".join(parts) == re.sub(r"[_\-]", "", identifier)
    assert all(parts)


@given(_IDENTIFIER)
def test_cutting_a_part_again_leaves_it_whole(identifier):
    for part in split_identifier(identifier):
        assert split_identifier(part) == [part]


_TEXT = st.lists(st.one_of(_IDENTIFIER, st.text(max_size=12)), max_size=8).map(" ".join)


@given(_TEXT)
def test_a_text_gives_the_parts_of_exactly_its_compound_words(text):
    """The skip of plain words (``Word``, ``2024``, any case) never drops a compound one:
    every word the tokenizer keeps whole is cut, and the ones of 2 to MAX_PARTS parts kept."""
    cut = (split_identifier(word) for word in re.findall(r"\w+", text))
    assert identifier_parts(text) == [" ".join(p) for p in cut if 2 <= len(p) <= MAX_PARTS]


def test_the_parts_field_matches_words_inside_names_but_never_excludes_by_them(tmp_path):
    index = TantivyIndex(tmp_path / "fts")
    index.add([
        TextRow(1, 1, "_redirect_url", "auth.py > def _redirect_url",
                "def _redirect_url(self):\n    return self.base + '/login'"),
        TextRow(2, 2, "hybridQuery", "search.ts > function hybridQuery",
                "export function hybridQuery(q) { return fuse(q) }"),
        TextRow(3, 3, "Notes", "notes.md > Notes", "We talked about the weather today."),
    ])
    index.commit(Stamp("t", 1))
    assert [c for c, _ in index.search(["redirect", "url"], 5)] == [1]
    assert [c for c, _ in index.search(["hybrid query"], 5)] == [2]
    assert [c for c, _ in index.search(["hybridQuery"], 5)] == [2]
    assert [c for c, _ in index.search(["weather"], 5)] == [3]
    # an exclusion is the word as written: "redirect" is not a word of chunk 1's text
    assert index.matching(["redirect"]) == set()
    index.close()
