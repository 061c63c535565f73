"""The schema: tables, counter triggers, forward migrations, and opening a file.

``_SCHEMA`` + ``_FIELDS_TABLE`` + ``LINK_TABLES`` (store/links.py) make a new file;
an older file is brought forward by :data:`MIGRATIONS`, one transaction per step.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Self

from groove._logging import note
from groove.errors import GrooveError, IndexMismatchError, NoIndexError
from groove.models import CHUNK_POLICY, LEGACY_CHUNK_POLICY, LINK_RULE, passage_tokens
from groove.store.base import SCHEMA_VERSION
from groove.store.files import check_regular
from groove.store.links import LINK_TABLES
from groove.store.recovery import SIDECARS
from groove.store.sqlite._core import (
    _FIX_FORCE,
    StoreCore,
    _sqlite_error,
    corrupt_index_error,
    log,
)

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
    """Schema 7: documents' links and the names they answer to (store/links.py). No link
    is read under any rule yet (no ``links_rule``), so the next index run reads every
    document's links from its file without touching a chunk or a vector."""
    for statement in _split_script(LINK_TABLES):
        conn.execute(statement)
    conn.execute("DELETE FROM index_meta WHERE key = 'links_rule'")


MIGRATIONS[7] = _add_links


def _fulltext_meta() -> list[tuple[str, str]]:
    """A fresh full-text identity: a random id and text generation 0."""
    return [("fulltext_id", uuid.uuid4().hex), ("text_generation", "0")]


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


def _split_script(script: str) -> list[str]:
    """Split the schema script into statements (triggers contain ``;`` inside BEGIN … END)."""
    statements, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            statements.append(buf.strip())
            buf = ""
    return statements


class Opening(StoreCore):
    """Opening a file: refusing what is not a groove index, creating, migrating."""

    @classmethod
    def open(cls, db_path: Path, *, create: bool) -> Self:
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
                    ("links_rule", LINK_RULE),
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

