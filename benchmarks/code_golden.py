"""Retrieval quality on source code: vector leg, full-text leg and fused.

    python benchmarks/code_golden.py [--click PATH] [--workdir DIR]

Builds a knowledge base in a temp folder from two real code bases, groove's
own ``src/groove`` (as ``groove/``) and the installed ``click`` package (as
``click/``; ``--click`` points at another checkout of it), indexes it with
``[parsers] enabled = ["python"]`` and the default model, checks that every
expected (path, heading) of ``benchmarks/code_golden.yml`` exists as a chunk,
then runs the golden set three times: fused (as users get it), vector leg
only, full-text leg only. Prints one JSON object. Nothing is written to the
repository. ``--workdir`` keeps the folder and its index there, so a second
run only re-embeds what changed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from unittest import mock

import click

from groove.config import load_config
from groove.evaluation import run_eval
from groove.evaluation.golden import load_golden
from groove.kb import KnowledgeBase
from groove.search.candidates import VectorPools

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "code_golden.yml"
KEYS = ("recall@1", "recall@5", "mrr")


def build_kb(folder: Path, click_src: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "src" / "groove", folder / "groove", ignore=ignore)
    shutil.copytree(click_src, folder / "click", ignore=ignore)
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--click", type=Path, default=Path(click.__file__).parent)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.workdir or Path(scratch)
        kb_path = Path(tmp) / "kb"
        if kb_path.exists():  # a kept workdir: refresh the copied sources
            for name in ("groove", "click"):
                shutil.rmtree(kb_path / name, ignore_errors=True)
        build_kb(kb_path, args.click)
        config = load_config(kb_path=kb_path, cwd=Path(tmp),
                             overrides={"parsers": {"enabled": ["python"]}})
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
    print(json.dumps({
        "documents": summary.indexed + summary.updated + summary.unchanged,
        "queries": len(load_golden(GOLDEN).queries),
        "missing_targets": missing,
        "fused": {k: round(fused[k], 3) for k in KEYS},
        "vector_only": {k: round(vector[k], 3) for k in KEYS},
        "full_text_only": {k: round(full_text[k], 3) for k in KEYS},
    }, indent=2))


if __name__ == "__main__":
    main()
