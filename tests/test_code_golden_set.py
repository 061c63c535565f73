"""The code evaluation set (benchmarks/code_golden.yml, benchmarks/code_corpus.py): its
corpus is installed code, every expected definition is a chunk groove makes of it, and the
BM25-over-files baseline splits identifiers the way it says."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from groove.evaluation.golden import load_golden
from groove.indexing.chunking import bounded_chunks
from groove.parsers.code import JavascriptParser, PythonParser

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _corpus_module():
    spec = importlib.util.spec_from_file_location("bench_code_corpus", BENCH / "code_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_code_corpus"] = module
    spec.loader.exec_module(module)
    return module


corpus = _corpus_module()


def test_the_set_is_large_mixed_and_pins_what_it_was_written_against():
    queries = load_golden(corpus.GOLDEN).queries
    assert len(queries) >= 40
    folders = {e.path.split("/", 1)[0] for q in queries for e in q.expected}
    assert folders == {"click", "playwright"}
    assert {Path(e.path).suffix for q in queries for e in q.expected} == {".py", ".js"}
    assert sum(q.id.startswith("x-") for q in queries) >= 4
    assert all(e.heading for q in queries for e in q.expected)
    assert set(corpus.pinned_versions()) == {s.distribution for s in corpus.SOURCES}


def test_every_expected_definition_is_a_chunk_of_the_installed_code(tmp_path):
    """Checked without a model: the same parsers and chunker the index uses."""
    for line in corpus.version_warnings():  # another version: the answers may have moved
        pytest.skip(line)
    corpus.build(tmp_path)
    parsers = {".py": PythonParser(), ".js": JavascriptParser()}
    headings: set[tuple[str, str | None]] = set()
    for path in sorted(tmp_path.rglob("*")):
        if path.suffix in parsers:
            rel = path.relative_to(tmp_path).as_posix()
            doc = parsers[path.suffix].parse(path.read_bytes(), rel)
            plan = bounded_chunks(doc, exclude_headings=[], max_tokens=400,
                                  count_tokens=lambda text: max(1, len(text) // 4),
                                  max_chunks=256, path=rel)
            headings |= {(rel, c.heading) for c in plan.chunks}
    missing = [f"{q.id}: {e.path} § {e.heading}" for q in load_golden(corpus.GOLDEN).queries
               for e in q.expected if (e.path, e.heading) not in headings]
    assert not missing


def test_identifiers_are_split_into_their_parts_and_kept_whole():
    assert corpus.tokens("get_app_dir(getAppDir, HTTPServer2)") == [
        "get", "app", "dir", "get_app_dir", "get", "app", "dir", "getappdir",
        "http", "server", "2", "httpserver2"]
    assert corpus.tokens("端末の画面") == ["端末", "末の", "の画", "画面"]


def test_bm25_ranks_the_file_that_shares_the_questions_words_first():
    bm25 = corpus.FileBM25([
        ("a.py", "def read_config_file(path):\n    return open(path).read()\n"),
        ("b.js", "function parseFlags(argv) { return argv.filter(isFlag); }\n"),
        ("c.py", "def unrelated():\n    pass\n"),
    ])
    assert bm25.rank("parse the command line flags")[0] == "b.js"
    assert bm25.rank("read the config file") == ["a.py"]
    assert corpus.file_scores(["b.js", "a.py"], ["a.py"]) == {"hit@1": 0.0, "hit@5": 1.0,
                                                              "mrr": 0.5}
