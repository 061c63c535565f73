"""The ``low_confidence`` flag: no hit stands out from the rest."""

from __future__ import annotations

from collections.abc import Sequence


def is_low_confidence(scores: Sequence[float], ratio: float) -> bool:
    """True iff ≥ 2 results, mean > 0 and max/mean < ratio (ratio 0 disables)."""
    if ratio <= 0 or len(scores) < 2:
        return False
    mean = sum(scores) / len(scores)
    if mean <= 0:
        return False
    return max(scores) / mean < ratio
