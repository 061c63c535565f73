"""The ``low_confidence`` flag: the two retrievers do not agree on where the answer is.

Rule (docs/search.md, "low_confidence"): with the flag enabled
(``min_confidence_ratio`` > 0) and a query the full-text leg can search, the
response is low-confidence when **neither leg's best document is among the
other leg's first** :data:`AGREEMENT_DEPTH` **documents** — or when the
full-text leg found nothing at all.

Why this evidence: the dense leg (meaning) and the full-text leg (the query's
own words) fail differently. When the KB holds the answer they tend to point
at the same document; when it does not, each drifts to a different "nearest
thing". The test is rank-based, so it needs no calibration against the
model's cosine range (multilingual-e5 puts unrelated notes at 0.75+) or the
index's bm25 scale: it means the same for every model and every index.

What it is not: the old ``max(score) / mean(score)`` test over fused scores,
which fired on nearly every query because RRF scores are flat by
construction. ``min_confidence_ratio`` is kept so existing configs and
clients still work: ``0`` (or a negative per-call value) disables the flag,
any positive value enables it.

A query with no phrase the full-text index can match (every term under three
characters) has no lexical evidence, so it is never flagged.
"""

from __future__ import annotations

from collections.abc import Sequence

#: How many distinct documents of the other leg the best document must be among.
AGREEMENT_DEPTH = 3


def first_documents(doc_ids: Sequence[int], count: int) -> list[int]:
    """The first ``count`` distinct documents of a leg, in rank order."""
    out: list[int] = []
    for doc in doc_ids:
        if doc not in out:
            out.append(doc)
            if len(out) == count:
                break
    return out


def legs_disagree(vector_docs: Sequence[int], fts_docs: Sequence[int],
                  depth: int = AGREEMENT_DEPTH) -> bool:
    """True when neither leg's best document is in the other leg's first ``depth`` documents.

    ``vector_docs`` / ``fts_docs`` are the legs' document ids in rank order
    (repeats allowed: one per chunk). An empty full-text leg disagrees; an
    empty vector leg (nothing allowed) does not.
    """
    if not vector_docs:
        return False
    if not fts_docs:
        return True
    vec, fts = first_documents(vector_docs, depth), first_documents(fts_docs, depth)
    return vec[0] not in fts and fts[0] not in vec


def is_low_confidence(vector_docs: Sequence[int], fts_docs: Sequence[int], *,
                      ratio: float, lexical_query: bool) -> bool:
    """The flag: enabled by ``ratio`` > 0, judged only for queries FTS can search."""
    if ratio <= 0 or not lexical_query:
        return False
    return legs_disagree(vector_docs, fts_docs)
