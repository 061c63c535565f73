"""Live sync: edit, delete, rename and .grooveignore changes under a running watcher."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from groove.search.request import SearchRequest
from groove.server.watcher import Watcher

DEADLINE_S = 15.0


def wait_for(predicate: Callable[[], bool], what: str) -> None:
    """Poll until ``predicate`` holds; fail naming ``what`` after the deadline."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"not within {DEADLINE_S:.0f} s: {what}")


@pytest.fixture
def live(tmp_path, write_files, make_kb) -> Iterator[tuple]:
    kb_dir = write_files(tmp_path / "kb", {
        "alpha.md": "# Alpha\n\nThe quokka colony lives on the island.\n",
        "sub/beta.md": "# Beta\n\nBeta explains the marmoset enclosure.\n",
        "sub/deep/gamma.md": "# Gamma\n\nGamma covers the pangolin survey.\n",
    })
    kb = make_kb(kb_dir, watch={"debounce_ms": 50})
    kb.index()
    watcher = Watcher(kb)
    watcher.start()
    assert watcher.ready.wait(10), "watcher did not start"
    assert watcher.state == "watching"
    yield kb, kb_dir, watcher
    watcher.stop()
    assert watcher.state == "off"


def paths_for(kb, query: str) -> set[str]:
    response = kb.search(SearchRequest(query=query, limit=10, include_low_quality=True))
    return {h.path for h in response.results if query.lower() in h.content.lower()}


def indexed(kb) -> set[str]:
    return {d.path for d in kb.list_documents()}


def test_edit_create_delete_follow(live):
    kb, kb_dir, _ = live
    (kb_dir / "alpha.md").write_text("# Alpha\n\nThe axolotl tank replaced the quokkas.\n")
    wait_for(lambda: paths_for(kb, "axolotl") == {"alpha.md"}, "edited text searchable")
    (kb_dir / "new.md").write_text("# New\n\nA note about the okapi reserve.\n")
    wait_for(lambda: paths_for(kb, "okapi") == {"new.md"}, "new file searchable")
    (kb_dir / "new.md").unlink()
    wait_for(lambda: "new.md" not in indexed(kb) and not paths_for(kb, "okapi"), "deleted file gone")


def fulltext_paths(kb, word: str) -> set[str]:
    """Documents the full-text index alone finds for ``word`` (no vector leg)."""
    with kb.reading() as store:
        ids = {chunk_id for chunk_id, _ in store.fulltext_search([word], 50)}
        return {row.path for row in store.get_chunks(ids).values()}


def test_the_full_text_index_follows_edits_renames_and_deletes(live):
    kb, kb_dir, _ = live
    assert fulltext_paths(kb, "quokka") == {"alpha.md"}
    (kb_dir / "alpha.md").write_text("# Alpha\n\nThe axolotl tank replaced them.\n")
    wait_for(lambda: fulltext_paths(kb, "axolotl") == {"alpha.md"}, "edited text in full text")
    assert fulltext_paths(kb, "quokka") == set()
    (kb_dir / "sub/beta.md").rename(kb_dir / "sub/renamed.md")
    wait_for(lambda: fulltext_paths(kb, "marmoset") == {"sub/renamed.md"}, "rename in full text")
    (kb_dir / "sub/deep/gamma.md").unlink()
    wait_for(lambda: fulltext_paths(kb, "pangolin") == set(), "deleted file out of full text")
    # the full-text index lives beside the database, inside the folder: never a document
    assert (kb_dir / ".groove.db.fts").is_dir()
    assert not any(p.startswith(".groove.db") for p in indexed(kb))
    with kb.reading() as store:
        assert store.fulltext_findings() == []


def test_rename_updates_the_path(live):
    kb, kb_dir, _ = live
    (kb_dir / "sub" / "beta.md").rename(kb_dir / "renamed.md")
    wait_for(lambda: paths_for(kb, "marmoset") == {"renamed.md"}, "renamed path served")
    assert "sub/beta.md" not in indexed(kb)


def test_folder_moves_and_deletes(live):
    kb, kb_dir, _ = live
    (kb_dir / "sub" / "deep").rename(kb_dir / "moved")
    wait_for(lambda: paths_for(kb, "pangolin") == {"moved/gamma.md"}, "moved folder re-pathed")
    import shutil

    shutil.rmtree(kb_dir / "sub")
    wait_for(lambda: indexed(kb) == {"alpha.md", "moved/gamma.md"}, "deleted folder removed")


def test_grooveignore_reloads_rules_first(live):
    kb, kb_dir, watcher = live
    (kb_dir / ".grooveignore").write_text("sub/\n")
    wait_for(lambda: not paths_for(kb, "marmoset") and "sub/beta.md" not in indexed(kb),
             "ignored folder dropped")
    (kb_dir / "sub" / "late.md").write_text("# Late\n\nThe tapir file.\n")
    (kb_dir / "visible.md").write_text("# Visible\n\nThe tapir file, visible copy.\n")
    wait_for(lambda: paths_for(kb, "tapir") == {"visible.md"}, "excluded edit stays out")
    assert not watcher.files.includes("sub/late.md")
    (kb_dir / ".grooveignore").unlink()
    wait_for(lambda: {"sub/beta.md", "sub/late.md"} <= indexed(kb), "un-ignored files back")


