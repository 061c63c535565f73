"""``groove doctor`` on real indexes: clean when fresh, and each kind of damage named with its fix."""

from __future__ import annotations

import os
import shutil
import sqlite3

import pytest

from groove.checks.doctor import run_doctor
from groove.fulltext import fulltext_path

NOTES = {
    "eng/async.md": """
        ---
        title: Async
        ---
        # Async

        ## Tasks

        Spawn tokio tasks to run futures concurrently on the runtime worker threads.
        """,
    "cooking/bread.md": """
        # Bread

        Feed the sourdough starter equal weights of flour and water every day.
        """,
}


@pytest.fixture
def kb(tmp_path, write_files, make_kb):
    root = write_files(tmp_path / "kb", NOTES)
    kb = make_kb(root)
    kb.index()
    return kb


def _checks(report) -> list[tuple[str, str | None]]:
    return [(f.check, f.path) for f in report.findings]


def test_a_fresh_index_is_clean(kb):
    report = run_doctor(kb)
    assert report.findings == [] and report.error is None and report.exit_code == 0
    assert report.facts["documents"] == 2 and report.facts["model"] == "multilingual-e5-small"
    assert report.facts["dim"] == 384
    assert "No problems found." in report.render_text()
    assert report.to_json()["ok"] is True


def test_no_index_means_doctor_could_not_run(tmp_path, write_files, make_kb):
    kb = make_kb(write_files(tmp_path / "empty", {"a.md": "# A\n\ntext\n"}))
    report = run_doctor(kb)
    assert report.exit_code == 2 and "groove index" in report.error
    assert report.to_json()["error"] == report.error


def test_a_file_deleted_on_disk_is_reported_with_its_fix(kb):
    (kb.kb_path / "cooking/bread.md").unlink()
    report = run_doctor(kb)
    assert _checks(report) == [("servability", "cooking/bread.md")]
    [finding] = report.findings
    assert "no longer exists" in finding.message and finding.fix.startswith("groove index")
    assert report.exit_code == 1
    text = report.render_text()
    assert "[FAIL] servability" in text and "fix: groove index" in text


def test_a_missing_embedding_row_is_an_integrity_finding(kb):
    kb.close()
    with sqlite3.connect(kb.db_path) as conn:
        conn.execute("DELETE FROM embeddings WHERE chunk_id = (SELECT min(chunk_id) FROM embeddings)")
    report = run_doctor(kb)
    assert ("integrity", None) in _checks(report)
    finding = next(f for f in report.findings if f.check == "integrity")
    assert "without an embedding" in finding.message and finding.fix == "groove index --force"
    assert report.exit_code == 1


def test_an_embedding_of_the_wrong_dimension_is_reported(kb):
    kb.close()
    with sqlite3.connect(kb.db_path) as conn:
        conn.execute("UPDATE embeddings SET vector = zeroblob(16) WHERE chunk_id = "
                     "(SELECT min(chunk_id) FROM embeddings)")
    report = run_doctor(kb)
    assert any("dimension" in f.message for f in report.findings if f.check == "integrity")


def test_a_missing_full_text_index_is_reported_and_groove_index_rebuilds_it(kb):
    kb.close()
    shutil.rmtree(fulltext_path(kb.db_path))
    report = run_doctor(kb)
    assert _checks(report) == [("full-text", None)]
    [finding] = report.findings
    assert "missing" in finding.message and finding.fix.startswith("groove index --kb-path")
    assert not fulltext_path(kb.db_path).exists()  # doctor only reads
    assert "[FAIL] full-text: 1 finding(s)" in report.render_text()
    kb.index()
    assert run_doctor(kb).findings == []


def test_a_stale_full_text_index_is_reported(kb):
    kb.close()
    with sqlite3.connect(kb.db_path) as conn:  # what a crash between the two commits leaves
        conn.execute("UPDATE index_meta SET value = value + 1 WHERE key = 'text_generation'")
    report = run_doctor(kb)
    [finding] = report.findings
    assert finding.check == "full-text" and "stale" in finding.message


def test_doctor_changes_nothing(kb):
    (kb.kb_path / "cooking/bread.md").unlink()
    before = {d.path for d in kb.store.list_documents()}
    run_doctor(kb)
    run_doctor(kb)
    assert {d.path for d in kb.store.list_documents()} == before


def test_held_back_documents_say_why(kb):
    root = kb.kb_path
    os.link(root / "eng/async.md", root / "async-copy.txt")  # async.md now has 2 links
    (root / ".grooveignore").write_text("cooking/\n", encoding="utf-8")
    report = run_doctor(kb)
    by_path = {f.path: f for f in report.findings}
    assert "hard link" in by_path["eng/async.md"].message
    assert "single link" in by_path["eng/async.md"].fix
    assert "excluded" in by_path["cooking/bread.md"].message


def test_new_and_unreadable_files_on_disk_are_reported(kb):
    root = kb.kb_path
    (root / "new.md").write_text("# New\n\nA note written after the last index run.\n")
    (root / "latin1.md").write_bytes("# Caf\xe9\n\nna\xefve\n".encode("latin-1"))
    report = run_doctor(kb)
    by_path = {f.path: f for f in report.findings}
    assert by_path["new.md"].message == "on disk but not indexed yet"
    assert "UTF-8" in by_path["latin1.md"].message


def test_a_changed_file_is_reported_as_stale(kb):
    (kb.kb_path / "cooking/bread.md").write_text("# Bread\n\nNow with rye flour.\n")
    report = run_doctor(kb)
    assert [f.message for f in report.findings] == [
        "changed on disk since it was indexed; searches return the old text"]


