"""The nesting pre-check (groove.parsers.code.nesting): a file a grammar could crash on is
never parsed, and indexing it through the CLI keeps every line, with one warning."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from groove.parsers import get_parser
from groove.parsers.code.nesting import MAX_NESTING, bracket_depth, indent_depth, too_deep


def crashing_file() -> str:
    """The issue's reproduction: 1,000 nested defs ending in a string literal (0.5 MB);
    tree-sitter-python 0.23-0.25 dies with SIGSEGV on it."""
    return "".join(" " * i + "def f():\n" for i in range(1000)) + " " * 1000 + "'x'\n"


def _brackets_reference(text: str) -> int:
    depth = deepest = 0
    for ch in text:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth = max(depth - 1, 0)
    return deepest


@given(st.text(alphabet="()[]{}x \n"))
def test_bracket_depth_is_the_deepest_unclosed_run(text):
    assert bracket_depth(text.encode()) == _brackets_reference(text)


@given(st.lists(st.integers(0, 2 * MAX_NESTING), max_size=60))
def test_indent_depth_is_an_upper_bound_and_exact_past_the_limit(widths):
    source = "".join(" " * w + "x\n" for w in widths).encode()
    stack: list[int] = []
    deepest = 0
    for w in widths:
        while stack and stack[-1] >= w:
            stack.pop()
        if w:
            stack.append(w)
        deepest = max(deepest, len(stack))
    measured = indent_depth(source)
    assert measured >= deepest
    assert (measured > MAX_NESTING) == (deepest > MAX_NESTING)


def test_the_crashing_file_is_chunked_by_lines_without_parsing():
    source = crashing_file().encode()
    assert too_deep(source) == 1000
    doc = get_parser("python").parse(source, "x.py")
    assert doc.outline is not None and doc.outline.fallback == "parse:too-deep"
    assert doc.warnings == [f"the code nests 1000 levels deep (more than {MAX_NESTING}), too "
                            "deep to parse safely: chunked by lines instead (every line is "
                            "still indexed)"]


def test_ordinary_code_is_parsed(tmp_path):
    source = Path(__file__).read_bytes()
    assert too_deep(source) is None
    assert get_parser("python").parse(source, "t.py").outline.definitions


def test_index_survives_the_crashing_file_and_keeps_its_lines(tmp_path):
    """Through the CLI, as a user runs it: exit 0, one warning, the file's last line found."""
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "x.py").write_text(crashing_file(), encoding="utf-8")
    (kb / "ok.py").write_text("def greet():\n    return 'hello'\n", encoding="utf-8")
    config = tmp_path / "groove.toml"
    config.write_text(f'kb_path = "{kb.as_posix()}"\n[parsers]\nenabled = ["python"]\n',
                      encoding="utf-8")
    run = [sys.executable, "-m", "groove"]
    done = subprocess.run([*run, "index", "--config", str(config)], capture_output=True,
                          text=True, timeout=600, env=dict(os.environ))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("indexed 2,")
    assert "x.py" in done.stderr and "too deep to parse safely" in done.stderr
    found = subprocess.run([*run, "search", "--config", str(config), "--format", "json",
                            "--path-glob", "x.py", "def f"], capture_output=True, text=True,
                           timeout=300, env=dict(os.environ))
    assert found.returncode == 0, found.stderr
    assert '"path": "x.py"' in found.stdout
