"""The full-text index: a derived directory beside the database (docs/indexing.md).

:mod:`groove.fulltext.base` states the contract, :mod:`groove.fulltext.tantivy`
implements it. The store owns the index; nothing else writes it.
"""

from __future__ import annotations

from pathlib import Path

from groove.fulltext.base import FullTextIndex, Stamp, TextRow

__all__ = ["FULLTEXT_SUFFIX", "FullTextIndex", "Stamp", "TextRow", "fulltext_path", "open_fulltext"]

#: Appended to the database file name: ``.groove.db`` → ``.groove.db.fts/``.
FULLTEXT_SUFFIX = ".fts"


def fulltext_path(db_path: Path) -> Path:
    """The full-text index directory that belongs to the database at ``db_path``."""
    return db_path.with_name(db_path.name + FULLTEXT_SUFFIX)


def open_fulltext(db_path: Path) -> FullTextIndex:
    """Open (creating if absent) the full-text index of the database at ``db_path``."""
    from groove.fulltext.tantivy import TantivyIndex

    return TantivyIndex(fulltext_path(db_path))
