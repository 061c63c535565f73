"""The resident embedding matrix, stored as float32, float16 or int8 (docs/scaling.md).

``float32`` is the stored vectors as they are. ``float16`` halves the memory and
changes a cosine by at most ~1e-3. ``int8`` quarters it: each row keeps its own
scale (``max |x| / 127``), so a cosine moves by at most ~1e-2 — enough to swap
near-ties, never to lose a clear neighbour.

Scores are always computed in float32. A compact matrix is converted block by
block (``BLOCK_ROWS`` rows at a time, 6 MB of float32 per scanning thread), so a
full scan never materialises a float32 copy of the whole matrix; smaller blocks
stay in cache (an int8 scan of 200k rows: 20.6 ms in blocks of 4,096 rows against
25.0 ms in blocks of 16,384).

Scores never go through the threaded BLAS. After a threaded call OpenBLAS's
idle workers spin for a while, and on a small machine they take the core the
next query's embedding needs: at 50k chunks a back-to-back search's embedding
took 17-19 ms beside them against 15-16 ms without, and its full-text leg
5-6 ms against 1 ms. ``einsum`` computes a mat-vec with its own SIMD loop,
about as fast on one core as the BLAS on two (3.5 against 3.3 ms at 50k);
a scan of at least ``2 × SPLIT_ROWS`` rows is cut into one part per core,
run on this module's threads (numpy releases the GIL), 2.3 ms at 50k on two
cores. Each row's score is computed by the same loop whatever rows come with
it, so a score does not depend on how a scan was cut.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Literal, TypeVar, get_args

import numpy as np

_T = TypeVar("_T")
_R = TypeVar("_R")
Storage = Literal["float32", "float16", "int8"]
STORAGES: tuple[str, ...] = get_args(Storage)
BLOCK_ROWS = 4096
#: A scan is cut into parts of at least this many rows, one per core.
SPLIT_ROWS = 8192
CORES = max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                    else (os.cpu_count() or 1), 8))
_SCAN_POOL = (ThreadPoolExecutor(max_workers=CORES - 1, thread_name_prefix="groove-scan")
              if CORES > 1 else None)


def matvec(block: np.ndarray, query: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``block @ query`` without the threaded BLAS (see the module docstring); every
    product of a matrix and a vector on the search path goes through here."""
    return np.einsum("ij,j->i", block, query, out=out)


def scan_parts(rows: int) -> list[tuple[int, int]]:
    """``[(start, end)]``: a scan of ``rows`` rows cut into one part per core, each of at
    least ``SPLIT_ROWS`` rows (one part when that is all there is)."""
    parts = min(CORES, rows // SPLIT_ROWS) if _SCAN_POOL is not None else 1
    step = max(1, -(-rows // max(parts, 1)))
    return [(start, min(start + step, rows)) for start in range(0, rows, step)]


def in_parallel(work: Callable[[_T], _R], items: Sequence[_T]) -> list[_R]:
    """``work(item)`` for each item: the first on this thread, the others on the
    module's scan threads (the work must release the GIL to gain anything)."""
    if len(items) <= 1 or _SCAN_POOL is None:
        return [work(item) for item in items]
    others = [_SCAN_POOL.submit(work, item) for item in items[1:]]
    first = work(items[0])
    return [first, *(future.result() for future in others)]


def _scan(data: np.ndarray, query: np.ndarray, convert: bool) -> np.ndarray:
    """``data @ query`` over every row, one part per core; ``convert``: rows are not float32."""
    out = np.empty(len(data), dtype=np.float32)

    def part(bounds: tuple[int, int]) -> None:
        start, end = bounds
        if not convert:
            matvec(data[start:end], query, out=out[start:end])
            return
        for first in range(start, end, BLOCK_ROWS):
            last = min(first + BLOCK_ROWS, end)
            matvec(data[first:last].astype(np.float32), query, out=out[first:last])

    in_parallel(part, scan_parts(len(data)))
    return out


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
        compact = self.storage != "float32"
        if rows is None:
            out = _scan(self.data, query, convert=compact)
            if self.storage == "int8":
                out *= self.scale
            return out
        if not compact:
            return matvec(self.data[rows], query)
        out = np.empty(len(rows), dtype=np.float32)
        for start in range(0, len(rows), BLOCK_ROWS):
            take = slice(start, start + BLOCK_ROWS)
            matvec(self.data[rows[take]].astype(np.float32), query, out=out[take])
        if self.storage == "int8":
            out *= self.scale[rows]
        return out
