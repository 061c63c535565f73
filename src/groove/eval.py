"""`groove eval`: retrieval quality against a golden set, with history (SPEC §11).

The golden file (``<kb>/.groove-eval.yml`` by default) lists queries and the
documents (optionally the section) a good search should return. Every query is
sent through the real facade, ``kb.search``, with the caller's shared search
flags, so the numbers describe what a user of ``groove search`` would get.

Metric conventions (the non-obvious parts):

* A hit *matches* an expected entry when the paths are equal and, if the entry
  names a heading, the headings are equal too.
* Several chunks of one document may match the same expected entry; only the
  first of them counts as relevant. That keeps recall, MRR and nDCG about
  "how many of the wanted things were found, and how early", and keeps nDCG ≤ 1.
* nDCG@k uses binary relevance; the ideal ranking has ``min(k, #expected)``
  relevant hits on top.

Each run is appended to ``<kb>/.groove-eval-history.json`` (last
``history_size`` kept) with a *fingerprint* of everything that shapes the
ranking, so a run is only ever compared with a previous run of the same setup.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from groove.errors import GrooveError
from groove.search.request import SearchRequest

log = logging.getLogger("groove.eval")

GOLDEN_FILENAME = ".groove-eval.yml"
HISTORY_FILENAME = ".groove-eval-history.json"
HISTORY_VERSION = 1
#: Metrics are compared after rounding to this many places, so float noise is "same".
_COMPARE_DIGITS = 6

ARROW_UP = "↑"
ARROW_DOWN = "↓"
MARK_WITHIN = "·"
MARK_SAME = "—"


class GoldenError(GrooveError):
    """The golden YAML is missing, unreadable or does not have the documented shape."""


# --- golden set ---------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    path: str
    heading: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        if self.heading is not None:
            out["heading"] = self.heading
        return out


@dataclass(frozen=True)
class GoldenQuery:
    id: str
    query: str
    expected: tuple[Expected, ...]


@dataclass(frozen=True)
class GoldenSet:
    path: Path
    sha256: str
    queries: tuple[GoldenQuery, ...]


def default_golden_path(kb_path: Path, configured: str | os.PathLike[str] | None) -> Path:
    """``[eval] golden`` (relative to the KB) or ``<kb>/.groove-eval.yml``."""
    if not configured:
        return kb_path / GOLDEN_FILENAME
    path = Path(configured).expanduser()
    return path if path.is_absolute() else kb_path / path


def load_golden(path: Path) -> GoldenSet:
    """Read and validate a golden file; errors name the entry and the field."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise GoldenError(
            f"no golden file at {path}: create it with `queries: [{{query, expected: "
            f"[{{path, heading?}}]}}]` or pass --golden"
        ) from None
    except OSError as exc:
        raise GoldenError(f"cannot read golden file {path}: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise GoldenError(f"golden file {path} is not UTF-8 text") from None
    except yaml.YAMLError as exc:
        raise GoldenError(f"golden file {path} is not valid YAML: {exc}") from None
    queries = parse_golden(data, source=str(path))
    return GoldenSet(path=path, sha256=hashlib.sha256(raw).hexdigest(), queries=queries)


def parse_golden(data: Any, *, source: str = "golden file") -> tuple[GoldenQuery, ...]:
    """Validate the parsed YAML document (a mapping with a non-empty ``queries`` list)."""
    if not isinstance(data, dict) or "queries" not in data:
        raise GoldenError(f"{source}: the top level must be a mapping with a `queries` list")
    unknown = sorted(set(data) - {"queries"})
    if unknown:
        raise GoldenError(f"{source}: unknown top-level key(s) {unknown}; only `queries` is accepted")
    entries = data["queries"]
    if not isinstance(entries, list) or not entries:
        raise GoldenError(f"{source}: `queries` must be a non-empty list")
    out: list[GoldenQuery] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        query = _parse_entry(entry, index, source)
        if query.id in seen:
            raise GoldenError(f"{source}: queries[{index}]: duplicate id {query.id!r}; ids must be unique")
        seen.add(query.id)
        out.append(query)
    return tuple(out)


def _parse_entry(entry: Any, index: int, source: str) -> GoldenQuery:
    where = f"{source}: queries[{index}]"
    if not isinstance(entry, dict):
        raise GoldenError(f"{where}: must be a mapping with `query` and `expected`")
    raw_id = entry.get("id", index + 1)
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or str(raw_id).strip() == "":
        raise GoldenError(f"{where}: field `id` must be a non-empty string or an integer")
    qid = str(raw_id)
    where = f"{source}: queries[{index}] (id {qid!r})"
    unknown = sorted(set(entry) - {"id", "query", "expected"})
    if unknown:
        raise GoldenError(f"{where}: unknown field(s) {unknown}; accepted: id, query, expected")
    query = entry.get("query")
    if not isinstance(query, str) or not query.strip():
        raise GoldenError(f"{where}: field `query` must be a non-empty string")
    expected = entry.get("expected")
    if not isinstance(expected, list) or not expected:
        raise GoldenError(f"{where}: field `expected` must be a non-empty list of {{path, heading?}}")
    items = tuple(_parse_expected(item, f"{where}: expected[{j}]") for j, item in enumerate(expected))
    if len(set(items)) != len(items):
        raise GoldenError(f"{where}: field `expected` lists the same entry twice")
    return GoldenQuery(id=qid, query=query, expected=items)


def _parse_expected(item: Any, where: str) -> Expected:
    if isinstance(item, str):
        item = {"path": item}
    if not isinstance(item, dict):
        raise GoldenError(f"{where}: must be a mapping with `path` (and optional `heading`)")
    unknown = sorted(set(item) - {"path", "heading"})
    if unknown:
        raise GoldenError(f"{where}: unknown field(s) {unknown}; accepted: path, heading")
    path = item.get("path")
    if not isinstance(path, str) or not path.strip():
        raise GoldenError(f"{where}: field `path` must be a non-empty string (relative to the KB)")
    heading = item.get("heading")
    if heading is not None and (not isinstance(heading, str) or not heading.strip()):
        raise GoldenError(f"{where}: field `heading` must be a non-empty string when given")
    return Expected(path=path.strip().replace("\\", "/").removeprefix("./"), heading=heading)


# --- metrics (pure; unit-tested on hand-made rankings) --------------------------


def hit_matches(path: str, heading: str | None, expected: Expected) -> bool:
    return path == expected.path and (expected.heading is None or heading == expected.heading)


def expected_ranks(
    ranking: Sequence[tuple[str, str | None]], expected: Sequence[Expected]
) -> list[int | None]:
    """1-based rank at which each expected entry is first matched (None: not found).

    A hit is credited to at most one expected entry (the first unmatched one it
    matches), and each entry is credited once: that is the dedup rule above.
    """
    ranks: list[int | None] = [None] * len(expected)
    for rank, (path, heading) in enumerate(ranking, start=1):
        for j, exp in enumerate(expected):
            if ranks[j] is None and hit_matches(path, heading, exp):
                ranks[j] = rank
                break
    return ranks


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else 0.0


def reciprocal_rank(ranks: Sequence[int | None]) -> float:
    found = [r for r in ranks if r is not None]
    return 1.0 / min(found) if found else 0.0


def ndcg_at(ranks: Sequence[int | None], k: int) -> float:
    if not ranks:
        return 0.0
    dcg = sum(1.0 / math.log2(r + 1) for r in ranks if r is not None and r <= k)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(k, len(ranks)) + 1))
    return dcg / ideal


