"""The parser interface, plus helpers every text-format parser shares.

A parser turns the raw bytes of one file into a :class:`ParsedDocument`. It
does no I/O (the walk already read the bytes safely) and raises
:class:`ParseError` for a file it cannot handle, which the indexer turns into
one "skipped" warning for that file.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from groove.errors import GrooveError
from groove.models import ParsedDocument


class ParseError(GrooveError):
    """A file's contents cannot be parsed (not UTF-8, binary, malformed ...)."""


class Parser:
    """Base class: subclasses set ``id`` and ``extensions`` and implement ``parse``.

    ``extensions`` are lower-case, without the dot. ``binary_format`` marks
    formats whose chunks are exempt from the quality score and whose text must
    be re-extracted (not decoded) when a document is read back.
    """

    id: str = ""
    extensions: tuple[str, ...] = ()
    binary_format: bool = False
    #: Names the rule this parser splits files by. When it changes, an index
    #: recording another one re-reads this parser's unchanged files once
    #: (groove.indexing.indexer); "" means the parser has not changed its rule.
    policy: str = ""

    def check(self) -> None:
        """Raise ConfigError now if this parser cannot work (its grammar is missing)."""

    def parse(self, data: bytes, rel_path: str) -> ParsedDocument:
        raise NotImplementedError


def decode_utf8(data: bytes, rel_path: str) -> str:
    """Strict UTF-8 (a leading BOM is dropped), newlines normalised to ``\\n``.

    Text containing NUL is refused as binary: valid UTF-8 junk with a text
    extension must not end up in the index.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(
            f"{rel_path}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "text formats are read as UTF-8 only - re-save the file as UTF-8"
        ) from None
    if "\x00" in text:
        raise ParseError(f"{rel_path}: contains NUL bytes, so it looks binary, not text")
    text = text.removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def title_from_filename(rel_path: str) -> str:
    """``notes/deep-dive-2026.md`` -> ``deep dive 2026``."""
    stem = PurePosixPath(rel_path.replace("\\", "/")).stem
    title = " ".join(stem.replace("-", " ").replace("_", " ").split())
    return title or stem


def path_category_topic(rel_path: str) -> tuple[str | None, str | None]:
    """First and second *directory* segments of the relative path."""
    dirs = [p for p in PurePosixPath(rel_path.replace("\\", "/")).parts[:-1] if p not in ("", ".")]
    return (dirs[0] if dirs else None, dirs[1] if len(dirs) > 1 else None)
