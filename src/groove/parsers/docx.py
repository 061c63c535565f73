"""Word .docx via python-docx (docs/indexing.md, 'Formats').

Sections start at heading paragraphs and carry the same ancestry as Markdown
headings, so chunking and ``exclude_headings`` treat both alike. What makes a
heading is the paragraph style's *name* in ``word/styles.xml``, not its ID:
Word in a Japanese (or other) interface writes its built-in headings under
the IDs ``1`` .. ``6`` and names them ``heading 1`` .. ``heading 6``; other
writers store the Japanese name ``見出し 1`` itself, which counts the same. A style
that is not named so is a heading when the ``w:basedOn`` chain reaches one
(at most :data:`MAX_BASED_ON` styles, a cycle ends the walk), unless a style
on the way sets outline level 9 ("body text"), which cancels it. An outline
level never makes a heading by itself. A paragraph whose style ID the styles
part does not hold (or a document without one) is read by the ID's spelling
(``Heading1``), as before. Tables are flattened in document order (cells tab-joined,
one row per line). Core properties fill title / date / tags.

python-docx / python-pptx are imported inside the functions that need them,
so :func:`core_fields` (shared with the pptx parser) costs no optional import.
"""

from __future__ import annotations

import datetime as dt
import io
import logging
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from groove.models import ParsedDocument, Section
from groove.parsers._zipguard import guard_zip
from groove.parsers.base import ParseError, Parser, path_category_topic, title_from_filename

#: A heading style's name: the built-in English name Word stores whatever its interface
#: language (``heading 1``), or the Japanese name other writers store (``見出し 1``).
_HEADING_STYLE = re.compile(r"^(?:heading|見出し)\s*([1-9])$", re.IGNORECASE)
#: How many styles of a ``w:basedOn`` chain are walked looking for a heading.
MAX_BASED_ON = 16
_BODY_OUTLINE_LEVEL = "9"
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_KEYWORD_SPLIT = re.compile(r"[,;]")
log = logging.getLogger("groove.parsers.docx")


class DocxParser(Parser):
    id = "docx"
    extensions = ("docx",)
    binary_format = True
    policy = "headings-from-style-names"

    def parse(self, data: bytes, rel_path: str) -> ParsedDocument:
        guard_zip(data, rel_path, "docx")
        import docx

        try:
            document = _open(docx, data, rel_path)
            sections = _sections(document)
            core = core_fields(document.core_properties)
        except ParseError:
            raise
        except Exception as exc:  # python-docx / lxml raise many types on broken parts
            raise ParseError(f"{rel_path}: not a readable .docx ({type(exc).__name__}: "
                             f"{exc})") from None
        first_h1 = next((s.heading for s in sections if s.level == 1 and s.heading), None)
        return core.document(rel_path, sections, first_h1)


#: An empty styles part, standing in for one that is not well-formed XML.
_EMPTY_STYLES = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                 b'<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"/>')
_STYLES_PART = "word/styles.xml"


def _open(docx: Any, data: bytes, rel_path: str) -> Any:
    """The python-docx document; a ``word/styles.xml`` that is not well-formed costs only the
    style table (every paragraph is then read by its style ID's spelling), with one warning,
    never the document's place in the index. Only a failed open looks at the part again."""
    try:
        return docx.Document(io.BytesIO(data))
    except Exception:
        repaired = _without_broken_styles(data)
        if repaired is None:
            raise
    log.warning("%s: word/styles.xml is not well-formed; its headings are read from the "
                "style IDs' spelling (Heading1) instead of the style names", rel_path)
    return docx.Document(io.BytesIO(repaired))


def _without_broken_styles(data: bytes) -> bytes | None:
    """``data`` with an empty styles part in place of one that does not parse, else None."""
    import zipfile

    from docx.oxml.parser import parse_xml  # python-docx's own parser: no entities, no network

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        if _STYLES_PART not in archive.namelist():
            return None
        try:
            parse_xml(archive.read(_STYLES_PART))
            return None  # the styles part is fine: the failure is elsewhere
        except Exception:  # noqa: BLE001 - lxml's syntax errors: the part is unusable
            pass
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as repaired:
            for item in archive.infolist():
                body = _EMPTY_STYLES if item.filename == _STYLES_PART else archive.read(item)
                repaired.writestr(item, body)
    return out.getvalue()


@dataclass
class CoreFields:
    title: str | None = None
    date: str | None = None
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    def document(self, rel_path: str, sections: list[Section], first_heading: str | None
                 ) -> ParsedDocument:
        """An Office file's document: titled by its core properties, else its first heading
        (a level-1 heading, a slide title), else its file name."""
        category, topic = path_category_topic(rel_path)
        return ParsedDocument(
            title=self.title or first_heading or title_from_filename(rel_path),
            sections=sections,
            metadata=self.metadata,
            date=self.date,
            tags=self.tags,
            category=category,
            topic=topic,
            binary_format=True,
        )


