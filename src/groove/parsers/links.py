"""Links in Markdown text: wikilinks and local Markdown links (docs/indexing.md, "Links").

What is a link here, and what is not:

* ``[[target]]``, ``[[target|label]]``, ``[[target#heading]]``,
  ``[[target#^block]]`` and their embeds ``![[…]]`` (a ``\\|`` inside a table
  cell separates the label too);
* ``[text](rel/path.md#anchor)`` and ``![alt](…)`` whose destination is a
  file of the knowledge base: no URL scheme (``https:``, ``mailto:``…), not a
  bare ``#anchor`` of the same document; the destination may be written
  ``<with spaces.md>`` and is percent-decoded (``My%20Note.md``);
* reference links, CommonMark's three forms: ``[text][label]``,
  ``[label][]`` and ``[label]``, each a link only when the document defines
  the label on a line of its own (``[label]: rel/path.md "title"``; labels
  match case-insensitively, whitespace collapsed; the first definition of a
  label wins; ``[^1]:`` is a footnote, not a definition). The link sits
  where it is used; the definition line is not a link of its own;
* nothing inside a fenced code block or an inline code span, and no link to
  the same document (``[[#heading]]``, ``[x](#anchor)``): those are not edges.

This module only finds links and says what was written; which document a
target names is decided in one place, :mod:`groove.store.links`, because the
answer changes as documents come and go.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from urllib.parse import unquote

from groove.models import MARKDOWN, WIKILINK, Link
from groove.parsers.fences import Fence, fence_closed, fence_opened

#: ``![[target#anchor|label]]``: no brackets or line break inside.
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
#: ``![text](destination "title")``: one level of brackets in the text, a ``<…>``
#: destination or one without spaces (balanced parentheses allowed), an optional title.
_MD_LINK = re.compile(
    r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*"
    r"(<[^<>\n]*>|(?:[^\s()<>]|\([^\s()]*\))+)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)")
#: ``[text][label]``, ``[label][]`` or ``[label]``: the text as in an inline link,
#: then an optional second bracket holding the label.
_REF_LINK = re.compile(r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\](?:\[([^\[\]\n]*)\])?")
#: ``[label]: destination "title"`` on a line of its own, indented at most three spaces.
_DEFINITION = re.compile(
    r"^ {0,3}\[(?!\^)([^\[\]\n]+)\]:[ \t]*(<[^<>\n]*>|\S+)"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*$", re.MULTILINE)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_BACKTICKS = re.compile(r"`+")


def find_links(text: str, definitions: Mapping[str, str] | None = None) -> list[Link]:
    """Every wikilink and local Markdown link of ``text``, in order of appearance.

    ``text[link.start:link.end]`` is the link as written (``link.source``).
    Fenced code blocks and inline code spans are skipped (CommonMark's
    rules: a fence closes with a run of the same character at least as long;
    a code span with the next run of exactly as many backticks).
    ``definitions``: the reference labels of the whole document
    (:func:`link_definitions`) when ``text`` is one of its sections; by
    default those of ``text`` itself.
    """
    prose = list(_prose_ranges(text))
    if definitions is None:
        definitions = _definitions(text, prose)
    links: list[Link] = []
    for start, end in prose:
        for offset, piece in _outside_code_spans(text[start:end]):
            links.extend(_links_in(piece, start + offset, definitions))
    return links


def _label(label: str) -> str:
    """A reference label as CommonMark matches it: case-folded, inner whitespace collapsed."""
    return " ".join(label.split()).casefold()


def link_definitions(text: str) -> dict[str, str]:
    """``{label: destination}`` of a document's link reference definitions (a definition
    at the end of a file serves the links of every section). A text without ``]:`` has
    none, and most have none: their lines are not walked for fences a second time."""
    return _definitions(text, list(_prose_ranges(text))) if "]:" in text else {}


def _definitions(text: str, prose: list[tuple[int, int]]) -> dict[str, str]:
    """``{label: destination}`` of the link reference definitions outside fenced code."""
    found: dict[str, str] = {}
    for start, end in prose:
        for match in _DEFINITION.finditer(text, start, end):
            found.setdefault(_label(match.group(1)), match.group(2))
    return found


def _prose_ranges(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each run of lines outside fenced code blocks."""
    fence: Fence | None = None
    run_start: int | None = 0
    position = 0
    for line in text.split("\n"):
        line_end = position + len(line) + 1
        if fence is not None:
            if fence_closed(line, fence):
                fence = None
                run_start = line_end
        else:
            fence = fence_opened(line)
            if fence is not None:
                if run_start is not None and run_start < position:
                    yield run_start, position
                run_start = None
        position = line_end
    if fence is None and run_start is not None and run_start < len(text):
        yield run_start, len(text)


