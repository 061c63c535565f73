"""Source code -> chunks: one chunk per definition, every other line kept (docs/indexing.md,
"Source code").

The input is a :class:`~groove.models.CodeOutline`: the file's text and the
definitions a grammar's tags query reported, as whole-line ranges. The rules,
in the order they apply:

* every definition that fits the budget (``[parsers.code] max_chunk_chars``)
  is one chunk, its doc comment included (the parser already extended its
  range over it); so is a container (an ``impl`` block, a ``namespace``:
  :class:`~groove.models.Definition` ``container``), its small members
  sharing that chunk; a container around a single member gives that
  member's chunk, header and closing brace included;
* a definition over the budget is cut at its nested definitions (each
  chunked by these same rules) and the lines between them, and a stretch of
  lines still over the budget is cut by lines; every piece keeps the
  definition's name and kind;
* a piece of a cut definition shorter than :data:`SHORT_CHARS` (a lone
  closing brace, a one-line header) is folded into its neighbour inside the
  same definition, so a short chunk carrying a kind is always a whole
  definition; the header of a cut definition that holds others (``impl
  Summary for NewsArticle {``, ``class Client(Base):``: at most
  :data:`HEADER_LINES` line of code before its first member) joins that first
  member's chunk whatever its length, so a header line is never a chunk of
  its own (every member names the header in its breadcrumb anyway);
* the lines no definition covers (imports, top-level statements, regions the
  grammar could not read) become line-based chunks without a kind; the
  closing brackets at the start of such a stretch (the end of an ``impl`` or
  a namespace around the definition above) fold into the chunk before it, and other
  fragments shorter than :data:`SHORT_CHARS` are dropped, unless the file
  would otherwise have no chunk at all;
* blank lines at the edges of a piece are left out of it;
* when the pieces would be more than the per-file cap, the whole file is cut
  by lines instead, with the line budget widened just enough that the count
  fits (:func:`fallback_budget`), and the document is tagged
  ``parse:too-many-chunks``: no byte is dropped to honour the cap.

So every character of the file lies in exactly one chunk, or in a dropped
fragment shorter than :data:`SHORT_CHARS` (blank lines included); chunks
never overlap and each chunk's text is exactly lines ``line_start`` ..
``line_end`` of the file. tests/indexing/test_code_chunking.py checks these
as properties.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from groove.indexing.cutting import cut_line
from groove.indexing.quality import SHORT_CHARS, quality_score
from groove.models import Chunk, CodeOutline, Definition, ParsedDocument, code_breadcrumb

log = logging.getLogger("groove.indexing.code_chunking")

#: Tags written on a document chunked by lines although it was parsed
#: (``groove doctor`` reports them as "chunked without definitions").
TOO_DEEP_TAG = "parse:too-deep"
TOO_MANY_CHUNKS_TAG = "parse:too-many-chunks"
FALLBACK_TAGS = (TOO_DEEP_TAG, TOO_MANY_CHUNKS_TAG)
#: Tag on a document whose grammar could not read part of it (its bytes are still chunked).
DEGRADED_TAG = "parse:degraded"
#: Tag on every source-code document.
CODE_TAG = "code"

_CLOSERS = frozenset("}])>;,")
#: A cut definition's lines before its first member, when no more than this many of
#: them are code (not blank, not a comment or an attribute), are its header: they join
#: that member's chunk. A documented class (``class Lock:`` and its docstring) keeps a
#: chunk of its own: the docstring is worth finding for itself.
HEADER_LINES = 1
#: How a comment, attribute or decorator line starts (not counted as header code).
_ANNOTATION_STARTS = ("//", "#", "/*", "*", "@", "--")


@dataclass(frozen=True)
class Piece:
    """Lines ``first``..``last`` (0-based, inclusive) and the definition they belong to."""

    first: int
    last: int
    definition: Definition | None = None


class _Lines:
    """The file as lines, with the character weight of any line range in O(1)."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self._offsets = [0]
        for line in self.lines:
            self._offsets.append(self._offsets[-1] + len(line) + 1)

    def __len__(self) -> int:
        return len(self.lines)

    def weight(self, first: int, last: int) -> int:
        """Characters of lines ``first``..``last`` counting one newline after each."""
        return self._offsets[last + 1] - self._offsets[first]

    def text(self, first: int, last: int) -> str:
        return "\n".join(self.lines[first:last + 1])

    def blank(self, index: int) -> bool:
        return not self.lines[index].strip()


@dataclass(frozen=True)
class Plan:
    """The chunks of one file as line ranges, the short fragments left out, and whether
    the per-file cap forced the line fallback."""

    pieces: list[Piece]
    dropped: list[Piece]
    capped: bool


