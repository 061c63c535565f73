"""match_spans: where the query's terms occur in a hit's content (docs/citations.md).

``match_spans`` takes the *positive text* of the query
(:attr:`groove.search.query.ParsedQuery.positive_text`), never the raw query,
so an excluded group produces no span.  It returns None (key omitted) when
spans are not computed, ``[]`` when computed without a match.

The search runs on UTF-8 bytes: ``bytes.lower`` is exactly the ASCII-only
fold docs/citations.md describes, and an ASCII term can only match ASCII bytes,
which never occur inside a multi-byte sequence, so every offset found is
already a byte offset on a codepoint boundary and no char-to-byte conversion
is needed.
"""

from __future__ import annotations

from functools import lru_cache

from groove.search.query import query_phrases

MATCH_SPAN_CONTENT_MAX_BYTES = 262144
MATCH_SPAN_MAX_COUNT = 100
FALLBACK_TERM_LIMIT = 100


def match_spans(query_positive_text: str, content: str) -> list[dict[str, int]] | None:
    """Byte spans of the query's terms in ``content``, folded per docs/citations.md.

    None when the query is empty/whitespace-only, when any term is non-ASCII,
    when ``content`` exceeds MATCH_SPAN_CONTENT_MAX_BYTES as UTF-8, or when it
    cannot be encoded as UTF-8 at all (lone surrogates: there are no UTF-8
    offsets to give).
    """
    terms = match_terms(query_positive_text)
    if terms is None:
        return None
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        return None
    if len(data) > MATCH_SPAN_CONTENT_MAX_BYTES:
        return None
    return [{"start": s, "end": e} for s, e in fold_spans(_occurrences(terms, data.lower()))]


@lru_cache(maxsize=256)
def match_terms(query_positive_text: str) -> tuple[bytes, ...] | None:
    """The lower-cased, deduplicated ASCII terms, or None if spans are not computed.

    Terms are query_phrases of the text; only when that is empty, the
    whitespace split of the trimmed text, deduplicated, sorted and cut to 100
    (sorting first keeps the result independent of word order).  Terms that
    differ only in ASCII case are one term (decision): they match the same
    bytes, so counting them twice would only shrink every term's budget.
    Cached because the pipeline calls this once per hit with the same query.
    """
    if not query_positive_text.strip():
        return None
    terms = query_phrases(query_positive_text, warn_on_cap=False)
    if not terms:
        terms = sorted(set(query_positive_text.split()))[:FALLBACK_TERM_LIMIT]
    if not all(t.isascii() for t in terms):
        return None
    return tuple(sorted({t.lower().encode("ascii") for t in terms}))


def _occurrences(terms: tuple[bytes, ...], folded: bytes) -> list[tuple[int, int]]:
    """Each term's first ``max(1, 100 // k)`` non-overlapping occurrences."""
    budget = max(1, MATCH_SPAN_MAX_COUNT // len(terms))
    found: list[tuple[int, int]] = []
    for term in terms:
        width = len(term)
        pos = folded.find(term)
        taken = 0
        while pos != -1 and taken < budget:
            found.append((pos, pos + width))
            taken += 1
            pos = folded.find(term, pos + width)
    return found


def fold_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sort and union overlapping spans; adjacent ones stay separate; cap at 100.

    Folding an already folded list returns it unchanged (idempotent).
    """
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged[:MATCH_SPAN_MAX_COUNT]]
