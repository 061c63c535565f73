"""Incremental indexing as a user sees it: what changes, what is kept, what is refused."""

from __future__ import annotations

import pytest

from groove.errors import IndexMismatchError
from groove.search.request import SearchRequest

NOTES = {
    "eng/rust/async.md": """
        ---
        title: Async Rust
        tags: [rust, async]
        ---
        # Async Rust

        ## Spawning

        Use tokio spawn to run futures concurrently on the runtime's worker threads.

        ## Blocking

        Blocking calls go to spawn_blocking so the reactor keeps serving other tasks.
        """,
    "料理/お茶.md": """
        # 煎茶の淹れ方

        ## お湯の温度

        沸騰したお湯を少し冷ましてから注ぐと、苦みが抑えられて甘みが出ます。
        """,
    "cooking/bread.md": """
        # Bread

        Feed the starter every day with equal weights of flour and water.
        """,
}


@pytest.fixture
def kb(tmp_path, write_files, make_kb):
    root = write_files(tmp_path / "kb", NOTES)
    return make_kb(root)


def _snapshot(kb):
    """Everything a search could observe, independent of row ids and timestamps."""
    out = {}
    for doc in kb.store.list_documents():
        chunks = kb.store.document_chunks(doc.id)
        out[doc.path] = (doc.sha256, doc.title, doc.category, doc.topic, tuple(doc.tags),
                         tuple((c.chunk_index, c.heading, c.level, c.content) for c in chunks))
    return out


def test_first_run_indexes_every_note_in_english_and_japanese(kb):
    summary = kb.index()
    assert summary.indexed == 3 and summary.skipped == 0
    paths = {d.path for d in kb.store.list_documents()}
    assert paths == set(NOTES)
    tea = kb.store.get_document("料理/お茶.md")
    assert tea.title == "煎茶の淹れ方"
    assert tea.category == "料理"
    headings = [c.heading for c in kb.store.document_chunks(tea.id)]
    assert headings == ["お湯の温度"]


def test_second_run_changes_nothing(kb):
    kb.index()
    before = _snapshot(kb)
    summary = kb.index()
    assert (summary.indexed, summary.updated, summary.unchanged) == (0, 0, 3)
    assert summary.chunks_embedded == 0
    assert _snapshot(kb) == before


def test_modified_file_is_reembedded_and_others_untouched(kb):
    kb.index()
    (kb.kb_path / "cooking/bread.md").write_text("# Bread\n\nRye bread needs a longer proof.\n")
    summary = kb.index()
    assert (summary.updated, summary.unchanged) == (1, 2)
    doc = kb.store.get_document("cooking/bread.md")
    assert "Rye" in kb.store.document_chunks(doc.id)[0].content


def test_rename_keeps_chunks_and_reembeds_nothing(kb):
    kb.index()
    old = kb.store.get_document("cooking/bread.md")
    old_ids = [c.id for c in kb.store.document_chunks(old.id)]
    (kb.kb_path / "cooking/bread.md").rename(kb.kb_path / "cooking/sourdough.md")
    summary = kb.index()
    assert (summary.renamed, summary.deleted, summary.indexed) == (1, 0, 0)
    assert summary.chunks_embedded == 0
    assert kb.store.get_document("cooking/bread.md") is None
    moved = kb.store.get_document("cooking/sourdough.md")
    assert [c.id for c in kb.store.document_chunks(moved.id)] == old_ids


def test_deleted_file_leaves_the_index(kb):
    kb.index()
    (kb.kb_path / "eng/rust/async.md").unlink()
    summary = kb.index()
    assert summary.deleted == 1
    assert kb.store.get_document("eng/rust/async.md") is None
    assert kb.store.stats().documents == 2


def test_force_rebuilds_everything_to_the_same_content(kb):
    kb.index()
    before = _snapshot(kb)
    summary = kb.index(force=True)  # into a fresh file, swapped in: every document is indexed
    assert summary.indexed == 3 and summary.unchanged == 0
    assert _snapshot(kb) == before


def test_unreadable_file_is_skipped_and_its_old_version_kept(kb, caplog):
    kb.index()
    (kb.kb_path / "cooking/bread.md").write_bytes(b"# Bread\n\n\xff\xfe not utf-8\n")
    summary = kb.index()
    assert summary.skipped == 1 and summary.unchanged == 2
    assert "cooking/bread.md" in caplog.text
    doc = kb.store.get_document("cooking/bread.md")
    assert "starter" in kb.store.document_chunks(doc.id)[0].content


class _OtherModel:
    """The real embedder wearing another model id, as if groove.toml changed model."""

    def __init__(self, inner):
        self._inner = inner
        self.model_id = "bge-m3"
        self.dim = inner.dim
        self.max_input_tokens = inner.max_input_tokens

    def __getattr__(self, name):
        return getattr(self._inner, name)


def test_other_model_is_refused_with_the_fixing_command(kb):
    kb.index()
    kb2 = type(kb)(kb.config, embedder=_OtherModel(kb.embedder))
    with pytest.raises(IndexMismatchError, match=r"groove index --force --model bge-m3"):
        kb2.index()
    kb2.close()


def test_a_rename_whose_source_another_writer_removed_indexes_the_target(kb):
    """`groove index` beside `serve`: the other run already dropped the old path.

    The hook runs after this run has read what the index holds, exactly where
    a second indexer's commit would land.
    """
    from groove.indexing.indexer import Reporter

    kb.index()
    root = kb.kb_path
    (root / "cooking" / "bread.md").rename(root / "cooking" / "loaf.md")

    class OtherWriter(Reporter):
        def start(self, total: int) -> None:
            kb.store.delete_document("cooking/bread.md")

    summary = kb.index(reporter=OtherWriter())
    assert (summary.renamed, summary.indexed, summary.skipped) == (0, 1, 0)
    paths = {d.path for d in kb.store.list_documents()}
    assert "cooking/loaf.md" in paths and "cooking/bread.md" not in paths


def test_a_file_over_max_chunks_per_file_keeps_its_tail(tmp_path, make_kb, caplog):
    """A long single-line file: chunked coarsely within the bound, its last word searchable."""
    root = tmp_path / "kb"
    root.mkdir()
    (root / "huge.md").write_text("word " * 3_000 + "zebracrossing")  # one line
    (root / "small.md").write_text("# Small\n\nA short note.\n")
    kb = make_kb(root, max_chunks_per_file=3)
    summary = kb.index()
    assert summary.indexed == 2
    huge = kb.store.get_document("huge.md")
    assert huge is not None and huge.chunk_count <= 3 and huge.chunking == "coarse"
    assert kb.store.get_document("small.md").chunking == "sections"
    hits = kb.search(SearchRequest(query="zebracrossing")).results
    assert hits and hits[0].path == "huge.md"
    warnings = [r.getMessage() for r in caplog.records if "huge.md" in r.getMessage()]
    assert len(warnings) == 1 and "coarsely" in warnings[0]
    assert kb.store.meta().chunk_policy == "whole-file"


def test_counts_the_rows_pass_skipped_are_written_with_the_vectors(kb, embedder):
    """Sections that fit by the tokenizer's bounds are not counted by the rows pass; once the
    vectors pass ran, every stored count is the tokenizer's exact one."""
    def counts():
        return {c.content: c.token_count for doc in kb.store.list_documents()
                for c in kb.store.document_chunks(doc.id)}

    kb.index(embed=False)
    rows_only = counts()
    assert None in rows_only.values()
    assert all(n is None or n == embedder.token_count(text) for text, n in rows_only.items())
    kb.index()
    assert counts() == {text: embedder.token_count(text) for text in rows_only}
