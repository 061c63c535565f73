"""Code chunks outside definitions rank behind the others unless the question is about
them (groove.search.stubs, groove.indexing.quality.is_import_only)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from groove.indexing.quality import is_import_only
from groove.search.stubs import demote_stubs, is_code_gap, names_an_import, stub_texts


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

    stubs = {c: texts[c] for c in (1, 3)}  # the import-only chunks

    assert demote_stubs(pool, "open a file", stubs) == [
        (2, 0.8), (4, 0.6), (1, 0.9), (3, 0.7)]
    assert demote_stubs(pool, "which module imports sys", stubs) == [
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


def _row(chunk_id, doc_id, content, symbol_kind=None, language="javascript"):
    return SimpleNamespace(id=chunk_id, doc_id=doc_id, content=content, symbol_kind=symbol_kind,
                           language=language)


def test_lines_between_definitions_are_stubs_but_a_script_without_any_is_not():
    rows = [_row(1, 10, 'process.on("beforeExit", () => stop());\n}'),   # file with definitions
            _row(2, 10, "function stop() {}", symbol_kind="function"),
            _row(3, 20, "const argv = process.argv.slice(2);\nrun(argv);"),  # a script
            _row(4, 20, "import os\nimport sys", language="python"),       # imports: always
            _row(5, 30, "process.on(x)", language=None)]                   # prose

    def defined(doc_ids):
        assert doc_ids == {10, 20}  # only the gaps' documents are asked about
        return {10}

    assert set(stub_texts(rows, defined)) == {1, 4}


def test_a_fragment_named_as_code_in_the_question_stays_where_it_ranks():
    pool = [(1, 0.9), (2, 0.8)]
    stubs = {1: 'process.on("beforeExit", () => stopProfiling());'}

    assert demote_stubs(pool, "stop the browser processes", stubs) == [(2, 0.8), (1, 0.9)]
    assert demote_stubs(pool, "where is stopProfiling called", stubs) == pool
