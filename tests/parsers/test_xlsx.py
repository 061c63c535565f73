"""Excel .xlsx parsing (SPEC 10): one section per non-empty sheet, 1 MiB cap per sheet."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st
from office_files import make_xlsx

from groove.parsers import get_parser_for
from groove.parsers.base import ParseError
from groove.parsers.xlsx import MAX_SHEET_TEXT_BYTES, XlsxParser, sheet_text


def parse(data: bytes, rel_path: str = "finance/budget-2026.xlsx"):
    return XlsxParser().parse(data, rel_path)


def test_registered_for_xlsx_when_enabled():
    assert isinstance(get_parser_for("b.XLSX", ["xlsx"]), XlsxParser)


def test_one_section_per_non_empty_sheet_with_tab_joined_rows():
    doc = parse(make_xlsx({
        "Costs": [["item", "amount"], ["rent", 1200], [None, None], ["food", 310.5]],
        "Empty": [],
        "Blank cells": [[None, None]],
        "Notes": [["reviewed", dt.date(2026, 1, 31)]],
    }))
    assert [(s.heading, s.level) for s in doc.sections] == [
        ("Sheet: Costs", 1), ("Sheet: Notes", 1)]
    assert doc.sections[0].body == "item\tamount\nrent\t1200\nfood\t310.5"
    assert doc.sections[1].body.startswith("reviewed\t2026-01-31")
    assert doc.title == "budget 2026"
    assert doc.category == "finance"
    assert doc.binary_format is True


def test_inner_empty_cells_keep_columns_and_trailing_ones_are_trimmed():
    doc = parse(make_xlsx({"S": [["a", None, "c", None, None], ["multi\nline\tcell"]]}))
    assert doc.sections[0].body == "a\t\tc\nmulti line cell"


def test_sheet_text_is_capped_at_one_mib_on_a_row_boundary():
    row = "x" * 1000
    rows = [[row, i] for i in range(2000)]  # ~2 MB of text
    doc = parse(make_xlsx({"Big": rows, "Small": [["still here"]]}))
    body = doc.sections[0].body
    assert len(body.encode("utf-8")) <= MAX_SHEET_TEXT_BYTES
    lines = body.split("\n")
    assert all(line == f"{row}\t{i}" for i, line in enumerate(lines))  # whole rows only
    assert len(body.encode()) + len(row) + 10 > MAX_SHEET_TEXT_BYTES  # as many as fit
    assert doc.sections[1].body == "still here"
    assert any("'Big'" in w and f"first {len(lines)} non-empty rows" in w
               for w in doc.warnings)


def test_sheet_text_cap_counts_utf8_bytes():
    text, cut = sheet_text([("é" * 4,), ("é" * 4,)], limit=17)  # 8 + 1 + 8 bytes
    assert (text, cut) == ("éééé\néééé", None)
    text, cut = sheet_text([("é" * 4,), ("é" * 4,)], limit=16)
    assert (text, cut) == ("éééé", 1)


@given(st.lists(st.lists(st.one_of(st.none(), st.text(max_size=12), st.integers()),
                         max_size=4), max_size=30),
       st.integers(min_value=0, max_value=200))
def test_sheet_text_keeps_whole_rows_within_the_byte_limit(rows, limit):
    full, _ = sheet_text(rows, limit=10**9)
    text, cut = sheet_text(rows, limit=limit)
    full_lines = full.split("\n") if full else []
    kept = text.split("\n") if text else []
    assert len(text.encode("utf-8")) <= limit
    assert kept == full_lines[: len(kept)]  # a prefix of whole rows, never a cut row
    if cut is None:
        assert kept == full_lines
    else:
        assert cut == len(kept) < len(full_lines)
        assert len("\n".join(full_lines[: cut + 1]).encode("utf-8")) > limit  # next didn't fit


def test_cached_formula_values_not_formulas():
    doc = parse(make_xlsx({"S": [[1, 2, "=A1+B1"]]}))
    # openpyxl writes no cached value, so the formula cell reads as empty
    assert doc.sections[0].body == "1\t2"


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.95])
def test_truncated_xlsx_is_refused(cut):
    data = make_xlsx({"S": [[f"row {i}", i] for i in range(500)]})
    with pytest.raises(ParseError, match=r"bad\.xlsx"):
        parse(data[: int(len(data) * cut)], "bad.xlsx")


def test_zip_without_a_workbook_is_refused():
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
    with pytest.raises(ParseError, match=r"not a readable \.xlsx"):
        parse(out.getvalue(), "bad.xlsx")
