"""groove eval: metrics on hand-made rankings, golden validation, history, arrows,
fingerprints, the quoted-golden warning, and a real end-to-end floor on quality_kb."""

from __future__ import annotations

import json
import logging
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from groove.config import load_config
from groove.errors import GrooveError
from groove.evaluation import (
    ARROW_DOWN,
    ARROW_UP,
    HISTORY_FILENAME,
    MARK_SAME,
    MARK_WITHIN,
    Expected,
    build_fingerprint,
    compare_metrics,
    expected_ranks,
    fingerprint_hash,
    load_golden,
    ndcg_at,
    query_metrics,
    quoted_golden_warnings,
    recall_at,
    reciprocal_rank,
    run_eval,
)
from groove.models import Hit, SearchResponse
from groove.search.request import SearchRequest

FIXTURE = Path(__file__).parents[1] / "fixtures" / "quality_kb"


# --- metrics -------------------------------------------------------------------------


def test_metrics_exact_values_on_a_hand_made_ranking():
    ranking = [("b.md", None), ("a.md", "Other"), ("a.md", "Wanted"), ("x.md", None), ("c.md", "Any")]
    expected = [Expected("a.md", "Wanted"), Expected("c.md")]
    ranks = expected_ranks(ranking, expected)
    assert ranks == [3, 5]
    assert recall_at(ranks, 1) == 0.0
    assert recall_at(ranks, 3) == 0.5
    assert recall_at(ranks, 5) == 1.0
    assert reciprocal_rank(ranks) == pytest.approx(1 / 3)
    ideal = 1 + 1 / math.log2(3)
    assert ndcg_at(ranks, 5) == pytest.approx((1 / math.log2(4) + 1 / math.log2(6)) / ideal)
    assert ndcg_at(ranks, 3) == pytest.approx((1 / math.log2(4)) / ideal)
    # ideal at k=1 holds one relevant hit only
    assert ndcg_at([1, None], 1) == 1.0


def test_repeated_chunks_of_one_document_count_once():
    ranks = expected_ranks([("a.md", "1"), ("a.md", "2"), ("a.md", "3")], [Expected("a.md")])
    assert ranks == [1]
    assert ndcg_at(ranks, 5) == 1.0
    assert recall_at(ranks, 5) == 1.0


def test_heading_must_match_when_given_and_nothing_found_scores_zero():
    ranks = expected_ranks([("a.md", "Intro")], [Expected("a.md", "Setup")])
    assert ranks == [None]
    assert query_metrics(ranks, [1, 5]) == {
        "recall@1": 0.0, "recall@5": 0.0, "mrr": 0.0, "ndcg@1": 0.0, "ndcg@5": 0.0
    }


# --- golden validation -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("- just a list", ["top level", "queries"]),
        ("queries: []", ["non-empty list"]),
        ("queries:\n  - {id: q1, expected: [{path: a.md}]}", ["q1", "`query`"]),
        ("queries:\n  - {id: q2, query: hi}", ["q2", "`expected`"]),
        ("queries:\n  - {id: q3, query: hi, expected: [{heading: H}]}", ["q3", "expected[0]", "`path`"]),
        ("queries:\n  - {id: q4, query: hi, expected: [{path: a.md, heading: 7}]}", ["q4", "`heading`"]),
        ("queries:\n  - {id: q5, query: hi, expected: [a.md], weight: 2}", ["q5", "weight"]),
        ("queries:\n  - {id: d, query: a, expected: [a.md]}\n  - {id: d, query: b, expected: [b.md]}",
         ["duplicate id", "'d'"]),
        ("queries: [\n", ["not valid YAML"]),
    ],
)
def test_malformed_golden_names_the_entry_and_field(tmp_path, text, fragments):
    path = tmp_path / "golden.yml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GrooveError) as info:
        load_golden(path)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_missing_golden_file_is_a_groove_error(tmp_path):
    with pytest.raises(GrooveError, match="no golden file"):
        load_golden(tmp_path / "nope.yml")


# --- a scripted knowledge base for run_eval ------------------------------------------------


