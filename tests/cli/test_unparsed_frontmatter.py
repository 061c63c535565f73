"""A frontmatter that does not parse (GrooveSeek v1.7/v1.8): the document is indexed without
it, tagged ``frontmatter:unparsed``, counted by ``index``, ``status`` and ``doctor``, reported
by ``validate`` as ``frontmatter_unparsed``; ``[index] fail_on_frontmatter_error`` fails the run."""

from __future__ import annotations

import json

BODY = ("The harbour crane is inspected every spring; its cables are replaced when the "
        "inspector finds broken strands, and the schedule is posted at the gate.\n")
NOTES = {
    "good.md": "---\ntitle: Good\ntags: [ok]\n---\n# Good\n\n" + BODY,
    "broken.md": "---\ntitle: [unclosed\n---\n# Broken\n\n" + BODY,
}


def test_a_broken_frontmatter_is_indexed_tagged_and_counted_everywhere(kb_dir, run):
    index = run("index", "--kb-path", str(kb_dir), "--json")
    assert index.exit_code == 0, index.stderr
    assert json.loads(index.stdout)["frontmatter_unparsed"] == 1
    assert "broken.md: frontmatter is not valid YAML" in index.stderr
    tagged = run("search", "harbour crane", "--kb-path", str(kb_dir), "--tag-any",
                 "frontmatter:unparsed")
    assert [hit["path"] for hit in json.loads(tagged.stdout)["results"]] == ["broken.md"]
    status = json.loads(run("status", "--kb-path", str(kb_dir), "--format", "json").stdout)
    assert status["frontmatter_unparsed"] == 1 and status["documents"] == 2
    assert "Unparsed frontmatter: 1" in run("status", "--kb-path", str(kb_dir)).stdout
    doctor = run("doctor", "--kb-path", str(kb_dir), "--format", "json")
    assert doctor.exit_code == 1
    found = [f for f in json.loads(doctor.stdout)["findings"] if f["check"] == "frontmatter"]
    assert [f["path"] for f in found] == ["broken.md"]
    (kb_dir / "groove-schema.toml").write_text("[fields.title]\n")
    validate = run("validate", "--kb-path", str(kb_dir), "--format", "json")
    assert validate.exit_code == 1
    assert [(v["path"], v["kind"]) for v in json.loads(validate.stdout)["violations"]] == [
        ("broken.md", "frontmatter_unparsed")]


def test_fail_on_frontmatter_error_fails_the_run_after_it_finished(kb_dir, tmp_path, run):
    config = tmp_path / "groove.toml"
    config.write_text(f'kb_path = "{kb_dir.as_posix()}"\n\n[index]\nfail_on_frontmatter_error = true\n')
    failed = run("index", "--config", str(config))
    assert failed.exit_code == 1
    assert "error: 1 document(s) with a frontmatter that does not parse" in failed.stderr
    assert "fail_on_frontmatter_error = true" in failed.stderr
    # the run itself finished: both documents are in the index
    assert json.loads(run("status", "--config", str(config), "--format", "json").stdout)[
        "documents"] == 2
    (kb_dir / "broken.md").write_text("---\ntitle: Repaired\n---\n# Broken\n\nFixed now.\n")
    repaired = run("index", "--config", str(config))
    assert repaired.exit_code == 0, repaired.stderr
    assert json.loads(run("status", "--config", str(config), "--format", "json").stdout)[
        "frontmatter_unparsed"] == 0
