"""Local vs Ray indexing throughput on the same cores, in one run (docs/scaling.md).

``python benchmarks/ray_bench.py --sections 120 --rounds 2 --out FILE``
``python benchmarks/ray_bench.py --two-nodes --sections 40 --rounds 1 --out FILE``

The same realistic-length corpus (``realistic.py``: sections of 150-400
tokens) is indexed from scratch, alternating a local build and a ``--ray``
build on a local single-node Ray cluster with one actor per core, ``rounds``
times each. The cluster is started once before the first round (its start is
reported separately); each Ray build includes creating its actors and loading
the model in them, as a real run pays. ``--two-nodes`` runs the Ray builds on
a two-node cluster instead (``ray.cluster_utils.Cluster``: a head and a second
raylet on this machine, one CPU each, everything on 127.0.0.1), and reports how
many embedding parts each node ran. ``*_per_core`` divides by the cores the
build used (the machine's cores for local, one per actor for Ray). Reported per build: wall time,
chunks/s and tokens/s (tokens as the embedder counts them); then the median
ratio Ray / local. The machine is shared, so only same-run ratios mean much.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import write_corpus  # noqa: E402
from realistic import generate_realistic  # noqa: E402


def build(kb_dir: Path, ray: bool, address: str = "local") -> dict[str, Any]:
    import logging

    from groove.config import load_config
    from groove.indexing import ray_executor
    from groove.kb import KnowledgeBase

    overrides = {"index": {"executor": "ray", "ray_address": address}} if ray else None
    config = load_config(kb_path=kb_dir, cwd=kb_dir, overrides=overrides)
    kb = KnowledgeBase(config)
    kb.embedder.embed_query("load the local model before timing")
    per_node: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: per_node.append(record.getMessage())  # type: ignore[method-assign]
    ray_executor.log.addHandler(handler)
    ray_executor.log.setLevel(logging.INFO)
    t0 = time.perf_counter()
    try:
        summary = kb.index()
    finally:
        ray_executor.log.removeHandler(handler)
    wall = time.perf_counter() - t0
    kb.close()
    cores = (config.index.ray_actors or _ray_cpus()) if ray else (os.cpu_count() or 1)
    return {"executor": "ray" if ray else "local", "wall_s": round(wall, 2), "cores": cores,
            "tokens_per_s_per_core": round(summary.tokens_embedded / wall / cores, 1),
            "parts_by_node": [m for m in per_node if m.startswith("Ray embedded")],
            "chunks": summary.chunks_embedded, "tokens": summary.tokens_embedded,
            "chunks_per_s": round(summary.chunks_embedded / wall, 2),
            "tokens_per_s": round(summary.tokens_embedded / wall, 1),
            "embed_pass_tokens_per_s": round(summary.tokens_per_s, 1)}


def _ray_cpus() -> int:
    import ray

    return int(ray.cluster_resources().get("CPU", 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--two-nodes", action="store_true",
                        help="Ray builds on a two-node cluster on this machine (one CPU each)")
    args = parser.parse_args()
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_worker_niceness", "0")
    import ray

    from groove.indexing.ray_executor import connect

    work = Path(tempfile.mkdtemp(prefix="groove-ray-bench-"))
    docs = list(generate_realistic(args.sections))
    t0 = time.perf_counter()
    cluster = None
    address = "local"
    if args.two_nodes:
        from ray.cluster_utils import Cluster

        cluster = Cluster(initialize_head=True,
                          head_node_args={"num_cpus": 1, "include_dashboard": False})
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        address = cluster.address
        ray.init(address=address, log_to_driver=False)
    else:
        connect("local")
    cluster_start = time.perf_counter() - t0
    runs = []
    try:
        for r in range(args.rounds):
            for use_ray in (False, True):
                kb_dir = work / f"r{r}-{'ray' if use_ray else 'local'}"
                write_corpus(kb_dir, docs)
                runs.append(build(kb_dir, use_ray, address))
                print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
                shutil.rmtree(kb_dir)
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    local = [r for r in runs if r["executor"] == "local"]
    on_ray = [r for r in runs if r["executor"] == "ray"]
    ratios = [b["tokens_per_s"] / a["tokens_per_s"] for a, b in zip(local, on_ray, strict=True)]
    out = {
        "cpus": os.cpu_count(), "loadavg_1m": os.getloadavg()[0], "sections": args.sections,
        "ray_actors": "one per core", "ray_cluster_start_s": round(cluster_start, 2),
        "ray_nodes": 2 if args.two_nodes else 1,
        "runs": runs,
        "local_tokens_per_s_median": statistics.median(r["tokens_per_s"] for r in local),
        "ray_tokens_per_s_median": statistics.median(r["tokens_per_s"] for r in on_ray),
        "local_chunks_per_s_median": statistics.median(r["chunks_per_s"] for r in local),
        "ray_chunks_per_s_median": statistics.median(r["chunks_per_s"] for r in on_ray),
        "ray_over_local_per_round": [round(x, 3) for x in ratios],
        "ray_over_local_median": round(statistics.median(ratios), 3),
        "per_core_ray_over_local": [
            round(b["tokens_per_s_per_core"] / a["tokens_per_s_per_core"], 3)
            for a, b in zip(local, on_ray, strict=True)],
        "target": ">= 0.9",
    }
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
