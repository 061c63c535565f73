"""Parent-document expansion: give the model the surrounding text of a small hit.

Only ``content`` (and ``expanded_from``) change; score, order and path stay.
A hit shorter than ``whole_doc_threshold_tokens`` becomes its whole document
(when that exceeds the cap, the window of chunks around the hit that fits);
a longer one absorbs adjacent sibling chunks at the same heading level,
alternating before/after, while the total stays within ``max_expanded_tokens``.
A source-code hit is never expanded: a definition is already the unit a
reader wants, and its ``line_start``/``line_end`` must stay the lines of its text.
"""

from __future__ import annotations

from collections.abc import Callable

from groove.models import ChunkRow, Hit


def _tokens(row: ChunkRow) -> int:
    return row.token_count if row.token_count else max(1, len(row.content) // 4)


def _section_text(row: ChunkRow) -> str:
    return f"{'#' * (row.level or 1)} {row.heading}\n\n{row.content}" if row.heading else row.content


def expand_hit(hit: Hit, row: ChunkRow, siblings: list[ChunkRow], *,
               whole_doc_threshold_tokens: int, max_expanded_tokens: int) -> None:
    """Rewrite ``hit.content`` in place with its parent context."""
    if row.line_start is not None:
        return
    index = next((i for i, c in enumerate(siblings) if c.id == row.id), None)
    if index is None:
        return
    if _tokens(row) < whole_doc_threshold_tokens:
        if sum(_tokens(c) for c in siblings) <= max_expanded_tokens:
            lo, hi = 0, len(siblings) - 1
            hit.expanded_from = {"kind": "whole_document", "total_chunks": len(siblings)}
        else:
            # The cap cuts the document: keep the window *around the hit*, not
            # the document's first chunks, so the hit's own text (and its
            # match_spans) are never cut away. The extra keys say which range.
            lo, hi = _window(siblings, index, max_expanded_tokens, same_level=False)
            hit.expanded_from = {"kind": "whole_document", "total_chunks": len(siblings),
                                 "from_index": siblings[lo].chunk_index,
                                 "to_index": siblings[hi].chunk_index}
        hit.content = "\n\n".join(_section_text(c) for c in siblings[lo:hi + 1])
        return
    lo, hi = _window(siblings, index, max_expanded_tokens, same_level=True)
    if lo == hi:
        return
    hit.content = "\n\n".join(
        c.content if c.id == row.id else _section_text(c) for c in siblings[lo:hi + 1])
    hit.expanded_from = {"kind": "adjacent", "from_index": siblings[lo].chunk_index,
                         "to_index": siblings[hi].chunk_index}


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
