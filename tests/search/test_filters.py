"""SPEC §5 filters, each alone and combined (AND), through the real pipeline and store."""

from __future__ import annotations

import pytest
from searchkit import Corpus, Sec, unit

ALL = {"docs/a.md", "docs/private/b.md", "notes/c.md", "notes/d.txt", "scan.pdf"}


@pytest.fixture
def kb(fixed: Corpus) -> Corpus:
    """Every chunk mentions "widget" (so both legs see all of them)."""
    docs = [
        ("docs/a.md", dict(category="docs", topic="rust", tags=("rust", "async"), date="2026-01-01")),
        ("docs/private/b.md", dict(category="docs", topic="go", tags=("go",), date="2026-02-15")),
        ("notes/c.md", dict(category="notes", topic="rust", tags=("rust",), date=None)),
        ("notes/d.txt", dict(category="notes", topic=None, tags=("async", "go"), date="2026-03-31")),
    ]
    for i, (path, meta) in enumerate(docs):
        fixed.add(path, [Sec(f"The widget manual, part {i}, explains widget setup in detail.",
                             vector=unit((0, 1.0), (i + 1, 0.5)))], **meta)
    # Low quality: hidden by default unless include_low_quality / min_quality 0.
    fixed.add("low.md", [Sec("widget TBD", quality=0.1, vector=unit((0, 1.0), (6, 0.5)))],
              category="misc", date="2026-01-15")
    # A binary-format chunk with the same low score is exempt from the quality filter.
    fixed.add("scan.pdf", [Sec("widget scan page", quality=0.1, vector=unit((0, 1.0), (7, 0.5)))],
              category="scans", binary_format=True)
    return fixed


def found(kb: Corpus, **filters) -> set[str]:
    return set(kb.paths(kb.search("widget", limit=20, **filters)))


def test_no_filter_returns_everything_above_the_quality_floor(kb: Corpus) -> None:
    assert found(kb) == ALL


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"category": "docs"}, {"docs/a.md", "docs/private/b.md"}),
        ({"category": "Docs"}, set()),  # exact, not case-folded
        ({"category": "doc"}, set()),  # exact, not a prefix
        ({"topic": "rust"}, {"docs/a.md", "notes/c.md"}),
        ({"topic": "rus"}, set()),
        ({"path_globs": ["docs/**"]}, {"docs/a.md", "docs/private/b.md"}),
        ({"path_globs": ["**", "!docs/private/**"]}, ALL - {"docs/private/b.md"}),
        ({"path_globs": ["!docs/**"]}, ALL - {"docs/a.md", "docs/private/b.md"}),
        ({"path_globs": ["**/*.txt", "*.pdf"]}, {"notes/d.txt", "scan.pdf"}),
        ({"path_globs": ["docs/**", "!**/b.md"]}, {"docs/a.md"}),
        ({"tags_any": ["go", "nothing"]}, {"docs/private/b.md", "notes/d.txt"}),
        ({"tags_any": ["rust", "go"]}, {"docs/a.md", "docs/private/b.md", "notes/c.md", "notes/d.txt"}),
        ({"tags_all": ["rust", "async"]}, {"docs/a.md"}),
        ({"tags_all": ["rust"]}, {"docs/a.md", "notes/c.md"}),
        ({"tags_all": ["rust", "nothing"]}, set()),
        ({"date_from": "2026-02-15"}, {"docs/private/b.md", "notes/d.txt"}),
        ({"date_to": "2026-02-15"}, {"docs/a.md", "docs/private/b.md"}),
        ({"date_from": "2026-01-01", "date_to": "2026-01-01"}, {"docs/a.md"}),
        ({"date_from": "2026-03-31", "date_to": "2026-03-31"}, {"notes/d.txt"}),
        ({"date_from": "2027"}, set()),
    ],
)
def test_each_filter_alone(kb: Corpus, filters: dict, expected: set[str]) -> None:
    assert found(kb, **filters) == expected


