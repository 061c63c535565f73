"""The SQLite implementation of :class:`groove.store.base.Store`.

One file holds the truth: document rows, chunk rows and float32 embedding
blobs. The full-text index is derived from it and lives beside it
(:mod:`groove.fulltext`, ``<db>.fts/``); this store is its only writer. Design
choices worth knowing before changing anything here:

* The connection is in autocommit mode (``isolation_level=None``) and every
  write method runs one explicit ``BEGIN IMMEDIATE … COMMIT`` that also bumps
  the ``generation`` counter, so readers in other processes see either the old
  or the new state, never a mixture, and can tell that something changed.
* Deleting a document row drops its chunks and (by a second cascade) their
  embeddings in the same transaction.
* The full-text index follows each committed write: the changed documents'
  chunks are queued to it after the SQLite commit and published per batch
  (:meth:`SQLiteStore.flush`, or every :data:`FULLTEXT_BATCH_SECONDS`; the
  first document a writer writes is published at once, so a search finds
  something within moments of a build's start). Every
  text-changing write bumps ``text_generation``; a full-text commit records
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
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Unpack

import numpy as np

from groove._logging import note
from groove.errors import (
    CorruptIndexError,
    FullTextDamaged,
    GrooveError,
    IndexMismatchError,
    InvalidArgument,
    NoIndexError,
    NotFound,
)
from groove.fulltext import FullTextIndex, Stamp, TextRow, fulltext_path, open_fulltext
from groove.models import (
    CHUNK_POLICY,
    LEGACY_CHUNK_POLICY,
    Chunk,
    ChunkColumns,
    ChunkRow,
    DocumentMeta,
    DocumentRecord,
    DocumentRow,
    Link,
    LinkRow,
    passage_tokens,
)
from groove.store.base import (
    SCHEMA_VERSION,
    EmbeddingCounts,
    IndexMeta,
    MetaUpdate,
    PendingChunk,
    Store,
    StoreStats,
    build_finished,
)
from groove.store.files import check_directory, check_regular
from groove.store.links import (
    LINK_TABLES,
    mark_unsettled,
    names_of,
    relink,
    settle,
    unsettled,
    write_links,
    write_names,
)
from groove.store.recovery import SIDECARS

log = logging.getLogger("groove.store")

#: Forward migrations: ``MIGRATIONS[v]`` upgrades a file at version ``v - 1`` to ``v``.
#: Each runs inside the same transaction that records the new version.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {}

_FIELDS_TABLE = """
CREATE TABLE IF NOT EXISTS document_fields (
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (doc_id, key, value)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS document_fields_by_value ON document_fields(key, value, doc_id);
"""


def _add_chunking_and_fields(conn: sqlite3.Connection) -> None:
    """v1 -> v2: per-document chunking, declared frontmatter fields, the chunk policy.

    An index that already holds documents was built by a groove that kept only
    the first ``max_chunks_per_file`` chunks of a long file, so it records the
    legacy policy; ``groove doctor`` reports it until ``groove index --force``.
    """
    conn.execute("ALTER TABLE documents ADD COLUMN chunking TEXT NOT NULL DEFAULT 'sections'")
    for statement in _split_script(_FIELDS_TABLE):
        conn.execute(statement)
    has_documents = conn.execute("SELECT EXISTS (SELECT 1 FROM documents)").fetchone()[0]
    conn.execute("INSERT OR REPLACE INTO index_meta(key, value) VALUES ('chunk_policy', ?)",
                 (LEGACY_CHUNK_POLICY if has_documents else CHUNK_POLICY,))


MIGRATIONS[2] = _add_chunking_and_fields


def _drop_fts5(conn: sqlite3.Connection) -> None:
    """Schema 5: the FTS5 trigram table gives way to the derived full-text index.

    The full-text index is rebuilt from the chunk rows on first use (its
    stamp cannot match the new ``fulltext_id``).
    """
    for trigger in ("chunks_ai", "chunks_ad", "chunks_au"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    conn.execute("DROP TABLE IF EXISTS chunks_fts")
    conn.executemany("INSERT OR REPLACE INTO index_meta(key, value) VALUES (?, ?)",
                     _fulltext_meta())


MIGRATIONS[5] = _drop_fts5


def _add_document_script(conn: sqlite3.Connection) -> None:
    """Schema 6: each document records whether it is written in kana/kanji, judged on its
    text (search/language.py), not its title; existing documents are judged on their chunks."""
    from groove.search.language import is_cjk

    columns = {r[1] for r in conn.execute("PRAGMA table_info(documents)")}
    if "cjk" not in columns:
        conn.execute("ALTER TABLE documents ADD COLUMN cjk INTEGER")
    conn.create_function("groove_is_cjk", 1, lambda text: int(is_cjk(text or "")),
                         deterministic=True)
    conn.execute("UPDATE documents SET cjk = (SELECT groove_is_cjk(group_concat(content, ' '))"
                 " FROM chunks WHERE chunks.doc_id = documents.id)")


MIGRATIONS[6] = _add_document_script


def _add_links(conn: sqlite3.Connection) -> None:
    """Schema 7: documents' links and the names they answer to (store/links.py). An index
    that already holds documents records that their links are still to be read: the next
    index run reads them from the files without touching a chunk or a vector."""
    for statement in _split_script(LINK_TABLES):
        conn.execute(statement)
    if conn.execute("SELECT EXISTS (SELECT 1 FROM documents)").fetchone()[0]:
        conn.execute("INSERT OR REPLACE INTO index_meta(key, value) VALUES ('links_pending', '1')")


MIGRATIONS[7] = _add_links

#: Queued full-text changes are published at least this often during a run.
FULLTEXT_BATCH_SECONDS = 1.0
#: ... or when this many documents are queued.
FULLTEXT_BATCH_DOCUMENTS = 500


def _fulltext_meta() -> list[tuple[str, str]]:
    """A fresh full-text identity: a random id and text generation 0."""
    return [("fulltext_id", uuid.uuid4().hex), ("text_generation", "0")]

_FIX_FORCE = "run `groove index --force` to rebuild the index"

#: Primary SQLite result codes that mean "the file is damaged", not "busy" or "misused".
_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26


def is_corruption(exc: BaseException) -> bool:
    """True for SQLite's "database disk image is malformed" and "file is not a database"."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.DatabaseError) and code is not None and (
        code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB))


def corrupt_index_error(db_path: Path, detail: str) -> CorruptIndexError:
    """The one-line message every command gives for a damaged index (docs/troubleshooting.md)."""
    return CorruptIndexError(
        f"the index {db_path} is damaged ({detail}); run `groove index --force` to rebuild it "
        "into a fresh file (the damaged one is kept aside as "
        f"{db_path.name}.corrupt-<time>)")


_SQLITE_READONLY = 8
_SQLITE_CANTOPEN = 14


def _sqlite_error(db_path: Path, what: str, exc: sqlite3.Error) -> GrooveError:
    if is_corruption(exc):
        return corrupt_index_error(db_path, str(exc))
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in (_SQLITE_READONLY, _SQLITE_CANTOPEN):
        return GrooveError(f"index {db_path}: {what} failed ({exc}): {permission_hint(db_path)}")
    return GrooveError(f"index {db_path}: {what} failed: {exc}")


