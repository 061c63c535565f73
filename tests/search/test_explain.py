"""``explain``: the trace agrees with the ranking it explains, and costs nothing unasked."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groove.search.request import SearchRequest

NOTES = {
    "rust/async.md": "# Async Rust\n\n## Spawning\n\nSpawn tasks with tokio::spawn and await "
                     "the handle.\n\n## Blocking\n\nBlocking calls go to spawn_blocking so the "
                     "reactor is not starved.\n\n## Cancellation\n\nDropping a handle does not "
                     "cancel the task; abort it.\n",
    "rust/errors.md": "# Errors\n\n## Results\n\nReturn Result and use the question mark "
                      "operator.\n\n## Panics\n\nA panic in a spawned task is caught by the "
                      "join handle.\n",
    "search/fusion.md": "# Fusion\n\n## RRF\n\nReciprocal rank fusion adds one over k plus "
                        "rank.\n\n## Convex\n\nThe convex combination weighs normalised "
                        "scores.\n",
    "cooking/bread.md": "# Bread\n\n## Starter\n\nFeed the sourdough starter flour and water "
                        "daily.\n\n## Baking\n\nBake the loaf in a hot dutch oven.\n",
    "tea/sencha.md": "# 煎茶\n\n## 淹れ方\n\n急須にお湯を注ぎ、一分待つ。\n",
}
QUERIES = ["spawn tasks", "handle", "fusion rank", "sourdough starter", "お茶 淹れ方",
           "panic in a spawned task", "blocking reactor", "score"]


@pytest.fixture(scope="module")
def kb(tmp_path_factory, embedder):
    from groove.config import load_config
    from groove.kb import KnowledgeBase

    root = tmp_path_factory.mktemp("explain")
    for rel, text in NOTES.items():
        (root / "kb" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "kb" / rel).write_text(text, encoding="utf-8")
    knowledge = KnowledgeBase(load_config(kb_path=root / "kb", cwd=root), embedder=embedder)
    knowledge.index()
    yield knowledge
    knowledge.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(QUERIES), st.integers(1, 8), st.sampled_from([None, "rrf", "convex"]),
       st.sampled_from([None, True]), st.sampled_from([None, 0, 1]))
def test_the_explanation_leads_from_the_fusion_to_the_final_rank(kb, query, limit, fusion, mmr,
                                                                  per_doc):
    request = SearchRequest(query=query, limit=limit, fusion=fusion, mmr=mmr,
                            max_chunks_per_document=per_doc, min_confidence_ratio=0)
    plain = kb.search(request)
    explained = kb.search(request.replace(explain=True))
    assert [(h.chunk_id, h.score) for h in explained.results] == [
        (h.chunk_id, h.score) for h in plain.results]  # explaining changes nothing
    assert all(h.explain is None for h in plain.results)
    fused_ranks = []
    for rank, hit in enumerate(explained.results, 1):
        e = hit.explain
        assert e["final"] == {"rank": rank, "score": hit.score,
                              **({"raw_score": hit.raw_score} if hit.raw_score is not None else {})}
        fusion_step = e["fusion"]
        assert fusion_step["vector_part"] + fusion_step["fulltext_part"] == fusion_step["score"]
        assert e["vector"] is not None or e["fulltext"] is not None
        at = fusion_step["rank"]
        for step in e["steps"]:
            assert step["from"] == at and step["from"] != step["to"] or "score" in step
            at = step["to"]
        assert at == rank
        fused_ranks.append((fusion_step["rank"], fusion_step["score"]))
    # the fusion ranks order the fused scores (best first), whatever came after
    ordered = sorted(fused_ranks)
    assert [s for _, s in ordered] == sorted((s for _, s in ordered), reverse=True)


def test_an_unexplained_search_builds_no_trace(kb, monkeypatch):
    import groove.search.pipeline as pipeline

    def refuse(*args, **kwargs):
        raise AssertionError("a trace was built for a search that did not ask for one")

    monkeypatch.setattr(pipeline, "Trace", refuse)
    assert kb.search(SearchRequest(query="spawn tasks")).results


def test_min_score_keeps_a_prefix_and_says_how_many_it_dropped(kb):
    full = kb.search(SearchRequest(query="spawn tasks", limit=8))
    bound = full.results[2].score
    cut = kb.search(SearchRequest(query="spawn tasks", limit=8, min_score=bound))
    kept = [h for h in full.results if h.score >= bound]
    assert [h.chunk_id for h in cut.results] == [h.chunk_id for h in kept]
    dropped = len(full.results) - len(kept)
    assert f"min_score {bound:g} dropped {dropped} of {len(full.results)} hit(s) scoring below it" in cut.notes
    assert not kb.search(SearchRequest(query="spawn tasks", limit=8, min_score=-1.0)).notes


def test_min_score_must_be_a_finite_number():
    from groove.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="min_score: nan is not a finite number"):
        SearchRequest(query="x", min_score=float("nan"))
    with pytest.raises(InvalidArgument, match="min_score: expected"):
        SearchRequest(query="x", min_score="0.5")
