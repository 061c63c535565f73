"""How a batch is cut into one part per Ray actor: nothing lost, reordered or left empty."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from groove.indexing.embedding_pass import EmbedBatch, EmbedItem
from groove.indexing.ray_executor import split_by_tokens


@given(tokens=st.lists(st.integers(1, 600), min_size=1, max_size=80), parts=st.integers(1, 16))
def test_parts_concatenate_to_the_batch_in_order(tokens, parts):
    batch = EmbedBatch(tuple(EmbedItem(i, 0, f"t{i}", n) for i, n in enumerate(tokens)))
    pieces = split_by_tokens(batch, parts)
    assert [t for piece in pieces for t in piece] == batch.texts
    assert 1 <= len(pieces) <= min(parts, len(tokens))
    assert all(pieces)


def test_equal_items_are_shared_evenly():
    batch = EmbedBatch(tuple(EmbedItem(i, 0, f"t{i}", 100) for i in range(8)))
    assert [len(p) for p in split_by_tokens(batch, 2)] == [4, 4]
