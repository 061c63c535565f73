"""The byte-coverage guarantee of the code chunker, as one assertion the tests share."""

from __future__ import annotations

from groove.indexing.code_chunking import Plan
from groove.indexing.quality import SHORT_CHARS


def assert_covers(text: str, plan: Plan, *, max_pieces: int | None = None) -> None:
    """Every line is in exactly one kept piece, or in a dropped fragment shorter than
    SHORT_CHARS, or blank; kept pieces are in order and never overlap."""
    lines = text.split("\n")
    owner: list[str | None] = [None] * len(lines)
    for label, pieces in (("kept", plan.pieces), ("dropped", plan.dropped)):
        for piece in pieces:
            assert 0 <= piece.first <= piece.last < len(lines)
            for i in range(piece.first, piece.last + 1):
                assert owner[i] is None, f"line {i} is in two pieces"
                owner[i] = label
    for piece in plan.dropped:
        assert len("\n".join(lines[piece.first:piece.last + 1]).strip()) < SHORT_CHARS
    for i, label in enumerate(owner):
        assert label is not None or not lines[i].strip(), f"line {i} {lines[i]!r} was lost"
    firsts = [(p.first, p.last) for p in plan.pieces]
    assert firsts == sorted(firsts)
    assert all(a[1] < b[0] for a, b in zip(firsts, firsts[1:], strict=False))
    if text.strip():
        assert plan.pieces, "a file with text must have a chunk"
    if max_pieces is not None:
        assert len(plan.pieces) <= max_pieces
