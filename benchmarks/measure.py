"""Measurements that run inside a child process (one per KB size).

Each ``child_*`` function prints one JSON object on stdout; ``run.py`` starts
them with ``python benchmarks/measure.py <kind> <kb dir> [options]`` so that
peak RSS (VmHWM) is per size and a cold ``KnowledgeBase`` is really cold.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from kbcache import DIM, load_bench_config  # noqa: E402

#: The fixed query mix: (shape, query, SearchRequest overrides).
QUERY_MIX: list[tuple[str, str, dict[str, Any]]] = [
    ("english", "how does the connection pool handle concurrent writes", {}),
    ("english", "retry policy for network partitions", {}),
    ("english", "embedding model cold starts on a small machine", {}),
    ("english", "rate limiter throttles bursty traffic", {}),
    ("japanese", "検索インデックスの更新手順", {}),
    ("japanese", "再ランキングの評価結果を共有する", {}),
    ("japanese", "接続プールのタイムアウト値", {}),
    ("japanese", "障害対応の手順", {}),
    ("quoted", '"schema migration" long-running transactions', {}),
    ("quoted", '"feature flag" rollout', {}),
    ("quoted", '"ログ収集" の設定', {}),
    ("filtered", "slow queries in the search index", {"category": "engineering"}),
    ("filtered", "cache layer stale entries", {"tags_any": ["cache", "latency"]}),
    ("filtered", "backup script", {"date_from": "2023-01-01", "date_to": "2024-12-31"}),
    ("filtered", "デプロイ手順", {"topic": "runbooks"}),
    ("filtered", "vector matrix", {"path_globs": ["**", "!handbook/**"]}),
    ("excluded", "message queue duplicate events -staging", {}),
    ("excluded", 'load balancer -"health check"', {}),
    ("excluded", "監視ダッシュボード -夜間バッチ", {}),
    ("excluded", "trigram tokenizer -unicode -oversized", {}),
]
HTTP_QUERY = QUERY_MIX[0][1]

#: 40 distinct corpus words: parse_query keeps the first 32 (the SPEC cap).
WORST_FTS_QUERY = (
    "connection pool search index cache layer release pipeline embedding model reranker "
    "query planner ingestion rate limiter session store config loader file watcher retry "
    "policy vector matrix trigram tokenizer batch scheduler metrics exporter alerting "
    "schema migration access feature backup balancer message queue deploy health tracing"
)


def vm_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def open_kb(kb_dir: Path) -> Any:
    from groove.embedders import get_embedder
    from groove.kb import KnowledgeBase

    config = load_bench_config(kb_dir)
    return KnowledgeBase(config, embedder=get_embedder(config.model))


def _request(query: str, extra: dict[str, Any]) -> Any:
    from groove.search.request import SearchRequest

    return SearchRequest(query=query, **extra)


def _search_loop(kb: Any, reps: int, floor: bool = False) -> dict[str, Any]:
    """Wall time of each search of the mix, ``reps`` times over.

    With ``floor``, each round of the mix is preceded by the mix's questions
    embedded alone, each timed on its own (``"embed"``): the floor a search
    cannot go under, sampled as often as the searches and within the same
    second, so a machine that slows down for a while slows both sides of the
    ratio alike.
    """
    by_shape: dict[str, list[float]] = {}
    by_query: dict[str, list[float]] = {}
    embeds: list[float] = []
    for _ in range(reps):
        if floor:
            embeds += _embed_round(kb)
        for shape, query, extra in QUERY_MIX:
            request = _request(query, extra)
            t0 = time.perf_counter()
            kb.search(request)
            dt = time.perf_counter() - t0
            by_shape.setdefault(shape, []).append(dt)
            by_query.setdefault(query, []).append(dt)
    return {"shape": by_shape, "query": by_query, "embed": embeds}


def _embed_round(kb: Any) -> list[float]:
    """Each question of the mix embedded alone, and the wall time each took."""
    times = []
    for _shape, query, _extra in QUERY_MIX:
        t0 = time.perf_counter()
        kb.embedder.embed_query(query)
        times.append(time.perf_counter() - t0)
    return times


def child_search(kb_dir: Path, reps: int, profile_out: Path | None) -> dict[str, Any]:
    """Resident, warm latency of the query mix; KNN; graph expansion; memory."""
    kb = open_kb(kb_dir)
    kb.embedder.embed_query("warm up the model")
    chunks = kb.store.stats().chunks
    rss_before = vm_kib("VmRSS")
    t0 = time.perf_counter()
    kb.search(_request("first query loads the resident index", {}))
    first = time.perf_counter() - t0
    rss_after = vm_kib("VmRSS")
    _search_loop(kb, 1)  # warm: masks, page cache, spans cache for nothing in particular
    if profile_out is not None:
        prof = cProfile.Profile()
        prof.enable()
        samples = _search_loop(kb, reps, floor=True)
        prof.disable()
        _write_profile(prof, profile_out)
    else:
        samples = _search_loop(kb, reps, floor=True)
    every = [t for ts in samples["shape"].values() for t in ts]
    out: dict[str, Any] = {
        "chunks": chunks,
        "search_samples": len(every),
        "search_p50_ms": _ms(statistics.median(every)),
        "search_p95_ms": _ms(percentile(every, 0.95)),
        "search_max_ms": _ms(max(every)),
        "search_min_ms": _ms(min(every)),
        "search_p50_ms_by_shape": {s: _ms(statistics.median(ts)) for s, ts in samples["shape"].items()},
        "http_query_inprocess_p50_ms": _ms(statistics.median(samples["query"][HTTP_QUERY])),
        "first_search_ms": _ms(first),
        "query_embed_p50_ms": _ms(statistics.median(samples["embed"])),
        **_cpu_ms(kb, max(reps, 2)),
        "index_memory_mb": round((rss_after - rss_before) / 1024, 1),
        "raw_embedding_mb": round(chunks * DIM * 4 / 2**20, 1),
    }
    out["index_memory_ratio"] = round(out["index_memory_mb"] / max(out["raw_embedding_mb"], 1e-9), 2)
    out["rss_before_index_mb"] = round(rss_before / 1024, 1)
    out["peak_rss_search_only_mb"] = round(vm_kib("VmHWM") / 1024, 1)
    out.update(_knn(kb))
    out["rss_after_graph_mb"] = round(vm_kib("VmRSS") / 1024, 1)
    out["peak_rss_mb"] = round(vm_kib("VmHWM") / 1024, 1)
    kb.close()
    return out


def open_kb_with_storage(kb_dir: Path, storage: str) -> Any:
    """``open_kb`` with ``[search.vectors] storage`` set (the defaults otherwise)."""
    from groove.embedders import get_embedder
    from groove.kb import KnowledgeBase

    config = load_bench_config(kb_dir)
    vectors = config.search.vectors.model_copy(update={"storage": storage})
    config = config.model_copy(update={"search": config.search.model_copy(update={"vectors": vectors})})
    return KnowledgeBase(config, embedder=get_embedder(config.model))


def _recall_at_10(vectors: Any, queries: Any, allowed: Any, n: int) -> tuple[float, list[float],
                                                                            list[float]]:
    """recall@10 of ``top_n(q, n)``'s first ten against the exact scan's; and both timings."""
    hits, approx_t, exact_t = 0, [], []
    for q in queries:
        t0 = time.perf_counter()
        got = vectors.top_n(q, n, allowed)[:10]
        approx_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        want = vectors.exact_top_n(q, n, allowed)[:10]
        exact_t.append(time.perf_counter() - t0)
        hits += len({c for c, _ in got} & {c for c, _ in want})
    return round(hits / (10 * len(queries)), 4), approx_t, exact_t


def child_scale(kb_dir: Path, storage: str, reps: int, ann_timeout: float) -> dict[str, Any]:
    """The million-chunk measurement (docs/scaling.md): load, approximate index, latency, recall.

    The approximate index is built (or loaded from beside the database) in the
    background from the first search on; ``ann_ready_s`` is the time from that
    first search until it holds every chunk.
    """
    import numpy as np
    from kbcache import clustered_queries

    from groove.search.filters import ChunkFilter

    kb = open_kb_with_storage(kb_dir, storage)
    kb.embedder.embed_query("warm up the model")
    chunks = kb.store.stats().chunks
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM from here on
    rss_before = vm_kib("VmRSS")
    t0 = time.perf_counter()
    kb.search(_request("first query loads the resident index", {}))
    first = time.perf_counter() - t0
    vectors = kb._vectors
    ann_loaded_from_disk = vectors.ann_size == len(vectors)
    ready = vectors.wait_for_ann(ann_timeout)
    ann_ready_s = time.perf_counter() - t0 - first
    rss_ready = vm_kib("VmRSS")
    out: dict[str, Any] = {
        "chunks": chunks, "storage": storage, "uses_ann": vectors.uses_ann,
        "first_search_ms": _ms(first), "ann_ready": ready,
        "ann_ready_s": round(ann_ready_s, 1), "ann_loaded_from_disk": ann_loaded_from_disk,
        "ann_nprobe": kb.config.search.vectors.ann_nprobe,
        "ann_oversample": kb.config.search.vectors.ann_oversample,
    }
    _search_loop(kb, 1)
    samples = _search_loop(kb, reps, floor=True)
    every = [t for ts in samples["shape"].values() for t in ts]
    out.update({
        "search_samples": len(every),
        "search_p50_ms": _ms(statistics.median(every)),
        "search_p95_ms": _ms(percentile(every, 0.95)),
        "search_p50_ms_by_shape": {s: _ms(statistics.median(ts)) for s, ts in samples["shape"].items()},
        "query_embed_p50_ms": _ms(statistics.median(samples["embed"])),
        **_cpu_ms(kb, max(reps, 2)),
    })
    out["search_to_embed_ratio"] = round(out["search_p50_ms"] / out["query_embed_p50_ms"], 2)
    queries = clustered_queries(100)
    everything = np.ones(len(vectors), dtype=bool)
    broad = vectors.mask(ChunkFilter(category="engineering"))  # about a fifth of the chunks
    # n=50 is what a search with limit 10 asks the vector leg for.
    for label, allowed, n in (("all", everything, 10), ("all", everything, 50),
                              ("category_filter", broad, 50)):
        recall, approx_t, exact_t = _recall_at_10(vectors, queries, allowed, n)
        out[f"recall_at_10_{label}_n{n}"] = recall
        out[f"vector_leg_p50_ms_{label}_n{n}"] = _ms(statistics.median(approx_t))
        out[f"exact_scan_p50_ms_{label}_n{n}"] = _ms(statistics.median(exact_t))
    out["recall_queries"] = len(queries)
    out["category_filter_share"] = round(float(broad.mean()), 3)
    out["index_memory_mb"] = round((rss_ready - rss_before) / 1024, 1)
    out["raw_embedding_mb"] = round(chunks * DIM * 4 / 2**20, 1)
    out["index_memory_ratio"] = round(out["index_memory_mb"] / max(out["raw_embedding_mb"], 1e-9), 2)
    out["resident_matrix_mb"] = round(vectors.matrix.nbytes / 2**20, 1)
    out["rss_before_index_mb"] = round(rss_before / 1024, 1)
    out["peak_rss_mb"] = round(vm_kib("VmHWM") / 1024, 1)
    out["peak_rss_over_raw"] = round((vm_kib("VmHWM") - rss_before) / 1024
                                     / max(out["raw_embedding_mb"], 1e-9), 2)
    kb.close()
    return out


def _cpu_ms(kb: Any, reps: int) -> dict[str, float]:
    """Process CPU time per search and per query embedding alone, every thread counted.

    Steadier than wall time on a shared machine, and it sees work a search
    leaves behind (a thread spinning after the search returned): the loop is
    followed by a 0.3 s pause whose CPU time is counted too.
    """
    c0 = time.process_time()
    _search_loop(kb, reps)
    time.sleep(0.3)
    searches = (time.process_time() - c0) / (reps * len(QUERY_MIX))
    c0 = time.process_time()
    for _ in range(reps):
        _embed_round(kb)
    embeds = (time.process_time() - c0) / (reps * len(QUERY_MIX))
    return {"search_cpu_ms": _ms(searches), "query_embed_cpu_ms": _ms(embeds),
            "search_cpu_over_embed_cpu": round(searches / max(embeds, 1e-9), 2)}


def _knn(kb: Any) -> dict[str, Any]:
    """One KNN over every chunk (the resident matrix, as search and graph use it)."""
    import numpy as np

    from groove.graph import connection_graph

    vectors = kb._vectors  # the facade's resident VectorIndex, loaded by the searches above
    allowed = np.ones(len(vectors), dtype=bool)
    rng = np.random.default_rng(5)
    picks = rng.choice(len(vectors), size=min(50, len(vectors)), replace=False)
    times = []
    for row in picks:
        query = vectors.matrix.vectors(np.array([row]))[0]
        t0 = time.perf_counter()
        vectors.top_n(query, 25, allowed)
        times.append(time.perf_counter() - t0)
    docs = kb.store.list_documents()
    graph_times, knn_queries = [], []
    connection_graph(kb, start=docs[0].path, depth=1, fan_out=5)  # builds the graph snapshot
    for doc in docs[1:11]:
        t0 = time.perf_counter()
        graph = connection_graph(kb, start=doc.path, depth=1, fan_out=5)
        graph_times.append(time.perf_counter() - t0)
        knn_queries.append(graph.get("stats", {}).get("knn_queries"))
    return {
        "knn_ms": _ms(statistics.median(times)),
        "knn_max_ms": _ms(max(times)),
        "knn_min_ms": _ms(min(times)),
        "graph_depth1_ms": _ms(statistics.median(graph_times)),
        "graph_depth1_knn_queries": knn_queries[0],
    }


def _write_profile(prof: cProfile.Profile, path: Path) -> None:
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("cumulative").print_stats(40)
    stats.sort_stats("tottime").print_stats(30)
    path.write_text(buf.getvalue())


def calibration() -> dict[str, float]:
    """Fixed reference work, to tell a slow groove from a busy machine.

    On an idle 2-core machine of this kind the 50k x 384 float32 mat-vec takes
    about 2.5 ms (shared/NOTES.md); the ratio to that is the contention factor.
    """
    import numpy as np

    matrix = np.random.default_rng(0).standard_normal((50_000, DIM), dtype=np.float32)
    query = matrix[0].copy()
    mv = []
    for _ in range(30):
        t0 = time.perf_counter()
        matrix @ query
        mv.append(time.perf_counter() - t0)
    py = []
    for _ in range(5):
        t0 = time.perf_counter()
        sum(i * i for i in range(200_000))
        py.append(time.perf_counter() - t0)
    return {"matvec_50k_p50_ms": _ms(statistics.median(mv)), "matvec_50k_min_ms": _ms(min(mv)),
            "python_loop_200k_p50_ms": _ms(statistics.median(py))}


def child_noop(kb_dir: Path) -> dict[str, Any]:
    """A fresh process, a fresh KnowledgeBase, ``index()`` over unchanged files."""
    from groove.kb import KnowledgeBase

    config = load_bench_config(kb_dir)
    t0 = time.perf_counter()
    kb = KnowledgeBase(config)  # model loaded by the run itself, as the CLI does
    summary = kb.index()
    elapsed = time.perf_counter() - t0
    kb.close()
    return {"index_noop_s": round(elapsed, 3), "summary": summary.to_json(),
            "peak_rss_mb": round(vm_kib("VmHWM") / 1024, 1)}


def child_fts(kb_dir: Path) -> dict[str, Any]:
    """The worst-case full-text query: 32 phrases (the cap), common corpus words."""
    from groove.search.query import parse_query

    kb = open_kb(kb_dir)
    parsed = parse_query(WORST_FTS_QUERY)
    times, hits = [], 0
    for _ in range(6):
        t0 = time.perf_counter()
        hits = len(kb.store.fulltext_search(parsed.fulltext_phrases, limit=50))
        times.append(time.perf_counter() - t0)
    request = _request(WORST_FTS_QUERY, {})
    kb.search(request)
    search_times = []
    for _ in range(5):
        t0 = time.perf_counter()
        kb.search(request)
        search_times.append(time.perf_counter() - t0)
    rows = kb.store.stats().chunks
    kb.close()
    return {"rows": rows, "phrases": len(parsed.phrases), "capped": parsed.capped,
            "fts_worst_ms": _ms(statistics.median(times[1:])), "fts_worst_max_ms": _ms(max(times)),
            "fts_worst_limit": 50, "fts_worst_hits": hits,
            "search_with_worst_query_p50_ms": _ms(statistics.median(search_times))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["search", "noop", "fts", "calibrate", "scale"])
    parser.add_argument("kb_dir", type=Path)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--profile", type=Path, default=None)
    parser.add_argument("--storage", default="float32")
    parser.add_argument("--ann-timeout", type=float, default=3600)
    args = parser.parse_args()
    import logging

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if args.kind == "search":
        result = child_search(args.kb_dir, args.reps, args.profile)
    elif args.kind == "scale":
        result = child_scale(args.kb_dir, args.storage, args.reps, args.ann_timeout)
    elif args.kind == "noop":
        result = child_noop(args.kb_dir)
    elif args.kind == "fts":
        result = child_fts(args.kb_dir)
    else:
        result = calibration()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