class FakeKB:
    """Just enough of the KnowledgeBase contract: search answers from a script."""

    def __init__(self, kb_path: Path, rankings: dict[str, list[tuple[str, str | None]]],
                 docs: dict[str, str], **overrides):
        self.kb_path = kb_path
        self.config = load_config(kb_path=kb_path, cwd=kb_path, overrides=overrides or None)
        self.rankings = rankings
        self.docs = docs
        self.requests: list[SearchRequest] = []

    def document_hashes(self) -> dict[str, str]:
        return {p: f"sha-{p}" for p in sorted(self.docs)}

    def document_headings(self, path: str) -> set[str | None] | None:
        return {"Setup", None} if path in self.docs else None

    def ensure_index(self) -> None:
        pass

    def search(self, request: SearchRequest) -> SearchResponse:
        self.requests.append(request)
        hits = [
            Hit(chunk_id=i, score=1.0 / (i + 1), path=p, title=p, heading=h, level=2,
                category=None, topic=None, date=None, tags=[], content="")
            for i, (p, h) in enumerate(self.rankings[request.query][: request.limit])
        ]
        return SearchResponse(results=hits, low_confidence=False, filter_applied={})

    def read_document(self, path: str):
        return SimpleNamespace(text=self.docs[path])


GOLDEN = """
queries:
  - id: one
    query: first question
    expected: [{path: a.md}]
  - id: two
    query: second question
    expected: [{path: a.md}, {path: b.md}]
"""


def _kb(tmp_path: Path, ranking_one, ranking_two, docs=None, golden=GOLDEN, **overrides) -> FakeKB:
    (tmp_path / ".groove-eval.yml").write_text(golden, encoding="utf-8")
    docs = docs or {"a.md": "alpha", "b.md": "beta", "c.md": "gamma"}
    return FakeKB(tmp_path, {"first question": ranking_one, "second question": ranking_two}, docs,
                  **overrides)


GOOD = ([("a.md", None)], [("a.md", None), ("b.md", None)])
WORSE = ([("c.md", None), ("a.md", None)], [("c.md", None), ("a.md", None), ("b.md", None)])


def test_run_eval_copies_the_base_request_and_searches_to_the_deepest_k(tmp_path):
    kb = _kb(tmp_path, *GOOD)
    base = SearchRequest(query="", category="notes", mmr=True)
    report = run_eval(kb, base)
    assert [r.query for r in kb.requests] == ["first question", "second question"]
    assert all(r.limit == 10 and r.category == "notes" and r.mmr is True for r in kb.requests)
    assert base.query == ""  # the caller's template is not mutated
    assert report.metrics["recall@1"] == pytest.approx(0.75)
    assert report.metrics["mrr"] == 1.0
    assert report.metrics["multi_recall@5"] == 1.0
    assert report.summarize_two_answer_recall_at(1) == 0.5
    assert json.loads(json.dumps(report.to_json()))["queries"][1]["expected"][1]["rank"] == 2


def test_history_keeps_only_the_last_history_size_runs(tmp_path):
    for ranking in (GOOD, WORSE, GOOD):
        kb = _kb(tmp_path, *ranking, eval={"history_size": 2})
        run_eval(kb)
    runs = json.loads((tmp_path / HISTORY_FILENAME).read_text(encoding="utf-8"))["runs"]
    assert len(runs) == 2
    assert [r["metrics"]["mrr"] for r in runs] == [0.5, 1.0]


def test_first_run_has_nothing_to_compare_then_same_results_show_dashes(tmp_path):
    first = run_eval(_kb(tmp_path, *GOOD))
    assert first.previous is None and first.marks == {} and not first.regressed
    second = run_eval(_kb(tmp_path, *GOOD))
    assert second.previous is not None
    assert set(second.marks.values()) == {MARK_SAME}
    assert not second.regressed


def test_a_drop_beyond_the_threshold_is_a_regression_with_down_arrows(tmp_path):
    run_eval(_kb(tmp_path, *GOOD))
    report = run_eval(_kb(tmp_path, *WORSE))
    assert report.regressed
    assert report.marks["recall@1"] == ARROW_DOWN
    assert report.marks["mrr"] == ARROW_DOWN
    assert report.marks["recall@5"] == MARK_SAME
    text = report.render_text()
    assert "↓ (was 1.000)" in text and "REGRESSION" in text
    better = run_eval(_kb(tmp_path, *GOOD))
    assert better.marks["mrr"] == ARROW_UP and not better.regressed


