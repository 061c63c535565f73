"""Resident memory of the vector index at N chunks, per storage (docs/scaling.md).

``python benchmarks/resident_memory.py build DB N`` writes N chunks (50 per
document, unit vectors of dimension 384 clustered around 2,000 centres, short
full-text rows) straight through the store API; ``... measure DB STORAGE``
loads them into a ``VectorIndex`` in a fresh process (with the approximate
index built and saved beside DB when N reaches ``ann_min_chunks``) and prints
one JSON line: the growth of the process's RSS over the load, its ratio to
the raw float32 vectors, and the parts (matrix, approximate index codes and
ids, columns, the rest), plus the overhead per chunk beyond the matrix.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

DIM = 384


def vm_mib(key: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def build(db: Path, n: int) -> None:
    from groove.models import Chunk, DocumentRecord
    from groove.store import open_store

    store = open_store(db, create=True)
    store.set_meta(model_id="synthetic", dim=DIM, context_mode="off")
    rng = np.random.default_rng(3)
    centres = rng.standard_normal((2000, DIM)).astype(np.float32)
    per = 50
    for d in range(n // per):
        vectors = centres[rng.integers(0, 2000, per)]
        vectors = vectors + 0.3 * rng.standard_normal((per, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        record = DocumentRecord(path=f"d/{d:06}.md", sha256=hashlib.sha256(str(d).encode()).hexdigest(),
                                title=f"doc {d}", category="c", topic=None, date=None, tags=(),
                                tags_invalid=False, metadata={}, size=1, mtime=1.0)
        store.write_document(record, [Chunk(i, "H", 2, "", f"w{d} x{i}", 4, 1.0, ())
                                      for i in range(per)], vectors)
    store.set_meta(last_indexed=time.time(), build_state="complete")
    store.close()


def measure(db: Path, storage: str) -> dict[str, object]:
    import faiss  # noqa: F401  (imported before the baseline, as a server has it)

    from groove.config.model import VectorsConfig
    from groove.search.vectors import VectorIndex
    from groove.store import open_store

    store = open_store(db)
    before = vm_mib("VmRSS")
    index = VectorIndex(store, VectorsConfig.model_validate({"storage": storage}), ann_path=db,
                        model_id="synthetic")
    index.refresh()
    ready = index.wait_for_ann(3600)
    grown = vm_mib("VmRSS") - before
    n = len(index.ids)
    raw = n * DIM * 4 / 2**20
    view = index._view
    ann_mib = 0.0
    if view is not None:
        codes = view.ann_index.index
        ann_mib = (codes.ntotal * (codes.code_size + 8) + view.ann_index.keys.nbytes) / 2**20
    columns = sum(a.nbytes for a in (index.ids, index.embedded, index._doc_slot, index._quality,
                                     index._binary)) / 2**20
    matrix = index.matrix.nbytes / 2**20
    return {"chunks": n, "storage": storage, "uses_ann": index.uses_ann, "ann_ready": ready,
            "rss_growth_mb": round(grown, 1), "raw_float32_mb": round(raw, 1),
            "ratio": round(grown / raw, 3), "matrix_mb": round(matrix, 1),
            "ann_codes_ids_mb": round(ann_mib, 1), "columns_mb": round(columns, 1),
            "rest_mb": round(grown - matrix - ann_mib - columns, 1),
            "per_chunk_beyond_matrix_bytes": round((grown - matrix) * 2**20 / n, 1),
            "loadavg_1m": os.getloadavg()[0]}


if __name__ == "__main__":
    if sys.argv[1] == "build":
        build(Path(sys.argv[2]), int(sys.argv[3]))
    else:
        print(json.dumps(measure(Path(sys.argv[2]), sys.argv[3])))