def test_excluded_dirs_stay_out(live):
    kb, kb_dir, _ = live
    (kb_dir / "node_modules").mkdir()
    (kb_dir / "node_modules" / "pkg.md").write_text("# Pkg\n\nThe wombat package.\n")
    (kb_dir / "probe.md").write_text("# Probe\n\nThe ibex probe.\n")
    wait_for(lambda: paths_for(kb, "ibex") == {"probe.md"}, "probe indexed")
    assert not paths_for(kb, "wombat")
    assert "node_modules/pkg.md" not in indexed(kb)


def test_an_undecodable_file_name_does_not_stop_live_sync(live, caplog):
    """watchfiles cannot decode a non-UTF-8 name and raises; the watcher resyncs and goes on."""
    import os

    kb, kb_dir, watcher = live
    with open(os.path.join(os.fsencode(kb_dir), b"b-\xff.md"), "wb") as fh:
        fh.write(b"# B\n\nThe capybara note.\n")
    (kb_dir / "after.md").write_text("# After\n\nThe narwhal note.\n")
    wait_for(lambda: paths_for(kb, "narwhal") == {"after.md"}, "a later file still syncs")
    (kb_dir / "later.md").write_text("# Later\n\nThe wombat note.\n")
    wait_for(lambda: paths_for(kb, "wombat") == {"later.md"}, "and one after that")
    assert watcher.state == "watching"
    assert not paths_for(kb, "capybara")  # skipped, not stored under a broken name
    assert any("b-\\xff.md" in r.getMessage() and "UTF-8" in r.getMessage()
               for r in caplog.records)


def test_watch_failures_back_off_and_a_steady_watch_starts_the_back_off_over(tmp_path, make_kb,
                                                                            monkeypatch):
    """Deterministic: the watch is replaced by a script of failures; no real time passes."""
    from groove.server import watcher as watcher_module

    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    w = Watcher(make_kb(kb_dir))
    clock = iter([0, 1, 1, 2, 2, 500, 500, 501, 501, 502])  # the 3rd watch ran for 498 s
    monkeypatch.setattr(watcher_module.time, "monotonic", lambda: next(clock))
    outcomes = iter([RuntimeError("decode"), RuntimeError("decode"), RuntimeError("decode"),
                     RuntimeError("decode"), None])
    resyncs: list[bool] = []

    def scripted_watch(*, resync: bool) -> None:
        resyncs.append(resync)
        outcome = next(outcomes)
        if outcome is not None:
            raise outcome

    delays: list[float] = []
    monkeypatch.setattr(w, "_watch", scripted_watch)
    monkeypatch.setattr(w._stop, "wait", lambda delay: delays.append(delay))
    w._run()
    assert delays == [0.5, 1.0, 0.5, 1.0]
    assert resyncs == [False, True, True, True, True]  # every watch after a failure resyncs
    assert "decode" in (w.last_error or "")


def test_names_that_cannot_travel_stay_out_of_live_sync(live):
    """The watcher asks the index walk's name rule: a rename onto such a name deindexes,
    a new file under one never arrives, a rename back brings it in."""
    kb, kb_dir, _ = live
    (kb_dir / "alpha.md").rename(kb_dir / "CON.md")
    (kb_dir / "ask?.md").write_text("# Ask\n\nThe quokka question.\n")
    (kb_dir / "probe.md").write_text("# Probe\n\nThe ibex probe.\n")
    wait_for(lambda: paths_for(kb, "ibex") == {"probe.md"} and "alpha.md" not in indexed(kb),
             "renamed-away row removed, later file synced")
    assert not paths_for(kb, "quokka") and not {"CON.md", "ask?.md"} & indexed(kb)
    (kb_dir / "CON.md").rename(kb_dir / "console.md")
    wait_for(lambda: paths_for(kb, "quokka") == {"console.md"}, "renamed back to a portable name")


def test_a_watcher_waiting_for_another_run_stops_at_once(tmp_path, write_files, make_kb):
    """``serve`` stopped while its background build runs: the watcher's catch-up is waiting
    for the build's lock, and stop() ends the watcher then and there (it used to sit in
    the run's lock until the join gave up, so Ctrl-C took over five seconds)."""
    kb_dir = write_files(tmp_path / "kb", {"alpha.md": "# Alpha\n\nThe quokka colony.\n"})
    kb = make_kb(kb_dir, watch={"debounce_ms": 50})
    kb.index()
    with kb.writer_lock.hold():  # another run is writing the index
        watcher = Watcher(kb)
        watcher.start()
        wait_for(lambda: watcher.state == "watching", "the watch started its catch-up")
        watcher.stop(timeout=5)
        assert not [t for t in threading.enumerate() if t.name == "groove-watcher"]