def test_compare_marks_within_threshold_as_grey_dot():
    marks, regressed = compare_metrics(
        {"a": 0.80, "b": 0.70, "c": 0.50, "d": 0.60, "new": 1.0},
        {"a": 0.70, "b": 0.72, "c": 0.50, "d": 0.70}, threshold=0.05,
    )
    assert marks == {"a": ARROW_UP, "b": MARK_WITHIN, "c": MARK_SAME, "d": ARROW_DOWN}
    assert regressed
    assert compare_metrics({"a": 0.68}, {"a": 0.70}, 0.05) == ({"a": MARK_WITHIN}, False)


def test_within_threshold_mark_is_dim_with_markup(tmp_path):
    slightly_worse = ([("c.md", None), ("a.md", None)], GOOD[1])
    run_eval(_kb(tmp_path, *GOOD, eval={"regression_threshold": 0.6}))
    report = run_eval(_kb(tmp_path, *slightly_worse, eval={"regression_threshold": 0.6}))
    assert report.marks["mrr"] == MARK_WITHIN and not report.regressed
    assert "[dim]·[/dim]" in report.render_text(markup=True)
    assert "[dim]" not in report.render_text()


def test_markup_output_escapes_user_text(tmp_path):
    from rich.console import Console

    golden = GOLDEN.replace("query: first question", "query: '[bold] first question'")
    kb = _kb(tmp_path, *GOOD, golden=golden)
    kb.rankings["[bold] first question"] = [("c.md", None), ("a.md", None)]
    console = Console(record=True, width=200)
    console.print(run_eval(kb).render_text(markup=True))
    assert "[one] [bold] first question" in console.export_text()


def test_fingerprint_changes_with_model_fusion_golden_and_overrides(tmp_path):
    config = load_config(kb_path=tmp_path, cwd=tmp_path)
    base = fingerprint_hash(build_fingerprint(config, SearchRequest(query=""), "g1"))
    assert base == fingerprint_hash(build_fingerprint(config, SearchRequest(query="x"), "g1"))
    fused = load_config(kb_path=tmp_path, cwd=tmp_path, overrides={"search": {"fusion": {"rrf_k": 30.0}}})
    other_model = load_config(kb_path=tmp_path, cwd=tmp_path, overrides={"model": "bge-m3"})
    variants = [
        build_fingerprint(fused, SearchRequest(query=""), "g1"),
        build_fingerprint(other_model, SearchRequest(query=""), "g1"),
        build_fingerprint(config, SearchRequest(query=""), "g2"),
        build_fingerprint(config, SearchRequest(query="", mmr=True), "g1"),
        build_fingerprint(config, SearchRequest(query="", parent_retriever=True), "g1"),
    ]
    hashes = {fingerprint_hash(v) for v in variants}
    assert base not in hashes and len(hashes) == len(variants)


def test_runs_with_another_fingerprint_are_not_compared(tmp_path):
    run_eval(_kb(tmp_path, *GOOD))
    changed = run_eval(_kb(tmp_path, *WORSE, search={"fusion": {"rrf_k": 10.0}}))
    assert changed.previous is None and not changed.regressed
    edited = GOLDEN.replace("id: two", "id: second")
    assert run_eval(_kb(tmp_path, *WORSE, golden=edited)).previous is None


def test_document_quoting_two_golden_queries_is_warned_once(tmp_path, caplog):
    docs = {"a.md": "Notes.\nFIRST\n   question here, and the Second Question too.",
            "b.md": "only the first question"}
    with caplog.at_level(logging.WARNING, logger="groove.evaluation"):
        report = run_eval(_kb(tmp_path, *GOOD, docs=docs))
    quoted = [w for w in report.warnings if "verbatim" in w]
    assert len(quoted) == 1 and quoted[0].startswith("a.md quotes 2 golden queries")
    # in the report only: `groove eval` prints the report's warnings, a log line would double it
    assert not [r for r in caplog.records if "verbatim" in r.getMessage()]


def test_expected_entries_that_cannot_match_are_warned(tmp_path):
    golden = GOLDEN.replace("[{path: a.md}]", "[{path: missing.md}, {path: a.md, heading: Nope}]")
    report = run_eval(_kb(tmp_path, *GOOD, golden=golden))
    assert any("'missing.md' is not an indexed document" in w for w in report.warnings)
    assert any("no section headed 'Nope'" in w for w in report.warnings)


