"""Reranker stage (SPEC §5): an injected scorer reorders, its raw score is returned,
the pool is limit×5 (at least 50 with MMR), and a model that cannot load says so."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from searchkit import Corpus, Sec, unit

from groove.errors import ModelLoadError
from groove.rerankers import get_reranker
from groove.rerankers.fastembed import FastEmbedReranker
from groove.search.request import SearchRequest
from groove.search.rerank import rerank, rerank_pool_size


class RecordingScorer:
    """Scores a text by how often it mentions ``favourite``; records every call."""

    def __init__(self, favourite: str = "banana") -> None:
        self.favourite = favourite
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, query: str, texts: list[str]) -> list[float]:
        self.calls.append((query, list(texts)))
        return [10.0 * t.lower().count(self.favourite) - i * 0.001 for i, t in enumerate(texts)]


@pytest.fixture
def fruit(fixed: Corpus) -> Corpus:
    """80 chunks about fruit salad; the vector leg prefers low numbers, only a few say banana."""
    for d in range(8):
        secs = []
        for j in range(10):
            n = d * 10 + j
            # Same length everywhere, so bm25 does not push the banana chunks down.
            extra = " banana banana" if n in (8, 37, 61) else (" banana cherry" if n == 3 else " cherry cherry")
            secs.append(Sec(f"Fruit salad recipe number {n}{extra}.",
                            vector=unit((0, 1.0), (1 + n % 15, 0.05 + n * 0.01))))
        fixed.add(f"fruit{d}.md", secs)
    return fixed


def test_pool_size_rule() -> None:
    assert rerank_pool_size(3, mmr_on=False) == 15
    assert rerank_pool_size(3, mmr_on=True) == 50
    assert rerank_pool_size(20, mmr_on=True) == 100
    assert rerank_pool_size(20, mmr_on=False) == 100


def test_rerank_sorts_by_raw_score_with_ties_by_id() -> None:
    class Const:
        def score(self, query: str, texts: list[str]) -> list[float]:
            return [0.5, 2.0, 0.5]

    got = rerank("q", [(9, 0.1), (4, 0.2), (2, 0.3)], ["a", "b", "c"], Const())
    assert got == [(4, 2.0), (2, 0.5), (9, 0.5)]
    assert rerank("q", [], [], Const()) == []


def test_injected_scorer_reorders_and_its_raw_score_is_returned(fruit: Corpus,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    # Every search here draws its candidates as deep as a limit-3 search does (50 per leg),
    # so the limit-15 search below sees exactly the pool the reranker saw: with all 80
    # chunks tied in the full-text leg, a deeper leg would change which of them match.
    from groove.search import candidates, pipeline

    depth = candidates.candidate_count(3)
    monkeypatch.setattr(pipeline, "candidate_count", lambda limit: depth)
    monkeypatch.setattr(candidates, "candidate_count", lambda limit: depth)
    fused = fruit.config(search={"document_margin": 0})  # the reranked order, no diversity stage
    plain = fruit.search("fruit salad recipe", limit=3, rerank=False, config=fused)
    scorer = RecordingScorer()
    ranked = fruit.search("fruit salad recipe", limit=3, rerank=True, scorer=scorer, mmr=False,
                          config=fused)
    assert len(scorer.calls) == 1
    query, texts = scorer.calls[0]
    assert query == "fruit salad recipe"
    assert len(texts) == 15  # limit × 5
    # Only chunks inside the fused top-15 pool can be promoted.
    pool_ids = [h.chunk_id for h in fruit.search("fruit salad recipe", limit=15, rerank=False,
                                                 config=fused).results]
    pool_texts = {h.chunk_id: h.content for h in fruit.search("fruit salad recipe", limit=15,
                                                              config=fused).results}
    assert texts == [pool_texts[c] for c in pool_ids]
    assert [h.chunk_id for h in ranked.results] != [h.chunk_id for h in plain.results]
    expected = sorted(((c, 10.0 * pool_texts[c].lower().count("banana") - i * 0.001)
                       for i, c in enumerate(pool_ids)), key=lambda t: (-t[1], t[0]))[:3]
    assert [(h.chunk_id, h.score) for h in ranked.results] == [(c, pytest.approx(s)) for c, s in expected]
    assert "recipe number 8 banana banana" in ranked.results[0].content
    assert "recipe number 3 banana" in ranked.results[1].content
    assert not any(w in h.content for h in ranked.results for w in ("number 37", "number 61"))


def test_pool_is_at_least_50_when_mmr_is_on(fruit: Corpus) -> None:
    scorer = RecordingScorer()
    fruit.search("fruit salad recipe", limit=3, rerank=True, scorer=scorer, mmr=True, mmr_lambda=0.5)
    assert len(scorer.calls[0][1]) == 50
    fruit.search("fruit salad recipe", limit=12, rerank=True, scorer=scorer, mmr=True)
    assert len(scorer.calls[1][1]) == 60
    fruit.search("fruit salad recipe", limit=12, rerank=True, scorer=scorer, mmr=False)
    assert len(scorer.calls[2][1]) == 60


def test_rerank_off_or_not_requested_never_calls_the_scorer(fruit: Corpus) -> None:
    scorer = RecordingScorer()
    fruit.search("fruit salad recipe", limit=3, rerank=False, scorer=scorer)
    fruit.search("fruit salad recipe", limit=3, scorer=scorer)  # rerank_by_default is false
    assert scorer.calls == []
    config = fruit.config(rerank_by_default=True)
    fruit.search("fruit salad recipe", limit=3, scorer=scorer, config=config)
    assert len(scorer.calls) == 1


def test_scorer_reads_the_positive_text_only(fruit: Corpus) -> None:
    scorer = RecordingScorer()
    fruit.search('fruit salad -banana -"number 5"', limit=3, rerank=True, scorer=scorer)
    query, texts = scorer.calls[0]
    assert "banana" not in query and "number" not in query and "fruit salad" in query
    assert not any("banana" in t or "number 5" in t for t in texts)


def test_rerank_runs_before_mmr_and_mmr_keeps_reranker_scores(fruit: Corpus) -> None:
    # λ=1 makes MMR plain relevance order: the result must be the head of the
    # reranked 50-pool, with the reranker's raw scores.
    reranked = fruit.search("fruit salad recipe", limit=10, rerank=True, scorer=RecordingScorer())
    both = fruit.search("fruit salad recipe", limit=3, rerank=True, scorer=RecordingScorer(),
                        mmr=True, mmr_lambda=1.0)
    assert [(h.chunk_id, h.score) for h in both.results] == \
           [(h.chunk_id, h.score) for h in reranked.results[:3]]


def test_reranker_reads_the_stored_breadcrumb_but_callers_never_see_it(fixed: Corpus) -> None:
    fixed.add("ctx.md", [Sec("Plain body text about lamps.", context="Guide > Lighting",
                             vector=unit((0, 1.0)))])
    scorer = RecordingScorer()
    response = fixed.search("lamps", rerank=True, scorer=scorer)
    assert scorer.calls[0][1] == ["Guide > Lighting\n\nPlain body text about lamps."]
    body = response.to_json()["results"][0]
    assert body["content"] == "Plain body text about lamps." and "context" not in body


def test_knowledge_base_uses_its_injected_scorer(make_kb, write_files, tmp_path: Path) -> None:
    kb_dir = write_files(tmp_path / "kb", {
        "a.md": "# Apples\n\nApples are crisp fruit that grow on trees in orchards everywhere.\n",
        "b.md": "# Bananas\n\nBananas are soft fruit that grow in bunches in warm places.\n",
    })
    kb = make_kb(kb_dir)
    kb.index()
    kb._scorer = RecordingScorer("bananas")
    response = kb.search(SearchRequest(query="apples fruit", rerank=True, limit=2))
    assert response.results[0].path == "b.md"
    # Contextual mode is the default: the reranker reads "Bananas" (the breadcrumb) too.
    read = "Bananas\n\n" + response.results[0].content
    assert response.results[0].score == pytest.approx(10.0 * read.lower().count("bananas"), abs=0.01)


def test_fastembed_reranker_with_empty_cache_offline_fails_fast_and_clearly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "empty-cache"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.monotonic()
    with pytest.raises(ModelLoadError) as info:
        FastEmbedReranker("bge-reranker-base", cache_dir=cache)
    assert time.monotonic() - start < 10
    message = str(info.value)
    assert "bge-reranker-base" in message and "BAAI/bge-reranker-base" in message
    assert str(cache) in message and "HF_HUB_OFFLINE" in message


def test_pipeline_reports_the_reranker_load_failure(fruit: Corpus, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache2"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    config = fruit.config(reranker="jina-reranker-v2-ml", model_cache_dir=str(cache))
    with pytest.raises(ModelLoadError, match="jina-reranker-v2-ml"):
        fruit.search("fruit salad", rerank=True, config=config)


def test_unknown_reranker_id_is_refused_with_the_choices() -> None:
    with pytest.raises(ModelLoadError, match="bge-reranker-v2-m3"):
        get_reranker("no-such-reranker")
