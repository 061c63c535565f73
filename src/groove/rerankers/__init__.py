"""Cross-encoder rerankers: the registry of reranker ids and the factory.

:data:`RERANKERS` maps every id ``reranker`` / ``--reranker`` accepts to the
class serving it, one module per provider; every class is built as
``cls(reranker_id, cache_dir=...)``. The search stage that uses a reranker is
:mod:`groove.search.rerank`; how to choose one is in docs/search.md.
"""

from __future__ import annotations

from pathlib import Path

from groove.errors import ModelLoadError
from groove.registry import Registry
from groove.rerankers.base import Reranker, RerankerFactory

RERANKERS: Registry[RerankerFactory] = Registry("reranker", {
    "bge-reranker-base": "groove.rerankers.fastembed:FastEmbedReranker",
    "jina-reranker-v2-ml": "groove.rerankers.fastembed:FastEmbedReranker",
    "bge-reranker-v2-m3": "groove.rerankers.fastembed:FastEmbedReranker",
}, ModelLoadError)

#: Every reranker id groove accepts.
RERANKER_IDS: tuple[str, ...] = RERANKERS.ids

__all__ = ["RERANKERS", "RERANKER_IDS", "Reranker", "get_reranker"]


def get_reranker(reranker_id: str, cache_dir: Path | None = None) -> Reranker:
    """One loaded reranker per (id, cache dir) per process; failures are not cached."""
    cls = RERANKERS.load(reranker_id)
    return RERANKERS.instance((reranker_id, str(cache_dir)),
                              lambda: cls(reranker_id, cache_dir=cache_dir))