def query_metrics(ranks: Sequence[int | None], k_values: Sequence[int]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in k_values:
        out[f"recall@{k}"] = recall_at(ranks, k)
    out["mrr"] = reciprocal_rank(ranks)
    for k in k_values:
        out[f"ndcg@{k}"] = ndcg_at(ranks, k)
    return out


# --- one run ------------------------------------------------------------------


@dataclass
class QueryResult:
    id: str
    query: str
    expected: tuple[Expected, ...]
    ranks: list[int | None]
    metrics: dict[str, float]
    top: list[tuple[str, str | None]]

    @property
    def multi_answer(self) -> bool:
        return len(self.expected) >= 2

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "query": self.query,
            "expected": [
                {**e.to_json(), "rank": r} for e, r in zip(self.expected, self.ranks, strict=True)
            ],
            "metrics": self.metrics,
            "top": [{"path": p, "heading": h} for p, h in self.top],
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


def run_eval(
    kb: Any,
    base_request: SearchRequest | None = None,
    *,
    golden_path: Path | None = None,
    record_history: bool = True,
) -> EvalReport:
    """Run the golden set through ``kb.search`` and compare with the last compatible run.

    ``kb`` is a :class:`groove.kb.KnowledgeBase` (typed loosely so this module
    does not import the facade). ``base_request`` carries the shared search
    flags; its ``query`` and ``limit`` are replaced per query (limit = the
    deepest k). ``record_history=False`` compares but does not append.
    """
    config = kb.config
    eval_cfg = config.eval
    k_values = sorted({int(k) for k in eval_cfg.k_values})
    golden = load_golden(golden_path or default_golden_path(kb.kb_path, eval_cfg.golden))
    base = base_request or SearchRequest(query="")
    kb.ensure_index()

    results = [_run_query(kb, base, q, k_values) for q in golden.queries]
    metrics = aggregate(results, k_values)
    fingerprint = build_fingerprint(config, base, golden.sha256)
    fp_hash = fingerprint_hash(fingerprint)
    corpus = corpus_digest(kb.store.document_hashes())
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
    if previous is not None:
        report.previous = {k: previous.get(k) for k in ("timestamp", "metrics", "corpus_digest")}
        report.marks, report.regressed = compare_metrics(metrics, previous["metrics"], threshold)
    if record_history:
        history.append(_history_entry(report))
        save_history(history_path, history, int(eval_cfg.history_size))
    return report


def _run_query(kb: Any, base: SearchRequest, q: GoldenQuery, k_values: list[int]) -> QueryResult:
    request = dataclasses.replace(base, query=q.query, limit=max(k_values))
    response = kb.search(request)
    ranking = [(hit.path, hit.heading) for hit in response.results]
    ranks = expected_ranks(ranking, q.expected)
    return QueryResult(id=q.id, query=q.query, expected=q.expected, ranks=ranks,
                       metrics=query_metrics(ranks, k_values), top=ranking)


def aggregate(results: Sequence[QueryResult], k_values: Sequence[int]) -> dict[str, float]:
    """Means over all queries, plus ``multi_recall@k`` over queries with ≥ 2 expected."""
    names = list(results[0].metrics) if results else []
    out = {name: sum(r.metrics[name] for r in results) / len(results) for name in names}
    multi = [r for r in results if r.multi_answer]
    if multi:
        for k in k_values:
            out[f"multi_recall@{k}"] = sum(r.metrics[f"recall@{k}"] for r in multi) / len(multi)
    return out


# --- fingerprint, corpus digest ---------------------------------------------------


def _as_dict(section: Any) -> dict[str, Any]:
    """A config section as plain data (pydantic by alias, dataclass or namespace)."""
    if section is None:
        return {}
    if hasattr(section, "model_dump"):
        return section.model_dump(mode="json", by_alias=True)
    if dataclasses.is_dataclass(section):
        return dataclasses.asdict(section)
    return dict(vars(section))


def build_fingerprint(config: Any, request: SearchRequest, golden_sha256: str) -> dict[str, Any]:
    """Everything that shapes the ranking, with per-call overrides applied.

    Beyond the SPEC list (model, reranker, fusion, MMR, parent settings, golden
    hash) it includes the request's filters: a run restricted to one category
    is not comparable with an unrestricted one.
    """
    rerank = config.rerank_by_default if request.rerank is None else request.rerank
    mmr = _as_dict(config.search.mmr)
    if request.mmr is not None:
        mmr["enabled"] = request.mmr
    if request.mmr_lambda is not None:
        mmr["lambda"] = request.mmr_lambda
    if request.mmr_same_doc_penalty is not None:
        mmr["same_doc_penalty"] = request.mmr_same_doc_penalty
    parent = _as_dict(config.search.parent_retriever)
    if request.parent_retriever is not None:
        parent["enabled"] = request.parent_retriever
    filters = {
        name: getattr(request, name)
        for name in ("category", "topic", "path_globs", "tags_any", "tags_all", "date_from",
                     "date_to", "min_quality", "include_low_quality")
        if getattr(request, name) not in (None, False)
    }
    return {
        "model": config.model,
        "reranker": config.reranker if rerank else None,
        "fusion": _as_dict(config.search.fusion),
        "mmr": mmr,
        "parent_retriever": parent,
        "filters": filters,
        "golden_sha256": golden_sha256,
    }


def fingerprint_hash(fingerprint: dict[str, Any]) -> str:
    canonical = json.dumps(fingerprint, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def corpus_digest(hashes: dict[str, str]) -> str:
    """sha256 over the sorted (path, sha256) pairs of the indexed documents."""
    digest = hashlib.sha256()
    for path, sha in sorted(hashes.items()):
        digest.update(f"{path}\0{sha}\n".encode())
    return digest.hexdigest()


# --- comparison and history ---------------------------------------------------------


def compare_metrics(
    current: dict[str, float], previous: dict[str, float], threshold: float
) -> tuple[dict[str, str], bool]:
    """Marks per metric present in both runs, and whether any dropped beyond ``threshold``."""
    marks: dict[str, str] = {}
    regressed = False
    for name, value in current.items():
        if name not in previous or not isinstance(previous[name], (int, float)):
            continue
        delta = round(value - float(previous[name]), _COMPARE_DIGITS)
        if delta > threshold:
            marks[name] = ARROW_UP
        elif delta < -threshold:
            marks[name] = ARROW_DOWN
            regressed = True
        elif delta == 0:
            marks[name] = MARK_SAME
        else:
            marks[name] = MARK_WITHIN
    return marks, regressed


def load_history(path: Path) -> list[dict[str, Any]]:
    """Past runs, oldest first; an unreadable file is reported and treated as empty."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        log.warning("ignoring unreadable eval history %s (%s); it will be rewritten", path, exc)
        return []
    runs = data.get("runs") if isinstance(data, dict) else None
    if not isinstance(runs, list):
        log.warning("ignoring eval history %s: no `runs` list; it will be rewritten", path)
        return []
    return [r for r in runs if isinstance(r, dict) and isinstance(r.get("metrics"), dict)]


def save_history(path: Path, runs: list[dict[str, Any]], history_size: int) -> None:
    """Keep the newest ``history_size`` runs; written atomically (temp file + rename)."""
    kept = runs[-history_size:] if history_size > 0 else []
    payload = json.dumps({"version": HISTORY_VERSION, "runs": kept}, ensure_ascii=False, indent=2)
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(payload + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("could not write eval history %s: %s", path, exc.strerror or exc)


def previous_compatible_run(runs: list[dict[str, Any]], fp_hash: str) -> dict[str, Any] | None:
    for run in reversed(runs):
        if run.get("fingerprint_hash") == fp_hash:
            return run
    return None


def _history_entry(report: EvalReport) -> dict[str, Any]:
    return {
        "timestamp": report.timestamp,
        "metrics": report.metrics,
        "fingerprint": report.fingerprint,
        "fingerprint_hash": report.fingerprint_hash,
        "corpus_digest": report.corpus_digest,
        "queries": len(report.queries),
    }


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime())


# --- warnings about the golden set itself ----------------------------------------------

_WS = re.compile(r"\s+")


def _normalise(text: str) -> str:
    return _WS.sub(" ", text).strip().casefold()


def quoted_golden_warnings(kb: Any, golden: GoldenSet) -> list[str]:
    """Warn when one document contains ≥ 2 golden queries verbatim (case-insensitive).

    Such a document makes the golden set measure string matching, not
    retrieval. Whitespace runs are collapsed so line wrapping cannot hide a quote.
    """
    phrases = {_normalise(q.query): q.id for q in golden.queries}
    warnings: list[str] = []
    for path in sorted(kb.store.document_hashes()):
        try:
            text = _normalise(kb.read_document(path).text)
        except GrooveError as exc:
            log.debug("quoted-golden check skipped %s: %s", path, exc)
            continue
        quoted = [qid for phrase, qid in phrases.items() if phrase and phrase in text]
        if len(quoted) >= 2:
            message = (f"{path} quotes {len(quoted)} golden queries verbatim "
                       f"(ids {', '.join(quoted)}); paraphrase them so eval measures retrieval")
            log.warning(message)
            warnings.append(message)
    return warnings


def _check_expected_paths(kb: Any, golden: GoldenSet) -> list[str]:
    """Warn about expected entries that cannot match anything (typo'd path or heading)."""
    warnings: list[str] = []
    headings: dict[str, set[str | None] | None] = {}
    for q in golden.queries:
        for exp in q.expected:
            if exp.path not in headings:
                row = kb.store.get_document(exp.path)
                headings[exp.path] = (
                    None if row is None else {c.heading for c in kb.store.document_chunks(row.id)}
                )
            known = headings[exp.path]
            if known is None:
                msg = f"query {q.id!r}: expected path {exp.path!r} is not an indexed document"
            elif exp.heading is not None and exp.heading not in known:
                msg = f"query {q.id!r}: {exp.path!r} has no section headed {exp.heading!r}"
            else:
                continue
            log.warning(msg)
            warnings.append(msg)
    return warnings
