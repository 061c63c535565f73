"""One eval run's results and how they are presented (text and JSON).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from groove.evaluation.golden import Expected
from groove.evaluation.history import MARK_WITHIN
from groove.evaluation.metrics import recall_at

#: Golden ids starting with this mark cross-language queries.
CROSS_LANGUAGE_PREFIX = "x-"

# --- one run ------------------------------------------------------------------


@dataclass
class QueryResult:
    id: str
    query: str
    expected: tuple[Expected, ...]
    ranks: list[int | None]
    metrics: dict[str, float]
    top: list[tuple[str, str | None]]
    low_confidence: bool = False

    @property
    def multi_answer(self) -> bool:
        return len(self.expected) >= 2

    @property
    def cross_language(self) -> bool:
        """Asked in one language for a document in another: ids starting ``x-`` (docs/evaluation.md)."""
        return self.id.startswith(CROSS_LANGUAGE_PREFIX)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "query": self.query,
            "expected": [
                {**e.to_json(), "rank": r} for e, r in zip(self.expected, self.ranks, strict=True)
            ],
            "metrics": self.metrics,
            "top": [{"path": p, "heading": h} for p, h in self.top],
            "low_confidence": self.low_confidence,
        }


@dataclass
class EvalReport:
    """Everything one ``groove eval`` run found; ``render_text`` / ``to_json`` present it."""

    golden_path: str
    timestamp: str
    k_values: list[int]
    metrics: dict[str, float]
    queries: list[QueryResult]
    fingerprint: dict[str, Any]
    fingerprint_hash: str
    corpus_digest: str
    regression_threshold: float
    previous: dict[str, Any] | None = None  # the compared run: timestamp, metrics, corpus_digest
    marks: dict[str, str] = field(default_factory=dict)  # metric -> ↑ ↓ · —
    regressed: bool = False
    warnings: list[str] = field(default_factory=list)
    history_path: str | None = None

    def summarize_two_answer_recall_at(self, k: int) -> float | None:
        """Mean recall@k over queries with ≥ 2 expected entries (None when there are none)."""
        if k > max(self.k_values):
            raise ValueError(f"k={k} is beyond the searched depth {max(self.k_values)}")
        multi = [q for q in self.queries if q.multi_answer]
        if not multi:
            return None
        return sum(recall_at(q.ranks, k) for q in multi) / len(multi)

    def to_json(self) -> dict[str, Any]:
        return {
            "golden": self.golden_path,
            "timestamp": self.timestamp,
            "k_values": self.k_values,
            "metrics": self.metrics,
            "fingerprint": self.fingerprint,
            "fingerprint_hash": self.fingerprint_hash,
            "corpus_digest": self.corpus_digest,
            "previous": self.previous,
            "marks": self.marks,
            "regressed": self.regressed,
            "regression_threshold": self.regression_threshold,
            "warnings": self.warnings,
            "queries": [q.to_json() for q in self.queries],
        }

    def history_entry(self) -> dict[str, Any]:
        """What ``.groove-eval-history.json`` keeps of this run (evaluation/history.py)."""
        return {
            "timestamp": self.timestamp,
            "metrics": self.metrics,
            "fingerprint": self.fingerprint,
            "fingerprint_hash": self.fingerprint_hash,
            "corpus_digest": self.corpus_digest,
            "queries": len(self.queries),
        }

    def render_text(self, *, markup: bool = False, details: bool = True) -> str:
        """Plain text for stdout; warnings are not repeated here (they went to stderr).

        ``markup=True`` produces rich markup: the within-threshold mark is
        ``[dim]`` and every piece of user text (paths, queries) is escaped.
        """
        esc = _rich_escape if markup else str
        lines = [f"Golden: {esc(self.golden_path)} ({len(self.queries)} queries)"]
        if self.previous is None:
            lines.append("Compared with: no previous run with this fingerprint")
        else:
            note = "" if self.previous.get("corpus_digest") == self.corpus_digest else " (corpus changed since)"
            lines.append(f"Compared with: run of {esc(str(self.previous.get('timestamp')))}{note}")
        width = max(len(name) for name in self.metrics)
        for name, value in self.metrics.items():
            line = f"  {name.ljust(width)}  {value:.3f}"
            mark = self.marks.get(name)
            if mark is not None and self.previous is not None:
                prev = self.previous["metrics"].get(name)
                shown = f"[dim]{mark}[/dim]" if markup and mark == MARK_WITHIN else mark
                line += f"  {shown} (was {prev:.3f})"
            lines.append(line)
        if self.regressed:
            lines.append(f"REGRESSION: a metric dropped by more than {self.regression_threshold}")
        if details:
            missed = [q for q in self.queries if q.metrics["mrr"] < 1.0]
            if missed:
                lines.append("Queries not answered at rank 1:")
            for q in missed:
                found = ", ".join(
                    f"{e.path}{'#' + e.heading if e.heading else ''} -> {r if r else 'missed'}"
                    for e, r in zip(q.expected, q.ranks, strict=True)
                )
                lines.append(esc(f"  [{q.id}] {q.query}  ({found})"))
        return "\n".join(lines)


def _rich_escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


