"""The resident vector index: one contiguous float32 matrix plus chunk metadata.

Loaded from the store on first use and reloaded whenever the store's
generation changes (a cheap check per query), so searches never touch SQLite
for the vector leg or for filtering. Filter masks are cached per generation:
the common case (quality filter only) costs nothing after the first query.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from groove.models import ChunkRow
from groove.search.filters import ChunkFilter
from groove.store.base import Store

_MASK_CACHE_SIZE = 32


class VectorIndex:
    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._generation: int | None = None
        self.ids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.rows: list[ChunkRow] = []
        self.position: dict[int, int] = {}
        # Per-row columns for the mask: document slot, quality, binary flag.
        self._doc_slot = np.zeros(0, dtype=np.int64)
        self._doc_rows: list[ChunkRow] = []
        self._quality = np.zeros(0, dtype=np.float64)
        self._binary = np.zeros(0, dtype=bool)
        self._masks: OrderedDict[tuple, np.ndarray] = OrderedDict()

    def refresh(self) -> None:
        """Reload when the index changed since the last load."""
        generation = self._store.generation()
        if generation == self._generation:
            return
        with self._lock:
            if generation == self._generation:
                return
            ids, matrix = self._store.load_vectors()
            meta = {row.id: row for row in self._store.all_chunks_meta()}
            self.ids = ids
            self.matrix = np.ascontiguousarray(matrix, dtype=np.float32)
            self.rows = [meta[int(i)] for i in ids]
            self.position = {int(i): p for p, i in enumerate(ids)}
            self._index_columns()
            self._masks.clear()
            self._generation = generation

    def __len__(self) -> int:
        return len(self.ids)

    def _index_columns(self) -> None:
        slots: dict[int, int] = {}
        self._doc_rows = []
        for row in self.rows:
            if row.doc_id not in slots:
                slots[row.doc_id] = len(self._doc_rows)
                self._doc_rows.append(row)
        self._doc_slot = np.fromiter((slots[r.doc_id] for r in self.rows), dtype=np.int64,
                                     count=len(self.rows))
        self._quality = np.fromiter((r.quality for r in self.rows), dtype=np.float64,
                                    count=len(self.rows))
        self._binary = np.fromiter((r.binary_format for r in self.rows), dtype=bool,
                                   count=len(self.rows))

    def mask(self, chunk_filter: ChunkFilter) -> np.ndarray:
        """Boolean array: which rows pass the filter (cached per generation).

        Every filter but quality is on document fields, so it is decided once
        per document (path globs are the costly part) and broadcast to that
        document's chunks; the quality floor is one numpy comparison.
        """
        key = chunk_filter.key
        cached = self._masks.get(key)
        if cached is not None:
            self._masks.move_to_end(key)
            return cached
        doc_ok = np.fromiter((chunk_filter.document_passes(r) for r in self._doc_rows),
                             dtype=bool, count=len(self._doc_rows))
        mask = doc_ok[self._doc_slot] & (self._binary | (self._quality >= chunk_filter.min_quality))
        self._masks[key] = mask
        if len(self._masks) > _MASK_CACHE_SIZE:
            self._masks.popitem(last=False)
        return mask

    def top_n(self, query: np.ndarray, n: int, allowed: np.ndarray) -> list[tuple[int, float]]:
        """Best ``n`` allowed chunks by cosine, as ``(chunk_id, similarity)`` best first."""
        if not len(self.ids) or n <= 0:
            return []
        scores = self.matrix @ query.astype(np.float32, copy=False)
        scores = np.where(allowed, scores, -np.inf)
        count = min(n, int(allowed.sum()))
        if count <= 0:
            return []
        if count < len(scores):
            part = np.argpartition(-scores, count - 1)[:count]
            # argpartition keeps an arbitrary subset of the rows tied with the
            # boundary score; take all of them so chunk id decides who survives.
            part = np.flatnonzero(scores >= scores[part].min())
        else:
            part = np.arange(len(scores))
        # Sort by score desc, then chunk id asc, for deterministic ties.
        order = np.lexsort((self.ids[part], -scores[part]))
        picked = part[order][:count]
        return [(int(self.ids[p]), float(scores[p])) for p in picked]

    def vectors_for(self, chunk_ids: list[int]) -> np.ndarray:
        return self.matrix[[self.position[c] for c in chunk_ids]]
