"""The resident embedding matrix, stored as float32, float16 or int8 (docs/scaling.md).

``float32`` is the stored vectors as they are. ``float16`` halves the memory and
changes a cosine by at most ~1e-3. ``int8`` quarters it: each row keeps its own
scale (``max |x| / 127``), so a cosine moves by at most ~1e-2 — enough to swap
near-ties, never to lose a clear neighbour.

Scores are always computed in float32. A compact matrix is converted block by
block (``BLOCK_ROWS`` rows at a time), so a full scan never materialises a float32
copy of the whole matrix.
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np

Storage = Literal["float32", "float16", "int8"]
STORAGES: tuple[str, ...] = get_args(Storage)
BLOCK_ROWS = 16384


class ResidentMatrix:
    """``n × dim`` vectors in the chosen storage; rows are filled once, then read."""

    def __init__(self, rows: int, dim: int, storage: Storage = "float32") -> None:
        if storage not in STORAGES:
            raise ValueError(f"storage {storage!r} is not one of: {', '.join(STORAGES)}")
        self.storage: Storage = storage
        dtype = np.int8 if storage == "int8" else np.dtype(storage)
        self.data = np.zeros((rows, dim), dtype=dtype)
        self.scale = np.ones(rows if storage == "int8" else 0, dtype=np.float32)

    def __len__(self) -> int:
        return len(self.data)

    @property
    def dim(self) -> int:
        return int(self.data.shape[1])

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes + self.scale.nbytes)

    def fill(self, start: int, block: np.ndarray) -> None:
        """Store float32 rows ``block`` at rows ``start …``."""
        end = start + len(block)
        if self.storage != "int8":
            self.data[start:end] = block
            return
        peak = np.abs(block).max(axis=1) if len(block) else np.zeros(0, np.float32)
        scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
        self.data[start:end] = np.rint(block / scale[:, None]).astype(np.int8)
        self.scale[start:end] = scale

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        """float32 copies of the given rows."""
        out = self.data[rows].astype(np.float32)
        if self.storage == "int8":
            out *= self.scale[rows][:, None]
        return out

    def scores(self, query: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Inner products of ``query`` with every row, or with ``rows`` only (float32)."""
        query = query.astype(np.float32, copy=False)
        if self.storage == "float32":
            return self.data @ query if rows is None else self.data[rows] @ query
        count = len(self.data) if rows is None else len(rows)
        out = np.empty(count, dtype=np.float32)
        for start in range(0, count, BLOCK_ROWS):
            take = slice(start, start + BLOCK_ROWS)
            picked = np.arange(start, min(start + BLOCK_ROWS, count)) if rows is None else rows[take]
            block = self.data[take] if rows is None else self.data[picked]
            out[take] = block.astype(np.float32) @ query
            if self.storage == "int8":
                out[take] *= self.scale[picked]
        return out
