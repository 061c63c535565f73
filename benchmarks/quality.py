"""The evaluation matrix: every evaluation set, every question category, one JSON.

    python benchmarks/quality.py [--sets ferry,rust-book,fixture,code] [--fast]
                                 [--out FILE] [--check BASELINE] [--variants]

Every change to ranking, chunking or ``low_confidence`` is judged by this
matrix (docs/evaluation.md, "The evaluation matrix"). For each set it runs
every golden question through ``KnowledgeBase.search`` with the defaults
(``limit`` 10) and reports, per question category (the id's prefix: ``s-``
single answer, ``m-`` two answers, ``x-`` asked in the other language, ``f-``
a fact in a long section or a table; ``all`` for every question):

* ``recall@1``: the first hit is an expected section;
* ``recall@5``: the share of the expected sections in the first five;
* ``mrr``: one over the rank of the first expected section;
* the same three at document level (``doc_…``: the expected file, any section);
* ``low_confidence``: the share of these answerable questions flagged;
* ``hit@5`` (and ``doc_hit@5``): whether any expected entry is in the top 5;
* for the code set only, the baseline a developer without groove has: BM25
  over whole files with identifiers split (``bm25_file_hit@1``, ``…hit@5``,
  ``…mrr``; benchmarks/code_corpus.py), printed in a second table beside
  groove's definition-level hit@1, hit@5 and MRR and its file-level hit@1;

and, per set, ``unanswerable_low_confidence``: the share of its unanswerable
questions flagged. Each set is also split into two halves by question id
(:func:`half_of`): knobs are chosen on half ``A`` and reported on half ``B``.

``--variants`` adds the same matrix with the cross-language stage off
(``[search.fusion] cross_language = false``), so both switches are reported.

``--check BASELINE`` compares with a committed matrix and exits 1 when a set's
MRR dropped by more than :data:`MRR_TOLERANCE` or a category's recall@1 by
more than :data:`RECALL_TOLERANCE` (at section or document level), printing
every row that moved. ``--fast`` runs the sets CI runs (ferry and the Rust
book, with the bundled model).

Indexes are built once per set into ``benchmarks/.cache/quality/`` (keyed by
the set's files and a hash of the indexing source) and every passage vector
is cached by its exact text, so a chunking change re-embeds only the chunks it
changed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = HERE / ".cache" / "quality"
SHARED = ROOT.parent / "shared" / "eval"
BASELINE = HERE / "quality-baseline.json"
sys.path.insert(0, str(HERE))

import code_corpus  # noqa: E402
from ablation import CachingEmbedder, _tree_digest  # noqa: E402
from kbcache import source_hash  # noqa: E402

from groove.config import load_config  # noqa: E402
from groove.embedders import get_embedder  # noqa: E402
from groove.evaluation.golden import Expected, load_golden, load_unanswerable  # noqa: E402
from groove.evaluation.metrics import expected_ranks  # noqa: E402
from groove.kb import KnowledgeBase  # noqa: E402
from groove.search.request import SearchRequest  # noqa: E402

#: A set's MRR may not drop by more than this (section and document level).
MRR_TOLERANCE = 0.01
#: A category's recall@1 may not drop by more than this (section and document level).
RECALL_TOLERANCE = 0.02
#: The indexing source this process runs (hashed once: an edit made while it runs
#: must not label an index built by the old code as the new code's).
SOURCE_HASH = source_hash()
LIMIT = 10
CATEGORIES = ("s", "m", "x", "f")
FAST_SETS = ("ferry", "rust-book")
#: The cross-language stage off, for the second column of the matrix.
CROSS_LANGUAGE_OFF = {"fusion": {"cross_language": False}}


@dataclass(frozen=True)
class EvalSet:
    """One evaluation set: a folder to index and its golden and unanswerable questions."""

    name: str
    source: Path
    golden: Path
    unanswerable: Path | None
    overrides: dict[str, Any]
    #: Builds the folder to index into the given path (default: a copy of ``source``).
    build: Callable[[Path], None] | None = None
    #: Names what ``build`` makes, for the index cache (default: a hash of ``source``).
    digest: Callable[[], str] | None = None
    #: Also rank whole files with :class:`code_corpus.FileBM25` (the baseline of
    #: the code set: what a developer without groove has).
    file_baseline: bool = False


def eval_sets() -> dict[str, EvalSet]:
    """Every set this checkout can run (the shared sets only where ``../shared`` exists)."""
    out: dict[str, EvalSet] = {}
    if (SHARED / "golden.yml").is_file():
        out["ferry"] = EvalSet("ferry", SHARED / "kb", SHARED / "golden.yml",
                               SHARED / "unanswerable.yml", {})
    book = SHARED / "rust-book"
    if (book / "golden.yml").is_file():
        out["rust-book"] = EvalSet("rust-book", book / "kb", book / "golden.yml",
                                   book / "unanswerable.yml", {})
    fixture = ROOT / "tests" / "fixtures" / "quality_kb"
    out["fixture"] = EvalSet("fixture", fixture, fixture / ".groove-eval.yml",
                             ROOT / "tests" / "fixtures" / "quality_unanswerable.yml", {})
    out["code"] = _code_set()
    return out


def _code_set() -> EvalSet:
    """Installed click (Python) and playwright's driver (JavaScript): benchmarks/code_corpus.py."""
    return EvalSet("code", code_corpus.GOLDEN.parent, code_corpus.GOLDEN, None,
                   {"parsers": {"enabled": list(code_corpus.LANGUAGES)}}, code_corpus.build,
                   digest=code_corpus.digest, file_baseline=True)


