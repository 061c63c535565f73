"""SQLiteStore: sync of chunks/full-text/embeddings, atomic writes, generations, migrations."""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import groove.store.sqlite as sqlite_mod
from groove.errors import GrooveError, IndexMismatchError, InvalidArgument, NoIndexError, NotFound
from groove.fulltext import fulltext_path
from groove.models import Chunk, DocumentRecord
from groove.store import SCHEMA_VERSION, SQLiteStore, open_store
from groove.store.sqlite import _fulltext, _schema

DIM = 8


def record(path: str, sha: str = "s1", title: str = "Title", **kw: object) -> DocumentRecord:
    fields: dict[str, object] = dict(
        category="cat", topic=None, date="2026-01-02", tags=("a", "b"), tags_invalid=False,
        metadata={"k": "v"}, size=10, mtime=1.5,
    )
    fields.update(kw)
    return DocumentRecord(path=path, sha256=sha, title=title, **fields)  # type: ignore[arg-type]


def chunks(*contents: str, heading: str = "Heading") -> list[Chunk]:
    return [
        Chunk(i, f"{heading} {i}", 2, "Title > H", text, len(text) // 4, 1.0, ("Title",))
        for i, text in enumerate(contents)
    ]


def vecs(n: int, seed: int = 0) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "index.db"


@pytest.fixture
def store(db: Path):
    s = open_store(db, create=True)
    s.set_meta(model_id="test", dim=DIM, context_mode="off")
    yield s
    s.close()


def fts_ids(store: SQLiteStore, *phrases: str) -> set[int]:
    """Chunks the full-text index finds for any phrase, after publishing queued writes."""
    store.flush()
    return {cid for cid, _ in store.fulltext_search(phrases, 1000)}


def counts(db: Path) -> tuple[int, int, int, int]:
    """(documents, chunks, full-text chunks, embeddings): SQLite through a separate connection,
    the full-text index through a separate store (what another process would see)."""
    with sqlite3.connect(db) as c:
        docs, chunk_rows, embedded = (
            c.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("documents", "chunks", "embeddings"))
    other = open_store(db)
    try:
        held = other._fulltext_index().count()
    finally:
        other.close()
    return docs, chunk_rows, held, embedded


# --- opening ------------------------------------------------------------------
def test_open_missing_without_create_names_path_and_command(db: Path) -> None:
    with pytest.raises(NoIndexError) as exc:
        open_store(db)
    assert str(db) in str(exc.value) and "groove index" in str(exc.value)
    assert not db.exists()


def test_open_sets_wal_and_busy_timeout(store: SQLiteStore, db: Path) -> None:
    assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store._conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30000
    again = open_store(db)
    assert again.meta().dim == DIM and again.meta().model_id == "test"
    again.close()


def test_non_groove_sqlite_file_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t(x)").connection.commit()
    with pytest.raises(NoIndexError, match="not a groove index"):
        open_store(other)


def test_garbage_file_raises_groove_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(GrooveError, match=str(bad)):
        open_store(bad)


# --- writes keep everything in sync ----------------------------------------------
def test_write_replace_rename_delete_keep_fts_and_embeddings_in_sync(
    store: SQLiteStore, db: Path
) -> None:
    store.write_document(record("a.md"), chunks("kernel scheduler", "memory pages"), vecs(2))
    store.write_document(record("b.md"), chunks("unrelated text"), vecs(1, 1))
    store.flush()
    assert counts(db) == (2, 3, 3, 3)
    assert len(fts_ids(store, "kernel")) == 1

    # replace a.md: the old chunks vanish from FTS and embeddings, doc id is kept
    doc_id = store.get_document("a.md").id
    store.write_document(record("a.md", sha="s2"), chunks("brand new words"), vecs(1, 2))
    store.flush()
    assert counts(db) == (2, 2, 2, 2)
    assert fts_ids(store, "kernel") == set()
    assert store.get_document("a.md").id == doc_id
    assert store.document_hashes() == {"a.md": "s2", "b.md": "s1"}

    # rename keeps chunk ids, embeddings and FTS rows; fields come from the record
    before_ids, before_m = store.load_vectors()
    new_ids = fts_ids(store, "brand new")
    store.rename_document("a.md", record("moved/a.md", sha="s2", category="moved", title="T2"))
    assert store.get_document("a.md") is None
    moved = store.get_document("moved/a.md")
    assert moved.category == "moved" and moved.title == "T2" and moved.chunk_count == 1
    assert fts_ids(store, "brand new") == new_ids
    after_ids, after_m = store.load_vectors()
    assert np.array_equal(before_ids, after_ids) and np.array_equal(before_m, after_m)
    assert store.get_chunks(new_ids)[next(iter(new_ids))].path == "moved/a.md"

    store.delete_document("moved/a.md")
    store.flush()
    assert counts(db) == (1, 1, 1, 1)
    store.clear()
    store.flush()
    assert counts(db) == (0, 0, 0, 0)
    assert store.integrity_findings() == []


def test_rename_of_unknown_path_is_not_found(store: SQLiteStore) -> None:
    with pytest.raises(NotFound, match="x.md"):
        store.rename_document("x.md", record("y.md"))


def test_rename_onto_existing_path_replaces_it(store: SQLiteStore, db: Path) -> None:
    store.write_document(record("a.md"), chunks("aaa text"), vecs(1))
    store.write_document(record("b.md"), chunks("bbb text"), vecs(1))
    store.rename_document("a.md", record("b.md"))
    assert store.document_hashes() == {"b.md": "s1"}
    store.flush()
    assert counts(db) == (1, 1, 1, 1)
    assert fts_ids(store, "aaa") and not fts_ids(store, "bbb")


def test_chunk_ids_are_never_reused(store: SQLiteStore) -> None:
    store.write_document(record("a.md"), chunks("one", "two"), vecs(2))
    first = set(store.load_vectors()[0].tolist())
    store.write_document(record("a.md", sha="s2"), chunks("three", "four"), vecs(2))
    assert first.isdisjoint(store.load_vectors()[0].tolist())


def test_wrong_vector_shape_is_refused_and_old_version_kept(store: SQLiteStore) -> None:
    store.write_document(record("a.md"), chunks("original words"), vecs(1))
    with pytest.raises(InvalidArgument):
        store.write_document(record("a.md", sha="s2"), chunks("x", "y"), vecs(1))
    with pytest.raises(IndexMismatchError):
        store.write_document(record("a.md", sha="s2"), chunks("x"), np.ones((1, DIM + 1)))
    assert store.document_hashes() == {"a.md": "s1"}


def test_failure_mid_write_leaves_the_old_version_intact(
    store: SQLiteStore, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.write_document(record("a.md"), chunks("original words", "second part"), vecs(2))
    gen = store.generation()
    ids_before, m_before = store.load_vectors()

    real_insert = SQLiteStore._insert_chunks

    def explode(self, conn, doc_id, chunk_list, blobs):  # type: ignore[no-untyped-def]
        real_insert(self, conn, doc_id, chunk_list, blobs)  # new rows are in...
        raise KeyboardInterrupt  # ...then Ctrl-C arrives before COMMIT

    monkeypatch.setattr(SQLiteStore, "_insert_chunks", explode)
    with pytest.raises(KeyboardInterrupt):
        store.write_document(record("a.md", sha="s2"), chunks("replacement"), vecs(1, 5))
    monkeypatch.undo()

    assert store.document_hashes() == {"a.md": "s1"}
    assert store.generation() == gen
    store.flush()
    assert counts(db) == (1, 2, 2, 2)
    assert fts_ids(store, "original") and not fts_ids(store, "replacement")
    ids_after, m_after = store.load_vectors()
    assert np.array_equal(ids_before, ids_after) and np.array_equal(m_before, m_after)
    assert store.integrity_findings() == []
    # and the store is still usable afterwards
    store.write_document(record("a.md", sha="s3"), chunks("replacement"), vecs(1, 5))
    assert fts_ids(store, "replacement")


# --- generation ---------------------------------------------------------------------
def test_generation_changes_and_is_seen_by_another_connection(
    store: SQLiteStore, db: Path
) -> None:
    other = open_store(db)
    g0 = other.generation()
    store.write_document(record("a.md"), chunks("text one"), vecs(1))
    g1 = other.generation()
    assert g1 != g0
    store.rename_document("a.md", record("b.md"))
    g2 = other.generation()
    store.delete_document("b.md")
    g3 = other.generation()
    assert len({g0, g1, g2, g3}) == 4
    store.set_meta(last_indexed=123.0)  # bookkeeping only: no cache refresh needed
    assert other.generation() == g3 and other.meta().last_indexed == 123.0
    other.close()


def test_second_connection_sees_data_written_by_first(store: SQLiteStore, db: Path) -> None:
    reader = open_store(db)
    store.write_document(record("a.md"), chunks("shared words"), vecs(1))
    assert fts_ids(store, "shared") == fts_ids(reader, "shared") != set()
    reader.close()


def _seen_elsewhere(db: Path, phrase: str) -> bool:
    """Whether another store (another process) finds ``phrase`` by full text now."""
    other = open_store(db)
    try:
        return bool(other.fulltext_search([phrase], 10))
    finally:
        other.close()


def test_a_writers_first_document_is_published_at_once_then_batches_when_due(
        store: SQLiteStore, db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_fulltext, "FULLTEXT_BATCH_SECONDS", 3600.0)
    store.write_document(record("a.md"), chunks("sourdough starter"), None)
    assert _seen_elsewhere(db, "sourdough")  # the first write: no batch to wait for
    store.write_document(record("b.md"), chunks("kernel scheduler"), None)
    store.publish_due()
    assert not _seen_elsewhere(db, "scheduler")  # queued: its batch is not due yet
    monkeypatch.setattr(_fulltext, "FULLTEXT_BATCH_SECONDS", 0.0)
    store.publish_due()  # due, although no write came after it
    assert _seen_elsewhere(db, "scheduler")
    store.flush()  # a new writing session publishes its first write at once again
    monkeypatch.setattr(_fulltext, "FULLTEXT_BATCH_SECONDS", 3600.0)
    store.write_document(record("c.md"), chunks("rebase upstream"), None)
    assert _seen_elsewhere(db, "rebase")


# --- search reads -----------------------------------------------------------------------
def test_fulltext_english_words_and_japanese_substrings(store: SQLiteStore) -> None:
    store.write_document(
        record("en.md"), chunks("The Kernel Scheduler decides", "nothing here"), vecs(2)
    )
    store.write_document(
        record("ja.md"), chunks("東京都の天気予報は晴れです", "大阪の食べ物"), vecs(2, 1)
    )
    by_id = store.get_chunks(fts_ids(store, "kernel scheduler"))
    assert [c.content for c in by_id.values()] == ["The Kernel Scheduler decides"]
    assert fts_ids(store, "schedulers decide") == set(by_id)  # stemmed words
    assert fts_ids(store, "scheduler kernel") == set()  # a phrase keeps its word order
    ja = store.get_chunks(fts_ids(store, "天気予報"))
    assert [c.path for c in ja.values()] == ["ja.md"]
    assert len(fts_ids(store, "天気予報", "大阪の")) == 2
    assert len(fts_ids(store, "阪")) == 1 and len(fts_ids(store, "の")) == 2  # one character


def test_fulltext_ranks_heading_match_first(store: SQLiteStore) -> None:
    store.write_document(record("a.md"), chunks("body mentions zebra once among many words"),
                         vecs(1))
    store.write_document(record("b.md"), chunks("plain body", heading="zebra facts"), vecs(1))
    store.flush()
    hits = store.fulltext_search(["zebra"], 10)
    assert store.get_chunks([hits[0][0]])[hits[0][0]].path == "b.md"
    assert hits[0][1] <= hits[1][1]  # lower is better, best first
    assert len(store.fulltext_search(["zebra"], 1)) == 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=30), max_size=4))
