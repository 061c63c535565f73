"""The first and last line of each prose chunk in its file, found once, at indexing.

A hit is opened at ``path:line``; a source-code chunk knows its lines from
the definitions it was cut at (:mod:`groove.indexing.code_chunking`). A prose
chunk is a section's text, tidied (blank edge lines dropped, paragraphs
packed, stub sections folded together), so its lines are found in the text
the sections were read from: the chunks come in file order, and each chunk's
first and last non-blank lines are looked for from where the previous chunk
ended. A line is found as itself (stripped) below the line found before it,
or, for a line the chunker had to cut by characters, as the source line that
contains that piece (which its neighbouring pieces share); a chunk whose
lines are not found keeps no line numbers rather than wrong ones.

The work is one forward pass over the file's lines for the whole document
(a miss looks at most :data:`LOOKAHEAD` lines ahead), so it is bounded by the
file's size, and nothing of it happens at search time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from groove.models import Chunk

#: How far past the previous chunk a chunk's first line is looked for (lines).
#: Sections the chunker skipped (excluded headings, blank ones) sit in between.
LOOKAHEAD = 20_000


def with_prose_lines(chunks: Sequence[Chunk], text: str, first_line: int = 1) -> list[Chunk]:
    """``chunks`` with ``line_start``/``line_end`` set: 1-based, inclusive lines of the file.

    ``text`` is what the sections were read from and ``first_line`` the file
    line its first line is (a Markdown body starts after its frontmatter).
    """
    lines = [line.strip() for line in text.split("\n")]
    previous: int | None = None  # the line the previous chunk ended on
    out: list[Chunk] = []
    for chunk in chunks:
        wanted = [line.strip() for line in chunk.content.split("\n") if line.strip()]
        span = _locate(lines, wanted, previous) if wanted else None
        if span is None:
            out.append(chunk)
            continue
        first, last = span
        previous = last
        out.append(dataclasses.replace(chunk, line_start=first + first_line,
                                       line_end=last + first_line))
    return out


def _locate(lines: Sequence[str], wanted: Sequence[str], previous: int | None
            ) -> tuple[int, int] | None:
    """(first, last) 0-based indexes of ``wanted``'s first and last lines, after ``previous``."""
    first = _find(lines, wanted[0], previous)
    if first is None:
        return None
    last = first
    for piece in wanted[1:]:  # each line in order, so the last one found is the chunk's end
        found = _find(lines, piece, last)
        if found is None:
            return None
        last = found
    return first, last


def _find(lines: Sequence[str], piece: str, after: int | None) -> int | None:
    """The first line below ``after`` that is ``piece``; else the first from ``after`` on
    that holds it (a piece of a line cut by characters shares that line with its
    neighbours; None: from the top)."""
    start = 0 if after is None else after + 1
    stop = min(len(lines), start + LOOKAHEAD)
    for i in range(start, stop):
        if lines[i] == piece:
            return i
    for i in range(0 if after is None else after, stop):
        if piece in lines[i]:
            return i
    return None
