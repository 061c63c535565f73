"""`groove index`, `status` and `search` as a shell user sees them: streams and exit codes."""

from __future__ import annotations

import json

NOTES = {
    "a/first.md": "# First\n\n## Tokio\n\nUse tokio::spawn for async tasks that run concurrently.\n",
    "b/second.md": ("# Second\n\n## お茶\n\n煎茶はお湯を少し冷ましてから淹れると甘みが出る。\n"
                    "二煎目は蒸らし時間を短くして、少し熱めのお湯を使うとよい。\n"),
}


def test_status_without_index_exits_2_with_empty_stdout(kb_dir, run):
    result = run("status", "--kb-path", str(kb_dir))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "no index" in result.stderr


def test_index_prints_summary_on_stdout_and_files_on_stderr(kb_dir, run):
    result = run("index", "--kb-path", str(kb_dir))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("indexed 2, updated 0, renamed 0, deleted 0, skipped 0, unchanged 0")
    assert "indexed a/first.md" in result.stderr
    again = run("index", "--kb-path", str(kb_dir), "--quiet")
    assert "unchanged 2" in again.stdout
    assert "a/first.md" not in again.stderr


def test_progress_without_tty_prints_periodic_lines(kb_dir, run):
    result = run("index", "--kb-path", str(kb_dir), "--progress")
    assert "Progress: 2/2 (100%)" in result.stderr


def test_status_lines_after_indexing(kb_dir, run):
    run("index", "--kb-path", str(kb_dir), "-q")
    result = run("status", "--kb-path", str(kb_dir))
    assert result.exit_code == 0
    lines = dict(line.split(": ", 1) for line in result.stdout.splitlines())
    assert lines["Documents"] == "2"
    assert lines["Chunks"] == "2"
    assert lines["Model"] == "multilingual-e5-small"
    assert lines["Context mode"] == "static"  # contextual mode is the default
    assert lines["Index"] == str(kb_dir / ".groove.db")
    assert lines["Last indexed"] != "never"
    assert lines["Unreadable tags"] == "0"


def test_search_builds_the_index_when_missing(kb_dir, run):
    result = run("search", "--kb-path", str(kb_dir), "how do I start concurrent work in tokio")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["results"][0]["path"] == "a/first.md"
    assert (kb_dir / ".groove.db").exists()


def test_search_text_format_is_blocks_separated_by_dashes(kb_dir, run):
    result = run("search", "--kb-path", str(kb_dir), "--format", "text", "--limit", "2", "tokio spawn")
    blocks = result.stdout.strip().split("\n---\n")
    assert len(blocks) == 2
    assert blocks[0].startswith("path: a/first.md\nheading: Tokio\nscore: ")


def test_bad_argument_is_refused_before_any_model_loads(kb_dir, monkeypatch, run):
    import groove.embedders

    def boom(*a, **k):
        raise AssertionError("model loaded for a bad argument")

    monkeypatch.setattr(groove.embedders, "get_embedder", boom)
    result = run("search", "--kb-path", str(kb_dir), "--limit", "0", "anything")
    assert result.exit_code == 2
    assert "limit" in result.stderr and "100" in result.stderr


def test_bad_config_value_names_the_key(kb_dir, tmp_path, run):
    cfg = tmp_path / "groove.toml"
    cfg.write_text(f'kb_path = "{kb_dir}"\n[search.fusion]\nrrf_k = -1\n')
    result = run("status", "--config", str(cfg))
    assert result.exit_code == 2
    assert "search.fusion.rrf_k" in result.stderr
