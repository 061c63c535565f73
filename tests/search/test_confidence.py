"""low_confidence (SPEC §5): ≥2 results, mean>0, max/mean < ratio; 0 disables;
the per-call override (non-finite → server value, negative → 0)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from searchkit import Corpus, Sec, unit

from groove.search.confidence import is_low_confidence


@pytest.mark.parametrize(
    ("scores", "ratio", "low"),
    [
        ([1.0, 1.0], 1.5, True),  # max/mean = 1
        ([3.0, 1.0], 1.5, False),  # max/mean = 1.5, not < 1.5
        ([2.9, 1.0], 1.5, True),  # 2.9/1.95 < 1.5
        ([1.0], 1.5, False),  # one result
        ([], 1.5, False),
        ([0.0, 0.0], 1.5, False),  # mean 0
        ([-1.0, -2.0], 1.5, False),  # mean < 0 (raw reranker scores)
        ([1.0, 1.0], 0.0, False),  # 0 disables
        ([5.0, 1.0, 1.0], 3.0, True),  # 5/2.33 < 3
        ([5.0, 1.0, 1.0], 2.0, False),
    ],
)
def test_the_rule(scores: list[float], ratio: float, low: bool) -> None:
    assert is_low_confidence(scores, ratio) is low


@given(st.lists(st.floats(0.001, 1e6), min_size=2, max_size=30), st.floats(0.0, 10.0))
def test_rule_matches_its_definition(scores: list[float], ratio: float) -> None:
    mean = sum(scores) / len(scores)
    assert is_low_confidence(scores, ratio) is (ratio > 0 and max(scores) / mean < ratio)


@pytest.fixture
def flat(fixed: Corpus) -> Corpus:
    """Ten chunks that both legs rank in the same order: the fused scores are close."""
    for i in range(10):
        fixed.add(f"n{i}.md", [Sec(f"Ocean tides note {i} " + "x" * i, vector=unit((0, 1.0), (1, 0.1 * i)))])
    return fixed


def test_pipeline_flag_with_server_value_and_overrides(flat: Corpus) -> None:
    response = flat.search("ocean tides", limit=5)
    scores = [h.score for h in response.results]
    ratio = max(scores) / (sum(scores) / len(scores))
    assert 1.0 < ratio < 1.5
    assert response.low_confidence is True  # default 1.5
    assert flat.search("ocean tides", limit=5, min_confidence_ratio=ratio * 0.99).low_confidence is False
    assert flat.search("ocean tides", limit=5, min_confidence_ratio=ratio * 1.01).low_confidence is True
    assert flat.search("ocean tides", limit=5, min_confidence_ratio=0).low_confidence is False
    assert flat.search("ocean tides", limit=5, min_confidence_ratio=-4).low_confidence is False
    # Non-finite means "the server's value": with the server at 0 that is disabled.
    off = flat.config(search={"min_confidence_ratio": 0})
    assert flat.search("ocean tides", limit=5, config=off).low_confidence is False
    assert flat.search("ocean tides", limit=5, config=off, min_confidence_ratio=float("nan")).low_confidence is False
    assert flat.search("ocean tides", limit=5, config=off, min_confidence_ratio=2.0).low_confidence is True
    assert flat.search("ocean tides", limit=5, min_confidence_ratio=float("inf")).low_confidence is True


def test_one_result_is_never_low_confidence(flat: Corpus) -> None:
    assert flat.search("ocean tides", limit=1, min_confidence_ratio=100).low_confidence is False


def test_flag_uses_the_reranker_scores_when_it_ran(flat: Corpus) -> None:
    class Standout:
        def score(self, query: str, texts: list[str]) -> list[float]:
            return [100.0 if t.startswith("Ocean tides note 3") else 1.0 for t in texts]

    response = flat.search("ocean tides", limit=5, rerank=True, scorer=Standout())
    assert response.results[0].score == 100.0
    assert response.low_confidence is False  # 100 / 20.8 is far above 1.5
