"""Where a search hit starts in its document, as a line number (``path:line`` links).

A hit carries its own ``line_start`` when its chunk was stored with its lines
(source code; prose of a text format, found at indexing by
:mod:`groove.indexing.prose_lines`). A prose chunk of an index built before
groove kept them has none, so its line is found in the document's text: the
line of its heading, then the first line of its text at or after it. None
when the text is not found as it is (the file changed since it was indexed):
a link without a line is better than a wrong one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groove.documents.lines import text_lines
from groove.errors import GrooveError
from groove.models import Hit

if TYPE_CHECKING:
    from groove.kb import KnowledgeBase


def hit_line(text: str, hit: Hit) -> int | None:
    """The 1-based line of ``text`` where ``hit`` starts (None: not found)."""
    if hit.line_start is not None:
        return hit.line_start
    lines = [line.strip() for line in text_lines(text)]
    start = 0
    if hit.heading:
        heading = hit.heading.strip()
        found = next((i for i, line in enumerate(lines)
                      if line.startswith("#") and line.lstrip("#").strip().rstrip("#").strip()
                      == heading), None)
        if found is not None:
            start = found
    first = next((line.strip() for line in hit.content.split("\n") if line.strip()), None)
    if first is None:
        return start + 1 if hit.heading else None
    at = next((i for i in range(start, len(lines)) if lines[i] == first), None)
    if at is None and hit.heading and start:
        return start + 1
    return None if at is None else at + 1


def hit_lines(kb: KnowledgeBase, hits: list[Hit]) -> list[int | None]:
    """:func:`hit_line` of each hit, each document read once (through the path gate)."""
    from groove.documents.read import read_document

    texts: dict[str, str | None] = {}
    out: list[int | None] = []
    for hit in hits:
        if hit.line_start is not None:
            out.append(hit.line_start)
            continue
        if hit.path not in texts:
            try:
                texts[hit.path] = read_document(kb, hit.path).text
            except GrooveError:
                texts[hit.path] = None
        text = texts[hit.path]
        out.append(None if text is None else hit_line(text, hit))
    return out
