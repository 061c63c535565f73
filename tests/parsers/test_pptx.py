"""PowerPoint .pptx parsing (SPEC 10): one section per slide in order, notes appended."""

from __future__ import annotations

import io

import pytest
from office_files import make_pptx

from groove.parsers import get_parser_for
from groove.parsers.base import ParseError
from groove.parsers.pptx import PptxParser


def parse(data: bytes, rel_path: str = "talks/kickoff-deck.pptx"):
    return PptxParser().parse(data, rel_path)


def test_registered_for_pptx_when_enabled():
    assert isinstance(get_parser_for("k.PPTX", ["md", "pptx"]), PptxParser)


def test_one_section_per_slide_with_numbered_headings():
    doc = parse(make_pptx([
        ("Welcome", "Agenda for today", None),
        (None, "A slide without a title", None),
        ("Roadmap", "Q1: search\nQ2: graph", "Mention the beta date"),
    ]))
    assert [(s.heading, s.level) for s in doc.sections] == [
        ("Slide 1: Welcome", 1), ("Slide 2", 1), ("Slide 3: Roadmap", 1)]
    assert doc.sections[0].body == "Agenda for today"
    assert doc.sections[2].body == "Q1: search\nQ2: graph\n\n[notes] Mention the beta date"
    assert doc.binary_format is True
    assert doc.category == "talks"


def test_slide_order_follows_the_presentation_not_the_part_names():
    from pptx import Presentation

    data = make_pptx([("First made", "one", None), ("Second made", "two", None),
                      ("Third made", "three", None)])
    presentation = Presentation(io.BytesIO(data))
    id_list = presentation.slides._sldIdLst
    last = id_list[-1]
    id_list.remove(last)
    id_list.insert(0, last)  # move slide3.xml to the front of the show
    out = io.BytesIO()
    presentation.save(out)
    doc = parse(out.getvalue())
    assert [s.heading for s in doc.sections] == [
        "Slide 1: Third made", "Slide 2: First made", "Slide 3: Second made"]


def test_notes_only_slide_and_empty_notes():
    doc = parse(make_pptx([(None, "", "only notes here"), ("Plain", "body", "  ")]))
    assert doc.sections[0].body == "[notes] only notes here"
    assert doc.sections[1].body == "body"


def test_title_from_core_properties_then_first_slide_title_then_filename():
    assert parse(make_pptx([("Hello", "x", None)], title="Kickoff 2026")).title == "Kickoff 2026"
    assert parse(make_pptx([(None, "x", None), ("Hello", "y", None)])).title == "Hello"
    assert parse(make_pptx([(None, "x", None)])).title == "kickoff deck"


def test_truncated_pptx_is_refused():
    data = make_pptx([("T", "body", "notes")] * 5)
    with pytest.raises(ParseError, match=r"cut\.pptx"):
        parse(data[: len(data) // 2], "cut.pptx")
