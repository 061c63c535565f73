"""Retrieval quality of each leg on the quality fixture: hybrid vs vector-only.

    python benchmarks/eval_legs.py [--kb tests/fixtures/quality_kb]

Copies the fixture to a temp folder (so no index or history lands in the
repo), indexes it with the default model, runs ``groove eval`` once with both
legs and once with the full-text leg switched off, and prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from unittest import mock

from groove.config import load_config
from groove.evaluation import run_eval
from groove.kb import KnowledgeBase

ROOT = Path(__file__).resolve().parent.parent
KEYS = ("recall@1", "recall@5", "mrr", "multi_recall@5")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kb", type=Path, default=ROOT / "tests/fixtures/quality_kb")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        kb_path = Path(tmp) / "kb"
        shutil.copytree(args.kb, kb_path)
        kb = KnowledgeBase(load_config(kb_path=kb_path, cwd=Path(tmp)))
        kb.index()
        hybrid = run_eval(kb, record_history=False).metrics
        with mock.patch("groove.search.candidates.fulltext_leg", return_value=[]):
            vector_only = run_eval(kb, record_history=False).metrics
        kb.close()
    print(json.dumps({
        "hybrid": {k: round(hybrid[k], 3) for k in KEYS if k in hybrid},
        "vector_only": {k: round(vector_only[k], 3) for k in KEYS if k in vector_only},
    }, indent=2))


if __name__ == "__main__":
    main()
