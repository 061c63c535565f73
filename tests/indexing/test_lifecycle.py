"""The index lifecycle as a user meets it: searchable during a build, never silently partial,
model mismatches refused before any load, an empty folder explained (docs/index-lifecycle.md)."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groove.errors import IndexMismatchError, ModelLoadError
from groove.indexing.embedding_pass import EmbedBatch, EmbeddingExecutor, LocalExecutor
from groove.indexing.indexer import Reporter, run_index
from groove.search.request import SearchRequest

NOTES = {
    "bread.md": "# Bread\n\n## Starter\n\nA sourdough starter needs feeding twice a day.\n\n"
                "## Baking\n\nBake the loaf at 250 degrees with steam.\n",
    "kernel.md": "# Kernel\n\n## Scheduler\n\nThe scheduler balances run queues across cores.\n",
    "tea.md": "# お茶\n\n## 淹れ方\n\n煎茶はお湯を少し冷ましてから淹れると甘みが出る。\n",
    "git.md": "# Git\n\n## Rebase\n\nRebase rewrites commits on top of the upstream branch.\n",
}


def _search(kb, query: str):
    return kb.search(SearchRequest(query=query, limit=5))


class _Gate(EmbeddingExecutor):
    """The local executor, held before its first batch until ``release`` is set."""

    def __init__(self, embedder) -> None:
        self.inner = LocalExecutor(embedder)
        self.entered = threading.Event()
        self.release = threading.Event()

    def map(self, batches: Iterable[EmbedBatch]) -> Iterator[tuple[EmbedBatch, np.ndarray]]:
        self.entered.set()
        assert self.release.wait(60), "the test never released the build"
        yield from self.inner.map(batches)


def test_a_search_during_a_build_finds_text_and_says_the_build_is_running(
        make_kb, write_files, tmp_path, embedder):
    kb = make_kb(write_files(tmp_path / "kb", NOTES))
    gate = _Gate(embedder)
    build = threading.Thread(target=lambda: run_index(
        kb.config, kb._writable_store(), lambda: embedder, executor_factory=lambda _e: gate))
    with kb.writer_lock.hold():  # what kb.index takes; the search must not wait for it
        build.start()
        assert gate.entered.wait(60)
        reader = make_kb(kb.kb_path)  # another KnowledgeBase, as another process would have
        response = _search(reader, "sourdough starter")
        assert response.results and response.results[0].path == "bread.md"
        state = response.index
        assert state is not None and state.state == "building" and state.build_running
        assert (state.documents, state.documents_embedded, state.chunks_embedded) == (4, 0, 0)
        assert "being built" in (state.note() or "")
        gate.release.set()
        build.join(60)
    done = _search(reader, "sourdough starter").index
    assert done is not None and done.state == "complete" and done.note() is None
    assert (done.documents_embedded, done.chunks_embedded) == (4, done.chunks)


#: NOTES with a tea note long enough to be shown (a one-line chunk under 30 characters is
#: hidden by its quality score), and words only each of them holds.
WALKED_NOTES = {**NOTES, "tea.md": "# お茶\n\n## 淹れ方\n\n煎茶はお湯を少し冷ましてから淹れると"
                "甘みが出る。玉露はさらに低い温度でゆっくり淹れる。\n"}
WALKED = {"bread.md": "sourdough starter", "git.md": "rebase upstream",
          "kernel.md": "scheduler run queues", "tea.md": "玉露"}


class _SearchAtEachFile(Reporter):
    """Searches, from another KnowledgeBase (as another process would), for each file's own
    words at the moment the build reports that file read and written: mid-walk."""

    def __init__(self, reader, queries: dict[str, str]) -> None:
        self.reader = reader
        self.queries = queries
        #: ``(path, paths found by its query, documents in the index, index state)``.
        self.seen: list[tuple[str, list[str], int, str]] = []

    def file_done(self, rel_path: str, action: str, detail: str = "") -> None:
        answer = _search(self.reader, self.queries[rel_path])
        state = answer.index
        assert state is not None
        self.seen.append((rel_path, [hit.path for hit in answer.results], state.documents,
                          state.state))


def test_the_first_document_is_findable_by_full_text_before_the_walk_reaches_the_next(
        make_kb, write_files, tmp_path):
    """The first file a cold build reads is published to the full-text index at once, so a
    search finds it while the build has not even read the second file."""
    kb = make_kb(write_files(tmp_path / "kb", WALKED_NOTES))
    probe = _SearchAtEachFile(make_kb(kb.kb_path), WALKED)
    kb.index(reporter=probe)
    path, found, documents, state = probe.seen[0]
    assert path == "bread.md" and documents == 1 and state == "building"
    assert found == ["bread.md"]


def test_every_document_is_findable_once_its_batch_is_due_while_the_walk_goes_on(
        make_kb, write_files, tmp_path, monkeypatch):
    """A batch is published when it is FULLTEXT_BATCH_SECONDS old: with no wait at all,
    each file is findable the moment it is written, before the walk reads the next."""
    from groove.store.sqlite import _fulltext

    monkeypatch.setattr(_fulltext, "FULLTEXT_BATCH_SECONDS", 0.0)
    kb = make_kb(write_files(tmp_path / "kb", WALKED_NOTES))
    probe = _SearchAtEachFile(make_kb(kb.kb_path), WALKED)
    kb.index(reporter=probe)
    assert [(path, documents, state) for path, _, documents, state in probe.seen] == [
        (path, n, "building") for n, path in enumerate(sorted(NOTES), start=1)]
    for path, found, _, _ in probe.seen:
        assert found[:1] == [path], (path, found)


class _StopAt(Reporter):
    """Raises KeyboardInterrupt (Ctrl-C) at the ``at``-th progress event of a build."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.seen = 0

    def _tick(self) -> None:
        self.seen += 1
        if self.seen == self.at:
            raise KeyboardInterrupt

    def file_done(self, rel_path: str, action: str, detail: str = "") -> None:
        self._tick()

    def embed_start(self, progress) -> None:
        self._tick()

    def embed_progress(self, progress) -> None:
        self._tick()


