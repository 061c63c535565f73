"""PowerPoint .pptx via python-pptx (docs/indexing.md, 'Formats').

One section per slide in presentation order, heading ``Slide N: <title>``
(``Slide N`` when the slide has no title text). The body is the text of every
other shape (groups descended, tables tab-joined), then the speaker notes as
``[notes] ...``.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from typing import Any

from groove.models import ParsedDocument, Section
from groove.parsers._zipguard import guard_zip
from groove.parsers.base import ParseError, Parser
from groove.parsers.docx import core_fields


class PptxParser(Parser):
    id = "pptx"
    extensions = ("pptx",)
    binary_format = True

    def parse(self, data: bytes, rel_path: str) -> ParsedDocument:
        guard_zip(data, rel_path, "pptx")
        from pptx import Presentation

        try:
            presentation = Presentation(io.BytesIO(data))
            slides = [_slide(slide) for slide in presentation.slides]
            core = core_fields(presentation.core_properties)
        except Exception as exc:  # python-pptx / lxml raise many types on broken parts
            raise ParseError(f"{rel_path}: not a readable .pptx ({type(exc).__name__}: "
                             f"{exc})") from None
        first_title = next((t for t, _ in slides if t), None)
        sections = [Section(heading=f"Slide {n}: {t}" if t else f"Slide {n}", level=1, body=body)
                    for n, (t, body) in enumerate(slides, start=1)]
        return core.document(rel_path, sections, first_title)


def _slide(slide: Any) -> tuple[str | None, str]:
    """(title text or None, body text) of one slide."""
    title_shape = slide.shapes.title
    title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
    title_id = title_shape.shape_id if title_shape is not None else None
    parts = [text for shape in slide.shapes if shape.shape_id != title_id
             for text in _shape_texts(shape)]
    notes = _notes(slide)
    if notes:
        parts.append(f"[notes] {notes}")
    return title or None, "\n\n".join(p for p in parts if p.strip())


def _shape_texts(shape: Any) -> Iterator[str]:
    if getattr(shape, "shapes", None) is not None:  # group shape
        for child in shape.shapes:
            yield from _shape_texts(child)
    elif getattr(shape, "has_table", False) and shape.has_table:
        yield _table_text(shape.table.rows)
    elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        yield shape.text_frame.text.strip()


def _table_text(rows: Iterable[Any]) -> str:
    lines = ("\t".join(" ".join(cell.text.split()) for cell in row.cells) for row in rows)
    return "\n".join(line for line in lines if line.strip())


def _notes(slide: Any) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    return frame.text.strip() if frame is not None else ""
