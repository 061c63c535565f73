"""`groove tune`: sweep the fusion parameters over the golden set (docs/evaluation.md, 'Tuning').

The grid is both fusion methods with their own knob — RRF × ``rrf_k``, convex
× ``vector_weight`` (the knob the other method ignores stays at its default) —
plus convex × ``vector_weight`` × the cross-language offset and imputation, plus
the translation ratio at the default settings. The
bm25 column weights are not swept: the full-text leg indexes one field
(docs/search.md), so they change nothing and every such cell would tie. Choosing the best cell
on the same queries that score it would flatter the winner, so the choice is
judged by *nested leave-one-query-out* cross-validation: for every query, the
best cell is picked on the other n−1 queries and scored on the held-out one.
The mean of those held-out reciprocal ranks estimates what "tune, then use the
result" is worth; it is compared with the held-out (i.e. plain) MRR of the
current settings, which involve no selection at all.

Efficiency: each query is embedded once (a memoising wrapper around the
embedder is shared by every grid cell); every cell then runs the real
``kb.search`` with its own fusion settings, so tune measures exactly what
search would do. Nothing is written: the result is a paste-ready block.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from groove.embedders.base import Embedder
from groove.evaluation import (
    GoldenError,
    GoldenQuery,
    expected_ranks,
    load_golden,
    reciprocal_rank,
)
from groove.search.request import SearchRequest

if TYPE_CHECKING:
    from groove.config import Config
    from groove.kb import KnowledgeBase

log = logging.getLogger("groove.evaluation.tune")

RRF_K_VALUES = (10.0, 30.0, 60.0, 100.0)
#: The bm25 column weights stay at their defaults: the one-field full-text leg ignores them.
HEADING_WEIGHTS = (2.0,)
CONTEXT_WEIGHTS = (1.0,)
CONTENT_WEIGHTS = (1.0,)
VECTOR_WEIGHTS = (0.5, 0.7, 0.9)
#: The cross-language knobs (docs/search.md), swept with each convex vector_weight;
#: elsewhere they stay at their defaults.
CROSS_LANGUAGE_OFFSETS = (0.0, 0.04, 0.08)
CROSS_LANGUAGE_IMPUTATIONS = (0.0, 0.5, 1.0)
IDLE_CROSS_LANGUAGE_OFFSET = 0.0
IDLE_CROSS_LANGUAGE_IMPUTATION = 0.0
#: The translation ratio (docs/search.md, "Translations"), swept at the default
#: vector weight and cross-language settings; elsewhere it stays at its default.
TRANSLATION_RATIOS = (0.0, 0.7, 0.85, 1.0)
IDLE_TRANSLATION_RATIO = 0.85
#: The value of the knob a method ignores (rrf_k for convex, vector_weight for RRF).
IDLE_RRF_K = 60.0
IDLE_VECTOR_WEIGHT = 0.7
#: Search depth per query; a relevant hit deeper than this counts as reciprocal rank 0.
SEARCH_DEPTH = 10
#: The cross-validated MRR must beat the current settings by more than this to recommend a change.
MIN_GAIN = 0.01


@dataclass(frozen=True, order=True)
class FusionParams:
    rrf_k: float
    bm25_heading_weight: float
    bm25_context_weight: float
    bm25_content_weight: float
    method: str = "convex"
    vector_weight: float = IDLE_VECTOR_WEIGHT
    cross_language_offset: float = IDLE_CROSS_LANGUAGE_OFFSET
    cross_language_imputation: float = IDLE_CROSS_LANGUAGE_IMPUTATION
    translation_ratio: float = IDLE_TRANSLATION_RATIO

    def label(self) -> str:
        knob = (f"w={self.vector_weight:g}" if self.method == "convex"
                else f"rrf_k={self.rrf_k:g}")
        return (f"{self.method} {knob} heading={self.bm25_heading_weight:g} "
                f"context={self.bm25_context_weight:g} content={self.bm25_content_weight:g} "
                f"xl_offset={self.cross_language_offset:g} "
                f"xl_imputation={self.cross_language_imputation:g} "
                f"translation={self.translation_ratio:g}")

    def toml_block(self) -> str:
        return "\n".join([
            "[search.fusion]",
            f'method = "{self.method}"',
            f"vector_weight = {self.vector_weight:.2f}",
            f"rrf_k = {self.rrf_k:.1f}",
            f"bm25_heading_weight = {self.bm25_heading_weight:.1f}",
            f"bm25_context_weight = {self.bm25_context_weight:.1f}",
            f"bm25_content_weight = {self.bm25_content_weight:.1f}",
            f"cross_language_offset = {self.cross_language_offset:.2f}",
            f"cross_language_imputation = {self.cross_language_imputation:.2f}",
            f"translation_ratio = {self.translation_ratio:.2f}",
        ])


def default_grid() -> list[FusionParams]:
    rrf = [FusionParams(k, h, c, b, "rrf", IDLE_VECTOR_WEIGHT) for k, h, c, b in itertools.product(
        RRF_K_VALUES, HEADING_WEIGHTS, CONTEXT_WEIGHTS, CONTENT_WEIGHTS)]
    convex = [FusionParams(IDLE_RRF_K, h, c, b, "convex", w) for w, h, c, b in itertools.product(
        VECTOR_WEIGHTS, HEADING_WEIGHTS, CONTEXT_WEIGHTS, CONTENT_WEIGHTS)]
    default = FusionParams(IDLE_RRF_K, 2.0, 1.0, 1.0)
    language = [dataclasses.replace(default, vector_weight=w, cross_language_offset=o,
                                    cross_language_imputation=g)
                for w, o, g in itertools.product(VECTOR_WEIGHTS, CROSS_LANGUAGE_OFFSETS,
                                                 CROSS_LANGUAGE_IMPUTATIONS)]
    translation = [dataclasses.replace(default, translation_ratio=t) for t in TRANSLATION_RATIOS]
    return rrf + convex + [p for p in dict.fromkeys(language + translation) if p not in convex]


def params_of(config: Config) -> FusionParams:
    f = config.search.fusion
    return FusionParams(float(f.rrf_k), float(f.bm25_heading_weight),
                        float(f.bm25_context_weight), float(f.bm25_content_weight),
                        f.method, float(f.vector_weight), float(f.cross_language_offset),
                        float(f.cross_language_imputation), float(f.translation_ratio))


# --- the selection procedure (pure; unit-tested on hand-made scores) --------------


@dataclass
class CrossValidation:
    baseline: FusionParams
    baseline_mrr: float  # held-out MRR of the current settings (no selection involved)
    cv_mrr: float  # mean held-out reciprocal rank of "pick the best on the other queries"
    picks: Counter[FusionParams]  # how often each cell won an inner loop
    full_best: FusionParams  # the cell chosen on every query (what would be pasted)
    full_best_mrr: float


def _best(scores: dict[FusionParams, float], baseline: FusionParams, order: Sequence[FusionParams]) -> FusionParams:
    """Highest score; ties go to the baseline, then to grid order (deterministic)."""
    top = max(scores.values())
    if scores[baseline] >= top - 1e-12:
        return baseline
    return next(p for p in order if scores[p] >= top - 1e-12)


def nested_loqo(rr: Mapping[FusionParams, Sequence[float]], baseline: FusionParams) -> CrossValidation:
    """Leave-one-query-out over ``rr[cell][query]`` reciprocal ranks.

    The inner loop is a mean over the n−1 remaining queries (there is nothing
    else to fit), so it is computed from column sums rather than re-run.
    """
    if baseline not in rr:
        raise ValueError("the baseline must be one of the swept cells")
    order = list(rr)
    matrix = np.array([rr[p] for p in order], dtype=float)
    n = matrix.shape[1]
    if n < 2:
        raise GoldenError("tune needs at least 2 golden queries for leave-one-out cross-validation")
    totals = matrix.sum(axis=1)
    held: list[float] = []
    picks: Counter[FusionParams] = Counter()
    for i in range(n):
        inner = {p: (totals[row] - matrix[row, i]) / (n - 1) for row, p in enumerate(order)}
        chosen = _best(inner, baseline, order)
        picks[chosen] += 1
        held.append(float(matrix[order.index(chosen), i]))
    full = {p: totals[row] / n for row, p in enumerate(order)}
    best = _best(full, baseline, order)
    return CrossValidation(baseline=baseline, baseline_mrr=float(full[baseline]),
                           cv_mrr=float(np.mean(held)), picks=picks,
                           full_best=best, full_best_mrr=float(full[best]))


# --- the report ------------------------------------------------------------------------


@dataclass
class TuneReport:
    queries: int
    cv: CrossValidation
    table: list[tuple[FusionParams, float]]  # every cell with its full-set MRR, best first
    min_gain: float = MIN_GAIN
    warnings: list[str] = field(default_factory=list)

    @property
    def recommendation(self) -> FusionParams | None:
        """The cell to paste, or None for "keep the defaults"."""
        cv = self.cv
        if cv.full_best == cv.baseline or cv.cv_mrr <= cv.baseline_mrr + self.min_gain:
            return None
        return cv.full_best

    def to_json(self) -> dict[str, Any]:
        rec = self.recommendation
        return {
            "queries": self.queries,
            "baseline": dataclasses.asdict(self.cv.baseline),
            "baseline_heldout_mrr": self.cv.baseline_mrr,
            "tuned_heldout_mrr": self.cv.cv_mrr,
            "full_set_best": dataclasses.asdict(self.cv.full_best),
            "full_set_best_mrr": self.cv.full_best_mrr,
            "recommendation": dataclasses.asdict(rec) if rec else None,
            "inner_picks": [{"params": dataclasses.asdict(p), "folds": c}
                            for p, c in self.cv.picks.most_common()],
            "grid": [{"params": dataclasses.asdict(p), "mrr": m} for p, m in self.table],
        }

    def render_text(self) -> str:
        cv = self.cv
        lines = [
            f"Swept {len(self.table)} fusion settings over {self.queries} golden queries "
            "(nested leave-one-query-out).",
            f"  current settings ({cv.baseline.label()}): held-out MRR {cv.baseline_mrr:.3f}",
            f"  tuned by cross-validation:                 held-out MRR {cv.cv_mrr:.3f}",
            f"  best on all queries: {cv.full_best.label()} (MRR {cv.full_best_mrr:.3f})",
            "  inner-loop winners: " + ", ".join(
                f"{p.label()} ×{c}" for p, c in cv.picks.most_common(3)),
        ]
        rec = self.recommendation
        if rec is None:
            gain = cv.cv_mrr - cv.baseline_mrr
            lines.append(f"keep the defaults: tuning gains {gain:+.3f} held-out MRR "
                         f"(needs > {self.min_gain:.3f} to be worth a change)")
        else:
            lines.append("Paste into groove.toml:")
            lines.append(rec.toml_block())
        lines.extend(f"warning: {w}" for w in self.warnings)
        return "\n".join(lines)


# --- running the sweep ------------------------------------------------------------------


class _MemoEmbedder(Embedder):
    """Wraps an embedder so each distinct query is embedded once across the sweep."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._cache: dict[str, np.ndarray] = {}
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.max_input_tokens = inner.max_input_tokens

    def embed_query(self, text: str) -> np.ndarray:
        if text not in self._cache:
            self._cache[text] = self._inner.embed_query(text)
        return self._cache[text]

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._inner.embed_passages(texts)

    def token_count(self, text: str) -> int:
        return self._inner.token_count(text)


