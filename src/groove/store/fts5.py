"""FTS5 query syntax shared by the search legs and the store: one quoting rule.

A phrase is wrapped in double quotes with every inner ``"`` doubled, so any
text (operators, colons, parentheses) is matched literally; phrases are
joined with ``OR``.
"""

from __future__ import annotations

from collections.abc import Iterable


def or_phrases(phrases: Iterable[str]) -> str:
    """``"p1" OR "p2"`` with FTS5 string quoting."""
    return " OR ".join('"' + p.replace('"', '""') + '"' for p in phrases)
