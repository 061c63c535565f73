"""Quoted phrases are requirements, codes soft ones (docs/search.md, "Quotes and codes").

A hit that contains every quoted phrase of the query ranks before one that
contains fewer; among hits with the same count, one holding more of the
query's **codes** (``PG-E311``, ``BL-305``, ``P2``: search/query.py) goes
first, and otherwise the fused order is kept (a stable partition). A code is
what a user copies from a screen or a ticket, so a note that holds it is
about it; unlike a quote, a code no candidate holds does not flag the
response (a code is also typed without quotes in passing). Hits without the phrase are demoted, not dropped
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


def code_count(text: str, codes: Sequence[str]) -> int:
    """How many of ``codes`` occur in ``text`` as whole words (case-folded)."""
    folded = text.casefold()
    return sum(1 for code in codes if re.search(
        rf"(?<![a-z0-9]){re.escape(code.casefold())}(?![a-z0-9])", folded))


def require_quoted(ranked: Sequence[tuple[int, float]], texts: Mapping[int, str],
                   phrases: Sequence[str], codes: Sequence[str] = ()) -> tuple[Ranked, bool]:
    """``ranked`` with hits holding more quoted phrases, then more codes, first; and whether
    any hit holds every quoted phrase.

    ``texts`` maps chunk ids to their heading and content; a chunk without a
    text counts as holding none. With no phrases and no codes, ``ranked`` is
    returned as is.
    """
    if not phrases and not codes:
        return list(ranked), True
    quoted = {c: quoted_count(texts.get(c, ""), phrases) for c, _ in ranked}
    coded = {c: code_count(texts.get(c, ""), codes) for c, _ in ranked}
    order = sorted(range(len(ranked)),
                   key=lambda i: (-quoted[ranked[i][0]], -coded[ranked[i][0]]))
    met = not phrases or any(n == len(phrases) for n in quoted.values())
    return [ranked[i] for i in order], met
