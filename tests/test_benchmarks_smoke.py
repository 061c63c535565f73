"""The benchmark corpus generator is deterministic and produces what it promises.

No timing is asserted here: SPEC section 12 numbers come from benchmarks/run.py.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from groove.indexing.chunking import chunk_document
from groove.parsers import get_parser_for

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _corpus():
    spec = importlib.util.spec_from_file_location("bench_corpus", BENCH / "corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_corpus"] = module
    spec.loader.exec_module(module)
    return module


def _bytes(tmp: Path, corpus, seed: int) -> dict[str, bytes]:
    corpus.write_corpus(tmp, list(corpus.generate(60, seed)))
    return {str(p.relative_to(tmp)): p.read_bytes() for p in sorted(tmp.rglob("*.md"))}


def test_same_seed_gives_the_same_bytes_and_another_seed_does_not(tmp_path):
    corpus = _corpus()
    first = _bytes(tmp_path / "a", corpus, seed=7)
    again = _bytes(tmp_path / "b", corpus, seed=7)
    other = _bytes(tmp_path / "c", corpus, seed=8)
    assert first and first == again
    assert other != first
    assert corpus.corpus_key(60, 7) == corpus.corpus_key(60, 7) != corpus.corpus_key(60, 8)


def test_generated_documents_chunk_into_the_planned_number_of_chunks():
    corpus = _corpus()
    docs = list(corpus.generate(60, 3))
    assert sum(d.expected_chunks for d in docs) == 60
    assert any(d.japanese for d in docs) and not all(d.japanese for d in docs)
    total = 0
    for doc in docs:
        parsed = get_parser_for(doc.path, ["md"]).parse(doc.text.encode("utf-8"), doc.path)
        assert parsed.date and parsed.tags and not parsed.warnings
        chunks = chunk_document(parsed, exclude_headings=[], max_tokens=496,
                                count_tokens=lambda t: max(1, len(t) // 4))
        assert all(c.quality >= 0.3 for c in chunks)
        total += len(chunks)
    assert total == 60


def test_realistic_corpus_sections_hold_150_to_400_model_tokens(embedder, monkeypatch):
    """The lifecycle benchmark's corpus is what its README says: one chunk per 150-400-token section."""
    monkeypatch.syspath_prepend(str(BENCH))  # realistic.py imports corpus.py by name
    spec = importlib.util.spec_from_file_location("bench_realistic", BENCH / "realistic.py")
    realistic = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(realistic)
    docs = list(realistic.generate_realistic(24, seed=5))
    assert docs == list(realistic.generate_realistic(24, seed=5))
    assert sum(d.expected_chunks for d in docs) == 24
    sizes = []
    for doc in docs:
        parsed = get_parser_for(doc.path, ["md"]).parse(doc.text.encode("utf-8"), doc.path)
        chunks = chunk_document(parsed, exclude_headings=[], max_tokens=496,
                                count_tokens=embedder.token_count)
        assert len(chunks) == doc.expected_chunks
        sizes += [c.token_count for c in chunks]
    assert min(sizes) >= 150 and max(sizes) <= 400


def test_flat_cost_table_reports_each_size_against_its_own_query_embedding(monkeypatch):
    """benchmarks/run.py's per-size table: p50/p95 over the embedding measured in the same child."""
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("bench_run", BENCH / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    child = {"chunks": 50_000, "search_p50_ms": 30.0, "search_p95_ms": 45.0,
             "query_embed_p50_ms": 20.0, "search_p50_ms_by_shape": {"english": 31.0},
             "search_cpu_ms": 40.0, "query_embed_cpu_ms": 16.0, "search_cpu_over_embed_cpu": 2.5}
    table = module.flat_cost_table({"50k": child})
    assert table == {"50k": {"chunks": 50_000, "search_p50_ms": 30.0, "search_p95_ms": 45.0,
                             "query_embed_p50_ms": 20.0, "p50_over_embed": 1.5,
                             "p95_over_embed": 2.25, "search_cpu_ms": 40.0,
                             "search_cpu_over_embed_cpu": 2.5,
                             "p50_ms_by_shape": {"english": 31.0}}}
