"""Plain text: the whole file is one section, titled from its filename."""

from __future__ import annotations

from groove.models import ParsedDocument, Section
from groove.parsers.base import Parser, decode_utf8, path_category_topic, title_from_filename


class TextParser(Parser):
    id = "txt"
    extensions = ("txt",)
    #: Prose chunks carry their first and last line in the file: an index that
    #: recorded an older rule re-reads these files once.
    policy = "line-ranges"

    def parse(self, data: bytes, rel_path: str) -> ParsedDocument:
        text = decode_utf8(data, rel_path)
        category, topic = path_category_topic(rel_path)
        sections = [Section(heading=None, level=None, body=text)] if text.strip() else []
        return ParsedDocument(title=title_from_filename(rel_path), sections=sections,
                              category=category, topic=topic, line_text=text)
