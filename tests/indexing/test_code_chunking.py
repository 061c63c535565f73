"""Source code -> chunks (docs/indexing.md, "Source code"): the coverage guarantees as
properties, and the shaping rules (doc comments, nested splits, folds, the cap)."""

from __future__ import annotations

import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from _code_coverage import assert_covers
from groove.indexing.code_chunking import (
    TOO_MANY_CHUNKS_TAG,
    code_chunks,
    fallback_budget,
    plan_pieces,
)
from groove.indexing.quality import SHORT_CHARS
from groove.models import CodeOutline, Definition, ParsedDocument

# --------------------------------------------------------------------------- generators

LINE = st.one_of(
    st.just(""), st.just("}"), st.just("  };"), st.just("    "),
    st.text(st.sampled_from("abcdefgh xyz(){}=;#/*é日"), min_size=1, max_size=90),
)


@st.composite
def forests(draw: st.DrawFn, first: int, last: int, depth: int = 0) -> tuple[Definition, ...]:
    """Sorted, non-overlapping definitions inside lines first..last, nested below."""
    out: list[Definition] = []
    cursor = first
    while cursor <= last and depth < 4 and draw(st.booleans()):
        start = draw(st.integers(cursor, last))
        end = draw(st.integers(start, min(last, start + 40)))
        children = draw(forests(start + 1, end - 1, depth + 1)) if end - start > 1 else ()
        out.append(Definition(start, end, draw(st.sampled_from(["f", "g", "Cls"])),
                              draw(st.sampled_from(["function", "class", "method"])),
                              None, children))
        cursor = end + 1
    return tuple(out)


@st.composite
def files(draw: st.DrawFn) -> tuple[str, tuple[Definition, ...]]:
    lines = draw(st.lists(LINE, min_size=1, max_size=120))
    return "\n".join(lines), draw(forests(0, len(lines) - 1))


# --------------------------------------------------------------------------- properties


@settings(max_examples=300, deadline=None)
@given(files(), st.integers(200, 2000), st.none() | st.integers(1, 30))
def test_every_line_is_in_one_chunk_or_a_short_dropped_fragment(file, budget, cap):
    text, definitions = file
    plan = plan_pieces(text, definitions, budget=budget, max_pieces=cap)
    assert_covers(text, plan, max_pieces=cap)


@settings(max_examples=200, deadline=None)
@given(files(), st.integers(200, 2000), st.integers(1, 30))
def test_chunk_text_is_exactly_its_line_range(file, budget, cap):
    text, definitions = file
    doc = ParsedDocument(title="x.py", sections=[])
    chunks = code_chunks(doc, CodeOutline("python", text, definitions), path="x.py",
                         budget=budget, max_chunks=cap, count_tokens=len)
    lines = text.split("\n")
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert chunk.line_start is not None and chunk.line_end is not None
        assert chunk.content == "\n".join(lines[chunk.line_start - 1:chunk.line_end])
        assert chunk.content.strip()
    assert len(chunks) <= cap
    if TOO_MANY_CHUNKS_TAG in doc.tags:
        assert all(c.symbol_kind is None for c in chunks)


@settings(max_examples=200, deadline=None)
@given(files(), st.integers(200, 800))
def test_a_piece_carrying_a_kind_is_short_only_when_it_is_a_whole_definition(file, budget):
    text, definitions = file
    plan = plan_pieces(text, definitions, budget=budget)
    lines = text.split("\n")
    parents = _parents(definitions)
    for piece in plan.pieces:
        d = piece.definition
        if d is None:
            continue
        # it starts inside its definition, or on lines of the enclosing one folded into it
        parent = parents.get(id(d))
        assert (parent.first_line if parent else d.first_line) <= piece.first
        # past its definition a piece holds only the closing brackets folded into it
        assert all(set(ln.strip()) <= set("}])>;,") for ln in lines[d.last_line + 1:piece.last + 1])
        content = "\n".join(lines[piece.first:piece.last + 1]).strip()
        if len(content) < SHORT_CHARS:  # the whole definition (blank edges aside)
            own = [i for i in range(d.first_line, d.last_line + 1) if lines[i].strip()]
            assert not own or (piece.first <= own[0] and piece.last >= own[-1])


def _parents(definitions: tuple[Definition, ...]) -> dict[int, Definition]:
    """id(child) -> the definition it is nested in, over the whole forest."""
    out: dict[int, Definition] = {}
    stack = list(definitions)
    while stack:
        parent = stack.pop()
        for child in parent.children:
            out[id(child)] = parent
            stack.append(child)
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(LINE, min_size=1, max_size=300), st.integers(200, 2000), st.integers(1, 40))
def test_the_widened_budget_keeps_a_line_split_within_the_cap(lines, budget, cap):
    text = "\n".join(lines)
    wide = fallback_budget(len(text) + 1, budget, cap)
    assert wide >= budget
    assert len(plan_pieces(text, (), budget=wide).pieces) <= cap


