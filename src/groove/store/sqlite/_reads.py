"""Reads of documents, chunks, chunk columns, vectors and counts, and the consistency
check ``groove doctor`` runs on them."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from groove.errors import IndexMismatchError
from groove.models import ChunkColumns, ChunkRow, DocumentMeta, DocumentRow
from groove.store.base import EmbeddingCounts, PendingChunk, StoreStats
from groove.store.sqlite._core import _FIX_FORCE, StoreCore
from groove.store.sqlite._schema import _COUNTER_TRUTH

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


class Reads(StoreCore):
    """Documents, chunks and vectors out; the counters in words."""

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
                documents.append(DocumentMeta(
                    id=r[0], path=r[1], title=r[2], category=one(r[3]), topic=one(r[4]),
                    date=one(r[5]), tags=tags, binary_format=bool(r[7]), language=one(r[8]),
                    cjk=None if r[9] is None else bool(r[9])))
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

    def document_path(self, doc_id: int) -> str | None:
        with self._errors("reading documents"):
            row = self._conn.execute("SELECT path FROM documents WHERE id = ?",
                                     (doc_id,)).fetchone()
        return None if row is None else str(row[0])

    def documents_by_id(self, doc_ids: Iterable[int]) -> dict[int, DocumentRow]:
        wanted = json.dumps(sorted({int(d) for d in doc_ids}))
        return {row.id: row for row in self._documents(
            "WHERE d.id IN (SELECT value FROM json_each(?))", (wanted,))}

    def documents_with_definitions(self, doc_ids: Iterable[int]) -> set[int]:
        """Read through the (doc_id, chunk_index) index: each asked document's own chunks."""
        wanted = json.dumps(sorted({int(d) for d in doc_ids}))
        with self._errors("reading chunks"):
            return {int(r[0]) for r in self._conn.execute(
                "SELECT DISTINCT doc_id FROM chunks WHERE doc_id IN (SELECT value FROM json_each(?))"
                " AND symbol_kind IS NOT NULL", (wanted,))}

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

    def skipped_files(self) -> dict[str, float]:
        with self._errors("reading skipped files"):
            return dict(self._conn.execute("SELECT path, mtime FROM skipped_files").fetchall())

    def skip_reasons(self) -> dict[str, str]:
        with self._errors("reading skipped files"):
            return dict(self._conn.execute("SELECT path, reason FROM skipped_files").fetchall())

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


def _tags(raw: str | None) -> tuple[str, ...]:
    return tuple(json.loads(raw)) if raw else ()


