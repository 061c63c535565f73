"""Cross-encoder rerankers served by fastembed (ONNX), downloaded on first use.

Loading goes through the same cache-first helper as the fastembed embedders
(:func:`groove.embedders.fastembed.load_fastembed_model`), so an offline
machine without the model fails at once with a message saying how to
pre-seed the cache.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from groove.errors import ModelLoadError

log = logging.getLogger("groove.rerankers.fastembed")

#: groove's reranker ids -> fastembed model names.
MODEL_NAMES = {
    "bge-reranker-base": "BAAI/bge-reranker-base",
    "jina-reranker-v2-ml": "jinaai/jina-reranker-v2-base-multilingual",
    "bge-reranker-v2-m3": "BAAI/bge-reranker-v2-m3",
}


class FastEmbedReranker:
    """fastembed's ``TextCrossEncoder``, loaded from the cache or downloaded once."""

    def __init__(self, reranker_id: str, *, cache_dir: Path | None = None) -> None:
        if reranker_id not in MODEL_NAMES:
            from groove.rerankers import RERANKERS

            RERANKERS.check(reranker_id)  # names every accepted id
            raise ModelLoadError(f"reranker {reranker_id!r} is not served by fastembed")
        self.reranker_id = reranker_id
        self.model_name = MODEL_NAMES[reranker_id]
        from groove.embedders.fastembed import default_cache_dir

        self.cache_dir = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
        self._model = self._load()

    def _load(self) -> Any:
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
        from groove.embedders.fastembed import cache_load_error

        return cache_load_error(
            f"reranker {self.reranker_id} ({self.model_name})", self.cache_dir, reason,
            f'groove search --rerank --reranker {self.reranker_id} "any query"')

    def score(self, query: str, texts: list[str]) -> list[float]:
        return [float(s) for s in self._model.rerank(query, texts)]
