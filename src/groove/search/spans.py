"""match_spans: where the query's terms occur in a hit's content (docs/citations.md).

``match_spans`` takes the query after exclusion removal — a
:class:`~groove.search.query.ParsedQuery` (its phrases are reused, not
re-parsed) or its *positive text* — never the raw query, so an excluded group
produces no span. It returns None (key omitted) when spans are not computed,
``[]`` when computed without a match.

The contract search runs on UTF-8 bytes: ``bytes.lower`` is exactly the
ASCII-only fold docs/citations.md describes, and an ASCII term can only match ASCII
bytes, which never occur inside a multi-byte sequence, so every offset found is
already a byte offset on a codepoint boundary.

All-language spans (``all_languages=True``, the default through ``[search]
all_language_spans``; docs/citations.md): when
the contract computes spans the result is exactly the contract's. When it does
not only because a term is non-ASCII, every term is matched with Unicode case
folding (``str.casefold``) instead. Folding may change a character's length
(``ß`` → ``ss``), so the search runs on the folded text with a map back to the
original characters; a match covering part of one character's folding widens
to the whole character. Offsets are then converted to UTF-8 bytes, so they
always fall on codepoint boundaries. The other guarantees (sorted, disjoint,
at most 100, each term's budget) are the contract's.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from itertools import accumulate

from groove.search.query import ParsedQuery, query_phrases

MATCH_SPAN_CONTENT_MAX_BYTES = 262144
MATCH_SPAN_MAX_COUNT = 100
FALLBACK_TERM_LIMIT = 100

Query = str | ParsedQuery


def match_spans(query: Query, content: str, *,
                all_languages: bool = False) -> list[dict[str, int]] | None:
    """Byte spans of the query's terms in ``content``, folded per docs/citations.md.

    None when the query is empty/whitespace-only, when any term is non-ASCII
    (unless ``all_languages``), when ``content`` exceeds
    MATCH_SPAN_CONTENT_MAX_BYTES as UTF-8, or when it cannot be encoded as
    UTF-8 at all (lone surrogates: there are no UTF-8 offsets to give).
    """
    terms = _terms(query)
    if terms is None:
        return None
    ascii_only = all(t.isascii() for t in terms)
    if not ascii_only and not all_languages:
        return None
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        return None
    if len(data) > MATCH_SPAN_CONTENT_MAX_BYTES:
        return None
    if ascii_only:
        found = _occurrences(match_terms(query) or (), data.lower())
    else:
        found = _unicode_occurrences(terms, content)
    return [{"start": s, "end": e} for s, e in fold_spans(found)]


def _terms(query: Query) -> tuple[str, ...] | None:
    """The phrases (steps 2-5), else the whitespace split; None for a blank query.

    Not yet folded, deduplicated or cut: :func:`distinct_terms` does that, the
    same way for both the ASCII contract and the all-language spans.
    """
    text = query.positive_text if isinstance(query, ParsedQuery) else query
    if not text.strip():
        return None
    if isinstance(query, ParsedQuery):
        phrases = list(query.split_phrases)
    else:
        phrases = query_phrases(text, warn_on_cap=False)
    if not phrases:
        phrases = text.split()
    return tuple(phrases)


def distinct_terms(terms: tuple[str, ...], fold: Callable[[str], str]) -> list[str]:
    """The terms folded, deduplicated, sorted and cut to :data:`FALLBACK_TERM_LIMIT`.

    Folding comes first, so ``Rust rust`` is one term with the whole budget
    (docs/citations.md step 3 folds the terms before step 5 counts them), and
    the cut keeps 100 *distinct* terms chosen independently of word order.
    Phrases are at most 32, so the cut only ever shortens the whitespace fallback.
    """
    return sorted({fold(t) for t in terms} - {""})[:FALLBACK_TERM_LIMIT]


@lru_cache(maxsize=256)
def match_terms(query: Query) -> tuple[bytes, ...] | None:
    """The lower-cased, deduplicated ASCII terms, or None if spans are not computed.

    Terms are query_phrases of the text; only when that is empty, the
    whitespace split of the trimmed text. Either is ASCII-folded, deduplicated,
    sorted and cut to 100 (:func:`distinct_terms`): terms that differ only in
    ASCII case are one term, since they match the same bytes and counting them
    twice would only shrink every term's budget.
    Cached because the pipeline calls this once per hit with the same query.
    """
    terms = _terms(query)
    if terms is None or not all(t.isascii() for t in terms):
        return None
    return tuple(t.encode("ascii") for t in distinct_terms(terms, str.lower))


def _occurrences(terms: tuple[bytes, ...], folded: bytes) -> list[tuple[int, int]]:
    """Each term's first ``max(1, 100 // k)`` non-overlapping occurrences."""
    budget = max(1, MATCH_SPAN_MAX_COUNT // len(terms)) if terms else 0
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


def _unicode_occurrences(terms: tuple[str, ...], content: str) -> list[tuple[int, int]]:
    """Like :func:`_occurrences` with Unicode case folding, as UTF-8 byte offsets."""
    folded_terms = distinct_terms(terms, str.casefold)
    if not folded_terms:
        return []
    pieces = [ch.casefold() for ch in content]
    origin = [i for i, piece in enumerate(pieces) for _ in piece]  # folded index -> char
    folded = "".join(pieces)
    byte_at = [0, *accumulate(len(ch.encode("utf-8")) for ch in content)]
    budget = max(1, MATCH_SPAN_MAX_COUNT // len(folded_terms))
    found: list[tuple[int, int]] = []
    for term in folded_terms:
        pos = folded.find(term)
        taken = 0
        while pos != -1 and taken < budget:
            end = pos + len(term)
            found.append((byte_at[origin[pos]], byte_at[origin[end - 1] + 1]))
            taken += 1
            pos = folded.find(term, end)
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
