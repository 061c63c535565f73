"""The SQLite implementation of :class:`groove.store.base.Store`.

One file holds the truth: document rows, chunk rows and float32 embedding
blobs. The full-text index is derived from it and lives beside it
(:mod:`groove.fulltext`, ``<db>.fts/``); this store is its only writer.

:class:`SQLiteStore` is one class assembled from a mixin per file:

* ``_core.py``: the connection, its lock, transactions, read snapshots,
  ``index_meta`` and the counters, error wording, ``close``
  (:class:`~groove.store.sqlite._core.StoreCore`, the base of every mixin).
* ``_schema.py``: tables, counter triggers, :data:`MIGRATIONS`, opening,
  creating and migrating a file.
* ``_writes.py``: documents, chunks, vectors, declared fields, skipped files.
* ``_reads.py``: documents, chunks, chunk columns, vectors, counts, and the
  consistency check of ``groove doctor``.
* ``_links.py``: links between documents, declared fields and tags read.
* ``_fulltext.py``: full-text batches, stamps, rebuilds and searches.

Design choices worth knowing before changing anything here:

* The connection is in autocommit mode (``isolation_level=None``) and every
  write method runs one explicit ``BEGIN IMMEDIATE … COMMIT`` that also bumps
  the ``generation`` counter, so readers in other processes see either the old
  or the new state, never a mixture, and can tell that something changed.
* Deleting a document row drops its chunks and (by a second cascade) their
  embeddings in the same transaction.
* The full-text index follows each committed write: the changed documents'
  chunks are queued to it after the SQLite commit and published per batch
  (:meth:`SQLiteStore.flush`, or every ``FULLTEXT_BATCH_SECONDS``; the first
  document a writer writes is published at once). Every text-changing write
  bumps ``text_generation``; a full-text commit records
  ``(fulltext_id, text_generation)`` as its stamp. A stamp that differs from
  the database's (a crash between the two commits, a copied or replaced
  file) means the full-text index is stale: :meth:`SQLiteStore.ensure_fulltext`
  rebuilds it from the chunk rows.
* Chunk ids use AUTOINCREMENT: an id is never reused after a re-index, so a
  cache or a client holding an old id can never get somebody else's chunk.
* ``rename_document`` keeps chunk ``context`` (the breadcrumb) untouched even
  if the title changed: the stored embeddings were computed from it, and
  keeping text and vectors consistent matters more than a fresh breadcrumb
  (which callers never see). ``groove index --force`` recomputes both.
* One connection per store, guarded by a lock, with ``check_same_thread=False``
  so the MCP server may call from worker threads.
* A chunk without an ``embeddings`` row is *pending*: a progressive build
  writes documents first and their vectors later (``write_vectors``). Pending
  is a normal state while ``build_state`` is "building"; see
  docs/index-lifecycle.md.

Module-level settings are read where the code uses them: patch
``_fulltext.FULLTEXT_BATCH_SECONDS`` / ``FULLTEXT_BATCH_DOCUMENTS`` and
``_schema.SCHEMA_VERSION`` / ``MIGRATIONS``, not the names re-exported here.
"""

from __future__ import annotations

from groove.store.base import SCHEMA_VERSION
from groove.store.sqlite._core import (
    COUNTERS,
    corrupt_index_error,
    is_corruption,
    permission_hint,
)
from groove.store.sqlite._fulltext import (
    FULLTEXT_BATCH_DOCUMENTS,
    FULLTEXT_BATCH_SECONDS,
    FullText,
)
from groove.store.sqlite._links import Links
from groove.store.sqlite._reads import Reads
from groove.store.sqlite._schema import _COUNTER_TRUTH, MIGRATIONS, Opening
from groove.store.sqlite._writes import Writes

__all__ = [
    "COUNTERS",
    "FULLTEXT_BATCH_DOCUMENTS",
    "FULLTEXT_BATCH_SECONDS",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "SQLiteStore",
    "_COUNTER_TRUTH",
    "corrupt_index_error",
    "is_corruption",
    "permission_hint",
]


class SQLiteStore(Opening, Writes, Reads, Links, FullText):
    """A groove index in one SQLite file (see the package docstring for the design)."""
