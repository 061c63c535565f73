"""The search pipeline, as one function calling one function per stage (docs/search.md).

candidates → filters → fusion (RRF or convex) → translations → reranker → import-only code
chunks last → quoted phrases first →
per-document cap and same-document margin → MMR → parent retriever → match_spans → low_confidence. Filters are applied inside the candidate step
(before each leg's cut to N), as the spec requires. Each optional stage is a
no-op when off, so with all of them off the output is exactly the fused ranking.
"""

from __future__ import annotations

import math

from groove.config import Config
from groove.embedders.base import Embedder
from groove.models import ChunkRow, Hit, SearchResponse, passage_text
from groove.rerankers import Reranker, get_reranker
from groove.search.candidates import Candidates, QuestionSpread, candidate_count, gather
from groove.search.confidence import (
    REASONS,
    Evidence,
    legs_disagree,
    lift,
    low_confidence_reason,
)
from groove.search.diversity import cap_per_document, prefer_new_documents
from groove.search.explain import Recorder, Trace, untraced
from groove.search.filters import build_filter, filter_applied
from groove.search.fusion import fuse
from groove.search.mmr import mmr_select
from groove.search.parent import expand_parents
from groove.search.query import ParsedQuery, parse_query
from groove.search.quotes import require_quoted
from groove.search.request import SearchRequest
from groove.search.rerank import rerank, rerank_pool_size
from groove.search.spans import match_spans
from groove.search.stages import Stages, resolve_stages
from groove.search.stubs import demote_stubs, stub_texts
from groove.search.translations import raise_translations, translation_finder
from groove.search.vectors import VectorIndex
from groove.store.base import Store

Ranked = list[tuple[int, float]]


def run_search(*, store: Store, embedder: Embedder, config: Config, request: SearchRequest,
               vectors: VectorIndex, scorer: Reranker | None = None,
               calibrate: bool = False) -> SearchResponse:
    """Answer one (already validated) request.

    ``calibrate``: measure the best match's lift (search/confidence.py) even when the
    low_confidence flag is off; collections merge their answers on it.
    """
    stages = resolve_stages(request, config)
    parsed = parse_query(request.query)
    imputation = config.search.fusion.cross_language_imputation
    with vectors.pinned():  # one generation of the vectors for the whole search
        base_mask = vectors.mask(build_filter(request, config))
        candidates = gather(store, embedder, config, vectors, parsed, base_mask, request.limit)
        trace = Trace(candidates, stages, imputation) if request.explain else None
        record: Recorder = trace.record if trace is not None else untraced  # explain only
        ranked = record("fusion", fuse(candidates.vector, candidates.fts,
                                       method=stages.fusion_method, rrf_k=stages.rrf_k,
                                       vector_weight=stages.vector_weight,
                                       foreign=candidates.foreign, imputation=imputation,
                                       vectorless=candidates.vectorless))
        ranked = record("translations", _translation_stage(ranked, candidates, request, store,
                                                           config, vectors))
        ranked, rows = _rerank_stage(ranked, parsed, request, stages, store, config, scorer)
        ranked, rows = _stub_stage(record("rerank", ranked), request, store, vectors, rows)
        ranked, rows, quotes_met = _quote_stage(record("code stubs", ranked), parsed,
                                                request, store, rows)
        ranked = record("quotes", ranked)
        ranked = record("document margin", _cap_stage(ranked, stages, vectors, request.limit,
                                                      record))
        ranked = record("mmr" if stages.mmr else "limit", _mmr_stage(ranked, request, stages,
                                                                     vectors))
        rows = _ensure_rows(store, rows, ranked)
        # A chunk another process deleted since the vector refresh has no row: skip it.
        hits = [_hit(rows[chunk_id], score) for chunk_id, score in ranked if chunk_id in rows]
        if stages.parent:
            pr = config.search.parent_retriever
            hits = expand_parents(hits, rows, store.document_chunks,
                                  whole_doc_threshold_tokens=pr.whole_doc_threshold_tokens,
                                  max_expanded_tokens=pr.max_expanded_tokens)
        scores_in_rank_order(hits)
        hits, notes = _min_score_stage(hits, request.min_score)
        for rank, hit in enumerate(hits, 1):
            hit.cap_content()  # a chunk of a huge one-line file: the hit says it was cut
            hit.match_spans = match_spans(parsed, hit.content, all_languages=stages.all_language_spans)
            if trace is not None:
                hit.explain = trace.explain(hit.chunk_id, rank, hit.score, hit.raw_score)
        known = evidence(candidates, parsed, vectors) if (
            calibrate or stages.confidence_ratio > 0) else None
        reason = _confidence_stage(known, parsed, stages, quotes_met=quotes_met)
        return SearchResponse(results=hits, low_confidence=reason is not None,
                              filter_applied=filter_applied(request), low_confidence_reason=reason,
                              low_confidence_note=REASONS[reason] if reason else None,
                              notes=notes, lift=None if known is None else known.lift,
                              top_cosine=candidates.vector[0][1] if candidates.vector else None)


