"""The search request: every parameter of SPEC section 5, in one place.

The CLI flags, the MCP ``search`` tool and ``groove eval`` all build a
:class:`SearchRequest`; :func:`validate_request` enforces the input bounds
before any model is loaded, so a bad argument never costs a model load.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SearchRequest:
    query: str
    limit: int = 5
    category: str | None = None
    topic: str | None = None
    rerank: bool | None = None  # None -> config.rerank_by_default
    min_quality: float | None = None  # None -> config.quality_filter
    include_low_quality: bool = False
    path_globs: list[str] | None = None
    tags_any: list[str] | None = None
    tags_all: list[str] | None = None
    date_from: str | None = None
    date_to: str | None = None
    min_confidence_ratio: float | None = None  # None -> config.search.min_confidence_ratio
    mmr: bool | None = None  # None -> config.search.mmr.enabled
    mmr_lambda: float | None = None
    mmr_same_doc_penalty: float | None = None
    parent_retriever: bool | None = None  # None -> config.search.parent_retriever.enabled