def half_of(query_id: str) -> str:
    """``A`` (choose knobs here) or ``B`` (report here): a fixed split by a hash of the id."""
    return "A" if hashlib.sha256(query_id.encode()).digest()[0] % 2 == 0 else "B"


def category_of(query_id: str) -> str:
    """The id's prefix (``s``, ``m``, ``x``, ``f``), or ``other``."""
    head = query_id.split("-", 1)[0]
    return head if "-" in query_id and head in CATEGORIES else "other"


def open_kb(spec: EvalSet, embedder: CachingEmbedder, search: dict[str, Any],
            cache: Path = CACHE) -> KnowledgeBase:
    """The cached index of ``spec`` (built on first use) with ``[search]`` overrides."""
    digest = spec.digest() if spec.digest is not None else _tree_digest(spec.source)
    folder = cache / f"{spec.name}-{digest}-{SOURCE_HASH}"
    kb_path = folder / "kb"
    overrides = {**spec.overrides, "search": search} if search else dict(spec.overrides)
    if not (folder / "done").is_file():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        if spec.build is not None:
            kb_path.mkdir()
            spec.build(kb_path)
        else:
            # Never an index someone built inside the source folder: each set is built here.
            shutil.copytree(spec.source, kb_path, ignore=shutil.ignore_patterns(".groove.db*"))
        kb = KnowledgeBase(load_config(kb_path=kb_path, cwd=folder, overrides=spec.overrides),
                           embedder=embedder)
        print(f"[quality] indexing {spec.name} ...", file=sys.stderr)
        kb.index()
        embedder.save()
        kb.close()
        (folder / "done").write_text("ok\n")
    return KnowledgeBase(load_config(kb_path=kb_path, cwd=folder, overrides=overrides),
                         embedder=embedder)


def _doc_ranks(ranking: Sequence[tuple[str, str | None]], expected: Sequence[Expected]
               ) -> list[int | None]:
    files = [Expected(path=e.path, heading=None) for e in expected]
    return expected_ranks(ranking, files)


def _scores(ranks: Sequence[int | None]) -> dict[str, float]:
    """recall@1 is a hit at rank 1; recall@5 the share found in the top 5, hit@5 any of them."""
    found = [r for r in ranks if r is not None]
    best = min(found) if found else None
    return {"recall@1": float(best == 1),
            "recall@5": sum(1 for r in found if r <= 5) / len(ranks),
            "hit@5": float(best is not None and best <= 5),
            "mrr": 1.0 / best if best else 0.0}


def _missing_targets(kb: KnowledgeBase, spec: EvalSet) -> list[str]:
    """Expected entries no indexed document or section carries (a broken golden entry)."""
    with kb.reading() as store:
        known = {(d.path, c.heading) for d in store.list_documents()
                 for c in store.document_chunks(d.id)}
    paths = {path for path, _ in known}
    return [f"{q.id}: {e.path}" + (f" § {e.heading}" if e.heading else "")
            for q in load_golden(spec.golden).queries for e in q.expected
            if (e.path not in paths if e.heading is None else (e.path, e.heading) not in known)]


