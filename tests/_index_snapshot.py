"""Compare two index files by what a search could observe (not row ids or timestamps)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: Words whose full-text matches are part of the snapshot (any Latin and CJK word will do).
FULLTEXT_PROBES = ["index", "search", "検索", "見出し"]


def index_snapshot(db: Path):
    """``(documents, vectors, integrity findings)`` of an index file.

    Documents map path → (sha256, title, tags, chunks, what the full-text index
    finds in it); vectors map path → the stacked chunk vectors, compared by
    callers with a tolerance. The findings include the full-text index's.
    """
    from groove.store import open_store

    store = open_store(db)
    try:
        docs, vectors = {}, {}
        ids, matrix = store.load_vectors()
        by_id = dict(zip(ids.tolist(), matrix, strict=True))
        found = store.fulltext_matching(FULLTEXT_PROBES)
        for doc in store.list_documents():
            chunks = store.document_chunks(doc.id)
            docs[doc.path] = (doc.sha256, doc.title, tuple(doc.tags), tuple(
                (c.chunk_index, c.heading, c.content, c.token_count, c.quality) for c in chunks),
                tuple(c.chunk_index for c in chunks if c.id in found))
            vectors[doc.path] = np.stack([by_id[c.id] for c in chunks]) if chunks else None
        return docs, vectors, store.integrity_findings() + store.fulltext_findings()
    finally:
        store.close()
