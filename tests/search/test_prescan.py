"""The prescan: its shortlist always holds the exact scan's best rows, so the vector leg's
answer is the plain scan's, score for score."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.models import ChunkColumns, ChunkRow
from groove.search import prescan, resident
from groove.search.prescan import Prescan
from groove.search.resident import STORAGES, ResidentMatrix
from groove.search.vectors import VectorIndex
from groove.store.base import columns_from_rows

pytest.importorskip("faiss")


def _matrix(values: np.ndarray, storage: str) -> ResidentMatrix:
    matrix = ResidentMatrix(len(values), values.shape[1], storage)  # type: ignore[arg-type]
    matrix.fill(0, values)
    return matrix


def _true_best(matrix: ResidentMatrix, query: np.ndarray, n: int, allowed: np.ndarray) -> set[int]:
    """Every allowed row scoring at least the n-th best allowed score (ties included)."""
    rows = np.flatnonzero(allowed)
    if not len(rows):
        return set()
    scores = matrix.scores(query)[rows]
    nth = np.sort(scores)[::-1][min(n, len(rows)) - 1]
    return set(rows[scores >= nth].tolist())


_POOL = ThreadPoolExecutor(max_workers=3)


@contextmanager
def _cores(cores: int) -> Iterator[None]:
    """Groups cut into parts of at least 3 rows, searched on ``cores`` threads, each
    part to exactly its share of the depth (so short searches are common)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(prescan, "PART_MARGIN", 0)
        patch.setattr(resident, "SPLIT_ROWS", 3)
        patch.setattr(resident, "CORES", cores)
        patch.setattr(resident, "_SCAN_POOL", _POOL)
        yield


