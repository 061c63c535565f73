"""`groove graph` from the shell: formats, defaults, bounds refused with exit 2."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

NOTES = {
    "rust/async.md": "# Async\n\n## Tasks\n\nSpawn tokio tasks to run futures concurrently.\n",
    "rust/tokio.md": "# Tokio\n\n## Runtime\n\nThe tokio runtime schedules async tasks on threads.\n",
    "food/bread.md": "# Bread\n\n## Starter\n\nFeed the sourdough starter flour and water daily.\n",
}
INDEXED = True


def test_default_output_is_json(kb_dir, run):
    result = run("graph", "--kb-path", str(kb_dir), "--start", "rust/async.md", "--depth", "1",
                 "--fan-out", "2", "--min-similarity", "0")
    assert result.exit_code == 0, result.stderr
    graph = json.loads(result.stdout)
    assert graph["nodes"][0]["path"] == "rust/async.md"
    # Floor 0 on the calibrated scale is "as similar as unrelated notes": bread is below it.
    assert {n["path"] for n in graph["nodes"][1:]} == {"rust/tokio.md"}
    assert graph["stats"]["total_nodes"] == 2 and graph["truncated"] is False


def test_max_nodes_and_exclude_path_flags(kb_dir, run):
    result = run("graph", "--kb-path", str(kb_dir), "--start", "rust/async.md", "--min-similarity",
                 "0", "--max-nodes", "2", "--exclude-path", "rust/tokio.md")
    graph = json.loads(result.stdout)
    assert [n["path"] for n in graph["nodes"]] == ["rust/async.md"]  # bread is unrelated
    assert graph["truncated"] is False  # nothing else was eligible


def test_svg_dot_and_text_formats(kb_dir, run):
    base = ("graph", "--kb-path", str(kb_dir), "--start", "rust/async.md", "--min-similarity", "0")
    svg = run(*base, "--format", "svg")
    assert svg.exit_code == 0
    assert ET.fromstring(svg.stdout).tag == "{http://www.w3.org/2000/svg}svg"
    dot = run(*base, "--format", "dot").stdout
    assert dot.startswith("digraph groove {") and "->" in dot
    text = run(*base, "--format", "text").stdout
    assert "path: rust/tokio.md" in text and "\n---\n" in text


@pytest.mark.parametrize(("flag", "value", "named"), [
    ("--depth", "9", "depth"), ("--fan-out", "50", "fan_out"),
    ("--min-similarity", "2", "min_similarity"), ("--seed-strategy", "x", "seed_strategy"),
    ("--max-nodes", "0", "max_nodes"), ("--max-seed-chunks", "5000", "max_seed_chunks"),
])
def test_bad_arguments_exit_2_naming_the_argument(kb_dir, flag, value, named, run):
    result = run("graph", "--kb-path", str(kb_dir), "--start", "rust/async.md", flag, value)
    assert result.exit_code == 2 and result.stdout == ""
    assert named in result.stderr


def test_unknown_or_escaping_start_exits_2(kb_dir, run):
    missing = run("graph", "--kb-path", str(kb_dir), "--start", "nope.md")
    assert missing.exit_code == 2 and "nope.md" in missing.stderr
    escaping = run("graph", "--kb-path", str(kb_dir), "--start", "../etc/passwd")
    assert escaping.exit_code == 2 and ".." in escaping.stderr


def test_model_is_checked_against_the_index(kb_dir, run):
    """GrooveSeek v1.0's `graph --model NAME`: the index's model answers, another is refused
    before anything loads, naming both and the rebuild."""
    same = run("graph", "--kb-path", str(kb_dir), "--start", "rust/async.md",
               "--model", "multilingual-e5-small", "--format", "text")
    assert same.exit_code == 0, same.stderr
    assert same.stdout.startswith("start: rust/async.md")
    other = run("graph", "--kb-path", str(kb_dir), "--start", "rust/async.md",
                "--model", "bge-small-en-v1.5")
    assert other.exit_code == 2 and other.stdout == ""
    assert "built with model 'multilingual-e5-small', not 'bge-small-en-v1.5'" in other.stderr
