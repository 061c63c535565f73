"""Sections -> chunks: one chunk per non-empty section, split when too long.

The user-facing description is docs/indexing.md, 'Chunking'.

A section over the embedder's window is split on paragraph (blank-line)
boundaries, packing as many whole paragraphs per chunk as fit; a single
paragraph that does not fit is split on lines, and a single line on
characters, so no chunk is ever silently truncated by the embedder.

Stub folding (docs/search.md): a section whose body is a *stub* — only links,
URLs, dates or short metadata lines (:func:`is_link_or_metadata_only`), or
fewer than :data:`STUB_FLOOR_TOKENS` tokens — does not become a chunk of its
own. Its body is prepended to the next chunk of the same document (separated
by a blank line; that chunk keeps its own heading and breadcrumb); stubs at
the end of a document are appended to the previous chunk. A document made of
stubs only keeps them as its chunks (the quality score then hides them).
Binary formats are not folded: a PDF page or a slide is cited as itself. The
folded text is part of the chunk's ``content``, so ``match_spans`` offsets
stay offsets into the returned text.

The per-file bound (:func:`bounded_chunks`, docs/indexing.md 'Very long
files'): a file that would give more than ``max_chunks_per_file`` chunks is
not cut short. Its whole text is chunked again, by lines, with a character
budget widened until the pieces fit the bound, and the document records that
it was chunked coarsely. Greedy packing makes any two neighbouring pieces
together at least one budget long, so text of ``T`` characters gives at most
``2T / budget + 1`` pieces; a budget of ``ceil(2T / (limit - 1))`` therefore
gives at most ``limit``. The budget depends only on the text, so one file
chunks the same way on every machine.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from groove.indexing.code_chunking import FALLBACK_TAGS, code_chunks
from groove.indexing.cutting import cut_line
from groove.indexing.prose_lines import with_prose_lines
from groove.indexing.quality import is_link_or_metadata_only, quality_score
from groove.indexing.tokens import TokenCounter, TokenCounts, token_counts
from groove.models import BY_SECTIONS, COARSE, Chunk, Link, ParsedDocument, Section

#: A section body shorter than this (in the embedder's tokens) is a stub.
STUB_FLOOR_TOKENS = 8
#: ``[parsers.code] max_chunk_chars`` when the caller does not say.
DEFAULT_CODE_CHUNK_CHARS = 1500
STUB_JOINER = "\n\n"
BREADCRUMB_MAX_CHARS = 200
BREADCRUMB_SEPARATOR = " > "

_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)*")

#: The chunker's counter: a plain one (exact everywhere) or a run's
#: :class:`~groove.indexing.tokens.TokenCounts` (bounds first, counts only as needed).
Counter = TokenCounter | TokenCounts

#: No tokenizer packs more than this many characters per token on average.
MAX_CHARS_PER_TOKEN = 16


@dataclass(frozen=True)
class ChunkPlan:
    """The chunks of one document and the way they were built (BY_SECTIONS or COARSE)."""

    chunks: list[Chunk]
    chunking: str


def bounded_chunks(doc: ParsedDocument, *, exclude_headings: list[str], max_tokens: int,
                   count_tokens: Counter, max_chunks: int, path: str = "",
                   code_chunk_chars: int = DEFAULT_CODE_CHUNK_CHARS) -> ChunkPlan:
    """At most ``max_chunks`` chunks that together hold every indexed line of ``doc``.

    Section chunking is tried first; a document it would split into more than
    ``max_chunks`` pieces is chunked coarsely instead (module docstring). A
    document far too long for the bound (more characters than ``max_chunks``
    windows could hold) goes coarse without being split by sections first,
    so one pathological file costs one pass over its text.

    A source file (``doc.outline`` set) is chunked at its definitions instead
    (:mod:`groove.indexing.code_chunking`, pieces of at most
    ``code_chunk_chars``, ``path`` leading the breadcrumb); it is COARSE when
    it had to be chunked by lines (too deep, or over the bound), which is
    what ``groove doctor`` reports as "chunked without definitions".
    """
    if doc.outline is not None:
        chunks = code_chunks(doc, doc.outline, path=path or doc.title, budget=code_chunk_chars,
                             max_chunks=max_chunks, count_tokens=count_tokens)
        coarse = any(tag in FALLBACK_TAGS for tag in doc.tags)
        return ChunkPlan(chunks, COARSE if coarse else BY_SECTIONS)
    excluded = [e.casefold() for e in exclude_headings if e]
    kept = [s for s in doc.sections if not _is_excluded(s, excluded)]
    total = sum(len(s.body) for s in kept)
    if total <= MAX_CHARS_PER_TOKEN * max(1, max_tokens) * max_chunks:
        chunks = chunk_document(doc, exclude_headings=exclude_headings, max_tokens=max_tokens,
                                count_tokens=count_tokens, max_chunks=max_chunks + 1)
        if len(chunks) <= max_chunks:
            return ChunkPlan(_lines_of(doc, chunks), BY_SECTIONS)
    return ChunkPlan(_lines_of(doc, coarse_chunks(doc, kept, max_chunks, count_tokens)), COARSE)


def _lines_of(doc: ParsedDocument, chunks: list[Chunk]) -> list[Chunk]:
    """Prose chunks with their lines in the file, where the file's lines are the text's."""
    if doc.line_text is None:
        return chunks
    return with_prose_lines(chunks, doc.line_text, doc.line_text_start)


def coarse_chunks(doc: ParsedDocument, sections: list[Section], max_chunks: int,
                  count_tokens: TokenCounter) -> list[Chunk]:
    """Every non-blank line of ``sections`` packed into at most ``max_chunks`` pieces.

    A piece takes the heading, breadcrumb and ancestry of the section its
    first line comes from, so a hit still says where in the file it is. A
    line longer than the budget is cut (:func:`cut_line`), never left as one
    piece far past it.
    """
    lines = [(section, line) for section in sections
             for line in section_content(section.body).split("\n") if line.strip()]
    if not lines:
        return []
    total = len("\n".join(line for _, line in lines))
    # The tight budget fits whenever lines pack well (one long line always does);
    # the wide one is the guarantee (module docstring).
    pieces = _pack_lines(lines, max(1, math.ceil(total / max_chunks)))
    if len(pieces) > max_chunks:
        wide = total if max_chunks <= 1 else math.ceil(2 * total / (max_chunks - 1))
        pieces = _pack_lines(lines, max(1, wide))
    chunks = []
    for index, (section, held, _) in enumerate(pieces):
        content = "\n".join(held)
        chunks.append(Chunk(
            chunk_index=index,
            heading=section.heading,
            level=section.level,
            context=breadcrumb(doc.title, section.ancestry, section.heading),
            content=content,
            token_count=count_tokens(content),
            quality=quality_score(content, binary_format=doc.binary_format),
            ancestry=section.ancestry,
        ))
    return chunks


def chunk_document(doc: ParsedDocument, *, exclude_headings: list[str], max_tokens: int,
                   count_tokens: Counter, max_chunks: int | None = None,
                   fold_stubs: bool = True) -> list[Chunk]:
    """The chunks of one document, ``chunk_index`` numbered 0.. in document order.

    With ``max_chunks``, at most that many (the first ones); later sections are
    not even split (:func:`bounded_chunks` learns so that a document is over
    the bound without splitting all of it). ``fold_stubs=False`` keeps every
    stub as its own chunk (the pre-folding behaviour, kept for the ablation
    benchmark). With a :class:`~groove.indexing.tokens.TokenCounts` that has
    bounds, a chunk whose count no decision needed gets ``token_count`` None
    (counted later, by the vectors pass); the chunks are otherwise the same.
    """
    counts = token_counts(count_tokens)
    excluded = [e.casefold() for e in exclude_headings if e]
    limit = max(1, max_tokens)
    fold_stubs = fold_stubs and not doc.binary_format  # a page or slide is cited as itself
    units: list[tuple[Section, str]] = []
    stubs: list[tuple[Section, str]] = []
    for section in doc.sections:
        if max_chunks is not None and len(units) >= max_chunks:
            break  # every unit yields at least one chunk
        if _is_excluded(section, excluded):
            continue
        content = section_content(section.body)
        if not content.strip():
            continue
        if fold_stubs and is_stub(content, counts):
            stubs.append((section, content))
            continue
        if stubs:
            content = STUB_JOINER.join([*(text for _, text in stubs), content])
            stubs = []
        units.append((section, content))
    if stubs:
        if units:
            section, content = units[-1]
            units[-1] = (section, STUB_JOINER.join([content, *(text for _, text in stubs)]))
        else:
            units = stubs
    chunks: list[Chunk] = []
    for section, content in units:
        if max_chunks is not None and len(chunks) >= max_chunks:
            break
        context = breadcrumb(doc.title, section.ancestry, section.heading)
        for piece in fold_wordless_pieces(split_to_fit(content, limit, counts)):
            chunks.append(Chunk(
                chunk_index=len(chunks),
                heading=section.heading,
                level=section.level,
                context=context,
                content=piece,
                token_count=counts.stored(piece),
                quality=quality_score(piece, binary_format=doc.binary_format),
                ancestry=section.ancestry,
            ))
    return chunks if max_chunks is None else chunks[:max_chunks]


def place_links(links: Sequence[Link], contents: Sequence[str]) -> tuple[tuple[int, Link], ...]:
    """Each link with the index of the chunk holding it (``contents[i]`` is chunk ``i``'s).

    Chunks keep the document's order (a folded stub joins its neighbour, a
    split section stays in sequence), so the search walks forward: a link is
    in the first chunk, from the previous link's end on, whose text holds it.
    One that no chunk holds whole (cut by a character split, or in an excluded
    section) stays with the previous link's chunk. A document without chunks
    has no links to place. Each chunk is read from where the previous link
    ended, so a page of thousands of links costs its length, not its square.
    """
    placed: list[tuple[int, Link]] = []
    at = position = 0
    for link in links:
        for i in range(at, len(contents)):
            found = contents[i].find(link.source, position if i == at else 0)
            if found >= 0:
                at, position = i, found + len(link.source)
                break
        if contents:
            placed.append((at, link))
    return tuple(placed)


def fold_wordless_pieces(pieces: list[str]) -> list[str]:
    """``pieces`` with each piece that has no words of its own (an HTML anchor, an image, a
    rule, a list of links: :func:`is_link_or_metadata_only`) joined to a neighbour that
    has words: the one before it, else the one after. So a long section's split never
    leaves an anchor standing alone to rank, and a wordless piece stands alone only
    between wordless ones. Wordless pieces never join each other, and a piece with words
    takes at most one on each side: a section that is mostly links (a generated index of
    a thousand notes) stays in pieces near the budget, not one chunk of all of them.
    """
    words = [not is_link_or_metadata_only(piece) for piece in pieces]
    out: list[str] = []
    waiting: str | None = None  # a wordless piece that joins the next one
    for i, piece in enumerate(pieces):
        if words[i]:
            out.append(piece if waiting is None else STUB_JOINER.join([waiting, piece]))
            waiting = None
        elif i > 0 and words[i - 1]:
            out[-1] = STUB_JOINER.join([out[-1], piece])
        elif i + 1 < len(pieces) and words[i + 1]:
            waiting = piece
        else:
            out.append(piece)
    return out


def _pack_lines(lines: list[tuple[Section, str]], budget: int
                ) -> list[tuple[Section, list[str], int]]:
    """Greedy packing of lines (cut at ``budget``) into (first section, lines, length)."""
    pieces: list[tuple[Section, list[str], int]] = []
    for section, line in lines:
        for unit in cut_line(line, budget):
            if pieces and pieces[-1][2] + 1 + len(unit) <= budget:
                first, held, length = pieces[-1]
                held.append(unit)
                pieces[-1] = (first, held, length + 1 + len(unit))
            else:
                pieces.append((section, [unit], len(unit)))
    return pieces


def is_stub(content: str, count_tokens: Counter) -> bool:
    """A body that should not stand alone: link/metadata-only, or under the token floor.

    Tokens are only counted for bodies short enough to be under the floor (no
    tokenizer packs more than 16 characters per token on average), so a long
    section costs no extra tokenizer pass; nor for one the counter's bounds
    already put at or over the floor.
    """
    if is_link_or_metadata_only(content):
        return True
    return (len(content) < STUB_FLOOR_TOKENS * MAX_CHARS_PER_TOKEN
            and token_counts(count_tokens).below(content, STUB_FLOOR_TOKENS))


def _is_excluded(section: Section, excluded: list[str]) -> bool:
    """Case-insensitive substring match on the section's own heading (never the preamble)."""
    if section.heading is None:
        return False
    heading = section.heading.casefold()
    return any(e in heading for e in excluded)