def permission_hint(db_path: Path) -> str:
    """Which of the index file and its folder groove cannot write, in words."""
    folder = db_path.parent
    blocked = []
    if db_path.exists() and not os.access(db_path, os.W_OK):
        blocked.append(f"the index file {db_path}")
    if not os.access(folder, os.W_OK | os.X_OK):
        blocked.append(f"its folder {folder}")
    if not blocked:
        return (f"this is usually a permissions problem: groove needs to write {db_path} and, "
                f"for its -wal and -shm files, the folder {folder}")
    return (f"a permissions problem: groove cannot write {' nor '.join(blocked)} (it needs both, "
            "the folder for the -wal and -shm files); fix the permissions or set db_path to a "
            "writable place")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS index_meta (
    key   TEXT PRIMARY KEY,
    value TEXT
);
CREATE TABLE IF NOT EXISTS documents (
    id            INTEGER PRIMARY KEY,
    path          TEXT NOT NULL UNIQUE,
    sha256        TEXT NOT NULL,
    title         TEXT NOT NULL,
    category      TEXT,
    topic         TEXT,
    date          TEXT,
    tags          TEXT NOT NULL DEFAULT '[]',
    tags_invalid  INTEGER NOT NULL DEFAULT 0,
    metadata      TEXT NOT NULL DEFAULT '{}',
    size          INTEGER NOT NULL DEFAULT 0,
    mtime         REAL NOT NULL DEFAULT 0,
    binary_format INTEGER NOT NULL DEFAULT 0,
    indexed_at    REAL NOT NULL,
    chunking      TEXT NOT NULL DEFAULT 'sections',
    language      TEXT,
    cjk           INTEGER
);
CREATE TABLE IF NOT EXISTS chunks (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_id      INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    chunk_index INTEGER NOT NULL,
    heading     TEXT,
    level       INTEGER,
    context     TEXT NOT NULL DEFAULT '',
    content     TEXT NOT NULL,
    token_count INTEGER,
    quality     REAL NOT NULL,
    ancestry    TEXT NOT NULL DEFAULT '[]',
    symbol_kind TEXT,
    scope       TEXT,
    line_start  INTEGER,
    line_end    INTEGER,
    UNIQUE (doc_id, chunk_index)
);
CREATE TABLE IF NOT EXISTS embeddings (
    chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    vector   BLOB NOT NULL
);
"""

#: Counters kept in ``index_meta`` by the triggers below, in the same
#: transaction as the rows they count, so the index state costs one read
#: however large the index is (never a ``count(*)`` per search).
COUNTERS = ("count_documents", "count_chunks", "count_chunks_embedded",
            "count_documents_pending", "count_tags_invalid", "count_field_values")

#: Schema version 3: the counters, the per-document count of chunks still
#: waiting for a vector (``documents.pending``; a document is embedded when it
#: is 0), and the files the last index runs skipped with the mtime they had.
#: Trigger order matters where a cascade is involved: SQLite runs BEFORE
#: triggers, deletes the row, runs the foreign-key cascade, then AFTER
#: triggers. So a chunk's BEFORE DELETE still sees its embedding, and an
#: embedding deleted by a chunk's cascade no longer finds its chunk (no
#: pending change); a document's BEFORE DELETE still sees its pending count.
#: ``INSERT OR REPLACE`` into ``embeddings`` would skip the delete triggers
#: (SQLite fires them for REPLACE only with recursive triggers), so vectors
#: are written with an upsert.
_COUNTER_SCHEMA = """
CREATE TRIGGER IF NOT EXISTS count_documents_ai AFTER INSERT ON documents BEGIN
    UPDATE index_meta SET value = value + 1 WHERE key = 'count_documents';
    UPDATE index_meta SET value = value + new.tags_invalid WHERE key = 'count_tags_invalid';
    UPDATE index_meta SET value = value + (new.pending > 0) WHERE key = 'count_documents_pending';
END;
CREATE TRIGGER IF NOT EXISTS count_documents_bd BEFORE DELETE ON documents BEGIN
    UPDATE index_meta SET value = value - 1 WHERE key = 'count_documents';
    UPDATE index_meta SET value = value - old.tags_invalid WHERE key = 'count_tags_invalid';
    UPDATE index_meta SET value = value - (old.pending > 0) WHERE key = 'count_documents_pending';
END;
CREATE TRIGGER IF NOT EXISTS count_documents_au AFTER UPDATE OF pending, tags_invalid ON documents
BEGIN
    UPDATE index_meta SET value = value + (new.pending > 0) - (old.pending > 0)
        WHERE key = 'count_documents_pending';
    UPDATE index_meta SET value = value + new.tags_invalid - old.tags_invalid
        WHERE key = 'count_tags_invalid';
END;
CREATE TRIGGER IF NOT EXISTS count_chunks_ai AFTER INSERT ON chunks BEGIN
    UPDATE index_meta SET value = value + 1 WHERE key = 'count_chunks';
    UPDATE documents SET pending = pending + 1 WHERE id = new.doc_id;
END;
CREATE TRIGGER IF NOT EXISTS count_chunks_bd BEFORE DELETE ON chunks BEGIN
    UPDATE index_meta SET value = value - 1 WHERE key = 'count_chunks';
    UPDATE documents SET pending = pending - 1 WHERE id = old.doc_id
        AND NOT EXISTS (SELECT 1 FROM embeddings WHERE chunk_id = old.id);
END;
CREATE TRIGGER IF NOT EXISTS count_embeddings_ai AFTER INSERT ON embeddings BEGIN
    UPDATE index_meta SET value = value + 1 WHERE key = 'count_chunks_embedded';
    UPDATE documents SET pending = pending - 1
        WHERE id = (SELECT doc_id FROM chunks WHERE id = new.chunk_id);
END;
CREATE TRIGGER IF NOT EXISTS count_embeddings_ad AFTER DELETE ON embeddings BEGIN
    UPDATE index_meta SET value = value - 1 WHERE key = 'count_chunks_embedded';
    UPDATE documents SET pending = pending + 1
        WHERE id = (SELECT doc_id FROM chunks WHERE id = old.chunk_id);
END;
CREATE TRIGGER IF NOT EXISTS count_fields_ai AFTER INSERT ON document_fields BEGIN
    UPDATE index_meta SET value = value + 1 WHERE key = 'count_field_values';
END;
CREATE TRIGGER IF NOT EXISTS count_fields_ad AFTER DELETE ON document_fields BEGIN
    UPDATE index_meta SET value = value - 1 WHERE key = 'count_field_values';
