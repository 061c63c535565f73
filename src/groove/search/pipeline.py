"""The search pipeline, as one function calling one function per stage (docs/search.md).

candidates → filters → fusion → reranker → MMR → parent retriever →
match_spans → low_confidence. Filters are applied inside the candidate step
(before each leg's cut to N), as docs/search.md describes. Each optional stage is a
no-op when off, so with all of them off the output is exactly the fused ranking.
"""

from __future__ import annotations

import dataclasses

from groove.config import Config
from groove.embedders.base import Embedder
from groove.models import ChunkRow, Hit, SearchResponse
from groove.rerankers import Reranker, get_reranker
from groove.search.candidates import gather
from groove.search.confidence import is_low_confidence
from groove.search.filters import build_filter, filter_applied
from groove.search.fusion import reciprocal_rank_fusion
from groove.search.mmr import mmr_select
from groove.search.parent import expand_parents
from groove.search.query import ParsedQuery, parse_query
from groove.search.request import SearchRequest
from groove.search.rerank import rerank, rerank_pool_size
from groove.search.spans import match_spans
from groove.search.vectors import VectorIndex
from groove.store.base import Store

Ranked = list[tuple[int, float]]


@dataclasses.dataclass(frozen=True)
class _Stages:
    """Which optional stages run for this request (per-call value, else config)."""

    rerank: bool
    mmr: bool
    mmr_lambda: float
    mmr_penalty: float
    parent: bool
    confidence_ratio: float


def run_search(*, store: Store, embedder: Embedder, config: Config, request: SearchRequest,
               vectors: VectorIndex, scorer: Reranker | None = None) -> SearchResponse:
    """Answer one (already validated) request."""
    stages = _stages(request, config, scorer)
    parsed = parse_query(request.query)
    vectors.refresh()
    base_mask = vectors.mask(build_filter(request, config))
    candidates = gather(store, embedder, config, vectors, parsed, base_mask, request.limit)
    ranked = reciprocal_rank_fusion([candidates.vector, candidates.fts], config.search.fusion.rrf_k)
    ranked, rows = _rerank_stage(ranked, parsed, request, stages, store, config, scorer)
    ranked = _mmr_stage(ranked, request, stages, vectors)
    rows = _ensure_rows(store, rows, ranked)
    # A chunk another process deleted since the vector refresh has no row: skip it.
    hits = [_hit(rows[chunk_id], score) for chunk_id, score in ranked if chunk_id in rows]
    if stages.parent:
        pr = config.search.parent_retriever
        hits = expand_parents(hits, rows, store.document_chunks,
                              whole_doc_threshold_tokens=pr.whole_doc_threshold_tokens,
                              max_expanded_tokens=pr.max_expanded_tokens)
    for hit in hits:
        hit.match_spans = match_spans(parsed.positive_text, hit.content)
    low = is_low_confidence([h.score for h in hits], stages.confidence_ratio)
    return SearchResponse(results=hits, low_confidence=low, filter_applied=filter_applied(request))


def _stages(request: SearchRequest, config: Config, scorer: Reranker | None) -> _Stages:
    mmr_cfg = config.search.mmr
    wants_rerank = config.rerank_by_default if request.rerank is None else request.rerank
    ratio = request.min_confidence_ratio
    return _Stages(
        rerank=bool(wants_rerank and (scorer is not None or config.reranker)),
        mmr=mmr_cfg.enabled if request.mmr is None else request.mmr,
        mmr_lambda=mmr_cfg.lambda_ if request.mmr_lambda is None else request.mmr_lambda,
        mmr_penalty=(mmr_cfg.same_doc_penalty if request.mmr_same_doc_penalty is None
                     else request.mmr_same_doc_penalty),
        parent=(config.search.parent_retriever.enabled if request.parent_retriever is None
                else request.parent_retriever),
        confidence_ratio=config.search.min_confidence_ratio if ratio is None else ratio,
    )


def _rerank_stage(ranked: Ranked, parsed: ParsedQuery, request: SearchRequest, stages: _Stages,
                  store: Store, config: Config, scorer: Reranker | None
                  ) -> tuple[Ranked, dict[int, ChunkRow]]:
    """Re-score the top pool with the cross-encoder; otherwise pass through."""
    if not stages.rerank:
        return ranked, {}
    pool = ranked[:rerank_pool_size(request.limit, stages.mmr)]
    rows = store.get_chunks([c for c, _ in pool])
    pool = [(c, s) for c, s in pool if c in rows]  # deleted since the refresh
    texts = [_rerank_text(rows[c]) for c, _ in pool]
    active = scorer or get_reranker(config.reranker, config.model_cache_dir)
    query = parsed.positive_text.strip() or request.query
    return rerank(query, pool, texts, active), rows


def _rerank_text(row: ChunkRow) -> str:
    """The reranker reads the breadcrumb too when contextual mode stored one."""
    return f"{row.context}\n\n{row.content}" if row.context else row.content


def _mmr_stage(ranked: Ranked, request: SearchRequest, stages: _Stages,
               vectors: VectorIndex) -> Ranked:
    """Diversify the final ``limit`` from a pool, or simply cut to ``limit``."""
    if not stages.mmr:
        return ranked[:request.limit]
    pool = ranked[:max(50, request.limit * 5)]
    ids = [c for c, _ in pool]
    doc_ids = vectors.doc_ids_for(ids)
    return mmr_select(pool, vectors.vectors_for(ids), doc_ids, limit=request.limit,
                      lam=stages.mmr_lambda, same_doc_penalty=stages.mmr_penalty)


def _ensure_rows(store: Store, rows: dict[int, ChunkRow], ranked: Ranked) -> dict[int, ChunkRow]:
    missing = [c for c, _ in ranked if c not in rows]
    if missing:
        rows = {**rows, **store.get_chunks(missing)}
    return rows


def _hit(row: ChunkRow, score: float) -> Hit:
    return Hit(chunk_id=row.id, score=score, path=row.path, title=row.title, heading=row.heading,
               level=row.level, category=row.category, topic=row.topic, date=row.date,
               tags=list(row.tags), content=row.content)
