"""``groove search`` over source code: the --language / --symbol-kind flags and path:line."""

from __future__ import annotations

import json

NOTES = {
    "groove.toml": '[parsers]\nenabled = ["md", "py"]\n',
    "notes/sharpening.md": "# Sharpening\n\nA whetstone keeps kitchen knives sharp.\n",
    "kitchen/tools.py": '''
        import os


        def sharpen_knife(blade):
            """Sharpen the kitchen knife blade on the whetstone."""
            return blade.strip() + " sharpened on the whetstone" + os.sep
        ''',
}
INDEXED = True


def test_language_and_symbol_kind_flags_reach_the_search(kb_dir, run):
    out = run("search", "--kb-path", str(kb_dir), "sharpen the knife on the whetstone",
              "--language", "python", "--symbol-kind", "function", "--format", "json")
    assert out.exit_code == 0, out.stderr
    data = json.loads(out.stdout)
    assert [(h["path"], h["heading"], h["line_start"], h["line_end"]) for h in data["results"]] == [
        ("kitchen/tools.py", "sharpen_knife", 4, 6)]
    assert data["filter_applied"] == {"languages": ["python"], "symbol_kind": ["function"]}


def test_the_text_format_names_the_line(kb_dir, run):
    out = run("search", "--kb-path", str(kb_dir), "sharpen the knife on the whetstone",
              "--language", "py", "--format", "text")
    assert out.exit_code == 0, out.stderr
    assert "path: kitchen/tools.py:4\n" in out.stdout
    assert "symbol: function sharpen_knife (lines 4-6)" in out.stdout


def test_the_text_format_says_when_lines_are_outside_every_definition():
    from groove.cli.search_cmd import render_text
    from groove.models import Hit, SearchResponse

    hit = Hit(chunk_id=1, score=0.5, path="bootstrap.js", title="bootstrap.js", heading=None,
              level=None, category=None, topic=None, date=None, tags=[],
              content='process.on("beforeExit", stop);\n}', line_start=61, line_end=62,
              language="javascript")
    text = render_text(SearchResponse(results=[hit], low_confidence=False, filter_applied={}))
    assert "path: bootstrap.js:61\nheading: \nsymbol: outside definitions (lines 61-62)\n" in text


def test_a_code_chunk_budget_down_to_grooveseeks_floor_of_30(kb_dir, tmp_path, run):
    """[parsers.code] max_chunk_chars accepts 30 (GrooveSeek's floor) and cuts a definition
    by it; 29 is refused naming the key and what is accepted."""
    chunks_by_default = json.loads(run("status", "--kb-path", str(kb_dir), "--format",
                                       "json").stdout)["chunks"]
    config = tmp_path / "small.toml"
    config.write_text(f'kb_path = "{kb_dir.as_posix()}"\n[parsers]\nenabled = ["md", "py"]\n'
                      '[parsers.code]\nmax_chunk_chars = 30\n')
    built = run("index", "--config", str(config), "--force", "--json")
    assert built.exit_code == 0, built.stderr
    status = json.loads(run("status", "--config", str(config), "--format", "json").stdout)
    assert status["chunks"] > chunks_by_default  # the function is cut by lines into pieces
    hits = json.loads(run("search", "sharpen knife whetstone", "--config", str(config),
                          "--language", "python", "--limit", "20").stdout)["results"]
    assert len(hits) >= 2 and all(hit["heading"] == "sharpen_knife" for hit in hits)
    config.write_text(config.read_text().replace("= 30", "= 29"))
    refused = run("index", "--config", str(config))
    assert refused.exit_code == 2
    assert "max_chunk_chars" in refused.stderr and "30..100000" in refused.stderr
