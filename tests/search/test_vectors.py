"""VectorIndex: the per-document mask equals the row-by-row filter, and refreshes by generation."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.models import ChunkColumns, ChunkRow
from groove.search.filters import ChunkFilter
from groove.search.vectors import VectorIndex
from groove.store.base import columns_from_rows

PATHS = ["a/x.md", "a/b/y.md", "b/z.md", "notes.md"]
TAGS = ["rust", "go", "ml"]
DATES = [None, "2024-01-01", "2024-06-30", "2025-02-10"]


class MemoryStore:
    """Just what VectorIndex reads: generation, vectors and chunk metadata."""

    def __init__(self, rows: list[ChunkRow], embedded: set[int] | None = None) -> None:
        self.rows = rows
        self.gen = 1
        self.loads = 0
        #: Chunk ids that have a vector (default: all of them).
        self.embedded = embedded

    def generation(self) -> int:
        return self.gen

    def read_snapshot(self) -> nullcontext[None]:
        return nullcontext()

    def load_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        self.loads += 1
        ids = np.array([r.id for r in self.rows], dtype=np.int64)
        matrix = np.eye(len(self.rows), 4, dtype=np.float32)
        if self.embedded is not None:
            keep = np.isin(ids, np.fromiter(self.embedded, dtype=np.int64))
            return ids[keep], matrix[keep]
        return ids, matrix

    def chunk_columns(self) -> ChunkColumns:
        return columns_from_rows(self.rows)

    def iter_vectors(self, block_rows: int = 65536):
        yield self.load_vectors()


def _row(chunk_id: int, doc: int, quality: float, binary: bool) -> ChunkRow:
    return ChunkRow(
        id=chunk_id, doc_id=doc, chunk_index=chunk_id, heading=None, level=None, context="",
        content="", token_count=1, quality=quality, path=PATHS[doc % len(PATHS)],
        title="t", category=["c1", "c2", None][doc % 3], topic=["p", None][doc % 2],
        date=DATES[doc % len(DATES)], tags=tuple(TAGS[: doc % 4]), binary_format=binary)


# binary_format is a document field: every chunk of a document shares it.
rows_strategy = st.tuples(
    st.lists(st.tuples(st.integers(0, 7), st.floats(0, 1)), min_size=0, max_size=30),
    st.frozensets(st.integers(0, 7)),
).map(lambda spec: [_row(i + 1, d, q, d in spec[1]) for i, (d, q) in enumerate(spec[0])])

filter_strategy = st.builds(
    ChunkFilter,
    category=st.sampled_from([None, "c1", "c2"]),
    topic=st.sampled_from([None, "p"]),
    includes=st.sampled_from([(), ("a/**",), ("**/*.md",)]),
    excludes=st.sampled_from([(), ("a/b/**",), ("notes.md",)]),
    tags_any=st.frozensets(st.sampled_from(TAGS), max_size=2),
    tags_all=st.frozensets(st.sampled_from(TAGS), max_size=2),
    date_from=st.sampled_from([None, "2024-01-01", "2024-07-01"]),
    date_to=st.sampled_from([None, "2024-06-30", "2025-12-31"]),
    min_quality=st.floats(0, 1),
)


@settings(max_examples=200, deadline=None)
@given(rows=rows_strategy, chunk_filter=filter_strategy)
def test_mask_equals_row_by_row_filter(rows, chunk_filter):
    index = VectorIndex(MemoryStore(rows))
    index.refresh()
    expected = [chunk_filter.applies(r) for r in sorted(rows, key=lambda r: r.id)]
    assert index.mask(chunk_filter).tolist() == expected
    assert index.mask(chunk_filter).tolist() == expected  # cached copy too


def test_refresh_reloads_only_when_the_generation_changes():
    store = MemoryStore([_row(1, 0, 1.0, False)])
    index = VectorIndex(store)
    index.refresh()
    index.refresh()
    assert store.loads == 1
    store.rows.append(_row(2, 1, 0.0, False))
    store.gen += 1
    index.refresh()
    assert store.loads == 2
    assert index.mask(ChunkFilter(min_quality=0.5)).tolist() == [True, False]


def test_top_n_applies_the_mask_before_the_cut():
    rows = [_row(i, i, 1.0, False) for i in (1, 2, 3, 4)]
    index = VectorIndex(MemoryStore(rows))
    index.refresh()
    query = np.array([1.0, 0.9, 0.8, 0.7], dtype=np.float32)
    allowed = np.array([False, False, True, True])
    assert [c for c, _ in index.top_n(query, 2, allowed)] == [3, 4]
    assert index.top_n(query, 2, np.zeros(4, dtype=bool)) == []


@settings(max_examples=60, deadline=None)
@given(rows_strategy, st.sets(st.integers(1, 30)), st.integers(0, 3))
def test_chunks_without_a_vector_are_known_but_never_returned_by_the_vector_leg(
        rows, embedded, axis):
    """During a build every chunk has a row (the full-text leg needs it); only embedded ones rank."""
    index = VectorIndex(MemoryStore(rows, embedded))  # type: ignore[arg-type]
    index.refresh()
    assert len(index) == len(rows) and set(index.ids.tolist()) == {r.id for r in rows}
    query = np.eye(4, dtype=np.float32)[axis]
    hits = index.top_n(query, 50, np.ones(len(index), dtype=bool))
    assert {c for c, _ in hits} == {r.id for r in rows if r.id in embedded}


def test_a_pinned_search_keeps_its_generation_while_a_reload_waits():
    """Searches run on several threads: a reload never swaps the rows under one of them."""
    import threading

    store = MemoryStore([_row(i, i % 3, 1.0, False) for i in range(6)])
    index = VectorIndex(store)  # type: ignore[arg-type]
    with index.pinned():
        before = index.ids
        store.rows = store.rows + [_row(6, 1, 1.0, False)]
        store.gen += 1
        reload = threading.Thread(target=index.refresh)
        reload.start()
        with index._pins:  # the reload has read the new rows and waits for this search
            assert index._pins.wait_for(lambda: index.swap_waiting, timeout=30)
        assert index.ids is before and len(index.ids) == 6  # still the search's generation
        assert index.positions([5]).tolist() == [5]
    reload.join(30)
    assert not reload.is_alive()
    assert len(index.ids) == 7 and not index.swap_waiting


@settings(max_examples=80, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1), st.integers(min_value=1, max_value=300),
       st.integers(min_value=1, max_value=40))
def test_the_sampled_floor_keeps_every_top_score_ties_included(seed, count, levels) -> None:
    """above_sampled_floor: the subset holds every score >= the count-th largest."""
    from groove.search.vectors import SAMPLED_FLOOR_MIN, above_sampled_floor

    rng = np.random.default_rng(seed)
    # few distinct levels make ties at the boundary common
    scores = rng.integers(0, levels, SAMPLED_FLOOR_MIN + 500).astype(np.float32) / levels
    keep = above_sampled_floor(scores, count)
    if keep is None:
        return
    boundary = np.sort(scores)[::-1][count - 1]
    assert set(np.flatnonzero(scores >= boundary).tolist()) <= set(keep.tolist())


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 400_000), min_size=1, max_size=40, unique=True),
       st.lists(st.integers(-5, 400_010), max_size=30))
def test_positions_finds_each_resident_id_and_nothing_else(ids, asked):
    """Dense ids are looked up in a table, sparse ones by binary search: one answer either way."""
    ids = sorted(ids)
    index = VectorIndex(MemoryStore([_row(i, i % 4, 1.0, False) for i in ids]))  # type: ignore[arg-type]
    index.refresh()
    wanted = asked + ids[::3]
    got = index.positions(wanted).tolist()
    assert got == [ids.index(c) if c in ids else -1 for c in wanted]


def test_a_chunk_whose_vector_arrives_is_found_with_the_same_filter_mask():
    """What a search derives from a filter's mask is remembered only until the next reload."""
    rows = [_row(i, i, 1.0, False) for i in (1, 2, 3)]
    store = MemoryStore(rows, embedded={1, 2})
    index = VectorIndex(store)  # type: ignore[arg-type]
    index.refresh()
    allowed = np.ones(3, dtype=bool)
    query = np.array([0.0, 0.0, 1.0, 0.0], dtype=np.float32)  # nearest to chunk 3
    assert 3 not in {c for c, _ in index.top_n(query, 3, allowed)}
    store.embedded = {1, 2, 3}
    store.gen += 1
    index.refresh()
    assert index.top_n(query, 1, allowed)[0][0] == 3
    narrowed = index.narrowed_to_script(allowed, cjk=False)
    assert narrowed is index.narrowed_to_script(allowed, cjk=False)
    assert narrowed.tolist() == [True, True, True]