def section_content(body: str) -> str:
    """The body without leading/trailing blank lines; inner text and indentation kept."""
    lines = body.split("\n")
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(line.rstrip("\r") for line in lines[start:end])


def breadcrumb(title: str, ancestry: tuple[str, ...], heading: str | None) -> str:
    """``Title > H2 > H3``: empties and consecutive duplicates dropped, at most 200 chars."""
    parts: list[str] = []
    for part in (title, *ancestry, heading):
        text = " ".join((part or "").split())
        if text and (not parts or parts[-1] != text):
            parts.append(text)
    joined = BREADCRUMB_SEPARATOR.join(parts)
    if len(joined) <= BREADCRUMB_MAX_CHARS:
        return joined
    # str indexes code points, so the cut can never land inside a UTF-8 sequence
    return joined[:BREADCRUMB_MAX_CHARS].rstrip()


def split_to_fit(text: str, max_tokens: int, count_tokens: Counter) -> list[str]:
    """``text`` as one piece if it fits, else paragraphs -> lines -> characters.

    Whether it fits is settled by the counter's bounds when they can
    (:meth:`~groove.indexing.tokens.TokenCounts.fits`): most sections fit by a
    wide margin and are never tokenized here.
    """
    if token_counts(count_tokens).fits(text, max_tokens):
        return [text]
    paragraphs = [p.strip("\n") for p in _BLANK_LINES.split(text)]
    return _pack([p for p in paragraphs if p.strip()], "\n\n", max_tokens, count_tokens,
                 _split_paragraph)