def test_a_model_mismatch_names_the_rebuild_command(tmp_path, write_files, make_kb, kb):
    other = make_kb(kb.kb_path, model="bge-small-en-v1.5")
    report = run_doctor(other)
    [finding] = [f for f in report.findings if f.check == "metadata"]
    assert "bge-small-en-v1.5" in finding.message
    assert finding.fix.startswith("groove index --force --model bge-small-en-v1.5")


def test_the_recorded_model_is_judged_by_the_embedder_registry(kb):
    from groove.checks.doctor import _model_available

    [unknown] = _model_available(kb, "no-such-model", 384)
    assert "does not know" in unknown.message and "multilingual-e5-small" in unknown.message
    assert _model_available(kb, "multilingual-e5-small", 384) == []
    assert _model_available(kb, "openai:text-embedding-3-small", 1536) == []  # never called


def test_grooveseek_leftovers_are_reported_and_never_opened(tmp_path, make_kb):
    import os
    import shlex

    parent = tmp_path / "home"
    kb_dir = parent / "notes"
    kb_dir.mkdir(parents=True)
    (kb_dir / "a.md").write_text("# A\n\nalpha notes\n", encoding="utf-8")
    old_db = parent / ".groove.db"
    old_db.write_bytes(b"not even sqlite")  # groove must not open it (it would fail)
    os.chmod(old_db, 0)  # and cannot read it: existence is all that is checked
    (kb_dir / ".kb-mcpignore").write_text("drafts/\n", encoding="utf-8")
    (kb_dir / "drafts").mkdir()
    (kb_dir / "drafts" / "d.md").write_text("# D\n\ndraft notes\n", encoding="utf-8")
    kb = make_kb(kb_dir)
    kb.index()
    from groove.checks.doctor import run_doctor

    report = run_doctor(kb)
    found = {f.path: f for f in report.findings if f.check == "grooveseek"}
    assert set(found) == {str(old_db), str(kb_dir / ".kb-mcpignore")}
    assert found[str(old_db)].fix == f"rm {shlex.quote(str(old_db))}"
    assert found[str(kb_dir / ".kb-mcpignore")].fix.startswith("mv ")
    assert "match 1 indexed document(s): drafts/d.md" in found[str(kb_dir / ".kb-mcpignore")].message
    assert "[FAIL] grooveseek: 2 finding(s)" in report.render_text()
    assert old_db.stat().st_size == len(b"not even sqlite")  # untouched
    (kb_dir / ".grooveignore").write_text("tmp/\n", encoding="utf-8")
    again = {f.path: f.fix for f in run_doctor(kb).findings if f.check == "grooveseek"}
    assert again[str(kb_dir / ".kb-mcpignore")].startswith("copy its patterns into")


def test_grooveseek_index_is_named_once_on_the_first_build(tmp_path, make_kb, caplog):
    parent = tmp_path / "home"
    kb_dir = parent / "notes"
    kb_dir.mkdir(parents=True)
    (kb_dir / "a.md").write_text("# A\n\nalpha notes\n", encoding="utf-8")
    (parent / ".groove.db").write_bytes(b"GrooveSeek's")
    kb = make_kb(kb_dir)
    with caplog.at_level("WARNING", logger="groove"):
        kb.index()
        kb.index()  # the index exists now: nothing more is said
    notes = [r.getMessage() for r in caplog.records if "GrooveSeek kept its index" in r.getMessage()]
    assert len(notes) == 1 and f"rm {parent / '.groove.db'}" in notes[0]
    assert (parent / ".groove.db").read_bytes() == b"GrooveSeek's"


def test_an_index_configured_beside_the_kb_is_not_a_leftover(tmp_path):
    from groove.checks.leftovers import grooveseek_index

    kb_dir = tmp_path / "notes"
    kb_dir.mkdir()
    (tmp_path / ".groove.db").write_bytes(b"x")
    assert grooveseek_index(kb_dir, tmp_path / ".groove.db") is None
    assert grooveseek_index(kb_dir, kb_dir / ".groove.db") is not None


def test_every_kind_of_finding_shows_in_the_text_report():
    import inspect
    import re

    from groove.checks import doctor

    kinds = set(re.findall(r'Finding\(\s*"([a-z-]+)"', inspect.getsource(doctor)))
    assert {"integrity", "full-text", "build"} <= kinds <= set(doctor.CHECKS)
    for kind in kinds:
        report = doctor.DoctorReport(index="x.db", findings=[doctor.Finding(kind, "broken", "fix it")])
        assert f"[FAIL] {kind}: 1 finding(s)" in report.render_text()


@pytest.mark.slow  # loads the bundled model on onnxruntime (converted once, seconds)
def test_doctor_loads_the_engine_the_knowledge_base_runs(kb, make_kb, tmp_path, monkeypatch):
    """With ``embedding_engine = "onnx"`` doctor checks the onnx engine of the model, not
    the other engine of the same model."""
    pytest.importorskip("onnxruntime")
    import groove.embedders as embedders

    loaded = []
    real = embedders.get_embedder

    def watched(model_id, **kwargs):
        made = real(model_id, **kwargs)
        loaded.append(made.engine)
        return made

    monkeypatch.setattr(embedders, "get_embedder", watched)
    cache = tmp_path / "models"
    onnx_kb = make_kb(kb.kb_path, embedding_engine="onnx", model_cache_dir=str(cache))
    report = run_doctor(onnx_kb)
    assert not [f for f in report.findings if f.check == "metadata"], report.findings
    assert loaded == ["onnx"]