def _outside_code_spans(text: str) -> Iterator[tuple[int, str]]:
    """The parts of ``text`` outside inline code spans, with their offsets.

    A run of backticks opens a span that the next run of the same length
    closes; a run that is never closed is literal text.
    """
    position = 0
    cursor = 0
    while True:
        opening = _BACKTICKS.search(text, cursor)
        if opening is None:
            break
        closing = _BACKTICKS.search(text, opening.end())
        while closing is not None and len(closing.group()) != len(opening.group()):
            closing = _BACKTICKS.search(text, closing.end())
        if closing is None:  # never closed: literal backticks, look past them
            cursor = opening.end()
            continue
        yield position, text[position:opening.start()]
        position = cursor = closing.end()
    yield position, text[position:]


def _links_in(text: str, base: int, definitions: Mapping[str, str]) -> Iterator[Link]:
    """Wikilinks, then inline Markdown links, then reference links, each outside the ones
    before it (and outside definition lines), in order of position.

    What is taken is a mask of the text's positions, so the cost grows with the text,
    not with the square of its links (a generated index page holds thousands).
    """
    if "[" not in text:  # every link opens with one; most runs of prose hold none
        return
    found: list[Link] = []
    taken = bytearray(len(text))

    def take(span: tuple[int, int]) -> None:
        taken[span[0]:span[1]] = b"\x01" * (span[1] - span[0])

    def free(span: tuple[int, int]) -> bool:
        return taken.find(1, span[0], span[1]) < 0

    for match in _WIKILINK.finditer(text):
        take(match.span())
        link = _wikilink(match, base)
        if link is not None:
            found.append(link)
    for match in _MD_LINK.finditer(text):
        if not free(match.span()):
            continue
        take(match.span())
        link = _markdown_link(match, base)
        if link is not None:
            found.append(link)
    if definitions:
        for match in _DEFINITION.finditer(text):
            take(match.span())
        for match in _REF_LINK.finditer(text):
            label = match.group(3) or match.group(2)  # [text][label], or [label][] / [label]
            destination = definitions.get(_label(label))
            if destination is None or not free(match.span()):
                continue
            link = _local_link(destination, base + match.start(), match.group(0),
                               match.group(2), bool(match.group(1)))
            if link is not None:
                found.append(link)
    found.sort(key=lambda link: link.start)
    yield from found


def _wikilink(match: re.Match[str], base: int) -> Link | None:
    inner = match.group(2).replace("\\|", "|")
    target, _, label = inner.partition("|")
    name, hashed, anchor = target.partition("#")
    name = name.strip()
    if not name:  # [[#heading]]: the same document
        return None
    return Link(start=base + match.start(), end=base + match.end(), source=match.group(0),
                kind=WIKILINK, target=name, anchor=anchor.strip() or None if hashed else None,
                label=label.strip() or None, embed=bool(match.group(1)))


def _markdown_link(match: re.Match[str], base: int) -> Link | None:
    return _local_link(match.group(3), base + match.start(), match.group(0), match.group(2),
                       bool(match.group(1)))


def _local_link(destination: str, start: int, source: str, text: str,
                embed: bool) -> Link | None:
    """A Markdown link (inline or by reference) written at ``start`` as ``source``, when its
    destination names a file of the knowledge base; None for a URL or a same-page anchor."""
    if destination.startswith("<"):
        destination = destination[1:-1]
    destination = destination.strip()
    if not destination or _SCHEME.match(destination) or destination.startswith("//"):
        return None  # a URL, or nothing
    path, hashed, anchor = destination.partition("#")
    path = unquote(path).strip()
    if not path:  # [x](#anchor): the same document
        return None
    return Link(start=start, end=start + len(source), source=source, kind=MARKDOWN, target=path,
                anchor=unquote(anchor).strip() or None if hashed else None,
                label=text.strip() or None, embed=embed)


def frontmatter_aliases(metadata: dict[str, object]) -> tuple[str, ...]:
    """The ``aliases:`` (or ``alias:``) of a frontmatter: a list or one string, blanks dropped."""
    names: list[str] = []
    for key in ("aliases", "alias"):
        value = metadata.get(key)
        if isinstance(value, str):
            names.extend(value.split(",") if key == "alias" else [value])
        elif isinstance(value, list):
            names.extend(str(v) for v in value if isinstance(v, str | int | float))
    return tuple(dict.fromkeys(n.strip() for n in names if n.strip()))
