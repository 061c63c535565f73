"""Writes of documents, chunks, vectors, declared fields and skipped files.

Each document write is one ``_write`` transaction (``_core.py``); the ones that
change chunk text then queue the document to the full-text index (``_fulltext.py``).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from groove.errors import IndexMismatchError, InvalidArgument, NotFound
from groove.fulltext import TextRow
from groove.models import Chunk, DocumentRecord
from groove.store.links import mark_unsettled, names_of, relink, write_links, write_names
from groove.store.sqlite._core import _FIX_FORCE, StoreCore


class Writes(StoreCore):
    """Documents in, renamed, deleted and cleared; vectors for pending chunks."""

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
            conn.executemany(  # an upsert, not OR REPLACE: see _schema._COUNTER_SCHEMA
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
        ``context`` too, see the package docstring). A document already stored
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


    def clear(self) -> None:
        """Remove every document; index_meta (model, dim, mode) is kept for the caller to reset."""
        self._before_text_write()
        with self._write("clearing the index", text=True) as conn:
            conn.execute("DELETE FROM documents")  # cascades to chunks and embeddings
        with self._lock:
            self._fulltext_index().delete_all()
            self._queued(1)


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


