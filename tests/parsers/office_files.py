"""Builders for PDF / OOXML test fixtures, written with the libraries themselves.

Imported by the tests next to it (pytest puts this folder on sys.path because it
has no ``__init__.py``). Every builder returns the file's bytes.
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from collections.abc import Sequence

CFB_HEADER = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504


def make_pdf(pages: Sequence[Sequence[str | bytes]], *, title: str | None = None,
             creation_date: str | None = None, differences: Sequence[str] = (),
             password: str | None = None) -> bytes:
    """A real PDF: one Helvetica text line per item, one page per list.

    ``differences`` re-maps codes 1, 2, ... to glyph names (e.g. ``fi``), which
    is how real PDFs end up with ligature or mis-decoded characters.
    """
    from pypdf import PdfWriter
    from pypdf.generic import (
        ArrayObject,
        DecodedStreamObject,
        DictionaryObject,
        NameObject,
        NumberObject,
    )

    writer = PdfWriter()
    encoding: object = NameObject("/WinAnsiEncoding")
    if differences:
        encoding = DictionaryObject({
            NameObject("/Type"): NameObject("/Encoding"),
            NameObject("/BaseEncoding"): NameObject("/WinAnsiEncoding"),
            NameObject("/Differences"): ArrayObject(
                [NumberObject(1), *(NameObject("/" + g) for g in differences)]),
        })
    font = writer._add_object(DictionaryObject({
        NameObject("/Type"): NameObject("/Font"),
        NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica"),
        NameObject("/Encoding"): encoding,
    }))
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
        ops = [b"BT /F1 10 Tf 12 TL 40 750 Td"]
        for line in lines:
            raw = line.encode("latin-1") if isinstance(line, str) else line
            raw = raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
            ops.append(b"(" + raw + b") '")
        ops.append(b"ET")
        stream = DecodedStreamObject()
        stream.set_data(b"\n".join(ops))
        page[NameObject("/Contents")] = writer._add_object(stream)
    info = {k: v for k, v in (("/Title", title), ("/CreationDate", creation_date)) if v}
    if info:
        writer.add_metadata(info)
    if password:
        writer.encrypt(password, algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx(blocks: Sequence[tuple[str, object]], *, title: str = "",
              created: dt.datetime | None = None, keywords: str = "") -> bytes:
    """``blocks``: ("p", text) / ("h1".."h6", text) / ("table", [[cell, ...], ...])."""
    import docx

    document = docx.Document()
    for kind, value in blocks:
        if kind == "p":
            document.add_paragraph(str(value))
        elif kind == "table":
            rows = list(value)  # type: ignore[call-overload]
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = str(cell)
        else:
            document.add_heading(str(value), level=int(kind[1:]))
    props = document.core_properties
    props.title = title
    props.keywords = keywords
    props.created = created or dt.datetime(2025, 6, 7, 8, 9, 10)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_xlsx(sheets: dict[str, Sequence[Sequence[object]]]) -> bytes:
    from openpyxl import Workbook

    workbook = Workbook(write_only=True)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(list(row))
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def make_pptx(slides: Sequence[tuple[str | None, str, str | None]], *,
              title: str = "") -> bytes:
    """``slides``: (title or None for a blank layout, body text, notes or None)."""
    from pptx import Presentation
    from pptx.util import Inches

    presentation = Presentation()
    for slide_title, body, notes in slides:
        layout = presentation.slide_layouts[5 if slide_title is not None else 6]  # title only
        slide = presentation.slides.add_slide(layout)
        if slide_title is not None:
            slide.shapes.title.text = slide_title
        if body:
            box = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(6), Inches(3))
            box.text_frame.text = body
        if notes is not None:
            slide.notes_slide.notes_text_frame.text = notes
    presentation.core_properties.title = title
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


def make_zip_bomb(member: str = "word/document.xml", size: int = 60 * 1024 * 1024,
                  declared: int | None = None) -> bytes:
    """A zip with one member of ``size`` zero bytes (~60 KiB deflated).

    ``declared`` rewrites the member's uncompressed size in both headers, to
    model an archive that lies about its size.
    """
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        with zf.open(member, "w", force_zip64=False) as stream:
            chunk = b"\0" * (1024 * 1024)
            for _ in range(size // len(chunk)):
                stream.write(chunk)
    data = out.getvalue()
    if declared is not None:
        data = _rewrite_declared_size(data, member, declared)
    return data


def _rewrite_declared_size(data: bytes, member: str, declared: int) -> bytes:
    import struct

    buf = bytearray(data)
    name = member.encode()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        local = zf.getinfo(member).header_offset
        central = zf.start_dir
    struct.pack_into("<I", buf, local + 22, declared)  # local header uncompressed size
    while central >= 0:
        (name_len,) = struct.unpack_from("<H", buf, central + 28)
        if bytes(buf[central + 46:central + 46 + name_len]) == name:
            struct.pack_into("<I", buf, central + 24, declared)
            break
        central = data.find(b"PK\x01\x02", central + 4)
    return bytes(buf)