@pytest.mark.slow
@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(at=st.integers(1, 9))
def test_a_build_interrupted_anywhere_is_reported_incomplete_and_the_next_run_resumes(
        make_kb, write_files, tmp_path_factory, embedder, at):
    from groove.indexing import embedding_pass

    root = write_files(tmp_path_factory.mktemp("kb"), NOTES)
    kb = make_kb(root)
    stopper = _StopAt(at)
    old_window = embedding_pass.WINDOW_TOKENS_MIN
    embedding_pass.WINDOW_TOKENS_MIN = 1  # one document per window: more places to stop
    try:
        kb.index(reporter=stopper)
        interrupted = False
    except KeyboardInterrupt:
        interrupted = True
    finally:
        embedding_pass.WINDOW_TOKENS_MIN = old_window
    state = kb.index_state()
    if not interrupted:
        assert state.state == "complete"
        return
    assert state.state in ("incomplete", "missing")
    if state.state == "incomplete":
        answer = _search(kb, "scheduler run queues")
        assert answer.index is not None and answer.index.state == "incomplete"
        assert "incomplete" in (answer.index.note() or "")
    summary = kb.index()
    final = kb.index_state()
    assert final.state == "complete" and final.chunks_embedded == final.chunks
    # the resumed run embedded exactly what was missing: nothing twice
    assert summary.chunks_embedded == final.chunks - state.chunks_embedded


def test_a_model_that_fails_to_load_leaves_no_index_behind(make_kb, write_files, tmp_path,
                                                           monkeypatch):
    import groove.embedders as embedders

    def fail(*_a, **_k):
        raise ModelLoadError("bge-m3 needs the optional fastembed package")

    monkeypatch.setattr(embedders, "get_embedder", fail)
    kb = make_kb(write_files(tmp_path / "kb", NOTES))
    kb._embedder = None  # this knowledge base loads its model like the CLI does
    with pytest.raises(ModelLoadError):
        kb.index()
    assert not kb.db_path.exists() and kb.index_state().state == "missing"


def test_a_same_dimension_model_mismatch_is_refused_before_any_model_loads(
        make_kb, write_files, tmp_path, monkeypatch):
    import groove.embedders as embedders
    from groove.config import load_config
    from groove.kb import KnowledgeBase

    built = make_kb(write_files(tmp_path / "kb", NOTES))
    built.index()
    built.close()
    loads: list[str] = []
    monkeypatch.setattr(embedders, "get_embedder", lambda model, **_k: loads.append(model))
    config = load_config(kb_path=built.kb_path, cwd=tmp_path,
                         overrides={"model": "bge-small-en-v1.5"})  # 384 dims, like e5-small
    kb = KnowledgeBase(config)
    try:
        for attempt in (lambda: _search(kb, "bread"), kb.ensure_index, kb.index,
                        lambda: kb.sync_paths(["bread.md"])):
            with pytest.raises(IndexMismatchError) as refused:
                attempt()
            assert "groove index --force --model bge-small-en-v1.5" in str(refused.value)
            assert "multilingual-e5-small" in str(refused.value)
        assert loads == []
    finally:
        kb.close()


def test_an_empty_folder_says_what_is_enabled_and_what_the_rules_removed(
        make_kb, write_files, tmp_path):
    root = write_files(tmp_path / "kb", {"notes.rst": "Title\n=====\n", "build/x.md": "# X\n"})
    (root / ".grooveignore").write_text("build/\n", encoding="utf-8")
    kb = make_kb(root)
    summary = kb.index()
    assert summary.indexed == 0 and summary.note is not None
    assert ".md" in summary.note and ".rst (1)" in summary.note
    assert "1 file(s) are excluded" in summary.note
    answer = _search(kb, "title")
    assert answer.results == [] and answer.index is not None
    assert "holds no documents" in (answer.index.note() or "")


@pytest.mark.slow
@pytest.mark.parametrize("delay_s", [0.0, 0.4, 0.8, 1.2])  # rows pass, vectors, done
def test_a_killed_groove_index_leaves_an_index_that_says_so_and_resumes(
        make_kb, write_files, tmp_path, delay_s):
    """SIGKILL (no cleanup at all) at several points of a real `groove index` process."""
    import os
    import signal
    import subprocess
    import sys
    import time

    notes = {f"n{i:02d}.md": f"# Note {i}\n\n## Part\n\nSentence {i} about topic {i % 5}.\n\n"
             f"## More\n\nAnother paragraph number {i}.\n" for i in range(30)}
    root = write_files(tmp_path / "kb", notes)
    proc = subprocess.Popen([sys.executable, "-m", "groove", "index", "--kb-path", str(root),
                             "--quiet"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (root / ".groove.db").exists() and proc.poll() is None:
        assert time.monotonic() < deadline, "the build never created its index"
        time.sleep(0.02)
    time.sleep(delay_s)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    kb = make_kb(root)
    before = kb.index_state(files=False)
    assert before.state in ("missing", "incomplete", "complete") and not before.build_running
    if before.state == "incomplete":
        answer = kb.search(SearchRequest(query="Sentence", limit=3))
        assert answer.index is not None and answer.index.state == "incomplete"
    summary = kb.index()
    after = kb.index_state(files=False)
    assert after.state == "complete" and after.documents == 30
    assert summary.chunks_embedded == after.chunks - before.chunks_embedded
