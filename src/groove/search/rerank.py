"""Optional cross-encoder reranking through fastembed (downloaded on first use).

The pipeline only sees the tiny :class:`Scorer` protocol, so tests can inject
a scorer and other backends can be added without touching the pipeline.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Protocol

from groove.errors import ModelLoadError

log = logging.getLogger("groove.search.rerank")

#: groove's reranker ids → fastembed model names.
RERANKER_MODELS = {
    "bge-reranker-base": "BAAI/bge-reranker-base",
    "jina-reranker-v2-ml": "jinaai/jina-reranker-v2-base-multilingual",
    "bge-reranker-v2-m3": "BAAI/bge-reranker-v2-m3",
}


class Scorer(Protocol):
    def score(self, query: str, texts: list[str]) -> list[float]: ...


class FastEmbedScorer:
    """fastembed's ``TextCrossEncoder``, loaded from the cache or downloaded once."""

    def __init__(self, reranker_id: str, cache_dir: Path | None = None) -> None:
        if reranker_id not in RERANKER_MODELS:
            raise ModelLoadError(
                f"reranker {reranker_id!r} is unknown; accepted: {', '.join(RERANKER_MODELS)}")
        self.reranker_id = reranker_id
        self.model_name = RERANKER_MODELS[reranker_id]
        from groove.embedders.fastembed import default_cache_dir

        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
        self._model = self._load()

    def _load(self):
        log.info("loading reranker %s (%s) from cache dir %s", self.reranker_id, self.model_name,
                 self.cache_dir)
        try:
            from fastembed.rerank.cross_encoder import TextCrossEncoder

            from groove.embedders.fastembed import load_fastembed_model
        except ImportError as exc:
            raise ModelLoadError(
                f"reranker {self.reranker_id} needs fastembed: pip install 'groove[fastembed]'"
            ) from exc
        return load_fastembed_model(TextCrossEncoder, self.model_name, self.cache_dir, self._error)

    def _error(self, reason: str) -> ModelLoadError:
        return ModelLoadError(
            f"cannot load reranker {self.reranker_id} ({self.model_name}) from cache dir "
            f"{self.cache_dir}: {reason}. Download it once on a machine with network access "
            f"using the same cache dir, then copy that directory here, or point "
            f"model_cache_dir / FASTEMBED_CACHE_DIR at a pre-seeded cache."
        )

    def score(self, query: str, texts: list[str]) -> list[float]:
        return [float(s) for s in self._model.rerank(query, texts)]


_SCORERS: dict[tuple[str, str], Scorer] = {}
_LOCK = threading.Lock()


def get_scorer(reranker_id: str, cache_dir: Path | None = None) -> Scorer:
    """One loaded scorer per (model, cache dir) per process; failures are not cached."""
    key = (reranker_id, str(cache_dir))
    with _LOCK:
        if key not in _SCORERS:
            _SCORERS[key] = FastEmbedScorer(reranker_id, cache_dir)
        return _SCORERS[key]


def rerank_pool_size(limit: int, mmr_on: bool) -> int:
    """limit×5, at least 50 when MMR will draw from the reranked pool."""
    return max(50, limit * 5) if mmr_on else limit * 5


def rerank(query: str, pool: list[tuple[int, float]], texts: list[str],
           scorer: Scorer) -> list[tuple[int, float]]:
    """Re-score ``pool`` by the cross-encoder; raw scores, ties by chunk id."""
    if not pool:
        return []
    scores = scorer.score(query, texts)
    rescored = [(chunk_id, float(s)) for (chunk_id, _), s in zip(pool, scores, strict=True)]
    return sorted(rescored, key=lambda item: (-item[1], item[0]))
