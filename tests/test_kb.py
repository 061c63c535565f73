"""KnowledgeBase and the derived full-text index: a crash between the database's commit
and the full-text commit is detected and repaired, never searched silently."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from groove.search.request import SearchRequest

NOTES = {
    "a.md": "# Alpha\n\nThe quokka colony lives on the island.\n",
    "b.md": "# Beta\n\nBeta explains the marmoset enclosure.\n",
}


@pytest.fixture
def kb(tmp_path, write_files, make_kb):
    kb = make_kb(write_files(tmp_path / "kb", NOTES))
    kb.index()
    return kb


def fulltext_paths(kb, word: str) -> set[str]:
    with kb.reading() as store:
        ids = {chunk_id for chunk_id, _ in store.fulltext_search([word], 50)}
        return {row.path for row in store.get_chunks(ids).values()}


def _write_then_die(db, path: str, text: str) -> None:
    """In another process: commit one document to SQLite, then SIGKILL before the
    full-text commit (the batch window is made long so it cannot have happened).

    A writer publishes its first write at once, so a first document, deleted again,
    takes that turn: the document under test waits in a batch as any later one does."""
    script = textwrap.dedent(f"""
        import os, signal
        import numpy as np
        from groove.store.sqlite import _fulltext
        from groove.models import Chunk, DocumentRecord
        from groove.store import open_store
        _fulltext.FULLTEXT_BATCH_SECONDS = 3600
        _fulltext.FULLTEXT_BATCH_DOCUMENTS = 10**9
        store = open_store({str(db)!r})
        rec = DocumentRecord(path={path!r}, sha256="x", title="T", category=None, topic=None,
                             date=None, tags=(), tags_invalid=False, metadata={{}}, size=1,
                             mtime=0.0)
        chunk = Chunk(0, "Heading", 1, "", {text!r}, 5, 1.0)
        first = DocumentRecord(path="first-write.md", sha256="y", title="F", category=None,
                               topic=None, date=None, tags=(), tags_invalid=False,
                               metadata={{}}, size=1, mtime=0.0)
        store.write_document(first, [Chunk(0, "First", 1, "", "published at once", 3, 1.0)],
                             None)
        store.delete_document("first-write.md")
        store.write_document(rec, [chunk], None)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env=os.environ.copy())
    assert proc.returncode == -signal.SIGKILL, proc.stderr


def test_a_crash_between_the_two_commits_is_repaired_before_the_next_search(kb, caplog):
    kb.close()
    _write_then_die(kb.db_path, "c.md", "The okapi reserve opened today.")
    with kb.reading() as store:
        assert not store.fulltext_current()  # SQLite has c.md, the full-text index does not
    with caplog.at_level(logging.WARNING, logger="groove.store"):
        response = kb.search(SearchRequest(query="okapi", limit=3, include_low_quality=True))
    assert "rebuilding it from the database" in caplog.text
    assert fulltext_paths(kb, "okapi") == {"c.md"}
    assert "c.md" in {h.path for h in response.results}
    with kb.reading() as store:
        assert store.fulltext_current() and store.fulltext_findings() == []


def test_the_next_index_run_repairs_it_too(kb):
    kb.close()
    _write_then_die(kb.db_path, "c.md", "The okapi reserve opened today.")
    kb.index()  # c.md is not on disk: the run deletes it, on a repaired full-text index
    assert fulltext_paths(kb, "okapi") == set()
    assert fulltext_paths(kb, "quokka") == {"a.md"}
    with kb.reading() as store:
        assert store.fulltext_findings() == []


def test_index_force_rebuilds_the_full_text_index(kb):
    # Drift the stamp cannot see: the full-text index loses a document but keeps its stamp.
    with kb.reading() as store:
        doc = store.get_document("a.md")
        fulltext = store._fulltext_index()
        stamp = fulltext.stamp()
        fulltext.delete_document(doc.id)
        fulltext.commit(stamp)
        fulltext.release_writer()
        assert store.fulltext_findings()  # doctor would see the missing chunk
    assert fulltext_paths(kb, "quokka") == set()
    kb.index()  # unchanged files: a plain run trusts the stamp
    assert fulltext_paths(kb, "quokka") == set()
    kb.index(force=True)
    assert fulltext_paths(kb, "quokka") == {"a.md"}
    with kb.reading() as store:
        assert store.fulltext_findings() == []


def test_a_search_during_another_writer_does_not_rebuild(kb, monkeypatch):
    kb.close()
    _write_then_die(kb.db_path, "c.md", "The okapi reserve opened today.")
    monkeypatch.setattr(type(kb), "indexing", property(lambda self: True))
    kb.search(SearchRequest(query="okapi", limit=3, include_low_quality=True))
    with kb.reading() as store:
        assert not store.fulltext_current()  # left to the writer, which checks it itself


def test_an_answers_index_state_counts_the_index_its_results_came_from(kb, monkeypatch):
    """Another writer commits right after the search found its results: the answer's
    ``index`` still describes the index the results were read from (one snapshot)."""
    import groove.search.pipeline as pipeline
    from groove.models import Chunk, DocumentRecord
    from groove.store import open_store

    run = pipeline.run_search

    def run_then_another_writer_commits(**kwargs):
        response = run(**kwargs)
        other = open_store(kb.db_path)
        try:
            record = DocumentRecord(path="c.md", sha256="c", title="Gamma", category=None,
                                    topic=None, date=None, tags=(), tags_invalid=False,
                                    metadata={}, size=1, mtime=0.0)
            other.write_document(record, [Chunk(0, "Gamma", 1, "", "A third note.", 5, 1.0)],
                                 None)
            other.flush()
        finally:
            other.close()
        return response

    monkeypatch.setattr(pipeline, "run_search", run_then_another_writer_commits)
    response = kb.search(SearchRequest(query="quokka colony"))
    assert response.results and response.results[0].path == "a.md"
    assert response.index is not None
    assert (response.index.documents, response.index.chunks) == (2, 2)
    assert response.index.state == "complete"
    after = kb.index_state()
    assert (after.documents, after.chunks, after.state) == (3, 3, "incomplete")
