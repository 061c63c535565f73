"""``groove search``: what a user sees for exclusions, filters that match nothing, and an
empty answer (GrooveSeek v1.1 / the first hour, docs/search.md)."""

from __future__ import annotations

import json
from typing import Any

NOTES = {
    "guide/tokio.md": "---\ncategory: guide\ntags: [rust]\nstatus: active\n---\n# Tokio runtime\n\n"
                      "The tokio runtime schedules async tasks on a thread pool.\n",
    "guide/threads.md": "---\ncategory: guide\ntags: [rust]\n---\n# Threads\n\n"
                        "Spawning operating system threads for blocking work, not async.\n",
    "howto/cargo.md": "---\ncategory: howto\n---\n# Cargo workspaces\n\n"
                      "A cargo workspace shares one lock file between crates.\n",
}
INDEXED = True


def search(run, kb_dir, query: str, *flags: str, exit_code: int = 0) -> Any:
    result = run("search", "--kb-path", str(kb_dir), "--format", "json", *flags, "--", query)
    assert result.exit_code == exit_code, result.output
    return json.loads(result.stdout) if exit_code == 0 else result


def test_excluded_terms_are_echoed_and_an_exclusion_only_query_is_refused(kb_dir, run):
    answer = search(run, kb_dir, "runtime threads -async -\"thread pool\"")
    assert answer["filter_applied"]["excluded_terms"] == ["async", "thread pool"]
    assert "guide/tokio.md" not in {hit["path"] for hit in answer["results"]}
    assert "excluded_terms" not in search(run, kb_dir, "runtime threads")["filter_applied"]
    refused = search(run, kb_dir, "-async", exit_code=2)
    assert refused.stdout == ""
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "'-async' holds only exclusions" in lines[0]
    assert "Traceback" not in refused.stderr


def test_a_golden_query_of_exclusions_only_is_refused_when_the_file_loads(kb_dir, run):
    (kb_dir / ".groove-eval.yml").write_text(
        "queries:\n  - id: q1\n    query: '-async -tokio'\n    expected: [{path: guide/tokio.md}]\n")
    result = run("eval", "--kb-path", str(kb_dir))
    assert result.exit_code == 2
    assert "queries[0] (id 'q1')" in result.stderr and "holds only exclusions" in result.stderr


def test_filters_that_can_match_nothing_say_so(kb_dir, run):
    (kb_dir / "groove-schema.toml").write_text("[fields.status]\n")
    assert run("index", "--kb-path", str(kb_dir), "-q").exit_code == 0
    undeclared = run("search", "--kb-path", str(kb_dir), "--format", "json", "tokio",
                     "--field", "nosuch=x")
    assert undeclared.exit_code == 0 and json.loads(undeclared.stdout)["results"] == []
    note = ("fields: 'nosuch' is not a declared field (groove-schema.toml declares 'status'), "
            "so no document can match it")
    assert json.loads(undeclared.stdout)["notes"] == [note]
    assert f"note: {note}" in undeclared.stderr
    category = search(run, kb_dir, "tokio", "--category", "Guide")
    assert category["results"] == []
    assert category["notes"] == ["category: no indexed document has 'Guide' "
                                 "(it holds 'guide', 'howto')"]
    language = run("search", "--kb-path", str(kb_dir), "tokio", "--language", "cobol")
    assert language.exit_code == 2 and language.stdout == ""
    assert "languages: 'cobol' is not a source language groove reads" in language.stderr
    assert "python, rust" in language.stderr
    # a language groove reads but the index does not hold
    rust = search(run, kb_dir, "tokio", "--language", "rust")
    assert rust["results"] == [] and rust["notes"] == [
        "languages: no indexed document has 'rust' (it holds none)"]
    # an answer that can be found says nothing
    assert "notes" not in search(run, kb_dir, "tokio", "--category", "guide")


def test_an_empty_text_answer_says_there_are_no_results(kb_dir, run):
    result = run("search", "--kb-path", str(kb_dir), "--format", "text", "tokio",
                 "--path-glob", "nothing/**")
    assert result.exit_code == 0
    assert result.stdout == "no results\n"
