"""low_confidence (docs/search.md): a flat top, or disagreeing legs with a weak lift over the
KB's own cosine distribution; no content word or an unmet quote; 0 disables; the per-call
override (non-finite → server value, negative → 0); hand-computed cases, the rules as
properties, and pipeline cases where the KB does and does not hold the answer."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from searchkit import Corpus, Sec, unit

from groove.search.confidence import (
    AGREEMENT_DEPTH,
    LIFT_FLOOR,
    TOP_GAP_FLOOR,
    Evidence,
    first_documents,
    is_low_confidence,
    legs_disagree,
    lift,
    top_gap,
    weak_evidence,
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


STRONG = Evidence(legs_disagree=False, top_gap=0.05, lift=2.0)


def test_ratio_zero_disables_and_every_reason_flags() -> None:
    weak = Evidence(legs_disagree=True, top_gap=0.05, lift=0.5)
    assert is_low_confidence(weak, ratio=1.5) is True
    assert is_low_confidence(weak, ratio=0.0) is False
    assert is_low_confidence(STRONG, ratio=1.5) is False
    assert is_low_confidence(STRONG, ratio=1.5, has_content=False) is True
    assert is_low_confidence(STRONG, ratio=1.5, quotes_met=False) is True
    assert is_low_confidence(STRONG, ratio=0.0, has_content=False, quotes_met=False) is False


@given(st.booleans(), st.floats(0, 1), st.floats(-5, 5))
def test_weak_evidence_is_a_flat_top_or_disagreement_with_a_weak_lift(dis, gap, gain) -> None:
    expected = gap < TOP_GAP_FLOOR or (dis and gain < LIFT_FLOOR)
    assert weak_evidence(Evidence(legs_disagree=dis, top_gap=gap, lift=gain)) is expected


def test_top_gap_and_lift_by_hand() -> None:
    assert top_gap([0.9, 0.8, 0.7], rank=3) == pytest.approx(0.2)
    assert top_gap([0.9, 0.8], rank=3) == math.inf  # too few candidates to call the top flat
    assert lift(0.9, 0.7, 0.01, 100) == pytest.approx(2.0 / math.sqrt(2 * math.log(100)))
    assert lift(0.9, 0.7, 0.0, 100) == math.inf
    assert lift(0.9, 0.7, 0.01, 1) == math.inf


@given(st.floats(-1, 1), st.floats(-1, 1), st.floats(1e-6, 1), st.integers(2, 10**6),
       st.integers(2, 10**6))
def test_lift_grows_with_the_best_score_and_is_scaled_for_kb_size(best, mean, var, n, m) -> None:
    assert lift(best + 0.1, mean, var, n) > lift(best, mean, var, n)
    if n < m and best > mean:
        assert lift(best, mean, var, n) > lift(best, mean, var, m)


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


def test_a_query_without_searchable_words_is_not_flagged_for_disagreement(split: Corpus) -> None:
    assert split.search("zz", limit=3).low_confidence is False


def test_the_lift_uses_the_kbs_own_cosine_distribution(split: Corpus) -> None:
    split.search("ocean tides", limit=3)  # loads the resident vectors
    vectors = split._vectors
    assert vectors is not None
    mean, cov = vectors.cosine_moments()
    matrix = vectors.vectors_for([int(i) for i in vectors.ids]).astype(np.float64)
    q = unit((0, 1.0)).astype(np.float64)
    assert float(q @ mean) == pytest.approx(float((matrix @ q).mean()), abs=1e-6)
    assert float(q @ cov @ q) == pytest.approx(float((matrix @ q).var()), abs=1e-6)
