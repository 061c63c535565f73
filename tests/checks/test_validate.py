"""``groove validate``: each schema rule, schema errors, file selection and the report formats."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from groove.checks.validate import SCHEMA_FILENAME, run_validate
from groove.config import Config
from groove.errors import GrooveError
from groove.kb import KnowledgeBase


def _kb(root: Path, files: dict[str, str], schema: str | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    if schema is not None:
        (root / SCHEMA_FILENAME).write_text(textwrap.dedent(schema), encoding="utf-8")
    return root


def _opened(root: Path) -> KnowledgeBase:
    """The knowledge base at ``root`` with the built-in defaults (validate needs no index)."""
    return KnowledgeBase(Config.defaults_for(root))


def _messages(report) -> list[str]:
    return [v.message for v in report.violations]


def _one(tmp_path: Path, schema: str, frontmatter: str) -> list[str]:
    root = _kb(tmp_path / "kb", {"note.md": f"---\n{frontmatter}\n---\n# Note\n\nbody\n"}, schema)
    return _messages(run_validate(_opened(root)))


def test_no_schema_file_is_clean_with_a_note(tmp_path):
    root = _kb(tmp_path / "kb", {"a.md": "# A\n"})
    report = run_validate(_opened(root))
    assert report.exit_code == 0 and report.violations == []
    assert any("no schema file" in n for n in report.notes)


def test_an_explicit_schema_that_does_not_exist_is_an_error(tmp_path):
    root = _kb(tmp_path / "kb", {"a.md": "# A\n"})
    with pytest.raises(GrooveError, match="does not exist") as info:
        run_validate(_opened(root), tmp_path / "missing.toml")
    assert info.value.exit_code == 2


@pytest.mark.parametrize(
    ("schema", "named"),
    [
        ('[fields.title]\ntype = "text"\n', ["'title'", "'type'"]),
        ('[fields.title]\nrequierd = true\n', ["'title'", "'requierd'"]),
        ('[fields.title]\npattern = "(["\n', ["'title'", "'pattern'"]),
        ('[fields.title]\nmin_length = -1\n', ["'title'", "'min_length'"]),
        ('[fields.title]\nmin_length = 5\nmax_length = 2\n', ["'title'", "'min_length'"]),
        ('[fields.n]\ntype = "integer"\nmax_length = 2\n', ["'n'", "'max_length'"]),
        ('[fields.title]\nenum = []\n', ["'title'", "'enum'"]),
        ('[fields.title]\nrequired = "yes"\n', ["'title'", "'required'"]),
        ("[fields.title\n", ["not valid TOML"]),
        ('title = "x"\n', ["'title'", "[fields."]),
    ],
)
def test_a_bad_schema_is_refused_naming_field_and_key(tmp_path, schema, named):
    root = _kb(tmp_path / "kb", {"a.md": "# A\n"}, schema)
    with pytest.raises(GrooveError) as info:
        run_validate(_opened(root))
    assert info.value.exit_code == 2
    for part in named:
        assert part in str(info.value)


def test_required_reports_the_missing_field(tmp_path):
    msgs = _one(tmp_path, "[fields.title]\nrequired = true\n", "topic: x")
    assert msgs == ["required field 'title' is missing"]


def test_required_field_that_is_empty_is_a_violation_unless_allowed(tmp_path):
    assert _one(tmp_path / "1", "[fields.title]\nrequired = true\n", 'title: ""') == [
        "field 'title' is empty"]
    assert _one(tmp_path / "2", "[fields.title]\nrequired = true\nallow_empty = true\n",
                "title:") == []
    assert _one(tmp_path / "3", "[fields.tags]\nallow_empty = false\n", "tags: []") == [
        "field 'tags' is empty"]
    assert _one(tmp_path / "4", '[fields.tags]\ntype = "list"\n', "tags: []") == []


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [
        ("string", "x: hello", "x: 3"),
        ("integer", "x: 3", "x: 3.5"),
        ("float", "x: 3", "x: nope"),
        ("boolean", "x: true", "x: 1"),
        ("date", "x: 2024-02-29", "x: '2023-02-30'"),
        ("list", "x: [a, b]", "x: a, b"),
    ],
)
def test_type_rule(tmp_path, kind, good, bad):
    schema = f'[fields.x]\ntype = "{kind}"\n'
    assert _one(tmp_path / "good", schema, good) == []
    [msg] = _one(tmp_path / "bad", schema, bad)
    assert "'x'" in msg and kind in msg


def test_integer_refuses_booleans(tmp_path):
    assert _one(tmp_path, '[fields.x]\ntype = "integer"\n', "x: true")


def test_pattern_applies_to_strings_and_each_list_item(tmp_path):
    schema = '[fields.slug]\npattern = "^[a-z-]+$"\n[fields.tags]\npattern = "^[a-z]+$"\n'
    msgs = _one(tmp_path, schema, "slug: Bad Slug\ntags: [ok, NotOk]")
    assert len(msgs) == 2
    assert "'Bad Slug'" in msgs[0] and "'NotOk'" in msgs[1]


def test_enum_rule(tmp_path):
    schema = '[fields.status]\nenum = ["draft", "done"]\n'
    assert _one(tmp_path / "ok", schema, "status: done") == []
    [msg] = _one(tmp_path / "bad", schema, "status: wip")
    assert '"wip"' in msg and '"draft", "done"' in msg


def test_min_and_max_length_count_characters_or_items(tmp_path):
    schema = "[fields.title]\nmin_length = 3\nmax_length = 5\n[fields.tags]\nmax_length = 1\n"
    assert _one(tmp_path / "ok", schema, "title: abcd\ntags: [a]") == []
    short = _one(tmp_path / "short", schema, "title: ab")
    assert short == ["field 'title' has 2 characters, fewer than min_length 3"]
    long = _one(tmp_path / "long", schema, "title: abcdef\ntags: [a, b]")
    assert long == ["field 'title' has 6 characters, more than max_length 5",
                    "field 'tags' has 2 items, more than max_length 1"]


def test_violations_carry_the_line_of_the_offending_key(tmp_path):
    root = _kb(tmp_path / "kb", {"n.md": "---\ntitle: ok\ndate: 3\nstatus: wip\n---\n# N\n"},
               '[fields.status]\nenum = ["done"]\n[fields.date]\ntype = "date"\n'
               "[fields.owner]\nrequired = true\n")
    report = run_validate(_opened(root))
    lines = {v.field: v.line for v in report.violations}
    assert lines == {"status": 4, "date": 3, "owner": 1}


def test_broken_frontmatter_is_one_violation(tmp_path):
    root = _kb(tmp_path / "kb", {"n.md": "---\ntitle: [unclosed\n---\n# N\n"},
               "[fields.title]\nrequired = true\n")
    [violation] = run_validate(_opened(root)).violations
    assert "not valid YAML" in violation.message


def test_only_files_the_walk_would_index_are_checked(tmp_path):
    root = _kb(tmp_path / "kb", {
        "a.md": "# no frontmatter\n",
        "notes.txt": "plain text is not Markdown\n",
        ".obsidian/x.md": "# excluded dir\n",
        "drafts/y.md": "# ignored\n",
        ".grooveignore": "drafts/\n",
    }, "[fields.title]\nrequired = true\n")
    report = run_validate(_opened(root))
    assert [v.path for v in report.violations] == ["a.md"]
    assert report.files_checked == 1


def test_fail_fast_stops_at_the_first_violation(tmp_path):
    root = _kb(tmp_path / "kb", {"a.md": "# A\n", "b.md": "# B\n"},
               "[fields.title]\nrequired = true\n[fields.owner]\nrequired = true\n")
    assert len(run_validate(_opened(root)).violations) == 4
    report = run_validate(_opened(root), fail_fast=True)
    assert len(report.violations) == 1 and report.exit_code == 1


def test_report_formats(tmp_path):
    root = _kb(tmp_path / "kb", {"dir/a,b.md": "---\nstatus: wip\n---\n# A\n"},
               '[fields.status]\nenum = ["done"]\n')
    report = run_validate(_opened(root))
    assert report.render_text().splitlines()[0].startswith("dir/a,b.md:2: field 'status'")
    github = report.render_github(cwd=tmp_path).splitlines()[0]
    assert github.startswith("::error file=kb/dir/a%2Cb.md,line=2::field 'status' value")
    data = report.to_json()
    assert data["ok"] is False and data["violations"][0] == {
        "path": "dir/a,b.md", "line": 2, "field": "status",
        "message": report.violations[0].message, "kind": "enum_mismatch"}


def test_a_schema_file_linked_to_outside_the_kb_is_refused_by_index_and_validate(tmp_path):
    """Through the CLI: the link is named, never followed, and nothing is indexed."""
    import os
    import subprocess
    import sys

    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("---\nstatus: x\n---\n# A\n\nalpha\n", encoding="utf-8")
    outside = tmp_path / "outside.toml"
    outside.write_text("[fields.status]\nrequired = true\n", encoding="utf-8")
    (kb / SCHEMA_FILENAME).symlink_to(outside)
    for command in ("index", "validate"):
        done = subprocess.run([sys.executable, "-m", "groove", command, "--kb-path", str(kb)],
                              capture_output=True, text=True, timeout=60, env=dict(os.environ))
        assert done.returncode == 2, done.stderr
        assert f"the schema file {kb / SCHEMA_FILENAME} is a symbolic link" in done.stderr
    assert not (kb / ".groove.db").exists()
