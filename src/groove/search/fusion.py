"""Reciprocal Rank Fusion of the two legs (docs/search.md, 'Fusion')."""

from __future__ import annotations

from collections.abc import Sequence


def reciprocal_rank_fusion(legs: Sequence[Sequence[tuple[int, float]]],
                           rrf_k: float) -> list[tuple[int, float]]:
    """``[(chunk_id, fused)]`` best first; each leg adds ``1 / (rrf_k + rank + 1)``.

    Ranks count from 0. Equal fused scores are ordered by chunk id, so the
    ranking never depends on dict or set iteration order.
    """
    fused: dict[int, float] = {}
    for leg in legs:
        for rank, (chunk_id, _score) in enumerate(leg):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + 1.0 / (rrf_k + rank + 1)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))
