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
