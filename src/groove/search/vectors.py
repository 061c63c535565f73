"""The resident vector index: embedding matrix, columnar chunk metadata, approximate index.

See docs/scaling.md. The rules:

* **Refresh by generation.** Loaded from the store on first use and reloaded when
  the store's generation changes (a cheap check per query); searches never touch
  SQLite for the vector leg or for filtering.
* **Columnar.** Chunk metadata is three numpy columns (id, document slot,
  quality) plus one :class:`~groove.models.DocumentMeta` per document: no
  per-chunk Python objects. Filters are decided once per document and broadcast;
  masks are cached per generation.
* **Exact below a size, approximate above it.** Under
  ``[search.vectors] ann_min_chunks`` the leg is an exact scan, read first from
  one-byte codes (:mod:`groove.search.prescan`) when faiss is installed: the
  same answer for a quarter of the bytes. Above it an
  inverted-file index (:mod:`groove.search.ann`) proposes candidates and the resident vectors
  re-score them, so scores are the same cosines the exact scan gives.
* **Filters keep their exact meaning.** A filter that leaves at most
  ``ann_exact_max_rows`` rows is answered by an exact scan over exactly those
  rows. A broader one asks the approximate index for ``n × ann_oversample ÷ (allowed share)``
  candidates and keeps the allowed ones; if that does not fill ``n`` the exact
  scan answers instead. Either way only allowed rows come back.
* **Every chunk has a row, embedded or not.** During a build the full-text leg
  already finds chunks whose vector is still pending (docs/index-lifecycle.md):
  their matrix rows are zero, ``embedded`` is False for them, the vector leg
  never returns them, and the approximate index is only kept while nothing is
  pending (the exact scan answers during a build).
* **Never blocking.** The approximate index is loaded, brought up to date (removed keys
  dropped, new keys added) and saved by a background thread, copy on write.
  Meanwhile searches use the previous one plus an exact scan of the rows it
  does not hold yet, or the exact scan alone when there is none yet.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, cast

import numpy as np

from groove.config.model import VectorsConfig
from groove.models import ChunkColumns, DocumentMeta
from groove.search import prescan
from groove.search.ann_upkeep import AnnUpkeep, AnnView, release_freed_heap
from groove.search.filters import ChunkFilter
from groove.search.language import is_cjk
from groove.search.resident import ResidentMatrix
from groove.search.translations import translated_documents
from groove.store.base import Store

log = logging.getLogger("groove.search")

_T = TypeVar("_T")

_MASK_CACHE_SIZE = 32
#: Vectors read from the store per block: small blocks keep the transient blobs small.
_LOAD_BLOCK_ROWS = 8192
#: Above this many approximate candidates the exact scan over the allowed rows is cheaper.
_MAX_CANDIDATES = 4096
#: At least this many candidates are re-scored, however few are asked for: the
#: codes only order them roughly (at 1M clustered vectors the true top 10 were
#: all within the first 512 by code; 256 held 91 %), and re-scoring a thousand
#: rows costs a fraction of a millisecond.
_MIN_CANDIDATES = 1024
#: A mask allowing fewer than 1/_SUBSET_SCAN_FACTOR of the rows is scored on its
#: own rows (gathering rows costs more than scoring them; break-even measured near
#: 1/8); a wider one takes its scores from one product over the whole matrix.
_SUBSET_SCAN_FACTOR = 8


@dataclass(frozen=True)
class Moments:
    """The resident vectors' mean and covariance (from a sample) and how many there are."""

    mean: np.ndarray
    cov: np.ndarray
    population: int


