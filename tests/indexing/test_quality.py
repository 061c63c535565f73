"""The per-chunk quality score (SPEC 3)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groove.indexing.quality import is_boilerplate, quality_score

LONG_LINE = "A real sentence that explains how the indexer walks the knowledge base folder."
PARAGRAPH = ("The indexer walks the folder, hashes each file and re-embeds only what changed.\n"
             "Renames keep their embeddings because the bytes did not change.")
JA_PARAGRAPH = ("インデックス作成ではフォルダを走査し、各ファイルのハッシュを計算します。\n"
                "変更があったファイルだけを再度埋め込みます。")


def test_substantial_multiline_text_scores_full():
    assert quality_score(PARAGRAPH) == 1.0
    assert quality_score(JA_PARAGRAPH) == 1.0


def test_single_line_under_80_characters_loses_03():
    assert len(LONG_LINE) < 80
    assert quality_score(LONG_LINE) == pytest.approx(0.7)
    assert quality_score("x" * 80) == 1.0


def test_under_30_characters_loses_06_on_top():
    assert quality_score("Port is 3100 by default.") == pytest.approx(0.1)
    assert quality_score("short\nbut two lines") == pytest.approx(0.4)
    assert quality_score("ポートは既定で3100です。") == pytest.approx(0.1)


@pytest.mark.parametrize("stub", [
    "TBD", "todo", "**TODO**", "- [ ] TODO: TBD", "WIP...", "Coming soon!", "_to be written_",
    "Placeholder", "lorem ipsum dolor sit amet", "詳細は後述", "（準備中）", "詳細は後述します。",
    "> 準備中 / TBD",
])
def test_boilerplate_only_content_scores_zero(stub):
    assert is_boilerplate(stub)
    assert quality_score(stub) == 0.0


def test_long_boilerplate_is_penalised_but_not_for_length():
    text = "TODO\nTBD\nWIP\nComing soon\nTo be written\nPlaceholder\n準備中\n詳細は後述"
    assert len(text) >= 30
    assert quality_score(text) == pytest.approx(0.5)


def test_text_mentioning_a_placeholder_is_not_boilerplate():
    assert not is_boilerplate("TODO: write the migration guide for the v2 schema")
    assert not is_boilerplate("準備中のため、当面は旧サーバーを使ってください。")
    assert not is_boilerplate("---")
    assert quality_score("TODO: write the migration guide for the v2 schema") == pytest.approx(0.7)


def test_binary_formats_are_exempt():
    assert quality_score("TBD", binary_format=True) == 1.0
    assert quality_score("", binary_format=True) == 1.0


def test_surrounding_whitespace_does_not_count():
    assert quality_score("\n\n   TBD   \n\n") == 0.0
    assert quality_score("\n" + LONG_LINE + "\n\n") == pytest.approx(0.7)


@given(st.text(), st.booleans())
def test_score_is_always_within_bounds(text, binary):
    score = quality_score(text, binary_format=binary)
    assert 0.0 <= score <= 1.0


@given(st.text(max_size=40))
def test_normalising_drops_exactly_whitespace_punctuation_and_symbols(text):
    """The translate table equals the per-character definition on any text."""
    import unicodedata

    from groove.indexing.quality import _normalise

    folded = unicodedata.normalize("NFKC", text).casefold()
    assert _normalise(text) == "".join(
        ch for ch in folded if not (ch.isspace() or unicodedata.category(ch)[0] in "PS"))


@pytest.mark.parametrize("body", [
    '<a id="string-literals-are-slices"></a>',
    "---",
    "![diagram of the stack](img/stack.svg)",
    '<img src="trpl04-01.svg" class="center" />\n\n<br/>',
    "* * *",
])
def test_a_body_of_anchors_images_and_rules_has_no_words_of_its_own(body: str) -> None:
    from groove.indexing.quality import is_link_or_metadata_only

    assert is_link_or_metadata_only(body)


@pytest.mark.parametrize(("body", "links_only"), [
    ("- [Error handling][errors] - what a Result is", True),
    ("- [tokio][]\n- [Ownership][own]", True),
    ("- [ ] buy milk\n- [x] return the books", False),  # a task list, not links
    ("- [Rust](https://en.wikipedia.org/wiki/Rust_(programming_language)) - the language",
     True),  # balanced parentheses in a destination
    ("- [Error handling][errors] explains why every fallible call in this crate returns "
     "a Result rather than panicking, with examples", False),  # a note long enough is prose
])
def test_a_list_of_reference_links_is_links_only_and_a_task_list_is_not(body: str,
                                                                        links_only: bool) -> None:
    from groove.indexing.quality import is_link_or_metadata_only

    assert is_link_or_metadata_only(body) is links_only


@pytest.mark.parametrize("body", ["A <b>bold</b> claim about slices.", "x < y and y > z means less",
                                  "| a | b |\n|---|---|\n| 1 | 2 |"])
def test_words_around_markup_are_still_words(body: str) -> None:
    from groove.indexing.quality import is_link_or_metadata_only

    assert not is_link_or_metadata_only(body)


# --- a section of links ranks below the content it points at --------------------------------
LINKED_NOTES = {
    "rust/index.md": """
        # Rust

        Notes on the Rust language, kept while building the crawler.

        ## See also

        - [[rust-errors]] - [Error handling](errors.md)
        - [[tokio]] - [Async runtime](tokio.md)
        - [[ownership|Ownership rules]]
        """,
    "rust/tokio.md": """
        # Tokio

        Tokio is the asynchronous runtime most Rust services use: it schedules tasks on a
        pool of worker threads and drives timers and sockets from one reactor.
        """,
    "rust/rust-errors.md": """
        # Error handling

        Rust returns errors as values: functions give a Result, and the question-mark
        operator passes an error up to the caller.
        """,
    "garden/compost.md": """
        # Compost

        Turn the heap every two weeks and keep it as damp as a wrung-out sponge.
        """,
}


#: The same "See also" written with reference links, defined at the end of the note.
REFERENCE_SEE_ALSO = """
        # Rust

        Notes on the Rust language, kept while building the crawler.

        ## See also

        - [Error handling][errors] - [Async runtime][tokio]
        - [tokio][]
        - [Ownership rules][own]

        [errors]: rust-errors.md
        [tokio]: tokio.md "Tokio"
        [own]: ownership.md
        """


@pytest.mark.parametrize("links", ["inline", "reference"])
@pytest.mark.parametrize("query", ["rust、tokio", "tokio runtime", "rust error handling"])
def test_a_section_of_links_does_not_outrank_the_notes_it_links(tmp_path, write_files,
                                                                 make_kb, query, links) -> None:
    from groove.search.request import SearchRequest

    notes = dict(LINKED_NOTES)
    if links == "reference":
        notes["rust/index.md"] = REFERENCE_SEE_ALSO
    kb = make_kb(write_files(tmp_path / "kb", notes))
    kb.index()
    hits = kb.search(SearchRequest(query=query, limit=5)).results
    assert hits and hits[0].path != "rust/index.md", [(h.path, h.heading) for h in hits]
    assert all(h.heading != "See also" for h in hits)  # never a chunk of links alone


def _bare_line_trying_every_pattern(line: str) -> bool:
    """The bare-line rule with every pattern applied to every line (no marks looked for)."""
    from groove.indexing import quality

    if quality._RULE.match(line):
        return True
    rest = quality._DATE.sub(" ", quality._URL.sub(" ", quality._MD_LINK.sub(
        " ", quality._HTML_TAG.sub(" ", line))))
    return not any(ch.isalnum() for ch in quality._LINE_MARKUP.sub("", rest))


_MARKUP_HEAVY = st.lists(st.sampled_from([
    "<", ">", "</a>", "<br/>", "<!--", "-->", "[", "]", "(", ")", "](", "![", "[[", "]]",
    "|", ":", "：",
    "http", "https://", "mailto:", "ftp:", "-", "/", ".", "年", "月", "日", "T", "Z", " ",
    "\t", "#", ">", "*", "|", "_", "=", "0", "1", "12", "2025", "9", "a", "x", "b",
    "漢", "テ", "é", "٣",
]), max_size=24).map("".join)


@given(_MARKUP_HEAVY)
def test_a_line_is_bare_exactly_when_every_pattern_tried_says_so(line):
    """Skipping a pattern whose mark a line lacks never changes the answer."""
    from groove.indexing.quality import _is_bare_line

    assert _is_bare_line(line) == _bare_line_trying_every_pattern(line)


# --- hostile lines: the patterns answer as they were written first, without the blow-up --------
#: The first spellings of the rule and heading patterns: ``\s*`` runs that a long run of
#: blanks could be cut between in every way (benchmarks/hostile_input.py measures it).
_RULE_AS_FIRST_WRITTEN = r"^\s*(?:[-*_=]\s*){3,}$|^\s*\|?(?:\s*:?-+:?\s*\|)+\s*:?-*:?\s*$"


@given(st.text(st.sampled_from(" \t-*_=|:x"), max_size=30))
def test_the_rule_pattern_answers_as_first_written(line: str) -> None:
    """Possessive blanks in the horizontal-rule / table-delimiter pattern change no answer."""
    import re

    from groove.indexing.quality import _RULE

    assert bool(_RULE.match(line)) == bool(re.match(_RULE_AS_FIRST_WRITTEN, line))


@pytest.mark.parametrize("line", ["[" * 5000, "![" * 3000, "<" * 5000, "<!--" * 2000,
                                  "*_" * 3000 + "text", " " * 5000 + "x", "[x](" * 2000])
def test_a_hostile_line_gets_the_verdict_of_its_words(line: str) -> None:
    """Lines that once cost the square of their length (minutes at 16 KB) are read like any
    line: one of markup alone is bare, one ending in a word is not."""
    from groove.indexing.quality import is_link_or_metadata_only

    assert is_link_or_metadata_only(line) is (not any(ch.isalnum() for ch in line))
