"""The wording helpers of groove.errors: refusals that point at what was meant."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from groove.errors import did_you_mean


def test_a_misspelling_is_answered_with_the_name_it_resembles():
    assert did_you_mean("limt", ["query", "limit", "category"]) == " (did you mean limit?)"
    assert did_you_mean("modle", ["kb_path", "model", "reranker"]) == " (did you mean model?)"
    assert did_you_mean("zzzz", ["query", "limit"]) == ""


@given(st.text(max_size=12), st.lists(st.text(min_size=1, max_size=12), max_size=8))
def test_a_guess_is_always_one_of_the_accepted_names(given_name, accepted):
    hint = did_you_mean(given_name, accepted)
    assert hint == "" or any(hint == f" (did you mean {name}?)" for name in accepted)
