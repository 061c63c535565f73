"""`groove doctor` from the shell: exit 0 clean, 1 findings, 2 could not run."""

from __future__ import annotations

import json

NOTES = {
    "a.md": "# A\n\n## One\n\nSome text that is long enough to be a real chunk of notes.\n",
    "b.md": "# B\n\n## Two\n\nAnother note with enough words in it to pass the filter.\n",
}


def test_clean_index_exits_0(kb_dir, run):
    run("index", "--kb-path", str(kb_dir), "-q")
    result = run("doctor", "--kb-path", str(kb_dir))
    assert result.exit_code == 0, result.stdout
    assert "No problems found." in result.stdout


def test_findings_exit_1_in_text_and_json(kb_dir, run):
    run("index", "--kb-path", str(kb_dir), "-q")
    (kb_dir / "b.md").unlink()
    text = run("doctor", "--kb-path", str(kb_dir))
    assert text.exit_code == 1 and "b.md" in text.stdout and "fix: groove index" in text.stdout
    as_json = run("doctor", "--kb-path", str(kb_dir), "--format", "json")
    assert as_json.exit_code == 1
    data = json.loads(as_json.stdout)
    assert data["ok"] is False
    assert [(f["check"], f["path"]) for f in data["findings"]] == [("servability", "b.md")]


def test_no_index_exits_2(kb_dir, run):
    text = run("doctor", "--kb-path", str(kb_dir))
    assert text.exit_code == 2 and text.stdout == "" and "no index" in text.stderr
    as_json = run("doctor", "--kb-path", str(kb_dir), "--format", "json")
    assert as_json.exit_code == 2 and "no index" in json.loads(as_json.stdout)["error"]


def test_a_coarsely_chunked_file_is_reported_with_its_fix(kb_dir, run):
    """Past max_chunks_per_file a file is chunked coarsely (not cut short); doctor says so."""
    (kb_dir / "long.md").write_text("".join(
        f"## Part {i}\n\nThe body of part {i}, with enough words to stand alone.\n\n"
        for i in range(12)))
    (kb_dir / "groove.toml").write_text("max_chunks_per_file = 4\n")
    assert run("index", "--kb-path", str(kb_dir), "-q").exit_code == 0
    as_json = run("doctor", "--kb-path", str(kb_dir), "--format", "json")
    data = json.loads(as_json.stdout)
    assert as_json.exit_code == 1 and data["facts"]["chunk_policy"] == "whole-file"
    [finding] = data["findings"]
    assert (finding["check"], finding["path"]) == ("chunking", "long.md")
    assert "max_chunks_per_file" in finding["fix"]
    text = run("doctor", "--kb-path", str(kb_dir))
    assert "[FAIL] chunking: 1 finding(s)" in text.stdout and "chunked coarsely" in text.stdout


def test_a_source_file_chunked_without_definitions_is_reported(kb_dir, run):
    """Over the cap a source file is cut by lines (tagged); doctor names it and why."""
    (kb_dir / "many.py").write_text("\n\n".join(
        f"def function_number_{i}():\n    return {i} * 1000" for i in range(12)))
    (kb_dir / "groove.toml").write_text(
        'max_chunks_per_file = 4\n[parsers]\nenabled = ["md", "python"]\n')
    assert run("index", "--kb-path", str(kb_dir), "-q").exit_code == 0
    data = json.loads(run("doctor", "--kb-path", str(kb_dir), "--format", "json").stdout)
    [finding] = data["findings"]
    assert (finding["check"], finding["path"]) == ("chunking", "many.py")
    assert "chunked without definitions" in finding["message"]
    assert "max_chunks_per_file (4)" in finding["message"]


def test_an_index_from_before_the_whole_file_policy_is_reported_until_forced(kb_dir, run):
    import sqlite3

    assert run("index", "--kb-path", str(kb_dir), "-q").exit_code == 0
    with sqlite3.connect(kb_dir / ".groove.db") as conn:
        conn.execute("UPDATE index_meta SET value = 'legacy' WHERE key = 'chunk_policy'")
    data = json.loads(run("doctor", "--kb-path", str(kb_dir), "--format", "json").stdout)
    assert [(f["check"], f["fix"]) for f in data["findings"]] == [
        ("chunking", "groove index --force")]
    assert run("index", "--kb-path", str(kb_dir), "-q").exit_code == 0  # not enough
    assert json.loads(run("doctor", "--kb-path", str(kb_dir), "--format", "json").stdout)[
        "findings"]
    assert run("index", "--kb-path", str(kb_dir), "--force", "-q").exit_code == 0
    assert run("doctor", "--kb-path", str(kb_dir)).exit_code == 0


def test_files_left_by_a_killed_force_rebuild_are_reported(tmp_path):
    """``groove index --force`` killed with SIGKILL while it builds aside: doctor names the
    leftovers (the index in use is untouched), and the next ``--force`` clears them."""
    import os
    import signal
    import subprocess
    import sys
    import time

    kb = tmp_path / "kb"
    kb.mkdir()
    for d in range(24):
        body = " ".join(f"word{(d * 13 + i) % 97} topic{d % 7}" for i in range(30))
        (kb / f"note-{d:02}.md").write_text(f"# Note {d}\n\n{body}\n", encoding="utf-8")

    def groove(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "groove", *args, "--kb-path", str(kb)],
                              capture_output=True, text=True, timeout=600, env=dict(os.environ))

    assert groove("index").returncode == 0
    rebuild = kb / ".groove.db.rebuild"
    proc = subprocess.Popen([sys.executable, "-m", "groove", "index", "--force", "--kb-path",
                             str(kb)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not rebuild.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "the rebuild finished before it could be interrupted"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    doctor = groove("doctor")
    assert doctor.returncode == 1
    assert "an interrupted `groove index --force` left" in doctor.stdout
    assert ".groove.db.rebuild" in doctor.stdout and "the index in use is not affected" \
        in doctor.stdout
    assert groove("index", "--force").returncode == 0
    assert not rebuild.exists() and groove("doctor").returncode == 0
