"""Word .docx parsing (SPEC 10): heading sections with Markdown ancestry, tables, core props."""

from __future__ import annotations

import datetime as dt

import pytest
from office_files import make_docx

from groove.indexing.chunking import chunk_document
from groove.models import Section
from groove.parsers import get_parser_for
from groove.parsers.base import ParseError
from groove.parsers.docx import DocxParser
from groove.parsers.markdown import MarkdownParser


def parse(data: bytes, rel_path: str = "team/specs/design-notes.docx"):
    return DocxParser().parse(data, rel_path)


def docx_kb(tmp_path, name: str, data: bytes):
    """A knowledge base holding one .docx with the docx parser enabled; returns a function
    that runs ``groove <command> --config <its groove.toml> <args>`` and returns the result."""
    import subprocess
    import sys

    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / name).write_bytes(data)
    (tmp_path / "groove.toml").write_text(f'kb_path = "{kb}"\n[parsers]\nenabled = ["docx"]\n')

    def groove(command: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "groove", command, *args, "--config",
                               str(tmp_path / "groove.toml")], capture_output=True, text=True)

    return groove


def top_hit(groove, query: str) -> dict:
    import json

    return json.loads(groove("search", query, "--format", "json").stdout)["results"][0]


def chunks(doc, exclude: list[str] | None = None):
    return chunk_document(doc, exclude_headings=exclude or [], max_tokens=512,
                          count_tokens=lambda s: len(s) // 4)


BLOCKS = [
    ("p", "Preamble before any heading."),
    ("h1", "Guide"),
    ("p", "Intro to the guide."),
    ("h2", "Setup"),
    ("p", "Install it."),
    ("h3", "Linux"),
    ("p", "apt-get install groove"),
    ("h2", "Internal notes"),
    ("p", "private"),
    ("h3", "Child of internal"),
    ("p", "still shown"),
    ("h1", "Appendix"),
    ("p", "The end."),
]

MARKDOWN = """Preamble before any heading.
# Guide
Intro to the guide.
## Setup
Install it.
### Linux
apt-get install groove
## Internal notes
private
### Child of internal
still shown
# Appendix
The end.
"""


def test_registered_for_docx_when_enabled():
    assert isinstance(get_parser_for("X.DOCX", ["docx"]), DocxParser)
    assert get_parser_for("x.docx", ["md", "pdf"]) is None


def test_sections_at_heading_styles_with_markdown_ancestry():
    doc = parse(make_docx(BLOCKS))
    md = MarkdownParser().parse(MARKDOWN.encode(), "x.md")
    shape = [(s.heading, s.level, s.ancestry) for s in doc.sections]
    assert shape == [(s.heading, s.level, s.ancestry) for s in md.sections]
    assert shape[0] == (None, None, ())
    assert doc.sections[3] == Section("Linux", 3, "apt-get install groove", ("Guide", "Setup"))
    assert doc.binary_format is True


def test_exclude_headings_drops_the_section_but_keeps_it_in_child_breadcrumbs():
    doc = parse(make_docx(BLOCKS, title="Design"))
    kept = chunks(doc, exclude=["internal notes"])
    assert "private" not in [c.content for c in kept]
    child = next(c for c in kept if c.heading == "Child of internal")
    assert child.context == "Design > Guide > Internal notes > Child of internal"
    assert child.content == "still shown"


def test_tables_are_flattened_in_document_order():
    doc = parse(make_docx([
        ("h1", "Data"),
        ("p", "before the table"),
        ("table", [["name", "role"], ["Ada", "engineer"], ["Linus", "kernel"]]),
        ("p", "after the table"),
    ]))
    body = doc.sections[0].body
    assert body == ("before the table\n\nname\trole\nAda\tengineer\nLinus\tkernel"
                    "\n\nafter the table")


def test_core_properties_become_title_date_and_tags():
    doc = parse(make_docx([("p", "x")], title="  Design  Notes ",
                          created=dt.datetime(2024, 2, 29, 23, 0),
                          keywords="search, sqlite; embeddings,, search"))
    assert doc.title == "Design Notes"
    assert doc.date == "2024-02-29"
    assert doc.tags == ["search", "sqlite", "embeddings"]
    assert (doc.category, doc.topic) == ("team", "specs")


def test_title_falls_back_to_first_heading_1_then_filename():
    assert parse(make_docx([("h2", "Minor"), ("h1", "Main")])).title == "Main"
    assert parse(make_docx([("p", "just text")])).title == "design notes"


def test_empty_heading_paragraph_is_not_a_section():
    doc = parse(make_docx([("h1", "A"), ("h2", "   "), ("p", "body")]))
    assert [s.heading for s in doc.sections] == ["A"]


def test_truncated_docx_is_refused():
    data = make_docx([("p", "word " * 500)])
    with pytest.raises(ParseError, match=r"broken\.docx"):
        parse(data[: len(data) - 100], "broken.docx")


def test_zip_that_is_not_a_word_document_is_refused():
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("hello.txt", "hi")
    with pytest.raises(ParseError, match=r"not a readable \.docx"):
        parse(out.getvalue(), "fake.docx")


def _japanese_word_docx() -> bytes:
    """What Word in a Japanese interface writes: built-in headings under the IDs "1", "2"
    (named "heading 1", "heading 2"), plus custom styles with Japanese names."""

    import docx
    from docx.enum.style import WD_STYLE_TYPE
    from docx.oxml.ns import qn
    from docx.oxml.parser import OxmlElement

    document = docx.Document()
    styles = document.styles
    styles["Heading 1"].style_id = "1"
    styles["Heading 2"].style_id = "2"
    chapter = styles.add_style("章見出し", WD_STYLE_TYPE.PARAGRAPH)  # based on heading 1
    chapter.base_style = styles["Heading 1"]
    note = styles.add_style("注記見出し", WD_STYLE_TYPE.PARAGRAPH)  # a heading made body text
    note.base_style = styles["Heading 2"]
    outline = OxmlElement("w:outlineLvl")
    outline.set(qn("w:val"), "9")
    note.element.get_or_add_pPr().append(outline)
    return saved(document, [("台風対策の手引き", "章見出し"), ("港の設備を点検する。", None),
                            ("避泊地", styles["Heading 2"]), ("台風の接近時は避泊地へ移動する。", None),
                            ("これは見出しではない", "注記見出し"), ("本文の続き。", None)])


def saved(document, paragraphs: list) -> bytes:
    """``document`` with ``(text, style or None)`` paragraphs appended, as .docx bytes."""
    import io

    for text, style in paragraphs:
        document.add_paragraph(text, style=style)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_headings_come_from_style_names_and_their_based_on_chain():
    """ADR-style rule: Japanese Word's numbered IDs and Japanese-named styles split at headings."""
    doc = DocxParser().parse(_japanese_word_docx(), "台風.docx")
    by_heading = {s.heading: s for s in doc.sections}
    assert set(by_heading) == {"台風対策の手引き", "避泊地"}
    assert by_heading["台風対策の手引き"].level == 1
    assert by_heading["避泊地"].level == 2
    assert by_heading["避泊地"].ancestry == ("台風対策の手引き",)
    # outline level 9 on the derived style cancels the heading it is based on
    assert "これは見出しではない" in by_heading["避泊地"].body


def test_a_style_id_the_styles_part_lacks_is_read_by_its_spelling():
    from groove.parsers.docx import heading_level

    assert heading_level("Heading3", {}) == 3
    assert heading_level("Normal", {}) is None
    assert heading_level(None, {}) is None


def test_a_based_on_cycle_is_body_text():
    from lxml import etree

    from groove.parsers.docx import heading_level

    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"

    def style(style_id: str, based_on: str) -> object:
        element = etree.fromstring(
            f'<w:style xmlns:w="{w}" w:type="paragraph" w:styleId="{style_id}">'
            f'<w:name w:val="{style_id}"/><w:basedOn w:val="{based_on}"/></w:style>')
        return element

    styles = {"a": style("a", "b"), "b": style("b", "a")}
    assert heading_level("a", styles) is None


def test_a_japanese_word_document_is_searched_by_its_headings_from_the_command_line(tmp_path):
    groove = docx_kb(tmp_path, "台風.docx", _japanese_word_docx())
    assert groove("index", "-q").returncode == 0
    top = top_hit(groove, "避泊地へ移動")
    assert top["heading"] == "避泊地"
    assert "これは見出しではない" in top["content"]


def test_an_index_from_before_the_heading_rule_rereads_unchanged_docx_once(tmp_path):
    """The new heading rule reaches a .docx that did not change: re-read once, then recorded."""
    import json
    import sqlite3
    import subprocess
    import sys

    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "台風.docx").write_bytes(_japanese_word_docx())
    (kb / "note.md").write_text("# Note\n\nA note about the harbour.\n")
    (tmp_path / "groove.toml").write_text(
        f'kb_path = "{kb}"\n[parsers]\nenabled = ["md", "docx"]\n')
    groove = [sys.executable, "-m", "groove", "index", "--config",
              str(tmp_path / "groove.toml"), "--json"]

    def index() -> dict:
        done = subprocess.run(groove, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert index()["indexed"] == 2
    with sqlite3.connect(kb / ".groove.db") as conn:  # as an index built before the docx rule
        (recorded,) = conn.execute(
            "SELECT value FROM index_meta WHERE key = 'parser_policies'").fetchone()
        policies = json.loads(recorded)
        del policies["docx"]  # the Markdown parser's own rule stays recorded
        conn.execute("UPDATE index_meta SET value = ? WHERE key = 'parser_policies'",
                     (json.dumps(policies),))
    again = index()
    assert (again["updated"], again["unchanged"]) == (1, 1)  # the docx only
    assert index()["unchanged"] == 2  # once


def _japanese_named_docx() -> bytes:
    """Heading styles whose stored names are Japanese (``見出し 1``, ``見出し２`` with a
    full-width digit) under numbered IDs, and a custom style based on ``見出し２``."""

    import docx
    from docx.enum.style import WD_STYLE_TYPE

    document = docx.Document()
    styles = document.styles
    for number, name in ((1, "見出し 1"), (2, "見出し２")):
        style = styles[f"Heading {number}"]
        style.style_id, style.name = str(number), name
    step = styles.add_style("手順の題", WD_STYLE_TYPE.PARAGRAPH)
    step.base_style = styles["見出し２"]
    return saved(document, [("防災計画", styles["見出し 1"]), ("この計画は港の防災をまとめる。", None),
                            ("避難経路", styles["見出し２"]), ("高台の公園へ続く坂道を使って避難する。", None),
                            ("備蓄品の点検", "手順の題"), ("毎月一日に非常食と飲料水の期限を確かめる。", None)])


def test_japanese_heading_names_and_a_style_based_on_one_split_the_document(tmp_path):
    doc = DocxParser().parse(_japanese_named_docx(), "防災.docx")
    assert [(s.heading, s.level, s.ancestry) for s in doc.sections] == [
        ("防災計画", 1, ()), ("避難経路", 2, ("防災計画",)), ("備蓄品の点検", 2, ("防災計画",))]

    groove = docx_kb(tmp_path, "防災.docx", _japanese_named_docx())
    assert groove("index", "-q").returncode == 0
    for query, heading in (("非常食と飲料水の期限", "備蓄品の点検"), ("高台の公園へ避難", "避難経路")):
        top = top_hit(groove, query)
        assert (top["path"], top["heading"], top["level"]) == ("防災.docx", heading, 2)


def _docx_with_broken_styles() -> bytes:
    """A document whose headings use the ``Heading1`` ID, with ``word/styles.xml`` cut in half."""
    import io
    import zipfile

    import docx

    document = docx.Document()
    document.add_paragraph("Harbour checklist", style="Heading 1")
    document.add_paragraph("Lash the pontoons before the gale arrives.")
    original = io.BytesIO()
    document.save(original)
    broken = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(original.getvalue())) as src, \
            zipfile.ZipFile(broken, "w") as out:
        for name in src.namelist():
            body = src.read(name)
            out.writestr(name, body[:len(body) // 2] if name == "word/styles.xml" else body)
    return broken.getvalue()


def test_a_broken_styles_part_costs_the_style_names_not_the_document(tmp_path):
    """ADR-style rule: the document is indexed, its headings read by the style IDs' spelling,
    and the run says so once."""
    groove = docx_kb(tmp_path, "harbour.docx", _docx_with_broken_styles())
    done = groove("index")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("word/styles.xml is not well-formed") == 1
    top = top_hit(groove, "lash the pontoons")
    assert (top["path"], top["heading"], top["level"]) == ("harbour.docx", "Harbour checklist", 1)
