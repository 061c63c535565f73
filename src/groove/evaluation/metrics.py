"""Ranking metrics (pure; unit-tested on hand-made rankings).

* Several chunks of one document may match the same expected entry; only the
  first of them counts as relevant. That keeps recall, MRR and nDCG about
  "how many of the wanted things were found, and how early", and keeps nDCG <= 1.
* nDCG@k uses binary relevance; the ideal ranking has ``min(k, #expected)``
  relevant hits on top.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from groove.evaluation.golden import Expected

# --- metrics (pure; unit-tested on hand-made rankings) --------------------------


def hit_matches(path: str, heading: str | None, expected: Expected) -> bool:
    return path == expected.path and (expected.heading is None or heading == expected.heading)


def expected_ranks(
    ranking: Sequence[tuple[str, str | None]], expected: Sequence[Expected]
) -> list[int | None]:
    """1-based rank at which each expected entry is first matched (None: not found).

    A hit is credited to at most one expected entry (the first unmatched one it
    matches), and each entry is credited once: that is the dedup rule above.
    """
    ranks: list[int | None] = [None] * len(expected)
    for rank, (path, heading) in enumerate(ranking, start=1):
        for j, exp in enumerate(expected):
            if ranks[j] is None and hit_matches(path, heading, exp):
                ranks[j] = rank
                break
    return ranks


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else 0.0


def reciprocal_rank(ranks: Sequence[int | None]) -> float:
    found = [r for r in ranks if r is not None]
    return 1.0 / min(found) if found else 0.0


def ndcg_at(ranks: Sequence[int | None], k: int) -> float:
    if not ranks:
        return 0.0
    dcg = sum(1.0 / math.log2(r + 1) for r in ranks if r is not None and r <= k)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(k, len(ranks)) + 1))
    return dcg / ideal


def query_metrics(ranks: Sequence[int | None], k_values: Sequence[int]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in k_values:
        out[f"recall@{k}"] = recall_at(ranks, k)
    out["mrr"] = reciprocal_rank(ranks)
    for k in k_values:
        out[f"ndcg@{k}"] = ndcg_at(ranks, k)
    return out


