"""`groove links`, `groove graph --edges` and doctor's links check over the vault fixture."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

VAULT = Path(__file__).parent.parent / "fixtures" / "vault"
NOTES = {p.relative_to(VAULT).as_posix(): p.read_text(encoding="utf-8")
         for p in sorted(VAULT.rglob("*.md"))}
INDEXED = True

#: Every pair of documents a link of the fixture joins (linking document first); a note's
#: links to itself are not edges.
FIXTURE_EDGES = {
    ("Home.md", "Rate limiting.md"), ("Home.md", "api/retries.md"),
    ("Home.md", "ops/runbook.md"), ("Home.md", "ops/My Note.md"),
    ("Home.md", "guides/overview.md"),
    ("Rate limiting.md", "api/retries.md"), ("api/retries.md", "Rate limiting.md"),
    ("api/overview.md", "api/retries.md"),
    ("api/client.md", "api/overview.md"), ("api/client.md", "api/retries.md"),
    ("guides/overview.md", "ops/runbook.md"), ("guides/overview.md", "api/retries.md"),
    ("ops/My Note.md", "Home.md"), ("ops/My Note.md", "Rate limiting.md"),
    ("projects/alpha/plan.md", "ops/runbook.md"), ("projects/alpha/plan.md", "Home.md"),
    ("projects/alpha/plan.md", "Rate limiting.md"),
}


def test_links_and_backlinks_as_text_and_json(kb_dir, run):
    text = run("links", "Home.md", "--kb-path", str(kb_dir))
    assert text.exit_code == 0, text.stderr
    assert text.stdout.startswith("12 links in Home.md\n")
    assert "  [[api/retries#Backoff]] -> api/retries.md#Backoff\n" in text.stdout
    assert "  [[Missing note]] -> no document (missing)\n" in text.stdout
    assert "  [[overview]] -> no document (ambiguous)\n" in text.stdout
    back = run("links", "ops/runbook.md", "--backlinks", "--format", "json",
               "--kb-path", str(kb_dir))
    answer = json.loads(back.stdout)
    assert answer["direction"] == "backlinks" and answer["truncated"] is False
    assert [(link["source"], link["heading"]) for link in answer["links"]] == [
        ("Home.md", None), ("Home.md", "restore"), ("guides/overview.md", None),
        ("guides/overview.md", "restore"), ("projects/alpha/plan.md", None)]  # by linking document, then where it links
    assert all(link["line"] and link["path"] == "ops/runbook.md" for link in answer["links"])


def test_links_refuses_what_is_not_an_indexed_document(kb_dir, run):
    missing = run("links", "nowhere.md", "--kb-path", str(kb_dir))
    assert missing.exit_code != 0 and "'nowhere.md' is not an indexed document" in missing.stderr
    escaping = run("links", "../Home.md", "--kb-path", str(kb_dir))
    assert escaping.exit_code != 0 and "'..'" in escaping.stderr


def _graph(run, kb_dir, *flags: str) -> dict:
    result = run("graph", "--kb-path", str(kb_dir), "--start", "Home.md", "--depth", "3",
                 "--fan-out", "20", *flags)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_graph_edges_links_shows_exactly_the_fixtures_links(kb_dir, run):
    graph = _graph(run, kb_dir, "--edges", "links")
    assert {n["path"] for n in graph["nodes"]} == set(NOTES)
    assert all(n["via"] == "link" and n["id"] == f"doc:{n['path']}" for n in graph["nodes"])
    assert {e["type"] for e in graph["edges"]} == {"link"}
    pairs = {(e["source"].removeprefix("doc:"), e["target"].removeprefix("doc:"))
             for e in graph["edges"]}
    assert pairs == FIXTURE_EDGES and len(graph["edges"]) == len(FIXTURE_EDGES)
    home_to_runbook = next(e for e in graph["edges"]
                           if e["source"] == "doc:Home.md" and e["target"] == "doc:ops/runbook.md")
    assert home_to_runbook["links"] == 2  # the embed and the Markdown link


def test_graph_depth_and_filters_bound_the_link_walk(kb_dir, run):
    near = _graph(run, kb_dir, "--edges", "links", "--depth", "1")
    assert {n["path"] for n in near["nodes"]} == {
        "Home.md", "Rate limiting.md", "api/retries.md", "ops/runbook.md", "ops/My Note.md",
        "guides/overview.md", "projects/alpha/plan.md"}  # its links and its backlinks
    cut = _graph(run, kb_dir, "--edges", "links", "--exclude-path", "api", "--max-nodes", "4")
    assert len(cut["nodes"]) == 4 and not any(n["path"].startswith("api/") for n in cut["nodes"])
    assert cut["truncated"] and cut["truncation"][0]["reason"] == "node_budget"


def test_graph_both_puts_links_first_and_types_every_edge(kb_dir, run):
    both = _graph(run, kb_dir, "--min-similarity", "0")  # the default: both
    kinds = [e["type"] for e in both["edges"]]
    assert "link" in kinds and "similarity" in kinds
    assert kinds == sorted(kinds)  # link edges come first
    assert both["nodes"][0]["id"] == "doc:Home.md"
    similar = _graph(run, kb_dir, "--edges", "similarity", "--min-similarity", "0")
    assert {e["type"] for e in similar["edges"]} == {"similarity"}
    assert not any(n.get("via") == "link" for n in similar["nodes"])


def test_dot_and_svg_draw_links_and_similarity_differently(kb_dir, run):
    base = ("graph", "--kb-path", str(kb_dir), "--start", "Home.md", "--min-similarity", "0",
            "--depth", "1")
    dot = run(*base, "--format", "dot").stdout
    assert '"doc:Home.md" -> "doc:ops/runbook.md" [label="2 links", color="#1d4ed8"' in dot
    assert "style=dashed" in dot
    svg = ET.fromstring(run(*base, "--format", "svg").stdout)
    lines = {line.get("class"): line for line in svg.iter("{http://www.w3.org/2000/svg}line")
             if line.get("class")}
    assert lines["edge-link"].get("stroke-dasharray") is None
    assert lines["edge-similarity"].get("stroke-dasharray") == "5,4"
    assert lines["edge-link"].get("stroke") != lines["edge-similarity"].get("stroke")
    text = run(*base, "--format", "text").stdout
    assert "\nlinks:\n  Home.md -> Rate limiting.md (3 links)\n" in text
    assert "\n  Home.md -> ops/runbook.md (2 links)\n" in text


def test_doctor_names_the_links_that_point_at_no_document(kb_dir, run):
    result = run("doctor", "--kb-path", str(kb_dir), "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["facts"]["links_unresolved"] == 4
    (finding,) = [f for f in report["findings"] if f["check"] == "links"]
    assert finding["message"].startswith("4 link(s) point at no document: Home.md: "
                                         "'Missing note' (missing); Home.md: 'overview' "
                                         "(ambiguous)")