def with_fusion(config: Config, params: FusionParams) -> Any:
    """A copy of ``config`` with these fusion values (pydantic ``model_copy``)."""
    fusion = config.search.fusion.model_copy(update=dataclasses.asdict(params))
    search = config.search.model_copy(update={"fusion": fusion})
    return config.model_copy(update={"search": search})


def _default_kb_factory(config: Config, embedder: Any) -> Any:
    from groove.kb import KnowledgeBase

    return KnowledgeBase(config, embedder=embedder)


def sweep(
    kb: KnowledgeBase,
    queries: Sequence[GoldenQuery],
    grid: Sequence[FusionParams],
    base_request: SearchRequest,
    kb_factory: Callable[[Any, Any], Any] = _default_kb_factory,
    depth: int = SEARCH_DEPTH,
) -> dict[FusionParams, list[float]]:
    """Reciprocal rank of every query under every grid cell, via the real search ``depth`` deep."""
    embedder = _MemoEmbedder(kb.embedder)
    out: dict[FusionParams, list[float]] = {}
    for params in grid:
        cell_kb = kb_factory(with_fusion(kb.config, params), embedder)
        try:
            out[params] = [
                reciprocal_rank(expected_ranks(
                    [(h.path, h.heading) for h in cell_kb.search(
                        base_request.replace(query=q.query, limit=depth)).results],
                    q.expected))
                for q in queries
            ]
        finally:
            cell_kb.close()
        log.debug("tune %s: MRR %.3f", params.label(), sum(out[params]) / len(queries))
    return out