def test_fulltext_search_takes_any_text(tmp_path_factory, phrases: list[str]) -> None:
    s = _shared_store(tmp_path_factory)
    hits = s.fulltext_search(phrases, 10)
    assert all(isinstance(cid, int) and isinstance(score, float) for cid, score in hits)
    assert s.fulltext_matching(phrases) >= {cid for cid, _ in hits}


_SHARED: dict[str, SQLiteStore] = {}


def _shared_store(factory) -> SQLiteStore:  # type: ignore[no-untyped-def]
    if "s" not in _SHARED:
        s = open_store(factory.mktemp("h") / "h.db", create=True)
        s.set_meta(dim=DIM)
        s.write_document(record("a.md"), chunks("hypothesis text 日本語"), vecs(1))
        s.flush()
        _SHARED["s"] = s
    return _SHARED["s"]


def test_fulltext_matching_words_and_cjk_substrings(store: SQLiteStore) -> None:
    store.write_document(
        record("a.md"),
        chunks("Uses PostgreSQL daily", "ÄRGER im Büro", "東京タワー", "x"),
        vecs(4),
    )
    store.write_document(record("b.md"), chunks("nothing", heading="Redis Notes"), vecs(1, 1))
    store.flush()
    stored = store.get_chunks(m.id for m in store.all_chunks_meta())
    rows = {c.content: c.id for c in stored.values()}
    assert store.fulltext_matching(["postgresql"]) == {rows["Uses PostgreSQL daily"]}
    assert store.fulltext_matching(["GRESQL"]) == set()  # a word test, not a substring
    assert store.fulltext_matching(["redis"]) == {rows["nothing"]}  # heading counts
    assert store.fulltext_matching(["東京"]) == {rows["東京タワー"]}  # CJK: substring
    assert store.fulltext_matching(["京"]) == {rows["東京タワー"]}
    assert store.fulltext_matching(["ärger"]) == {rows["ÄRGER im Büro"]}  # Unicode case fold
    assert store.fulltext_matching(['"quoted', "x", ""]) == {rows["x"]}
    assert store.fulltext_matching(["Heading"]) == set(rows.values()) - {rows["nothing"]}
    assert store.fulltext_matching([]) == set()


