"""Excel .xlsx via openpyxl in read-only streaming mode (docs/indexing.md, 'Formats').

One section per non-empty sheet, heading ``Sheet: <name>``, one line per row
with cells tab-joined. Each sheet contributes at most 1 MiB of UTF-8 text, cut
at a row boundary; rows past the cap are never read (read-only mode streams).
Cached formula values are used (``data_only``), never the formulas.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Iterable
from typing import Any

from groove.models import ParsedDocument, Section
from groove.parsers._zipguard import guard_zip
from groove.parsers.base import ParseError, Parser, path_category_topic, title_from_filename

MAX_SHEET_TEXT_BYTES = 1024 * 1024


class XlsxParser(Parser):
    id = "xlsx"
    extensions = ("xlsx",)
    binary_format = True

    def parse(self, data: bytes, rel_path: str) -> ParsedDocument:
        guard_zip(data, rel_path, "xlsx")
        from openpyxl import load_workbook

        warnings: list[str] = []
        sections: list[Section] = []
        try:
            workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
            try:
                for sheet in workbook.worksheets:
                    sheet.reset_dimensions()  # a hostile/wrong <dimension> must not pad rows
                    body, cut_after = sheet_text(sheet.iter_rows(values_only=True))
                    if cut_after is not None:
                        warnings.append(f"sheet {sheet.title!r} has over "
                                        f"{MAX_SHEET_TEXT_BYTES // 1024} KiB of text; only the "
                                        f"first {cut_after} non-empty rows are indexed")
                    if body:
                        sections.append(Section(heading=f"Sheet: {sheet.title}", level=1,
                                                body=body))
                title = " ".join((workbook.properties.title or "").split()) or None
            finally:
                workbook.close()
        except Exception as exc:  # openpyxl / lxml / zipfile raise many types on broken parts
            raise ParseError(f"{rel_path}: not a readable .xlsx ({type(exc).__name__}: "
                             f"{exc})") from None
        category, topic = path_category_topic(rel_path)
        return ParsedDocument(
            title=title or title_from_filename(rel_path),
            sections=sections,
            category=category,
            topic=topic,
            binary_format=True,
            warnings=warnings,
        )


def sheet_text(rows: Iterable[tuple[Any, ...]],
               limit: int = MAX_SHEET_TEXT_BYTES) -> tuple[str, int | None]:
    """(text, None) or, when the cap was hit, (text so far, number of rows kept).

    Empty rows are dropped and trailing empty cells trimmed; the cap counts the
    UTF-8 bytes of the joined text including newlines.
    """
    lines: list[str] = []
    size = 0
    for row in rows:
        cells = [cell_text(v) for v in row]
        while cells and not cells[-1]:
            cells.pop()
        if not cells:
            continue
        line = "\t".join(cells)
        cost = len(line.encode("utf-8")) + (1 if lines else 0)
        if size + cost > limit:
            return "\n".join(lines), len(lines)
        lines.append(line)
        size += cost
    return "\n".join(lines), None


def cell_text(value: Any) -> str:
    """A cell value on one line: tabs/newlines inside a cell would break the row layout."""
    if value is None:
        return ""
    if isinstance(value, dt.datetime | dt.date | dt.time):
        text = value.isoformat()
    elif isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        text = str(int(value))
    else:
        text = str(value)
    return " ".join(text.split())
