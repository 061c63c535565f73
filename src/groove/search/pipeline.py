"""The search pipeline, as one function calling one function per stage (docs/search.md).

candidates → filters → fusion (RRF or convex) → reranker → per-document cap →
MMR → parent retriever → match_spans → low_confidence. Filters are applied inside the candidate step
(before each leg's cut to N), as the spec requires. Each optional stage is a
no-op when off, so with all of them off the output is exactly the fused ranking.
"""

from __future__ import annotations

from groove.config import Config
from groove.embedders.base import Embedder
from groove.models import ChunkRow, Hit, SearchResponse, passage_text
from groove.rerankers import Reranker, get_reranker
from groove.search.candidates import Candidates, candidate_count, gather
from groove.search.confidence import is_low_confidence
from groove.search.diversity import cap_per_document
from groove.search.filters import build_filter, filter_applied
from groove.search.fusion import fuse
from groove.search.mmr import mmr_select
from groove.search.parent import expand_parents
from groove.search.query import ParsedQuery, parse_query
from groove.search.request import SearchRequest
from groove.search.rerank import rerank, rerank_pool_size
from groove.search.spans import match_spans
from groove.search.stages import Stages, resolve_stages
from groove.search.vectors import VectorIndex
from groove.store.base import Store

Ranked = list[tuple[int, float]]


def run_search(*, store: Store, embedder: Embedder, config: Config, request: SearchRequest,
               vectors: VectorIndex, scorer: Reranker | None = None) -> SearchResponse:
    """Answer one (already validated) request."""
    stages = resolve_stages(request, config)
    parsed = parse_query(request.query)
    vectors.refresh()
    base_mask = vectors.mask(build_filter(request, config))
    candidates = gather(store, embedder, config, vectors, parsed, base_mask, request.limit)
    ranked = fuse(candidates.vector, candidates.fts, method=stages.fusion_method,
                  rrf_k=stages.rrf_k, vector_weight=stages.vector_weight)
    ranked, rows = _rerank_stage(ranked, parsed, request, stages, store, config, scorer)
    ranked = _cap_stage(ranked, stages, vectors)
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
        hit.match_spans = match_spans(parsed, hit.content, all_languages=stages.all_language_spans)
    low = _confidence_stage(candidates, parsed, stages, vectors)
    return SearchResponse(results=hits, low_confidence=low, filter_applied=filter_applied(request))


def _confidence_stage(candidates: Candidates, parsed: ParsedQuery, stages: Stages,
                      vectors: VectorIndex) -> bool:
    """low_confidence from the two legs' best documents (search/confidence.py)."""
    if stages.confidence_ratio <= 0:
        return False
    depth = candidate_count(1)  # enough chunks to see AGREEMENT_DEPTH distinct documents
    legs = [[c for c, _ in leg[:depth]] for leg in (candidates.vector, candidates.fts)]
    return is_low_confidence(vectors.doc_ids_for(legs[0]), vectors.doc_ids_for(legs[1]),
                             ratio=stages.confidence_ratio,
                             lexical_query=bool(parsed.phrases))


def _cap_stage(ranked: Ranked, stages: Stages, vectors: VectorIndex) -> Ranked:
    """At most ``max_chunks_per_document`` hits per document (0: pass through)."""
    if stages.max_chunks_per_document <= 0:
        return ranked
    doc_of = dict(zip((c for c, _ in ranked), vectors.doc_ids_for([c for c, _ in ranked]),
                      strict=True))
    return cap_per_document(ranked, doc_of.__getitem__, stages.max_chunks_per_document)


def _rerank_stage(ranked: Ranked, parsed: ParsedQuery, request: SearchRequest, stages: Stages,
                  store: Store, config: Config, scorer: Reranker | None
                  ) -> tuple[Ranked, dict[int, ChunkRow]]:
    """Re-score the top pool with the cross-encoder; otherwise pass through."""
    if not stages.rerank or (scorer is None and not config.reranker):
        return ranked, {}
    pool = ranked[:rerank_pool_size(request.limit, stages.mmr)]
    rows = store.get_chunks([c for c, _ in pool])
    pool = [(c, s) for c, s in pool if c in rows]  # deleted since the refresh
    texts = [passage_text(rows[c].context, rows[c].content) for c, _ in pool]
    active = scorer or get_reranker(config.reranker or "", config.model_cache_dir)
    return rerank(parsed.model_text, pool, texts, active), rows


def _mmr_stage(ranked: Ranked, request: SearchRequest, stages: Stages,
               vectors: VectorIndex) -> Ranked:
    """Diversify the final ``limit`` from a pool, or simply cut to ``limit``."""
    if not stages.mmr:
        return ranked[:request.limit]
    pool = ranked[:candidate_count(request.limit)]
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