def _split_paragraph(paragraph: str, max_tokens: int, count_tokens: TokenCounter) -> list[str]:
    lines = [ln for ln in paragraph.split("\n") if ln.strip()]
    return _pack(lines, "\n", max_tokens, count_tokens, _split_line)


def _pack(units: list[str], joiner: str, max_tokens: int, count_tokens: TokenCounter,
          split_unit: Callable[[str, int, TokenCounter], list[str]]) -> list[str]:
    """Join consecutive units greedily into pieces that fit; a unit too big alone is split.

    Each unit is counted once and a run of units is sized by the sum of its
    counts less what a join saves (:func:`_join_saving`): exact for a
    tokenizer that splits at whitespace, as both sentencepiece and WordPiece
    do, so the pieces are those of joining unit by unit and counting every
    candidate (which tokenised a piece's text once per unit it holds). The
    estimate never decides alone: each piece of two or more units is counted
    before it is kept and given up unit by unit while it does not fit, so a
    piece always fits and its count (the chunk's stored ``token_count``, from
    the same memoised counter) is exact.
    """
    counts = [count_tokens(unit) for unit in units]
    saving = _join_saving(joiner, count_tokens) if len(units) > 1 else 0
    pieces: list[str] = []
    start = 0
    while start < len(units):
        if counts[start] > max_tokens:
            pieces.extend(split_unit(units[start], max_tokens, count_tokens))
            start += 1
            continue
        end, estimate = start + 1, counts[start]
        while end < len(units) and counts[end] <= max_tokens \
                and estimate + counts[end] - saving <= max_tokens:
            estimate += counts[end] - saving
            end += 1
        while end - start > 1 and count_tokens(joiner.join(units[start:end])) > max_tokens:
            end -= 1
        pieces.append(joiner.join(units[start:end]))
        start = end
    return pieces


def _join_saving(joiner: str, count_tokens: TokenCounter) -> int:
    """Tokens a join saves against counting both sides alone (the shared prefix and specials)."""
    return count_tokens("a") + count_tokens("b") - count_tokens(joiner.join(("a", "b")))


def _split_line(line: str, max_tokens: int, count_tokens: TokenCounter) -> list[str]:
    """Last resort: the longest prefix that fits, found by bisection; always progresses."""
    pieces: list[str] = []
    rest = line
    while rest:
        hi = min(len(rest), max_tokens * 32)  # never count more than a window's worth
        if count_tokens(rest[:hi]) <= max_tokens:
            lo = hi
        else:
            lo, hi = 1, hi - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if count_tokens(rest[:mid]) <= max_tokens:
                    lo = mid
                else:
                    hi = mid - 1
        pieces.append(rest[:lo])
        rest = rest[lo:]
    return [p for p in pieces if p.strip()]