def run_tune(
    kb: KnowledgeBase,
    base_request: SearchRequest | None = None,
    *,
    golden_path: Path | None = None,
    grid: Sequence[FusionParams] | None = None,
    min_gain: float = MIN_GAIN,
    kb_factory: Callable[[Any, Any], Any] = _default_kb_factory,
    depth: int | None = None,
) -> TuneReport:
    """Sweep, cross-validate and report; applies nothing.

    ``depth`` is how many hits each query fetches (default :data:`SEARCH_DEPTH`);
    a relevant hit below it counts as reciprocal rank 0.
    """
    golden = load_golden(golden_path or kb.config.golden_path)
    if len(golden.queries) < 2:
        raise GoldenError(f"{golden.path}: tune needs at least 2 queries for cross-validation")
    kb.ensure_index()
    baseline = params_of(kb.config)
    cells = list(grid or default_grid())
    if baseline not in cells:
        cells.insert(0, baseline)
    rr = sweep(kb, golden.queries, cells, base_request or SearchRequest(query=""), kb_factory,
               depth or SEARCH_DEPTH)
    cv = nested_loqo(rr, baseline)
    table = sorted(((p, sum(v) / len(v)) for p, v in rr.items()), key=lambda t: (-t[1], t[0]))
    report = TuneReport(queries=len(golden.queries), cv=cv, table=table, min_gain=min_gain)
    if len(golden.queries) < 10:
        report.warnings.append(f"only {len(golden.queries)} golden queries: the held-out evidence is thin")
    return report
