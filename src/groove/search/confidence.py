"""The ``low_confidence`` flag: the knowledge base probably does not answer the question.

Rule (docs/search.md, "low_confidence"), with the flag enabled
(``min_confidence_ratio`` > 0). A response is low-confidence, for the first
reason that holds (:data:`REASONS`), when:

* the query has no content word (only ``"``, ``-``, ``*`` ...) — nothing was
  asked, so nothing can be answered with confidence (``no_content_word``);
* a quoted phrase is in no candidate: the requirement could not be met
  (``quote_not_found``);
* **or the evidence is weak** (``legs_disagree``): the two legs disagree about
  the best document (:func:`legs_disagree`) **and** the best match is not far
  above this knowledge base's own cosine distribution for this question
  (:data:`LIFT_FLOOR`).

The two signals:

* **Leg agreement.** The dense leg (meaning) and the full-text leg (the
  query's own words) fail differently: when the KB holds the answer they tend
  to point at the same document; when it does not, each drifts to a different
  "nearest thing". Disagreement alone also fires on good answers whose words
  are spread over other notes, so it only counts together with a weak lift.
* **Lift over the KB's own distribution.** The cosine of the question with a
  random chunk of one script family (search/language.py) has mean ``q·μ`` and
  variance ``qᵀΣq`` (μ, Σ: the mean and covariance of that family's resident
  vectors, from a fixed sample of at most :data:`MOMENT_SAMPLE_ROWS` rows,
  computed once per index generation). The lift is
  ``(best − q·μ) / sqrt(qᵀΣq)``, divided by ``sqrt(2 ln n)``, the expected best
  of ``n`` random draws, so it means the same for a KB of 70 chunks and one of
  a million; the larger of the two families' lifts counts. It measures the
  best chunk against this KB and this question, not against a model-wide
  cosine scale (multilingual-e5 puts unrelated notes at 0.75+).

The floor was chosen on half ``A`` of every evaluation set
(benchmarks/quality.py) as the one that keeps false alarms on answerable
questions at or under 10% on every set while flagging the most unanswerable
ones; docs/search.md gives the rates on half ``B``. A flat top (best minus
tenth) was dropped: it fired on a third of answerable questions.
``min_confidence_ratio`` is kept so existing configs and clients still work:
``0`` (or a negative per-call value) disables the flag, any positive value
enables it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: How many distinct documents of the other leg the best document must be among.
AGREEMENT_DEPTH = 3
#: Weak evidence (with disagreeing legs): the best match's lift is below this.
LIFT_FLOOR = 0.85
#: A family's cosine distribution is estimated from at most this many resident vectors.
MOMENT_SAMPLE_ROWS = 4096


@dataclass(frozen=True)
class Evidence:
    """What the legs say about one question (see the module docstring)."""

    legs_disagree: bool
    lift: float  # (best − mean) / std / sqrt(2 ln n) against the best's script family


def lift(best: float, mean: float, variance: float, population: int) -> float:
    """How far ``best`` is above a random chunk, in standard deviations per sqrt(2 ln n)."""
    if variance <= 0.0 or population < 2:
        return math.inf
    return (best - mean) / math.sqrt(variance) / math.sqrt(2.0 * math.log(population))


#: Why a response is low-confidence: the code a response carries, and the line people read.
REASONS: dict[str, str] = {
    "no_content_word": "the query has no word to search for",
    "quote_not_found": "no indexed text holds the quoted phrase",
    "legs_disagree": ("the meaning and the words of the query point at different documents, "
                      "and the best match is not far above a random passage"),
}


def weak_evidence(evidence: Evidence) -> str | None:
    """The fitted rule's reason (a key of :data:`REASONS`), or None when the evidence holds."""
    if evidence.legs_disagree and evidence.lift < LIFT_FLOOR:
        return "legs_disagree"
    return None


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


def low_confidence_reason(evidence: Evidence, *, ratio: float, has_content: bool = True,
                          quotes_met: bool = True) -> str | None:
    """Why the flag is up (a key of :data:`REASONS`), or None when it is down.

    Enabled by ``ratio`` > 0. The reason named is the first that holds, in the
    order no content word, an unmet quote, weak evidence, so it is always true
    of the answer it is attached to.
    """
    if ratio <= 0:
        return None
    if not has_content:
        return "no_content_word"
    if not quotes_met:
        return "quote_not_found"
    return weak_evidence(evidence)


def is_low_confidence(evidence: Evidence, *, ratio: float, has_content: bool = True,
                      quotes_met: bool = True) -> bool:
    """The flag: :func:`low_confidence_reason` names a reason."""
    return low_confidence_reason(evidence, ratio=ratio, has_content=has_content,
                                 quotes_met=quotes_met) is not None