class VectorIndex(AnnUpkeep):
    def __init__(self, store: Store, settings: VectorsConfig | None = None,
                 ann_path: Path | None = None, model_id: str | None = None) -> None:
        """``ann_path``: the database path the approximate index lives beside (None: not persisted)."""
        self._store = store
        self.settings = settings or VectorsConfig.model_validate({})
        self._ann_path = ann_path
        self._model_id = model_id
        self._lock = threading.Lock()
        #: Held while a reload reads the store: one reload at a time.
        self._loading = threading.Lock()
        #: Searches holding the loaded generation (pinned()), and its condition.
        self._pins = threading.Condition()
        self._pinned = 0
        #: True while a reload waits for pinned searches to finish.
        self.swap_waiting = False
        self._generation: int | None = None
        self.ids = np.zeros(0, dtype=np.int64)
        #: Row of each chunk id (-1: none), when the ids are dense enough (positions()).
        self._row_of: np.ndarray | None = None
        self.matrix = ResidentMatrix(0, 0, self.settings.storage)
        #: The exact scan's one-byte codes (None: plain scans, see _prescan_for).
        self._prescan: prescan.Prescan | None = None
        #: Which rows hold a real vector (False: the chunk waits for its embedding).
        self.embedded = np.zeros(0, dtype=bool)
        self._doc_slot = np.zeros(0, dtype=np.int32)
        self._cjk = np.zeros(0, dtype=bool)
        self._not_cjk = np.zeros(0, dtype=bool)
        self._moments: tuple[int | None, dict[bool | None, Moments]] | None = None
        self._translations: tuple[int | None, dict[int, tuple[DocumentMeta, ...]]] | None = None
        self._quality = np.zeros(0, dtype=np.float64)
        self._binary = np.zeros(0, dtype=bool)
        self._kind_code = np.zeros(0, dtype=np.int16)
        self._kinds: tuple[str, ...] = ()
        self.documents: tuple[DocumentMeta, ...] = ()
        self._masks: OrderedDict[tuple, np.ndarray] = OrderedDict()
        #: What is derived from a mask per search (_derived), keyed by the mask's identity.
        self._derived_cache: OrderedDict[tuple[str, int],
                                         tuple[weakref.ref[np.ndarray], object]] = OrderedDict()
        self._derived_lock = threading.Lock()
        self._view: AnnView | None = None
        self._worker: threading.Thread | None = None
        self._stop = threading.Event()
        self._warned_missing = False

    # --- loading ------------------------------------------------------------------
    def refresh(self) -> None:
        """Reload when the index changed since the last load.

        The new rows are read while searches go on; they are swapped in only
        when no search holds the loaded generation (:meth:`pinned`), so a
        search never sees the ids of one generation and the matrix of another.
        """
        generation = self._store.generation()
        if generation == self._generation:
            return
        with self._loading:
            if generation == self._generation:
                return
            with self._store.read_snapshot():
                columns = self._store.chunk_columns()
                ids, matrix, embedded = self._load_matrix(columns)
                row_of = _row_table(ids)
            cjk = _cjk_rows(columns, ids)
            codes = self._prescan_for(matrix, cjk)
            release_freed_heap()  # the blobs read above, back to the OS (about 0.4x at 588k)
            with self._pins:
                self.swap_waiting = True
                self._pins.notify_all()  # whoever watches for a waiting reload
                while self._pinned:
                    self._pins.wait()
                with self._lock:
                    self._set_columns(columns, ids, cjk)
                    self.ids, self.matrix, self.embedded = ids, matrix, embedded
                    self._prescan = codes
                    self._row_of = row_of
                    self._masks.clear()
                    with self._derived_lock:
                        self._derived_cache.clear()
                    self._generation = generation
                    self._view = self._rebase(self._view)
                self.swap_waiting = False
        self._maintain_ann()

    @contextlib.contextmanager
    def pinned(self) -> Iterator[None]:
        """Refresh, then keep the loaded generation for the duration of one search.

        Concurrent searches (the server answers each on its own thread) each
        pin; a reload waits for the pins to go before it swaps, and a search
        arriving meanwhile waits for the swap (in :meth:`refresh`), so nobody
        waits long and nobody starves.
        """
        self.refresh()
        with self._pins:
            self._pinned += 1
        try:
            yield
        finally:
            with self._pins:
                self._pinned -= 1
                if not self._pinned:
                    self._pins.notify_all()

    def _load_matrix(self, columns: ChunkColumns
                     ) -> tuple[np.ndarray, ResidentMatrix, np.ndarray]:
        """One row per chunk in ``columns`` (zero where no vector exists yet), and ``embedded``.

        A vector without a chunk row (another process between the two reads) is skipped.
        """
        ids = np.asarray(columns.ids, dtype=np.int64)
        count = len(ids)
        matrix: ResidentMatrix | None = None
        embedded = np.zeros(count, dtype=bool)
        for block_ids, block in self._store.iter_vectors(_LOAD_BLOCK_ROWS):
            rows = np.searchsorted(ids, block_ids) if count else np.zeros(0, np.int64)
            rows = np.minimum(rows, max(count - 1, 0))
            keep = (ids[rows] == block_ids) if count else np.zeros(len(block_ids), bool)
            rows, block = rows[keep], np.asarray(block[keep], dtype=np.float32)
            if not len(rows):
                continue
            if matrix is None:
                matrix = ResidentMatrix(count, block.shape[1], self.settings.storage)
            for start, end in _runs(rows):  # fill contiguous stretches of rows at once
                matrix.fill(int(rows[start]), block[start:end])
            embedded[rows] = True
        if matrix is None:
            matrix = ResidentMatrix(count, 0, self.settings.storage)
        return ids, matrix, embedded

    def _prescan_for(self, matrix: ResidentMatrix, cjk: np.ndarray) -> prescan.Prescan | None:
        """Codes for the exact scan, one group per script family, when the scan is big
        enough to gain from them and the approximate index will not answer instead (a
        quarter of the float32 vectors is too much to spend beside it)."""
        if not prescan.MIN_ROWS <= len(matrix) < self.settings.ann_min_chunks:
            return None
        return prescan.Prescan.build(matrix, [np.flatnonzero(~cjk), np.flatnonzero(cjk)])

    def _set_columns(self, columns: ChunkColumns, ids: np.ndarray, cjk: np.ndarray) -> None:
        rows = np.searchsorted(columns.ids, ids)
        self.documents = columns.documents
        self._doc_slot = columns.doc_slot[rows]
        self._quality = columns.quality[rows]
        binary_doc = np.fromiter((d.binary_format for d in columns.documents), dtype=bool,
                                 count=len(columns.documents))
        self._binary = binary_doc[self._doc_slot] if len(ids) else np.zeros(0, dtype=bool)
        self._cjk = cjk
        self._not_cjk = ~self._cjk
        codes = columns.kind_code if columns.kind_code is not None else np.full(
            len(columns.ids), -1, dtype=np.int16)
        self._kind_code = codes[rows] if len(ids) else np.zeros(0, dtype=np.int16)
        self._kinds = columns.kinds

    def __len__(self) -> int:
        return len(self.ids)

    # --- lookups --------------------------------------------------------------------
    def positions(self, chunk_ids: np.ndarray | list[int]) -> np.ndarray:
        """Row of each chunk id, -1 for ids not resident.

        Chunk ids are dense enough (they only grow, and re-indexing a changed
        file retires a few) that a table indexed by id is usually affordable:
        one memory access per id instead of a binary search's twenty, which at
        a million rows are cache misses (1,024 ids: 0.03 ms against 0.6-0.9).
        """
        wanted = np.asarray(chunk_ids, dtype=np.int64)
        if not len(self.ids):
            return np.full(len(wanted), -1, dtype=np.int64)
        table = self._row_of
        if table is not None:
            inside = (wanted >= 0) & (wanted < len(table))
            return np.where(inside, table[np.where(inside, wanted, 0)], -1).astype(np.int64)
        pos = np.searchsorted(self.ids, wanted)
        pos = np.minimum(pos, len(self.ids) - 1)
        return np.where(self.ids[pos] == wanted, pos, -1)

    def doc_ids_for(self, chunk_ids: list[int]) -> list[int]:
        """The document id of each (resident) chunk id."""
        slots = self._doc_slot[self.positions(chunk_ids)]
        return [self.documents[s].id for s in slots.tolist()]

    def document_of(self, chunk_id: int) -> DocumentMeta | None:
        pos = int(self.positions([chunk_id])[0])
        return None if pos < 0 else self.documents[int(self._doc_slot[pos])]

    def vectors_for(self, chunk_ids: list[int]) -> np.ndarray:
        """float32 vectors of resident chunk ids, in the given order."""
        pos = self.positions(chunk_ids)
        if np.any(pos < 0):
            missing = [c for c, p in zip(chunk_ids, pos.tolist(), strict=True) if p < 0]
            raise KeyError(f"chunk ids not in the resident index: {missing[:5]}")
        return self.matrix.vectors(pos)

    def moments(self, cjk: bool | None = None) -> Moments:
        """Mean vector and covariance of the resident vectors (search/confidence.py), of one
        script family's rows when ``cjk`` is given (search/language.py).

        From a fixed, evenly spaced sample of at most ``MOMENT_SAMPLE_ROWS``
        embedded rows, computed once per index generation: the cosine of a
        query ``q`` with a random chunk then has mean ``q·μ`` and variance ``qᵀΣq``.
        """
        from groove.search.confidence import MOMENT_SAMPLE_ROWS

        with self._lock:
            if self._moments is None or self._moments[0] != self._generation:
                self._moments = (self._generation, {})
            cached = self._moments[1].get(cjk)
            if cached is not None:
                return cached
            usable = self.embedded if cjk is None else self.embedded & self.script_mask(cjk)
            rows = np.flatnonzero(usable)
            population = len(rows)
            if len(rows) > MOMENT_SAMPLE_ROWS:
                rows = rows[np.linspace(0, len(rows) - 1, MOMENT_SAMPLE_ROWS).astype(np.int64)]
            dim = self.matrix.dim
            if not len(rows) or not dim:
                mean, cov = np.zeros(dim), np.zeros((dim, dim))
            else:
                sample = self.matrix.vectors(rows).astype(np.float64)
                mean = sample.mean(axis=0)
                centred = sample - mean
                cov = centred.T @ centred / len(rows)
            found = Moments(mean, cov, population)
            self._moments[1][cjk] = found
            return found

    def translations_of(self, doc_id: int) -> tuple[DocumentMeta, ...]:
        """The other-language versions of a document (search/translations.py).

        Found by path once per index generation; a lookup per call.
        """
        return self._translated().get(doc_id, ())

    def has_code(self) -> bool:
        """Whether any chunk is a code definition (a symbol kind is known)."""
        return bool(self._kinds)

    def has_translations(self) -> bool:
        """Whether any document has an other-language version (search/translations.py)."""
        return bool(self._translated())

    def _translated(self) -> dict[int, tuple[DocumentMeta, ...]]:
        with self._lock:
            cached = self._translations
            if cached is None or cached[0] != self._generation:
                docs = self.documents
                found = translated_documents([d.path for d in docs])
                cached = (self._generation, {docs[i].id: tuple(docs[j] for j in others)
                                             for i, others in found.items()})
                self._translations = cached
            return cached[1]

    def script_mask(self, cjk: bool) -> np.ndarray:
        """Rows whose document is written in CJK (``cjk=True``) or not (search/language.py).

        Both masks are built once per index generation; callers must not modify them.
        """
        return self._cjk if cjk else self._not_cjk

    def narrowed_to_script(self, allowed: np.ndarray, cjk: bool) -> np.ndarray:
        """``allowed`` and written in that script family (computed once per mask)."""
        return self._derived(f"script-{cjk}", allowed, lambda: allowed & self.script_mask(cjk))

    def share(self, allowed: np.ndarray) -> float:
        """The fraction of the resident rows ``allowed`` keeps (computed once per mask)."""
        return self._derived("share", allowed,
                             lambda: np.count_nonzero(allowed) / max(len(allowed), 1))

    def _prescan_shares(self, allowed: np.ndarray) -> list[float]:
        """The share of each prescan group ``allowed`` keeps (computed once per mask)."""
        codes = self._prescan
        return [] if codes is None else self._derived("prescan", allowed,
                                                       lambda: codes.shares(allowed))

    def _searchable(self, allowed: np.ndarray) -> tuple[np.ndarray, int]:
        """``allowed`` minus the rows still waiting for a vector, and how many are left."""
        def compute() -> tuple[np.ndarray, int]:
            usable = allowed & self.embedded
            return usable, int(np.count_nonzero(usable))
        return self._derived("searchable", allowed, compute)

    def _derived(self, kind: str, mask: np.ndarray, compute: Callable[[], _T]) -> _T:
        """``compute()``, remembered for this mask object until the next reload.

        The masks a search passes are the cached ones (:meth:`mask`, and what
        is derived here), so a repeated filter costs nothing per search: no pass
        over a million flags. An entry is found only by the very object it was
        computed for (a weak reference: a mask that is gone is never matched,
        even if its id is reused, and is not kept alive by the entry).
        """
        key = (kind, id(mask))
        with self._derived_lock:
            hit = self._derived_cache.get(key)
            if hit is not None and hit[0]() is mask:
                self._derived_cache.move_to_end(key)
                return cast(_T, hit[1])
        value = compute()
        with self._derived_lock:
            self._derived_cache[key] = (weakref.ref(mask), value)
            while len(self._derived_cache) > 2 * _MASK_CACHE_SIZE:
                self._derived_cache.popitem(last=False)
        return value

    def in_script(self, chunk_ids: list[int], cjk: bool) -> list[bool]:
        """For each resident chunk id: is its document written in that script family?"""
        return (self._cjk[self.positions(chunk_ids)] == cjk).tolist()

    # --- filtering ----------------------------------------------------------------
    def mask(self, chunk_filter: ChunkFilter) -> np.ndarray:
        """Boolean array: which rows pass the filter (cached per generation).

        Every filter but quality and symbol kind is on document fields, so it
        is decided once per document (path globs are the costly part) and
        broadcast to that document's chunks; the quality floor and the symbol
        kinds are one numpy comparison each over their columns.
        """
        key = chunk_filter.key
        cached = self._masks.get(key)
        if cached is not None:
            self._masks.move_to_end(key)
            return cached
        doc_ok = np.fromiter((chunk_filter.document_passes(d) for d in self.documents),
                             dtype=bool, count=len(self.documents))
        doc_ok &= self._field_mask(chunk_filter)
        mask = (doc_ok[self._doc_slot] if len(self.ids) else np.zeros(0, dtype=bool)) & (
            self._binary | (self._quality >= chunk_filter.min_quality))
        if chunk_filter.symbol_kinds:
            wanted = [i for i, kind in enumerate(self._kinds) if kind in chunk_filter.symbol_kinds]
            mask &= np.isin(self._kind_code, np.asarray(wanted, dtype=np.int16))
        self._masks[key] = mask
        if len(self._masks) > _MASK_CACHE_SIZE:
            self._masks.popitem(last=False)
        return mask

    def _field_mask(self, chunk_filter: ChunkFilter) -> np.ndarray | bool:
        """Which documents pass the declared-field filters, as one column operation each.

        The store answers ``key = value`` from its (key, value) index, so the
        cost follows the matching documents, not the corpus.
        """
        if not chunk_filter.fields and not chunk_filter.fields_not:
            return True
        ids = np.fromiter((d.id for d in self.documents), dtype=np.int64,
                          count=len(self.documents))
        ok = np.ones(len(ids), dtype=bool)
        for key, values in chunk_filter.fields:
            ok &= np.isin(ids, np.fromiter(self._store.field_matches(key, values), np.int64))
        for key, values in chunk_filter.fields_not:
            ok &= ~np.isin(ids, np.fromiter(self._store.field_matches(key, values), np.int64))
        return ok

    # --- the vector leg -------------------------------------------------------------
    def top_n(self, query: np.ndarray, n: int, allowed: np.ndarray) -> list[tuple[int, float]]:
        """Best ``n`` allowed chunks by cosine, as ``(chunk_id, similarity)`` best first.

        Ties are broken by chunk id, so the answer is deterministic.
        """
        return self.top_n_each(query, n, (allowed,))[0]

    def top_n_each(self, query: np.ndarray, n: int, masks: Sequence[np.ndarray]
                   ) -> list[list[tuple[int, float]]]:
        """:meth:`top_n` for each mask in ``masks``, sharing one pass over the matrix.

        The exact path scores every row once (one matrix-vector product) and
        then only selects per mask, so asking for several masks costs one
        scan plus a cheap selection each. A mask that allows few rows is scored
        on its own rows instead, unless the full product is already there.
        """
        return self.ranker(query)(n, masks)

    def ranker(self, query: np.ndarray
               ) -> Callable[[int, Sequence[np.ndarray]], list[list[tuple[int, float]]]]:
        """:meth:`top_n_each` for one query, asked repeatedly (a larger ``n`` each time):
        the matrix-vector product is computed once for every call."""
        shared = _SharedScores(self.matrix, query, self._prescan, self._prescan_shares)
        return lambda n, masks: self._top_n_each(shared, query, n, masks)

    def _top_n_each(self, shared: _SharedScores, query: np.ndarray, n: int,
                    masks: Sequence[np.ndarray]) -> list[list[tuple[int, float]]]:
        if not len(self.ids) or n <= 0 or self.matrix.dim != len(query):
            return [[] for _ in masks]
        view = self._view
        if view is not None and view.generation != self._generation:
            view = None
        plans = []
        for allowed in masks:
            allowed, count = self._searchable(allowed)
            plans.append((allowed, count, self._ann_k(view, n, count)))
        # One approximate search serves every mask: its first k keys are what a
        # search for k alone returns (the same probed lists, best first).
        wanted = [k for _, count, k in plans if k is not None and count > 0]
        keys = (view.ann_index.search(query, max(wanted), self.settings.ann_nprobe)
                if view is not None and wanted else None)
        # ...and so do the candidates' rows and scores: each mask takes a prefix.
        candidates = (_Candidates(self, view, query, keys)
                      if view is not None and keys is not None else None)
        # The masks scanned exactly share one coded search, or else one full product.
        shared.plan(n, [allowed for allowed, count, k in plans
                        if count > 0 and (candidates is None or k is None)
                        and self._whole_pass(count)])
        found: list[list[tuple[int, float]]] = []
        for allowed, count, k in plans:
            if count <= 0:
                found.append([])
                continue
            if candidates is not None and k is not None:
                approximate = self._approximate(candidates, n, allowed, count, k)
                if approximate is not None:
                    found.append(approximate)
                    continue
            found.append(self._exact(shared, n, allowed, count))
        return found

    def _ann_k(self, view: AnnView | None, n: int, count: int) -> int | None:
        """How many approximate neighbours a mask allowing ``count`` rows needs, or None
        when it is scanned exactly (small, no approximate index, or too selective)."""
        if view is None or count <= self.settings.ann_exact_max_rows:
            return None
        share = count / len(self.ids)
        k = max(_MIN_CANDIDATES, math.ceil(n * self.settings.ann_oversample / share))
        return k if k <= _MAX_CANDIDATES else None

    def exact_top_n(self, query: np.ndarray, n: int, allowed: np.ndarray) -> list[tuple[int, float]]:
        """The exact answer: every allowed row scored."""
        allowed, count = self._searchable(allowed)
        return self._exact(_SharedScores(self.matrix, query), n, allowed, count)

    def _exact(self, shared: _SharedScores, n: int, allowed: np.ndarray,
               count: int) -> list[tuple[int, float]]:
        whole = self._whole_pass(count)
        if whole:
            short = shared.shortlisted(n, allowed)
            if short is not None:
                return self._best(*short, n)
        if count == len(self.ids):
            return self._best(np.arange(len(self.ids)), shared.all(), n)
        rows = np.flatnonzero(allowed)
        if shared.done or whole:
            return self._best(rows, shared.all()[rows], n)
        return self._best(rows, shared.rows(rows), n)

    def _whole_pass(self, count: int) -> bool:
        """Whether a mask allowing ``count`` rows takes its scores from a pass over the
        whole matrix (codes first, else the full product) rather than its own rows."""
        return count * _SUBSET_SCAN_FACTOR > len(self.ids)

    def _approximate(self, candidates: _Candidates, n: int, allowed: np.ndarray,
                     count: int, k: int) -> list[tuple[int, float]] | None:
        rows, scores = candidates.first(k, allowed)
        if len(rows) < min(n, count):
            return None
        return self._best(rows, scores, n)

    def _best(self, rows: np.ndarray, scores: np.ndarray, n: int) -> list[tuple[int, float]]:
        """Top ``n`` of ``rows`` by ``scores`` desc, then chunk id asc."""
        count = min(n, len(rows))
        if count < len(rows):
            keep = above_sampled_floor(scores, count)
            if keep is not None:  # the top ``count`` are all among these few
                rows, scores = rows[keep], scores[keep]
            part = np.argpartition(-scores, count - 1)[:count]
            # argpartition keeps an arbitrary subset of the rows tied with the
            # boundary score; take all of them so chunk id decides who survives.
            part = np.flatnonzero(scores >= scores[part].min())
        else:
            part = np.arange(len(rows))
        order = np.lexsort((self.ids[rows[part]], -scores[part]))
        picked = part[order][:count]
        return [(int(self.ids[rows[p]]), float(scores[p])) for p in picked]


