"""Document diversity: at most ``max_chunks_per_document`` hits from one document.

Applied to the whole ranked pool after fusion and reranking and before MMR
(docs/search.md): a later chunk of a document that already has its quota is
dropped, everything else keeps its order and score, so the ``limit`` cut
that follows is filled from other documents. ``0`` means unlimited.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


def cap_per_document(ranked: Sequence[tuple[int, float]], doc_of: Callable[[int], int],
                     cap: int) -> list[tuple[int, float]]:
    """``ranked`` without the chunks beyond the first ``cap`` of each document."""
    if cap <= 0:
        return list(ranked)
    taken: dict[int, int] = {}
    kept: list[tuple[int, float]] = []
    for chunk_id, score in ranked:
        doc = doc_of(chunk_id)
        if taken.get(doc, 0) < cap:
            taken[doc] = taken.get(doc, 0) + 1
            kept.append((chunk_id, score))
    return kept
