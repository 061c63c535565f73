"""Finding links in Markdown: wikilinks, local Markdown links, and what is not a link."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.parsers.links import find_links, frontmatter_aliases
from groove.parsers.markdown import MarkdownParser


def _one(text: str) -> tuple[str, str, str | None, str | None, bool]:
    (link,) = find_links(text)
    assert text[link.start:link.end] == link.source
    return link.kind, link.target, link.anchor, link.label, link.embed


@pytest.mark.parametrize(("text", "expected"), [
    ("see [[Rate limiting]] now", ("wikilink", "Rate limiting", None, None, False)),
    ("[[api/retries#Backoff|backoff]]", ("wikilink", "api/retries", "Backoff", "backoff", False)),
    ("[[note#^block-1]]", ("wikilink", "note", "^block-1", None, False)),
    ("![[diagram.png]]", ("wikilink", "diagram.png", None, None, True)),
    ("![[ops/runbook#Restore]]", ("wikilink", "ops/runbook", "Restore", None, True)),
    ("| [[a/b\\|label]] |", ("wikilink", "a/b", None, "label", False)),
    ("[see the runbook](../ops/runbook.md#restore)",
     ("markdown", "../ops/runbook.md", "restore", "see the runbook", False)),
    ("[x](<My Note.md>)", ("markdown", "My Note.md", None, "x", False)),
    ("[x](My%20Note.md#Two%20words)", ("markdown", "My Note.md", "Two words", "x", False)),
    ('[x](notes/a.md "a title")', ("markdown", "notes/a.md", None, "x", False)),
    ("![chart](img/chart.png)", ("markdown", "img/chart.png", None, "chart", True)),
    ("[a [nested] text](b.md)", ("markdown", "b.md", None, "a [nested] text", False)),
    # reference links: full, collapsed and shortcut, labels matched case-insensitively
    ("[the runbook][rb]\n\n[rb]: ops/runbook.md#restore",
     ("markdown", "ops/runbook.md", "restore", "the runbook", False)),
    ("[Runbook][] here\n\n[runbook]: ops/runbook.md", ("markdown", "ops/runbook.md", None,
                                                       "Runbook", False)),
    ('see [My  Note] now\n\n  [my note]: <My Note.md> "a title"',
     ("markdown", "My Note.md", None, "My  Note", False)),
    ("![chart][c]\n\n[c]: img/chart%20one.png", ("markdown", "img/chart one.png", None,
                                                  "chart", True)),
])
def test_each_link_syntax_is_read(text: str, expected: tuple) -> None:
    assert _one(text) == expected


@pytest.mark.parametrize("text", [
    "[web](https://example.org/a.md)",
    "[mail](mailto:someone@example.org)",
    "[top](#heading)",
    "[[#heading in this note]]",
    "[proto](//example.org/x.md)",
    "`[[in code]]` and ``[x](y.md) ` more``",
    "```\n[[fenced]]\n```",
    "~~~~\n[a](b.md)\n~~~\n~~~~",
    "[[]] and [](  )",
    "[text][nolabel] and [nolabel]",
    "[x][web] and [web]\n\n[web]: https://example.org/a.md",
    "```\n[rb]: a.md\n```\n[x][rb]",
    "`[x][rb]` and ``[rb]``\n\n[rb]: a.md",
    "- [x] done\n- [ ] to do\n",
    "a note[^1]\n\n[^1]: footnote",
    "[top][t]\n\n[t]: #heading",
])
def test_urls_same_document_anchors_and_code_are_not_links(text: str) -> None:
    assert find_links(text) == []


def test_an_unclosed_backtick_is_text_and_the_link_after_it_counts() -> None:
    assert [link.target for link in find_links("a ` b [[c]]")] == ["c"]


def test_a_reference_link_counts_where_it_is_used_and_its_first_definition_wins() -> None:
    text = "Intro [one][a], then [two][A] and [a].\n\n[a]: first.md\n[a]: second.md\n"
    links = find_links(text)
    assert [(link.source, link.target) for link in links] == [
        ("[one][a]", "first.md"), ("[two][A]", "first.md"), ("[a]", "first.md")]
    assert all(text[link.start:link.end] == link.source for link in links)


def test_a_definition_at_the_end_of_a_file_serves_every_section() -> None:
    """The Rust book (mdBook) writes every link as ``[text][label]`` and defines the labels
    in a block at the end of the chapter, in another section than the links."""
    data = (b"# Ownership\n\nSee [Data Types][dt].\n\n## Rules\n\nAs in [Chapter 8][ch8].\n\n"
            b"## Summary\n\nDone.\n\n[dt]: ch03-02-data-types.md#data-types\n"
            b"[ch8]: ch08-02-strings.md\n")
    parsed = MarkdownParser().parse(data, "en/ch04.md")
    assert [(link.source, link.target) for link in parsed.links] == [
        ("[Data Types][dt]", "ch03-02-data-types.md"), ("[Chapter 8][ch8]", "ch08-02-strings.md")]


def test_links_come_in_order_of_appearance() -> None:
    text = "[a](a.md) [[b]] [c](c.md) ![[d]]"
    assert [link.target for link in find_links(text)] == ["a.md", "b", "c.md", "d"]


def test_the_markdown_parser_gives_links_and_aliases() -> None:
    parsed = MarkdownParser().parse(
        b"---\naliases: [Throttling, Quotas]\n---\n# T\n\n[[x]]\n\n## S\n\n[y](y.md)\n", "t.md")
    assert [link.target for link in parsed.links] == ["x", "y.md"]
    assert parsed.aliases == ("Throttling", "Quotas")


@pytest.mark.parametrize(("metadata", "aliases"), [
    ({"aliases": ["A", " ", "B", "A"]}, ("A", "B")),
    ({"aliases": "One name, with a comma"}, ("One name, with a comma",)),
    ({"alias": "a, b"}, ("a", "b")),
    ({"aliases": {"not": "a list"}}, ()),
    ({}, ()),
])
def test_frontmatter_aliases(metadata: dict, aliases: tuple[str, ...]) -> None:
    assert frontmatter_aliases(metadata) == aliases


# --- properties ----------------------------------------------------------------------
_NAME = st.text(st.sampled_from("abcXYZ 019-_/é日"), min_size=1, max_size=12).filter(
    lambda s: s.strip() and not s.startswith((" ", "/")) and not s.endswith(" "))
# (a name starting with "/" would make "[t](<//x.md>)", a URL without its scheme: not a link)
_NOISE = st.text(st.sampled_from("abc xyz.,;:!?\n*-_()é"), max_size=20)


@st.composite
def _documents(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A text of noise, links, links in code spans and links in fences; the targets of
    the links outside code, in order."""
    parts: list[str] = []
    expected: list[str] = []
    for _ in range(draw(st.integers(0, 8))):
        name = draw(_NAME)
        link = draw(st.sampled_from([f"[[{name}]]", f"![[{name}|l]]", f"[[{name}#h]]",
                                     f"[t](<{name}.md>)"]))
        where = draw(st.sampled_from(["prose", "span", "fence"]))
        parts.append(draw(_NOISE))
        if where == "prose":
            parts.append(f" {link} ")
            expected.append(f"{name}.md" if link.startswith("[t]") else name)
        elif where == "span":
            parts.append(f" `{link}` ")
        else:
            parts.append(f"\n```\n{link}\n```\n")
    return "".join(parts), expected


@settings(max_examples=300, deadline=None)
@given(_documents())
def test_links_are_found_outside_code_only(document: tuple[str, list[str]]) -> None:
    text, expected = document
    assert [link.target for link in find_links(text)] == expected


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from("[]()!#|<>`~ \nab.%2/^:"), max_size=80), st.booleans())
def test_every_link_lies_at_its_offsets(text: str, defined: bool) -> None:
    """Whatever the text, every link reported is the text at its offsets, in order, and
    no two overlap (reference links included: ``defined`` adds label definitions)."""
    if defined:
        text += "\n[a]: a.md\n[b]: <b b.md>\n[ab]: a/b.md#x\n"
    found = find_links(text)
    end = 0
    for link in found:
        assert text[link.start:link.end] == link.source
        assert link.start >= end
        end = link.end
        assert link.target.strip() == link.target and link.target
