"""Keeping the approximate index current, in the background (docs/scaling.md).

:class:`~groove.search.vectors.VectorIndex` answers searches; this part of it
loads the approximate index saved beside the database, brings it up to the
loaded rows (removed keys dropped, new keys added, re-trained when the index
has grown far past what it was trained for) and saves it, on a thread of its
own and copy on write: searches meanwhile use the previous index plus an exact
scan of the rows it does not hold yet (:class:`AnnView`), or the exact scan
alone.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from groove.config.model import VectorsConfig
from groove.errors import UnsafeFile
from groove.search import ann
from groove.search.resident import ResidentMatrix

log = logging.getLogger("groove.search")


def release_freed_heap() -> None:
    """Ask glibc to return freed heap pages; elsewhere (or without glibc) nothing happens."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


@dataclass(frozen=True)
class AnnView:
    """An approximate index and the rows it does not hold yet, for one loaded generation."""

    ann_index: ann.AnnIndex
    generation: int | None
    pending: np.ndarray  # row positions not in the index, ascending


class AnnUpkeep:
    """The approximate-index half of the vector index (a mixin of ``VectorIndex``, which
    owns the state declared here and sets it in its constructor)."""

    settings: VectorsConfig
    ids: np.ndarray
    matrix: ResidentMatrix
    embedded: np.ndarray
    _lock: threading.Lock
    _generation: int | None
    _ann_path: Path | None
    _model_id: str | None
    _view: AnnView | None
    _worker: threading.Thread | None
    _stop: threading.Event
    _warned_missing: bool

    @property
    def uses_ann(self) -> bool:
        """True when the size and settings call for the approximate index."""
        return (self.settings.ann and len(self.ids) >= self.settings.ann_min_chunks
                and bool(self.embedded.all()))

    @property
    def ann_size(self) -> int:
        view = self._view
        return 0 if view is None else len(view.ann_index)

    @property
    def pending_rows(self) -> int:
        """Rows the current approximate index does not hold yet (answered by the exact scan)."""
        view = self._view
        return len(self.ids) if view is None else len(view.pending)

    def _rebase(self, view: AnnView | None) -> AnnView | None:
        """``view``'s approximate index against the rows loaded now."""
        if view is None:
            return None
        pending = np.flatnonzero(~np.isin(self.ids, view.ann_index.keys, assume_unique=True))
        return AnnView(view.ann_index, self._generation, pending)

    def _maintain_ann(self) -> None:
        """Start the background worker when the approximate index is missing or behind."""
        if not self.uses_ann:
            return
        if not ann.available():
            if not self._warned_missing:
                log.warning("%d chunks: the approximate index needs the optional faiss-cpu package "
                            "(pip install 'groove[ann]'); using the exact scan", len(self.ids))
                self._warned_missing = True
            return
        view = self._view
        stale = view is None or len(view.pending) or len(view.ann_index) != len(self.ids)
        worker = self._worker
        if stale and (worker is None or not worker.is_alive()):
            self._worker = threading.Thread(target=self._update_ann, name="groove-ann",
                                            daemon=True)
            self._worker.start()

    def wait_for_ann(self, timeout: float) -> bool:
        """Block until the background worker is idle; True when the approximate index is up to date."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
        view = self._view
        return view is not None and not len(view.pending) and len(view.ann_index) == len(self.ids)

    def close(self) -> None:
        """Stop a running background build (the last saved index stays on disk)."""
        self._stop.set()
        worker = self._worker
        if worker is not None:
            worker.join()

    def _update_ann(self) -> None:
        try:
            self._update_ann_until_current()
        except Exception:  # searches go on with the exact scan; the next refresh retries
            log.exception("building the approximate index failed; searching exactly meanwhile")

    def _update_ann_until_current(self) -> None:
        while not self._stop.is_set():
            with self._lock:  # one consistent snapshot of the loaded rows
                ids, matrix, generation, view = self.ids, self.matrix, self._generation, self._view
            ann_index = view.ann_index if view is not None else self._load_ann(ids, matrix)
            new = self._ann_for(ann_index, ids, matrix)
            if new is None:
                return
            if new is not ann_index and self._ann_path is not None:
                try:
                    new.save(self._ann_path)
                except (OSError, UnsafeFile) as exc:  # searches use the index in memory anyway
                    log.warning("could not save the approximate index beside %s: %s",
                                self._ann_path, exc)
                else:
                    new = self._compact(new, matrix.dim)
                    release_freed_heap()  # the built copy, just dropped
            with self._lock:
                self._view = self._rebase(AnnView(new, generation, np.zeros(0, np.int64)))
                done = self._generation == generation
            if done:
                return

    def _compact(self, built: ann.AnnIndex, dim: int) -> ann.AnnIndex:
        """The copy just saved, read back, in place of ``built``.

        faiss grows each inverted list geometrically while adding, so a freshly
        built index holds up to twice its codes; the file holds them exactly
        (measured at 200k chunks: resident 1.50x the float32 vectors with the
        built copy, 1.34x with the saved one).
        """
        assert self._ann_path is not None
        saved = ann.AnnIndex.load(self._ann_path, self._model_id, dim)
        if saved is None or not np.array_equal(saved.keys, built.keys):
            return built
        return saved

    def _load_ann(self, ids: np.ndarray, matrix: ResidentMatrix) -> ann.AnnIndex | None:
        if self._ann_path is None or not len(ids):
            return None
        ann_index = ann.AnnIndex.load(self._ann_path, self._model_id, matrix.dim)
        if ann_index is None:
            return None
        common = np.intersect1d(ann_index.keys, ids, assume_unique=True)
        sample = common[np.linspace(0, len(common) - 1, min(ann.SAMPLE_SIZE, len(common)),
                                    dtype=np.int64)] if len(common) else common
        if not ann_index.matches(sample, matrix.vectors(np.searchsorted(ids, sample))):
            log.info("approximate index beside %s belongs to another index: rebuilding",
                     self._ann_path)
            return None
        return ann_index

    def _ann_for(self, ann_index: ann.AnnIndex | None, ids: np.ndarray,
                   matrix: ResidentMatrix) -> ann.AnnIndex | None:
        """``ann_index`` brought up to ``ids`` (itself when nothing changed)."""
        threads = self.settings.ann_build_threads or max(1, (os.cpu_count() or 2) // 2)
        if ann_index is not None and len(ids) > ann.RETRAIN_GROWTH * ann_index.trained_for:
            log.info("approximate index: %d chunks, trained for %d: re-training",
                     len(ids), ann_index.trained_for)
            ann_index = None
        if ann_index is None:
            rng = np.random.default_rng(len(ids))
            rows = np.sort(rng.choice(len(ids), ann.AnnIndex.training_rows(len(ids)),
                                      replace=False))
            log.info("approximate index: training %s centroids on %d of %d chunks",
                     ann.inverted_lists(len(ids)), len(rows), len(ids))
            ann_index = ann.AnnIndex.trained(matrix.vectors(rows), len(ids), self._model_id,
                                         threads=threads)
        removed = np.setdiff1d(ann_index.keys, ids, assume_unique=True)
        added = np.setdiff1d(ids, ann_index.keys, assume_unique=True)
        if not len(added) and not len(removed):
            return ann_index
        rows = np.searchsorted(ids, added)
        log.info("approximate index: adding %d, removing %d chunks in the background",
                 len(added), len(removed))
        return ann_index.updated(added, lambda a, b: matrix.vectors(rows[a:b]), removed,
                             threads=threads, keep_going=lambda: not self._stop.is_set())
