"""Parser registry: which parser handles which file extension.

Adding a format is one line in ``_IMPLEMENTATIONS`` (id -> "module:Class");
modules are imported lazily, so an optional dependency (pypdf, ...) is only
needed when its format is enabled.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterable
from pathlib import PurePosixPath

from groove.errors import ConfigError
from groove.parsers.base import ParseError, Parser

__all__ = ["PARSER_IDS", "ParseError", "Parser", "extensions_for", "get_parser", "get_parser_for"]

log = logging.getLogger("groove.parsers")

#: Every id ``[parsers] enabled`` accepts (docs/configuration.md, '[parsers]').
PARSER_IDS: tuple[str, ...] = ("md", "txt", "pdf", "docx", "xlsx", "pptx")

_IMPLEMENTATIONS: dict[str, str] = {
    "md": "groove.parsers.markdown:MarkdownParser",
    "txt": "groove.parsers.text:TextParser",
    "pdf": "groove.parsers.pdf:PdfParser",
    "docx": "groove.parsers.docx:DocxParser",
    "xlsx": "groove.parsers.xlsx:XlsxParser",
    "pptx": "groove.parsers.pptx:PptxParser",
}

_instances: dict[str, Parser] = {}
_warned_missing: set[str] = set()


def get_parser(parser_id: str) -> Parser | None:
    """The (cached) parser for an id; None for a known id not implemented yet."""
    if parser_id not in PARSER_IDS:
        raise ConfigError(f"unknown parser id {parser_id!r}; accepted: {', '.join(PARSER_IDS)}")
    if parser_id in _instances:
        return _instances[parser_id]
    target = _IMPLEMENTATIONS.get(parser_id)
    if target is None:
        if parser_id not in _warned_missing:
            _warned_missing.add(parser_id)
            log.warning("parser %r is enabled but not available in this version; its files "
                        "are not indexed", parser_id)
        return None
    module_name, class_name = target.split(":")
    parser = getattr(importlib.import_module(module_name), class_name)()
    _instances[parser_id] = parser
    return parser


def _enabled(enabled_ids: Iterable[str]) -> list[Parser]:
    parsers = (get_parser(i) for i in dict.fromkeys(enabled_ids))
    return [p for p in parsers if p is not None]


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