def test_all_chunks_meta_and_get_chunks(store: SQLiteStore) -> None:
    store.write_document(record("a.md", tags=("x", "日本")), chunks("c0", "c1"), vecs(2))
    meta = store.all_chunks_meta()
    assert [m.content for m in meta] == ["", ""]
    assert [m.chunk_index for m in meta] == [0, 1]
    assert meta[0].tags == ("x", "日本") and meta[0].path == "a.md" and meta[0].title == "Title"
    full = store.get_chunks([meta[1].id, 999999])
    assert list(full) == [meta[1].id] and full[meta[1].id].content == "c1"
    doc = store.get_document("a.md")
    assert [c.content for c in store.document_chunks(doc.id)] == ["c0", "c1"]
    assert doc.metadata == {"k": "v"} and doc.tags == ("x", "日本") and doc.chunk_count == 2
    assert store.stats().documents == 1 and store.stats().chunks == 2


def test_load_vectors_shape_dtype_contiguity(store: SQLiteStore) -> None:
    ids, m = store.load_vectors()
    assert ids.shape == (0,) and m.shape == (0, DIM) and m.dtype == np.float32
    v1, v2 = vecs(3, 1), vecs(2, 2)
    store.write_document(record("a.md"), chunks("a", "b", "c"), v1)
    store.write_document(record("b.md"), chunks("d", "e"), v2.astype(np.float64))
    ids, m = store.load_vectors()
    assert ids.dtype == np.int64 and list(ids) == sorted(ids)
    assert m.shape == (5, DIM) and m.dtype == np.float32 and m.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(m, np.vstack([v1, v2.astype(np.float32)]))


