"""Document diversity of the top results (docs/search.md, "Diversity").

Two rules, applied in this order to the whole ranked pool after fusion and
reranking and before MMR:

* **Per-document cap** (``max_chunks_per_document``): a later chunk of a
  document that already has its quota is dropped; everything else keeps its
  order and score, so the ``limit`` cut that follows is filled from other
  documents. ``0`` means unlimited.
* **Same-document margin** (``document_margin``): while the first ``limit``
  results are chosen, a further chunk of a document already shown is taken
  only if its relevance beats the best chunk of the next not-yet-shown
  document by at least the margin; otherwise that document's chunk goes first
  and the repeat waits for the next position. Relevance is the fused score
  min-max normalised over the pool (so the margin means the same under RRF
  and convex fusion). A question about two documents thereby gets both in the
  top five, while a question about two sections of one document still gets
  both sections when the second is clearly better than anything else. Scores
  are unchanged; only the order of the first ``limit`` moves. ``0`` is off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

Ranked = list[tuple[int, float]]


def cap_per_document(ranked: Sequence[tuple[int, float]], doc_of: Callable[[int], int],
                     cap: int) -> Ranked:
    """``ranked`` without the chunks beyond the first ``cap`` of each document."""
    if cap <= 0:
        return list(ranked)
    taken: dict[int, int] = {}
    kept: Ranked = []
    for chunk_id, score in ranked:
        doc = doc_of(chunk_id)
        if taken.get(doc, 0) < cap:
            taken[doc] = taken.get(doc, 0) + 1
            kept.append((chunk_id, score))
    return kept


def prefer_new_documents(ranked: Sequence[tuple[int, float]], doc_of: Callable[[int], int],
                         margin: float, limit: int) -> Ranked:
    """Reorder the first ``limit`` of ``ranked`` by the same-document margin rule above.

    The result is a permutation of ``ranked``: the chosen first ``limit``
    followed by the others in their original order. Deterministic: among
    equals the better-ranked chunk wins.
    """
    if margin <= 0.0 or len(ranked) < 2:
        return list(ranked)
    scores = [s for _, s in ranked]
    low, span = min(scores), max(scores) - min(scores)
    if span <= 0.0:
        return list(ranked)
    docs = [doc_of(c) for c, _ in ranked]
    remaining = list(range(len(ranked)))
    shown: set[int] = set()
    picked: list[int] = []
    while remaining and len(picked) < limit:
        choice = remaining[0]
        if docs[choice] in shown:
            fresh = next((i for i in remaining if docs[i] not in shown), None)
            if fresh is not None and (scores[choice] - low) / span < (
                    (scores[fresh] - low) / span + margin):
                choice = fresh
        picked.append(choice)
        remaining.remove(choice)
        shown.add(docs[choice])
    return [ranked[i] for i in picked + remaining]
