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
    """groove's own source and the installed click package (benchmarks/code_golden.yml)."""
    import click

    click_src = Path(click.__file__).parent

    def build(folder: Path) -> None:
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(ROOT / "src" / "groove", folder / "groove", ignore=ignore)
        shutil.copytree(click_src, folder / "click", ignore=ignore)

    return EvalSet("code", ROOT / "src" / "groove", HERE / "code_golden.yml", None,
                   {"parsers": {"enabled": ["md", "python"]}}, build)


def half_of(query_id: str) -> str:
    """``A`` (choose knobs here) or ``B`` (report here): a fixed split by a hash of the id."""
    return "A" if hashlib.sha256(query_id.encode()).digest()[0] % 2 == 0 else "B"


def category_of(query_id: str) -> str:
    """The id's prefix (``s``, ``m``, ``x``, ``f``), or ``other``."""
    head = query_id.split("-", 1)[0]
    return head if "-" in query_id and head in CATEGORIES else "other"


def open_kb(spec: EvalSet, embedder: CachingEmbedder, search: dict[str, Any]) -> KnowledgeBase:
    """The cached index of ``spec`` (built on first use) with ``[search]`` overrides."""
    digest = _tree_digest(spec.source)
    folder = CACHE / f"{spec.name}-{digest}-{SOURCE_HASH}"
    kb_path = folder / "kb"
    overrides = {**spec.overrides, "search": search} if search else dict(spec.overrides)
    if not (folder / "done").is_file():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        if spec.build is not None:
            kb_path.mkdir()
            spec.build(kb_path)
        else:
            shutil.copytree(spec.source, kb_path)
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
    found = [r for r in ranks if r is not None]
    best = min(found) if found else None
    return {"recall@1": float(best == 1),
            "recall@5": sum(1 for r in found if r <= 5) / len(ranks),
            "mrr": 1.0 / best if best else 0.0}


def run_set(kb: KnowledgeBase, spec: EvalSet) -> dict[str, Any]:
    """Every question of ``spec`` through ``kb.search``: per-question rows and the matrix."""
    rows: list[dict[str, Any]] = []
    for q in load_golden(spec.golden).queries:
        response = kb.search(SearchRequest(query=q.query, limit=LIMIT))
        ranking = [(hit.path, hit.heading) for hit in response.results]
        section = _scores(expected_ranks(ranking, q.expected))
        document = _scores(_doc_ranks(ranking, q.expected))
        rows.append({"id": q.id, "category": category_of(q.id), "half": half_of(q.id),
                     **section, **{f"doc_{k}": v for k, v in document.items()},
                     "low_confidence": float(response.low_confidence),
                     "top": [f"{p} § {h}" for p, h in ranking[:3]]})
    flagged: list[dict[str, Any]] = []
    if spec.unanswerable is not None and spec.unanswerable.is_file():
        for text in load_unanswerable(spec.unanswerable):
            response = kb.search(SearchRequest(query=text, limit=LIMIT))
            flagged.append({"query": text, "half": half_of(text),
                            "low_confidence": float(response.low_confidence)})
    return {"matrix": matrix(rows, flagged), "questions": rows, "unanswerable": flagged}


METRICS = ("recall@1", "recall@5", "mrr", "doc_recall@1", "doc_recall@5", "doc_mrr",
           "low_confidence")


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
                cells[cat] = {"n": len(subset), **{m: _mean(subset, m) for m in METRICS}}
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
                for metric in METRICS:
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
    return "\n".join(lines)


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
                               CACHE / "embeddings.npz")
    variants: dict[str, dict[str, Any]] = {
        "defaults": json.loads(args.search) if args.search else {}}
    if args.variants:
        variants["cross_language_off"] = CROSS_LANGUAGE_OFF
    result: dict[str, Any] = {"limit": LIMIT, "tolerance": {
        "mrr": MRR_TOLERANCE, "recall@1": RECALL_TOLERANCE}, "variants": {}}
    for variant, search in variants.items():
        result["variants"][variant] = {}
        for name in wanted:
            kb = open_kb(available[name], embedder, search)
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