@st.composite
def _cases(draw):  # type: ignore[no-untyped-def]
    rows = draw(st.integers(1, 160))
    dim = draw(st.integers(1, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # A coarse grid makes ties and duplicate rows common; a fine one, near-ties.
    levels = draw(st.sampled_from([2, 3, 7, 1000]))
    values = rng.integers(-levels, levels + 1, size=(rows, dim)).astype(np.float32) / levels
    if draw(st.booleans()):
        values[rng.integers(0, rows, size=rows // 3)] = values[0]
    if draw(st.booleans()):  # some rows still wait for their vector (zero rows)
        values[rng.random(rows) < 0.2] = 0.0
    query = rng.normal(size=dim).astype(np.float32)
    if draw(st.booleans()):
        query /= max(float(np.linalg.norm(query)), 1e-6)
    allowed = rng.random(rows) < draw(st.sampled_from([0.1, 0.5, 1.0]))
    groups = rng.integers(0, draw(st.integers(1, 3)), size=rows)
    parts = [np.flatnonzero(groups == g) for g in range(3)]
    return (values, query, allowed, draw(st.integers(1, 30)), draw(st.integers(1, 60)),
            draw(st.sampled_from(STORAGES)), parts)


@settings(max_examples=300, deadline=None)
@given(_cases())
def test_the_shortlist_holds_every_row_of_the_exact_best_n_ties_included(case):
    values, query, allowed, n, depth, storage, groups = case
    matrix = _matrix(values, storage)
    with _cores(3):
        codes = Prescan.build(matrix, groups)
        assert codes is not None
        shares = codes.shares(allowed)
        short = codes.search(query, [depth if share > 0 else 0 for share in shares])
    found = short.certain(n, allowed, shares)
    if found is None:  # the coded search stopped short of the line: the caller scans
        return
    assert _true_best(matrix, query, n, allowed) <= set(found.tolist())
    assert allowed[found].all()


@settings(max_examples=100, deadline=None)
@given(_cases())
def test_a_coded_search_over_every_row_always_answers(case):
    values, query, allowed, n, _, storage, groups = case
    with _cores(2):
        codes = Prescan.build(_matrix(values, storage), groups)
        assert codes is not None
        shares = codes.shares(allowed)
        assert codes.search(query, [len(values)] * len(shares)).certain(n, allowed, shares) \
            is not None


def test_the_shortlist_is_a_small_part_of_a_large_matrix():
    """What the prescan is for: at 20k random unit vectors the best 50 need a few hundred rows."""
    rng = np.random.default_rng(7)
    values = rng.normal(size=(20_000, 64)).astype(np.float32)
    values /= np.linalg.norm(values, axis=1, keepdims=True)
    codes = Prescan.build(_matrix(values, "float32"))
    assert codes is not None
    every = np.ones(20_000, dtype=bool)
    depths = codes.depths(50, codes.shares(every))
    assert depths is not None
    found = codes.search(values[123], depths).certain(50, every, codes.shares(every))
    assert found is not None and 50 <= len(found) < 2_000


class _VectorStore:
    """Just what VectorIndex reads, with the given vectors."""

    def __init__(self, vectors: np.ndarray, japanese: np.ndarray | None = None) -> None:
        self.vectors = vectors
        titles = ["設計メモ" if japanese is not None and japanese[i] else "notes"
                  for i in range(len(vectors))]
        self.rows = [ChunkRow(id=i + 1, doc_id=i, chunk_index=0, heading=None, level=None,
                              context="", content="", token_count=1, quality=1.0,
                              path=f"d{i}.md", title=titles[i], category=None, topic=None,
                              date=None, tags=(), binary_format=False)
                     for i in range(len(vectors))]

    def generation(self) -> int:
        return 1

    def read_snapshot(self) -> nullcontext[None]:
        return nullcontext()

    def chunk_columns(self) -> ChunkColumns:
        return columns_from_rows(self.rows)

    def iter_vectors(self, block_rows: int = 65536):  # type: ignore[no-untyped-def]
        yield np.arange(1, len(self.vectors) + 1, dtype=np.int64), self.vectors


def _index(monkeypatch: pytest.MonkeyPatch, rows: int, *, faiss: bool = True,
           japanese: np.ndarray | None = None) -> VectorIndex:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(rows, 32)).astype(np.float32)
    if japanese is not None:  # the other language's chunks sit apart, as a model's do
        vectors[japanese, 0] -= 3.0
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    monkeypatch.setattr(prescan, "MIN_ROWS", 1000)
    if not faiss:
        monkeypatch.setattr(prescan, "available", lambda: False)
    index = VectorIndex(_VectorStore(vectors, japanese))  # type: ignore[arg-type]
    index.refresh()
    return index


@pytest.mark.parametrize("bilingual", [False, True])
def test_the_vector_leg_answers_from_the_shortlist_with_the_exact_scans_answer(
        monkeypatch, bilingual):
    """Also when the other script family's chunks all score below the question's own
    (the cross-language pool the bilingual leg asks for beside the ordinary one)."""
    japanese = np.random.default_rng(5).random(6000) < 0.3 if bilingual else None
    index = _index(monkeypatch, 6000, japanese=japanese)
    assert index._prescan is not None
    full_scans = []
    scores = index.matrix.scores

    def spy(query, rows=None):  # type: ignore[no-untyped-def]
        if rows is None:
            full_scans.append(1)
        return scores(query, rows)

    monkeypatch.setattr(index.matrix, "scores", spy)
    rng = np.random.default_rng(11)
    every = np.ones(len(index), dtype=bool)
    half = index.script_mask(True).copy() if bilingual else rng.random(len(index)) < 0.5
    for _ in range(10):
        query = rng.normal(size=32).astype(np.float32)
        query[0] = abs(query[0]) + 2.0
        query /= np.linalg.norm(query)
        got = index.top_n_each(query, 50, (every, half))
        assert not full_scans  # the shortlist answered
        monkeypatch.setattr(index.matrix, "scores", scores)
        assert got == [index.exact_top_n(query, 50, every), index.exact_top_n(query, 50, half)]
        monkeypatch.setattr(index.matrix, "scores", spy)


def test_without_faiss_the_plain_scan_answers(monkeypatch):
    index = _index(monkeypatch, 2000, faiss=False)
    assert index._prescan is None
    query = index.matrix.vectors(np.array([5]))[0]
    assert index.top_n(query, 3, np.ones(len(index), dtype=bool))[0][0] == 6


def test_no_codes_beside_the_approximate_index(monkeypatch):
    """Above ann_min_chunks the approximate index answers; a second copy would only cost memory."""
    monkeypatch.setattr(prescan, "MIN_ROWS", 10)
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(50, 8)).astype(np.float32)
    from groove.config.model import VectorsConfig

    index = VectorIndex(_VectorStore(vectors),  # type: ignore[arg-type]
                        VectorsConfig.model_validate({"ann_min_chunks": 40}))
    index.refresh()
    assert index._prescan is None
