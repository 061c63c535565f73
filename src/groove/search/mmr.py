"""Maximal Marginal Relevance: trade a little relevance for less repetition."""

from __future__ import annotations

import logging

import numpy as np

log = logging.getLogger("groove.search.mmr")


def mmr_select(
    pool: list[tuple[int, float]],
    vectors: np.ndarray,
    doc_ids: list[int],
    *,
    limit: int,
    lam: float,
    same_doc_penalty: float,
) -> list[tuple[int, float]]:
    """Greedily pick ``limit`` of ``pool`` (``(chunk_id, score)`` best first).

    Each step maximises ``λ·rel − (1−λ)·max_cos(c, picked) − penalty·[same doc]``
    with ``rel`` min-max normalised over the pool. Returned scores are the
    pool's original scores; only the order and membership change.
    """
    if lam >= 1.0:
        log.warning("MMR with lambda=1.0 is plain relevance order (MMR off, only slower)")
    if not pool:
        return []
    scores = np.array([s for _, s in pool], dtype=np.float64)
    span = scores.max() - scores.min()
    rel = (scores - scores.min()) / span if span > 0 else np.ones_like(scores)
    sims = vectors @ vectors.T
    picked: list[int] = []
    max_sim = np.full(len(pool), -np.inf)
    docs_picked: set[int] = set()
    remaining = list(range(len(pool)))
    while remaining and len(picked) < limit:
        best, best_value = remaining[0], -np.inf
        for i in remaining:
            redundancy = max_sim[i] if picked else 0.0
            value = lam * rel[i] - (1 - lam) * redundancy
            if doc_ids[i] in docs_picked:
                value -= same_doc_penalty
            if value > best_value:  # strict: earlier (better-ranked) wins ties
                best, best_value = i, value
        picked.append(best)
        remaining.remove(best)
        docs_picked.add(doc_ids[best])
        max_sim = np.maximum(max_sim, sims[best])
    return [pool[i] for i in picked]
