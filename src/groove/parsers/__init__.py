"""Parser registry: which parser handles which file extension.

Adding a format is one line in :data:`PARSERS` (id -> "module:Class") plus one
module; modules are imported lazily, so an optional dependency (pypdf, ...) is
only needed when its format is enabled. The ids here are the only list of
``[parsers] enabled`` values (docs/configuration.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

from groove.errors import ConfigError
from groove.parsers.base import ParseError, Parser
from groove.registry import Registry

__all__ = [
    "LEGACY_PARSER_IDS", "PARSERS", "PARSER_ALIASES", "PARSER_IDS", "ParseError", "Parser",
    "check_parsers", "extensions_for", "get_parser", "get_parser_for",
]

PARSERS: Registry[type[Parser]] = Registry("parser id", {
    "md": "groove.parsers.markdown:MarkdownParser",
    "txt": "groove.parsers.text:TextParser",
    "pdf": "groove.parsers.pdf:PdfParser",
    "docx": "groove.parsers.docx:DocxParser",
    "xlsx": "groove.parsers.xlsx:XlsxParser",
    "pptx": "groove.parsers.pptx:PptxParser",
    # source code (the ``code`` extra; docs/indexing.md, "Source code")
    "python": "groove.parsers.code:PythonParser",
    "rust": "groove.parsers.code:RustParser",
    "javascript": "groove.parsers.code:JavascriptParser",
    "typescript": "groove.parsers.code:TypescriptParser",
    "go": "groove.parsers.code:GoParser",
    "java": "groove.parsers.code:JavaParser",
    "c": "groove.parsers.code:CParser",
    "cpp": "groove.parsers.code:CppParser",
    "php": "groove.parsers.code:PhpParser",
}, ConfigError)

#: Every id ``[parsers] enabled`` accepts (docs/configuration.md, "[parsers]").
PARSER_IDS: tuple[str, ...] = PARSERS.ids
#: Other spellings ``[parsers] enabled`` accepts (GrooveSeek's ids), read as the id they name.
PARSER_ALIASES: dict[str, str] = {"py": "python", "rs": "rust"}
#: Old binary Office formats: refused with the advice to convert them.
LEGACY_PARSER_IDS: tuple[str, ...] = ("xls", "doc", "ppt")


def get_parser(parser_id: str) -> Parser:
    """The (cached) parser for an id; ConfigError naming the accepted ids for an unknown one."""
    cls = PARSERS.load(parser_id)
    return PARSERS.instance(parser_id, cls)


def check_parsers(enabled_ids: Iterable[str]) -> None:
    """Load what every enabled parser needs now (a code grammar), so a missing package
    stops an index run with one message before any database is created."""
    for parser in _enabled(enabled_ids):
        parser.check()


def _enabled(enabled_ids: Iterable[str]) -> list[Parser]:
    return [get_parser(i) for i in dict.fromkeys(enabled_ids)]


def extensions_for(enabled_ids: Iterable[str]) -> set[str]:
    """Lower-case extensions (no dot) the enabled parsers handle."""
    return {ext for parser in _enabled(enabled_ids) for ext in parser.extensions}


def get_parser_for(rel_path: str, enabled_ids: Iterable[str]) -> Parser | None:
    """The enabled parser for a path's extension (case-insensitive), or None."""
    ext = PurePosixPath(rel_path.replace("\\", "/")).suffix.lower().lstrip(".")
    if not ext:
        return None
    for parser in _enabled(enabled_ids):
        if ext in parser.extensions:
            return parser
    return None