def test_undated_documents_are_excluded_when_either_bound_is_set(kb: Corpus) -> None:
    assert "notes/c.md" not in found(kb, date_from="0000")
    assert "notes/c.md" not in found(kb, date_to="9999")
    assert "scan.pdf" not in found(kb, date_to="9999")
    assert {"notes/c.md", "scan.pdf"} <= found(kb)


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"category": "docs", "topic": "rust"}, {"docs/a.md"}),
        ({"category": "notes", "tags_any": ["go"]}, {"notes/d.txt"}),
        ({"topic": "rust", "date_from": "2025"}, {"docs/a.md"}),  # c.md is undated
        ({"tags_any": ["go"], "tags_all": ["async"]}, {"notes/d.txt"}),
        ({"path_globs": ["**", "!notes/**"], "tags_any": ["go"]}, {"docs/private/b.md"}),
        ({"category": "docs", "path_globs": ["notes/**"]}, set()),
        ({"category": "misc", "include_low_quality": True, "date_to": "2026-01-31"}, {"low.md"}),
    ],
)
def test_filters_combine_with_and(kb: Corpus, filters: dict, expected: set[str]) -> None:
    assert found(kb, **filters) == expected


def test_quality_filter_hides_low_quality_unless_asked(kb: Corpus) -> None:
    assert "low.md" not in found(kb)
    assert "low.md" in found(kb, include_low_quality=True)
    assert "low.md" in found(kb, min_quality=0)
    assert "low.md" not in found(kb, min_quality=0.2)


def test_quality_threshold_comes_from_config_and_can_be_turned_off(kb: Corpus) -> None:
    strict = kb.config(quality_filter={"threshold": 0.95})
    assert set(kb.paths(kb.search("widget", limit=20, config=strict))) == ALL
    off = kb.config(quality_filter={"enabled": False})
    assert "low.md" in set(kb.paths(kb.search("widget", limit=20, config=off)))


def test_binary_format_chunks_are_exempt_from_the_quality_filter(kb: Corpus) -> None:
    assert "scan.pdf" in found(kb, min_quality=1.0)
    assert found(kb, min_quality=1.0) == ALL  # the others have quality 1.0


def test_filter_applied_echoes_only_filters_that_had_an_effect(kb: Corpus) -> None:
    plain = kb.search("widget")
    assert plain.filter_applied == {}
    response = kb.search("widget", category="docs", topic="rust", path_globs=["docs/**"],
                         tags_any=["rust"], tags_all=[], date_from="2026-01-01",
                         min_confidence_ratio=2.0, include_low_quality=True)
    assert response.filter_applied == {
        "category": "docs", "topic": "rust", "path_globs": ["docs/**"], "tags_any": ["rust"],
        "date_from": "2026-01-01", "min_confidence_ratio": 2.0,
    }  # include_low_quality applies without being echoed (GrooveSeek's contract)
    assert kb.search("widget", min_confidence_ratio=float("inf")).filter_applied == {}
    assert kb.search("widget", min_quality=0.5, date_to="2030").filter_applied == {
        "date_to": "2030"}


# --------------------------------------------------------------------------- source code


@pytest.fixture
def code_kb(fixed: Corpus) -> Corpus:
    """Prose and code that all mention "widget"; code chunks carry kinds and lines."""
    fixed.add("guide.md", [Sec("The widget guide explains the widget in prose form.",
                               vector=unit((0, 1.0), (1, 0.5)))])
    fixed.add("src/widget.py", [
        Sec("def make_widget():\n    return Widget()  # widget factory", heading="make_widget",
            symbol_kind="function", line_start=3, line_end=4, vector=unit((0, 1.0), (2, 0.5))),
        Sec("class Widget:\n    \"\"\"A widget with parts and a widget name.\"\"\"",
            heading="Widget", symbol_kind="class", line_start=7, line_end=8,
            vector=unit((0, 1.0), (3, 0.5))),
        Sec("import widget_support  # widget helpers for the module", heading=None,
            line_start=1, line_end=1, vector=unit((0, 1.0), (4, 0.5))),
    ], language="python", tags=("code",))
    fixed.add("src/widget.rs", [
        Sec("fn open(&self) -> Widget { widget::open(self.path) }", heading="open",
            symbol_kind="method", scope="impl Widget", line_start=10, line_end=12,
            vector=unit((0, 1.0), (5, 0.5))),
    ], language="rust", tags=("code",))
    return fixed