END;
CREATE TABLE IF NOT EXISTS skipped_files (
    path   TEXT PRIMARY KEY,
    mtime  REAL NOT NULL,
    reason TEXT NOT NULL
);
"""

#: The true value of each counter, counted from the rows (migration and doctor only).
_COUNTER_TRUTH = {
    "count_documents": "SELECT count(*) FROM documents",
    "count_chunks": "SELECT count(*) FROM chunks",
    "count_chunks_embedded": "SELECT count(*) FROM embeddings",
    "count_documents_pending": (
        "SELECT count(DISTINCT c.doc_id) FROM chunks c"
        " WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.id)"),
    "count_tags_invalid": "SELECT coalesce(sum(tags_invalid), 0) FROM documents",
    "count_field_values": "SELECT count(*) FROM document_fields",
}


def _add_counters(conn: sqlite3.Connection) -> None:
    """Migration to schema 3 (and part of every new file): count once (under the migration's write transaction), then keep.

    The only place the counters are computed from the rows; from here on the
    triggers keep them.
    """
    columns = {r[1] for r in conn.execute("PRAGMA table_info(documents)")}
    if "pending" not in columns:
        conn.execute("ALTER TABLE documents ADD COLUMN pending INTEGER NOT NULL DEFAULT 0")
    conn.execute(
        "UPDATE documents SET pending = (SELECT count(*) FROM chunks c WHERE c.doc_id = documents.id"
        " AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.id))"
        " WHERE id IN (SELECT c.doc_id FROM chunks c"
        " WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.id))")
    conn.executemany("INSERT OR REPLACE INTO index_meta(key, value) VALUES (?, ?)",
                     [(key, str(conn.execute(sql).fetchone()[0]))
                      for key, sql in _COUNTER_TRUTH.items()])
    for statement in _split_script(_COUNTER_SCHEMA):
        conn.execute(statement)


MIGRATIONS[3] = _add_counters


def _add_code_columns(conn: sqlite3.Connection) -> None:
    """v3 -> v4: source-code chunks (docs/indexing.md, "Source code") record their
    definition's kind and scope and their line range; documents their language.
    Prose has none of them, so existing rows stay as they are (NULL)."""
    for statement in (
        "ALTER TABLE chunks ADD COLUMN symbol_kind TEXT",
        "ALTER TABLE chunks ADD COLUMN scope TEXT",
        "ALTER TABLE chunks ADD COLUMN line_start INTEGER",
        "ALTER TABLE chunks ADD COLUMN line_end INTEGER",
        "ALTER TABLE documents ADD COLUMN language TEXT",
    ):
        conn.execute(statement)


MIGRATIONS[4] = _add_code_columns

_DOC_COLUMNS = (
    "d.id, d.path, d.sha256, d.title, d.category, d.topic, d.date, d.tags, d.tags_invalid,"
    " d.metadata, d.size, d.mtime, d.binary_format, d.indexed_at, d.chunking, d.language,"
    " d.pending"
)
_CHUNK_SELECT = (
    "SELECT c.id, c.doc_id, c.chunk_index, c.heading, c.level, c.context, c.content,"
    " c.token_count, c.quality, d.path, d.title, d.category, d.topic, d.date, d.tags,"
    " d.binary_format, c.symbol_kind, c.scope, c.line_start, c.line_end, d.language"
    " FROM chunks c JOIN documents d ON d.id = c.doc_id"
)


class SQLiteStore(Store):
    """A groove index in one SQLite file (see the module docstring for the design)."""

    def __init__(self, conn: sqlite3.Connection, db_path: Path) -> None:
        self._conn = conn
        self._path = db_path
        self._lock = threading.RLock()
        self._fulltext: FullTextIndex | None = None
        #: Documents queued to the full-text index since its last commit.
        self._fulltext_queued = 0
        self._fulltext_committed_at = time.monotonic()
        #: True from this process's first text write until :meth:`flush`.
        self._fulltext_writing = False
        #: Whether a batch was published since the writing began (the first goes at once).
        self._fulltext_published = False
        #: The stamp of the full-text commit loaded here (None: not looked at yet).
        self._fulltext_seen: Stamp | None = None
        #: The full-text damage last reported (:meth:`_without_fulltext` says each once).
        self._fulltext_said: str | None = None
        #: True inside a read snapshot this store began (:meth:`read_snapshot`).
        self._reading = False
        #: ``index_meta`` as the open read snapshot sees it, once read (see _meta_values).
        self._snapshot_meta: dict[str, str | None] | None = None
        #: True once :meth:`close` ran (a second close, or a flush after it, does nothing).
        self._closed = False

    # --- opening -------------------------------------------------------------
    @classmethod
    def open(cls, db_path: Path, *, create: bool) -> SQLiteStore:
        """Open (or with ``create`` make) the index at ``db_path``, migrating it forward.

        Refuses a file written by a newer groove, and anything that is not a
        groove index, with a GrooveError naming the path.
        """
        db_path = Path(db_path)
        for suffix in ("", *SIDECARS):  # SQLite would follow a link planted at any of them
            check_regular(Path(f"{db_path}{suffix}"), "the index file")
        if not create and not db_path.is_file():
            raise NoIndexError(f"no index at {db_path}: run `groove index --kb-path …` first")
        if create and not db_path.parent.is_dir():
            raise GrooveError(f"cannot create index {db_path}: directory {db_path.parent} does not exist")
        try:
            conn = sqlite3.connect(
                str(db_path), isolation_level=None, check_same_thread=False, timeout=30.0
            )
        except sqlite3.Error as exc:
            raise _sqlite_error(db_path, "opening", exc) from exc
        store = cls(conn, db_path)
        try:
            store._prepare(create)
        except BaseException:
            conn.close()
            raise
        return store

    def _prepare(self, create: bool) -> None:
        with self._errors("open"):
            self._conn.execute("PRAGMA busy_timeout = 30000")
            self._conn.execute("PRAGMA foreign_keys = ON")
            self._conn.create_function("groove_passage_tokens", 3, passage_tokens,
                                       deterministic=True)
            tables = {r[0] for r in self._conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
            if "index_meta" not in tables:
                if tables:  # somebody else's database: never write into it
                    raise NoIndexError(
                        f"{self._path} is an SQLite database that is not a groove index "
                        f"(it holds {', '.join(sorted(tables)[:5])}); groove will not write into "
                        "it: point db_path at a new file or at an existing groove index")
                if not create:
                    raise NoIndexError(
                        f"{self._path} is not a groove index: run `groove index --kb-path …` "
                        "(or point --db-path at the right file)"
                    )
            mode = self._conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                log.warning("index %s: journal_mode is %s, not WAL", self._path, mode)
            self._conn.execute("PRAGMA synchronous = NORMAL")
            if "index_meta" not in tables:
                self._create_schema()
            self._migrate()

    def check_health(self) -> None:
        """Raise :class:`CorruptIndexError` unless SQLite's ``quick_check`` passes.

        ``quick_check`` reads every page (O(file size), no index cross-check);
        commands that must not work on a damaged index run it once per open.
        """
        with self._errors("checking the index"):
            rows = [r[0] for r in self._conn.execute("PRAGMA quick_check")]
        if rows != ["ok"]:
            raise corrupt_index_error(self._path, "; ".join(rows[:3]))

    def _create_schema(self) -> None:
        with self._transaction():
            for statement in _split_script(_SCHEMA + _FIELDS_TABLE + LINK_TABLES):
                self._conn.execute(statement)
            self._conn.executemany(
                "INSERT OR IGNORE INTO index_meta(key, value) VALUES (?, ?)",
                [
                    ("schema_version", str(SCHEMA_VERSION)),
                    ("generation", "0"),
                    ("context_mode", "off"),
                    *_fulltext_meta(),
                    ("chunk_policy", CHUNK_POLICY),
                ],
            )
            _add_counters(self._conn)  # the same step an older file migrates through
        fulltext = self._fulltext_index()  # a new database starts with an empty, current index
        fulltext.delete_all()
        fulltext.commit(self._db_stamp())
        fulltext.release_writer()

    def _migrate(self) -> None:
        """Apply :data:`MIGRATIONS` in order up to the current SCHEMA_VERSION."""
        current = SCHEMA_VERSION
        found = self._file_version()
        if found > current:
            raise IndexMismatchError(
                f"index {self._path} has schema version {found}, but this groove only "
                f"understands up to {current}: upgrade groove, or {_FIX_FORCE}"
            )
        for target in range(found + 1, current + 1):
            step = MIGRATIONS.get(target)
            if step is None:
                raise IndexMismatchError(
                    f"index {self._path} has schema version {found} and no migration to "
                    f"version {target} exists: {_FIX_FORCE}"
                )
            note(log, "migrating index %s from schema %d to %d", self._path, target - 1, target)
            with self._transaction():
                step(self._conn)
                self._conn.execute(
                    "UPDATE index_meta SET value = ? WHERE key = 'schema_version'", (str(target),)
                )

    def _file_version(self) -> int:
        row = self._conn.execute(
            "SELECT value FROM index_meta WHERE key = 'schema_version'"
        ).fetchone()
        try:
            return int(row[0])
        except (TypeError, ValueError):
            raise IndexMismatchError(
                f"index {self._path} records no valid schema version: {_FIX_FORCE}"
            ) from None

    # --- plumbing ------------------------------------------------------------
    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        """Hold the lock and turn sqlite3 errors into GrooveError naming the file."""
        with self._lock:
            try:
                yield
            except sqlite3.Error as exc:
                raise _sqlite_error(self._path, what, exc) from exc

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT; roll back on any exception (including Ctrl-C)."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """Every read inside sees one committed state (a deferred read transaction).

        Without it, two SELECTs around another process's commit can disagree
        (chunks of a document the first SELECT did not see).
        """
        with self._lock:
            if self._conn.in_transaction:
                yield
                return
            with self._errors("starting a read snapshot"):
                self._conn.execute("BEGIN")
            self._reading = True
            try:
                yield
            finally:
                self._reading, self._snapshot_meta = False, None
                if self._conn.in_transaction:
                    with self._errors("ending a read snapshot"):
                        self._conn.execute("COMMIT")

    @contextmanager
    def _write(self, what: str, *, text: bool = False) -> Iterator[sqlite3.Connection]:
        """One write transaction that also bumps ``generation`` and records ``changed_at``.

        ``text``: the write changes chunk text, so ``text_generation`` is bumped
        too (the full-text index must follow).
        """
        with self._errors(what), self._transaction() as conn:
            yield conn
            keys = "('generation', 'text_generation')" if text else "('generation')"
            conn.execute(
                "UPDATE index_meta SET value = CAST(value AS INTEGER) + 1 WHERE key IN " + keys
            )
            conn.execute("INSERT OR REPLACE INTO index_meta(key, value) VALUES ('changed_at', ?)",
                         (repr(time.time()),))

    def _meta_values(self) -> dict[str, str | None]:
        """Every ``index_meta`` row: the model, the counters, the generations, the stamps.

        Inside a read snapshot the table cannot change (this connection writes
        only in its own transactions, which cannot start there, and other
        processes' commits are not seen), so it is read once per snapshot: a
        search asks for the model, the generation, the full-text stamp and the
        counters, and pays for one small SELECT. Under the store's lock, which the
        snapshot holds throughout: another thread's read waits for it to end rather
        than reading inside it.
        """
        with self._lock:
            if self._snapshot_meta is not None:
                return self._snapshot_meta
            values = dict(self._conn.execute("SELECT key, value FROM index_meta").fetchall())
            if self._reading:
                self._snapshot_meta = values
            return values

    # --- metadata ------------------------------------------------------------
    def meta(self) -> IndexMeta:
        with self._errors("reading index_meta"):
            values = self._meta_values()
        return IndexMeta(
            schema_version=int(values.get("schema_version") or 0),
            model_id=values.get("model_id"),
            dim=_opt_int(values.get("dim")),
            context_mode=values.get("context_mode") or "off",
            last_indexed=_opt_float(values.get("last_indexed")),
            build_state=values.get("build_state"),
            changed_at=_opt_float(values.get("changed_at")),
            model_url=values.get("model_url") or None,
            chunk_policy=values.get("chunk_policy"),
            parser_policies=_opt_policies(values.get("parser_policies")),
            declared_fields=_opt_names(values.get("declared_fields")),
        )

    def set_meta(self, **fields: Unpack[MetaUpdate]) -> None:
        """Record the given fields (None = leave alone; ``model_url=""`` records a local model).

        Changing model, dimension or context mode bumps ``generation`` (caches
        built under the old model are stale); ``last_indexed`` and
        ``build_state`` do not, so a no-op index run does not make every
        reader reload.
        """
        dim, last_indexed = fields.get("dim"), fields.get("last_indexed")
        policies, declared = fields.get("parser_policies"), fields.get("declared_fields")
        updates = {
            "model_id": fields.get("model_id"),
            "dim": None if dim is None else str(int(dim)),
            "context_mode": fields.get("context_mode"),
            "last_indexed": None if last_indexed is None else repr(float(last_indexed)),
            "build_state": fields.get("build_state"),
            "model_url": fields.get("model_url"),
            "chunk_policy": fields.get("chunk_policy"),
            "parser_policies": None if policies is None else json.dumps(dict(sorted(policies.items()))),
            "declared_fields": None if declared is None else json.dumps(
                sorted(set(declared)), ensure_ascii=False),
        }
        rows = [(k, v) for k, v in updates.items() if v is not None]
        if not rows:
            return
        structural = any(k not in ("last_indexed", "build_state", "chunk_policy",
                                   "parser_policies")
                         for k, _ in rows)
        with self._errors("writing index_meta"), self._transaction() as conn:
            conn.executemany("INSERT OR REPLACE INTO index_meta(key, value) VALUES (?, ?)", rows)
            if structural:
                conn.execute(
                    "UPDATE index_meta SET value = CAST(value AS INTEGER) + 1"
                    " WHERE key = 'generation'"
                )

    def generation(self) -> int:
        with self._errors("reading generation"):
            return int(self._meta_values().get("generation") or 0)

    # --- writes ----------------------------------------------------------------
    def write_document(
        self, doc: DocumentRecord, chunks: Sequence[Chunk], vectors: np.ndarray | None
    ) -> None:
        """Insert or replace ``doc`` by path; the document id survives a replace.

        With ``vectors=None`` the chunks are stored pending (no embeddings).
        """
        blobs = None if vectors is None else self._vector_blobs(doc.path, chunks, vectors)
        self._before_text_write()
        with self._write(f"writing {doc.path}", text=True) as conn:
            row = conn.execute("SELECT id FROM documents WHERE path = ?", (doc.path,)).fetchone()
            old_names: set[str] | None = None
            if row is None:
                doc_id: int | None = conn.execute(
                    "INSERT INTO documents(path, sha256, title, category, topic, date, tags,"
                    " tags_invalid, metadata, size, mtime, binary_format, indexed_at, language)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (doc.path, *_doc_values(doc)),
                ).lastrowid
            else:
                doc_id = row[0]
                old_names = names_of(conn, doc_id)
                self._update_document(conn, doc_id, doc)
                conn.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            assert doc_id is not None  # sqlite3 sets lastrowid after an INSERT
            conn.execute("UPDATE documents SET chunking = ?, cjk = ? WHERE id = ?",
                         (doc.chunking, None if doc.cjk is None else int(doc.cjk), doc_id))
            self._replace_fields(conn, doc_id, doc.fields)
            rows = self._insert_chunks(conn, doc_id, chunks, blobs)
            names = write_names(conn, doc_id, doc.path, doc.aliases)
            write_links(conn, doc_id, doc.links)
            # A new document (or new aliases) may be what other links were waiting for.
            relink(conn, (), [doc_id])
            mark_unsettled(conn, names if old_names is None else names ^ old_names)
        with self._lock:
            fulltext = self._fulltext_index()
            fulltext.delete_document(doc_id)
            fulltext.add(rows)
            self._queued(1)

    def _vector_blobs(
        self, path: str, chunks: Sequence[Chunk], vectors: np.ndarray
    ) -> list[bytes]:
        """Check ``vectors`` against the chunks and the recorded dim; one blob per row."""
        arr = np.asarray(vectors)
        if arr.ndim != 2 or arr.shape[0] != len(chunks):
            raise InvalidArgument(
                f"{path}: expected one vector per chunk ({len(chunks)} rows), got shape {arr.shape}"
            )
        dim = self.meta().dim
        if len(chunks) and dim is not None and arr.shape[1] != dim:
            raise IndexMismatchError(
                f"{path}: vectors have dimension {arr.shape[1]} but the index records {dim}: "
                f"{_FIX_FORCE} --model …"
            )
        arr = np.ascontiguousarray(arr, dtype=np.float32)
        return [row.tobytes() for row in arr]

    def _insert_chunks(
        self, conn: sqlite3.Connection, doc_id: int, chunks: Sequence[Chunk],
        blobs: list[bytes] | None,
    ) -> list[TextRow]:
        """Insert the chunks (and their vectors); return them as full-text rows."""
        conn.executemany(
            "INSERT INTO chunks(doc_id, chunk_index, heading, level, context, content,"
            " token_count, quality, ancestry, symbol_kind, scope, line_start, line_end)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    doc_id,
                    c.chunk_index,
                    c.heading,
                    c.level,
                    c.context,
                    c.content,
                    c.token_count,
                    float(c.quality),
                    json.dumps(list(c.ancestry), ensure_ascii=False),
                    c.symbol_kind,
                    c.scope,
                    c.line_start,
                    c.line_end,
                )
                for c in chunks
            ],
        )
        ids = conn.execute(
            "SELECT id FROM chunks WHERE doc_id = ? ORDER BY chunk_index", (doc_id,)
        ).fetchall()
        order = sorted(range(len(chunks)), key=lambda i: chunks[i].chunk_index)
        if blobs is not None:
            conn.executemany(
                "INSERT INTO embeddings(chunk_id, vector) VALUES (?, ?)",
                [(cid, blobs[i]) for (cid,), i in zip(ids, order, strict=True)],
            )
        return [TextRow(cid, doc_id, chunks[i].heading, chunks[i].context, chunks[i].content)
                for (cid,), i in zip(ids, order, strict=True)]

    @staticmethod
    def _update_document(conn: sqlite3.Connection, doc_id: int, doc: DocumentRecord) -> None:
        conn.execute(
            "UPDATE documents SET path = ?, sha256 = ?, title = ?, category = ?, topic = ?,"
            " date = ?, tags = ?, tags_invalid = ?, metadata = ?, size = ?, mtime = ?,"
            " binary_format = ?, indexed_at = ?, language = ? WHERE id = ?",
            (doc.path, *_doc_values(doc), doc_id),
        )

    def write_vectors(self, vectors: dict[int, np.ndarray],
                      token_counts: dict[int, int] | None = None) -> int:
        """Embeddings for pending chunks (and counts for uncounted ones), one transaction;
        vanished chunk ids are skipped."""
        if not vectors:
            return 0
        dim = self.meta().dim
        blobs = []
        for chunk_id, vector in vectors.items():
            arr = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
            if dim is not None and arr.shape[0] != dim:
                raise IndexMismatchError(
                    f"index {self._path}: a vector of dimension {arr.shape[0]} cannot join an "
                    f"index of dimension {dim}: {_FIX_FORCE}")
            blobs.append((int(chunk_id), arr.tobytes()))
        with self._write("storing embeddings") as conn:
            before = conn.total_changes
            conn.executemany(  # an upsert, not OR REPLACE: see _COUNTER_SCHEMA
                "INSERT INTO embeddings(chunk_id, vector) SELECT id, ? FROM chunks WHERE id = ?"
                " ON CONFLICT(chunk_id) DO UPDATE SET vector = excluded.vector",
                [(blob, chunk_id) for chunk_id, blob in blobs],
            )
            stored = conn.total_changes - before
            if token_counts:  # no trigger or generation depends on a count
                conn.executemany(
                    "UPDATE chunks SET token_count = ? WHERE id = ? AND token_count IS NULL",
                    [(int(n), int(chunk_id)) for chunk_id, n in token_counts.items()],
                )
            return stored

    def rename_document(self, old_path: str, doc: DocumentRecord) -> None:
        """Move ``old_path`` to ``doc.path``, taking every document field from ``doc``.

        Chunks, their FTS rows, embeddings and chunk ids are kept (the chunk
        ``context`` too, see the module docstring). A document already stored
        at ``doc.path`` is replaced, in the same transaction.
        """
        self._before_text_write()
        replaced = None
        with self._write(f"renaming {old_path} to {doc.path}", text=True) as conn:
            row = conn.execute("SELECT id FROM documents WHERE path = ?", (old_path,)).fetchone()
            if row is None:
                raise NotFound(f"cannot rename {old_path}: it is not in the index")
            gone_names: set[str] = set()
            if doc.path != old_path:
                other = conn.execute("SELECT id FROM documents WHERE path = ?",
                                     (doc.path,)).fetchone()
                gone_names = set() if other is None else names_of(conn, other[0])
                replaced = conn.execute("DELETE FROM documents WHERE path = ? RETURNING id",
                                        (doc.path,)).fetchone()
            old_names = names_of(conn, row[0])
            self._update_document(conn, row[0], doc)
            self._replace_fields(conn, row[0], doc.fields)
            # Same bytes, same links; what they and the links to it resolve to may move.
            names = write_names(conn, row[0], doc.path, doc.aliases)
            relink(conn, (), [row[0]])
            mark_unsettled(conn, names | old_names | gone_names)
        with self._lock:
            if replaced is not None:
                self._fulltext_index().delete_document(replaced[0])
            self._queued(1)

    @staticmethod
    def _replace_fields(conn: sqlite3.Connection, doc_id: int,
                        fields: dict[str, tuple[str, ...]]) -> None:
        conn.execute("DELETE FROM document_fields WHERE doc_id = ?", (doc_id,))
        conn.executemany(
            "INSERT OR IGNORE INTO document_fields(doc_id, key, value) VALUES (?, ?, ?)",
            [(doc_id, key, value) for key, values in fields.items() for value in values])

    def write_fields(self, fields_by_path: dict[str, dict[str, tuple[str, ...]]]) -> None:
        """Replace the declared-field rows of these documents in one transaction."""
        if not fields_by_path:
            return
        with self._write("writing declared fields") as conn:
            for path, fields in fields_by_path.items():
                row = conn.execute("SELECT id FROM documents WHERE path = ?", (path,)).fetchone()
                if row is not None:
                    self._replace_fields(conn, row[0], fields)

    def document_path(self, doc_id: int) -> str | None:
        with self._errors("reading documents"):
            row = self._conn.execute("SELECT path FROM documents WHERE id = ?",
                                     (doc_id,)).fetchone()
        return None if row is None else str(row[0])

    def field_row_count(self) -> int:
        return self._counters()["count_field_values"]

    def tagged_paths(self, tag: str) -> list[str]:
        """One pass over the documents' tag lists (a LIKE prefilter, then the exact JSON test)."""
        with self._errors("reading document tags"):
            return [r[0] for r in self._conn.execute(
                "SELECT path FROM documents WHERE tags LIKE ? ESCAPE '\\' AND EXISTS "
                "(SELECT 1 FROM json_each(documents.tags) WHERE value = ?) ORDER BY path",
                (f"%{_like_escape(json.dumps(tag, ensure_ascii=False))}%", tag))]

    def field_matches(self, key: str, values: Sequence[str]) -> set[int]:
        """Document ids holding ``key`` = one of ``values`` (the (key, value) index answers)."""
        with self._errors("reading declared fields"):
            return {r[0] for r in self._conn.execute(
                "SELECT DISTINCT doc_id FROM document_fields WHERE key = ?"
                " AND value IN (SELECT value FROM json_each(?))",
                (key, json.dumps(list(values), ensure_ascii=False)))}

    def field_values(self, doc_id: int) -> dict[str, tuple[str, ...]]:
        with self._errors("reading declared fields"):
            rows = self._conn.execute(
                "SELECT key, value FROM document_fields WHERE doc_id = ? ORDER BY key, value",
                (doc_id,)).fetchall()
        out: dict[str, list[str]] = {}
        for key, value in rows:
            out.setdefault(key, []).append(value)
        return {k: tuple(v) for k, v in out.items()}

    def delete_document(self, path: str) -> None:
        """Delete ``path`` and (by cascade) its chunks, FTS rows and embeddings; no-op if absent."""
        self._before_text_write()
        with self._write(f"deleting {path}", text=True) as conn:
            row = conn.execute("SELECT id FROM documents WHERE path = ?", (path,)).fetchone()
            names = set() if row is None else names_of(conn, row[0])
            gone = conn.execute("DELETE FROM documents WHERE path = ? RETURNING id",
                                (path,)).fetchone()
            mark_unsettled(conn, names)  # links to it point at nothing now, or at a namesake
        with self._lock:
            if gone is not None:
                self._fulltext_index().delete_document(gone[0])
            self._queued(1)

    # --- links (store/links.py) ---------------------------------------------------
    def links_pending(self) -> bool:
        with self._errors("reading index_meta"):
            return self._meta_values().get("links_pending") == "1"

    def write_document_links(self, links_by_path: dict[str, tuple[
            tuple[tuple[int, Link], ...], tuple[str, ...]]]) -> None:
        """Replace the links and aliases of these documents (no chunk is touched), one
        transaction; links to them and from them are resolved again."""
        if not links_by_path:
            return
        with self._write("writing links") as conn:
            keys: set[str] = set()
            ids = []
            for path, (links, aliases) in links_by_path.items():
                row = conn.execute("SELECT id FROM documents WHERE path = ?", (path,)).fetchone()
                if row is None:
                    continue
                keys |= names_of(conn, row[0]) ^ write_names(conn, row[0], path, aliases)
                write_links(conn, row[0], links)
                ids.append(row[0])
            relink(conn, (), ids)
            mark_unsettled(conn, keys)

    def _settle_links(self) -> None:
        """Re-resolve the links of every key a write marked (store/links.py, "Kept current")."""
        if self._closed:
            return
        with self._errors("reading links"):
            if not unsettled(self._conn):
                return
        with self._write("resolving links") as conn:
            settle(conn)

    def mark_links_read(self) -> None:
        """Every document's links are stored (the end of the run that read them)."""
        with self._errors("writing index_meta"), self._transaction() as conn:
            conn.execute("DELETE FROM index_meta WHERE key = 'links_pending'")

    _LINK_SELECT = (
        "SELECT s.path, c.heading, substr(c.content, 1, 1000), l.target, t.path, l.anchor,"
        " l.label, l.kind, l.embed, l.problem FROM links l"
        " JOIN documents s ON s.id = l.doc_id"
        " LEFT JOIN chunks c ON c.doc_id = l.doc_id AND c.chunk_index = l.chunk_index"
        " LEFT JOIN documents t ON t.id = l.target_id")

    def document_links(self, path: str, *, backlinks: bool = False) -> list[LinkRow] | None:
        """The links written in ``path`` (or, with ``backlinks``, the links that resolve to
        it), in document order (by linking document and position); None: not indexed."""
        with self._errors("reading links"), self.read_snapshot():
            row = self._conn.execute("SELECT id FROM documents WHERE path = ?",
                                     (path,)).fetchone()
            if row is None:
                return None
            where = ("WHERE l.target_id = ? ORDER BY s.path, l.ordinal" if backlinks
                     else "WHERE l.doc_id = ? ORDER BY l.ordinal")
            rows = self._conn.execute(f"{self._LINK_SELECT} {where}", (row[0],)).fetchall()
        return [_link_row(r) for r in rows]

    def backlink_counts(self, paths: Iterable[str]) -> dict[str, int]:
        """``{path: other documents linking to it}`` for these paths, those with none left
        out: one row per path, kept current by triggers (store/links.py), so the cost is
        that of ``paths`` whatever the number of backlinks."""
        wanted = json.dumps(sorted(set(paths)), ensure_ascii=False)
        with self._errors("reading links"):
            return dict(self._conn.execute(
                "SELECT d.path, b.sources FROM documents d"
                " JOIN backlink_sources b ON b.doc_id = d.id"
                " WHERE d.path IN (SELECT value FROM json_each(?))", (wanted,)).fetchall())

    def link_edges(self, doc_ids: Iterable[int]) -> list[tuple[int, int, int]]:
        """``(source doc, target doc, links)`` of every resolved link from or to these
        documents, self-links left out."""
        wanted = json.dumps(sorted({int(d) for d in doc_ids}))
        with self._errors("reading links"):
            return [tuple(r) for r in self._conn.execute(
                "SELECT doc_id, target_id, count(*) FROM links"
                " WHERE doc_id IN (SELECT value FROM json_each(?1)) AND target_id IS NOT NULL"
                " AND target_id != doc_id GROUP BY doc_id, target_id"
                " UNION SELECT doc_id, target_id, count(*) FROM links"
                " WHERE target_id IN (SELECT value FROM json_each(?1)) AND target_id != doc_id"
                " GROUP BY doc_id, target_id", (wanted,)).fetchall()]

    def documents_by_id(self, doc_ids: Iterable[int]) -> dict[int, DocumentRow]:
        wanted = json.dumps(sorted({int(d) for d in doc_ids}))
        return {row.id: row for row in self._documents(
            "WHERE d.id IN (SELECT value FROM json_each(?))", (wanted,))}

    def unresolved_links(self) -> list[LinkRow]:
        """Every link that points at no document, by linking document (``doctor``)."""
        with self._errors("reading links"), self.read_snapshot():
            rows = self._conn.execute(
                f"{self._LINK_SELECT} WHERE l.target_id IS NULL ORDER BY s.path, l.ordinal"
            ).fetchall()
        return [_link_row(r) for r in rows]

    def clear(self) -> None:
        """Remove every document; index_meta (model, dim, mode) is kept for the caller to reset."""
        self._before_text_write()
        with self._write("clearing the index", text=True) as conn:
            conn.execute("DELETE FROM documents")  # cascades to chunks and embeddings
        with self._lock:
            self._fulltext_index().delete_all()
            self._queued(1)

    # --- reads -------------------------------------------------------------------
    def document_hashes(self) -> dict[str, str]:
        with self._errors("reading documents"):
            return dict(self._conn.execute("SELECT path, sha256 FROM documents").fetchall())

    def get_document(self, path: str) -> DocumentRow | None:
        rows = self._documents("WHERE d.path = ?", (path,))
        return rows[0] if rows else None

    def list_documents(self) -> list[DocumentRow]:
        return self._documents("ORDER BY d.path", ())

    def _documents(self, where: str, params: tuple[Any, ...]) -> list[DocumentRow]:
        sql = (
            f"SELECT {_DOC_COLUMNS}, (SELECT count(*) FROM chunks c WHERE c.doc_id = d.id)"
            f" FROM documents d {where}"
        )
        with self._errors("reading documents"):
            rows = self._conn.execute(sql, params).fetchall()
        return [_document_row(r) for r in rows]

    def document_chunks(self, doc_id: int) -> list[ChunkRow]:
        with self._errors("reading chunks"):
            rows = self._conn.execute(
                f"{_CHUNK_SELECT} WHERE c.doc_id = ? ORDER BY c.chunk_index", (doc_id,)
            ).fetchall()
        return [_chunk_row(r) for r in rows]

    def get_chunks(self, ids: Iterable[int]) -> dict[int, ChunkRow]:
        wanted = json.dumps(sorted({int(i) for i in ids}))
        with self._errors("reading chunks"):
            rows = self._conn.execute(
                f"{_CHUNK_SELECT} WHERE c.id IN (SELECT value FROM json_each(?))", (wanted,)
            ).fetchall()
        return {r[0]: _chunk_row(r) for r in rows}

    def all_chunks_meta(self) -> list[ChunkRow]:
        """Every chunk (``content=""``), ordered by id; document fields parsed once per document."""
        with self._errors("reading chunk metadata"):
            docs = {
                r[0]: (r[1], r[2], r[3], r[4], r[5], _tags(r[6]), bool(r[7]))
                for r in self._conn.execute(
                    "SELECT id, path, title, category, topic, date, tags, binary_format"
                    " FROM documents"
                )
            }
            rows = self._conn.execute(
                "SELECT id, doc_id, chunk_index, heading, level, context, token_count, quality"
                " FROM chunks ORDER BY id"
            ).fetchall()
        out = []
        for cid, doc_id, index, heading, level, context, tokens, quality in rows:
            path, title, category, topic, date, tags, binary = docs[doc_id]
            out.append(
                ChunkRow(
                    id=cid, doc_id=doc_id, chunk_index=index, heading=heading, level=level,
                    context=context, content="", token_count=tokens, quality=quality, path=path,
                    title=title, category=category, topic=topic, date=date, tags=tags,
                    binary_format=binary,
                )
            )
        return out

    def chunk_columns(self) -> ChunkColumns:
        """Chunk ids, document slots, qualities and symbol kinds streamed into numpy arrays
        (no row objects)."""
        with self._errors("reading chunk metadata"):
            documents: list[DocumentMeta] = []
            slot_of: dict[int, int] = {}
            # Categories, topics, dates, tag lists and languages repeat across documents:
            # held once each (at 125k documents, 30 MB less resident).
            shared: dict[object, object] = {}

            def one(value: Any) -> Any:
                return shared.setdefault(value, value)

            tag_lists: dict[str | None, tuple[str, ...]] = {}
            for r in self._conn.execute(
                "SELECT id, path, title, category, topic, date, tags, binary_format, language,"
                " cjk FROM documents ORDER BY id"
            ):
                tags = tag_lists.get(r[6])
                if tags is None:
                    tags = tag_lists[r[6]] = tuple(one(t) for t in _tags(r[6]))
                slot_of[r[0]] = len(documents)
                documents.append(DocumentMeta(r[0], r[1], r[2], one(r[3]), one(r[4]), one(r[5]),
                                              tags, bool(r[7]), one(r[8]),
                                              None if r[9] is None else bool(r[9])))
            kinds = tuple(sorted(r[0] for r in self._conn.execute(
                "SELECT DISTINCT symbol_kind FROM chunks WHERE symbol_kind IS NOT NULL")))
            kind_sql = ("CASE symbol_kind " + " ".join(f"WHEN ? THEN {i}" for i in range(len(kinds)))
                        + " ELSE -1 END") if kinds else "-1"
            count = self._conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            ids = np.empty(count, dtype=np.int64)
            doc_ids = np.empty(count, dtype=np.int64)
            quality = np.empty(count, dtype=np.float64)
            kind_code = np.empty(count, dtype=np.int16)
            cursor = self._conn.execute(
                f"SELECT id, doc_id, quality, {kind_sql} FROM chunks ORDER BY id", kinds)
            filled = 0
            while filled < count:
                block = cursor.fetchmany(65536)
                if not block:
                    break
                arr = np.array(block, dtype=np.float64)
                end = filled + len(block)
                ids[filled:end] = arr[:, 0]
                doc_ids[filled:end] = arr[:, 1]
                quality[filled:end] = arr[:, 2]
                kind_code[filled:end] = arr[:, 3]
                filled = end
        ids, doc_ids, quality = ids[:filled], doc_ids[:filled], quality[:filled]
        kind_code = kind_code[:filled]
        known = np.array(sorted(slot_of), dtype=np.int64)
        slots = np.array([slot_of[int(d)] for d in known], dtype=np.int32)
        doc_slot = slots[np.searchsorted(known, doc_ids)] if len(known) else np.zeros(0, np.int32)
        return ChunkColumns(ids=ids, doc_slot=doc_slot, quality=quality, documents=tuple(documents),
                            kind_code=kind_code, kinds=kinds)

    def vector_count(self) -> int:
        with self._errors("reading embeddings"):
            return int(self._conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])

    def iter_vectors(self, block_rows: int = 65536) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Blocks of ``(ids, float32 vectors)`` by chunk id, read with one cursor."""
        with self._errors("reading embeddings"):
            dim = self.meta().dim
            cursor = self._conn.execute("SELECT chunk_id, vector FROM embeddings ORDER BY chunk_id")
            while True:
                block = cursor.fetchmany(block_rows)
                if not block:
                    return
                width = dim or len(block[0][1]) // 4
                if any(len(blob) != width * 4 for _, blob in block):
                    raise IndexMismatchError(
                        f"index {self._path}: embeddings do not all have the recorded dimension "
                        f"{dim}: {_FIX_FORCE}"
                    )
                ids = np.fromiter((cid for cid, _ in block), dtype=np.int64, count=len(block))
                matrix = np.frombuffer(b"".join(blob for _, blob in block), dtype=np.float32)
                yield ids, matrix.reshape(len(block), width)

    def load_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, matrix)`` ordered by chunk id, filled row by row into one array.

        Streaming from the cursor into a preallocated matrix keeps peak memory
        near the matrix itself (a fetchall + join held every blob twice).
        """
        with self._errors("reading embeddings"):
            dim = self.meta().dim
            count = self._conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
            ids = np.empty(count, dtype=np.int64)
            width = dim
            matrix = np.empty((count, width or 0), dtype=np.float32)
            cursor = self._conn.execute("SELECT chunk_id, vector FROM embeddings ORDER BY chunk_id")
            filled = 0
            for chunk_id, blob in cursor:
                if width is None:
                    width = len(blob) // 4
                    matrix = np.empty((count, width), dtype=np.float32)
                if len(blob) != width * 4 or filled >= count:
                    raise IndexMismatchError(
                        f"index {self._path}: embeddings do not all have the recorded dimension "
                        f"{dim}: {_FIX_FORCE}"
                    )
                ids[filled] = chunk_id
                matrix[filled] = np.frombuffer(blob, dtype=np.float32)
                filled += 1
        return ids[:filled], matrix[:filled]

    # --- the full-text index ---------------------------------------------------
    def _fulltext_index(self) -> FullTextIndex:
        if self._fulltext is None:
            self._fulltext = open_fulltext(self._path)
        return self._fulltext

    def _db_stamp(self) -> Stamp:
        values = self._meta_values()
        return Stamp(values.get("fulltext_id") or "", int(values.get("text_generation") or 0))

    def _loaded_fulltext(self) -> tuple[FullTextIndex, bool]:
        """The full-text index and whether it reflects the database.

        It is reloaded only when the commit it holds does not carry the
        database's stamp (another process committed since, or it is stale):
        a search on an unchanged index costs one small SELECT, no reload.
        """
        fulltext = self._fulltext_index()
        with self._errors("reading the text generation"):
            stamp = self._db_stamp()
        if fulltext.problem() is not None:  # damaged: never current, rebuilt by the next writer
            self._fulltext_seen = None
            return fulltext, False
        if self._fulltext_seen != stamp:
            try:
                fulltext.refresh()
            except FullTextDamaged:
                self._fulltext_seen = None
                return fulltext, False
            self._fulltext_seen = fulltext.stamp()
        return fulltext, self._fulltext_seen == stamp

    def fulltext_problem(self) -> str | None:
        """Why the full-text index cannot answer now (None: it can); a missing one is not
        created here (a reader such as ``doctor`` only looks)."""
        with self._lock:
            if self._fulltext is None:
                path = fulltext_path(self._path)
                check_directory(path, "the full-text index folder")
                if not path.is_dir():
                    return "the folder is missing"
            return self._fulltext_index().problem()

    def _without_fulltext(self, exc: FullTextDamaged) -> None:
        """Say once per cause that answers come from the vector leg alone until the rebuild."""
        if self._fulltext_said != str(exc):
            self._fulltext_said = str(exc)
            log.warning("%s; until then searches answer from the vector leg alone", exc)

    def _before_text_write(self) -> None:
        """Before this process's first write since its last flush: rebuild a stale index.

        Queuing changes onto a stale full-text index and then stamping it
        current would hide the staleness for good.
        """
        if not self._fulltext_writing:
            self.ensure_fulltext()
            self._fulltext_writing = True
            self._fulltext_published = False

    def _queued(self, documents: int) -> None:
        """Count queued documents; publish the batch when it is the writer's first, big or
        old enough.

        The first write is published at once: on a cold build the first document is
        findable by full text right after it is read, not a batch later, and the
        batches that follow keep every document at most
        :data:`FULLTEXT_BATCH_SECONDS` behind its SQLite commit (a commit costs
        tens of milliseconds, so one per document would slow the rows pass).
        """
        self._fulltext_queued += documents
        if (not self._fulltext_published
                or self._fulltext_queued >= FULLTEXT_BATCH_DOCUMENTS
                or time.monotonic() - self._fulltext_committed_at >= FULLTEXT_BATCH_SECONDS):
            self._commit_fulltext()

    def publish_due(self) -> None:
        with self._lock:
            if (self._fulltext_queued and time.monotonic() - self._fulltext_committed_at
                    >= FULLTEXT_BATCH_SECONDS):
                self._commit_fulltext()

    def _commit_fulltext(self) -> None:
        with self._errors("reading the text generation"):
            stamp = self._db_stamp()
        self._fulltext_index().commit(stamp)
        self._fulltext_seen = stamp
        self._fulltext_queued = 0
        self._fulltext_committed_at = time.monotonic()
        self._fulltext_published = True

    def flush(self) -> None:
        """Resolve again the links the writes since the last flush may have changed (in one
        transaction), publish queued full-text changes and release the full-text writer."""
        with self._lock:
            self._settle_links()
            self._flush_fulltext()

    def _flush_fulltext(self) -> None:
        with self._lock:
            if self._fulltext is None:
                return
            if self._fulltext_queued:
                self._commit_fulltext()
            self._fulltext.release_writer()
            self._fulltext_writing = False

    def fulltext_current(self) -> bool:
        """Whether the full-text index reflects the database (or this process is mid-batch)."""
        with self._lock:
            if self._fulltext_queued:
                return True  # this process's own batch: published within a second
            return self._loaded_fulltext()[1]

    def ensure_fulltext(self, verify: bool = False) -> bool:
        """Rebuild the full-text index from the chunk rows when it is stale or damaged;
        True if rebuilt. ``verify``: read every entry first (an index run's start), so a
        damage no stamp shows is found and repaired too."""
        with self._lock:
            if verify and not self._fulltext_queued:
                with suppress(FullTextDamaged):  # recorded by the index: not current below
                    self._fulltext_index().verify()
            if self.fulltext_current():
                return False
            fulltext = self._fulltext_index()
            damage = fulltext.problem() or fulltext.recreated
            fulltext.recreated = None
            state = (f"damaged ({damage})" if damage is not None
                     else "missing" if fulltext.stamp() is None else "stale")
            log.warning("the full-text index %s is %s: rebuilding it from the database",
                        fulltext.path, state)
            self.rebuild_fulltext()
            return True

    def rebuild_fulltext(self) -> None:
        """Replace the full-text index's content with every chunk row, in one commit.

        A damaged index (one found damaged before, or failing during the refill)
        is thrown away first and refilled into an empty folder.
        """
        with self._lock:
            fulltext = self._fulltext_index()
            if fulltext.problem() is not None:
                fulltext.reset()
            try:
                self._refill_fulltext(fulltext)
            except FullTextDamaged as exc:
                log.warning("%s: starting it afresh", exc)
                fulltext.reset()
                self._refill_fulltext(fulltext)
            self._fulltext_said = None

    def _refill_fulltext(self, fulltext: FullTextIndex) -> None:
        with self._lock:
            fulltext.delete_all()
            with self._errors("reading chunks for the full-text index"), self.read_snapshot():
                stamp = self._db_stamp()
                cursor = self._conn.execute(
                    "SELECT id, doc_id, heading, context, content FROM chunks ORDER BY id")
                while block := cursor.fetchmany(4096):
                    fulltext.add([TextRow(*r) for r in block])
            fulltext.commit(stamp)
            self._fulltext_seen = stamp
            self._fulltext_queued = 0
            self._fulltext_committed_at = time.monotonic()
            if not self._fulltext_writing:
                fulltext.release_writer()

    def fulltext_search(self, phrases: Sequence[str], limit: int,
                        exclude: Sequence[str] = ()) -> list[tuple[int, float]]:
        """``[(chunk_id, score)]`` best first; the score is BM25 negated (lower is better)."""
        with self._lock:
            try:
                hits = self._loaded_fulltext()[0].search(phrases, limit, _searchable(exclude))
            except FullTextDamaged as exc:
                self._without_fulltext(exc)
                return []
        return [(chunk_id, -score) for chunk_id, score in hits]  # same order, lower is better

    def fulltext_matching(self, terms: Sequence[str], among: Sequence[int] | None = None
                          ) -> set[int]:
        """Chunks whose text holds any term, per the full-text index's matching rules."""
        wanted = _searchable(terms)
        if not wanted:
            return set()
        with self._lock:
            return self._loaded_fulltext()[0].matching(wanted, among)

    def fulltext_most_matching(self, terms: Sequence[str]) -> int:
        wanted = _searchable(terms)
        if not wanted:
            return 0
        with self._lock:
            return self._loaded_fulltext()[0].most_matching(wanted)

    def pending_chunks(self, min_chunks: int, after_doc: int | None = None) -> list[PendingChunk]:
        """Whole documents' pending chunks, lowest document id first, ≥ ``min_chunks`` if any."""
        sql = (
            "SELECT c.id, c.doc_id, c.context, c.content, c.token_count FROM chunks c"
            " WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.id)"
        )
        after = -1 if after_doc is None else int(after_doc)
        with self._errors("reading pending chunks"):
            rows = self._conn.execute(
                sql + " AND c.doc_id > ? ORDER BY c.doc_id, c.chunk_index LIMIT ?",
                (after, max(1, int(min_chunks))),
            ).fetchall()
            if rows:  # complete the last document
                seen = {r[0] for r in rows}
                rest = self._conn.execute(
                    sql + " AND c.doc_id = ? ORDER BY c.chunk_index", (rows[-1][1],)
                ).fetchall()
                rows += [r for r in rest if r[0] not in seen]
        return [PendingChunk(*r) for r in rows]

    def pending_token_estimate(self) -> tuple[int, int]:
        """Documents with pending chunks, and their tokens (:func:`groove.models.passage_tokens`).

        Once per index run, so the per-row Python call is affordable (about a
        second per million pending chunks) and the rule lives in one place.
        """
        with self._errors("reading pending chunks"):
            docs, tokens = self._conn.execute(
                "SELECT count(DISTINCT c.doc_id),"
                " coalesce(sum(groove_passage_tokens(c.token_count, c.content, c.context)), 0)"
                " FROM chunks c"
                " WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.id)"
            ).fetchone()
        return int(docs), int(tokens)

    def document_mtimes(self) -> dict[str, float]:
        with self._errors("reading documents"):
            return dict(self._conn.execute("SELECT path, mtime FROM documents").fetchall())

    def embedding_counts(self) -> EmbeddingCounts:
        """Documents and chunks in the index, and how many the vector leg covers.

        Read from the counters the write transactions keep (one small read,
        whatever the size of the index). A document counts as embedded when
        none of its chunks is pending (a document with no chunks trivially is).
        """
        counts = self._counters()
        docs = counts["count_documents"]
        return EmbeddingCounts(documents=docs,
                               documents_embedded=docs - counts["count_documents_pending"],
                               chunks=counts["count_chunks"],
                               chunks_embedded=counts["count_chunks_embedded"])

    def stats(self) -> StoreStats:
        counts = self._counters()
        return StoreStats(documents=counts["count_documents"], chunks=counts["count_chunks"],
                          tags_invalid=counts["count_tags_invalid"],
                          last_indexed=self.meta().last_indexed)

    def _counters(self) -> dict[str, int]:
        with self._errors("reading the index counters"):
            rows = self._meta_values()
        return {key: int(rows.get(key) or 0) for key in COUNTERS}

    def skipped_files(self) -> dict[str, float]:
        with self._errors("reading skipped files"):
            return dict(self._conn.execute("SELECT path, mtime FROM skipped_files").fetchall())

    def skip_reasons(self) -> dict[str, str]:
        with self._errors("reading skipped files"):
            return dict(self._conn.execute("SELECT path, reason FROM skipped_files").fetchall())

    def record_skipped(self, skipped: dict[str, tuple[float, str]],
                       scope: Iterable[str] | None) -> None:
        """Forget the skips recorded under ``scope`` (None: all), then record ``skipped``.

        Not a document change: ``generation`` stays (no search cache depends on it).
        """
        with self._errors("recording skipped files"), self._transaction() as conn:
            if scope is None:
                conn.execute("DELETE FROM skipped_files")
            else:
                conn.executemany("DELETE FROM skipped_files WHERE path = ?",
                                 [(p,) for p in scope])
            conn.executemany(
                "INSERT OR REPLACE INTO skipped_files(path, mtime, reason) VALUES (?, ?, ?)",
                [(p, float(m), r) for p, (m, r) in skipped.items()])

    def refresh_mtimes(self, mtimes: dict[str, float]) -> None:
        """Record new mtimes for documents whose content is unchanged (no generation bump)."""
        if not mtimes:
            return
        with self._errors("recording file times"), self._transaction() as conn:
            conn.executemany("UPDATE documents SET mtime = ? WHERE path = ?",
                             [(float(m), p) for p, m in mtimes.items()])

    # --- maintenance ----------------------------------------------------------
    def integrity_findings(self) -> list[str]:
        """Problems ``groove doctor`` reports; an empty list means the index is consistent.

        Checks: SQLite's own quick_check, dangling foreign keys, every chunk of a finished build has one
        embedding of the recorded dimension, and nothing is orphaned (chunks of
        an unfinished build waiting for their embedding are not a fault: see
        ``embedding_counts``). Each finding says what is wrong; the remedy
        (rebuilding the index) is the caller's to word.
        """
        findings: list[str] = []
        with self._errors("integrity check"):
            conn = self._conn
            quick = [r[0] for r in conn.execute("PRAGMA quick_check")]
            if quick != ["ok"]:
                findings.append(f"SQLite quick_check: {'; '.join(quick[:5])}")
            dim = self.meta().dim
            checks = [
                ("chunk(s) without an embedding",
                 "SELECT count(*) FROM chunks WHERE id NOT IN (SELECT chunk_id FROM embeddings)"
                 if self._build_finished() else "SELECT 0"),
                ("embedding(s) without a chunk",
                 "SELECT count(*) FROM embeddings WHERE chunk_id NOT IN (SELECT id FROM chunks)"),
                ("chunk(s) whose document is missing",
                 "SELECT count(*) FROM chunks WHERE doc_id NOT IN (SELECT id FROM documents)"),
            ]
            for label, sql in checks:
                n = conn.execute(sql).fetchone()[0]
                if n:
                    findings.append(f"{n} {label}")
            if dim is None:
                if conn.execute("SELECT 1 FROM embeddings LIMIT 1").fetchone():
                    findings.append("embeddings exist but index_meta records no dimension")
            else:
                n = conn.execute(
                    "SELECT count(*) FROM embeddings WHERE length(vector) != ?", (dim * 4,)
                ).fetchone()[0]
                if n:
                    findings.append(
                        f"{n} embedding(s) not of the recorded dimension {dim}"
                    )
            kept = self._counters()
            for key, sql in _COUNTER_TRUTH.items():
                true = int(conn.execute(sql).fetchone()[0])
                if kept[key] != true:
                    findings.append(f"the index counter {key} says {kept[key]} but the rows "
                                    f"say {true}")
        return findings

    def fulltext_findings(self) -> list[str]:
        """A missing, stale or damaged full-text index, or one holding another number of
        chunks (every chunk id is read once: a damaged fast field is found here)."""
        if self._fulltext is None and not fulltext_path(self._path).is_dir():
            check_directory(fulltext_path(self._path), "the full-text index folder")
            return [f"the full-text index {fulltext_path(self._path)} is missing"]
        if self._fulltext_queued:  # this process's own batch is not a finding: publish it
            self._commit_fulltext()
        fulltext = self._fulltext_index()
        try:
            fulltext.refresh()
            found = fulltext.stamp()
            stamp = self._db_stamp()
            if found is None:
                return [f"the full-text index {fulltext.path} is missing or empty"]
            if found != stamp:
                what = ("was built from another database" if found.index_id != stamp.index_id
                        else f"reflects text generation {found.generation}, the database is at "
                             f"{stamp.generation}")
                return [f"the full-text index {fulltext.path} is stale (it {what})"]
            with self._errors("counting chunks"):
                chunks = self._conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            held = fulltext.count()
            if held != chunks:
                return [f"the full-text index {fulltext.path} holds {held} chunk(s), the "
                        f"database {chunks}"]
            fulltext.verify()
        except FullTextDamaged as exc:
            return [str(exc)]
        return []

    def _build_finished(self) -> bool:
        return build_finished(self.meta())

    def close(self) -> None:
        with self._lock:
            try:
                try:
                    self._settle_links()
                except GrooveError as exc:  # a damaged file: closing must still close
                    log.warning("links left to resolve at the next flush: %s", exc)
                self._flush_fulltext()
                if self._fulltext is not None:
                    self._fulltext.close()
            finally:
                self._conn.close()
                self._closed = True


# --- row helpers -------------------------------------------------------------
def _doc_values(doc: DocumentRecord) -> tuple[Any, ...]:
    """Every documents column after ``path``, in table order."""
    return (
        doc.sha256,
        doc.title,
        doc.category,
        doc.topic,
        doc.date,
        json.dumps(list(doc.tags), ensure_ascii=False),
        int(bool(doc.tags_invalid)),
        json.dumps(doc.metadata, ensure_ascii=False, default=str),
        int(doc.size),
        float(doc.mtime),
        int(bool(doc.binary_format)),
        time.time(),
        doc.language,
    )


def _document_row(r: tuple[Any, ...]) -> DocumentRow:
    return DocumentRow(
        id=r[0], path=r[1], sha256=r[2], title=r[3], category=r[4], topic=r[5], date=r[6],
        tags=_tags(r[7]), tags_invalid=bool(r[8]), metadata=json.loads(r[9] or "{}"),
        size=r[10], mtime=r[11], binary_format=bool(r[12]), indexed_at=r[13], chunking=r[14],
        language=r[15], pending=r[16], chunk_count=r[17],
    )


def _chunk_row(r: tuple[Any, ...]) -> ChunkRow:
    (chunk_id, doc_id, index, heading, level, context, content, token_count, quality, path, title,
     category, topic, date, tags, binary_format, symbol_kind, scope, line_start, line_end,
     language) = r[:21]
    return ChunkRow(id=chunk_id, doc_id=doc_id, chunk_index=index, heading=heading, level=level,
                    context=context, content=content, token_count=token_count, quality=quality,
                    path=path, title=title, category=category, topic=topic, date=date,
                    tags=_tags(tags), binary_format=bool(binary_format), symbol_kind=symbol_kind,
                    scope=scope, line_start=line_start, line_end=line_end, language=language)


def _link_row(r: tuple[Any, ...]) -> LinkRow:
    source, heading, content, target, target_path, anchor, label, kind, embed, problem = r
    first = next((line.strip() for line in (content or "").split("\n") if line.strip()), "")
    return LinkRow(source, heading, first, target, target_path, anchor, label, kind,
                   bool(embed), None if target_path is not None else problem)


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _tags(raw: str | None) -> tuple[str, ...]:
    return tuple(json.loads(raw)) if raw else ()


def _opt_policies(value: str | None) -> dict[str, str] | None:
    return None if value is None else {str(k): str(v) for k, v in json.loads(value).items()}


def _opt_names(value: str | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(json.loads(value))


def _opt_int(value: str | None) -> int | None:
    return None if value is None else int(value)


def _opt_float(value: str | None) -> float | None:
    return None if value is None else float(value)


def _split_script(script: str) -> list[str]:
    """Split the schema script into statements (triggers contain ``;`` inside BEGIN … END)."""
    statements, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            statements.append(buf.strip())
            buf = ""
    return statements


def _searchable(terms: Sequence[str]) -> list[str]:
    """Exclusion terms worth asking the full-text index about: distinct, not blank."""
    return [t for t in dict.fromkeys(terms) if t.strip()]
