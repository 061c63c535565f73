"""low_confidence (docs/search.md): disagreeing legs with a weak lift over the KB's own cosine
distribution; no content word or an unmet quote, each with its reason; 0 disables; the per-call
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
    REASONS,
    Evidence,
    first_documents,
    is_low_confidence,
    legs_disagree,
    lift,
    low_confidence_reason,
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


STRONG = Evidence(legs_disagree=False, lift=2.0)


def test_ratio_zero_disables_and_every_reason_flags() -> None:
    weak = Evidence(legs_disagree=True, lift=0.5)
    assert is_low_confidence(weak, ratio=1.5) is True
    assert is_low_confidence(weak, ratio=0.0) is False
    assert is_low_confidence(STRONG, ratio=1.5) is False
    assert is_low_confidence(STRONG, ratio=1.5, has_content=False) is True
    assert is_low_confidence(STRONG, ratio=1.5, quotes_met=False) is True
    assert is_low_confidence(STRONG, ratio=0.0, has_content=False, quotes_met=False) is False


@given(st.booleans(), st.floats(-5, 5))
def test_weak_evidence_is_disagreement_with_a_weak_lift(dis, gain) -> None:
    expected = "legs_disagree" if dis and gain < LIFT_FLOOR else None
    assert weak_evidence(Evidence(legs_disagree=dis, lift=gain)) == expected


@given(st.booleans(), st.floats(-5, 5), st.booleans(), st.booleans(), st.floats(-2, 2))
def test_the_reason_given_is_true_of_the_answer(dis, gain, content, quotes, ratio) -> None:
    """The reason named always holds for the evidence it is attached to, and agreeing legs
    are never told that they point at different documents."""
    evidence = Evidence(legs_disagree=dis, lift=gain)
    reason = low_confidence_reason(evidence, ratio=ratio, has_content=content, quotes_met=quotes)
    assert (reason is not None) is is_low_confidence(evidence, ratio=ratio, has_content=content,
                                                     quotes_met=quotes)
    if reason is None:
        return
    assert reason in REASONS and ratio > 0
    assert {"no_content_word": not content,
            "quote_not_found": content and not quotes,
            "legs_disagree": content and quotes and dis and gain < LIFT_FLOOR}[reason]


def test_lift_by_hand() -> None:
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


def test_the_reason_is_given_and_true(split: Corpus) -> None:
    flagged = split.search("compost worms", limit=3)
    assert flagged.low_confidence_reason == "legs_disagree"
    body = flagged.to_json()
    assert body["low_confidence_reason"] == "legs_disagree"
    assert "different documents" in body["low_confidence_note"]
    quoted = split.search('"tidal bore" ocean tides', limit=3)
    assert quoted.low_confidence_reason == "quote_not_found"
    agreed = split.search("ocean tides", limit=3)
    # both legs put tides.md first: whatever else is said, "different documents" is not
    assert agreed.results[0].path == "tides.md"
    assert agreed.low_confidence_reason != "legs_disagree"
    assert "low_confidence_reason" not in agreed.to_json()


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
    found = vectors.moments()
    mean, cov = found.mean, found.cov
    matrix = vectors.vectors_for([int(i) for i in vectors.ids]).astype(np.float64)
    q = unit((0, 1.0)).astype(np.float64)
    assert float(q @ mean) == pytest.approx(float((matrix @ q).mean()), abs=1e-6)
    assert float(q @ cov @ q) == pytest.approx(float((matrix @ q).var()), abs=1e-6)
