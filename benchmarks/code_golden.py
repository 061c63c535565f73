"""Retrieval quality on source code: vector leg, full-text leg, fused, and BM25 over files.

    python benchmarks/code_golden.py [--workdir DIR]

Builds a knowledge base in a temp folder from installed packages
(benchmarks/code_corpus.py: click's Python as ``click/``, the readable
JavaScript of playwright's driver as ``playwright/``), warns when an installed
version is not the one ``benchmarks/code_golden.yml`` pins, indexes it with
``[parsers] enabled = ["python", "javascript"]`` and the default model, checks
that every expected (path, heading) exists as a chunk, then runs the golden set
three times: fused (as users get it), vector leg only, full-text leg only; and
ranks whole files with a plain BM25 (identifiers split) as the baseline.
Prints one JSON object. Nothing is written to the repository. ``--workdir``
keeps the folder and its index there, so a second run only re-embeds what
changed. The evaluation matrix (benchmarks/quality.py, set ``code``) runs the
same set with its cache and tolerance check.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))

import code_corpus  # noqa: E402

from groove.config import load_config
from groove.evaluation import run_eval
from groove.evaluation.golden import load_golden
from groove.kb import KnowledgeBase
from groove.search.candidates import VectorPools

GOLDEN = code_corpus.GOLDEN
KEYS = ("recall@1", "recall@5", "mrr")


def build_kb(folder: Path) -> Path:
    """The corpus and the golden file (as the KB's default golden) in ``folder``."""
    for source in code_corpus.SOURCES:  # a kept workdir: refresh the copied sources
        shutil.rmtree(folder / source.target, ignore_errors=True)
    code_corpus.build(folder)
    # an unchanged file keeps its hash in a kept workdir, so it is not re-embedded
    shutil.copy(GOLDEN, folder / ".groove-eval.yml")
    return folder


def missing_targets(kb: KnowledgeBase) -> list[str]:
    """Expected (path, heading) pairs that no chunk carries: a broken golden entry."""
    with kb.reading() as store:
        headings = {(d.path, c.heading) for d in store.list_documents()
                    for c in store.document_chunks(d.id)}
    return [f"{q.id}: {e.path} {e.heading}" for q in load_golden(GOLDEN).queries
            for e in q.expected if (e.path, e.heading) not in headings]


def file_baseline(folder: Path) -> dict[str, float]:
    """Mean file-level hit@1, hit@5 and MRR of BM25 over whole files (identifiers split)."""
    bm25 = code_corpus.FileBM25.from_folder(folder)
    rows = [code_corpus.file_scores(bm25.rank(q.query), (e.path for e in q.expected))
            for q in load_golden(GOLDEN).queries]
    return {k: round(sum(r[k] for r in rows) / len(rows), 3) for k in ("hit@1", "hit@5", "mrr")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    for line in code_corpus.version_warnings():
        print(f"warning: {line}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.workdir or Path(scratch)
        kb_path = Path(tmp) / "kb"
        kb_path.mkdir(parents=True, exist_ok=True)
        build_kb(kb_path)
        config = load_config(kb_path=kb_path, cwd=Path(tmp),
                             overrides={"parsers": {"enabled": list(code_corpus.LANGUAGES)}})
        kb = KnowledgeBase(config)
        summary = kb.index()
        missing = missing_targets(kb)
        fused = run_eval(kb, record_history=False).metrics
        with mock.patch("groove.search.candidates.fulltext_leg", return_value=[]):
            vector = run_eval(kb, record_history=False).metrics
        # the pipeline reaches the vector leg through its pools (before the language decision)
        with mock.patch("groove.search.candidates.vector_pools",
                        return_value=VectorPools([])):
            full_text = run_eval(kb, record_history=False).metrics
        kb.close()
        baseline = file_baseline(kb_path)
    print(json.dumps({
        "versions": code_corpus.installed_versions(),
        "documents": summary.indexed + summary.updated + summary.unchanged,
        "queries": len(load_golden(GOLDEN).queries),
        "missing_targets": missing,
        "fused": {k: round(fused[k], 3) for k in KEYS},
        "vector_only": {k: round(vector[k], 3) for k in KEYS},
        "full_text_only": {k: round(full_text[k], 3) for k in KEYS},
        "bm25_whole_files": baseline,
    }, indent=2))


if __name__ == "__main__":
    main()
