"""How the collections merge ranks: each set's questions over two collections and alone.

    python benchmarks/collections_merge.py [--out benchmarks/collections_merge.json]

Two collections are built from the evaluation sets (benchmarks/quality.py):
``ferry`` (Markdown, English and Japanese) and ``rust-book``. Every golden
question of each set is asked (``limit`` 10, the defaults) of its own
collection alone and of both collections merged (groove/collections.py), and
recall@1 / recall@5 / MRR are reported for both, per set. The answer to each
question is in one collection only, so a merge that ranks well gives the same
figures as the collection alone.

Each collection's answer is computed once per question; the merge is then
replayed with each signal (the best cosine, the default; the lift, used when
the collections' models differ) at several sharpness values, on the raw scores
and as an interleave by rank, so the chosen rule is shown beside the
alternatives. ``same_top5_share`` is the share of questions whose first five
merged hits are exactly the collection's own first five.
docs/collections.md quotes the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ablation import CachingEmbedder  # noqa: E402
from quality import CACHE, LIMIT, _scores, eval_sets, open_kb  # noqa: E402

from groove.collections import COSINE_SHARPNESS, LIFT_SHARPNESS, merge_answers  # noqa: E402
from groove.embedders import get_embedder  # noqa: E402
from groove.evaluation.golden import load_golden  # noqa: E402
from groove.evaluation.metrics import expected_ranks  # noqa: E402
from groove.models import Hit, SearchResponse  # noqa: E402
from groove.search.request import SearchRequest  # noqa: E402

SETS = ("ferry", "rust-book")
SIGNALS = {"lift": (1.0, 2.0, 4.0), "top_cosine": (10.0, 20.0, 40.0, 80.0, 160.0)}


def _copy(response: SearchResponse) -> SearchResponse:
    """A fresh answer to merge (the merge relabels and rescales its hits in place)."""
    hits = [Hit(**{k: getattr(h, k) for k in Hit.__dataclass_fields__}) for h in response.results]
    return SearchResponse(results=hits, low_confidence=response.low_confidence,
                          filter_applied=response.filter_applied, lift=response.lift,
                          top_cosine=response.top_cosine)


def _ranking(hits: Sequence[Hit], own: str) -> list[tuple[str, str | None]]:
    """(path, heading) per hit; another collection's hit can never match an expected section."""
    return [(h.path if h.collection in (None, own) else f"{h.collection}:{h.path}", h.heading)
            for h in hits]


def _interleave(answers: Sequence[tuple[str, SearchResponse]], limit: int) -> list[Hit]:
    """Round robin by rank, collections in order (the rank-only alternative)."""
    out: list[Hit] = []
    for rank in range(limit):
        for name, answer in answers:
            if rank < len(answer.results):
                hit = answer.results[rank]
                hit.collection = name
                out.append(hit)
    return out[:limit]


def _summary(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(sum(r[key] for r in rows) / len(rows), 4)
            for key in ("recall@1", "recall@5", "mrr")}


def measure() -> dict[str, Any]:
    specs = eval_sets()
    embedder = CachingEmbedder(get_embedder("multilingual-e5-small"), CACHE / "embeddings.npz")
    kbs = {name: open_kb(specs[name], embedder, {}) for name in SETS}
    variants = ["raw score", "rank interleave"] + [
        f"{signal} {s:g}" for signal, values in SIGNALS.items() for s in values]
    result: dict[str, Any] = {"limit": LIMIT, "default": f"top_cosine {COSINE_SHARPNESS:g}",
                              "with_different_models": f"lift {LIFT_SHARPNESS:g}", "sets": {}}
    for own in SETS:
        alone: list[dict[str, float]] = []
        merged: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
        same_top5 = dict.fromkeys(variants, 0)
        questions = load_golden(specs[own].golden).queries
        for q in questions:
            request = SearchRequest(query=q.query, limit=LIMIT)
            answers = [(name, kbs[name].search(request, calibrate=True)) for name in SETS]
            mine = dict(answers)[own]
            alone.append(_scores(expected_ranks(_ranking(mine.results, own), q.expected)))
            top5 = [(h.path, h.chunk_id) for h in mine.results[:5]]
            for variant in variants:
                copies = [(name, _copy(a)) for name, a in answers]
                if variant == "rank interleave":
                    hits = _interleave(copies, LIMIT)
                elif variant == "raw score":
                    hits = merge_answers(copies, LIMIT, sharpness=0.0).results
                else:
                    signal, sharp = variant.split()
                    hits = merge_answers(copies, LIMIT, signal=signal,  # type: ignore[arg-type]
                                         sharpness=float(sharp)).results
                merged[variant].append(_scores(expected_ranks(_ranking(hits, own), q.expected)))
                same_top5[variant] += [(h.path, h.chunk_id) for h in hits[:5]
                                       if h.collection == own] == top5 and all(
                    h.collection == own for h in hits[:5])
        result["sets"][own] = {
            "questions": len(questions), "alone": _summary(alone),
            "merged": {v: {**_summary(rows), "same_top5_share": round(same_top5[v] / len(rows), 4)}
                       for v, rows in merged.items()}}
    embedder.save()
    for kb in kbs.values():
        kb.close()
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="Write the JSON here too.")
    args = parser.parse_args(argv)
    result = measure()
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
