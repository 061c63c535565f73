"""The search side: query compilation, spans and the pipeline stages (docs/search.md)."""

from groove.search.pipeline import run_search
from groove.search.query import ParsedQuery, parse_query, query_phrases
from groove.search.request import SearchRequest, validate_request
from groove.search.spans import match_spans
from groove.search.vectors import VectorIndex

__all__ = ["ParsedQuery", "SearchRequest", "VectorIndex", "match_spans", "parse_query",
           "query_phrases", "run_search", "validate_request"]
