"""The resident matrix: a score is the same however a scan is cut, in every storage."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.search import resident
from groove.search.resident import STORAGES, ResidentMatrix

#: How far a compact storage may move a cosine (module docstring: ~1e-3 / ~1e-2).
TOLERANCE = {"float32": 1e-5, "float16": 2e-3, "int8": 2e-2}


@pytest.fixture(scope="module")
def scan_pool():
    with ThreadPoolExecutor(max_workers=3) as pool:
        yield pool


@contextmanager
def four_cores(pool: ThreadPoolExecutor) -> Iterator[None]:
    """Scans cut into parts of 3 rows, blocks of 2, on four "cores", whatever this machine has."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(resident, "SPLIT_ROWS", 3)
        patch.setattr(resident, "BLOCK_ROWS", 2)
        patch.setattr(resident, "CORES", 4)
        patch.setattr(resident, "_SCAN_POOL", pool)
        yield


def _unit_rows(seed: int, rows: int, dim: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@settings(max_examples=60, deadline=None)
@given(storage=st.sampled_from(STORAGES), rows=st.integers(0, 40), seed=st.integers(0, 2**16),
       picked=st.lists(st.integers(0, 39), max_size=12))
def test_a_score_does_not_depend_on_how_the_scan_was_cut(scan_pool, storage, rows, seed,
                                                         picked):
    """Full scan (cut into parts and blocks) and a scan of some rows give the same
    float for every row, and both are the cosine of the stored vectors."""
    vectors = _unit_rows(seed, rows, 16)
    matrix = ResidentMatrix(rows, 16, storage)
    matrix.fill(0, vectors)
    query = _unit_rows(seed + 1, 1, 16)[0]
    some = np.array([p % rows for p in picked] if rows else [], dtype=np.int64)
    with four_cores(scan_pool):
        every = matrix.scores(query)
        assert np.array_equal(matrix.scores(query, some), every[some])
    assert every.dtype == np.float32 and every.shape == (rows,)
    assert np.array_equal(matrix.scores(query), every)  # uncut: the same floats
    assert np.allclose(every, vectors.astype(np.float64) @ query, atol=TOLERANCE[storage])


def test_a_large_scan_matches_the_plain_product():
    """Real sizes (several parts and blocks on this machine's cores)."""
    vectors = _unit_rows(7, 3 * resident.SPLIT_ROWS + 5, 384)
    query = _unit_rows(8, 1, 384)[0]
    for storage in STORAGES:
        matrix = ResidentMatrix(len(vectors), 384, storage)
        matrix.fill(0, vectors)
        assert np.allclose(matrix.scores(query), vectors @ query, atol=TOLERANCE[storage])
