"""Parent-document expansion: give the model the surrounding text of a small hit.

Only ``content`` (and ``expanded_from``) change; score, order and path stay.
A hit shorter than ``whole_doc_threshold_tokens`` becomes its whole document;
a longer one absorbs adjacent sibling chunks at the same heading level,
alternating before/after, while the total stays within ``max_expanded_tokens``.
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
    if _tokens(row) < whole_doc_threshold_tokens:
        parts, total = [], 0
        for chunk in siblings:
            cost = _tokens(chunk)
            if parts and total + cost > max_expanded_tokens:
                break
            parts.append(_section_text(chunk))
            total += cost
        hit.content = "\n\n".join(parts)
        hit.expanded_from = {"kind": "whole_document", "total_chunks": len(siblings)}
        return
    index = next((i for i, c in enumerate(siblings) if c.id == row.id), None)
    if index is None:
        return
    lo = hi = index
    total = _tokens(row)
    blocked = {"before": False, "after": False}
    while not (blocked["before"] and blocked["after"]):
        for side in ("before", "after"):
            if blocked[side]:
                continue
            j = lo - 1 if side == "before" else hi + 1
            if not 0 <= j < len(siblings) or siblings[j].level != row.level:
                blocked[side] = True
                continue
            cost = _tokens(siblings[j])
            if total + cost > max_expanded_tokens:
                blocked[side] = True
                continue
            total += cost
            lo, hi = (j, hi) if side == "before" else (lo, j)
    if lo == hi:
        return
    hit.content = "\n\n".join(
        c.content if c.id == row.id else _section_text(c) for c in siblings[lo:hi + 1])
    hit.expanded_from = {"kind": "adjacent", "from_index": siblings[lo].chunk_index,
                         "to_index": siblings[hi].chunk_index}


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
