"""SIGKILL during `groove index`, then a re-run, gives exactly the uninterrupted index."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from _index_snapshot import index_snapshot

SEEDS = [3, 11, 29]


def _corpus(root: Path) -> Path:
    rng = random.Random(7)
    words = ["index", "search", "vector", "chunk", "heading", "notes", "fusion", "rank",
             "query", "token", "model", "検索", "文書", "見出し", "評価", "速度"]
    for i in range(24):
        sections = []
        for s in range(3):
            body = " ".join(rng.choice(words) for _ in range(40))
            sections.append(f"## Section {s} of note {i}\n\n{body}\n")
        text = f"---\ntitle: Note {i}\ntags: [t{i % 4}]\n---\n# Note {i}\n\n" + "\n".join(sections)
        path = root / f"folder{i % 3}" / f"note-{i:02d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _index_cmd(kb: Path, db: Path) -> list[str]:
    return [sys.executable, "-m", "groove", "index", "--kb-path", str(kb), "--db-path", str(db)]


_snapshot = index_snapshot


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    kb = _corpus(tmp_path_factory.mktemp("kb"))
    db = tmp_path_factory.mktemp("ref") / "ref.db"
    subprocess.run(_index_cmd(kb, db), check=True, capture_output=True, timeout=300)
    return kb, _snapshot(db)


@pytest.mark.parametrize("seed", SEEDS)
def test_sigkill_mid_index_then_rerun_equals_uninterrupted_run(reference, tmp_path, seed):
    kb, (ref_docs, ref_vectors, ref_findings) = reference
    assert ref_findings == []
    db = tmp_path / "killed.db"
    rng = random.Random(seed)
    kill_after_files = rng.randrange(0, 20)

    proc = subprocess.Popen(_index_cmd(kb, db), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            text=True)
    seen = 0
    deadline = time.monotonic() + 240
    while seen < kill_after_files and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        if line.startswith("indexed "):
            seen += 1
    time.sleep(rng.random() * 0.05)  # land anywhere inside the next write
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)

    rerun = subprocess.run(_index_cmd(kb, db), capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    docs, vectors, findings = _snapshot(db)
    assert findings == []
    assert docs == ref_docs
    for path, ref in ref_vectors.items():
        np.testing.assert_allclose(vectors[path], ref, atol=1e-4)