def _min_score_stage(hits: list[Hit], min_score: float | None) -> tuple[list[Hit], list[str]]:
    """The hits scoring at least ``min_score`` (scores fall down the list, so a prefix), and
    a note saying how many were dropped, when any was."""
    if min_score is None:
        return hits, []
    kept = [hit for hit in hits if hit.score >= min_score]
    if len(kept) == len(hits):
        return hits, []
    return kept, [f"min_score {min_score:g} dropped {len(hits) - len(kept)} of {len(hits)} "
                  "hit(s) scoring below it"]


def _confidence_stage(known: Evidence | None, parsed: ParsedQuery, stages: Stages, *,
                      quotes_met: bool) -> str | None:
    """low_confidence's reason (search/confidence.py): no content word, an unmet quote, or
    weak evidence; None when the flag is down."""
    if stages.confidence_ratio <= 0 or known is None:
        return None
    return low_confidence_reason(known,
                                 ratio=stages.confidence_ratio, has_content=parsed.has_content,
                                 quotes_met=quotes_met)


def evidence(candidates: Candidates, parsed: ParsedQuery, vectors: VectorIndex) -> Evidence:
    """What the legs say about this question: agreement and lift (search/confidence.py)."""
    depth = candidate_count(1)  # enough chunks to see AGREEMENT_DEPTH distinct documents
    disagree = False
    if parsed.phrases:  # a query without a phrase has no lexical evidence
        legs = [[c for c, _ in leg[:depth]] for leg in (candidates.vector, candidates.fts)]
        disagree = legs_disagree(vectors.doc_ids_for(legs[0]), vectors.doc_ids_for(legs[1]))
    return Evidence(legs_disagree=disagree, lift=best_lift(candidates, vectors))


def best_lift(candidates: Candidates, vectors: VectorIndex) -> float:
    """The lift of the best match (search/confidence.py), against its own script family's
    chunks when the vector leg looked at both families, else against every chunk.

    Each family is measured against its own crowd: a bilingual knowledge base
    mixes two cosine distributions, and the question's own-language chunks
    all sit above the other language's, so a lift against the mixture would
    call any same-language chunk a standout.
    """
    query = candidates.query_vector
    if query is None or len(query) != vectors.matrix.dim or not candidates.vector:
        return math.inf
    pools = candidates.pools
    bests: list[tuple[float, bool | None]] = []
    if pools is not None and pools.calibrate is not None:
        same = [s for c, s in pools.base if c not in pools.other_in_base]
        other = [s for c, s in pools.base if c in pools.other_in_base]
        other += [s for _, s in pools.other_script[:1]]
        bests += [(max(same), candidates.query_cjk)] if same else []
        bests += [(max(other), not candidates.query_cjk)] if other else []
    else:
        bests.append((candidates.vector[0][1], None))
    spread = candidates.spread or QuestionSpread(vectors)
    return max((lift(best, *spread(query, cjk)) for best, cjk in bests), default=math.inf)


