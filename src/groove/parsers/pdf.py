"""PDF via pypdf (docs/indexing.md, 'Formats'): one section per non-empty page, heading ``p.N``.

Files whose text layer is missing (scans) or mis-decoded (a font without a
usable ToUnicode map yields C1 control characters) are skipped rather than
indexed as noise; the message carries the measurement so the user can judge.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import logging
import re
from collections.abc import Iterator
from typing import Any

from groove.models import ParsedDocument, Section
from groove.parsers.base import ParseError, Parser, path_category_topic, title_from_filename

log = logging.getLogger("groove.parsers.pdf")

MIN_AVG_CHARS_PER_PAGE = 50
MAX_C1_RATIO = 0.01

_LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl",
                            "\ufb03": "ffi", "\ufb04": "ffl"})
_HYPHEN_BREAK = re.compile(r"(?<=[a-z])-\n(?=[a-z])")
_C1 = re.compile(r"[\u0080-\u009f]")
_PDF_DATE = re.compile(r"^(?:D:)?(\d{4})(\d{2})?(\d{2})?")


class PdfParser(Parser):
    id = "pdf"
    extensions = ("pdf",)
    binary_format = True

    def parse(self, data: bytes, rel_path: str) -> ParsedDocument:
        with _quiet_pypdf():
            reader = _open(data, rel_path)
            pages = _page_texts(reader, rel_path)
            _check_text_quality(pages, rel_path)
            title, date = _document_info(reader)
        category, topic = path_category_topic(rel_path)
        return ParsedDocument(
            title=title or title_from_filename(rel_path),
            sections=[Section(heading=f"p.{n}", level=1, body=text)
                      for n, text in enumerate(pages, start=1) if text.strip()],
            date=date,
            category=category,
            topic=topic,
            binary_format=True,
        )


def clean_page_text(text: str) -> str:
    """Ligatures expanded, then ``-\\n`` joined only between ASCII lower-case letters.

    Ligatures go first so that ``de-\\nﬁne`` becomes ``define``; ``Anti-\\nBody``
    or ``2-\\n3`` keep their hyphen because it may be real.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").translate(_LIGATURES)
    return _HYPHEN_BREAK.sub("", text)


@contextlib.contextmanager
def _quiet_pypdf() -> Iterator[None]:
    """pypdf logs its own warnings ("EOF marker not found", ...) while recovering; a
    skipped file must cost the user one warning line (ours), so they go to debug only."""
    pypdf_log = logging.getLogger("pypdf")
    previous = pypdf_log.level
    pypdf_log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        pypdf_log.setLevel(previous)


def _open(data: bytes, rel_path: str) -> Any:
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        encrypted = reader.is_encrypted
    except Exception as exc:  # pypdf raises many types on hostile input
        raise ParseError(f"{rel_path}: not a readable PDF ({type(exc).__name__}: {exc})") from None
    if encrypted:
        raise ParseError(f"{rel_path}: the PDF is encrypted (password-protected); groove does "
                         "not decrypt files - save an unencrypted copy to index it")
    return reader


def _page_texts(reader: Any, rel_path: str) -> list[str]:
    try:
        return [clean_page_text(page.extract_text() or "") for page in reader.pages]
    except Exception as exc:
        raise ParseError(f"{rel_path}: the PDF is malformed, its text cannot be extracted "
                         f"({type(exc).__name__}: {exc})") from None


def _check_text_quality(pages: list[str], rel_path: str) -> None:
    """Refuse mis-decoded text (C1 share) and missing text layers (chars per page)."""
    text = "".join(pages)
    c1 = len(_C1.findall(text))
    if text and c1 / len(text) >= MAX_C1_RATIO:
        raise ParseError(
            f"{rel_path}: {c1 / len(text):.1%} of the extracted text ({c1} of {len(text)} "
            f"characters) are C1 control characters (U+0080-U+009F), at most "
            f"{MAX_C1_RATIO:.0%} accepted; the PDF's fonts are mis-decoded, so it is skipped")
    count = sum(len(p.strip()) for p in pages)
    average = count / len(pages) if pages else 0.0
    if average < MIN_AVG_CHARS_PER_PAGE:
        raise ParseError(
            f"{rel_path}: only {average:.1f} characters of text per page on average ({count} "
            f"over {len(pages)} page(s)), at least {MIN_AVG_CHARS_PER_PAGE} needed; probably "
            "a scan without a text layer - run OCR on it to index it")


def _document_info(reader: Any) -> tuple[str | None, str | None]:
    """(Title, CreationDate as YYYY-MM-DD) from the info dictionary; None when absent/bad."""
    try:
        info = reader.metadata
    except Exception as exc:
        log.debug("PDF info dictionary unreadable: %s", exc)
        return None, None
    if info is None:
        return None, None
    title = _text(info.get("/Title"))
    return title, _pdf_date(info.get("/CreationDate"))


def _text(value: Any) -> str | None:
    try:
        text = " ".join(str(value).split()) if value is not None else ""
    except Exception:
        return None
    return text or None


def _pdf_date(value: Any) -> str | None:
    """``D:20260102103000+01'00'`` -> ``2026-01-02``; month/day default to 01; junk -> None."""
    raw = _text(value)
    match = _PDF_DATE.match(raw or "")
    if match is None:
        return None
    year, month, day = (int(g) if g else 1 for g in match.groups())
    try:
        return dt.date(year, month, day).isoformat()
    except ValueError:
        return None
