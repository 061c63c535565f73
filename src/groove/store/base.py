"""The storage interface: what the indexer writes and what search reads.

One implementation today (:mod:`groove.store.sqlite`). The contract that
matters most: :meth:`Store.write_document` replaces a document, its chunks
and embeddings in ONE transaction, so a crash at any moment leaves either the
old or the new version of that document. The full-text index is derived from
those rows: it follows per batch (:meth:`Store.flush`) and is rebuilt when a
crash left it behind (:mod:`groove.fulltext`).

A document may be written *without* vectors (``vectors=None``): its rows
exist at once (searchable by the full-text leg after the batch's commit) and its chunks are "pending" until
:meth:`Store.write_vectors` fills them in. That is how a build becomes
searchable before the model has embedded anything (docs/index-lifecycle.md).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TypedDict, Unpack

import numpy as np

from groove.models import (
    Chunk,
    ChunkColumns,
    ChunkRow,
    DocumentMeta,
    DocumentRecord,
    DocumentRow,
    Link,
    LinkRow,
)

SCHEMA_VERSION = 7


@dataclass(frozen=True)
class IndexMeta:
    """What ``index_meta`` records about how the index was built."""

    schema_version: int
    model_id: str | None
    dim: int | None
    context_mode: str  # "static" | "off"
    last_indexed: float | None
    #: "building" while a run has not finished its embedding pass, "complete"
    #: after, "text only" after a run that wrote the rows and embedded nothing by
    #: design; None in files written before groove recorded it.
    build_state: str | None = None
    #: When any document, chunk or vector last changed (epoch seconds).
    changed_at: float | None = None
    model_url: str | None = None  # where a remote model was served (docs/scaling.md)
    #: Which chunking policy built the documents (models.CHUNK_POLICY or "legacy").
    chunk_policy: str | None = None
    #: The splitting rule of each parser that built the documents ({parser id: policy}).
    parser_policies: dict[str, str] | None = None
    #: The declared frontmatter keys the last completed run stored, sorted, as a
    #: JSON list; None when no run has recorded a set yet (docs/search.md 'Fields').
    declared_fields: tuple[str, ...] | None = None


BUILDING = "building"
COMPLETE = "complete"
#: The rows pass ran to its end and embedding was left for later on purpose (the
#: one-shot ``groove search`` on a new folder): searchable by full text, not cut short.
TEXT_ONLY = "text only"


def last_run(meta: IndexMeta, *, running: bool) -> str | None:
    """How the last index run ended: "running" (a writer holds the index now),
    "complete", "text only" (:data:`TEXT_ONLY`), "interrupted" (stopped before its
    end: Ctrl-C, a crash, a killed process), or None when no run recorded it."""
    if running:
        return "running"
    if build_finished(meta):
        return COMPLETE
    if meta.build_state == TEXT_ONLY:
        return TEXT_ONLY
    return "interrupted" if meta.build_state == BUILDING else None


def build_finished(meta: IndexMeta) -> bool:
    """Whether the last build ran to its end.

    Files from before groove recorded ``build_state`` count as finished when
    they record ``last_indexed`` (which those versions wrote only at the end).
    """
    if meta.build_state is not None:
        return meta.build_state == COMPLETE
    return meta.last_indexed is not None


@dataclass(frozen=True)
class PendingChunk:
    """A stored chunk that has no embedding yet."""

    chunk_id: int
    doc_id: int
    context: str
    content: str
    token_count: int | None


@dataclass(frozen=True)
class EmbeddingCounts:
    """How much of the index the vector leg can see."""

    documents: int
    documents_embedded: int
    chunks: int
    chunks_embedded: int


@dataclass(frozen=True)
class StoreStats:
    documents: int
    chunks: int
    tags_invalid: int
    last_indexed: float | None


class MetaUpdate(TypedDict, total=False):
    """What :meth:`Store.set_meta` may record; a key left out (or None) is left alone."""

    model_id: str | None
    dim: int | None
    context_mode: str | None
    last_indexed: float | None
    build_state: str | None
    #: The embedding service's URL; ``""`` records a local model.
    model_url: str | None
    chunk_policy: str | None
    declared_fields: Sequence[str] | None
    parser_policies: dict[str, str] | None


class Store(ABC):
    """A persistent index of documents, chunks, full-text rows and embeddings."""

    # --- metadata -----------------------------------------------------------
    @abstractmethod
    def meta(self) -> IndexMeta: ...

    @abstractmethod
    def set_meta(self, **fields: Unpack[MetaUpdate]) -> None: ...

    @abstractmethod
    def generation(self) -> int:
        """A number that changes whenever any document is written, renamed or deleted.

        Readers compare it to decide when to refresh in-memory caches (the
        vector matrix, chunk metadata). Must see commits from other processes.
        """

    # --- writes (each one transaction) ---------------------------------------
    @abstractmethod
    def write_document(
        self, doc: DocumentRecord, chunks: Sequence[Chunk], vectors: np.ndarray | None
    ) -> None:
        """Insert or replace ``doc`` (by path) with exactly these chunks and vectors.

        ``vectors=None`` stores the chunks without embeddings (pending).
        """

    @abstractmethod
    def write_vectors(self, vectors: dict[int, np.ndarray],
                      token_counts: dict[int, int] | None = None) -> int:
        """Store embeddings for pending chunks ``{chunk_id: vector}`` in one transaction.

        ``token_counts`` (``{chunk_id: count}``) fills in, in the same transaction,
        the counts of chunks stored without one; a stored count is never replaced.
        Ids of chunks that no longer exist are ignored; returns how many vectors
        were stored.
        """

    @abstractmethod
    def rename_document(self, old_path: str, doc: DocumentRecord) -> None:
        """Move a document to ``doc.path`` keeping its chunks and embeddings."""

    @abstractmethod
    def delete_document(self, path: str) -> None: ...

    @abstractmethod
    def clear(self) -> None:
        """Remove every document (used by ``--force``), keeping the schema."""

    @abstractmethod
    def check_health(self) -> None:
        """Raise :class:`~groove.errors.CorruptIndexError` if the storage is damaged."""

    # --- reads ---------------------------------------------------------------
    def read_snapshot(self) -> AbstractContextManager[None]:
        """Reads inside see one consistent state; backends without snapshots may no-op."""
        return nullcontext()

    @abstractmethod
    def document_hashes(self) -> dict[str, str]:
        """``{path: sha256}`` for every indexed document."""

    @abstractmethod
    def get_document(self, path: str) -> DocumentRow | None: ...

    @abstractmethod
    def list_documents(self) -> list[DocumentRow]: ...

    @abstractmethod
    def document_chunks(self, doc_id: int) -> list[ChunkRow]:
        """All chunks of one document in ``chunk_index`` order."""

    @abstractmethod
    def get_chunks(self, ids: Iterable[int]) -> dict[int, ChunkRow]: ...

    @abstractmethod
    def all_chunks_meta(self) -> list[ChunkRow]:
        """Every chunk with its document fields; ``content`` may be empty (not loaded).

        Search keeps this in memory (per generation) to apply filters before
        the candidate cut without touching SQLite on every query.
        """

    def chunk_columns(self) -> ChunkColumns:
        """Every chunk's id, document and quality as numpy columns, ordered by chunk id.

        What the resident vector index keeps (docs/scaling.md); backends should
        override this with a streaming read, the default goes through
        :meth:`all_chunks_meta`.
        """
        return columns_from_rows(self.all_chunks_meta())

    @abstractmethod
    def load_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """``(chunk_ids int64[n], matrix float32[n, dim])``, one contiguous matrix."""

    def iter_vectors(self, block_rows: int = 65536) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """``(chunk_ids, float32 block)`` in chunk-id order, at most ``block_rows`` at a time.

        Lets a caller keep the vectors in another form (float16, int8) without
        ever holding all of them as float32.
        """
        ids, matrix = self.load_vectors()
        for start in range(0, len(ids), block_rows):
            yield ids[start:start + block_rows], matrix[start:start + block_rows]

    def vector_count(self) -> int:
        """How many embeddings are stored."""
        return len(self.load_vectors()[0])

    # --- the full-text index (derived, docs/indexing.md "Index files") -------------
    @abstractmethod
    def fulltext_search(self, phrases: Sequence[str], limit: int,
                        exclude: Sequence[str] = ()) -> list[tuple[int, float]]:
        """``[(chunk_id, score)]`` best first for chunks matching any phrase and holding
        none of ``exclude`` (as :meth:`fulltext_matching` decides).

        The score is "lower is better" (BM25 negated). Cost follows the
        matches and ``limit``, not the number of chunks.
        """

    @abstractmethod
    def fulltext_matching(self, terms: Sequence[str], among: Sequence[int] | None = None
                          ) -> set[int]:
        """Every chunk whose heading, breadcrumb or text holds any term (exclusions); with
        ``among``, only which of those chunk ids do (the cost follows ``among``)."""

    @abstractmethod
    def fulltext_most_matching(self, terms: Sequence[str]) -> int:
        """At most how many chunks ``fulltext_matching(terms)`` returns (cheap: the
        terms' frequencies, not their matches)."""

    @abstractmethod
    def fulltext_current(self) -> bool:
        """Whether the full-text index reflects every committed write (see ensure_fulltext)."""

    @abstractmethod
    def ensure_fulltext(self, verify: bool = False) -> bool:
        """Rebuild the full-text index from the stored chunks if it is stale or damaged;
        True if rebuilt. ``verify``: read all of it first (slower; an index run's start).

        The caller must hold the writer lock.
        """

    @abstractmethod
    def fulltext_problem(self) -> str | None:
        """Why the full-text index cannot answer now (damaged, missing), or None."""

    @abstractmethod
    def rebuild_fulltext(self) -> None:
        """Rebuild the full-text index from the stored chunks (``index --force``)."""

    @abstractmethod
    def fulltext_findings(self) -> list[str]:
        """A missing or stale full-text index, or one not holding every chunk (one line each)."""

    @abstractmethod
    def flush(self) -> None:
        """Publish buffered derived-index changes (end of a write batch or run)."""

    def publish_due(self) -> None:  # noqa: B027  (a store without buffered changes: nothing)
        """Publish buffered derived-index changes if they have waited long enough.

        Writes publish their own batch when it is due; a writer calls this
        between writes (the indexer, before each file it reads), so a batch is
        not held back by a stretch of files that write nothing.
        """

    @abstractmethod
    def pending_chunks(self, min_chunks: int, after_doc: int | None = None) -> list[PendingChunk]:
        """Chunks without an embedding, whole documents in document-id order.

        Returns at least ``min_chunks`` chunks when that many are pending, and
        never part of a document: the last document is completed. With
        ``after_doc``, only documents whose id is greater (a cursor, so a
        reader can go on while earlier documents are still being embedded).
        """

    @abstractmethod
    def pending_token_estimate(self) -> tuple[int, int]:
        """``(documents, tokens)`` still to embed; tokens estimated from the stored counts."""

    @abstractmethod
    def embedding_counts(self) -> EmbeddingCounts: ...

    def document_mtimes(self) -> dict[str, float]:
        """``{path: mtime}`` recorded when each document was indexed."""
        return {d.path: d.mtime for d in self.list_documents()}

    @abstractmethod
    def stats(self) -> StoreStats: ...

    def document_path(self, doc_id: int) -> str | None:
        """The path of one document by id (None: gone)."""
        return None

    def field_row_count(self) -> int:
        """How many declared-field values the index holds (``groove status``)."""
        return 0

    def tagged_paths(self, tag: str) -> list[str]:
        """The paths of the documents carrying ``tag``, sorted (``frontmatter:unparsed``)."""
        return sorted(d.path for d in self.list_documents() if tag in d.tags)

    def field_matches(self, key: str, values: Sequence[str]) -> set[int]:
        """Ids of the documents holding ``key`` with one of ``values`` (exact match)."""
        return set()

    def field_values(self, doc_id: int) -> dict[str, tuple[str, ...]]:
        """The declared-field values stored for one document."""
        return {}

    # --- links (store/links.py) ---------------------------------------------------
    def links_pending(self) -> bool:
        """Whether documents still need their links read: the index records no link rule
        (built before links were stored) or another one than :data:`groove.models.LINK_RULE`."""
        return False

    def write_document_links(self, links_by_path: dict[str, tuple[
            tuple[tuple[int, Link], ...], tuple[str, ...]]]) -> None:
        """``{path: (links with their chunk index, aliases)}``: replace those documents'
        links (no chunk is touched); every link they affect is resolved again."""
        return None

    def mark_links_read(self) -> None:
        """Every document's links are stored."""
        return None

    def document_links(self, path: str, *, backlinks: bool = False) -> list[LinkRow] | None:
        """The links written in ``path``, or the links to it (None: not indexed)."""
        return None

    def documents_with_definitions(self, doc_ids: Iterable[int]) -> set[int]:
        """Those of these documents that hold at least one code definition."""
        return set()

    def backlink_counts(self, paths: Iterable[str]) -> dict[str, int]:
        """``{path: how many other documents link to it}`` for these paths (none: absent)."""
        return {}

    def link_edges(self, doc_ids: Iterable[int]) -> list[tuple[int, int, int]]:
        """``(source doc, target doc, links)`` for resolved links from or to these documents."""
        return []

    def documents_by_id(self, doc_ids: Iterable[int]) -> dict[int, DocumentRow]:
        """``{id: document}`` for those of these ids that exist."""
        wanted = set(doc_ids)
        return {d.id: d for d in self.list_documents() if d.id in wanted}

    def unresolved_links(self) -> list[LinkRow]:
        """Every link that points at no document."""
        return []

    @abstractmethod
    def write_fields(self, fields_by_path: dict[str, dict[str, tuple[str, ...]]]) -> None:
        """Replace the declared-field rows of these documents (no chunk is touched)."""

    @abstractmethod
    def skipped_files(self) -> dict[str, float]:
        """``{path: mtime}`` of the member files the index runs skipped (and why, kept for doctor)."""

    @abstractmethod
    def skip_reasons(self) -> dict[str, str]:
        """``{path: why}`` of the member files the index runs skipped (``groove ls``)."""

    @abstractmethod
    def record_skipped(self, skipped: dict[str, tuple[float, str]],
                       scope: Iterable[str] | None) -> None:
        """Replace the skips recorded for the paths in ``scope`` (None: every path)
        by ``skipped`` (``{path: (mtime, reason)}``)."""

    @abstractmethod
    def refresh_mtimes(self, mtimes: dict[str, float]) -> None:
        """``{path: mtime}``: a file touched but not changed keeps its row, with its new time."""

    @abstractmethod
    def integrity_findings(self) -> list[str]:
        """Inconsistencies in the stored index, each said in one line (empty: consistent).

        A finding states the problem only; ``groove doctor`` attaches the fix.
        """

    @abstractmethod
    def close(self) -> None: ...


def columns_from_rows(rows: Sequence[ChunkRow]) -> ChunkColumns:
    """:class:`ChunkColumns` from chunk rows (any order)."""
    ordered = sorted(rows, key=lambda r: r.id)
    slots: dict[int, int] = {}
    documents: list[DocumentMeta] = []
    for r in ordered:
        if r.doc_id not in slots:
            slots[r.doc_id] = len(documents)
            documents.append(DocumentMeta(id=r.doc_id, path=r.path, title=r.title,
                                          category=r.category, topic=r.topic, date=r.date,
                                          tags=r.tags, binary_format=r.binary_format))
    n = len(ordered)
    return ChunkColumns(
        ids=np.fromiter((r.id for r in ordered), dtype=np.int64, count=n),
        doc_slot=np.fromiter((slots[r.doc_id] for r in ordered), dtype=np.int32, count=n),
        quality=np.fromiter((r.quality for r in ordered), dtype=np.float64, count=n),
        documents=tuple(documents),
    )
