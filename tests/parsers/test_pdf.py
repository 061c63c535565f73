"""PDF parsing (SPEC 10): pages, metadata, skips with measurements, text clean-up."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st
from office_files import CFB_HEADER, make_pdf

from groove.parsers import get_parser_for
from groove.parsers.base import ParseError
from groove.parsers.pdf import PdfParser, clean_page_text

LONG = "This sentence is comfortably longer than fifty characters of text."


def parse(data: bytes, rel_path: str = "docs/papers/report-2026.pdf"):
    return PdfParser().parse(data, rel_path)


def test_registered_for_pdf_when_enabled():
    assert isinstance(get_parser_for("A/B.PDF", ["md", "pdf"]), PdfParser)
    assert get_parser_for("a.pdf", ["md"]) is None


def test_one_section_per_non_empty_page_headed_p_n():
    doc = parse(make_pdf([[LONG, "second line"], [], [LONG, LONG]]))
    assert [(s.heading, s.level) for s in doc.sections] == [("p.1", 1), ("p.3", 1)]
    assert "second line" in doc.sections[0].body
    assert doc.binary_format is True


def test_title_and_creation_date_from_the_info_dictionary():
    doc = parse(make_pdf([[LONG]], title="Quarterly Report", creation_date="D:20240315120000Z"))
    assert doc.title == "Quarterly Report"
    assert doc.date == "2024-03-15"


def test_filename_fallback_and_path_category_topic():
    doc = parse(make_pdf([[LONG]]))
    assert doc.title == "report 2026"
    assert doc.date is None
    assert (doc.category, doc.topic) == ("docs", "papers")


def test_unparseable_creation_date_is_ignored_not_fatal():
    doc = parse(make_pdf([[LONG]], creation_date="yesterday-ish"))
    assert doc.date is None


def test_encrypted_pdf_is_skipped_with_a_clear_error():
    with pytest.raises(ParseError, match="encrypted"):
        parse(make_pdf([[LONG]], password="s3cret"))


def test_too_little_text_per_page_is_skipped_with_the_measurement():
    data = make_pdf([["short"], [], ["tiny"]])
    with pytest.raises(ParseError) as info:
        parse(data, "scan.pdf")
    message = str(info.value)
    assert "scan.pdf" in message
    assert "3.0 characters of text per page" in message  # (5 + 0 + 4) / 3
    assert "over 3 page(s)" in message and "at least 50" in message


def test_exactly_fifty_characters_per_page_is_enough():
    doc = parse(make_pdf([["x" * 50]]))
    assert doc.sections[0].body == "x" * 50


def test_c1_control_characters_at_one_percent_mark_the_text_as_mis_decoded():
    # codes 1 and 2 map to U+0085 / U+0090, as a font with a broken encoding does
    text = b"\x01\x02" + b"a" * 198  # exactly 1% C1
    with pytest.raises(ParseError) as info:
        parse(make_pdf([[text]], differences=["uni0085", "uni0090"]))
    assert "C1 control characters" in str(info.value) and "1.0%" in str(info.value)


def test_c1_below_one_percent_is_accepted():
    text = b"\x01" + b"a" * 300
    doc = parse(make_pdf([[text]], differences=["uni0085"]))
    assert doc.sections[0].body.count("\x85") == 1


def test_ligature_glyphs_are_normalised():
    # codes 1..5 map to the ligature glyphs; pypdf decodes them to U+FB00..U+FB04
    line = b"\x02nal \x03ow e\x01ort o\x04ce ba\x05e " + LONG.encode()
    doc = parse(make_pdf([[line]], differences=["ff", "fi", "fl", "ffi", "ffl"]))
    body = doc.sections[0].body
    assert body.startswith("final flow effort office baffle ")
    assert not any(ch in body for ch in "\ufb00\ufb01\ufb02\ufb03\ufb04")


def test_line_end_hyphen_joined_only_between_lower_case_ascii_letters():
    lines = ["we de-", "fine words, keep Anti-", "Body and 2-", "3 and caf\xe9-", "bar", LONG]
    body = parse(make_pdf([lines])).sections[0].body
    assert "we define words" in body
    assert "Anti-\nBody" in body and "2-\n3" in body and "caf\xe9-\nbar" in body


def test_ligature_then_hyphen_join():
    assert clean_page_text("de-\n\ufb01ne") == "define"


@given(st.text())
def test_clean_page_text_never_leaves_ligatures_or_joinable_breaks(text):
    out = clean_page_text(text)
    assert not any(ch in out for ch in "\ufb00\ufb01\ufb02\ufb03\ufb04")
    assert all(not (out[i - 1].islower() and out[i - 1].isascii()
                    and out[i + 2].isascii() and out[i + 2].islower())
               for i in range(1, len(out) - 2) if out[i:i + 2] == "-\n")


@pytest.mark.parametrize("data", [
    b"",
    b"%PDF-1.7\n",
    b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\ntrailer << /Root 1 0 R >>",
    b"this is not a pdf at all " * 20,
    CFB_HEADER,
], ids=["empty", "header-only", "dangling-refs", "junk", "cfb"])
def test_malformed_pdfs_raise_parse_error_naming_the_file(data):
    with pytest.raises(ParseError, match=r"bad\.pdf"):
        parse(data, "bad.pdf")


def test_truncated_pdf_raises_parse_error_and_pypdf_adds_no_warning_lines(caplog):
    data = make_pdf([[LONG]] * 3)
    for cut in (len(data) // 3, len(data) // 2, len(data) - 30):
        with caplog.at_level(logging.WARNING), pytest.raises(ParseError, match=r"cut\.pdf"):
            parse(data[:cut], "cut.pdf")
    assert [r.getMessage() for r in caplog.records if r.name.startswith("pypdf")] == []
    assert logging.getLogger("pypdf").level == logging.NOTSET  # restored
