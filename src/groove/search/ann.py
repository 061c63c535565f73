"""The approximate vector index: a faiss IVF index with product-quantised codes over chunk ids.

docs/scaling.md has the measurements behind the choice (``benchmarks/ann_choice.py``):
at 100k clustered vectors faiss IVF built in seconds where hnswlib and faiss HNSW
took 4–8 minutes on the same 2 busy cores, and with its candidates re-scored
exactly it reached recall@10 ≥ 0.99 at sub-millisecond latency. It adds and
removes ids in place and saves to one file. (usearch was as good on paper but
its extension crashes the process when onnxruntime, which fastembed and the
rerankers use, is imported after it.)

The index only proposes candidates: ``VectorIndex`` re-scores them with the
resident vectors, so the codes cost recall, never score precision. That is why
the codes can be small: each vector is held as one byte per ``DIMS_PER_CODE``
dimensions of its residual to its list's centroid (product quantisation; 48
bytes for a 384-dimension vector, a thirty-second of its float32 size), so the
index adds about 0.03x to the resident matrix instead of the quarter 8-bit
codes cost, at the same recall once the candidates are re-scored (measured at
200k and 1M chunks, docs/scaling.md).

Keys are chunk ids. Chunk ids are never reused (AUTOINCREMENT) and a chunk's
vector never changes, so an index built at any earlier generation is still right
about every key it holds: bringing it up to date is "remove the gone keys, add
the new ones" (new vectors go to the existing centroids and codebooks; when the
collection has grown past ``RETRAIN_GROWTH`` times what they were trained on,
the index is rebuilt). A persisted index is trusted only when its sidecar names
the same format, model and dimension and a sample of its stored codes decodes
nearest to the store's own vector for each key.

Files beside the database ``<db>``: ``<db>-ann.faiss`` (the index),
``<db>-ann.keys.npy`` (its keys, ascending) and ``<db>-ann.json`` (written last:
format, model, dimension, key count, training size). Each is written to a
fresh temporary (``mkstemp``: a name nobody could have planted a link at) and renamed, and the sidecar is removed first, so a crash leaves a
complete set or one that is ignored.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from groove.errors import UnsafeFile
from groove.store.files import check_regular, read_bytes, replace_atomically

log = logging.getLogger("groove.search")

#: 2: product-quantised codes (1 was 8-bit scalar codes: such a file is rebuilt).
FORMAT = 2
#: k-means iterations for the centroids and the codebooks (faiss' default is 25;
#: 10 loses nothing here and halves the training time).
KMEANS_ITER = 10
#: Training points per inverted list (faiss warns below 39).
TRAIN_PER_LIST = 40
#: At least this many training points when the collection has them: each
#: codebook has 256 entries and wants ~39 points apiece.
TRAIN_MIN_ROWS = 10_000
#: Dimensions per one-byte code (8: 48 bytes for a 384-dimension vector).
DIMS_PER_CODE = 8
#: Rebuild (re-train the centroids) once the collection is this many times what they were trained for.
RETRAIN_GROWTH = 4.0
#: A stored code must be this close (cosine) to the store's vector.
SAMPLE_SIZE = 64
#: Share of the sampled keys whose code must decode nearest to their own vector.
SAMPLE_MIN_NEAREST = 0.9
#: What these files are called in messages.
WHAT = "the approximate-index file"


def available() -> bool:
    """True when the optional ``faiss-cpu`` package is installed (``groove[ann]``)."""
    try:
        import faiss  # noqa: F401
    except ImportError:
        return False
    return True


def ann_paths(db_path: Path) -> tuple[Path, Path, Path]:
    """``(index, keys, sidecar)`` file paths beside the database."""
    return (db_path.with_name(db_path.name + "-ann.faiss"),
            db_path.with_name(db_path.name + "-ann.keys.npy"),
            db_path.with_name(db_path.name + "-ann.json"))


def inverted_lists(n: int) -> int:
    """About sqrt(n) lists, within 16 … 4096."""
    return int(min(4096, max(16, round(float(np.sqrt(max(n, 1)))))))


@dataclass(frozen=True)
class AnnIndex:
    """One index, never changed once published: updates return a new one (copy on write)."""

    index: Any  # faiss.IndexIVFPQ
    keys: np.ndarray  # int64, ascending: exactly the ids in ``index``
    model_id: str | None
    dim: int
    trained_for: int  # the collection size the centroids were trained for

    @classmethod
    def trained(cls, sample: np.ndarray, total: int, model_id: str | None, *,
                threads: int) -> AnnIndex:
        """An empty index for ``total`` vectors, its centroids trained on ``sample``."""
        import faiss

        faiss.omp_set_num_threads(threads)
        dim = sample.shape[1]
        nlist = max(1, min(inverted_lists(total), len(sample) // TRAIN_PER_LIST))
        codes, bits = code_shape(dim, len(sample))
        index = faiss.IndexIVFPQ(faiss.IndexFlatIP(dim), dim, nlist, codes, bits,
                                 faiss.METRIC_INNER_PRODUCT)
        for clustering in (index.cp, index.pq.cp):
            clustering.niter = KMEANS_ITER
            clustering.min_points_per_centroid = 1  # small KBs: no warning; few lists anyway
        index.train(np.ascontiguousarray(sample, dtype=np.float32))
        return cls(index, np.zeros(0, dtype=np.int64), model_id, dim, total)

    @staticmethod
    def training_rows(total: int) -> int:
        """How many vectors the centroids are trained on for a collection of ``total``."""
        return min(total, max(TRAIN_MIN_ROWS, TRAIN_PER_LIST * inverted_lists(total)))

    def __len__(self) -> int:
        return len(self.keys)

    def search(self, query: np.ndarray, k: int, nprobe: int) -> np.ndarray:
        """Up to ``k`` keys, nearest first by the inner product with their codes."""
        if not len(self.keys) or k <= 0:
            return np.zeros(0, dtype=np.int64)
        import faiss

        params = faiss.SearchParametersIVF()
        params.nprobe = min(nprobe, self.index.nlist)
        found = self.index.search(np.ascontiguousarray(query, dtype=np.float32)[None, :],
                                  min(k, len(self.keys)), params=params)[1][0]
        return found[found >= 0].astype(np.int64)

    def updated(self, add_keys: np.ndarray, add_vectors: Callable[[int, int], np.ndarray],
                remove_keys: np.ndarray, *, threads: int,
                keep_going: Callable[[], bool] = lambda: True,
                block_rows: int = 65536) -> AnnIndex | None:
        """A new index with ``remove_keys`` gone and ``add_keys`` added (this one is untouched).

        ``add_vectors(start, end)`` returns float32 vectors for ``add_keys[start:end]``;
        blocks keep the float32 copy small. None when ``keep_going`` turned False.
        """
        import faiss

        faiss.omp_set_num_threads(threads)
        index = faiss.clone_index(self.index)
        if len(remove_keys):
            index.remove_ids(faiss.IDSelectorBatch(np.ascontiguousarray(remove_keys,
                                                                        dtype=np.int64)))
        for start in range(0, len(add_keys), block_rows):
            if not keep_going():
                return None
            end = min(start + block_rows, len(add_keys))
            index.add_with_ids(np.ascontiguousarray(add_vectors(start, end), dtype=np.float32),
                               np.ascontiguousarray(add_keys[start:end], dtype=np.int64))
        keys = np.union1d(np.setdiff1d(self.keys, remove_keys, assume_unique=True), add_keys)
        return AnnIndex(index, keys.astype(np.int64), self.model_id, self.dim, self.trained_for)

    def stored_vectors(self, keys: np.ndarray) -> np.ndarray:
        """The decoded codes of ``keys`` (each must be in the index)."""
        import faiss

        maps = faiss.DirectMap  # type: ignore[attr-defined]  # not in faiss' stubs
        self.index.set_direct_map_type(maps.Hashtable)  # id -> code, dropped after
        try:
            return np.vstack([self.index.reconstruct(int(key)) for key in keys.tolist()])
        finally:
            self.index.set_direct_map_type(maps.NoMap)

    # --- persistence -----------------------------------------------------------
    def save(self, db_path: Path) -> None:
        import faiss

        ann_index, keys, sidecar = ann_paths(db_path)
        for path in (sidecar, ann_index, keys):  # the sidecar goes first: no stale triple
            if not path.is_dir():  # a planted directory is refused, with its name, below
                path.unlink(missing_ok=True)
        replace_atomically(ann_index, lambda tmp: faiss.write_index(self.index, str(tmp)), WHAT)
        replace_atomically(keys, lambda tmp: _save_array(tmp, self.keys), WHAT)
        meta = {"format": FORMAT, "model_id": self.model_id, "dim": self.dim,
                "keys": len(self.keys), "trained_for": self.trained_for}
        replace_atomically(sidecar, lambda tmp: tmp.write_text(json.dumps(meta), encoding="utf-8"),
                           WHAT)

    @classmethod
    def load(cls, db_path: Path, model_id: str | None, dim: int) -> AnnIndex | None:
        """The persisted index when it is complete and built for this model; else None."""
        ann_index, keys_path, sidecar = ann_paths(db_path)
        try:
            meta = json.loads(read_bytes(sidecar, WHAT).decode("utf-8"))
            if not isinstance(meta, dict):
                raise ValueError("its sidecar is not a JSON object")
            if (meta.get("format"), meta.get("model_id"), meta.get("dim")) != (FORMAT, model_id, dim):
                log.info("approximate index %s was built for another model or format: rebuilding",
                         ann_index)
                return None
            keys = np.load(io.BytesIO(read_bytes(keys_path, WHAT)), allow_pickle=False)
            keys = keys.astype(np.int64).reshape(-1)
            import faiss

            check_regular(ann_index, WHAT)  # faiss opens it by name: no FIFO to block on
            index = faiss.read_index(str(ann_index))
        except (OSError, ValueError, TypeError, RuntimeError, UnsafeFile) as exc:
            if ann_index.exists() or sidecar.exists():
                log.info("approximate index %s unreadable (%s): rebuilding", ann_index, exc)
            return None
        if index.ntotal != len(keys) or meta.get("keys") != len(keys) or index.d != dim:
            return None
        return cls(index, keys, model_id, dim, int(meta.get("trained_for") or len(keys)))

    def matches(self, keys: np.ndarray, vectors: np.ndarray) -> bool:
        """True when the index's stored codes for ``keys`` agree with ``vectors``.

        Codes are lossy, and how lossy depends on the embedder, so no fixed
        cosine threshold fits every model: instead a key's decoded code must lie
        nearest (or tied nearest) to that key's own vector among the sample, for
        at least ``SAMPLE_MIN_NEAREST`` of the keys (two near-duplicate chunks
        may swap). An index written for other vectors matches about one key in
        ``SAMPLE_SIZE`` by chance, so it fails at once.
        """
        if not len(keys):
            return True
        stored = self.stored_vectors(keys)
        unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        cosines = stored @ unit.T
        own = np.diagonal(cosines)
        return bool(np.mean(own >= cosines.max(axis=1) - 1e-6) >= SAMPLE_MIN_NEAREST)


def code_shape(dim: int, training_rows: int) -> tuple[int, int]:
    """``(codes per vector, bits per code)`` for vectors of ``dim`` and this much training data.

    Codes: the largest divisor of ``dim`` giving at least ``DIMS_PER_CODE``
    dimensions each (faiss needs an exact division). Bits: 8, fewer when
    there are too few training points for 256 codebook entries (small KBs).
    """
    codes = next(c for c in range(max(1, dim // DIMS_PER_CODE), 0, -1) if dim % c == 0)
    bits = int(max(1, min(8, np.floor(np.log2(max(training_rows, 2))) - 2)))
    return codes, bits


def _save_array(path: Path, array: np.ndarray) -> None:
    with path.open("wb") as fh:  # a file object: np.save would append ".npy" to a name
        np.save(fh, array, allow_pickle=False)


