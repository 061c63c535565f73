"""Cutting an over-long line (indexing/cutting.py): every character kept, in order, in
parts within the budget, split after a space when one is near the end of a part."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from groove.indexing.cutting import cut_line


@given(st.text(alphabet=st.sampled_from("ab \t漢"), max_size=400), st.integers(1, 60))
def test_the_parts_keep_every_character_within_the_budget(line, budget):
    parts = cut_line(line, budget)
    assert "".join(parts) == line
    assert all(0 < len(part) <= budget for part in parts)


def test_a_word_is_not_split_when_a_space_is_near():
    assert cut_line("alpha beta gamma", 12) == ["alpha beta ", "gamma"]
