"""groove tune: the nested leave-one-query-out choice, and a sweep over a scripted KB."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from groove.config import load_config
from groove.errors import GrooveError
from groove.evaluation.tune import FusionParams, default_grid, nested_loqo, params_of, run_tune
from groove.models import Hit, SearchResponse

BASE = FusionParams(60.0, 2.0, 1.0, 1.0)
OTHER = FusionParams(10.0, 4.0, 0.5, 1.0)


def test_default_grid_is_the_spec_sweep_and_contains_the_defaults(tmp_path):
    grid = default_grid()
    # RRF × rrf_k, convex × vector_weight, convex × vector_weight × the cross-language
    # offset and imputation (the default pair is already in the second block), and the
    # translation ratio at the defaults (its default is already there too).
    assert len(grid) == 4 + 3 + 3 * (3 * 3 - 1) + 3
    # The one-field full-text leg ignores the bm25 column weights: sweeping them only ties.
    assert {(p.bm25_heading_weight, p.bm25_context_weight, p.bm25_content_weight)
            for p in grid} == {(2.0, 1.0, 1.0)}
    assert len(set(grid)) == len(grid)
    assert {p.cross_language_offset for p in grid} == {0.0, 0.04, 0.08}
    assert {p.cross_language_imputation for p in grid} == {0.0, 0.5, 1.0}
    assert {p.translation_ratio for p in grid} == {0.0, 0.7, 0.85, 1.0}
    assert {p.method for p in grid} == {"rrf", "convex"}
    assert params_of(load_config(kb_path=tmp_path, cwd=tmp_path)) == BASE
    assert BASE in grid


def test_a_consistently_better_cell_is_recommended():
    cv = nested_loqo({BASE: [0.5, 0.5, 0.5, 0.5], OTHER: [1.0, 1.0, 1.0, 0.5]}, BASE)
    assert cv.baseline_mrr == 0.5
    assert cv.cv_mrr == pytest.approx(0.875)
    assert cv.full_best == OTHER
    assert cv.picks[OTHER] == 4


def test_a_gain_from_a_single_query_does_not_survive_cross_validation():
    # OTHER wins on the full set only because of query 3; holding that query
    # out, the inner loop ties and keeps the baseline, so nothing is gained.
    cv = nested_loqo({BASE: [1.0, 1.0, 0.5, 0.5], OTHER: [1.0, 1.0, 0.5, 1.0]}, BASE)
    assert cv.full_best == OTHER
    assert cv.cv_mrr == pytest.approx(cv.baseline_mrr)


def test_cross_validation_needs_two_queries():
    with pytest.raises(GrooveError, match="at least 2"):
        nested_loqo({BASE: [1.0]}, BASE)


class _CountingEmbedder:
    model_id, dim, max_input_tokens = "fake", 2, 512

    def __init__(self) -> None:
        self.queries: list[str] = []

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return np.ones(2, dtype=np.float32) / np.sqrt(2)


def _hit(path: str) -> Hit:
    return Hit(chunk_id=0, score=1.0, path=path, title=path, heading=None, level=None,
               category=None, topic=None, date=None, tags=[], content="")


class _CellKB:
    """Answers from the fusion settings it was built with: rrf_k 10 ranks the right doc first."""

    def __init__(self, config, embedder) -> None:
        self.config, self.embedder = config, embedder

    def search(self, request):
        self.embedder.embed_query(request.query)
        good = self.config.search.fusion.rrf_k == 10.0
        wanted = "a.md" if "alpha" in request.query else "b.md"
        order = [wanted, "x.md"] if good else ["x.md", wanted]
        return SearchResponse(results=[_hit(p) for p in order], low_confidence=False, filter_applied={})

    def close(self) -> None:
        pass


GOLDEN = """
queries:
  - {id: 1, query: alpha one, expected: [a.md]}
  - {id: 2, query: alpha two, expected: [a.md]}
  - {id: 3, query: beta one, expected: [b.md]}
"""


def _kb(tmp_path: Path, golden: str = GOLDEN):
    (tmp_path / ".groove-eval.yml").write_text(golden, encoding="utf-8")
    inner = _CountingEmbedder()
    kb = SimpleNamespace(kb_path=tmp_path, config=load_config(kb_path=tmp_path, cwd=tmp_path),
                         embedder=inner, ensure_index=lambda: None)
    return kb, inner


def test_sweep_embeds_each_query_once_and_prints_a_paste_ready_block(tmp_path):
    kb, inner = _kb(tmp_path)
    report = run_tune(kb, kb_factory=_CellKB)
    assert sorted(inner.queries) == ["alpha one", "alpha two", "beta one"]
    assert report.cv.baseline_mrr == 0.5 and report.cv.cv_mrr == 1.0
    assert report.recommendation is not None and report.recommendation.rrf_k == 10.0
    text = report.render_text()
    assert '[search.fusion]\nmethod = "rrf"\nvector_weight = 0.70\nrrf_k = 10.0\n' in text
    assert report.to_json()["recommendation"]["rrf_k"] == 10.0


def test_keep_the_defaults_when_nothing_beats_them(tmp_path):
    class Flat(_CellKB):
        def search(self, request):
            return SearchResponse(results=[_hit("x.md")], low_confidence=False, filter_applied={})

    kb, _ = _kb(tmp_path)
    report = run_tune(kb, kb_factory=Flat)
    assert report.recommendation is None
    assert "keep the defaults" in report.render_text()
    assert "[search.fusion]" not in report.render_text()


def test_a_single_query_golden_set_is_refused(tmp_path):
    kb, _ = _kb(tmp_path, "queries:\n  - {query: alpha, expected: [a.md]}\n")
    with pytest.raises(GrooveError, match="at least 2 queries"):
        run_tune(kb, kb_factory=_CellKB)