def _translation_stage(ranked: Ranked, candidates: Candidates,
                       request: SearchRequest, store: Store, config: Config,
                       vectors: VectorIndex) -> Ranked:
    """The first ``limit`` results' other-language translations close behind them (with
    no translated file in the index there are none: the ranking is returned as it is)."""
    ratio = config.search.fusion.translation_ratio
    if ratio <= 0.0 or not vectors.has_translations():
        return ranked
    twins = translation_finder(store, vectors,
                               may_return=lambda ids: candidates.may_return(vectors, ids))
    return raise_translations(ranked, twins, ratio, request.limit,
                              asked=lambda chunk_id: vectors.in_script([chunk_id],
                                                                       candidates.query_cjk)[0])


def _stub_stage(ranked: Ranked, request: SearchRequest, store: Store, vectors: VectorIndex,
                rows: dict[int, ChunkRow]) -> tuple[Ranked, dict[int, ChunkRow]]:
    """Code chunks outside definitions (imports, fragments between definitions) behind the
    other candidates unless the question is about them (search/stubs.py); a knowledge
    base without code definitions is passed through."""
    if not vectors.has_code():
        return ranked, rows
    pool, rest = ranked[:candidate_count(request.limit)], ranked[candidate_count(request.limit):]
    rows = _ensure_rows(store, rows, pool)

    stubs = stub_texts((rows[c] for c, _ in pool if c in rows), store.documents_with_definitions)
    return demote_stubs(pool, request.query, stubs) + rest, rows


def _quote_stage(ranked: Ranked, parsed: ParsedQuery, request: SearchRequest, store: Store,
                 rows: dict[int, ChunkRow]) -> tuple[Ranked, dict[int, ChunkRow], bool]:
    """Hits holding the quoted phrases, then the codes, first (search/quotes.py); whether any
    hit holds every quoted phrase."""
    phrases, codes = parsed.quoted, parsed.codes
    if not phrases and not codes:
        return ranked, rows, True
    pool, rest = ranked[:candidate_count(request.limit)], ranked[candidate_count(request.limit):]
    rows = _ensure_rows(store, rows, pool)
    texts = {c: f"{rows[c].heading or ''}\n{rows[c].content}" for c, _ in pool if c in rows}
    pool, met = require_quoted(pool, texts, phrases, codes)
    return pool + rest, rows, met


def _cap_stage(ranked: Ranked, stages: Stages, vectors: VectorIndex, limit: int,
               record: Recorder = untraced) -> Ranked:
    """The per-document cap, then the same-document margin (search/diversity.py)."""
    if stages.max_chunks_per_document <= 0 and stages.document_margin <= 0:
        return ranked
    doc_of = dict(zip((c for c, _ in ranked), vectors.doc_ids_for([c for c, _ in ranked]),
                      strict=True))
    ranked = record("per-document cap", cap_per_document(ranked, doc_of.__getitem__,
                                                         stages.max_chunks_per_document))
    if stages.mmr:  # MMR chooses the first ``limit`` itself, with its own same-document penalty
        return ranked
    pool = ranked[:candidate_count(limit)]
    return prefer_new_documents(pool, doc_of.__getitem__, stages.document_margin, limit)


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


def scores_in_rank_order(hits: list[Hit]) -> None:
    """Cap each hit's ``score`` at the one above it (the original goes to ``raw_score``).

    The stages after fusion order by more than the score (quoted phrases first,
    the same-document margin, translations behind their sections, MMR), so the
    list's order is the answer and the score shown must not contradict it: a
    client that sorts by score, or reads "0.49 below 0.41" as a mistake, sees
    the order groove chose.
    """
    ceiling = math.inf
    for hit in hits:
        if hit.score > ceiling:
            hit.raw_score, hit.score = hit.score, ceiling
        ceiling = hit.score


def _ensure_rows(store: Store, rows: dict[int, ChunkRow], ranked: Ranked) -> dict[int, ChunkRow]:
    missing = [c for c, _ in ranked if c not in rows]
    if missing:
        rows = {**rows, **store.get_chunks(missing)}
    return rows


def _hit(row: ChunkRow, score: float) -> Hit:
    return Hit(chunk_id=row.id, score=score, path=row.path, title=row.title, heading=row.heading,
               level=row.level, category=row.category, topic=row.topic, date=row.date,
               tags=list(row.tags), content=row.content, symbol_kind=row.symbol_kind,
               scope=row.scope, line_start=row.line_start, line_end=row.line_end,
               language=row.language)
