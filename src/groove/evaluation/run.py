"""`groove eval`: retrieval quality against a golden set, with history.

Every query is sent through the real facade, ``kb.search``, with the caller's
shared search flags, so the numbers describe what a user of ``groove search``
would get.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from groove.evaluation.golden import (
    GoldenQuery,
    _check_expected_paths,
    load_golden,
    load_unanswerable,
    quoted_golden_warnings,
)
from groove.evaluation.history import (
    HISTORY_FILENAME,
    _now_iso,
    build_fingerprint,
    compare_metrics,
    corpus_digest,
    fingerprint_hash,
    load_history,
    previous_compatible_run,
    save_history,
)
from groove.evaluation.metrics import expected_ranks, query_metrics
from groove.evaluation.report import EvalReport, QueryResult
from groove.search.request import SearchRequest

if TYPE_CHECKING:
    from groove.kb import KnowledgeBase

log = logging.getLogger("groove.evaluation")

def run_eval(
    kb: KnowledgeBase,
    base_request: SearchRequest | None = None,
    *,
    golden_path: Path | None = None,
    unanswerable_path: Path | None = None,
    record_history: bool = True,
    depth: int | None = None,
    compare: bool = True,
) -> EvalReport:
    """Run the golden set through ``kb.search`` and compare with the last compatible run.

    ``kb`` is a :class:`groove.kb.KnowledgeBase` (typed loosely so this module
    does not import the facade). ``base_request`` carries the shared search
    flags; its ``query`` and ``limit`` are replaced per query (limit = the
    deepest k, or ``depth`` when that is deeper). ``record_history=False``
    compares but does not append; ``compare=False`` skips the comparison with
    the previous run (no marks, never "regressed").
    ``unanswerable_path`` names questions the KB does not answer; the share of
    them flagged ``low_confidence`` becomes ``unanswerable_low_confidence_rate``.
    """
    config = kb.config
    eval_cfg = config.eval
    k_values = sorted({int(k) for k in eval_cfg.k_values})
    golden = load_golden(golden_path or config.golden_path)
    base = base_request or SearchRequest(query="")
    kb.ensure_index()

    deepest = max([*k_values, depth or 0])
    results = [_run_query(kb, base, q, k_values, deepest) for q in golden.queries]
    metrics = aggregate(results, k_values)
    if unanswerable_path is not None:
        questions = load_unanswerable(unanswerable_path)
        flagged = sum(kb.search(base.replace(query=q, limit=deepest)).low_confidence
                      for q in questions)
        metrics["unanswerable_low_confidence_rate"] = flagged / len(questions)
    fingerprint = build_fingerprint(config, base, golden.sha256)
    if depth is not None:  # a deeper search finds more: runs of other depths are not comparable
        fingerprint["depth"] = deepest
    fp_hash = fingerprint_hash(fingerprint)
    corpus = corpus_digest(kb.document_hashes())
    threshold = float(eval_cfg.regression_threshold)
    report = EvalReport(
        golden_path=str(golden.path), timestamp=_now_iso(), k_values=k_values, metrics=metrics,
        queries=results, fingerprint=fingerprint, fingerprint_hash=fp_hash,
        corpus_digest=corpus, regression_threshold=threshold,
    )
    report.warnings.extend(_check_expected_paths(kb, golden))
    report.warnings.extend(quoted_golden_warnings(kb, golden))

    history_path = kb.kb_path / HISTORY_FILENAME
    report.history_path = str(history_path)
    history = load_history(history_path)
    previous = previous_compatible_run(history, fp_hash)
    if previous is not None and compare:
        report.previous = {k: previous.get(k) for k in ("timestamp", "metrics", "corpus_digest")}
        report.marks, report.regressed = compare_metrics(metrics, previous["metrics"], threshold)
    if record_history:
        history.append(report.history_entry())
        save_history(history_path, history, int(eval_cfg.history_size))
    return report


def _run_query(kb: KnowledgeBase, base: SearchRequest, q: GoldenQuery, k_values: list[int],
               deepest: int) -> QueryResult:
    request = base.replace(query=q.query, limit=deepest)
    response = kb.search(request)
    ranking = [(hit.path, hit.heading) for hit in response.results]
    ranks = expected_ranks(ranking, q.expected)
    return QueryResult(id=q.id, query=q.query, expected=q.expected, ranks=ranks,
                       metrics=query_metrics(ranks, k_values), top=ranking,
                       low_confidence=response.low_confidence)


def aggregate(results: Sequence[QueryResult], k_values: Sequence[int]) -> dict[str, float]:
    """Means over all queries, plus subsets and rates (docs/evaluation.md).

    ``multi_recall@k`` over queries with ≥ 2 expected entries,
    ``cross_language_recall@k`` over queries whose id starts with ``x-``, and
    ``low_confidence_rate``: the share of these (answerable) queries flagged
    ``low_confidence``.
    """
    names = list(results[0].metrics) if results else []
    out = {name: sum(r.metrics[name] for r in results) / len(results) for name in names}
    for prefix, subset in (("multi", [r for r in results if r.multi_answer]),
                           ("cross_language", [r for r in results if r.cross_language])):
        for k in k_values if subset else ():
            out[f"{prefix}_recall@{k}"] = sum(r.metrics[f"recall@{k}"] for r in subset) / len(subset)
    if results:
        out["low_confidence_rate"] = sum(r.low_confidence for r in results) / len(results)
    return out