# --- the quality fixture itself --------------------------------------------------------------

_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def test_quality_fixture_golden_set_has_the_promised_shape():
    golden = load_golden(FIXTURE / ".groove-eval.yml")
    docs = sorted(p.relative_to(FIXTURE).as_posix() for p in FIXTURE.rglob("*.md"))
    assert len(docs) >= 24
    assert sum(bool(_JAPANESE.search((FIXTURE / d).read_text(encoding="utf-8"))) for d in docs) >= 9
    assert len(golden.queries) >= 28
    assert sum(bool(_JAPANESE.search(q.query)) for q in golden.queries) >= 9
    assert sum(len(q.expected) >= 2 for q in golden.queries) >= 5
    for q in golden.queries:
        for exp in q.expected:
            assert exp.path in docs, (q.id, exp.path)
            if exp.heading:
                assert f"\n## {exp.heading}\n" in (FIXTURE / exp.path).read_text(encoding="utf-8")
    for d in docs:
        meta = yaml.safe_load((FIXTURE / d).read_text(encoding="utf-8").split("---")[1])
        assert {"title", "date", "tags", "category"} <= set(meta), d


def test_quality_fixture_documents_quote_no_golden_query():
    golden = load_golden(FIXTURE / ".groove-eval.yml")
    docs = {p.relative_to(FIXTURE).as_posix(): p.read_text(encoding="utf-8") for p in FIXTURE.rglob("*.md")}
    kb = SimpleNamespace(
        document_hashes=lambda: dict.fromkeys(docs, ""),
        read_document=lambda p: SimpleNamespace(text=docs[p]),
    )
    assert quoted_golden_warnings(kb, golden) == []
    lowered = " ".join(" ".join(docs.values()).casefold().split())
    assert [q.id for q in golden.queries if q.query.casefold() in lowered] == []


# --- end to end with the real model ------------------------------------------------------------

def test_quality_kb_end_to_end_holds_its_floor(make_kb, tmp_path):
    kb_path = tmp_path / "kb"
    shutil.copytree(FIXTURE, kb_path)
    kb = make_kb(kb_path)
    kb.index()
    report = run_eval(kb, SearchRequest(query=""))
    assert report.warnings == []
    # Floors sit ~0.1 below what a vector+FTS RRF prototype measured on this
    # fixture (recall@1 0.58, recall@5 0.86, MRR 0.75, two-answer recall@5 0.81;
    # the real pipeline measured the same);
    # English questions about Japanese notes are the known weak spot of e5-small.
    m = report.metrics
    assert m["recall@1"] >= 0.45
    assert m["recall@5"] >= 0.75
    assert m["mrr"] >= 0.65
    assert report.summarize_two_answer_recall_at(5) >= 0.7
    assert (kb_path / HISTORY_FILENAME).is_file()


# --- untrusted and hostile golden files (through the CLI) ----------------------------------

def _groove_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "groove", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=60, env=dict(os.environ))


def test_an_untrusted_golden_path_outside_the_kb_is_never_read(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    secret = tmp_path / "outside" / "secret.yml"
    secret.parent.mkdir()
    secret.write_text("password: hunter2-TOP-SECRET\n: [broken yaml\n", encoding="utf-8")
    (kb / "groove.toml").write_text(f'[eval]\ngolden = "{secret.as_posix()}"\n', encoding="utf-8")
    done = _groove_cli("eval", "--kb-path", str(kb), cwd=kb)
    assert done.returncode != 0
    assert "TOP-SECRET" not in done.stdout + done.stderr
    assert "eval.golden ignored" in done.stderr
    assert f"no golden file at {kb / '.groove-eval.yml'}" in done.stderr


def test_a_fifo_as_the_golden_file_is_refused_at_once(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# A\n\nalpha\n", encoding="utf-8")
    os.mkfifo(kb / ".groove-eval.yml")
    done = _groove_cli("eval", "--kb-path", str(kb), cwd=tmp_path)  # a hang fails at 60 s
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "the golden file" in done.stderr and "is a FIFO (named pipe)" in done.stderr
