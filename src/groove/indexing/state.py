"""The index state: one computation behind every "how complete is this index" answer.

Search responses, ``groove status`` (text and JSON), ``/api/admin/status`` and
the UI all show :class:`~groove.models.IndexState`, computed here from three
facts (docs/index-lifecycle.md):

* is a writer running: the cross-process writer lock is held
  (:class:`~groove.store.writer_lock.WriterLock`), or this process is indexing;
* did the last build finish: ``build_state`` in the index, and the pending
  (not yet embedded) chunks;
* which files on disk are new or changed since they were indexed: a walk of
  the folder comparing each member's mtime with the one recorded when it was
  indexed (cached for :data:`FILES_CHECK_TTL_S`, so a burst of searches walks
  once).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from groove.config import Config
from groove.models import IndexState
from groove.store.base import Store, build_finished

#: How long a count of changed files is reused.
FILES_CHECK_TTL_S = 5.0


def iso_time(ts: float | None) -> str | None:
    """Local time as ISO 8601 with offset; None for a missing or zero timestamp."""
    if not ts:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(ts))


def missing_state(*, building: bool) -> IndexState:
    return IndexState(state="missing", documents=0, documents_embedded=0, chunks=0,
                      chunks_embedded=0, build_running=building, last_change=None,
                      files_newer=None)


def index_state(store: Store, *, building: bool, files_newer: int | None) -> IndexState:
    """The state of an existing index (read in one snapshot)."""
    with store.read_snapshot():
        counts = store.embedding_counts()
        meta = store.meta()
    finished = build_finished(meta) and counts.chunks_embedded >= counts.chunks
    state = "building" if building else "complete" if finished else "incomplete"
    return IndexState(
        state=state,
        documents=counts.documents,
        documents_embedded=counts.documents_embedded,
        chunks=counts.chunks,
        chunks_embedded=counts.chunks_embedded,
        build_running=building,
        last_change=iso_time(meta.changed_at or meta.last_indexed),
        files_newer=files_newer,
    )


def count_files_newer(config: Config, indexed_mtimes: dict[str, float]) -> int:
    """Member files on disk that are not indexed, or whose mtime differs from the indexed one."""
    from groove.indexing.fileset import FileSet

    count = 0
    root = Path(config.kb_path)
    for rel in FileSet.from_config(config).walk(None):
        recorded = indexed_mtimes.get(rel)
        if recorded is None:
            count += 1
            continue
        try:
            mtime = os.stat(root / rel, follow_symlinks=False).st_mtime
        except OSError:
            continue
        if abs(mtime - recorded) > 1e-6:
            count += 1
    return count


class FilesNewerCache:
    """A count of changed files reused for :data:`FILES_CHECK_TTL_S` (one per knowledge base)."""

    def __init__(self) -> None:
        self._value: int | None = None
        self._at = 0.0

    def get(self, compute: Callable[[], int]) -> int:
        now = time.monotonic()
        if self._value is None or now - self._at > FILES_CHECK_TTL_S:
            self._value = compute()
            self._at = now
        return self._value

    def clear(self) -> None:
        """Forget the count (after an index run changed what is indexed)."""
        self._value = None
