"""The search request: every parameter of docs/search.md, in one place.

The CLI flags, the MCP ``search`` tool and ``groove eval`` all build a
:class:`SearchRequest`; :func:`validate_request` enforces the input bounds
before any model is loaded, so a bad argument never costs a model load.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from groove.errors import InvalidArgument


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


#: Input bounds (docs/search.md, 'Parameters').
MAX_QUERY_BYTES = 1024
MAX_LIST_ENTRIES = 64
MAX_ENTRY_BYTES = 1024
MAX_LIMIT = 100

_LIST_FIELDS = ("path_globs", "tags_any", "tags_all")
_TEXT_FIELDS = ("category", "topic", "date_from", "date_to")


def validate_request(req: SearchRequest) -> SearchRequest:
    """Check every bound; return a normalised copy or raise InvalidArgument.

    Called before any model is loaded, so a bad argument costs nothing.
    """
    _check_text("query", req.query, MAX_QUERY_BYTES)
    if not req.query.strip():
        raise InvalidArgument("query: must contain something other than whitespace")
    if isinstance(req.limit, bool) or not isinstance(req.limit, int) or not 1 <= req.limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit: {req.limit!r} is out of range; accepted: an integer 1..{MAX_LIMIT}")
    for name in _TEXT_FIELDS:
        value = getattr(req, name)
        if value is not None:
            _check_text(name, value, MAX_ENTRY_BYTES)
    lists = {name: _check_list(name, getattr(req, name)) for name in _LIST_FIELDS}
    if lists["path_globs"] == []:
        raise InvalidArgument('path_globs: [] matches nothing; use null, or ["**", "!a/**"]')
    return replace(
        req,
        **lists,
        min_quality=_unit_interval("min_quality", req.min_quality),
        mmr_lambda=_unit_interval("mmr_lambda", req.mmr_lambda),
        mmr_same_doc_penalty=_non_negative("mmr_same_doc_penalty", req.mmr_same_doc_penalty),
        min_confidence_ratio=_confidence_ratio(req.min_confidence_ratio),
    )


def _check_text(name: str, value: object, max_bytes: int) -> None:
    if not isinstance(value, str):
        raise InvalidArgument(f"{name}: expected a string, got {type(value).__name__}")
    if "\x00" in value:
        raise InvalidArgument(f"{name}: contains a NUL character, which is not accepted")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidArgument(
            f"{name}: contains a lone surrogate (not valid Unicode text); send UTF-8 text"
        ) from None
    if size > max_bytes:
        raise InvalidArgument(f"{name}: {size} bytes is too long; accepted: at most {max_bytes} UTF-8 bytes")


def _check_list(name: str, values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, str) or not isinstance(values, list | tuple):
        raise InvalidArgument(f"{name}: expected a list of strings or null")
    if len(values) > MAX_LIST_ENTRIES:
        raise InvalidArgument(
            f"{name}: {len(values)} entries is too many; accepted: at most {MAX_LIST_ENTRIES}")
    for value in values:
        _check_text(f"{name} entry", value, MAX_ENTRY_BYTES)
    return list(values)


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidArgument(f"{name}: expected a number, got {value!r}")
    return float(value)


def _unit_interval(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    number = _number(name, value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise InvalidArgument(f"{name}: {value!r} is out of range; accepted: a number in [0, 1]")
    return number


def _non_negative(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    number = _number(name, value)
    if not math.isfinite(number) or number < 0.0:
        raise InvalidArgument(f"{name}: {value!r} is out of range; accepted: a finite number >= 0")
    return number


def _confidence_ratio(value: float | None) -> float | None:
    """Non-finite means "use the server's value"; negative means 0 (disabled)."""
    if value is None:
        return None
    number = _number("min_confidence_ratio", value)
    if not math.isfinite(number):
        return None
    return max(0.0, number)