# --------------------------------------------------------------------------- rules


def _python(source: str, budget: int = 1500, cap: int | None = 256):
    from groove.parsers import get_parser

    text = textwrap.dedent(source).lstrip("\n")
    doc = get_parser("python").parse(text.encode(), "pkg/mod.py")
    assert doc.outline is not None
    chunks = code_chunks(doc, doc.outline, path="pkg/mod.py", budget=budget, max_chunks=cap,
                         count_tokens=len)
    return doc, chunks


def test_a_definition_is_one_chunk_with_its_comment_kind_scope_and_lines():
    _, chunks = _python('''
        import os
        import sys
        from pathlib import Path


        class Store:
            """Keeps things."""

            # Opens the store at a path,
            # creating it when missing.
            def open(self, path):
                return Path(path).open()
        ''', budget=60)
    opened = next(c for c in chunks if c.heading == "open")
    assert opened.symbol_kind == "method"
    assert opened.scope == "class Store"
    assert opened.content.startswith("    # Opens the store")
    assert (opened.line_start, opened.line_end) == (9, 12)
    assert opened.context == "pkg/mod.py > class Store › def open"
    imports = chunks[0]
    assert imports.symbol_kind is None and imports.heading is None
    assert (imports.line_start, imports.line_end) == (1, 3)


def test_a_one_line_class_header_opens_its_first_method_but_a_longer_one_stands_alone():
    source = '''
        class Lock:

            def __init__(self, path):
                self.path = path
                self.depth = 0
                self.other = 1

            def hold(self):
                """Hold the lock for the block, waiting for the holder to finish."""
                self.depth += 1
                return self.depth
        '''
    _, chunks = _python(source, budget=200)
    init = chunks[0]
    # the class line (under SHORT_CHARS) is the first line of __init__'s chunk
    assert (init.heading, init.symbol_kind, init.scope) == ("__init__", "method", "class Lock")
    assert (init.line_start, init.line_end) == (1, 6)
    assert init.content.startswith("class Lock:")
    assert not any(c.heading == "Lock" for c in chunks)
    documented = source.replace("class Lock:\n", 'class Lock:\n            """The lock of one file."""\n')
    _, chunks = _python(documented, budget=200)
    assert [(c.heading, c.symbol_kind, c.line_start, c.line_end) for c in chunks][:2] == [
        ("Lock", "class", 1, 2), ("__init__", "method", 4, 7)]


def test_a_long_definition_is_cut_by_lines_and_every_piece_keeps_its_name():
    body = "\n".join(f"    total += compute_value_number_{i}(argument)" for i in range(40))
    _, chunks = _python(f"def long_function(argument):\n    total = 0\n{body}\n    return total\n",
                        budget=300)
    assert len(chunks) > 3
    assert {c.heading for c in chunks} == {"long_function"}
    assert all(c.symbol_kind == "function" for c in chunks)
    assert chunks[0].line_start == 1 and chunks[-1].line_end == 43
    assert all(a.line_end + 1 == b.line_start for a, b in zip(chunks, chunks[1:], strict=False))


def test_a_lone_closing_brace_folds_into_the_piece_before_it():
    from groove.parsers import get_parser

    body = "\n".join(f"        let value_{i} = compute(value_{i - 1});" for i in range(1, 30))
    text = ("impl Database {\n    pub fn open(path: &str) -> Self {\n        let value_0 = 0;\n"
            f"{body}\n        Database {{}}\n    }}\n}}\n")
    doc = get_parser("rust").parse(text.encode(), "src/db.rs")
    assert doc.outline is not None
    chunks = code_chunks(doc, doc.outline, path="src/db.rs", budget=400, max_chunks=None,
                         count_tokens=len)
    assert all(c.content.strip() not in ("}", "    }") for c in chunks)
    assert chunks[-1].content.endswith("    }\n}")
    assert all(c.scope == "impl Database" for c in chunks if c.heading == "open")


def test_short_definitions_score_like_long_ones_but_short_gaps_are_dropped():
    _, chunks = _python('''
        import os

        MAXYEAR = 9999


        def run():
            return os.getcwd() + " and more text here"
        ''')
    maxyear = next(c for c in chunks if c.heading == "MAXYEAR")
    assert maxyear.symbol_kind == "constant" and maxyear.quality == 1.0
    assert all("import os" not in c.content for c in chunks)  # 9 characters: dropped


def test_a_file_of_only_short_lines_still_has_a_chunk():
    _, chunks = _python("import os\n")
    assert [c.content for c in chunks] == ["import os"]


