"""The code parsers (docs/indexing.md, "Source code"): grammars, definitions, scopes,
aliases, the refusal of a missing grammar, and byte coverage on real repositories."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _code_coverage import assert_covers
from groove.config import Config
from groove.errors import ConfigError
from groove.indexing.code_chunking import plan_pieces
from groove.parsers import get_parser, get_parser_for
from groove.parsers.code import grammars

SRC = Path(__file__).resolve().parents[2] / "src"


def outline_of(parser_id: str, path: str, source: str):
    doc = get_parser(parser_id).parse(source.encode(), path)
    assert doc.outline is not None
    return doc.outline


def flat(definitions, depth=0):
    for d in definitions:
        yield d
        yield from flat(d.children, depth + 1)


@pytest.mark.parametrize(("parser_id", "path", "source", "expected"), [
    ("rust", "k.rs", "pub struct A { x: u8 }\n\nenum E { X }\n\ntrait Shape {\n    fn area(&self);\n}"
     "\n\nimpl A {\n    fn get(&self) {}\n}\n\nfn free() {}\n\nmod inner {\n}\n",
     {("A", "struct"), ("E", "enum"), ("Shape", "trait"), ("A", "impl"), ("get", "method"),
      ("free", "function"), ("inner", "module")}),
    ("typescript", "k.ts", "interface Shape { area: number }\n\ntype Id = string;\n\nenum Color { Red }"
     "\n\nclass Box {\n  open() {}\n}\n\nfunction make() {}\n\nnamespace util {\n  export const x = 1;\n}\n",
     {("Shape", "interface"), ("Id", "type"), ("Color", "enum"), ("Box", "class"),
      ("open", "method"), ("make", "function"), ("util", "module")}),
    ("python", "k.py", "LIMIT = 1\n\nclass Box:\n    def open(self):\n        def helper():\n"
     "            pass\n\n    @property\n    def size(self):\n        pass\n\ndef make():\n    pass\n",
     {("LIMIT", "constant"), ("Box", "class"), ("open", "method"), ("helper", "function"),
      ("size", "method"), ("make", "function")}),
    ("go", "k.go", "package p\n\ntype Box struct { a int }\n\ntype Shape interface { Area() }\n\n"
     "type Id int\n\nfunc Make() {}\n\nfunc (b Box) Open() {}\n",
     {("Box", "struct"), ("Shape", "interface"), ("Id", "type"), ("Make", "function"),
      ("Open", "method")}),
    ("c", "k.c", "struct box { int a; };\n\nenum color { RED };\n\ntypedef int id;\n\n"
     "int make(void) { return 0; }\n",
     {("box", "struct"), ("color", "enum"), ("id", "type"), ("make", "function")}),
    ("php", "k.php", "<?php\nnamespace App;\n\ninterface Shape {}\n\ntrait Named {}\n\n"
     "class Box {\n    function open() {}\n}\n\nfunction make() {}\n",
     {("App", "module"), ("Shape", "interface"), ("Named", "trait"), ("Box", "class"),
      ("open", "method"), ("make", "function")}),
])
def test_kinds_are_named_in_each_languages_own_words(parser_id, path, source, expected):
    """A Rust struct is a `struct` and a trait a `trait`, not the tags query's `class` and
    `interface`; a Python method is a `method`; TypeScript's type aliases and enums count."""
    found = {(d.name, d.kind) for d in flat(outline_of(parser_id, path, source).definitions)}
    assert found == expected


@pytest.mark.parametrize(("parser_id", "path", "source", "expected"), [
    ("python", "m.py", "@cache\ndef f():\n    pass\n\nclass C:\n    def m(self):\n        pass\n",
     {("f", "function", None, 0), ("C", "class", None, 4), ("m", "method", "class C", 5)}),
    ("rust", "db.rs", "/// Doc.\nimpl Database {\n    fn open() {}\n}\nstruct S;\n",
     {("open", "method", "impl Database", 2), ("S", "struct", None, 4)}),
    ("typescript", "a.tsx", "// helper\nexport function f(): number { return 1 }\n"
     "class A {\n  m(): void {}\n}\n", {("f", "function", None, 0), ("A", "class", None, 2),
                                        ("m", "method", "class A", 3)}),
    ("javascript", "a.js", "class B {\n  run() {}\n}\n",
     {("B", "class", None, 0), ("run", "method", "class B", 1)}),
    ("go", "a.go", "package p\n// Open opens.\nfunc Open() {}\n",
     {("Open", "function", None, 1)}),
    ("java", "A.java", "class A {\n  void m() {}\n}\n",
     {("A", "class", None, 0), ("m", "method", "class A", 1)}),
    ("c", "a.c", "/* adds */\nint add(int a) { return a; }\n", {("add", "function", None, 0)}),
    ("cpp", "a.cpp", "namespace ns {\nint f() { return 1; }\n}\n",
     {("f", "function", "namespace ns", 1)}),
    ("php", "a.php", "<?php\nfunction f() { return 1; }\n", {("f", "function", None, 1)}),
])
def test_each_language_reports_its_definitions_with_kind_scope_and_doc_comment(
        parser_id, path, source, expected):
    found = {(d.name, d.kind, d.scope, d.first_line)
             for d in flat(outline_of(parser_id, path, source).definitions)}
    assert expected <= found


