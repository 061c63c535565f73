"""The rerank stage: re-score the fused pool with a cross-encoder.

The stage only sees the :class:`~groove.rerankers.base.Reranker` protocol;
the models themselves live in :mod:`groove.rerankers`. Scores are returned
raw (not normalised) and ties break by chunk id (docs/search.md).
"""

from __future__ import annotations

from groove.rerankers.base import Reranker
from groove.search.candidates import candidate_count
from groove.search.fusion import best_first


def rerank_pool_size(limit: int, mmr_on: bool) -> int:
    """limit×5, or the whole candidate pool when MMR will draw from the reranked pool."""
    return candidate_count(limit) if mmr_on else limit * 5


def rerank(query: str, pool: list[tuple[int, float]], texts: list[str],
           scorer: Reranker) -> list[tuple[int, float]]:
    """Re-score ``pool`` by the cross-encoder; raw scores, ties by chunk id."""
    if not pool:
        return []
    scores = scorer.score(query, texts)
    rescored = [(chunk_id, float(s)) for (chunk_id, _), s in zip(pool, scores, strict=True)]
    return best_first(rescored)
