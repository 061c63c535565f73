"""The approximate vector leg: same answers as the exact scan, filters exact, index persisted.

Real SQLite stores and a real faiss index, forced on at a small size
(``ann_min_chunks=1``, ``ann_exact_max_rows=0``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groove.config.model import VectorsConfig
from groove.models import Chunk, DocumentRecord
from groove.search import ann
from groove.search.ann import ann_paths
from groove.search.filters import ChunkFilter
from groove.search.vectors import VectorIndex
from groove.store import open_store
from groove.store.base import Store

pytest.importorskip("faiss")

DIM = 32
PER_DOC = 20
FORCED = VectorsConfig(ann_min_chunks=1, ann_exact_max_rows=0)  # default nprobe


def clustered(n: int, seed: int) -> np.ndarray:
    """Unit vectors around 30 centres: neighbour structure like a text embedder's."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((30, DIM)).astype(np.float32)
    x = centres[rng.integers(0, 30, n)] + 0.5 * rng.standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def write_doc(store: Store, path: str, vectors: np.ndarray, category: str = "a") -> None:
    record = DocumentRecord(path=path, sha256=path, title=path, category=category, topic=None,
                            date=None, tags=(), tags_invalid=False, metadata={}, size=1, mtime=1.0)
    chunks = [Chunk(i, None, None, "", f"{path} {i}", 3, 1.0) for i in range(len(vectors))]
    store.write_document(record, chunks, vectors)


def make_store(db: Path, docs: int, seed: int = 1) -> Store:
    store = open_store(db, create=True)
    store.set_meta(model_id="test-model", dim=DIM, context_mode="off")
    vectors = clustered(docs * PER_DOC, seed)
    for d in range(docs):
        write_doc(store, f"d{d:03}.md", vectors[d * PER_DOC:(d + 1) * PER_DOC],
                  category="a" if d % 4 else "b")
    return store


def ready_index(store: Store, db: Path, settings: VectorsConfig = FORCED) -> VectorIndex:
    index = VectorIndex(store, settings, ann_path=db, model_id="test-model")
    index.refresh()
    assert index.wait_for_ann(timeout=120), "the background index build did not finish"
    return index


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    db = tmp_path_factory.mktemp("ann") / "index.db"
    store = make_store(db, docs=100)
    index = ready_index(store, db)
    yield store, index, db
    index.close()
    store.close()


def recall_at_10(index: VectorIndex, queries: np.ndarray, allowed: np.ndarray) -> float:
    hits = 0
    for q in queries:
        want = {c for c, _ in index.exact_top_n(q, 10, allowed)}
        hits += len(want & {c for c, _ in index.top_n(q, 10, allowed)})
    return hits / (10 * len(queries))


def test_approximate_leg_finds_what_the_exact_scan_finds(built):
    store, index, _ = built
    assert index.uses_ann and index.ann_size == len(index) == 2000
    queries = clustered(50, seed=99)
    everything = np.ones(len(index), dtype=bool)
    assert recall_at_10(index, queries, everything) >= 0.98
    # Scores are the exact cosines (the index only proposes candidates).
    exact = dict(index.exact_top_n(queries[0], 50, everything))
    for chunk_id, score in index.top_n(queries[0], 50, everything):
        if chunk_id in exact:
            assert score == pytest.approx(exact[chunk_id], abs=1e-6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), share=st.floats(0.0, 1.0), n=st.integers(1, 60))
def test_only_allowed_rows_come_back_and_limit_is_filled(built, seed, share, n):
    _, index, _ = built
    rng = np.random.default_rng(seed)
    allowed = rng.random(len(index)) < share
    got = index.top_n(clustered(1, seed)[0], n, allowed)
    ids = np.array([c for c, _ in got], dtype=np.int64)
    assert len(got) == min(n, int(allowed.sum()))
    assert allowed[index.positions(ids)].all()
    assert len(set(ids.tolist())) == len(ids)


def test_broad_filter_uses_the_index_with_oversampling(built):
    _, index, _ = built
    queries = clustered(30, seed=5)
    allowed = index.mask(ChunkFilter(category="a"))  # three documents in four
    assert 0.5 < allowed.mean() < 1.0
    assert recall_at_10(index, queries, allowed) >= 0.98


def test_index_is_persisted_and_reused(built, tmp_path):
    store, index, db = built
    saved, keys, sidecar = ann_paths(db)
    assert saved.is_file() and keys.is_file() and sidecar.is_file()
    stamp = saved.stat().st_mtime_ns
    again = ready_index(store, db)
    assert again.ann_size == len(again)
    assert saved.stat().st_mtime_ns == stamp  # loaded, not rebuilt
    again.close()