# --- schema versions --------------------------------------------------------------------
def test_migration_from_older_schema_version(
    store: SQLiteStore, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.write_document(record("a.md"), chunks("kept across migration"), vecs(1))
    store.close()
    calls: list[int] = []

    base = sqlite_mod.SCHEMA_VERSION

    def add_column(conn: sqlite3.Connection) -> None:
        calls.append(base + 1)
        conn.execute("ALTER TABLE documents ADD COLUMN extra TEXT")

    def fill_column(conn: sqlite3.Connection) -> None:
        calls.append(base + 2)
        conn.execute("UPDATE documents SET extra = 'v3'")

    monkeypatch.setattr(_schema, "SCHEMA_VERSION", base + 2)
    monkeypatch.setattr(_schema, "MIGRATIONS", {base + 1: add_column, base + 2: fill_column})
    s = open_store(db)
    assert calls == [base + 1, base + 2]
    assert s.meta().schema_version == base + 2
    assert s._conn.execute("SELECT extra FROM documents").fetchone() == ("v3",)
    assert fts_ids(s, "migration")
    s.close()
    open_store(db).close()  # already current: nothing re-applied
    assert calls == [base + 1, base + 2]


#: The columns schema 4 added for source code.
CODE_COLUMNS = (("chunks", "symbol_kind"), ("chunks", "scope"), ("chunks", "line_start"),
                ("chunks", "line_end"), ("documents", "language"))


def as_version_1(db: Path) -> None:
    """Turn a current index file back into the version-1 layout groove wrote before."""
    with sqlite3.connect(db) as c:
        c.execute("DROP TABLE document_fields")
        c.execute("ALTER TABLE documents DROP COLUMN chunking")
        for table, column in CODE_COLUMNS:
            c.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        c.execute("DELETE FROM index_meta WHERE key IN ('chunk_policy', 'fulltext_id',"
                  " 'text_generation')")
        c.execute("CREATE VIRTUAL TABLE chunks_fts USING fts5(heading, context, content,"
                  " content='chunks', content_rowid='id', tokenize='trigram')")
        c.execute("UPDATE index_meta SET value = '1' WHERE key = 'schema_version'")


def test_a_version_1_index_with_documents_records_the_legacy_chunk_policy(
    store: SQLiteStore, db: Path
) -> None:
    """Its long files may have lost their tails: the migration says so, doctor reads it."""
    store.write_document(record("a.md"), chunks("kept across migration"), vecs(1))
    store.close()
    as_version_1(db)
    s = open_store(db)
    assert s.meta().schema_version == sqlite_mod.SCHEMA_VERSION
    assert s.meta().chunk_policy == "legacy"
    assert s.get_document("a.md").chunking == "sections"
    assert fts_ids(s, "migration")
    s.close()


def test_an_empty_version_1_index_records_the_current_chunk_policy(
    store: SQLiteStore, db: Path
) -> None:
    store.close()
    as_version_1(db)
    s = open_store(db)
    assert s.meta().chunk_policy == "whole-file"
    s.close()


def test_a_version_1_index_loses_fts5_and_gets_its_fulltext_index_rebuilt(
    store: SQLiteStore, db: Path
) -> None:
    store.write_document(record("a.md"), chunks("written by an older groove"), vecs(1))
    store.close()
    shutil.rmtree(fulltext_path(db))
    as_version_1(db)
    s = open_store(db)
    try:
        assert s.meta().schema_version == SCHEMA_VERSION
        assert s._conn.execute("SELECT name FROM sqlite_master WHERE name = 'chunks_fts'"
                               ).fetchone() is None
        assert not s.fulltext_current()
        assert s.ensure_fulltext() and s.fulltext_current()
        assert fts_ids(s, "older")
    finally:
        s.close()
def test_a_version_3_index_gains_the_code_columns_and_keeps_its_chunks(
    store: SQLiteStore, db: Path
) -> None:
    store.write_document(record("a.md"), chunks("prose from before code parsing"), vecs(1))
    store.close()
    conn = sqlite3.connect(db)
    for table, column in CODE_COLUMNS:
        conn.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    conn.execute("UPDATE index_meta SET value = '3' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    s = open_store(db)
    assert s.meta().schema_version == sqlite_mod.SCHEMA_VERSION
    (row,) = s.document_chunks(s.get_document("a.md").id)
    assert row.content == "prose from before code parsing"
    assert (row.symbol_kind, row.line_start, row.language) == (None, None, None)
    s.close()


def test_a_version_5_index_learns_each_documents_script_from_its_chunks(
    store: SQLiteStore, db: Path
) -> None:
    """Schema 6: the script a document is written in is judged on its text, so a Japanese
    chapter titled by its file name still counts as Japanese after the upgrade."""
    store.write_document(record("ch16-01-threads.md"), chunks("スレッドを使用してコードを同時に走らせる"),
                         vecs(1))
    store.write_document(record("notes.md"), chunks("threads run code at the same time"), vecs(1))
    store.close()
    conn = sqlite3.connect(db)
    conn.execute("ALTER TABLE documents DROP COLUMN cjk")
    conn.execute("UPDATE index_meta SET value = '5' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    s = open_store(db)
    assert s.meta().schema_version == sqlite_mod.SCHEMA_VERSION
    script = {d.path: d.cjk for d in s.chunk_columns().documents}
    assert script == {"ch16-01-threads.md": True, "notes.md": False}
    s.close()


def test_failed_migration_rolls_back(
    store: SQLiteStore, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.close()

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("ALTER TABLE documents ADD COLUMN extra TEXT")
        conn.execute("SELECT * FROM no_such_table")

    base = sqlite_mod.SCHEMA_VERSION
    monkeypatch.setattr(_schema, "SCHEMA_VERSION", base + 1)
    monkeypatch.setattr(_schema, "MIGRATIONS", {base + 1: broken})
    with pytest.raises(GrooveError):
        open_store(db)
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT value FROM index_meta WHERE key='schema_version'").fetchone() == (
            str(base),)
        assert "extra" not in [r[1] for r in c.execute("PRAGMA table_info(documents)")]


def test_missing_migration_step_is_refused(
    store: SQLiteStore, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.close()
    monkeypatch.setattr(_schema, "SCHEMA_VERSION", sqlite_mod.SCHEMA_VERSION + 1)
    monkeypatch.setattr(_schema, "MIGRATIONS", {})
    with pytest.raises(IndexMismatchError, match="--force"):
        open_store(db)


def test_newer_schema_version_is_refused(store: SQLiteStore, db: Path) -> None:
    store.close()
    with sqlite3.connect(db) as c:
        c.execute("UPDATE index_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(IndexMismatchError, match="99") as exc:
        open_store(db)
    assert "upgrade groove" in str(exc.value)


# --- integrity ------------------------------------------------------------------------------
def test_integrity_findings_clean_then_each_corruption_reported(
    store: SQLiteStore, db: Path
) -> None:
    store.write_document(record("a.md"), chunks("one two three", "four five six", "seven"), vecs(3))
    store.write_document(record("b.md"), chunks("eight nine"), vecs(1, 1))
    store.set_meta(build_state="complete")  # a missing vector is a fault only in a finished build
    store.flush()
    assert store.integrity_findings() == [] and store.fulltext_findings() == []
    ids = [c.id for c in store.all_chunks_meta()]
    with sqlite3.connect(db) as c:
        c.execute("DELETE FROM embeddings WHERE chunk_id = ?", (ids[0],))
        c.execute("UPDATE embeddings SET vector = zeroblob(12) WHERE chunk_id = ?", (ids[1],))
        c.execute("UPDATE index_meta SET value = value + 1 WHERE key = 'text_generation'")
        c.execute("PRAGMA foreign_keys = OFF")
        c.execute("INSERT INTO embeddings(chunk_id, vector) VALUES (424242, zeroblob(32))")
    found = "\n".join(store.integrity_findings())
    assert "1 chunk(s) without an embedding" in found
    assert "not of the recorded dimension" in found
    assert store.fulltext_findings() and "stale" in store.fulltext_findings()[0]
    assert "1 embedding(s) without a chunk" in found
    assert "groove" not in found  # the store names the problem; doctor attaches the fix


def test_read_snapshot_hides_another_connections_commit_until_it_ends(
    store: SQLiteStore, db: Path
) -> None:
    store.write_document(record("a.md"), chunks("alpha text here"), vecs(1))
    store.flush()  # one writer at a time: the full-text writer passes to ``other``
    other = open_store(db)
    try:
        with store.read_snapshot():
            before_ids, _ = store.load_vectors()
            other.write_document(record("b.md", sha="s2"), chunks("beta text here"), vecs(1, 1))
            meta_ids = [row.id for row in store.all_chunks_meta()]
            ids_inside, _ = store.load_vectors()
            assert meta_ids == before_ids.tolist() == ids_inside.tolist()
        assert len(store.all_chunks_meta()) == 2
    finally:
        other.close()


def test_index_metadata_read_once_per_snapshot_is_current_in_the_next(
    store: SQLiteStore, db: Path
) -> None:
    """Inside a read snapshot the metadata (generation, counters, stamps) is read once and
    holds still; the next snapshot, and any read outside one, sees what was written since."""
    store.write_document(record("a.md"), chunks("alpha text here"), vecs(1))
    store.flush()
    other = open_store(db)
    try:
        with store.read_snapshot():
            generation, counts = store.generation(), store.embedding_counts()
            other.write_document(record("b.md", sha="s2"), chunks("beta text here"), vecs(1, 1))
            assert (store.generation(), store.embedding_counts()) == (generation, counts)
        assert store.generation() > generation
        with store.read_snapshot():
            assert store.generation() > generation
            assert store.embedding_counts().chunks == counts.chunks + 1
        other.flush()  # the full-text writer passes back to ``store``
        store.write_document(record("c.md", sha="s3"), chunks("gamma text here"), vecs(1, 2))
        with store.read_snapshot():
            assert store.embedding_counts().chunks == counts.chunks + 2
    finally:
        other.close()


# --- counters (issue: the index state costs nothing per search) -----------------------
def true_counts(db: Path) -> dict[str, int]:
    """The counters as the rows say, counted through a separate connection."""
    with sqlite3.connect(db) as c:
        return {key: int(c.execute(sql).fetchone()[0])
                for key, sql in sqlite_mod._COUNTER_TRUTH.items()}


_OPS = st.lists(
    st.tuples(st.sampled_from(["write", "write_pending", "vectors", "delete", "rename", "clear",
                               "tags", "fields"]),
              st.integers(0, 4), st.integers(0, 3), st.integers(0, 4)),
    max_size=25)


@settings(max_examples=40, deadline=None)
@given(ops=_OPS)
def test_counters_equal_the_rows_after_any_sequence_of_writes(tmp_path_factory, ops) -> None:
    db = tmp_path_factory.mktemp("counters") / "index.db"
    s = open_store(db, create=True)
    s.set_meta(model_id="test", dim=DIM, context_mode="off")
    try:
        for op, a, n, b in ops:
            path = f"d{a}.md"
            if op in ("write", "write_pending", "tags"):
                texts = [f"text {a} {i}" for i in range(n)]
                s.write_document(record(path, tags_invalid=op == "tags"), chunks(*texts),
                                 vecs(n) if op == "write" else None)
            elif op == "vectors":
                pending = s.pending_chunks(b + 1)[: b + 1]
                s.write_vectors({p.chunk_id: vecs(1, p.chunk_id)[0] for p in pending})
            elif op == "delete":
                s.delete_document(path)
            elif op == "rename" and s.get_document(path) is not None:
                s.rename_document(path, record(f"d{b}.md", tags_invalid=bool(n % 2)))
            elif op == "clear":
                s.clear()
            elif op == "fields" and s.get_document(path) is not None:
                s.write_fields({path: {"team": tuple(f"t{i}" for i in range(n)),
                                       "owner": ("me", "me")[: b % 3]}})
            counts_now = s.embedding_counts()
            truth = true_counts(db)
            assert s._counters() == truth, (op, a, n, b)
            assert counts_now.documents_embedded == (truth["count_documents"]
                                                     - truth["count_documents_pending"])
        assert not [f for f in s.integrity_findings() if "counter" in f]
    finally:
        s.close()


def test_rewriting_a_vector_does_not_count_it_twice(store: SQLiteStore, db: Path) -> None:
    store.write_document(record("a.md"), chunks("one", "two"), vecs(2))
    ids = [c.id for c in store.document_chunks(store.get_document("a.md").id)]  # type: ignore[union-attr]
    assert store.write_vectors({ids[0]: vecs(1, 7)[0]}) == 1
    assert store.embedding_counts().chunks_embedded == 2 == true_counts(db)["count_chunks_embedded"]


def test_an_index_from_before_the_counters_is_counted_once_when_opened(store: SQLiteStore, db: Path) -> None:
    store.write_document(record("a.md"), chunks("one", "two"), vecs(2))
    store.write_document(record("b.md", tags_invalid=True), chunks("three"), None)
    store.close()
    with sqlite3.connect(db) as c:  # what a groove before the counters wrote (schema 2)
        for (name,) in c.execute("SELECT name FROM sqlite_master WHERE name LIKE 'count_%'").fetchall():
            c.execute(f"DROP TRIGGER {name}")
        c.execute("DROP TABLE skipped_files")
        c.execute("ALTER TABLE documents DROP COLUMN pending")
        c.execute("DELETE FROM index_meta WHERE key LIKE 'count_%'")
        for table, column in CODE_COLUMNS:
            c.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        c.execute("UPDATE index_meta SET value = '2' WHERE key = 'schema_version'")
    s = open_store(db)
    try:
        assert s.meta().schema_version == sqlite_mod.SCHEMA_VERSION
        counted = s.embedding_counts()
        assert (counted.documents, counted.documents_embedded, counted.chunks,
                counted.chunks_embedded) == (2, 1, 3, 2)
        assert s.stats().tags_invalid == 1
        s.write_vectors({p.chunk_id: vecs(1)[0] for p in s.pending_chunks(10)})
        assert s.embedding_counts().documents_embedded == 2
        assert s._counters() == true_counts(db)
    finally:
        s.close()


def test_counters_are_read_without_counting_rows(store: SQLiteStore) -> None:
    """The state read is a lookup in index_meta, never a count over documents or chunks."""
    store.write_document(record("a.md"), chunks("one", "two"), vecs(2))
    seen: list[str] = []
    store._conn.set_trace_callback(seen.append)
    try:
        store.embedding_counts()
        store.stats()
    finally:
        store._conn.set_trace_callback(None)
    assert seen and all("index_meta" in sql and "count(" not in sql.lower() for sql in seen), seen


def test_skips_and_refreshed_times_are_recorded(store: SQLiteStore) -> None:
    store.write_document(record("a.md", mtime=1.0), chunks("one"), vecs(1))
    before = store.generation()
    store.record_skipped({"bin.md": (5.0, "not UTF-8"), "x.md": (6.0, "too big")}, None)
    store.record_skipped({"y.md": (7.0, "hard link")}, ["x.md", "y.md"])
    assert store.skipped_files() == {"bin.md": 5.0, "y.md": 7.0}
    store.refresh_mtimes({"a.md": 2.0})
    assert store.document_mtimes() == {"a.md": 2.0}
    assert store.generation() == before  # neither is a document change


def test_vectors_fill_in_missing_counts_and_never_replace_one(store: SQLiteStore) -> None:
    uncounted = [replace(c, token_count=None) for c in chunks("one", "two")]
    store.write_document(record("a.md"), [uncounted[0], chunks("", "two")[1]], None)
    ids = [c.id for c in store.document_chunks(store.get_document("a.md").id)]  # type: ignore[union-attr]
    assert [c.token_count for c in store.get_chunks(ids).values()] == [None, 0]
    store.write_vectors(dict(zip(ids, vecs(2), strict=True)), {ids[0]: 11, ids[1]: 99})
    assert [store.get_chunks(ids)[i].token_count for i in ids] == [11, 0]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.text(max_size=40), st.text(max_size=20),
                          st.none() | st.integers(min_value=0, max_value=500)),
                min_size=1, max_size=6))
def test_pending_token_total_is_the_embedding_pass_rule_summed(
        tmp_path_factory: pytest.TempPathFactory,
        pending: list[tuple[str, str, int | None]]) -> None:
    """The progress total and the pass's windows use one rule (models.passage_tokens)."""
    from groove.models import passage_tokens

    db = tmp_path_factory.mktemp("pending") / "index.db"
    s = open_store(db, create=True)
    try:
        s.set_meta(model_id="test", dim=DIM, context_mode="off")
        rows = [Chunk(i, f"H {i}", 2, context, content, count, 1.0, ())
                for i, (content, context, count) in enumerate(pending)]
        s.write_document(record("a.md"), rows, None)
        assert s.pending_token_estimate() == (
            1, sum(passage_tokens(c.token_count, c.content, c.context) for c in rows))
    finally:
        s.close()


_WORDS = ["alpha", "beta", "gamma", "delta", "東京", "京都"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4), min_size=1, max_size=12),
       st.lists(st.sampled_from(_WORDS), min_size=1, max_size=2),
       st.lists(st.sampled_from(_WORDS), max_size=2),
       st.integers(min_value=1, max_value=15), st.data())
def test_exclusions_inside_the_query_and_per_candidate_agree_with_the_whole_set(
        tmp_path_factory: pytest.TempPathFactory, texts: list[list[str]], phrases: list[str],
        exclude: list[str], limit: int, data: st.DataObject) -> None:
    """The two cheap forms of an exclusion equal collecting every chunk that holds it."""
    s = open_store(tmp_path_factory.mktemp("excl") / "index.db", create=True)
    try:
        s.set_meta(dim=DIM)
        s.write_document(record("a.md"), chunks(*(" ".join(t) for t in texts)), vecs(len(texts)))
        s.flush()
        held = s.fulltext_matching(exclude)
        everything = s.fulltext_search(phrases, 1000)
        assert s.fulltext_search(phrases, limit, exclude) == [
            hit for hit in everything if hit[0] not in held][:limit]
        ids = [m.id for m in s.all_chunks_meta()]
        among = data.draw(st.lists(st.sampled_from(ids), max_size=len(ids)))
        assert s.fulltext_matching(exclude, among=among) == held & set(among)
    finally:
        s.close()
