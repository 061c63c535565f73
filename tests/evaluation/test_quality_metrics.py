"""Eval metrics beyond recall/MRR/nDCG: cross-language recall, low_confidence rates
(answerable and unanswerable), and the quality floors of the search-quality defaults on
the bundled fixture (docs/evaluation.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from groove.evaluation import GoldenError, QueryResult, aggregate, run_eval
from groove.evaluation.golden import Expected, load_unanswerable
from groove.evaluation.history import compare_metrics
from groove.search.request import SearchRequest

FIXTURES = Path(__file__).parents[1] / "fixtures"


def result(qid: str, ranks: list[int | None], low: bool) -> QueryResult:
    expected = tuple(Expected(path=f"{qid}-{i}.md") for i in range(len(ranks)))
    recall5 = sum(1 for r in ranks if r is not None and r <= 5) / len(ranks)
    return QueryResult(id=qid, query=qid, expected=expected, ranks=ranks,
                       metrics={"recall@5": recall5}, top=[], low_confidence=low)


def test_cross_language_recall_counts_only_x_ids_and_the_rate_counts_flags() -> None:
    results = [result("x-a", [1], False), result("x-b", [None], True), result("c", [9], True),
               result("d", [2], False)]
    metrics = aggregate(results, [5])
    assert metrics["cross_language_recall@5"] == pytest.approx(0.5)
    assert metrics["recall@5"] == pytest.approx(0.5)
    assert metrics["low_confidence_rate"] == pytest.approx(0.5)
    assert "cross_language_recall@5" not in aggregate([result("c", [1], False)], [5])


def test_the_text_table_prints_cross_language_recall_and_both_flag_rates() -> None:
    from groove.evaluation.report import EvalReport

    results = [result("x-a", [1], False), result("x-b", [None], True), result("c", [9], True)]
    metrics = {**aggregate(results, [5]), "unanswerable_low_confidence_rate": 0.75}
    report = EvalReport(golden_path="g.yml", timestamp="t", k_values=[5], metrics=metrics,
                        queries=results, fingerprint={}, fingerprint_hash="h", corpus_digest="d",
                        regression_threshold=0.05)
    lines = report.render_text(details=False).splitlines()
    table = {line.split()[0]: line.split()[1] for line in lines[2:]}
    assert table["cross_language_recall@5"] == "0.500"
    assert table["low_confidence_rate"] == "0.667"
    assert table["unanswerable_low_confidence_rate"] == "0.750"


def test_a_rising_answerable_low_confidence_rate_is_the_regression() -> None:
    marks, regressed = compare_metrics({"low_confidence_rate": 0.5}, {"low_confidence_rate": 0.2}, 0.05)
    assert regressed and marks["low_confidence_rate"] == "↓"
    marks, regressed = compare_metrics({"unanswerable_low_confidence_rate": 0.9},
                                       {"unanswerable_low_confidence_rate": 0.5}, 0.05)
    assert not regressed and marks["unanswerable_low_confidence_rate"] == "↑"


def test_unanswerable_file_accepts_strings_and_mappings_and_names_mistakes(tmp_path: Path) -> None:
    good = tmp_path / "u.yml"
    good.write_text("queries:\n  - How much is a pet ticket?\n  - {query: 犬は乗れますか？}\n",
                    encoding="utf-8")
    assert load_unanswerable(good) == ("How much is a pet ticket?", "犬は乗れますか？")
    bad = tmp_path / "bad.yml"
    bad.write_text("queries:\n  - ''\n", encoding="utf-8")
    with pytest.raises(GoldenError, match=r"queries\[0\]"):
        load_unanswerable(bad)
    with pytest.raises(GoldenError, match="no unanswerable-questions file"):
        load_unanswerable(tmp_path / "missing.yml")


@pytest.mark.slow
def test_quality_fixture_defaults_hold_their_floors(make_kb, tmp_path: Path) -> None:
    """The shipped defaults (contextual, folding, fusion, cap, low_confidence) on the
    quality fixture, through `groove eval`, with its unanswerable questions.

    Floors sit a little under the measured values in README's quality table.
    """
    kb_path = tmp_path / "kb"
    shutil.copytree(FIXTURES / "quality_kb", kb_path)
    kb = make_kb(kb_path)
    kb.index()
    report = run_eval(kb, SearchRequest(query=""), unanswerable_path=FIXTURES / "quality_unanswerable.yml",
                      record_history=False)
    m = report.metrics
    assert m["recall@1"] >= FLOORS["recall@1"]
    assert m["mrr"] >= FLOORS["mrr"]
    assert m["multi_recall@5"] >= FLOORS["multi_recall@5"]
    assert m["cross_language_recall@5"] >= FLOORS["cross_language_recall@5"]
    assert m["low_confidence_rate"] <= FLOORS["low_confidence_rate"]
    assert m["unanswerable_low_confidence_rate"] >= FLOORS["unanswerable_low_confidence_rate"]


#: A little under the evaluation matrix's defaults (benchmarks/quality-baseline.json, README):
#: fixture recall@1 0.842 (groove eval's recall: a two-answer question's first hit is half), MRR 0.965, cross-language recall@5 1.000; low_confidence on 7.9% of
#: the answerable questions (the issue's ceiling is 10%) and 8.3% of the unanswerable ones.
FLOORS = {"recall@1": 0.80, "mrr": 0.92, "multi_recall@5": 0.90, "cross_language_recall@5": 0.90,
          "low_confidence_rate": 0.10, "unanswerable_low_confidence_rate": 0.08}

DEV_SET = Path(__file__).parents[2].parent / "shared" / "eval"
#: dev set (ferry), the evaluation matrix's defaults: recall@1 0.569 (groove eval's recall), MRR 0.779, two-answer
#: recall@5 0.833, cross-language recall@5 0.600; low_confidence on 1.3% of the answerable
#: questions and 5% of the unanswerable ones.
DEV_FLOORS = {"recall@1": 0.55, "mrr": 0.75, "multi_recall@5": 0.80, "cross_language_recall@5": 0.55,
              "low_confidence_rate": 0.10, "unanswerable_low_confidence_rate": 0.05}


@pytest.mark.slow
@pytest.mark.skipif(not (DEV_SET / "kb").is_dir(), reason="the bilingual dev set is not checked out")
def test_dev_set_defaults_hold_their_floors(make_kb, tmp_path: Path) -> None:
    kb_path = tmp_path / "ferry"
    shutil.copytree(DEV_SET / "kb", kb_path)
    kb = make_kb(kb_path)
    kb.index()
    m = run_eval(kb, SearchRequest(query=""), golden_path=DEV_SET / "golden.yml",
                 unanswerable_path=DEV_SET / "unanswerable.yml", record_history=False).metrics
    for key in ("recall@1", "mrr", "multi_recall@5", "cross_language_recall@5",
                "unanswerable_low_confidence_rate"):
        assert m[key] >= DEV_FLOORS[key], key
    assert m["low_confidence_rate"] <= DEV_FLOORS["low_confidence_rate"]
