"""Parent-document expansion: give the model the surrounding text of a small hit.

Only ``content`` (and ``expanded_from``) change; score, order and path stay.
A hit shorter than ``whole_doc_threshold_tokens`` becomes its whole document
(when that exceeds the cap, the window of chunks around the hit that fits);
a longer one absorbs adjacent sibling chunks at the same heading level,
alternating before/after, while the total stays within ``max_expanded_tokens``.
A source-code hit (its document has a language) is expanded over the file's lines: the run of chunks around
it that all carry a line range counts as its document, their texts are set
at their own lines (a line no chunk holds -- a blank line, or a fragment the
chunker dropped as too short -- is left empty), and ``line_start``/``line_end``
are widened to the first and last line taken, so line ``k`` of the returned
``content`` is line ``line_start + k`` of the file. Once more than one chunk
went in, ``symbol_kind`` and ``scope`` are dropped: the text is no longer one
definition. An expanded prose hit's ``line_start``/``line_end`` become the first line of
the first chunk taken and the last line of the last (when the chunks carry them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from groove.models import ChunkRow, Hit, estimated_tokens


def _tokens(row: ChunkRow) -> int:
    """The stored count; a chunk not counted yet (an index still being built) is estimated."""
    return row.token_count if row.token_count else estimated_tokens(row.content)


def _section_text(row: ChunkRow) -> str:
    return f"{'#' * (row.level or 1)} {row.heading}\n\n{row.content}" if row.heading else row.content


def expand_hit(hit: Hit, row: ChunkRow, siblings: list[ChunkRow], *,
               whole_doc_threshold_tokens: int, max_expanded_tokens: int) -> None:
    """Rewrite ``hit.content`` in place with its parent context."""
    index = next((i for i, c in enumerate(siblings) if c.id == row.id), None)
    if index is None:
        return
    total_chunks = len(siblings)
    code = row.language is not None  # its chunks are the file's lines verbatim
    if code:
        first, last = _line_run(siblings, index)
        siblings, index = siblings[first:last + 1], index - first
    if _tokens(row) < whole_doc_threshold_tokens:
        if sum(_tokens(c) for c in siblings) <= max_expanded_tokens:
            lo, hi = 0, len(siblings) - 1
        else:
            # The cap cuts the document: keep the window *around the hit*, not
            # the document's first chunks, so the hit's own text (and its
            # match_spans) are never cut away. The extra keys say which range.
            lo, hi = _window(siblings, index, max_expanded_tokens, same_level=False)
        if lo == hi and total_chunks > 1:
            return  # the cap leaves room for nothing but the hit: it is not expanded
        expanded: dict[str, Any] = {"kind": "whole_document", "total_chunks": total_chunks}
        if hi - lo + 1 < total_chunks:
            expanded.update(from_index=siblings[lo].chunk_index, to_index=siblings[hi].chunk_index)
    else:
        lo, hi = _window(siblings, index, max_expanded_tokens, same_level=True)
        if lo == hi:
            return
        expanded = {"kind": "adjacent", "from_index": siblings[lo].chunk_index,
                    "to_index": siblings[hi].chunk_index}
    hit.expanded_from = expanded
    taken = siblings[lo:hi + 1]
    if not code:
        hit.content = "\n\n".join(
            c.content if c.id == row.id and expanded["kind"] == "adjacent" else _section_text(c)
            for c in taken)
        if taken[0].line_start is not None and taken[-1].line_end is not None:
            hit.line_start, hit.line_end = taken[0].line_start, taken[-1].line_end
        return
    hit.content = taken[0].content + "".join(
        "\n" * (c.line_start - before.line_end) + c.content  # type: ignore[operator]
        for before, c in zip(taken, taken[1:], strict=False))
    hit.line_start, hit.line_end = taken[0].line_start, taken[-1].line_end
    if len(taken) > 1:
        hit.symbol_kind = hit.scope = None


def _follows(before: ChunkRow, after: ChunkRow) -> bool:
    """Both carry a line range and ``after`` starts below where ``before`` ends."""
    return (before.line_end is not None and after.line_start is not None
            and after.line_end is not None and after.line_start > before.line_end)


def _line_run(siblings: list[ChunkRow], index: int) -> tuple[int, int]:
    """The widest ``[first, last]`` around ``index`` whose chunks all carry line ranges in
    file order, so their texts can be set at their own lines."""
    first = last = index
    while first > 0 and _follows(siblings[first - 1], siblings[first]):
        first -= 1
    while last + 1 < len(siblings) and _follows(siblings[last], siblings[last + 1]):
        last += 1
    return first, last


def _window(siblings: list[ChunkRow], index: int, max_tokens: int, *,
            same_level: bool) -> tuple[int, int]:
    """Grow ``[index, index]`` alternately before/after while the total fits ``max_tokens``."""
    level = siblings[index].level
    lo = hi = index
    total = _tokens(siblings[index])
    blocked = {"before": False, "after": False}
    while not (blocked["before"] and blocked["after"]):
        for side in ("before", "after"):
            if blocked[side]:
                continue
            j = lo - 1 if side == "before" else hi + 1
            if not 0 <= j < len(siblings) or (same_level and siblings[j].level != level):
                blocked[side] = True
                continue
            cost = _tokens(siblings[j])
            if total + cost > max_tokens:
                blocked[side] = True
                continue
            total += cost
            lo, hi = (j, hi) if side == "before" else (lo, j)
    return lo, hi


def expand_parents(hits: list[Hit], rows: dict[int, ChunkRow],
                   document_chunks: Callable[[int], list[ChunkRow]], *,
                   whole_doc_threshold_tokens: int, max_expanded_tokens: int) -> list[Hit]:
    cache: dict[int, list[ChunkRow]] = {}
    for hit in hits:
        row = rows[hit.chunk_id]
        if row.doc_id not in cache:
            cache[row.doc_id] = document_chunks(row.doc_id)
        expand_hit(hit, row, cache[row.doc_id],
                   whole_doc_threshold_tokens=whole_doc_threshold_tokens,
                   max_expanded_tokens=max_expanded_tokens)
    return hits
