"""/api/admin/status in GrooveSeek's shape: the indexing object while a rebuild runs, the labels."""

from __future__ import annotations

import re

from groove.server.state import ServerState, config_source_label


def test_indexing_reports_since_when_and_progress_while_a_rebuild_runs(tmp_path, write_files,
                                                                        make_kb):
    kb = make_kb(write_files(tmp_path / "kb", {"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n"}))
    kb.index()
    state = ServerState(kb)
    idle = state.status()["indexing"]
    assert idle == {"active": False, "started_at": None, "progress": None}
    with state.exclusive_rebuild():
        busy = state.status()["indexing"]
    assert busy["active"] is True
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", busy["started_at"])
    assert busy["progress"] == {"current": 2, "total": 2}
    assert state.status()["watcher"] == {"active": False, "debounce_ms": 500, "state": "off"}


def test_config_source_labels_never_carry_a_path(tmp_path, write_files, make_kb, monkeypatch):
    kb_dir = write_files(tmp_path / "kb", {"a.md": "# A\n"})
    assert config_source_label(make_kb(kb_dir).config) == "NotFound"
    (kb_dir / "groove.toml").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    from groove.config import load_config

    assert config_source_label(load_config(kb_path=kb_dir)) == "KbPath"
    assert config_source_label(load_config(config_path=kb_dir / "groove.toml",
                                           kb_path=kb_dir)) == "Explicit"
    (tmp_path / "groove.toml").write_text("", encoding="utf-8")  # the current folder's wins
    assert config_source_label(load_config(kb_path=kb_dir)) == "Cwd"
