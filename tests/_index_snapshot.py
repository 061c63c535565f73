"""Compare two index files by what a search could observe (not row ids or timestamps)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def index_snapshot(db: Path):
    """``(documents, vectors, integrity findings)`` of an index file.

    Documents map path → (sha256, title, tags, chunks); vectors map path → the
    stacked chunk vectors, compared by callers with a tolerance.
    """
    from groove.store import open_store

    store = open_store(db)
    try:
        docs, vectors = {}, {}
        ids, matrix = store.load_vectors()
        by_id = dict(zip(ids.tolist(), matrix, strict=True))
        for doc in store.list_documents():
            chunks = store.document_chunks(doc.id)
            docs[doc.path] = (doc.sha256, doc.title, tuple(doc.tags), tuple(
                (c.chunk_index, c.heading, c.content, c.token_count, c.quality) for c in chunks))
            vectors[doc.path] = np.stack([by_id[c.id] for c in chunks]) if chunks else None
        return docs, vectors, store.integrity_findings()
    finally:
        store.close()
