"""``groove search --format md|csv|files``, ``--explain`` and ``--min-score``, parsed back."""

from __future__ import annotations

import csv
import io
import json
import re

NOTES = {
    "groove.toml": '[parsers]\nenabled = ["md", "py"]\n',
    "rust/async.md": """\
        ---
        title: Async Rust
        ---
        # Async Rust

        ## Spawning

        Spawn tasks with tokio::spawn and await the handle.
        Spawned tasks run concurrently.

        ## Blocking

        Blocking calls go to spawn_blocking so the reactor is not starved.
        """,
    "rust/errors.md": "# Errors\n\n## Panics\n\nA panic in a spawned task is caught by the join handle.\n",
    "cooking/bread.md": "# Bread\n\n## Starter\n\nFeed the sourdough starter daily.\n",
    "src/pool.py": "def spawn_worker(pool):\n    \"\"\"Spawn one worker task in the pool.\"\"\"\n"
                   "    return pool.spawn(task)\n",
}
INDEXED = True
QUERY = "spawn tasks"


def _json(run, kb_dir, *extra):
    out = run("search", "--kb-path", str(kb_dir), QUERY, "--limit", "6", "--min-confidence-ratio",
              "0", *extra)
    assert out.exit_code == 0, out.stderr
    return json.loads(out.stdout)


def _search(run, kb_dir, fmt, *extra):
    out = run("search", "--kb-path", str(kb_dir), QUERY, "--limit", "6", "--min-confidence-ratio",
              "0", "--format", fmt, *extra)
    assert out.exit_code == 0, out.stderr
    return out


def test_md_is_a_list_of_path_line_links_with_the_spans_in_bold(kb_dir, run):
    hits = _json(run, kb_dir)["results"]
    md = _search(run, kb_dir, "md").stdout
    assert md.startswith(f"# {QUERY}\n\n1. [")
    entries = re.findall(r"^(\d+)\. \[([^\]]+)\]\(([^)]+)\) .*· score (\S+)$", md, re.MULTILINE)
    assert [int(n) for n, *_ in entries] == list(range(1, len(hits) + 1))
    for (_, shown, target, score), hit in zip(entries, hits, strict=True):
        path, _, line = shown.partition(":")
        assert path == hit["path"] and target == f"{path}#L{line}" and float(score) == round(hit["score"], 4)
        file_line = (kb_dir / path).read_text(encoding="utf-8").split("\n")[int(line) - 1]
        first = next(t for t in hit["content"].split("\n") if t.strip())
        assert file_line.strip() == first.strip()  # the link lands where the hit's text starts
    prose = next(h for h in hits if h["path"] == "rust/async.md" and h["heading"] == "Spawning")
    data = prose["content"].encode()
    spans = [data[s["start"]:s["end"]].decode() for s in prose["match_spans"]]
    assert spans and all(f"**{span}**" in md for span in spans)
    assert "> **Spawn** **tasks** with" in md
    code = next(h for h in hits if h["path"] == "src/pool.py")
    assert f"[src/pool.py:{code['line_start']}](src/pool.py#L{code['line_start']})" in md
    assert "```py\n" in md and "matches: `spawn`" in md


def test_csv_parses_back_to_the_hits(kb_dir, run):
    hits = _json(run, kb_dir)["results"]
    rows = list(csv.DictReader(io.StringIO(_search(run, kb_dir, "csv").stdout)))
    assert [(r["path"], r["heading"], r["content"]) for r in rows] == [
        (h["path"], h["heading"] or "", h["content"]) for h in hits]
    assert [float(r["score"]) for r in rows] == [round(h["score"], 6) for h in hits]
    assert [int(r["rank"]) for r in rows] == list(range(1, len(hits) + 1))
    assert all(r["line"].isdigit() for r in rows)


def test_files_are_the_paths_once_each_best_first(kb_dir, run):
    hits = _json(run, kb_dir)["results"]
    out = _search(run, kb_dir, "files").stdout
    assert out.splitlines() == list(dict.fromkeys(h["path"] for h in hits))
    assert len(out.splitlines()) < len(hits)  # two hits of rust/async.md, one line
    refused = run("search", "--kb-path", str(kb_dir), QUERY, "--format", "files", "--explain")
    assert refused.exit_code == 2 and "--explain: --format files prints paths only" in refused.stderr


def test_explain_in_every_format_matches_the_ranking(kb_dir, run):
    plain = _json(run, kb_dir)["results"]
    explained = _json(run, kb_dir, "--explain")["results"]
    assert [h["path"] for h in explained] == [h["path"] for h in plain]
    for rank, hit in enumerate(explained, 1):
        assert hit["explain"]["final"]["rank"] == rank
    text = _search(run, kb_dir, "text", "--explain").stdout
    blocks = text.split("\n---\n")
    for block, hit in zip(blocks, explained, strict=True):
        fusion = hit["explain"]["fusion"]
        assert f"explain: fusion ({fusion['method']}" in block
        assert f"rank {fusion['rank']}, score {fusion['score']:.4f}" in block
        for step in hit["explain"]["steps"]:
            assert f"explain: {step['stage']}: rank {step['from']} -> {step['to']}" in block
    rows = list(csv.DictReader(io.StringIO(_search(run, kb_dir, "csv", "--explain").stdout)))
    for row, hit in zip(rows, explained, strict=True):
        assert int(row["fusion_rank"]) == hit["explain"]["fusion"]["rank"]
        assert row["steps"] == "; ".join(f"{s['stage']} {s['from']}->{s['to']}"
                                         for s in hit["explain"]["steps"])
    md = _search(run, kb_dir, "md", "--explain").stdout
    assert md.count("   - final: rank ") == len(explained)


def test_min_score_drops_hits_and_says_so(kb_dir, run):
    hits = _json(run, kb_dir)["results"]
    bound = hits[1]["score"]
    out = run("search", "--kb-path", str(kb_dir), QUERY, "--limit", "6", "--min-confidence-ratio",
              "0", "--min-score", repr(bound), "--format", "files")
    kept = [h for h in hits if h["score"] >= bound]
    assert out.stdout.splitlines() == list(dict.fromkeys(h["path"] for h in kept))
    assert f"note: min_score {bound:g} dropped {len(hits) - len(kept)} of {len(hits)}" in out.stderr
    data = _json(run, kb_dir, "--min-score", repr(bound))
    assert len(data["results"]) == len(kept) and data["notes"][-1].startswith("min_score")