def run_set(kb: KnowledgeBase, spec: EvalSet) -> dict[str, Any]:
    """Every question of ``spec`` through ``kb.search``: per-question rows and the matrix."""
    for missing in _missing_targets(kb, spec):
        print(f"[quality] warning: {spec.name}: no such indexed section: {missing}",
              file=sys.stderr)
    rows: list[dict[str, Any]] = []
    baseline = (code_corpus.FileBM25.from_folder(kb.config.kb_path)
                if spec.file_baseline else None)
    for q in load_golden(spec.golden).queries:
        response = kb.search(SearchRequest(query=q.query, limit=LIMIT))
        ranking = [(hit.path, hit.heading) for hit in response.results]
        section = _scores(expected_ranks(ranking, q.expected))
        document = _scores(_doc_ranks(ranking, q.expected))
        row = {"id": q.id, "category": category_of(q.id), "half": half_of(q.id),
               **section, **{f"doc_{k}": v for k, v in document.items()},
               "low_confidence": float(response.low_confidence),
               "top": [f"{p} § {h}" for p, h in ranking[:3]]}
        if baseline is not None:
            files = code_corpus.file_scores(baseline.rank(q.query), (e.path for e in q.expected))
            row.update({f"bm25_file_{k}": v for k, v in files.items()})
        rows.append(row)
    flagged: list[dict[str, Any]] = []
    if spec.unanswerable is not None and spec.unanswerable.is_file():
        for text in load_unanswerable(spec.unanswerable):
            response = kb.search(SearchRequest(query=text, limit=LIMIT))
            flagged.append({"query": text, "half": half_of(text),
                            "low_confidence": float(response.low_confidence)})
    return {"matrix": matrix(rows, flagged), "questions": rows, "unanswerable": flagged}


METRICS = ("recall@1", "recall@5", "mrr", "doc_recall@1", "doc_recall@5", "doc_mrr",
           "low_confidence")
#: Reported where the rows have them (not in baselines written before they existed):
#: hit@5 at section and document level, and the whole-file BM25 baseline of the code set.
EXTRA_METRICS = ("hit@5", "doc_hit@5", "bm25_file_hit@1", "bm25_file_hit@5", "bm25_file_mrr")


def _mean(rows: Sequence[dict[str, Any]], key: str) -> float:
    return round(sum(r[key] for r in rows) / len(rows), 3)


def matrix(rows: Sequence[dict[str, Any]], flagged: Sequence[dict[str, Any]]
           ) -> dict[str, Any]:
    """Per category (and ``all``) and per half: the metrics above, with the question count."""
    out: dict[str, Any] = {}
    for half in ("all", "A", "B"):
        in_half = [r for r in rows if half == "all" or r["half"] == half]
        cells: dict[str, Any] = {}
        for cat in ("all", *CATEGORIES, "other"):
            subset = [r for r in in_half if cat == "all" or r["category"] == cat]
            if subset:
                present = [m for m in EXTRA_METRICS if all(m in r for r in subset)]
                cells[cat] = {"n": len(subset),
                              **{m: _mean(subset, m) for m in (*METRICS, *present)}}
        unans = [f for f in flagged if half == "all" or f["half"] == half]
        if unans:
            cells["unanswerable_low_confidence"] = _mean(unans, "low_confidence")
            cells["unanswerable_n"] = len(unans)
        out[half] = cells
    return out


