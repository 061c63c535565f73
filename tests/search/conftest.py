"""Fixtures for the search tests (the helpers live in searchkit.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from searchkit import Corpus, FixedQueryEmbedder

from groove.embedders.base import Embedder
from groove.store import open_store


@pytest.fixture
def corpus_factory(tmp_path: Path) -> Callable[..., Corpus]:
    """``corpus_factory(embedder, dim)`` → an empty Corpus over a fresh SQLite store."""
    stores = []

    def make(embedder: Embedder, *, name: str = "idx") -> Corpus:
        root = tmp_path / name
        root.mkdir()
        store = open_store(root / "index.db", create=True)
        store.set_meta(model_id=embedder.model_id, dim=embedder.dim, context_mode="off")
        stores.append(store)
        return Corpus(store=store, embedder=embedder, tmp_path=root)

    yield make
    for store in stores:
        store.close()


@pytest.fixture
def fixed(corpus_factory) -> Corpus:
    """A corpus with explicit vectors and a query vector along axis 0."""
    return corpus_factory(FixedQueryEmbedder())


@pytest.fixture
def real(corpus_factory, embedder) -> Corpus:
    """A corpus embedded by the real default model."""
    return corpus_factory(embedder)