def test_a_syntax_error_loses_no_line():
    source = "def good():\n    return 1\n\ndef broken(:\n    x = = 2\n    return x + 40000000\n"
    doc, chunks = _python(source)
    assert "parse:degraded" in doc.tags
    joined = "\n".join(c.content for c in chunks)
    assert "x = = 2" in joined and "def good" in joined


def test_over_the_cap_the_file_is_chunked_by_lines_and_tagged_not_truncated():
    source = "\n\n".join(f"def function_number_{i}():\n    return {i} * 1000" for i in range(30))
    doc, chunks = _python(source, cap=5)
    assert len(chunks) <= 5
    assert TOO_MANY_CHUNKS_TAG in doc.tags
    assert all(c.symbol_kind is None for c in chunks)
    assert "function_number_29" in chunks[-1].content


def test_nesting_past_the_depth_bound_is_chunked_by_lines_and_tagged():
    from groove.parsers import get_parser
    from groove.parsers.code import MAX_DEPTH

    text = "".join(f"mod m{i} {{\n" for i in range(MAX_DEPTH + 5)) + "fn deep() {}\n" + "}\n" * (
        MAX_DEPTH + 5)
    doc = get_parser("rust").parse(text.encode(), "deep.rs")
    assert doc.outline is not None and doc.outline.fallback == "parse:too-deep"
    chunks = code_chunks(doc, doc.outline, path="deep.rs", budget=1500, max_chunks=256,
                         count_tokens=len)
    assert "parse:too-deep" in doc.tags
    assert all(c.symbol_kind is None for c in chunks)
    assert "fn deep() {}" in "\n".join(c.content for c in chunks)


# --------------------------------------------------------------------------- minified lines

def _minified_doc(text: str) -> tuple[ParsedDocument, CodeOutline]:
    outline = CodeOutline("javascript", text, (), None)
    return ParsedDocument(title="min.js", sections=[], outline=outline), outline


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60_000), st.integers(1, 12), st.integers(20, 400),
       st.sampled_from(["x", "ab;", "f(a) ", "日本"]))
def test_an_over_long_line_is_cut_by_characters_keeping_every_one(length, max_chunks, budget,
                                                                   unit):
    line = (unit * length)[:length]
    doc, outline = _minified_doc(line + "\n")
    chunks = code_chunks(doc, outline, path="min.js", budget=budget, max_chunks=max_chunks,
                         count_tokens=len)
    assert "".join(c.content for c in chunks) == line  # never a character dropped
    assert len(chunks) <= max_chunks
    assert all(c.line_start == c.line_end == 1 for c in chunks)
    if len(line) > 8 * budget and max_chunks > 1 and len(line) >= 2 * max_chunks * budget:
        assert len(chunks) > 1  # a huge line is never one chunk when it may be cut


def test_ordinary_long_lines_stay_whole():
    text = "const table = '" + "x" * 3000 + "';\nfunction f() { return 1 }\n"
    doc, outline = _minified_doc(text)
    chunks = code_chunks(doc, outline, path="a.js", budget=1500, max_chunks=256, count_tokens=len)
    assert any(c.content.startswith("const table") and c.content.endswith("';")
               for c in chunks)


def test_a_cut_impl_header_line_joins_its_first_method_and_breadcrumbs_name_the_impl():
    from groove.parsers import get_parser

    body = "\n".join(f"        let value_{i} = compute(value_{i - 1});" for i in range(1, 12))
    text = ("impl Summary for NewsArticle {\n"
            f"    fn summarize(&self) -> String {{\n        let value_0 = 0;\n{body}\n"
            "        String::new()\n    }\n\n"
            f"    fn summarize_author(&self) -> String {{\n        let value_0 = 0;\n{body}\n"
            "        String::new()\n    }\n}\n")
    doc = get_parser("rust").parse(text.encode(), "src/lib.rs")
    assert doc.outline is not None
    chunks = code_chunks(doc, doc.outline, path="src/lib.rs", budget=700, max_chunks=None,
                         count_tokens=len)
    assert [(c.heading, c.line_start) for c in chunks] == [("summarize", 1),
                                                           ("summarize_author", 18)]
    assert chunks[0].content.startswith("impl Summary for NewsArticle {\n    fn summarize")
    assert chunks[1].context == "src/lib.rs > impl Summary for NewsArticle › fn summarize_author"
    assert chunks[1].content.endswith("    }\n}")
    whole = code_chunks(doc, doc.outline, path="src/lib.rs", budget=1500, max_chunks=None,
                        count_tokens=len)
    assert [(c.heading, c.symbol_kind, c.context) for c in whole] == [
        ("Summary for NewsArticle", "impl", "src/lib.rs > impl Summary for NewsArticle")]
