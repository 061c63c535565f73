"""MMR (SPEC §5): λ=1 is relevance order, lower λ drops near-duplicates, the
same-document penalty spreads documents, and kept hits keep their scores."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from searchkit import Corpus, Sec, unit

from groove.search.mmr import mmr_select

NEAR_DUP = unit((1, 1.0), (2, 0.05))


def pool_a_adup_b():
    pool = [(1, 1.0), (2, 0.9), (3, 0.5)]
    vectors = np.stack([unit((1, 1.0)), NEAR_DUP, unit((3, 1.0))])
    return pool, vectors, [10, 20, 30]


def test_lambda_one_is_relevance_order_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    pool, vectors, docs = pool_a_adup_b()
    with caplog.at_level(logging.WARNING, logger="groove.search.mmr"):
        picked = mmr_select(pool, vectors, docs, limit=3, lam=1.0, same_doc_penalty=0.0)
    assert picked == pool
    assert any("lambda" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)


def test_lambda_below_one_does_not_warn(caplog: pytest.LogCaptureFixture) -> None:
    pool, vectors, docs = pool_a_adup_b()
    with caplog.at_level(logging.WARNING, logger="groove.search.mmr"):
        mmr_select(pool, vectors, docs, limit=3, lam=0.7, same_doc_penalty=0.0)
    assert not caplog.records


def test_lower_lambda_removes_a_near_duplicate() -> None:
    pool, vectors, docs = pool_a_adup_b()
    assert mmr_select(pool, vectors, docs, limit=2, lam=1.0, same_doc_penalty=0.0) == [(1, 1.0), (2, 0.9)]
    assert mmr_select(pool, vectors, docs, limit=2, lam=0.5, same_doc_penalty=0.0) == [(1, 1.0), (3, 0.5)]


def test_same_doc_penalty_spreads_documents() -> None:
    pool = [(1, 1.0), (2, 0.95), (3, 0.9), (4, 0.5)]
    vectors = np.stack([unit((i, 1.0)) for i in range(4)])  # orthogonal: no redundancy term
    docs = [100, 100, 100, 200]
    assert [c for c, _ in mmr_select(pool, vectors, docs, limit=2, lam=0.9, same_doc_penalty=0.0)] == [1, 2]
    assert [c for c, _ in mmr_select(pool, vectors, docs, limit=2, lam=0.9, same_doc_penalty=1.0)] == [1, 4]


def test_mmr_keeps_the_pool_scores_and_only_picks_from_the_pool() -> None:
    rng = np.random.default_rng(3)
    pool = [(i, float(s)) for i, s in enumerate(sorted(rng.random(30), reverse=True))]
    vectors = rng.standard_normal((30, 8))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    picked = mmr_select(pool, vectors, list(rng.integers(0, 5, 30)), limit=10, lam=0.3,
                        same_doc_penalty=0.2)
    assert len(picked) == 10 and len(set(picked)) == 10
    assert set(picked) <= set(pool)
    assert picked[0] == pool[0]  # the first pick is always the most relevant


def test_equal_scores_pool_and_empty_pool() -> None:
    assert mmr_select([], np.zeros((0, 4)), [], limit=3, lam=0.5, same_doc_penalty=0.0) == []
    pool = [(5, 0.2), (6, 0.2)]
    vectors = np.stack([unit((0, 1.0)), unit((1, 1.0))])
    assert mmr_select(pool, vectors, [1, 2], limit=5, lam=0.5, same_doc_penalty=0.0) == pool


@pytest.fixture
def dupes(fixed: Corpus) -> Corpus:
    """Three near-identical chunks in one doc, two distinct ones elsewhere."""
    q = (0, 1.0)
    fixed.add("dup.md", [
        Sec("widget install guide step one", vector=unit(q, (1, 0.30))),
        Sec("widget install guide step one again", vector=unit(q, (1, 0.31))),
        Sec("widget install guide step one once more", vector=unit(q, (1, 0.32))),
    ])
    fixed.add("other.md", [Sec("widget history and design notes", vector=unit(q, (2, 0.9)))])
    fixed.add("third.md", [Sec("widget pricing for teams", vector=unit(q, (3, 1.2)))])
    return fixed


def test_pipeline_mmr_changes_membership_not_scores(dupes: Corpus) -> None:
    # This fixture is shaped for rank fusion: near-duplicates tie closely under RRF.
    plain = dupes.search("widget install", limit=3, mmr=False, fusion="rrf")
    assert dupes.paths(plain) == ["dup.md"] * 3
    diverse = dupes.search("widget install", limit=3, mmr=True, mmr_lambda=0.3, fusion="rrf")
    assert dupes.paths(diverse).count("dup.md") < 3  # a near-duplicate made way
    def fused(hit):  # a hit MMR moved above a higher one shows that one's score (raw_score: its own)
        return hit.score if hit.raw_score is None else hit.raw_score

    full = {h.chunk_id: fused(h)
            for h in dupes.search("widget install", limit=10, fusion="rrf").results}
    for hit in diverse.results:
        assert fused(hit) == full[hit.chunk_id]
    shown = [h.score for h in diverse.results]
    assert shown == sorted(shown, reverse=True)
    assert diverse.results[0].chunk_id == plain.results[0].chunk_id


def test_pipeline_mmr_lambda_one_equals_mmr_off(dupes: Corpus, caplog) -> None:
    plain = dupes.search("widget install", limit=4, mmr=False)
    with caplog.at_level(logging.WARNING, logger="groove.search.mmr"):
        same = dupes.search("widget install", limit=4, mmr=True, mmr_lambda=1.0)
    assert [(h.chunk_id, h.score) for h in same.results] == [(h.chunk_id, h.score) for h in plain.results]
    assert any("lambda" in r.getMessage() for r in caplog.records)


def test_pipeline_same_doc_penalty_from_config(dupes: Corpus) -> None:
    config = dupes.config(search={"mmr": {"enabled": True, "lambda": 0.95, "same_doc_penalty": 2.0}})
    paths = dupes.paths(dupes.search("widget install", limit=3, config=config))
    assert sorted(paths) == ["dup.md", "other.md", "third.md"]