def test_extensions_map_to_their_language():
    enabled = ["md", "python", "rust", "typescript", "cpp", "c"]
    assert get_parser_for("a/b.pyi", enabled).id == "python"
    assert get_parser_for("x.TSX", enabled).id == "typescript"
    assert get_parser_for("x.h", enabled).id == "c"
    assert get_parser_for("x.hpp", enabled).id == "cpp"
    assert get_parser_for("x.go", enabled) is None


def test_grooveseek_ids_are_read_as_the_language_they_name(tmp_path):
    config = Config.defaults_for(tmp_path).model_copy()
    parsed = type(config.parsers).model_validate({"enabled": ["md", "py", "rs", "python"]})
    assert parsed.enabled == ["md", "python", "rust"]


def test_a_missing_grammar_package_is_named(monkeypatch):
    spec = grammars.LanguageSpec("rust", ("rs",), "tree-sitter-rust", "no_such_grammar_module",
                                 "language", ("no_such_grammar_module",))
    monkeypatch.setitem(grammars.LANGUAGES, "rust", spec)
    monkeypatch.setattr(grammars, "_LOADED", {})
    with pytest.raises(ConfigError, match=r"'rust'.*tree-sitter-rust.*groove\[code\]"):
        get_parser("rust").check()


# --------------------------------------------------------------------------- coverage


def _covers_file(parser_id: str, path: Path, rel: str) -> None:
    doc = get_parser(parser_id).parse(path.read_bytes(), rel)
    assert doc.outline is not None
    for budget, cap in ((1500, 256), (200, 8)):
        assert_covers(doc.outline.text,
                      plan_pieces(doc.outline.text, doc.outline.definitions, budget=budget,
                                  max_pieces=cap), max_pieces=cap)


@pytest.mark.parametrize("root", [SRC / "groove", Path(click.__file__).parent],
                         ids=["groove-src", "click"])
def test_every_file_of_a_real_repository_is_covered(root):
    files = sorted(root.rglob("*.py"))
    assert len(files) > 10
    for path in files:
        _covers_file("python", path, path.relative_to(root).as_posix())


FRAGMENTS = st.sampled_from([
    "def f(a, b):\n", "    return a + b\n", "class K:\n", "    x = 1\n", "\n", "@decorator\n",
    "# comment\n", "    def m(self):\n", "        pass\n", "def broken(:\n", ")))\n", "x = = 2\n",
    '    """doc"""\n', "import os\n", "if True:\n", "    'é日本'\n", "}\n",
])


@settings(max_examples=150, deadline=None)
@given(st.lists(FRAGMENTS, max_size=60), st.integers(200, 600), st.integers(1, 20))
def test_any_python_text_parsed_for_real_is_covered(fragments, budget, cap):
    text = "".join(fragments)
    doc = get_parser("python").parse(text.encode(), "x.py")
    assert doc.outline is not None
    assert_covers(text, plan_pieces(text, doc.outline.definitions, budget=budget,
                                    max_pieces=cap), max_pieces=cap)


class _NodeWithManyChildren:
    """A syntax node standing for a minified file's program: its ``children`` list is
    what made outlining quadratic (built once per definition), so reading it fails."""

    type = "program"
    is_named = True
    child_count = 330_000

    @property
    def children(self):
        raise AssertionError("children builds a list of every child: ask child(0)")

    def child(self, index: int):
        assert index == 0
        return type("Leaf", (), {"is_named": True, "type": "expression_statement"})()

    def child_by_field_name(self, name: str):
        return None


def test_a_scope_is_labelled_without_listing_every_child_of_its_ancestors():
    from groove.parsers.code.outline import _scope_label

    assert _scope_label(_NodeWithManyChildren()) is None


def test_a_file_of_thousands_of_top_level_definitions_is_outlined_whole():
    source = "".join(f"function a{i}(b){{return b*{i}}}\n" for i in range(5000))
    names = {d.name for d in flat(outline_of("javascript", "min.js", source).definitions)}
    assert names == {f"a{i}" for i in range(5000)}


def test_a_block_around_definitions_is_a_container_with_its_members_below_it():
    source = ("pub trait Summary {\n    fn summarize(&self) -> String;\n}\n\n"
              "impl Summary for NewsArticle {\n    pub fn summarize(&self) -> String {\n"
              "        String::new()\n    }\n}\n")
    definitions = outline_of("rust", "lib.rs", source).definitions
    block = definitions[-1]
    assert (block.name, block.kind, block.keyword, block.container) == (
        "Summary for NewsArticle", "impl", "impl", True)
    assert (block.first_line, block.last_line) == (4, 8)
    assert [(d.name, d.keyword, d.scope) for d in block.children] == [
        ("summarize", "fn", "impl Summary for NewsArticle")]
    assert definitions[0].keyword == "trait" and not definitions[0].container
    cpp = outline_of("cpp", "a.cpp", "namespace ns {\nint f() { return 1; }\n}\n").definitions
    assert [(d.name, d.kind, d.container, len(d.children)) for d in cpp] == [
        ("ns", "namespace", True, 1)]


def test_a_definition_records_the_keyword_before_its_name():
    python = outline_of("python", "m.py", "class C:\n    async def m(self):\n        pass\n")
    assert [(d.name, d.keyword) for d in flat(python.definitions)] == [("C", "class"),
                                                                       ("m", "def")]
    java = outline_of("java", "A.java", "class A {\n  void m() {}\n}\n")
    assert [(d.name, d.keyword) for d in flat(java.definitions)] == [("A", "class"), ("m", None)]
