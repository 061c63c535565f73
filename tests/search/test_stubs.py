"""Import-only code chunks rank behind the others unless the question is about them
(groove.search.stubs, groove.indexing.quality.is_import_only)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from groove.indexing.quality import is_import_only
from groove.search.stubs import demote_import_stubs, is_code_gap, names_an_import


@pytest.mark.parametrize("content", [
    "use std::error::Error;\nuse std::fs::File;",
    "use std::io::{\n    self,\n    Read,\n};\n\n#[derive(Debug)]",
    "import os\nfrom pathlib import Path\nfrom typing import (\n    Any,\n    Final,\n)",
    "#include <stdio.h>\n#include \"local.h\"",
    "import { readFile } from 'fs';\nconst path = require('path');\n// helpers",
    "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)",
    "}\n\n#[cfg(test)]",
])
def test_imports_attributes_and_braces_are_import_only(content):
    assert is_import_only(content)


@pytest.mark.parametrize("content", [
    "use std::fs::File;\nlet f = File::open(\"x\")?;",
    "import os\nprint(os.getcwd())",
    "# a comment only\n# and another",
    "}\n",
    "MAXYEAR = 9999",
])
def test_code_or_prose_beside_imports_is_not(content):
    assert not is_import_only(content)


def test_a_question_names_an_import_only_when_it_is_about_importing_or_writes_code():
    imports = "use std::error::Error;\nuse std::fs::File;"
    assert not names_an_import("which listing shows the ? operator propagating an error", imports)
    assert names_an_import("which listing imports the error module", imports)
    assert names_an_import("where is std::fs used", imports)
    assert not names_an_import("which listing imports serde", imports)


def test_stubs_move_behind_the_others_in_their_order():
    pool = [(1, 0.9), (2, 0.8), (3, 0.7), (4, 0.6)]
    texts = {1: "use std::fs::File;\nuse std::io;", 2: "fn main() {}",
             3: "import os\nimport sys", 4: "def f():\n    pass"}

    def content_of(ids):
        return {c: texts[c] for c in ids}

    assert demote_import_stubs(pool, "open a file", content_of) == [
        (2, 0.8), (4, 0.6), (1, 0.9), (3, 0.7)]
    assert demote_import_stubs(pool, "which module imports sys", content_of) == [
        (2, 0.8), (3, 0.7), (4, 0.6), (1, 0.9)]


def test_only_a_source_files_lines_outside_definitions_can_be_an_import_stub():
    """Prose chunks carry line numbers as code chunks do: a Markdown section that reads
    like imports is never moved behind the others, whatever its lines."""
    def row(language, symbol_kind):
        return SimpleNamespace(language=language, symbol_kind=symbol_kind, line_start=3,
                               content="import os\nimport sys")

    assert is_code_gap(row("python", None))
    assert not is_code_gap(row("python", "function"))
    assert not is_code_gap(row(None, None))  # a Markdown section, lines 3-4
