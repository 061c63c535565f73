"""Quoted phrases are requirements (docs/search.md, "Quotes").

A hit that contains every quoted phrase of the query ranks before one that
contains fewer; among hits with the same count the fused order is kept
(a stable partition). Hits without the phrase are demoted, not dropped
(*decision*): when nothing in the knowledge base contains the phrase the
closest hits are still shown, and the response is flagged ``low_confidence``
instead, because the requirement could not be met.

Containment is tested on the chunk's heading and content with Unicode case
folding and runs of whitespace treated as one space, so ``"DNS rebinding"``
matches ``DNS\\nrebinding`` and ``dns rebinding``. Only the candidate pool
(at most :func:`~groove.search.candidates.candidate_count` chunks) is read,
so the cost does not grow with the knowledge base.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

_SPACES = re.compile(r"\s+")

Ranked = list[tuple[int, float]]


def fold(text: str) -> str:
    """Case-folded text with every run of whitespace turned into one space."""
    return _SPACES.sub(" ", text.casefold())


def quoted_count(text: str, phrases: Sequence[str]) -> int:
    """How many of ``phrases`` occur in ``text`` (both folded as above)."""
    folded = fold(text)
    return sum(1 for phrase in phrases if fold(phrase).strip() in folded)


def require_quoted(ranked: Sequence[tuple[int, float]], texts: Mapping[int, str],
                   phrases: Sequence[str]) -> tuple[Ranked, bool]:
    """``ranked`` with hits holding more quoted phrases first; and whether any holds all.

    ``texts`` maps chunk ids to their heading and content; a chunk without a
    text counts as holding none. With no phrases, ``ranked`` is returned as is.
    """
    if not phrases:
        return list(ranked), True
    counts = {c: quoted_count(texts.get(c, ""), phrases) for c, _ in ranked}
    order = sorted(range(len(ranked)), key=lambda i: -counts[ranked[i][0]])
    met = any(n == len(phrases) for n in counts.values())
    return [ranked[i] for i in order], met
