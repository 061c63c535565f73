"""``groove get`` and ``groove ls`` through the command line."""

from __future__ import annotations

import json

NOTES = {
    "guides/setup.md": "# Setup\n\n" + "".join(f"Step {i}: run the bootstrap script.\n"
                                               for i in range(1, 41)),
    "guides/rust/async.md": "# Async\n\nSpawn tasks with Tokio.\n",
    "notes/empty.md": "",
    "README.md": "# Readme\n\nTop-level overview.\n",
}


def test_get_one_document_prints_its_text_alone(kb_dir, run):
    run("index", "--kb-path", str(kb_dir), "-q")
    out = run("get", "--kb-path", str(kb_dir), "guides/rust/async.md")
    assert out.exit_code == 0 and out.stdout == NOTES["guides/rust/async.md"]
    window = run("get", "--kb-path", str(kb_dir), "guides/setup.md:5-6")
    assert window.stdout == "Step 3: run the bootstrap script.\nStep 4: run the bootstrap script.\n"


def test_get_a_glob_with_the_cut_stated(kb_dir, run):
    run("index", "--kb-path", str(kb_dir), "-q")
    out = run("get", "--kb-path", str(kb_dir), "guides/**", "--max-bytes", "200")
    assert out.exit_code == 0
    assert out.stdout.startswith("==> guides/rust/async.md (lines 1-3 of 3) <==\n# Async\n")
    assert "==> guides/setup.md (lines 1-7 of 42) <==\n# Setup\n" in out.stdout
    assert ("note: guides/setup.md: text cut at 200 bytes (max_bytes) after line 7 of 42; "
            "ask for 'guides/setup.md:8' for the rest") in out.stderr
    data = json.loads(run("get", "--kb-path", str(kb_dir), "guides/**", "--max-bytes", "200",
                          "--format", "json").stdout)
    assert [d["path"] for d in data["documents"]] == ["guides/rust/async.md", "guides/setup.md"]
    assert data["note"] == "1 of 2 document(s) cut at max_bytes (200 bytes each)"


def test_get_refuses_a_window_past_the_end_naming_the_line_count(kb_dir, run):
    run("index", "--kb-path", str(kb_dir), "-q")
    out = run("get", "--kb-path", str(kb_dir), "guides/setup.md:50")
    assert out.exit_code == 2 and out.stdout == ""
    assert out.stderr.strip().endswith(
        "error: guides/setup.md:50: line_start: 50 is past the end of 'guides/setup.md' "
        "(42 lines); accepted: 1..42")
    partly = run("get", "--kb-path", str(kb_dir), "README.md", "./README.md")
    assert partly.exit_code == 1 and partly.stdout == NOTES["README.md"]
    assert "write 'README.md'" in partly.stderr
    bad = run("get", "--kb-path", str(kb_dir), "README.md", "--max-total-bytes", "0")
    assert bad.exit_code == 2 and "max_total_bytes: 0 is out of range" in bad.stderr


def test_ls_lists_size_and_state(kb_dir, run):
    (kb_dir / "notes" / "broken.md").write_bytes(b"# Broken \xff\xfe not UTF-8\n")
    first = run("search", "--kb-path", str(kb_dir), "bootstrap")  # rows only: no embedding
    assert first.exit_code == 0
    listed = json.loads(run("ls", "--kb-path", str(kb_dir), "--format", "json").stdout)
    states = {item["path"]: item["state"] for item in listed}
    assert states["guides/setup.md"] == "full-text only"
    run("index", "--kb-path", str(kb_dir), "-q")
    out = run("ls", "--kb-path", str(kb_dir))
    lines = out.stdout.splitlines()
    assert [line.split()[-1] for line in lines if "skipped" not in line] == [
        "README.md", "guides/rust/async.md", "guides/setup.md", "notes/empty.md"]
    setup = next(line for line in lines if line.endswith("guides/setup.md"))
    assert setup.split()[0] == "embedded" and "1.4 KiB" in setup
    assert next(line for line in lines if "empty.md" in line).startswith("no text")
    broken = next(line for line in lines if "broken.md" in line)
    assert broken.startswith("skipped") and "UTF-8" in broken
    assert out.stderr.strip() == "5 listed: 3 embedded, 1 no text, 1 skipped"
    rust = run("ls", "--kb-path", str(kb_dir), "guides/")
    assert [line.split()[-1] for line in rust.stdout.splitlines()] == [
        "guides/rust/async.md", "guides/setup.md"]
    gone = run("ls", "--kb-path", str(kb_dir), "nowhere")
    assert gone.exit_code == 2 and "no indexed document or skipped file under 'nowhere'" in gone.stderr
