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
