"""The embedder interface every backend implements.

Vectors are L2-normalised float32 so that cosine similarity is a dot product
and the vector leg can be one matrix multiply.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Protocol

import numpy as np


class Embedder(ABC):
    """A text embedding model with separate query and passage modes."""

    #: Stable identifier recorded in the index (e.g. ``multilingual-e5-small``).
    model_id: str
    #: Vector dimension recorded in the index.
    dim: int
    #: Longest input, in the model's own tokens, before it truncates.
    max_input_tokens: int
    #: True when the model is fetched into a cache dir on first use (not bundled).
    downloads: bool = False
    #: Where a remote model is served (its URL), recorded in the index beside
    #: ``model_id``; None for a model that runs in this process.
    source: str | None = None
    #: What runs the model when it has more than one engine: its key in
    #: :data:`groove.embedders.ENGINES` (``groove status`` names it).
    engine: str | None = None

    @abstractmethod
    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """Embed documents; returns shape ``(len(texts), dim)`` float32, rows L2-normalised."""

    @abstractmethod
    def embed_query(self, text: str) -> np.ndarray:
        """Embed one search query; returns shape ``(dim,)`` float32, L2-normalised."""

    def probe(self) -> None:  # noqa: B027  (a model in this process has nothing to check)
        """Raise what indexing would raise, before a forced rebuild changes anything.

        A remote embedder sends one fixed text (never knowledge-base text);
        a model that runs in this process is already loaded, so this does nothing.
        """

    def expect_dim(self, dim: int | None) -> None:  # noqa: B027  (a local model's is fixed)
        """The index holds vectors of ``dim`` (None: none yet).

        A model that runs here has one dimension, part of its name; a remote
        one, which may be served anywhere, checks its answers against this
        dimension and refuses another (see the OpenAI-compatible embedder).
        """

    def token_count(self, text: str) -> int:
        """Tokens the model would see; backends without a tokenizer use ``len/4``."""
        return max(1, len(text) // 4)

    def token_floor(self, text: str) -> int:
        """At least this many tokens for ``text`` (:meth:`token_count`), known without tokenizing.

        The indexer asks the bounds first and tokenizes only when they do not
        settle whether a section fits the window or is a stub
        (groove.indexing.tokens), so they must hold for every text. The
        default knows nothing.
        """
        return 0

    def token_ceiling(self, text: str) -> int | None:
        """At most this many tokens for ``text``, known without tokenizing; None: unknown."""
        return None

    def close(self) -> None:  # noqa: B027  (optional hook: most backends hold nothing)
        """Release connections or engines (nothing to do for most backends)."""


class WrappedEmbedder(Embedder):
    """Another embedder seen through a wrapper that changes one part of it.

    Every call goes to ``model`` and the identity (id, dimension, source,
    engine) is its; a subclass overrides only what it changes (collections
    keep recent query vectors, a benchmark collects passage texts).
    """

    def __init__(self, model: Embedder) -> None:
        self.model = model
        self.model_id, self.dim = model.model_id, model.dim
        self.max_input_tokens, self.downloads = model.max_input_tokens, model.downloads
        self.source, self.engine = model.source, model.engine

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self.model.embed_passages(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.model.embed_query(text)

    def probe(self) -> None:
        self.model.probe()

    def expect_dim(self, dim: int | None) -> None:
        self.model.expect_dim(dim)

    def token_count(self, text: str) -> int:
        return self.model.token_count(text)

    def token_floor(self, text: str) -> int:
        return self.model.token_floor(text)

    def token_ceiling(self, text: str) -> int | None:
        return self.model.token_ceiling(text)

    def close(self) -> None:
        self.model.close()


class EmbedderFactory(Protocol):
    """How :func:`groove.embedders.get_embedder` builds a registered class.

    ``downloads`` says whether the model is fetched into ``cache_dir`` on first
    use (instances are then cached per cache dir) or bundled.
    """

    downloads: bool

    def __call__(self, model_id: str, *, cache_dir: Path | None = None) -> Embedder: ...

