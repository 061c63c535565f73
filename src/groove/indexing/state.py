"""The index state: one computation behind every "how complete is this index" answer.

Search responses, ``groove status`` (text and JSON), ``/api/admin/status`` and
the UI all show :class:`~groove.models.IndexState`, computed here from three
facts (docs/index-lifecycle.md):

* is a writer running: the cross-process writer lock is held
  (:class:`~groove.store.writer_lock.WriterLock`), or this process is indexing;
* did the last build finish: ``build_state`` in the index, and the pending
  (not yet embedded) chunks;
* counts of documents and chunks, embedded or not: counters the write
  transactions keep in the index (one read, whatever the size);
* which files on disk are new or changed since they were indexed, and which
  were skipped: a walk of the folder comparing each member's mtime with the
  one recorded when it was indexed or skipped. The walk never runs on a
  search's thread: :class:`FileChangesMonitor` refreshes it in the background,
  no more often than every :data:`FILES_CHECK_TTL_S`, and serves the last count.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from groove.config import Config
from groove.models import IndexState
from groove.store.base import Store, build_finished

log = logging.getLogger("groove.indexing.state")

#: How long a count of changed files is reused (at least).
FILES_CHECK_TTL_S = 5.0
#: How long a one-shot command waits for the count, from the moment the walk
#: started: a folder of a few thousand files is counted well inside it; on one
#: of a hundred thousand the answer says "not counted" (``null``) rather than
#: making ``status`` or ``search`` take seconds (``status --count-files`` waits).
ONE_SHOT_FILES_WAIT_S = 0.2


def iso_time(ts: float | None) -> str | None:
    """Local time as ISO 8601 with offset; None for a missing or zero timestamp."""
    if not ts:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(ts))


def missing_state(*, building: bool) -> IndexState:
    return IndexState(state="missing", documents=0, documents_embedded=0, chunks=0,
                      chunks_embedded=0, build_running=building, last_change=None,
                      files_newer=None, files_skipped=None)


def read_index_state(store: Store, *, building: bool, files: FileChanges | None) -> IndexState:
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
        files_newer=None if files is None else files.newer,
        files_skipped=None if files is None else files.skipped,
        files_total=None if files is None else files.total,
        fulltext_unavailable=store.fulltext_problem(),
    )


@dataclass(frozen=True)
class FileChanges:
    """What a walk of the folder found against the index (docs/index-lifecycle.md).

    ``newer``: member files not indexed, or whose mtime differs from the one
    recorded when they were indexed (or last found unchanged). ``skipped``:
    files an index run could not take and that have not changed since
    (binary or non-UTF-8 text, refused hard links, parse failures) plus what
    the walk itself refuses (links, FIFOs, undecodable names); ``groove
    doctor`` says why each one is held back. A skipped file is never "newer":
    re-running ``groove index`` would skip it again.
    """

    newer: int
    skipped: int
    #: Every member file the walk found (read, skipped or newer): how far a build's
    #: reading is, ``total - newer`` of ``total``.
    total: int = 0


def count_file_changes(config: Config, indexed_mtimes: dict[str, float],
                       skipped_mtimes: dict[str, float]) -> FileChanges:
    """One walk of the folder (file system only, no index reads), counting both kinds."""
    from groove.indexing.fileset import FileSet

    newer = skipped = total = 0

    def refused(_shown: str, _reason: str) -> None:  # the index run warned about it already
        nonlocal skipped
        skipped += 1

    root = os.fspath(config.kb_path)  # a string join per file: no Path object each
    for rel in FileSet.from_config(config).walk(refused):
        recorded = indexed_mtimes.get(rel)
        try:
            mtime = os.stat(os.path.join(root, rel), follow_symlinks=False).st_mtime
        except OSError:
            continue
        total += 1
        if recorded is not None and abs(mtime - recorded) <= 1e-6:
            continue
        was_skipped = skipped_mtimes.get(rel)
        if was_skipped is not None and abs(mtime - was_skipped) <= 1e-6:
            skipped += 1
        else:
            newer += 1
    return FileChanges(newer=newer, skipped=skipped, total=total)


class FileChangesMonitor:
    """The latest :class:`FileChanges` of one knowledge base, refreshed off the request path.

    :meth:`current` never walks: it returns what the last walk found (None
    before the first one finished) and, when that is older than
    :data:`FILES_CHECK_TTL_S`, starts a walk in a background thread. The
    interval also stretches to ten times the last walk's duration, so on a
    huge folder the walk never takes more than a tenth of a core from the
    searches it runs beside. One-shot commands start the walk early and wait
    for it at the end (``current(wait=True)``), within a limit, so a huge
    folder makes their answer say "not counted" instead of making them slow;
    :meth:`invalidate` forgets the count after an index run changed what is
    indexed.
    """

    def __init__(self, compute: Callable[[], FileChanges]) -> None:
        self._compute = compute
        self._lock = threading.Lock()
        self._value: FileChanges | None = None
        self._at = 0.0
        self._took = 0.0
        self._epoch = 0  # bumped by invalidate(): a walk started before it is discarded
        self._thread: threading.Thread | None = None
        self._began = 0.0  # when the running (or last) walk started, time.monotonic()

    def current(self, *, wait: bool = False,
                limit: float | None = ONE_SHOT_FILES_WAIT_S) -> FileChanges | None:
        """The last count; starts a background walk when it is stale.

        ``wait`` (one-shot commands, which started the walk early so it ran
        beside their own work) waits for that walk and returns its count, but
        no longer than ``limit`` seconds after the walk started (None: as long
        as it takes); a walk still running then leaves the answer None.
        """
        self.start()
        if wait:
            for _ in range(2):  # a walk that began before an invalidate() does not count
                with self._lock:
                    thread, began = self._thread, self._began
                if thread is not None:
                    thread.join(None if limit is None
                                else max(0.0, began + limit - time.monotonic()))
                    if thread.is_alive():
                        break
                with self._lock:
                    if self._value is not None:
                        break
                self.start()
        with self._lock:
            return self._value

    def start(self) -> None:
        """Start a background walk unless one is running or the count is fresh."""
        with self._lock:
            if not self._stale() or (self._thread is not None and self._thread.is_alive()):
                return
            epoch = self._epoch
            self._began = time.monotonic()
            self._thread = threading.Thread(target=self._walk, args=(epoch,), daemon=True,
                                            name="groove-file-changes")
            self._thread.start()

    def invalidate(self) -> None:
        with self._lock:
            self._value = None
            self._epoch += 1

    def _stale(self) -> bool:
        if self._value is None:
            return True
        return time.monotonic() - self._at > max(FILES_CHECK_TTL_S, 10 * self._took)

    def _walk(self, epoch: int) -> None:
        started = time.monotonic()
        try:
            value = self._compute()
        except Exception as exc:  # a background count must never take the server down
            log.warning("counting changed files failed: %s", exc)
            return
        took = time.monotonic() - started
        with self._lock:
            if epoch == self._epoch:
                self._value, self._at, self._took = value, time.monotonic(), took
