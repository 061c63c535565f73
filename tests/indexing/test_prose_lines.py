"""Prose chunks know their first and last line in the file (indexing/prose_lines.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from groove.indexing.chunking import bounded_chunks
from groove.parsers.markdown import MarkdownParser
from groove.parsers.text import TextParser


def by_chars(text: str) -> int:
    return max(1, len(text) // 4)


def chunks_of(text: str, path: str = "notes/a.md", *, max_tokens: int = 500,
              max_chunks: int = 256, exclude: list[str] | None = None):
    parser = TextParser() if path.endswith(".txt") else MarkdownParser()
    doc = parser.parse(text.encode(), path)
    return bounded_chunks(doc, exclude_headings=exclude or [], max_tokens=max_tokens,
                          count_tokens=by_chars, max_chunks=max_chunks).chunks


def assert_lines_hold(text: str, chunks) -> None:
    """Every chunk's lines are the file lines its text came from, in file order."""
    lines = text.split("\n")
    previous_end = 0
    for chunk in chunks:
        assert chunk.line_start is not None and chunk.line_end is not None, chunk
        assert previous_end <= chunk.line_start <= chunk.line_end <= len(lines)
        held = [line.strip() for line in lines[chunk.line_start - 1:chunk.line_end]]
        wanted = [line.strip() for line in chunk.content.split("\n") if line.strip()]
        assert wanted[0] in held[0] and wanted[-1] in held[-1]
        assert all(any(w in h for h in held) for w in wanted)
        previous_end = chunk.line_end


def test_a_markdown_sections_lines_count_from_the_top_of_the_file_past_its_frontmatter():
    summer = ("The first ferry leaves the harbour at six in the morning every day of the week.\n"
              "The last one leaves the island at ten in the evening, weather permitting.")
    winter = ("From November to March only two crossings a day run, one in the morning and "
              "one in the afternoon, and both can be cancelled when the wind is strong.")
    text = f"---\ntitle: Ferries\ntags: [ops]\n---\n\n# Timetable\n\n{summer}\n\n## Winter\n\n{winter}\n"
    chunks = chunks_of(text)
    assert [(c.heading, c.line_start, c.line_end) for c in chunks] == [
        ("Timetable", 8, 9), ("Winter", 13, 13)]
    assert_lines_hold(text, chunks)


def test_a_short_section_folded_into_its_neighbour_widens_that_chunks_lines():
    text = ("# Timetable\n\nThe first ferry leaves the harbour at six in the morning every day"
            " of the week.\nThe last one leaves the island at ten in the evening, weather "
            "permitting.\n\n## Winter\n\nTwo a day.\n")
    chunks = chunks_of(text)
    assert [(c.heading, c.line_start, c.line_end) for c in chunks] == [("Timetable", 3, 8)]


def test_a_plain_text_file_and_a_split_section_keep_their_lines():
    paragraphs = [f"Paragraph {i} says something about crossing number {i}." for i in range(12)]
    text = "\n\n".join(paragraphs) + "\n"
    chunks = chunks_of(text, "notes/a.txt", max_tokens=30)
    assert len(chunks) > 1
    assert chunks[0].line_start == 1 and chunks[-1].line_end == 23
    assert_lines_hold(text, chunks)


def test_pieces_of_one_long_line_all_open_at_that_line():
    text = "Intro line.\n\n" + " ".join(f"word{i}" for i in range(600)) + "\n\nLast line.\n"
    chunks = chunks_of(text, "notes/long.txt", max_tokens=60)
    assert len(chunks) > 3
    assert {(c.line_start, c.line_end) for c in chunks[1:-1]} <= {(3, 3), (1, 3), (3, 5)}
    assert_lines_hold(text, chunks)


def test_a_line_repeated_across_two_chunks_is_found_at_its_second_place():
    block = "\n".join(f"Step {i}: turn the valve by a quarter and wait for the gauge." for i in range(6))
    text = f"# First\n\n{block}\n\n---\n\n# Second\n\n---\n\n{block}\n"
    chunks = chunks_of(text)
    assert [(c.heading, c.line_start, c.line_end) for c in chunks] == [
        ("First", 3, 10), ("Second", 14, 21)]


def test_an_excluded_section_is_skipped_and_the_next_one_still_finds_its_lines():
    text = "# Notes\n\nKeep this.\n\n## Changelog\n\nKeep this.\n\n## Usage\n\nRun it.\n"
    chunks = chunks_of(text, exclude=["Changelog"])
    assert [(c.heading, c.line_start, c.line_end) for c in chunks] == [
        ("Notes", 3, 3), ("Usage", 11, 11)]


def test_a_document_chunked_coarsely_keeps_line_numbers_too():
    text = "".join(f"# H{i}\n\nline {i} of the long document\n\n" for i in range(40))
    chunks = chunks_of(text, max_chunks=4)
    assert len(chunks) <= 4
    assert_lines_hold(text, chunks)


_words = st.text(alphabet="abcdefg xyz.", min_size=1, max_size=40).filter(str.strip)
_block = st.one_of(
    st.builds(lambda level, title: f"{'#' * level} {title}", st.integers(1, 3), _words),
    st.lists(_words, min_size=1, max_size=4).map("\n".join),
    st.just("```\n# not a heading\ncode()\n```"),
    st.just("---"),
    st.just(" ".join(["long"] * 90)),
    st.just(""),
)


@settings(max_examples=150, deadline=None)
@given(front=st.booleans(), blocks=st.lists(_block, min_size=1, max_size=14),
       budget=st.sampled_from([8, 20, 500]), blank=st.sampled_from(["\n", "\n\n", "\n \n\n"]))
def test_every_prose_chunks_lines_are_where_its_text_is_in_the_file(front, blocks, budget,
                                                                    blank):
    """Property: with or without frontmatter, however the sections are split or folded,
    a chunk's line_start/line_end are the lines of the file its first and last lines
    come from, and chunks never go back up the file."""
    text = ("---\ntitle: t\n---\n" if front else "") + blank.join(blocks) + "\n"
    chunks = chunks_of(text, max_tokens=budget)
    assert_lines_hold(text, chunks)
