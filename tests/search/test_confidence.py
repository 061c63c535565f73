"""low_confidence (docs/search.md): the legs' best documents disagree; 0 disables; the
per-call override (non-finite → server value, negative → 0); hand-computed cases, the
rule as a property, and pipeline cases where the KB does and does not hold the answer."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from searchkit import Corpus, Sec, unit

from groove.search.confidence import (
    AGREEMENT_DEPTH,
    first_documents,
    is_low_confidence,
    legs_disagree,
)


@pytest.mark.parametrize(
    ("vector", "fts", "low"),
    [
        ([1, 1, 2], [1, 3], False),  # same best document
        ([1, 2, 3], [4, 1], False),  # vector's best is fts's 2nd document
        ([1, 2, 3], [4, 5, 6, 7], True),  # no overlap at all
        ([4, 5, 6], [9, 9, 9, 8, 7, 4], True),  # 4 is fts's 4th distinct document
        ([9, 8, 7, 6], [6, 5], True),  # fts's best is vector's 4th document
        ([9, 8, 6], [6, 5], False),  # ... and 3rd is close enough
        ([1, 2], [], True),  # the full-text leg found nothing
        ([], [], False),  # nothing allowed at all
    ],
)
def test_the_rule(vector: list[int], fts: list[int], low: bool) -> None:
    assert legs_disagree(vector, fts) is low


def test_ratio_zero_disables_and_vector_only_queries_are_never_flagged() -> None:
    assert is_low_confidence([1], [2], ratio=1.5, lexical_query=True) is True
    assert is_low_confidence([1], [2], ratio=0.0, lexical_query=True) is False
    assert is_low_confidence([1], [], ratio=1.5, lexical_query=False) is False


docs = st.lists(st.integers(0, 8), max_size=12)


@given(docs, docs)
def test_rule_matches_its_definition(vector: list[int], fts: list[int]) -> None:
    top_v, top_f = first_documents(vector, AGREEMENT_DEPTH), first_documents(fts, AGREEMENT_DEPTH)
    expected = bool(vector) and (not fts or (top_v[0] not in top_f and top_f[0] not in top_v))
    assert legs_disagree(vector, fts) is expected
    assert legs_disagree(vector, fts) is legs_disagree(vector + vector, fts)  # chunk repeats


@pytest.fixture
def split(fixed: Corpus) -> Corpus:
    """Words and vectors point at different notes unless the query names the right one."""
    fixed.add("tides.md", [Sec("Ocean tides rise twice a day near the harbour.", vector=unit((0, 1.0)))])
    for i in range(4):
        fixed.add(f"sea{i}.md", [Sec(f"Harbour wall survey {i}: salt spray on the stones.",
                                     vector=unit((0, 1.0), (3, 0.2 + 0.1 * i)))])
    for i in range(5):
        fixed.add(f"other{i}.md", [Sec(f"Garden compost heap number {i} and its worms.",
                                       vector=unit((1, 1.0), (2, 0.1 * i)))])
    return fixed


def test_agreeing_legs_are_confident_and_disagreeing_ones_are_not(split: Corpus) -> None:
    # Vector leg (query vector on axis 0) and the words "ocean tides" both find tides.md.
    assert split.search("ocean tides", limit=3).low_confidence is False
    # The words only find compost notes while the vector still points at tides.md.
    assert split.search("compost worms", limit=3).low_confidence is True


def test_overrides_and_the_server_setting(split: Corpus) -> None:
    assert split.search("compost worms", limit=3, min_confidence_ratio=0).low_confidence is False
    assert split.search("compost worms", limit=3, min_confidence_ratio=-4).low_confidence is False
    off = split.config(search={"min_confidence_ratio": 0})
    assert split.search("compost worms", limit=3, config=off).low_confidence is False
    assert split.search("compost worms", limit=3, config=off,
                        min_confidence_ratio=float("nan")).low_confidence is False
    assert split.search("compost worms", limit=3, config=off,
                        min_confidence_ratio=2.0).low_confidence is True
    assert split.search("compost worms", limit=3,
                        min_confidence_ratio=float("inf")).low_confidence is True


def test_a_query_without_searchable_words_is_never_flagged(split: Corpus) -> None:
    assert split.search("zz", limit=3).low_confidence is False
