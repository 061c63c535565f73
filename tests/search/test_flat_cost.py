"""A search costs SQLite the same at 1k and at 20k chunks (not timed: counted).

Through :meth:`KnowledgeBase.search`, the whole answer including its
``index`` state: the SQL statements it runs and the virtual-machine steps
SQLite spends on them are counted on a 1k-chunk and a 20k-chunk knowledge
base that hold the same few matching chunks. A statement whose work grows
with the corpus (a ``count(*)``, an anti-join over every chunk, a full-table
substring scan) shows up as more steps on the larger one. Vectors are
synthetic and the query embedder is a fixed vector: what is measured is the
store, not the model.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from searchkit import DIM, FixedQueryEmbedder, unit

from groove.config import load_config
from groove.kb import KnowledgeBase
from groove.models import Chunk, DocumentRecord
from groove.search.candidates import candidate_count
from groove.search.request import SearchRequest
from groove.store import open_store
from groove.store.base import COMPLETE

CHUNKS_PER_DOC = 20
#: Every KB holds exactly these matching chunks; the rest is filler no query matches.
MATCHING = {
    "birds/heron.md": ["Herons wait motionless at the river mouth at dawn.",
                       "A grey heron nests in tall trees near the river."],
    "birds/kingfisher.md": ["Kingfishers dive from low branches over the river.",
                            "The kingfisher's nest is a tunnel in the river bank."],
}
QUERIES = [
    SearchRequest(query="heron at the river"),
    SearchRequest(query='"grey heron" nests'),
    SearchRequest(query="river birds -kingfisher"),
    SearchRequest(query="river", category="birds"),
]


def build_kb(root: Path, chunks: int) -> KnowledgeBase:
    """A KB of ``chunks`` chunks written straight through the store API (no model)."""
    kb_path = root / "kb"
    kb_path.mkdir(parents=True)
    config = load_config(kb_path=kb_path, cwd=root)
    store = open_store(config.db_path, create=True)
    rng = np.random.default_rng(7)
    store.set_meta(model_id=FixedQueryEmbedder.model_id, dim=DIM, context_mode="off")

    def write(path: str, texts: list[str], category: str) -> None:
        vectors = rng.standard_normal((len(texts), DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        record = DocumentRecord(path=path, sha256=hashlib.sha256(path.encode()).hexdigest(),
                                title=path, category=category, topic=None, date=None, tags=(),
                                tags_invalid=False, metadata={}, size=1, mtime=1.0)
        store.write_document(record, [Chunk(i, f"Part {i}", 2, "", t, 12, 1.0, ())
                                      for i, t in enumerate(texts)], vectors)

    for path, texts in MATCHING.items():
        write(path, texts, "birds")
    filler = chunks - sum(len(t) for t in MATCHING.values())
    for d in range(filler // CHUNKS_PER_DOC):
        write(f"filler/doc{d:05d}.md",
              [f"Ledger entry {d} line {i}: quarterly totals balanced"
               + (" and audited." if i % 10 == 0 else ".") for i in range(CHUNKS_PER_DOC)],
              "finance")
    store.set_meta(last_indexed=time.time(), build_state=COMPLETE)
    store.close()
    return KnowledgeBase(config, embedder=FixedQueryEmbedder(unit((0, 1.0))))


def cost_per_search(kb: KnowledgeBase) -> list[tuple[tuple[str, ...], int]]:
    """For each query: the statements this thread ran and the VM steps they took."""
    for request in QUERIES:  # warm: resident vectors, metadata, the file count
        kb.search(request)
    kb.index_state(wait_for_files=True)
    conn = kb.store._conn  # type: ignore[attr-defined]
    me = threading.get_ident()
    out = []
    for request in QUERIES:
        statements: list[str] = []
        steps = [0]

        def trace(sql: str, statements: list[str] = statements) -> None:
            if threading.get_ident() == me:
                statements.append(sql)

        def step(steps: list[int] = steps) -> int:
            if threading.get_ident() == me:
                steps[0] += 1
            return 0

        conn.set_trace_callback(trace)  # expanded SQL: bound values appear as literals
        conn.set_progress_handler(step, 1)
        try:
            response = kb.search(request)
        finally:
            conn.set_trace_callback(None)
            conn.set_progress_handler(None, 1)
        assert response.results and response.index is not None
        assert response.index.state == "complete"
        out.append((tuple(statements), steps[0]))
    return out


@pytest.mark.slow  # builds a 20k-chunk index
def test_a_search_costs_sqlite_the_same_at_1k_and_20k_chunks(tmp_path):
    small = build_kb(tmp_path / "small", 1_000)
    large = build_kb(tmp_path / "large", 20_000)
    try:
        assert large.index_state().chunks > 19_900 > 20 * small.index_state().chunks
        small_cost, large_cost = cost_per_search(small), cost_per_search(large)
    finally:
        small.close()
        large.close()
    for request, (s_sql, s_steps), (l_sql, l_steps) in zip(QUERIES, small_cost, large_cost,
                                                          strict=True):
        # the same statements (chunk ids and limits differ as literals only) ...
        assert [_shape(sql) for sql in s_sql] == [_shape(sql) for sql in l_sql], request.query
        assert not [sql for sql in l_sql if "count(" in sql.lower()], l_sql
        # ... doing the same work: a B-tree seek is one step at any depth, a scan is not
        assert l_steps == s_steps, (request.query, s_steps, l_steps)


def test_a_search_reads_the_index_metadata_once_inside_one_snapshot(tmp_path):
    """The model check, the vector generation, the full-text stamp and the answer's index
    state all come from one read of the metadata, in the snapshot the answer is read in."""
    kb = build_kb(tmp_path, 1_000)
    try:
        for statements, _ in cost_per_search(kb):
            assert statements[0] == "BEGIN" and statements[-1] == "COMMIT", statements
            assert statements.count("BEGIN") == 1, statements
            assert sum("index_meta" in sql for sql in statements) == 1, statements
    finally:
        kb.close()


def _shape(sql: str) -> str:
    return re.sub(r"\d+", "N", sql)


def excluded_ids_asked(kb: KnowledgeBase, request: SearchRequest) -> list[int | None]:
    """How many chunk ids each exclusion lookup of one search named (None: every chunk)."""
    asked: list[int | None] = []
    store = kb.store
    real = store.fulltext_matching

    def spy(terms, among=None):  # type: ignore[no-untyped-def]
        asked.append(None if among is None else len(among))
        return real(terms, among)

    kb.search(request)  # warm
    store.fulltext_matching = spy  # type: ignore[method-assign]
    try:
        response = kb.search(request)
    finally:
        del store.fulltext_matching
    assert response.results
    assert not [h for h in response.results if "audited" in h.content]
    return asked


@pytest.mark.slow  # builds a 20k-chunk index
def test_an_exclusion_is_checked_on_the_candidates_only(tmp_path):
    """A tenth of the chunks hold the excluded word: only candidates are ever looked up."""
    request = SearchRequest(query="quarterly totals -audited", limit=5)
    small = build_kb(tmp_path / "small", 1_000)
    large = build_kb(tmp_path / "large", 20_000)
    try:
        small_asked = excluded_ids_asked(small, request)
        large_asked = excluded_ids_asked(large, request)
    finally:
        small.close()
        large.close()
    for asked in (small_asked, large_asked):
        assert asked and None not in asked, asked
        # one round of at most two vector masks x 2N candidates each, at any size
        assert max(asked) <= 2 * 2 * candidate_count(request.limit), asked