def test_languages_keep_only_source_files_of_those_languages(code_kb: Corpus) -> None:
    assert found(code_kb, languages=["python"]) == {"src/widget.py"}
    assert found(code_kb, languages=["rs"]) == {"src/widget.rs"}  # GrooveSeek's id
    assert found(code_kb, languages=["python", "rust"]) == {"src/widget.py", "src/widget.rs"}
    assert found(code_kb, languages=["go"]) == set()


def test_symbol_kind_keeps_only_chunks_of_those_kinds(code_kb: Corpus) -> None:
    hits = code_kb.search("widget", limit=20, symbol_kind=["function", "method"]).results
    assert sorted(h.heading for h in hits) == ["make_widget", "open"]
    assert code_kb.search("widget", limit=20, symbol_kind=["macro"]).results == []


def test_code_hits_carry_kind_scope_and_lines_and_prose_hits_do_not(code_kb: Corpus) -> None:
    response = code_kb.search("widget", limit=20)
    by_heading = {h.heading: h.to_json() for h in response.results}
    assert by_heading["open"]["symbol_kind"] == "method"
    assert by_heading["open"]["scope"] == "impl Widget"
    assert (by_heading["open"]["line_start"], by_heading["open"]["line_end"]) == (10, 12)
    assert "scope" not in by_heading["make_widget"]
    prose = next(h for h in response.results if h.path == "guide.md").to_json()
    assert not {"symbol_kind", "scope", "line_start", "line_end"} & prose.keys()
    assert code_kb.search("widget", limit=20, languages=["python"]).filter_applied == {
        "languages": ["python"]}


def test_filter_applied_never_echoes_the_quality_inputs():
    from hypothesis import given
    from hypothesis import strategies as st

    from groove.search.filters import filter_applied
    from groove.search.request import SearchRequest

    @given(st.one_of(st.none(), st.floats(0, 1)), st.booleans(),
           st.one_of(st.none(), st.sampled_from(["docs", "notes"])))
    def check(min_quality, include_low_quality, category):
        echo = filter_applied(SearchRequest(query="q", min_quality=min_quality,
                                            include_low_quality=include_low_quality,
                                            category=category))
        assert "min_quality" not in echo and "include_low_quality" not in echo
        assert echo.get("category") == category

    check()


def test_brace_globs_match_as_in_grooveseek():
    from groove.search.filters import ChunkFilter, expand_braces

    assert expand_braces("docs/{a,b}/**") == ["docs/a/**", "docs/b/**"]
    assert expand_braces("{a,{b,c}}/*.md") == ["a/*.md", "b/*.md", "c/*.md"]
    assert expand_braces("x/{a,b}/{c,d}") == ["x/a/c", "x/a/d", "x/b/c", "x/b/d"]
    assert expand_braces("{single}/x") == ["{single}/x"]  # no comma: literal, as in gitignore
    assert expand_braces("{,draft-}notes") == ["notes", "draft-notes"]
    f = ChunkFilter(includes=tuple(expand_braces("docs/{a,b}/**")),
                    excludes=tuple(expand_braces("docs/{b,c}/private/**")))
    assert f._path_passes("docs/a/x.md") and f._path_passes("docs/b/y.md")
    assert not f._path_passes("docs/c/z.md") and not f._path_passes("docs/b/private/p.md")


def test_a_brace_glob_filters_a_real_search(make_kb, tmp_path, write_files):
    kb = make_kb(write_files(tmp_path / "kb", {
        "docs/a/one.md": "# One\n\nwidget alpha\n", "docs/b/two.md": "# Two\n\nwidget beta\n",
        "docs/c/three.md": "# Three\n\nwidget gamma\n"}))
    kb.index()
    from groove.search.request import SearchRequest

    request = SearchRequest(query="widget", path_globs=["docs/{a,b}/**"], include_low_quality=True)
    paths = {h.path for h in kb.search(request).results}
    assert paths == {"docs/a/one.md", "docs/b/two.md"}
