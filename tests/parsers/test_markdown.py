"""Markdown parsing (SPEC 3): frontmatter, fallbacks, sections, fences."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.errors import ConfigError, GrooveError
from groove.models import Section
from groove.parsers import PARSER_IDS, extensions_for, get_parser_for
from groove.parsers.markdown import MarkdownParser
from groove.parsers.text import TextParser


def parse(text: str, rel_path: str = "note.md"):
    data = textwrap.dedent(text).lstrip("\n").encode("utf-8")
    return MarkdownParser().parse(data, rel_path)


def headings(doc) -> list[tuple[str | None, int | None]]:
    return [(s.heading, s.level) for s in doc.sections]


# --- registry ---------------------------------------------------------------------------
def test_registry_maps_enabled_ids_to_extensions():
    assert extensions_for(["md"]) == {"md", "markdown"}
    assert extensions_for(["md", "txt"]) == {"md", "markdown", "txt"}
    assert extensions_for(["txt"]) == {"txt"}
    assert set(PARSER_IDS) >= {"md", "txt", "pdf", "docx", "xlsx", "pptx"}


def test_get_parser_for_is_case_insensitive_and_respects_enabled_ids():
    assert isinstance(get_parser_for("a/B.MD", ["md"]), MarkdownParser)
    assert isinstance(get_parser_for("x.TXT", ["md", "txt"]), TextParser)
    assert get_parser_for("x.txt", ["md"]) is None
    assert get_parser_for("README", ["md", "txt"]) is None


def test_unknown_parser_id_is_refused_with_the_accepted_ids():
    with pytest.raises(ConfigError, match="'rtf'.*md, txt"):
        extensions_for(["rtf"])


# --- encoding ----------------------------------------------------------------------------
def test_non_utf8_is_refused_naming_the_file():
    with pytest.raises(GrooveError, match=r"notes/sjis\.md.*UTF-8"):
        MarkdownParser().parse("見出し".encode("shift_jis"), "notes/sjis.md")


def test_binary_junk_with_md_extension_is_refused():
    with pytest.raises(GrooveError, match="junk.md"):
        MarkdownParser().parse(b"\x00\x01\x02abc", "junk.md")


def test_leading_bom_and_crlf_are_accepted():
    data = "\ufeff---\r\ntitle: BOM\r\n---\r\n# H\r\nbody\r\n".encode()
    doc = MarkdownParser().parse(data, "a.md")
    assert doc.title == "BOM"
    assert doc.sections == [Section("H", 1, "body\n", ())]


# --- frontmatter -------------------------------------------------------------------------
def test_full_frontmatter():
    doc = parse("""
        ---
        title: Release notes
        date: 2026-03-01
        tags: [release, ops]
        category: eng
        topic: deploy
        author: Ana
        extra: {nested: [1, 2]}
        ---
        # Ignored H1
        text
        """, "a/b/c.md")
    assert doc.title == "Release notes"
    assert doc.date == "2026-03-01"
    assert doc.tags == ["release", "ops"] and not doc.tags_invalid
    assert (doc.category, doc.topic) == ("eng", "deploy")
    assert doc.metadata == {"author": "Ana", "extra": {"nested": [1, 2]}}
    assert doc.warnings == []


def test_datetime_and_nested_dates_become_iso_strings():
    doc = parse("""
        ---
        date: 2026-03-01 10:30:00
        reviewed: [2025-12-24]
        ---
        body
        """)
    assert doc.date == "2026-03-01T10:30:00"
    assert doc.metadata == {"reviewed": ["2025-12-24"]}


def test_string_date_is_kept_as_written():
    assert parse("---\ndate: March 2026\n---\nx\n").date == "March 2026"


@pytest.mark.parametrize(("value", "expected"), [
    ("a, b ,c", ["a", "b", "c"]),
    ("single", ["single"]),
    ("[x, y, x]", ["x", "y"]),
    ("[2026, ops]", ["2026", "ops"]),
    ("'日本語, メモ'", ["日本語", "メモ"]),
    ("''", []),
    ("", []),
])
def test_tags_forms(value, expected):
    doc = parse(f"---\ntags: {value}\n---\nbody\n")
    assert doc.tags == expected
    assert not doc.tags_invalid


@pytest.mark.parametrize("value", ["42", "{a: 1}", "true", "[[nested]]"])
def test_tags_that_are_not_list_or_string_are_flagged(value):
    doc = parse(f"---\ntags: {value}\n---\nbody\n")
    assert doc.tags == []
    assert doc.tags_invalid
    assert any("tags" in w for w in doc.warnings)


def test_malformed_yaml_is_indexed_without_frontmatter_and_warns():
    doc = parse("""
        ---
        title: [unclosed
        tags: a
        ---
        # Real Title
        body text
        """)
    assert doc.title == "Real Title"
    assert doc.tags == ["frontmatter:unparsed"] and doc.metadata == {}
    assert len(doc.warnings) == 1 and "not valid YAML" in doc.warnings[0]
    assert headings(doc) == [("Real Title", 1)]
    assert "unclosed" not in doc.sections[0].body


@pytest.mark.parametrize("block", ["- just\n- a list", "plain scalar"])
def test_non_mapping_frontmatter_is_ignored_with_a_warning(block):
    doc = parse(f"---\n{block}\n---\nbody\n", "deep-dive-2026.md")
    assert doc.title == "deep dive 2026"
    assert doc.metadata == {}
    assert any("not a mapping" in w for w in doc.warnings)


def test_empty_frontmatter_is_fine():
    doc = parse("---\n---\nbody\n")
    assert doc.warnings == [] and doc.metadata == {}
    assert doc.sections == [Section(None, None, "body\n", ())]


def test_unclosed_frontmatter_keeps_the_text_and_warns():
    doc = parse("---\ntitle: x\n# Heading\nbody\n")
    assert any("no closing" in w for w in doc.warnings)
    assert ("Heading", 1) in headings(doc)


def test_alias_bomb_does_not_explode():
    lines = ["---", "a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 10):
        prev = "a" if i == 1 else f"a{i - 1}"
        lines.append(f"a{i}: &a{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]")
    lines += ["---", "body"]
    doc = parse("\n".join(lines) + "\n")
    assert doc.metadata == {}
    assert any("frontmatter" in w for w in doc.warnings)


# --- fallbacks ---------------------------------------------------------------------------
def test_title_falls_back_to_first_h1_then_filename():
    assert parse("## Sub\n# First H1\n# Second H1\n").title == "First H1"
    assert parse("## Only H2\ntext\n", "notes/deep-dive-2026.md").title == "deep dive 2026"
    assert parse("text\n", "my_notes-v2.md").title == "my notes v2"


def test_japanese_filename_title():
    assert parse("本文\n", "メモ/設計_メモ-2026.md").title == "設計 メモ 2026"


def test_category_and_topic_fall_back_to_directory_segments():
    assert (parse("x", "eng/deploy/runbook.md").category, parse("x", "eng/deploy/runbook.md").topic) == ("eng", "deploy")
    deeper = parse("x", "eng/deploy/k8s/runbook.md")
    assert (deeper.category, deeper.topic) == ("eng", "deploy")
    one = parse("x", "eng/runbook.md")
    assert (one.category, one.topic) == ("eng", None)
    root = parse("x", "runbook.md")
    assert (root.category, root.topic) == (None, None)


def test_frontmatter_category_overrides_path_but_topic_still_falls_back():
    doc = parse("---\ncategory: ops\n---\nx\n", "eng/deploy/runbook.md")
    assert (doc.category, doc.topic) == ("ops", "deploy")


# --- sections ------------------------------------------------------------------------------
def test_heading_levels_and_ancestry():
    doc = parse("""
        # A
        a
        ## B
        b
        ### C
        c
        ###### F
        f
        ## D
        d
        # E
        e
        """)
    assert [(s.heading, s.level, s.ancestry) for s in doc.sections] == [
        ("A", 1, ()), ("B", 2, ("A",)), ("C", 3, ("A", "B")), ("F", 6, ("A", "B", "C")),
        ("D", 2, ("A",)), ("E", 1, ()),
    ]
    assert doc.sections[1].body == "b"


def test_what_is_not_a_heading():
    doc = parse("""
        # Real
        #hashtag
        ####### seven
            # indented code
        \\# escaped
        """)
    assert headings(doc) == [("Real", 1)]


def test_heading_syntax_details():
    doc = parse("#\n  ## Spaced ##  \n# C#\n#\tTab\n")
    assert headings(doc) == [("", 1), ("Spaced", 2), ("C#", 1), ("Tab", 1)]


def test_preamble_before_first_heading():
    doc = parse("intro line\n\n# H\nbody\n")
    assert doc.sections[0] == Section(None, None, "intro line\n", ())
    assert headings(doc) == [(None, None), ("H", 1)]


def test_blank_preamble_is_not_a_section():
    assert headings(parse("\n\n# H\nbody\n")) == [("H", 1)]


def test_fenced_code_never_starts_a_section():
    doc = parse("""
        # Setup
        ```bash
        # install
        pip install groove
        ```
        ~~~~
        # still code
        ~~~
        ## also code (a shorter fence does not close)
        ~~~~
        ````md
        ```
        # inside the longer fence
        ````
        ## After
        done
        """)
    assert headings(doc) == [("Setup", 1), ("After", 2)]
    assert "# install" in doc.sections[0].body
    assert "# inside the longer fence" in doc.sections[0].body


def test_backtick_fence_is_not_closed_by_tildes_and_unclosed_runs_to_end():
    doc = parse("# A\n```\n~~~\n# code\n```\n# B\n```\n# never a heading\n")
    assert headings(doc) == [("A", 1), ("B", 1)]


def test_backtick_line_with_backticks_in_info_is_not_a_fence():
    doc = parse("# A\n``` a ` b\n# B\n")
    assert headings(doc) == [("A", 1), ("B", 1)]


def test_japanese_headings_and_body():
    doc = parse("""
        ---
        title: 設計メモ
        tags: [設計, 検索]
        ---
        # 概要
        検索サーバーの概要です。
        ## 詳細設計
        ### インデックス
        SQLite を使います。
        """, "設計/検索/memo.md")
    assert doc.title == "設計メモ"
    assert doc.tags == ["設計", "検索"]
    assert (doc.category, doc.topic) == ("設計", "検索")
    assert [(s.heading, s.level, s.ancestry) for s in doc.sections] == [
        ("概要", 1, ()), ("詳細設計", 2, ("概要",)), ("インデックス", 3, ("概要", "詳細設計")),
    ]
    assert doc.sections[2].body.strip() == "SQLite を使います。"


# --- plain text -----------------------------------------------------------------------------
def test_text_file_is_one_section_titled_from_its_name():
    doc = TextParser().parse("# not a heading\n\n日本語の本文\n".encode(), "logs/run_notes-1.txt")
    assert doc.title == "run notes 1"
    assert doc.sections == [Section(None, None, "# not a heading\n\n日本語の本文\n", ())]
    assert doc.category == "logs"


def test_text_file_must_be_utf8():
    with pytest.raises(GrooveError, match=r"a\.txt.*UTF-8"):
        TextParser().parse(b"\xff\xfe\x00", "a.txt")


_YAML_ATOMS = st.sampled_from([
    "title", "tags", "date", ":", ": ", " ", "  ", "\n", "\n  ", "- ", "-", "[", "]", ", ", ",",
    "'", '"', "''", "2024-01-02", "2024-01-02 10:00:00", "12:30", "1:20:30", "yes", "No", "on",
    "null", "3.14", "0x1F", "0o17", "017", "1_000", ".inf", "-.5", "+1", "1e3", "検索", "é",
    "---", "...", "http://x.y/z", "(a)", "@", "key: [a, b]\n", "x:\n  - 1\n  - 2\n", "a.b", "_",
    "\t", "#", " #", "!", "!!str", "&a", "*a", "|", ">", "? ", "{", "}", "%", "~", "\r\n",
    "\u2028", "\ufeff", "\x85",
])


@settings(max_examples=600, deadline=None)
@given(st.lists(_YAML_ATOMS, min_size=1, max_size=30).map("".join))
def test_frontmatter_reads_the_same_as_pyyaml_safe_load(block):
    """libyaml reads plain blocks (much faster); every block gives PyYAML's value or error."""
    import yaml

    from groove.parsers.markdown import load_yaml

    try:
        want: object = ("value", yaml.safe_load(block))
    except yaml.YAMLError:
        want = "error"
    try:
        got: object = ("value", load_yaml(block))
    except yaml.YAMLError:
        got = "error"
    assert repr(got) == repr(want)


@given(st.text(st.sampled_from(" \t#x"), max_size=30))
def test_closing_hashes_are_cut_as_first_written(heading: str) -> None:
    """The closing-hashes pattern starts a run of blanks only where the run starts (a search
    from every blank of a long run cost its square) and cuts exactly what it cut before."""
    import re

    from groove.parsers.markdown import _CLOSING_HASHES

    first_written = re.compile(r"(?:^|[ \t]+)#+$")
    assert _CLOSING_HASHES.sub("", heading) == first_written.sub("", heading)
