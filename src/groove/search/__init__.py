"""The search side: query compilation, spans and the pipeline stages (docs/search.md).

The names below are imported on first use (PEP 562), so a command that only
needs the request model (``groove status`` imports the CLI's shared options)
does not load the pipeline, numpy and the engines with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groove._lazy import resolver

if TYPE_CHECKING:
    from groove.search.pipeline import run_search
    from groove.search.query import ParsedQuery, parse_query, query_phrases
    from groove.search.request import SearchRequest, validate_request
    from groove.search.spans import match_spans
    from groove.search.vectors import VectorIndex

_HOMES = {
    "run_search": "groove.search.pipeline",
    "ParsedQuery": "groove.search.query",
    "parse_query": "groove.search.query",
    "query_phrases": "groove.search.query",
    "SearchRequest": "groove.search.request",
    "validate_request": "groove.search.request",
    "match_spans": "groove.search.spans",
    "VectorIndex": "groove.search.vectors",
}

__all__ = ["ParsedQuery", "SearchRequest", "VectorIndex", "match_spans", "parse_query",
           "query_phrases", "run_search", "validate_request"]


__getattr__ = resolver(__name__, _HOMES, globals())
