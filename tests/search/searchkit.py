"""Search test kit: a real SQLite store filled directly, searched through run_search.

``corpus`` builds documents chunk by chunk (no parsing, no chunking), so a test
states exactly which chunks exist, their metadata and — when the test is about
ranking mechanics — their vectors. With ``vectors=None`` the real session
embedder embeds the chunk text, for tests whose behaviour depends on the model.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from groove.config import Config, load_config
from groove.embedders.base import Embedder
from groove.models import Chunk, DocumentRecord, SearchResponse
from groove.search.pipeline import run_search
from groove.search.request import SearchRequest, validate_request
from groove.search.vectors import VectorIndex

DIM = 16


def unit(*weights: tuple[int, float]) -> np.ndarray:
    """A normalised DIM-vector from ``(axis, weight)`` pairs."""
    v = np.zeros(DIM, dtype=np.float32)
    for axis, w in weights:
        v[axis] += w
    return v / np.linalg.norm(v)


class FixedQueryEmbedder(Embedder):
    """Deterministic embedder: every query embeds to ``query_vector``.

    Used where the test is about ranking mechanics, so the vector leg's order
    is decided by the test's own vectors and not by a model.
    """

    model_id = "fixed-test"
    dim = DIM
    max_input_tokens = 512

    def __init__(self, query_vector: np.ndarray | None = None) -> None:
        self.query_vector = unit((0, 1.0)) if query_vector is None else query_vector

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        raise AssertionError("passages are given explicit vectors in these tests")

    def embed_query(self, text: str) -> np.ndarray:
        return self.query_vector


@dataclass
class Sec:
    """One chunk to write: heading/content plus optional overrides."""

    content: str
    heading: str | None = "Section"
    level: int | None = 2
    quality: float = 1.0
    token_count: int | None = None
    vector: np.ndarray | None = None
    context: str = ""  # the breadcrumb (stored only in contextual mode)
    symbol_kind: str | None = None  # source-code chunks only
    scope: str | None = None
    line_start: int | None = None
    line_end: int | None = None


@dataclass
class Corpus:
    store: Any
    embedder: Embedder
    tmp_path: Path
    config_overrides: dict[str, Any] = field(default_factory=dict)
    _vectors: VectorIndex | None = None

    def add(self, path: str, sections: Sequence[Sec | str], *, title: str | None = None,
            category: str | None = None, topic: str | None = None, date: str | None = None,
            tags: Sequence[str] = (), binary_format: bool = False,
            language: str | None = None) -> list[int]:
        """Write one document; return its chunk ids in chunk order."""
        secs = [s if isinstance(s, Sec) else Sec(s) for s in sections]
        chunks = [
            Chunk(i, s.heading, s.level, s.context, s.content,
                  s.token_count if s.token_count is not None else max(1, len(s.content) // 4),
                  s.quality, (), s.symbol_kind, s.scope, s.line_start, s.line_end)
            for i, s in enumerate(secs)
        ]
        if all(s.vector is not None for s in secs):
            vectors = np.stack([s.vector for s in secs]).astype(np.float32)
        else:
            vectors = self.embedder.embed_passages(
                [f"{s.heading}\n{s.content}" if s.heading else s.content for s in secs])
        record = DocumentRecord(
            path=path, sha256=hashlib.sha256(path.encode()).hexdigest(), title=title or path,
            category=category, topic=topic, date=date, tags=tuple(tags), tags_invalid=False,
            metadata={}, size=1, mtime=1.0, binary_format=binary_format, language=language)
        self.store.write_document(record, chunks, vectors)
        self.store.flush()  # publish to the full-text index, as the indexer does per batch
        doc = self.store.get_document(path)
        return [row.id for row in self.store.document_chunks(doc.id)]

    def config(self, **overrides: Any) -> Config:
        merged = {**self.config_overrides, **overrides}
        return load_config(kb_path=self.tmp_path, cwd=self.tmp_path, overrides=merged or None)

    def search(self, query: str, *, config: Config | None = None, scorer: Any = None,
               embedder: Embedder | None = None, **fields: Any) -> SearchResponse:
        if self._vectors is None:
            self._vectors = VectorIndex(self.store)
        request = validate_request(SearchRequest(query=query, **fields))
        return run_search(store=self.store, embedder=embedder or self.embedder,
                          config=config or self.config(), request=request,
                          vectors=self._vectors, scorer=scorer)

    def paths(self, response: SearchResponse) -> list[str]:
        return [h.path for h in response.results]