def core_fields(props: Any) -> CoreFields:
    """OOXML core properties (docx and pptx share the schema) as frontmatter-like fields.

    ``keywords`` is free text; Office writes it comma- or semicolon-separated.
    """
    keywords = _clean(getattr(props, "keywords", None)) or ""
    tags = [t.strip() for t in _KEYWORD_SPLIT.split(keywords)]
    metadata = {key: value for key in ("author", "subject")
                if (value := _clean(getattr(props, key, None)))}
    return CoreFields(
        title=_clean(getattr(props, "title", None)),
        date=_iso_date(getattr(props, "created", None)),
        tags=list(dict.fromkeys(t for t in tags if t)),
        metadata=metadata,
    )


def _clean(value: Any) -> str | None:
    text = " ".join(value.split()) if isinstance(value, str) else ""
    return text or None


def _iso_date(value: Any) -> str | None:
    return value.date().isoformat() if isinstance(value, dt.datetime) else None


# --- body ------------------------------------------------------------------------------
def _sections(document: Any) -> list[Section]:
    builder = SectionBuilder()
    for block, level in _blocks(document, _style_table(document)):
        if level is None:
            builder.add_text(block)
        else:
            builder.start(block, level)
    return builder.finish()


def _blocks(document: Any, styles: dict[str, Any]) -> Iterator[tuple[str, int | None]]:
    """(text, heading level or None) for each paragraph and table, in document order."""
    from docx.table import Table

    for item in document.iter_inner_content():
        if isinstance(item, Table):
            yield table_text(item), None
            continue
        level = heading_level(item._p.style, styles)
        text = item.text
        if level is not None and text.strip():
            yield " ".join(text.split()), level
        else:
            yield text, None


def _style_table(document: Any) -> dict[str, Any]:
    """Paragraph style elements by ID (the first definition of an ID wins); {} without a part."""
    try:
        root = document.styles.element
    except Exception:  # noqa: BLE001 - no or unreadable styles part: read IDs by spelling
        return {}
    table: dict[str, Any] = {}
    for style in root.findall(f"{_W}style"):
        style_id = style.get(f"{_W}styleId")
        if style_id is None or style_id in table:
            continue
        table[style_id] = style if style.get(f"{_W}type") in (None, "paragraph") else None
    return {k: v for k, v in table.items() if v is not None}


def _level_of(name: str | None) -> int | None:
    """The level a style name or ID spells (``heading 2``, ``Heading2``, ``見出し２``), else None.

    NFKC folds the full-width digits and spaces a Japanese name may be typed with."""
    match = _HEADING_STYLE.match(unicodedata.normalize("NFKC", name or "").strip())
    return int(match.group(1)) if match else None


def heading_level(style_id: str | None, styles: dict[str, Any]) -> int | None:
    """The heading level a paragraph style gives (None: body text); see the module docstring."""
    if style_id is None:
        return None
    if style_id not in styles:
        return _level_of(style_id)  # the ID's spelling, e.g. "Heading1"
    current: str | None = style_id
    seen: set[str] = set()
    for _ in range(MAX_BASED_ON):
        if current is None or current in seen or current not in styles:
            return None
        seen.add(current)
        element = styles[current]
        outline = element.find(f"{_W}pPr/{_W}outlineLvl")
        if outline is not None and outline.get(f"{_W}val") == _BODY_OUTLINE_LEVEL:
            return None
        name = element.find(f"{_W}name")
        level = _level_of(name.get(f"{_W}val") if name is not None else current)
        if level is not None:
            return level
        based_on = element.find(f"{_W}basedOn")
        current = based_on.get(f"{_W}val") if based_on is not None else None
    return None


def table_text(table: Any) -> str:
    """One line per row, cells tab-joined; a merged cell counts once per row."""
    lines = []
    for row in table.rows:
        cells: list[str] = []
        previous = None
        for cell in row.cells:
            if previous is not None and cell._tc is previous._tc:  # horizontally merged
                continue
            previous = cell
            cells.append(" ".join(cell.text.split()))
        if any(cells):
            lines.append("\t".join(cells))
    return "\n".join(lines)


class SectionBuilder:
    """Heading-delimited sections with Markdown's ancestry rules (see markdown.split_sections).

    A new heading pops every open heading of the same or deeper level; what
    remains is its ancestry. Text before the first heading is the preamble.
    """

    def __init__(self) -> None:
        self._sections: list[Section] = []
        self._stack: list[tuple[int, str]] = []
        self._heading: str | None = None
        self._level: int | None = None
        self._ancestry: tuple[str, ...] = ()
        self._lines: list[str] = []

    def add_text(self, text: str) -> None:
        """One paragraph or table; blocks are blank-line separated so long sections split
        on them."""
        if text.strip():
            self._lines.append(text)

    def start(self, heading: str, level: int) -> None:
        self._flush()
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._ancestry = tuple(h for _, h in self._stack)
        self._stack.append((level, heading))
        self._heading, self._level, self._lines = heading, level, []

    def finish(self) -> list[Section]:
        self._flush()
        return self._sections

    def _flush(self) -> None:
        body = "\n\n".join(self._lines)
        if self._heading is not None or body.strip():
            self._sections.append(Section(heading=self._heading, level=self._level, body=body,
                                          ancestry=self._ancestry))
