"""The reranker interface: score (query, passage) pairs, higher is more relevant.

The search pipeline only calls :meth:`Reranker.score`, so tests can inject any
object with that method and a new backend is one module plus one registry line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class Reranker(Protocol):
    """Anything that scores texts against a query; the scores are returned raw."""

    def score(self, query: str, texts: list[str]) -> list[float]:
        """One score per text, in the order given."""
        ...


class RerankerFactory(Protocol):
    """How :func:`groove.rerankers.get_reranker` builds a registered class."""

    def __call__(self, reranker_id: str, *, cache_dir: Path | None = None) -> Reranker: ...
