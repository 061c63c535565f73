"""Which approximate-nearest-neighbour library answers groove's vector leg (docs/scaling.md).

``python benchmarks/ann_choice.py --n 100000 --out FILE`` builds the same HNSW graph
(M=16, ef_construction=128, inner product on unit vectors) with hnswlib, faiss-cpu and
usearch, each in a fresh child process so that its peak RSS is its own, and reports:

* ``build_s``: adding every vector (2 threads);
* for each ``ef`` in a sweep: recall@10 against the exact top 10 (numpy) and the
  p50 latency of one single-vector query;
* ``rss_mb``: VmHWM of the child minus its RSS before the build (data included once).

Two data sets: ``uniform`` (random unit vectors: the worst case for a graph index,
no structure at all) and ``clustered`` (unit vectors around 2,000 random centres,
closer to what a text embedder produces). The verdict is made on both.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

DIM = 384
M = 16
EF_CONSTRUCTION = 128
EF_SWEEP = (32, 64, 128, 256, 512)
QUERIES = 200
LIBRARIES = ("faiss-ivf-flat", "faiss-ivf-sq8", "faiss-ivf-sq8-rescored", "hnswlib",
             "faiss-hnsw", "usearch-f32", "usearch-f16", "usearch-i8", "usearch-i8-rescored")
#: IVF: the graph sweep's ``ef`` is mapped to ``nprobe = ef // 8`` (4 … 64 lists).
NPROBE_PER_EF = 8
#: k-means iterations for the IVF centroids (faiss default is 25; 10 is plenty here).
KMEANS_ITER = 10
#: What groove does with an int8 graph: ask for this many times k, re-score exactly.
RESCORE_FACTOR = 4


def data(kind: str, n: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """``(base[n, DIM], queries[QUERIES, DIM])``, all unit vectors, float32."""
    rng = np.random.default_rng(seed)
    total = n + QUERIES
    if kind == "uniform":
        x = rng.standard_normal((total, DIM), dtype=np.float32)
    else:
        centres = rng.standard_normal((2000, DIM), dtype=np.float32)
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        x = centres[rng.integers(0, len(centres), total)]
        x += rng.standard_normal((total, DIM), dtype=np.float32) * (0.6 / np.sqrt(DIM))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return np.ascontiguousarray(x[:n]), np.ascontiguousarray(x[n:])


def exact_top10(base: np.ndarray, queries: np.ndarray) -> np.ndarray:
    out = np.empty((len(queries), 10), dtype=np.int64)
    for i in range(0, len(queries), 50):
        scores = queries[i:i + 50] @ base.T
        part = np.argpartition(-scores, 10, axis=1)[:, :10]
        out[i:i + 50] = part
    return out


def vm_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _build(lib: str, base: np.ndarray) -> tuple[Any, Any]:
    """``(index, search(query, ef) -> ids)`` for one library."""
    n = len(base)
    ids = np.arange(n, dtype=np.int64)
    if lib == "hnswlib":
        import hnswlib

        index = hnswlib.Index(space="ip", dim=DIM)
        index.init_index(max_elements=n, ef_construction=EF_CONSTRUCTION, M=M)
        index.set_num_threads(2)
        index.add_items(base, ids)

        def search(q: np.ndarray, ef: int) -> np.ndarray:
            index.set_ef(max(ef, 10))
            return index.knn_query(q, k=10)[0][0]
        return index, search
    if lib.startswith("faiss-ivf"):
        return _faiss_ivf(lib, base, ids)
    if lib == "faiss-hnsw":
        import faiss

        faiss.omp_set_num_threads(2)
        index = faiss.IndexHNSWFlat(DIM, M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = EF_CONSTRUCTION
        index.add(base)

        def search(q: np.ndarray, ef: int) -> np.ndarray:
            params = faiss.SearchParametersHNSW(efSearch=max(ef, 10))
            return index.search(q[None, :], 10, params=params)[1][0]
        return index, search
    from usearch.index import Index

    index = Index(ndim=DIM, metric="ip", dtype=lib.split("-")[1], connectivity=M,
                  expansion_add=EF_CONSTRUCTION)
    index.add(ids, base, threads=2)
    rescored = lib.endswith("-rescored")

    def search(q: np.ndarray, ef: int) -> np.ndarray:
        k = 10 * RESCORE_FACTOR if rescored else 10
        index.expansion_search = max(ef, k)
        keys = index.search(q, k).keys
        if rescored:
            exact = base[keys] @ q
            keys = keys[np.argsort(-exact)[:10]]
        return keys
    return index, search


def ivf_lists(n: int) -> int:
    """Inverted lists for ``n`` vectors: about sqrt(n), within 16 … 4096."""
    return int(min(4096, max(16, round(np.sqrt(n)))))


def _faiss_ivf(lib: str, base: np.ndarray, ids: np.ndarray) -> tuple[Any, Any]:
    import faiss

    faiss.omp_set_num_threads(2)
    nlist = ivf_lists(len(base))
    quantizer = faiss.IndexFlatIP(DIM)
    if "sq8" in lib:
        index = faiss.IndexIVFScalarQuantizer(quantizer, DIM, nlist, faiss.ScalarQuantizer.QT_8bit,
                                              faiss.METRIC_INNER_PRODUCT)
    else:
        index = faiss.IndexIVFFlat(quantizer, DIM, nlist, faiss.METRIC_INNER_PRODUCT)
    index.cp.niter = KMEANS_ITER
    sample = base[np.random.default_rng(3).choice(len(base), min(len(base), 40 * nlist),
                                                   replace=False)]
    index.train(sample)
    index.add_with_ids(base, ids)
    rescored = lib.endswith("-rescored")

    def search(q: np.ndarray, ef: int) -> np.ndarray:
        k = 10 * RESCORE_FACTOR if rescored else 10
        params = faiss.SearchParametersIVF(nprobe=max(1, ef // NPROBE_PER_EF))
        keys = index.search(q[None, :], k, params=params)[1][0]
        keys = keys[keys >= 0]
        if rescored:
            keys = keys[np.argsort(-(base[keys] @ q))[:10]]
        return keys
    return index, search


def child(lib: str, kind: str, n: int) -> dict[str, Any]:
    base, queries = data(kind, n)
    truth = exact_top10(base, queries)
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    rss_before = vm_kib("VmRSS")
    t0 = time.perf_counter()
    _, search = _build(lib, base)
    build_s = time.perf_counter() - t0
    sweep = []
    for ef in EF_SWEEP:
        times, hits = [], 0
        for q, want in zip(queries, truth, strict=True):
            t1 = time.perf_counter()
            got = search(q, ef)
            times.append(time.perf_counter() - t1)
            hits += len(set(np.asarray(got).tolist()) & set(want.tolist()))
        sweep.append({"ef": ef, "recall_at_10": round(hits / (10 * len(queries)), 4),
                      "p50_ms": round(statistics.median(times) * 1000, 3)})
    exact_times = []
    for q in queries[:50]:
        t1 = time.perf_counter()
        scores = base @ q
        np.argpartition(-scores, 10)[:10]
        exact_times.append(time.perf_counter() - t1)
    return {"library": lib, "data": kind, "n": n, "build_s": round(build_s, 2),
            "rss_mb": round((vm_kib("VmHWM") - rss_before) / 1024, 1),
            "raw_float32_mb": round(base.nbytes / 2**20, 1), "sweep": sweep,
            "exact_numpy_p50_ms": round(statistics.median(exact_times) * 1000, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--data", nargs="+", default=["clustered", "uniform"])
    parser.add_argument("--libs", nargs="+", default=list(LIBRARIES), choices=LIBRARIES)
    parser.add_argument("--child", nargs=2, metavar=("LIB", "DATA"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.n)))
        return
    results = []
    for kind in args.data:
        for lib in args.libs:
            done = subprocess.run([sys.executable, __file__, "--n", str(args.n), "--out", "-",
                                   "--child", lib, kind], capture_output=True, text=True)
            if done.returncode != 0:
                results.append({"library": lib, "data": kind, "error": done.stderr[-1500:]})
            else:
                results.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
