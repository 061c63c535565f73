"""Which optional stages run for one request: the per-call value, else the config.

One resolver, used by the pipeline (to run the stages) and by ``groove eval``
(to fingerprint a run), so the two can never disagree about what a request
means (docs/search.md).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from groove.config import Config
from groove.search.request import SearchRequest


@dataclasses.dataclass(frozen=True)
class Stages:
    """The resolved settings of every optional stage for one request."""

    rerank: bool  # requested (per call, else rerank_by_default); runs only with a reranker
    fusion_method: str
    vector_weight: float
    rrf_k: float
    max_chunks_per_document: int  # 0 = unlimited
    document_margin: float  # 0 = off
    mmr: bool
    mmr_lambda: float
    mmr_penalty: float
    parent: bool
    confidence_ratio: float
    all_language_spans: bool

    def fingerprint(self, config: Config) -> dict[str, Any]:
        """The ranking-relevant settings, as plain JSON values, for eval history."""
        fusion = config.search.fusion
        pr = config.search.parent_retriever
        return {
            "reranker": config.reranker if self.rerank else None,
            "fusion": {
                "method": self.fusion_method, "vector_weight": self.vector_weight,
                "rrf_k": self.rrf_k, "bm25_heading_weight": fusion.bm25_heading_weight,
                "bm25_context_weight": fusion.bm25_context_weight,
                "bm25_content_weight": fusion.bm25_content_weight,
                "cross_language": fusion.cross_language,
                "cross_language_offset": fusion.cross_language_offset,
                "cross_language_imputation": fusion.cross_language_imputation,
            },
            "max_chunks_per_document": self.max_chunks_per_document,
            "document_margin": self.document_margin,
            "mmr": {"enabled": self.mmr, "lambda": self.mmr_lambda,
                    "same_doc_penalty": self.mmr_penalty},
            "parent_retriever": {"enabled": self.parent,
                                 "whole_doc_threshold_tokens": pr.whole_doc_threshold_tokens,
                                 "max_expanded_tokens": pr.max_expanded_tokens},
        }


def _pick(value: Any, default: Any) -> Any:
    return default if value is None else value


def resolve_stages(request: SearchRequest, config: Config) -> Stages:
    """Per-call values where given, config values otherwise."""
    search = config.search
    return Stages(
        rerank=bool(_pick(request.rerank, config.rerank_by_default)),
        fusion_method=_pick(request.fusion, search.fusion.method),
        vector_weight=_pick(request.fusion_vector_weight,
                            search.fusion.vector_weight),
        rrf_k=search.fusion.rrf_k,
        max_chunks_per_document=_pick(request.max_chunks_per_document,
                                      search.max_chunks_per_document),
        document_margin=search.document_margin,
        mmr=_pick(request.mmr, search.mmr.enabled),
        mmr_lambda=_pick(request.mmr_lambda, search.mmr.lambda_),
        mmr_penalty=_pick(request.mmr_same_doc_penalty, search.mmr.same_doc_penalty),
        parent=_pick(request.parent_retriever, search.parent_retriever.enabled),
        confidence_ratio=_pick(request.min_confidence_ratio, search.min_confidence_ratio),
        all_language_spans=bool(_pick(request.all_language_spans,
                                      search.all_language_spans)),
    )


def inert_options(request: SearchRequest, config: Config) -> list[str]:
    """Per-call options that cannot change this answer, each as a sentence saying why
    (so a user is told, not left to wonder why nothing changed)."""
    stages = resolve_stages(request, config)
    notes = []
    if not stages.mmr and (request.mmr_lambda is not None
                           or request.mmr_same_doc_penalty is not None):
        given = "mmr_lambda" if request.mmr_lambda is not None else "mmr_same_doc_penalty"
        notes.append(f"{given} does nothing: MMR is off for this search (pass --mmr / "
                     "mmr: true, or set [search.mmr] enabled = true)")
    if request.rerank and config.reranker is None:
        notes.append("rerank: true does nothing: no reranker is configured (set reranker = "
                     "\"bge-reranker-base\" or another in groove.toml)")
    return notes
