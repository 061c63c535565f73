"""Search filters (docs/search.md, 'Filters'), applied to candidates *before* the cut to N.

A :class:`ChunkFilter` is built once per request and then asked about chunk
metadata rows; the vector index turns it into a boolean mask (cached per
index generation), so a restrictive filter still yields up to ``limit`` hits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pathspec

from groove.config import Config
from groove.models import ChunkRow
from groove.parsers import PARSER_ALIASES
from groove.search.exclusions import excluded_terms
from groove.search.globs import expand_braces
from groove.search.request import SearchRequest


class DocumentFields(Protocol):
    """What the document-level filters read (a ChunkRow or a DocumentMeta)."""

    @property
    def path(self) -> str: ...
    @property
    def category(self) -> str | None: ...
    @property
    def topic(self) -> str | None: ...
    @property
    def date(self) -> str | None: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def language(self) -> str | None: ...


@dataclass(frozen=True)
class ChunkFilter:
    category: str | None = None
    topic: str | None = None
    includes: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    tags_any: frozenset[str] = frozenset()
    tags_all: frozenset[str] = frozenset()
    date_from: str | None = None
    date_to: str | None = None
    min_quality: float = 0.0
    #: Source-code filters: the document's language (parser id) and the chunk's kind.
    languages: frozenset[str] = frozenset()
    symbol_kinds: frozenset[str] = frozenset()
    #: Declared-field filters, ((key, values), ...) sorted: decided by the index's
    #: (key, value) lookup, not per document (see VectorIndex.mask).
    fields: tuple[tuple[str, tuple[str, ...]], ...] = ()
    fields_not: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def key(self) -> tuple[Any, ...]:
        """Hashable identity, used to cache the mask per index generation."""
        return (self.category, self.topic, self.includes, self.excludes,
                tuple(sorted(self.tags_any)), tuple(sorted(self.tags_all)),
                self.date_from, self.date_to, self.min_quality, self.fields, self.fields_not,
                tuple(sorted(self.languages)), tuple(sorted(self.symbol_kinds)))

    def applies(self, row: ChunkRow) -> bool:
        """True when the chunk passes every filter (they combine with AND)."""
        return (self.document_passes(row) and self.quality_passes(row)
                and (not self.symbol_kinds or row.symbol_kind in self.symbol_kinds))

    def quality_passes(self, row: ChunkRow) -> bool:
        """The one chunk-level filter; binary-format chunks are exempt."""
        return row.binary_format or row.quality >= self.min_quality

    def document_passes(self, row: DocumentFields) -> bool:
        """Every filter on document fields, so it can be decided once per document."""
        if self.category is not None and row.category != self.category:
            return False
        if self.topic is not None and row.topic != self.topic:
            return False
        if (self.includes or self.excludes) and not self._path_passes(row.path):
            return False
        if self.tags_any and not self.tags_any.intersection(row.tags):
            return False
        if self.tags_all and not self.tags_all.issubset(row.tags):
            return False
        if self.languages and row.language not in self.languages:
            return False
        if self.date_from is not None or self.date_to is not None:
            if row.date is None:
                return False
            if self.date_from is not None and row.date < self.date_from:
                return False
            if self.date_to is not None and row.date > self.date_to:
                return False
        return True

    def _path_passes(self, path: str) -> bool:
        include_ok = not self.includes or _spec(self.includes).match_file(path)
        return include_ok and not (self.excludes and _spec(self.excludes).match_file(path))


_SPECS: dict[tuple[str, ...], pathspec.PathSpec] = {}


def _spec(patterns: tuple[str, ...]) -> pathspec.PathSpec:
    spec = _SPECS.get(patterns)
    if spec is None:
        if len(_SPECS) > 256:
            _SPECS.clear()
        spec = _SPECS[patterns] = pathspec.PathSpec.from_lines("gitignore", patterns)
    return spec


def effective_min_quality(request: SearchRequest, config: Config) -> float:
    """The quality floor: the per-call value, else the configured filter, else none."""
    if request.include_low_quality:
        return 0.0
    if request.min_quality is not None:
        return request.min_quality
    qf = config.quality_filter
    return qf.threshold if qf.enabled else 0.0


def split_globs(globs: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The includes and the ``!`` excludes of a glob list, braces expanded."""
    return (tuple(e for g in globs if not g.startswith("!") for e in expand_braces(g)),
            tuple(e for g in globs if g.startswith("!") for e in expand_braces(g[1:])))


def path_matches(globs: Sequence[str], path: str) -> bool:
    """Whether ``path`` passes ``globs`` as the ``path_globs`` filter judges it."""
    includes, excludes = split_globs(globs)
    return ChunkFilter(includes=includes, excludes=excludes)._path_passes(path)


def build_filter(request: SearchRequest, config: Config) -> ChunkFilter:
    includes, excludes = split_globs(request.path_globs or [])
    return ChunkFilter(
        category=request.category,
        topic=request.topic,
        includes=includes,
        excludes=excludes,
        tags_any=frozenset(request.tags_any or ()),
        tags_all=frozenset(request.tags_all or ()),
        date_from=request.date_from,
        date_to=request.date_to,
        min_quality=effective_min_quality(request, config),
        languages=frozenset(PARSER_ALIASES.get(x, x) for x in request.languages or ()),
        symbol_kinds=frozenset(request.symbol_kind or ()),
        fields=_field_pairs(request.fields),
        fields_not=_field_pairs(request.fields_not),
    )


def _field_pairs(fields: dict[str, list[str]] | None) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple(sorted((key, tuple(sorted(set(values)))) for key, values in (fields or {}).items()))


def filter_applied(request: SearchRequest) -> dict[str, Any]:
    """The echo of filters that had an effect: non-empty lists and given scalars, and
    ``excluded_terms``: the query's ``-term`` exclusions that excluded something (GrooveSeek v1.1).

    ``min_quality`` and ``include_low_quality`` apply without being echoed
    (GrooveSeek's frozen contract: the quality filter is on by default, so an
    empty echo never claimed the results were unfiltered).
    """
    out: dict[str, Any] = {}
    for name in ("category", "topic", "date_from", "date_to"):
        value = getattr(request, name)
        if value is not None:
            out[name] = value
    for name in ("path_globs", "tags_any", "tags_all", "languages", "symbol_kind"):
        value = getattr(request, name)
        if value:
            out[name] = list(value)
    for name in ("fields", "fields_not"):
        value = getattr(request, name)
        if value:
            out[name] = {key: list(values) for key, values in value.items()}
    excluded = excluded_terms(request.query)
    if excluded:
        out["excluded_terms"] = list(excluded)
    if request.min_confidence_ratio is not None:
        out["min_confidence_ratio"] = request.min_confidence_ratio
    if request.max_chunks_per_document is not None:
        out["max_chunks_per_document"] = request.max_chunks_per_document
    return out