def plan_pieces(text: str, definitions: Sequence[Definition], *, budget: int,
                max_pieces: int | None = None) -> Plan:
    """Cut one file into pieces by the rules in the module docstring.

    ``definitions`` are the top-level ones, sorted and not overlapping (an
    empty sequence chunks the file by lines). ``budget`` is the most
    characters a piece may hold unless a single line is longer.
    """
    lines = _Lines(text)
    pieces, dropped = _finish(lines, _raw_pieces(lines, definitions, budget))
    if max_pieces is None or len(pieces) <= max_pieces:
        return Plan(pieces, dropped, False)
    wide = fallback_budget(lines.weight(0, len(lines) - 1), budget, max_pieces)
    pieces, dropped = _finish(lines, _raw_pieces(lines, (), wide))
    return Plan(pieces, dropped, True)


def fallback_budget(weight: int, budget: int, max_pieces: int) -> int:
    """The line budget that cuts ``weight`` characters into at most ``max_pieces`` pieces.

    Greedy packing starts a piece only when the next line would overrun the
    budget, so any two neighbouring pieces weigh more than the budget:
    ``n`` pieces need more than ``(n // 2) * budget`` characters. Hence
    ``n <= 2 * ceil(weight / budget) - 1``, and a budget of
    ``weight / ((max_pieces + 1) // 2)`` keeps ``n`` within ``max_pieces``.
    Derived from the file alone, so the same file chunks the same way anywhere.
    """
    pairs = max(1, (max_pieces + 1) // 2)
    return max(budget, -(-weight // pairs))


def split_lines(lines: _Lines, first: int, last: int, budget: int) -> list[tuple[int, int]]:
    """Lines ``first``..``last`` packed greedily into ranges of at most ``budget`` characters.

    A line longer than the budget is a range of its own: a line is never cut.
    """
    ranges: list[tuple[int, int]] = []
    start = first
    for end in range(first, last + 1):
        if end > start and lines.weight(start, end) > budget:
            ranges.append((start, end - 1))
            start = end
    if first <= last:
        ranges.append((start, last))
    return ranges


def _raw_pieces(lines: _Lines, definitions: Sequence[Definition], budget: int) -> list[Piece]:
    """Contiguous pieces covering every line, before folding, trimming and dropping."""
    pieces: list[Piece] = []

    def run(first: int, last: int, owner: Definition | None) -> None:
        if owner is None and first > 0:  # closers ending the definition above stand apart
            closers = first
            while closers <= last and set(lines.lines[closers].strip()) <= _CLOSERS:
                closers += 1
            if closers > first and lines.text(first, closers - 1).strip():
                pieces.append(Piece(first, closers - 1))
                first = closers
        pieces.extend(Piece(a, b, owner) for a, b in split_lines(lines, first, last, budget))

    def emit(definition: Definition) -> None:
        if lines.weight(definition.first_line, definition.last_line) <= budget:
            # a container around one member is that member with its header and closer
            owner = (definition.children[0] if definition.container
                     and len(definition.children) == 1 else definition)
            pieces.append(Piece(definition.first_line, definition.last_line, owner))
            return
        cursor = definition.first_line
        for child in definition.children:
            run(cursor, child.first_line - 1, definition)
            emit(child)
            cursor = child.last_line + 1
        run(cursor, definition.last_line, definition)

    cursor = 0
    for definition in definitions:
        run(cursor, definition.first_line - 1, None)
        emit(definition)
        cursor = definition.last_line + 1
    run(cursor, len(lines) - 1, None)
    return pieces


def _finish(lines: _Lines, raw: list[Piece]) -> tuple[list[Piece], list[Piece]]:
    """Fold short pieces of cut definitions, fold lone closers, trim blanks, drop short gaps.

    Returns the kept pieces and the dropped ones (all of them kept instead
    when nothing else would be).
    """
    folded = _fold_definition_fragments(lines, raw)
    kept: list[Piece] = []
    dropped: list[Piece] = []
    for piece in folded:
        trimmed = _trim(lines, piece)
        if trimmed is None:
            continue
        content = lines.text(trimmed.first, trimmed.last).strip()
        if trimmed.definition is not None or len(content) >= SHORT_CHARS:
            kept.append(trimmed)
        elif kept and set(content) <= _CLOSERS and _adjacent(lines, kept[-1], trimmed):
            kept[-1] = Piece(kept[-1].first, trimmed.last, kept[-1].definition)
        else:
            dropped.append(trimmed)
    return (kept, dropped) if kept else (dropped, [])


def _fold_definition_fragments(lines: _Lines, raw: list[Piece]) -> list[Piece]:
    """A short piece of a cut definition joins its neighbour within that definition."""
    out: list[Piece] = []
    pending: Piece | None = None  # a short leading piece waiting for the next one
    for piece in raw:
        if pending is not None:
            piece = Piece(pending.first, piece.last, piece.definition)
            pending = None
        owner = piece.definition
        whole = owner is not None and piece.first <= owner.first_line \
            and owner.last_line <= piece.last
        if owner is None or whole or (
                len(lines.text(piece.first, piece.last).strip()) >= SHORT_CHARS
                and not _header(lines, piece, owner)):
            out.append(piece)
            continue
        if out and _inside(out[-1], owner):
            out[-1] = Piece(out[-1].first, piece.last, out[-1].definition)
        else:
            pending = piece
    if pending is not None:  # cannot happen for a cut definition, but never lose lines
        out.append(pending)
    return out


def _header(lines: _Lines, piece: Piece, owner: Definition) -> bool:
    """The piece is the first lines of a definition holding others, up to its first
    member, and at most :data:`HEADER_LINES` of them are code."""
    if not owner.children or piece.first > owner.first_line:
        return False
    if piece.last >= owner.children[0].first_line:
        return False
    code = (line.strip() for line in lines.lines[piece.first:piece.last + 1])
    return sum(bool(line) and not line.startswith(_ANNOTATION_STARTS)
               for line in code) <= HEADER_LINES


def _inside(piece: Piece, owner: Definition) -> bool:
    return owner.first_line <= piece.first and piece.last <= owner.last_line


def _adjacent(lines: _Lines, before: Piece, after: Piece) -> bool:
    """Only blank lines between the two pieces."""
    return all(lines.blank(i) for i in range(before.last + 1, after.first))


def _trim(lines: _Lines, piece: Piece) -> Piece | None:
    first, last = piece.first, piece.last
    while first <= last and lines.blank(first):
        first += 1
    while last >= first and lines.blank(last):
        last -= 1
    return None if first > last else Piece(first, last, piece.definition)


# --------------------------------------------------------------------------- chunks


#: A piece longer than this many budgets is cut by characters; below it a long line
#: (a long string literal, a table row) stays whole in one chunk.
LONG_PIECE_FACTOR = 8


def _cut_long_lines(lines: _Lines, plan: Plan, budget: int, max_chunks: int | None
                    ) -> list[tuple[Piece, str]]:
    """Each piece's text; a piece over :data:`LONG_PIECE_FACTOR` budgets (only a line that
    long makes one: a minified file) cut by characters into parts that keep every character.

    The parts share their piece's lines. The cut starts at the plan's budget and doubles
    until the parts fit ``max_chunks``; it depends only on the text.
    """
    total = lines.weight(0, len(lines) - 1)
    limit = (fallback_budget(total, budget, max_chunks) if plan.capped and max_chunks
             else budget)
    texts = [(piece, lines.text(piece.first, piece.last)) for piece in plan.pieces]
    while True:
        parts = [(piece, part) for piece, text in texts
                 for part in (cut_line(text, max(1, limit))
                              if len(text) > LONG_PIECE_FACTOR * budget else [text])]
        if max_chunks is None or len(parts) <= max(max_chunks, len(plan.pieces)):
            return parts
        limit *= 2  # ends: once limit covers the longest text, every piece is one part


def code_chunks(doc: ParsedDocument, outline: CodeOutline, *, path: str, budget: int,
                max_chunks: int | None, count_tokens: Callable[[str], int]) -> list[Chunk]:
    """The chunks of one source file, in file order.

    Records on ``doc.tags`` why a parsed file was chunked by lines
    (:data:`FALLBACK_TAGS`), which is how ``groove doctor`` finds it.
    """
    definitions = () if outline.fallback else outline.definitions
    plan = plan_pieces(outline.text, definitions, budget=budget, max_pieces=max_chunks)
    if outline.fallback and outline.fallback not in doc.tags:
        doc.tags.append(outline.fallback)
    if plan.capped:
        doc.tags.append(TOO_MANY_CHUNKS_TAG)
        log.warning("%s: more definitions than max_chunks_per_file (%s) allows: chunked by "
                    "lines instead (every line is still indexed)", path, max_chunks)
    lines = _Lines(outline.text)
    chunks: list[Chunk] = []
    for piece, content in _cut_long_lines(lines, plan, budget, max_chunks):
        definition = piece.definition
        kind = definition.kind if definition else None
        name = definition.name if definition else None
        scope = definition.scope if definition else None
        keyword = definition.keyword if definition else None
        chunks.append(Chunk(
            chunk_index=len(chunks),
            heading=name,
            level=None,
            context=code_breadcrumb(path, scope, kind, name, keyword),
            content=content,
            token_count=count_tokens(content),
            quality=quality_score(content, definition=definition is not None),
            symbol_kind=kind,
            scope=scope,
            line_start=piece.first + 1,
            line_end=piece.last + 1,
        ))
    return chunks
