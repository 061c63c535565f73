"""`groove validate` from the shell: formats and exit codes 0 / 1 / 2."""

from __future__ import annotations

import json

NOTES = {
    "ok.md": "---\nstatus: done\n---\n# Ok\n",
    "bad.md": "---\ntitle: Bad\nstatus: wip\n---\n# Bad\n",
}


SCHEMA = '[fields.status]\nrequired = true\nenum = ["draft", "done"]\n'


def test_no_schema_exits_0_with_a_note_on_stderr(kb_dir, run):
    result = run("validate", "--kb-path", str(kb_dir))
    assert result.exit_code == 0 and "no schema file" in result.stderr


def test_violations_exit_1_in_every_format(kb_dir, run):
    (kb_dir / "groove-schema.toml").write_text(SCHEMA)
    text = run("validate", "--kb-path", str(kb_dir))
    assert text.exit_code == 1 and text.stdout.startswith("bad.md:3: field 'status' value")
    github = run("validate", "--kb-path", str(kb_dir), "--format", "github")
    assert github.exit_code == 1
    assert github.stdout.startswith("::error file=kb/bad.md,line=3::field 'status'")
    data = json.loads(run("validate", "--kb-path", str(kb_dir), "--format", "json").stdout)
    assert data["files_checked"] == 2 and [v["path"] for v in data["violations"]] == ["bad.md"]


def test_schema_option_and_schema_errors_exit_2(kb_dir, tmp_path, run):
    other = tmp_path / "schema.toml"
    other.write_text('[fields.title]\nrequired = true\n')
    result = run("validate", "--kb-path", str(kb_dir), "--schema", str(other), "--fail-fast")
    assert result.exit_code == 1 and result.stdout.startswith("ok.md:1: required field 'title'")
    other.write_text('[fields.title]\ntype = "txt"\n')
    broken = run("validate", "--kb-path", str(kb_dir), "--schema", str(other))
    assert broken.exit_code == 2 and "'title'" in broken.stderr and "'type'" in broken.stderr


def test_every_json_violation_has_a_kind(kb_dir, run):
    (kb_dir / "groove-schema.toml").write_text(
        SCHEMA + '\n[fields.title]\nrequired = true\ntype = "integer"\n'
        '\n[fields.code]\npattern = "^[A-Z]+$"\nmax_length = 2\n')
    (kb_dir / "more.md").write_text("---\nstatus: done\ntitle: 5\ncode: abc\nstray: x\n---\n# M\n")
    (kb_dir / "empty.md").write_text("---\nstatus: ''\ntitle: 1\n---\n# E\n")
    (kb_dir / "broken.md").write_text("---\nstatus: [\n---\n# B\n")
    data = json.loads(run("validate", "--kb-path", str(kb_dir), "--format", "json",
                          "--strict").stdout)
    kinds = {(v["path"], v["field"], v["kind"]) for v in data["violations"]}
    assert kinds == {
        ("bad.md", "status", "enum_mismatch"), ("bad.md", "title", "wrong_type"),
        ("ok.md", "title", "required_missing"),
        ("more.md", "code", "pattern_mismatch"), ("more.md", "code", "too_long"),
        ("more.md", "stray", "undeclared_field"),
        ("empty.md", "status", "empty_value"),
        ("broken.md", None, "frontmatter_unparsed"),
    }