def compare(baseline: dict[str, Any], current: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(violations, every moved row) of ``current`` against ``baseline`` (same variant, set)."""
    broken: list[str] = []
    moved: list[str] = []
    for variant, sets in current["variants"].items():
        for name, result in sets.items():
            old = baseline.get("variants", {}).get(variant, {}).get(name)
            if old is None:
                continue
            now_cells, old_cells = result["matrix"]["all"], old["matrix"]["all"]
            for cat, cell in now_cells.items():
                if not isinstance(cell, dict) or cat not in old_cells:
                    continue
                for metric in (*METRICS, *EXTRA_METRICS):
                    if metric not in cell or metric not in old_cells[cat]:
                        continue
                    delta = cell[metric] - old_cells[cat][metric]
                    if abs(delta) < 1e-9:
                        continue
                    row = (f"{variant} {name} {cat} {metric}: "
                           f"{old_cells[cat][metric]:.3f} -> {cell[metric]:.3f} ({delta:+.3f})")
                    moved.append(row)
                    base = metric.removeprefix("doc_")
                    if ((base == "mrr" and cat == "all" and delta < -MRR_TOLERANCE)
                            or (base == "recall@1" and delta < -RECALL_TOLERANCE)):
                        broken.append(row)
            _moved_questions(old, result, f"{variant} {name}", moved)
    return broken, moved


def _moved_questions(old: dict[str, Any], new: dict[str, Any], where: str,
                     moved: list[str]) -> None:
    before = {q["id"]: q for q in old.get("questions", [])}
    for q in new["questions"]:
        prev = before.get(q["id"])
        if prev is not None and prev["mrr"] != q["mrr"]:
            moved.append(f"  {where} {q['id']}: mrr {prev['mrr']:.3f} -> {q['mrr']:.3f}"
                         f" (top: {q['top'][0] if q['top'] else '-'})")


def table(result: dict[str, Any]) -> str:
    """The matrix as a Markdown table (one row per variant, set and category)."""
    lines = ["| variant | set | category | n | r@1 | r@5 | MRR | doc r@1 | doc MRR | low_conf |"
             " unans low_conf |", "|" + "---|" * 11]
    for variant, sets in result["variants"].items():
        for name, data in sets.items():
            cells = data["matrix"]["all"]
            for cat, c in cells.items():
                if not isinstance(c, dict):
                    continue
                unans = cells.get("unanswerable_low_confidence", "") if cat == "all" else ""
                lines.append(f"| {variant} | {name} | {cat} | {c['n']} | {c['recall@1']:.3f} | "
                             f"{c['recall@5']:.3f} | {c['mrr']:.3f} | {c['doc_recall@1']:.3f} | "
                             f"{c['doc_mrr']:.3f} | {c['low_confidence']:.3f} | {unans} |")
    return "\n".join(lines + _code_table(result))


def _code_table(result: dict[str, Any]) -> list[str]:
    """The sets with a file baseline: groove at definition and file level beside BM25 over files."""
    rows = [f"| {variant} | {name} | {cat} | {c['n']} | {c['recall@1']:.3f} | {c['hit@5']:.3f} | "
            f"{c['mrr']:.3f} | {c['doc_recall@1']:.3f} | {c['bm25_file_hit@1']:.3f} | "
            f"{c['bm25_file_hit@5']:.3f} | {c['bm25_file_mrr']:.3f} |"
            for variant, sets in result["variants"].items() for name, data in sets.items()
            for cat, c in data["matrix"]["all"].items()
            if isinstance(c, dict) and "bm25_file_hit@1" in c]
    if not rows:
        return []
    return ["", "| variant | set | category | n | def hit@1 | def hit@5 | def MRR | file hit@1 |"
            " BM25 file hit@1 | BM25 file hit@5 | BM25 file MRR |", "|" + "---|" * 11, *rows]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=None, help="comma-separated (default: every set)")
    parser.add_argument("--fast", action="store_true", help="only " + ", ".join(FAST_SETS))
    parser.add_argument("--variants", action="store_true",
                        help="also with the cross-language stage off")
    parser.add_argument("--search", default=None,
                        help="JSON [search] overrides for the default variant (tuning)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--check", type=Path, default=None, help="baseline JSON to compare with")
    parser.add_argument("--cache", type=Path, default=CACHE,
                        help="where indexes and passage vectors are kept (default: %(default)s)")
    args = parser.parse_args(argv)
    available = eval_sets()
    wanted = (FAST_SETS if args.fast else
              tuple(args.sets.split(",")) if args.sets else tuple(available))
    missing = [name for name in wanted if name not in available]
    if missing and args.fast:  # a checkout without ../shared: say so, run what there is
        print(f"[quality] skipped, not in this checkout: {', '.join(missing)}", file=sys.stderr)
        wanted = tuple(name for name in wanted if name in available)
    elif missing:
        print(f"[quality] no such set here: {', '.join(missing)} "
              f"(known: {', '.join(available)})", file=sys.stderr)
        return 2
    embedder = CachingEmbedder(get_embedder("multilingual-e5-small"),
                               args.cache / "embeddings.npz")
    variants: dict[str, dict[str, Any]] = {
        "defaults": json.loads(args.search) if args.search else {}}
    if args.variants:
        variants["cross_language_off"] = CROSS_LANGUAGE_OFF
    result: dict[str, Any] = {"limit": LIMIT, "tolerance": {
        "mrr": MRR_TOLERANCE, "recall@1": RECALL_TOLERANCE}, "variants": {}}
    if "code" in wanted:
        for line in code_corpus.version_warnings():
            print(f"[quality] warning: {line}", file=sys.stderr)
        result["code_versions"] = code_corpus.installed_versions()
    for variant, search in variants.items():
        result["variants"][variant] = {}
        for name in wanted:
            kb = open_kb(available[name], embedder, search, args.cache)
            try:
                result["variants"][variant][name] = run_set(kb, available[name])
            finally:
                kb.close()
    embedder.save()
    print(table(result))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    if args.check:
        baseline = json.loads(args.check.read_text())
        broken, moved = compare(baseline, result)
        for row in moved:
            print(("DROP " if row in broken else "moved ") + row)
        if broken:
            print(f"[quality] {len(broken)} figure(s) dropped beyond the tolerance "
                  f"(MRR {MRR_TOLERANCE}, recall@1 {RECALL_TOLERANCE})", file=sys.stderr)
            return 1
        print("[quality] no figure dropped beyond the tolerance", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
