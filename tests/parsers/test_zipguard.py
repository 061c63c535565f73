"""Zip-bomb guard for docx/xlsx/pptx (SPEC 10): declared and inflated bytes <= 50 MiB."""

from __future__ import annotations

import io
import zipfile

import pytest
from office_files import CFB_HEADER, make_docx, make_pptx, make_xlsx, make_zip_bomb

from groove.parsers import _zipguard
from groove.parsers._zipguard import guard_zip
from groove.parsers.base import ParseError
from groove.parsers.docx import DocxParser
from groove.parsers.pptx import PptxParser
from groove.parsers.xlsx import XlsxParser

PARSERS = [("docx", DocxParser()), ("xlsx", XlsxParser()), ("pptx", PptxParser())]


@pytest.fixture(scope="module")
def bomb() -> bytes:
    data = make_zip_bomb()
    assert len(data) < 200 * 1024  # 60 MiB of zeros really is tiny on disk
    return data


def test_real_office_files_pass_the_guard():
    guard_zip(make_docx([("h1", "Intro"), ("p", "text")]), "a.docx", "docx")
    guard_zip(make_xlsx({"S": [["a", 1]]}), "a.xlsx", "xlsx")
    guard_zip(make_pptx([("T", "body", None)]), "a.pptx", "pptx")


def test_declared_size_over_50_mib_is_refused_with_the_measurement(bomb):
    with pytest.raises(ParseError) as info:
        guard_zip(bomb, "big.docx", "docx")
    message = str(info.value)
    assert "big.docx" in message and "declare" in message
    assert "60.0 MiB" in message and "50 MiB" in message


@pytest.mark.parametrize(("ext", "parser"), PARSERS)
def test_every_ooxml_parser_refuses_the_bomb_before_parsing(bomb, ext, parser):
    with pytest.raises(ParseError, match="zip-bomb guard"):
        parser.parse(bomb, f"bomb.{ext}")


def test_a_member_that_lies_about_its_size_is_refused():
    liar = make_zip_bomb(size=4 * 1024 * 1024, declared=1000)
    with pytest.raises(ParseError, match="cannot be decompressed"):
        guard_zip(liar, "liar.xlsx", "xlsx")


def test_inflated_bytes_are_counted_and_inflation_stops_past_the_cap():
    """The running counter, independent of the declared sizes, against the run's budget."""
    data = make_zip_bomb(size=3 * 1024 * 1024)
    with (_zipguard.decompression_budget(1024 * 1024),
          zipfile.ZipFile(io.BytesIO(data)) as archive, pytest.raises(ParseError) as info):
        _zipguard._inflate_all(archive, archive.infolist(), "z.pptx", "pptx")
    message = str(info.value)
    assert "decompressing" in message and "more than the 1 MiB limit" in message
    assert "[index] max_decompressed_size" in message
    assert "word/document.xml" in message


def test_absurd_member_count_is_refused():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for i in range(_zipguard.MAX_MEMBERS + 1):
            zf.writestr(f"m{i}", b"")
    with pytest.raises(ParseError, match=r"10001 members, over the limit of 10000"):
        guard_zip(out.getvalue(), "many.docx", "docx")


@pytest.mark.parametrize(("ext", "parser"), PARSERS)
def test_cfb_container_is_reported_as_password_protected_or_legacy(ext, parser):
    with pytest.raises(ParseError, match="password-protected or legacy format"):
        parser.parse(CFB_HEADER + b"\x00" * 1024, f"secret.{ext}")


@pytest.mark.parametrize("junk", [b"", b"not a zip at all", b"PK\x03\x04" + b"\x00" * 40])
def test_non_zip_bytes_are_refused_as_invalid(junk):
    with pytest.raises(ParseError, match=r"not a valid \.docx"):
        guard_zip(junk, "junk.docx", "docx")


def test_truncated_zip_is_refused():
    data = make_docx([("p", "some text " * 200)])
    with pytest.raises(ParseError, match=r"junk\.docx"):
        guard_zip(data[: len(data) // 2], "junk.docx", "docx")