#: Selections over fewer scores than this just partition them all.
SAMPLED_FLOOR_MIN = 8192
SAMPLED_FLOOR_STRIDE = 16


def above_sampled_floor(scores: np.ndarray, count: int) -> np.ndarray | None:
    """Indices of a small subset of ``scores`` that surely holds the ``count`` largest.

    A floor is read off every 16th score (its ``4 × count / 16``-th largest),
    so about ``4 × count`` scores reach it. When at least ``count`` do, the
    ``count``-th largest score is at or above the floor, so every score of the
    top ``count`` — ties at the boundary included — is in the subset: selecting
    there is exact, and partitions a few hundred values instead of every row.
    None when the array is small or too few scores reach the floor.
    """
    if len(scores) < SAMPLED_FLOOR_MIN:
        return None
    sample = scores[::SAMPLED_FLOOR_STRIDE]
    rank = min(len(sample), 4 * count // SAMPLED_FLOOR_STRIDE + 1)
    floor = np.partition(sample, len(sample) - rank)[len(sample) - rank]
    keep = np.flatnonzero(scores >= floor)
    return keep if len(keep) >= count else None


class _Candidates:
    """The approximate index's proposals for one query: their rows and exact scores,
    looked up and computed once for every mask (a mask takes the first ``k``), with
    the rows the index does not hold yet always among them."""

    def __init__(self, vectors: VectorIndex, view: AnnView, query: np.ndarray,
                 keys: np.ndarray) -> None:
        rows = vectors.positions(keys)
        self._known = rows >= 0  # False: the chunk has gone since the index was built
        self._rows = rows
        self._scores = np.zeros(len(rows), dtype=np.float32)
        self._scores[self._known] = vectors.matrix.scores(query, rows[self._known])
        self._pending = view.pending
        self._pending_scores = (vectors.matrix.scores(query, view.pending)
                                if len(view.pending) else np.zeros(0, dtype=np.float32))

    def first(self, k: int, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows and scores of the first ``k`` proposals and the pending rows ``allowed`` keeps."""
        keep = self._known[:k].copy()
        keep[keep] = allowed[self._rows[:k][keep]]
        rows, scores = self._rows[:k][keep], self._scores[:k][keep]
        if len(self._pending):
            extra = allowed[self._pending]
            rows = np.concatenate((rows, self._pending[extra]))
            scores = np.concatenate((scores, self._pending_scores[extra]))
        return rows, scores


class _SharedScores:
    """The query's scores against every row, computed at most once, on first use;
    and, before that, its prescan shortlist (:mod:`groove.search.prescan`)."""

    def __init__(self, matrix: ResidentMatrix, query: np.ndarray,
                 codes: prescan.Prescan | None = None,
                 shares_of: Callable[[np.ndarray], list[float]] | None = None) -> None:
        self._matrix = matrix
        self._query = query
        self._all: np.ndarray | None = None
        self._codes = codes
        self._shares_of = shares_of or (lambda allowed: [])
        self._depths: list[int] | None = None  # per plan()
        self._short: prescan.Shortlist | None = None

    @property
    def done(self) -> bool:
        return self._all is not None

    def all(self) -> np.ndarray:
        if self._all is None:
            self._all = self._matrix.scores(self._query)
        return self._all

    def rows(self, rows: np.ndarray) -> np.ndarray:
        """Scores of ``rows`` only (copies those rows: worth it only for a few)."""
        return self._matrix.scores(self._query, rows)

    def plan(self, n: int, masks: Sequence[np.ndarray]) -> None:
        """Prepare for the best ``n`` of each of ``masks``: one coded search deep enough
        for all of them, or (when one needs more) none, since that mask computes the
        full product and the others then select from it."""
        codes = self._codes
        self._depths = None
        if codes is None or self._all is not None or not masks:
            return
        depths = [codes.depths(n, self._shares_of(allowed)) for allowed in masks]
        if any(d is None for d in depths):
            return
        self._depths = [max(column) for column in zip(*cast(list[list[int]], depths), strict=True)]

    def shortlisted(self, n: int, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Rows surely holding the best ``n`` ``allowed`` rows, with their exact scores;
        None when there are no codes, the plan was a full product, or the codes cannot tell."""
        if self._codes is None or self._depths is None or self._all is not None:
            return None
        short = self._short
        if short is None or any(d > s for d, s in zip(self._depths, short.depths, strict=True)):
            short = self._short = self._codes.search(self._query, self._depths)
        rows = short.certain(n, allowed, self._shares_of(allowed))
        if rows is None:
            self._codes.band.widen()
            return None
        return rows, self._matrix.scores(self._query, rows)


#: The id table of positions() is kept while it has at most this many entries per
#: resident chunk (4 bytes each: at most 16 bytes a chunk beside its 1,536-byte vector).
_ROW_TABLE_SPREAD = 4


def _row_table(ids: np.ndarray) -> np.ndarray | None:
    """``table[chunk_id]`` = its row in ``ids`` (ascending), -1 elsewhere; None when the
    ids are spread too thinly for a table to pay (``_ROW_TABLE_SPREAD``)."""
    if not len(ids) or int(ids[-1]) >= _ROW_TABLE_SPREAD * len(ids) + 65_536:
        return None
    table = np.full(int(ids[-1]) + 1, -1, dtype=np.int32)
    table[ids] = np.arange(len(ids), dtype=np.int32)
    return table


def _cjk_rows(columns: ChunkColumns, ids: np.ndarray) -> np.ndarray:
    """For each of ``ids`` (all in ``columns``): is its document written in CJK?"""
    if not len(ids):
        return np.zeros(0, dtype=bool)
    cjk_doc = np.fromiter((is_cjk(d.title) if d.cjk is None else d.cjk
                           for d in columns.documents), dtype=bool, count=len(columns.documents))
    return cjk_doc[columns.doc_slot[np.searchsorted(columns.ids, ids)]]


def _runs(rows: np.ndarray) -> list[tuple[int, int]]:
    """``[(start, end)]`` index ranges of ``rows`` where consecutive values step by one."""
    if not len(rows):
        return []
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    edges = [0, *breaks.tolist(), len(rows)]
    return list(zip(edges[:-1], edges[1:], strict=True))