def test_incremental_update_sees_new_chunks_at_once(tmp_path):
    db = tmp_path / "index.db"
    store = make_store(db, docs=30)
    index = ready_index(store, db)
    fresh = clustered(PER_DOC, seed=77)
    write_doc(store, "new.md", fresh)
    store.delete_document("d000.md")
    index.refresh()  # the worker starts; searches must not wait for it
    everything = np.ones(len(index), dtype=bool)
    new_ids = set(index.ids[-PER_DOC:].tolist())
    assert index.top_n(fresh[3], 1, everything)[0][0] in new_ids
    assert index.wait_for_ann(timeout=120)
    assert index.top_n(fresh[3], 1, everything)[0][0] in new_ids
    assert index.ann_size == len(index) == 30 * PER_DOC
    index.close()
    store.close()


def test_an_index_file_from_another_database_is_not_trusted(tmp_path):
    first = tmp_path / "one" / "index.db"
    second = tmp_path / "two" / "index.db"
    first.parent.mkdir()
    second.parent.mkdir()
    store_one = make_store(first, docs=10, seed=1)
    ready_index(store_one, first).close()
    store_two = make_store(second, docs=10, seed=2)  # same chunk ids, other vectors
    for src, dst in zip(ann_paths(first), ann_paths(second), strict=True):
        shutil.copy(src, dst)
    index = ready_index(store_two, second)
    everything = np.ones(len(index), dtype=bool)
    own = index.vectors_for([int(index.ids[7])])[0]
    assert index.top_n(own, 1, everything)[0][0] == int(index.ids[7])
    index.close()
    store_one.close()
    store_two.close()


@pytest.mark.parametrize(("storage", "tolerance"), [("float16", 2e-3), ("int8", 2e-2)])
def test_compact_storage_keeps_scores_close(built, storage, tolerance):
    store, exact_index, db = built
    compact = VectorIndex(store, VectorsConfig(storage=storage, ann=False))
    compact.refresh()
    assert compact.matrix.nbytes < exact_index.matrix.nbytes / (1.9 if storage == "float16" else 3.5)
    everything = np.ones(len(compact), dtype=bool)
    overlap = 0
    for q in clustered(10, seed=3):
        want = dict(exact_index.exact_top_n(q, 20, everything))
        got = compact.top_n(q, 20, everything)
        for chunk_id, score in got:
            if chunk_id in want:
                assert abs(score - want[chunk_id]) <= tolerance
        overlap += len(set(list(want)[:10]) & {c for c, _ in got[:10]})
    assert overlap >= 0.9 * 100


@pytest.mark.parametrize("plant", ["list sidecar", "string sidecar", "fifo index", "fifo keys",
                                   "2-d keys", "directory index"])
def test_a_planted_or_misshapen_ann_file_is_rebuilt_or_reported_never_a_traceback(
        tmp_path, plant, caplog):
    """Each is rebuilt (or, for a directory the index cannot be saved over, searched from
    memory with one warning), the build thread finishes, and no traceback reaches the log."""
    import os

    db = tmp_path / "index.db"
    store = make_store(db, docs=20)
    ready_index(store, db).close()
    saved, keys, sidecar = ann_paths(db)
    kind, _, target = plant.partition(" ")
    path = {"sidecar": sidecar, "index": saved, "keys": keys}[target]
    path.unlink()
    if kind == "list":
        path.write_text("[1, 2, 3]", encoding="utf-8")
    elif kind == "string":
        path.write_text('"format"', encoding="utf-8")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "2-d":
        np.save(path, np.zeros((2, 2), dtype=np.int64))
    else:
        path.mkdir()
    again = ready_index(store, db)  # asserts the background build finished (no stuck thread)
    assert again.ann_size == len(again)
    assert "Traceback" not in caplog.text and not any(r.exc_info for r in caplog.records)
    if kind == "directory":
        assert "is a directory" in caplog.text
    else:
        assert path.is_file() and ann.AnnIndex.load(db, "test-model", DIM) is not None
    again.close()
    store.close()


@given(dim=st.integers(1, 4096), rows=st.integers(1, 2_000_000))
def test_code_shape_divides_the_vector_and_fits_the_training_data(dim, rows):
    codes, bits = ann.code_shape(dim, rows)
    assert dim % codes == 0  # faiss splits a vector into equal sub-vectors
    assert dim // codes >= min(dim, ann.DIMS_PER_CODE)  # never more bytes than the budget
    assert 1 <= bits <= 8
    if rows >= 8:
        assert 2 ** bits * 4 <= rows  # every codebook entry has training points


def test_the_index_holds_a_small_fraction_of_the_vectors(built):
    """The index only proposes candidates, so its codes are small (docs/scaling.md)."""
    _, index, _ = built
    view = index._view
    assert view is not None
    assert view.ann_index.index.code_size * ann.DIMS_PER_CODE <= DIM


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), share=st.floats(0.3, 1.0), n=st.integers(1, 60))
def test_one_approximate_search_for_several_masks_answers_as_one_search_each(
        built, seed, share, n):
    """top_n_each shares one faiss search between its masks: the same answers as asking
    for each mask on its own."""
    _, index, _ = built
    rng = np.random.default_rng(seed)
    masks = [np.ones(len(index), dtype=bool), rng.random(len(index)) < share]
    query = clustered(1, seed)[0]
    assert index.top_n_each(query, n, masks) == [index.top_n(query, n, m) for m in masks]
