"""The embedding pass: length-sorted batches, per-document writes, resumable, executor seam."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.indexing.embedding_pass import (
    EmbedBatch,
    EmbeddingExecutor,
    EmbedItem,
    LocalExecutor,
    make_batches,
    run_embedding_pass,
)
from groove.models import Chunk, DocumentRecord, passage_text
from groove.store.sqlite import SQLiteStore

items_strategy = st.lists(st.integers(1, 900), max_size=120).map(
    lambda sizes: [EmbedItem(i + 1, i // 3, f"t{i}", n) for i, n in enumerate(sizes)])


@settings(max_examples=200, deadline=None)
@given(items_strategy, st.integers(16, 4000), st.integers(1, 80))
def test_batches_hold_every_item_once_within_both_limits_sorted_by_length(items, budget, texts):
    batches = make_batches(items, max_tokens=budget, max_texts=texts)
    flat = [item for batch in batches for item in batch.items]
    assert sorted(i.chunk_id for i in flat) == [i.chunk_id for i in items]
    assert [i.tokens for i in flat] == sorted(i.tokens for i in items)
    for batch in batches:
        assert 0 < len(batch.items) <= texts
        assert batch.tokens <= budget or len(batch.items) == 1


def _store(tmp_path: Path, docs: dict[str, list[str]]) -> SQLiteStore:
    store = SQLiteStore.open(tmp_path / "i.db", create=True)
    store.set_meta(model_id="multilingual-e5-small", dim=384)
    for path, contents in docs.items():
        record = DocumentRecord(path=path, sha256=path, title=path, category=None, topic=None,
                                date=None, tags=(), tags_invalid=False, metadata={}, size=1,
                                mtime=0.0)
        chunks = [Chunk(chunk_index=i, heading=f"h{i}", level=2,
                        context=f"{path} > h{i}" if i % 2 else "", content=text,
                        token_count=None, quality=1.0) for i, text in enumerate(contents)]
        store.write_document(record, chunks, None)
    return store


DOCS = {
    "a.md": ["Sourdough needs a ripe starter and a long cold proof.", "Bake at 250 degrees."],
    "b.md": ["The kernel scheduler balances run queues across cores."],
    "c.md": ["日本語の文書も同じように埋め込まれる。", "Short.", "A third, somewhat longer chunk."],
}


class _Counting(EmbeddingExecutor):
    """The local executor, counting texts, optionally failing after ``fail_after`` batches."""

    def __init__(self, embedder, fail_after: int | None = None) -> None:
        self.inner = LocalExecutor(embedder)
        self.fail_after = fail_after
        self.texts: list[str] = []
        self.batches = 0

    def map(self, batches: Iterable[EmbedBatch]) -> Iterator[tuple[EmbedBatch, np.ndarray]]:
        for batch, vectors in self.inner.map(batches):
            if self.fail_after is not None and self.batches >= self.fail_after:
                raise KeyboardInterrupt
            self.batches += 1
            self.texts.extend(batch.texts)
            yield batch, vectors


def test_every_pending_chunk_gets_the_vector_the_embedder_gives_its_text(tmp_path, embedder):
    store = _store(tmp_path, DOCS)
    assert store.embedding_counts().chunks_embedded == 0
    progress = run_embedding_pass(store, LocalExecutor(embedder), count_tokens=embedder.token_count)
    counts = store.embedding_counts()
    assert (counts.documents_embedded, counts.chunks_embedded) == (3, 6)
    assert store.pending_chunks(10) == []
    assert progress.documents_done == 3 and progress.chunks_done == 6
    assert progress.tokens_done == progress.tokens_total > 0
    ids, matrix = store.load_vectors()
    rows = store.get_chunks(ids.tolist())
    texts = [passage_text(rows[int(i)].context, rows[int(i)].content) for i in ids]
    np.testing.assert_allclose(matrix, embedder.embed_passages(texts), atol=1e-5)
    store.close()


def test_an_interrupted_pass_keeps_whole_documents_and_the_next_one_embeds_only_the_rest(
        tmp_path, embedder):
    store = _store(tmp_path, DOCS)
    first = _Counting(embedder, fail_after=1)
    with pytest.raises(KeyboardInterrupt):
        run_embedding_pass(store, first, window_chunks=1)
    embedded = store.embedding_counts()
    assert 0 < embedded.documents_embedded < 3
    pending_docs = {c.doc_id for c in store.pending_chunks(100)}
    for doc in store.list_documents():  # never half a document in the vector leg
        n_pending = sum(1 for c in store.pending_chunks(100) if c.doc_id == doc.id)
        assert n_pending in (0, doc.chunk_count)
    second = _Counting(embedder)
    run_embedding_pass(store, second)
    assert store.embedding_counts().chunks_embedded == 6
    resumed = {c.content for c in store.get_chunks(range(1, 100)).values()
               if c.doc_id in pending_docs}
    assert {t.split("\n\n")[-1] for t in second.texts} == resumed
    store.close()


def test_a_document_replaced_while_its_vectors_were_computed_is_not_given_stale_ones(tmp_path):
    store = _store(tmp_path, {"a.md": ["old text"]})
    [old] = store.pending_chunks(1)
    store.close()
    store = _store(tmp_path, {"a.md": ["new text"]})  # rewritten: new chunk ids
    assert store.write_vectors({old.chunk_id: np.ones(384, dtype=np.float32)}) == 0
    assert [c.content for c in store.pending_chunks(5)] == ["new text"]
    store.close()
