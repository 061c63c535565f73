"""Ablation of the search-quality changes on both evaluation sets.

    python benchmarks/ablation.py [--dev ../shared/eval] [--out benchmarks/ablation.json]
                                  [--sets fixture,dev] [--sweep] [--rows language|quality]

``--rows language`` (the default) measures the cross-language, diversity and
answerability changes (per-script vector leg with its offset, imputed
full-text scores, the same-document margin, translations ranked behind their
sections, codes first, the new low_confidence rule), each
alone on top of "before" and all together, on the contextual + folded index,
with same-language recall@1 / MRR (queries whose id does not start ``x-``) next
to the cross-language figures. ``--rows quality`` is the earlier table below
(with the later changes switched off, so its rows stay comparable).

For each set (the quality fixture ``tests/fixtures/quality_kb`` with
``tests/fixtures/quality_unanswerable.yml``, and the bilingual dev set), each
change is measured alone on top of the old baseline and all of them together:

* index-side: contextual embedding, stub folding — one index per combination,
  built once into ``benchmarks/.cache/ablation/`` (keyed by the set, the
  combination and a hash of the indexing source) and reused;
* search-side: convex fusion, the per-document cap, the low_confidence rule —
  run against the same cached index.

Embeddings are cached by text across the index builds (contextual and plain
text differ, folded chunks mostly do not), so only new texts reach the model.
Every run goes through ``groove eval`` (``run_eval``) with no history, and the
table reports recall@1, MRR, nDCG@5, two-answer recall@5, cross-language
recall@5 and the low_confidence rates on answerable / unanswerable questions.
``--sweep`` also prints the vector_weight and max_chunks_per_document sweeps
used to choose the defaults.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import shutil
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = HERE / ".cache" / "ablation"
sys.path.insert(0, str(HERE))

from kbcache import source_hash  # noqa: E402

from groove.config import load_config  # noqa: E402
from groove.embedders import get_embedder  # noqa: E402
from groove.embedders.base import Embedder  # noqa: E402
from groove.evaluation import run_eval  # noqa: E402
from groove.indexing import chunking  # noqa: E402
from groove.kb import KnowledgeBase  # noqa: E402
from groove.search.request import SearchRequest  # noqa: E402

#: Row marker: low_confidence from leg agreement alone (the rule before the lift and top gap).
AGREEMENT_RULE = AGREEMENT_RULE_KEY = "_agreement_only_low_confidence"
#: Row marker: codes in the question (PG-E311, P2) do not reorder hits (the rule before them).
NO_CODES = "_codes_ignored"

COLUMNS = (("recall@1", "recall@1"), ("mrr", "MRR"), ("ndcg@5", "nDCG@5"),
           ("same_language_recall@1", "same-language recall@1"),
           ("same_language_mrr", "same-language MRR"),
           ("multi_recall@5", "two-answer recall@5"),
           ("cross_language_recall@1", "cross-language recall@1"),
           ("cross_language_recall@5", "cross-language recall@5"),
           ("low_confidence_rate", "low_conf answerable"),
           ("unanswerable_low_confidence_rate", "low_conf unanswerable"))


class CachingEmbedder(Embedder):
    """Delegates to the real model; remembers every vector by its exact text."""

    def __init__(self, inner: Embedder, store: Path) -> None:
        self.inner, self.store = inner, store
        self.model_id, self.dim = inner.model_id, inner.dim
        self.max_input_tokens = inner.max_input_tokens
        self.cache: dict[str, np.ndarray] = {}
        if store.is_file():
            data = np.load(store, allow_pickle=False)
            self.cache = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))

    def _key(self, kind: str, text: str) -> str:
        return hashlib.sha256(f"{kind}\0{text}".encode()).hexdigest()

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        keys = [self._key("p", t) for t in texts]
        missing = [t for t, k in zip(texts, keys, strict=True) if k not in self.cache]
        if missing:
            for t, v in zip(missing, self.inner.embed_passages(missing), strict=True):
                self.cache[self._key("p", t)] = v
        return np.stack([self.cache[k] for k in keys]) if keys else np.zeros((0, self.dim), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        key = self._key("q", text)
        if key not in self.cache:
            self.cache[key] = self.inner.embed_query(text)
        return self.cache[key]

    def token_count(self, text: str) -> int:
        return self.inner.token_count(text)

    def save(self) -> None:
        self.store.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self.cache)
        tmp = self.store.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), vectors=np.stack([self.cache[k] for k in keys]))
        tmp.replace(self.store)


def _tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def open_index(name: str, source: Path, *, contextual: bool, fold: bool,
               embedder: CachingEmbedder) -> KnowledgeBase:
    """The cached index of ``source`` built with this combination (built on first use)."""
    tag = f"{'ctx' if contextual else 'plain'}-{'fold' if fold else 'nofold'}"
    folder = CACHE / f"{name}-{tag}-{_tree_digest(source)}-{source_hash()}"
    kb_path = folder / "kb"
    overrides = {"contextual": {"enabled": contextual}}
    if not (folder / "done").is_file():
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(source, kb_path)
        kb = KnowledgeBase(load_config(kb_path=kb_path, cwd=folder, overrides=overrides),
                           embedder=embedder)
        chunker = functools.partial(chunking.chunk_document, fold_stubs=fold)
        with mock.patch.object(chunking, "chunk_document", chunker):
            kb.index()
        embedder.save()
        (folder / "done").write_text("ok\n")
        kb.close()
    return KnowledgeBase(load_config(kb_path=kb_path, cwd=folder, overrides=overrides),
                         embedder=embedder)


def deep(*layers: dict[str, Any]) -> dict[str, Any]:
    """The ``[search]`` override layers merged left to right, tables merged key by key."""
    out: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            out[key] = deep(out[key], value) if isinstance(value, dict) and isinstance(
                out.get(key), dict) else value
    return out


def evaluate(kb: KnowledgeBase, golden: Path, unanswerable: Path, search: dict[str, Any],
             request: dict[str, Any]) -> dict[str, float]:
    """One ``groove eval`` run with ``[search]`` overrides and per-call request fields."""
    from groove.config.model import SearchConfig
    from groove.search import confidence

    search = dict(search)
    old = search.pop(OLD_RULE, False)
    agreement_only = search.pop(AGREEMENT_RULE, False)
    no_codes = search.pop(NO_CODES, False)
    merged = deep(kb.config.search.model_dump(by_alias=True), search)
    config = kb.config.model_copy(update={"search": SearchConfig.model_validate(merged)})
    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(kb, "config", config))
        if no_codes:
            from groove.search.query import ParsedQuery

            stack.enter_context(mock.patch.object(ParsedQuery, "codes", property(lambda _: ())))
        if agreement_only:
            stack.enter_context(mock.patch.object(
                confidence, "weak_evidence", lambda evidence: evidence.legs_disagree))
        if old:
            real_search = kb.search

            def search_with_old_rule(request: SearchRequest) -> Any:
                response = real_search(request)
                response.low_confidence = old_rule([h.score for h in response.results])
                return response

            stack.enter_context(mock.patch.object(kb, "search", search_with_old_rule))
        report = run_eval(kb, SearchRequest(query="", **request), golden_path=golden,
                          unanswerable_path=unanswerable, record_history=False)
    metrics = dict(report.metrics)
    same = [q for q in report.queries if not q.cross_language]
    if same:
        metrics["same_language_recall@1"] = sum(q.metrics["recall@1"] for q in same) / len(same)
        metrics["same_language_mrr"] = sum(q.metrics["mrr"] for q in same) / len(same)
    return {key: round(metrics[key], 3) for key, _ in COLUMNS if key in metrics}


def sets(dev: Path) -> dict[str, tuple[Path, Path, Path]]:
    out = {"fixture": (ROOT / "tests/fixtures/quality_kb",
                       ROOT / "tests/fixtures/quality_kb/.groove-eval.yml",
                       ROOT / "tests/fixtures/quality_unanswerable.yml")}
    if (dev / "kb").is_dir():
        out["dev"] = (dev / "kb", dev / "golden.yml", dev / "unanswerable.yml")
    return out


#: (row label, contextual, fold, [search] overrides, request fields)
#: The cross-language, margin and answerability changes off: what main did before them.
BEFORE_LANGUAGE = {"fusion": {"cross_language_offset": 0.0, "cross_language_imputation": 0.0,
                              "translation_ratio": 0.0},
                   "document_margin": 0.0, AGREEMENT_RULE_KEY: True, NO_CODES: True}
OLD = deep(BEFORE_LANGUAGE, {"fusion": {"method": "rrf"}, "max_chunks_per_document": 0})


def rows(defaults: dict[str, Any], old_confidence: dict[str, Any], new_confidence: dict[str, Any]
         ) -> list[tuple[str, bool, bool, dict[str, Any], dict[str, Any]]]:
    convex = {"fusion": {"method": "convex", "vector_weight": defaults["vector_weight"]}}
    cap = {"max_chunks_per_document": defaults["max_chunks_per_document"] or 2}
    default_cap = {"max_chunks_per_document": defaults["max_chunks_per_document"]}
    return [
        ("baseline (before)", False, False, deep(OLD, old_confidence), {}),
        ("+ contextual embedding", True, False, deep(OLD, old_confidence), {}),
        ("+ stub folding", False, True, deep(OLD, old_confidence), {}),
        ("+ convex fusion", False, False, deep(OLD, convex, old_confidence), {}),
        (f"+ per-document cap ({cap['max_chunks_per_document']})", False, False,
         deep(OLD, cap, old_confidence), {}),
        ("+ new low_confidence", False, False, deep(OLD, new_confidence), {}),
        ("all together (defaults)", True, True, deep(OLD, convex, default_cap, new_confidence), {}),
    ]


def language_rows(defaults: dict[str, Any]
                  ) -> list[tuple[str, bool, bool, dict[str, Any], dict[str, Any]]]:
    """The cross-language, diversity and answerability changes, alone and together."""
    offset, imputation = defaults["cross_language_offset"], defaults["cross_language_imputation"]
    margin = defaults["document_margin"]
    translation = defaults["translation_ratio"]
    before = BEFORE_LANGUAGE
    return [
        ("before (convex, agreement-only low_confidence)", True, True, before, {}),
        (f"+ imputed full-text score (g={imputation:g})", True, True,
         deep(before, {"fusion": {"cross_language_imputation": imputation}}), {}),
        (f"+ per-script vector leg, offset {offset:g}", True, True,
         deep(before, {"fusion": {"cross_language_offset": offset}}), {}),
        ("+ both (language-aware fusion)", True, True,
         deep(before, {"fusion": {"cross_language_offset": offset,
                                  "cross_language_imputation": imputation}}), {}),
        (f"+ same-document margin {margin:g}", True, True,
         deep(before, {"document_margin": margin}), {}),
        (f"+ translations behind their sections (ratio {translation:g})", True, True,
         deep(before, {"fusion": {"translation_ratio": translation}}), {}),
        ("+ codes first (PG-E311, P2)", True, True,
         {k: v for k, v in before.items() if k != NO_CODES}, {}),
        ("+ new low_confidence rule", True, True,
         {k: v for k, v in before.items() if k != AGREEMENT_RULE_KEY}, {}),
        ("all together (defaults)", True, True, {}, {}),
    ]


def markdown(results: dict[str, list[tuple[str, dict[str, float]]]]) -> str:
    lines = []
    for name, table in results.items():
        lines.append(f"\n{name}\n")
        lines.append("| | " + " | ".join(label for _, label in COLUMNS) + " |")
        lines.append("| --- " * (len(COLUMNS) + 1) + "|")
        for label, metrics in table:
            cells = [f"{metrics[k]:.3f}" if k in metrics else "–" for k, _ in COLUMNS]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dev", type=Path, default=ROOT.parent / "shared" / "eval")
    parser.add_argument("--sets", default="fixture,dev")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--rows", choices=("language", "quality"), default="language",
                        help="language: the cross-language/diversity/answerability rows; "
                             "quality: the earlier contextual/folding/fusion/cap rows")
    args = parser.parse_args()
    from groove.config.model import FusionConfig, SearchConfig

    defaults = {"vector_weight": FusionConfig().vector_weight,
                "max_chunks_per_document": SearchConfig().max_chunks_per_document,
                "cross_language_offset": FusionConfig().cross_language_offset,
                "cross_language_imputation": FusionConfig().cross_language_imputation,
                "document_margin": SearchConfig().document_margin,
                "translation_ratio": FusionConfig().translation_ratio}
    old_conf, new_conf = confidence_settings()
    real = get_embedder("multilingual-e5-small")
    embedder = CachingEmbedder(real, CACHE / "embeddings.npz")
    results: dict[str, list[tuple[str, dict[str, float]]]] = {}
    sweeps: dict[str, Any] = {}
    for name, (source, golden, unanswerable) in sets(args.dev).items():
        if name not in args.sets.split(","):
            continue
        table = []
        table_rows = (language_rows(defaults) if args.rows == "language"
                      else rows(defaults, old_conf, new_conf))
        for label, ctx, fold, search, request in table_rows:
            kb = open_index(name, source, contextual=ctx, fold=fold, embedder=embedder)
            table.append((label, evaluate(kb, golden, unanswerable, search, request)))
            kb.close()
            print(label, table[-1][1], file=sys.stderr)
        results[name] = table
        if args.sweep and args.rows == "language":
            kb = open_index(name, source, contextual=True, fold=True, embedder=embedder)
            sweeps[name] = {
                **{f"offset={o} imputation={g}": evaluate(
                    kb, golden, unanswerable,
                    {"fusion": {"cross_language_offset": o, "cross_language_imputation": g}}, {})
                   for o in (0.0, 0.03, 0.04, 0.05, 0.06) for g in (0.0, 0.5, 1.0)},
                **{f"document_margin={m}": evaluate(kb, golden, unanswerable,
                                                    {"document_margin": m}, {})
                   for m in (0.0, 0.1, 0.2, 0.3, 0.5)},
            }
            kb.close()
            print(json.dumps(sweeps[name], indent=1), file=sys.stderr)
        elif args.sweep:
            kb = open_index(name, source, contextual=True, fold=True, embedder=embedder)
            sweeps[name] = {
                "rrf": evaluate(kb, golden, unanswerable, {"fusion": {"method": "rrf"}}, {}),
                **{f"convex w={w}": evaluate(kb, golden, unanswerable,
                                             {"fusion": {"method": "convex", "vector_weight": w}}, {})
                   for w in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)},
                **{f"cap={c}": evaluate(kb, golden, unanswerable,
                                        {"max_chunks_per_document": c}, {}) for c in (0, 1, 2, 3)},
            }
            kb.close()
            print(json.dumps(sweeps[name], indent=1), file=sys.stderr)
    embedder.save()
    print(markdown(results))
    if args.out:
        args.out.write_text(json.dumps({"ablation": results, "sweeps": sweeps}, indent=1,
                                       ensure_ascii=False) + "\n")


def confidence_settings() -> tuple[dict[str, Any], dict[str, Any]]:
    """Row settings selecting the old low_confidence rule and the new one."""
    return {OLD_RULE: True}, {}


#: Row marker: recompute low_confidence with the old max/mean < 1.5 rule.
OLD_RULE = "_old_low_confidence"


def old_rule(scores: list[float], ratio: float = 1.5) -> bool:
    """The rule before this change: >= 2 results, mean > 0 and max/mean < ratio."""
    if len(scores) < 2:
        return False
    mean = sum(scores) / len(scores)
    return mean > 0 and max(scores) / mean < ratio


if __name__ == "__main__":
    main()
