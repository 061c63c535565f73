"""Cutting one over-long line by characters, shared by prose and code chunking.

Both chunkers cut a line only when it alone is over their budget (a minified
file's single line, a table row without breaks); the parts keep every
character, in order.
"""

from __future__ import annotations


def cut_line(line: str, budget: int) -> list[str]:
    """``line`` in parts of at most ``budget`` characters, cut after a space where one is
    in the second half of the part (so a word is not split), else at the budget."""
    parts = []
    rest = line
    while len(rest) > budget:
        space = max(rest.rfind(" ", budget // 2, budget), rest.rfind("\t", budget // 2, budget))
        cut = space + 1 if space >= 0 else budget
        parts.append(rest[:cut])
        rest = rest[cut:]
    if rest:
        parts.append(rest)
    return parts
