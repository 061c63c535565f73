"""Zip-bomb guard for the OOXML formats (docx, xlsx, pptx); docs/indexing.md, 'Formats'.

The parser libraries inflate whatever the archive holds, so before any of them
sees the bytes we (1) refuse OLE/CFB containers (password-protected OOXML and
renamed legacy files), (2) refuse absurd member counts from the end-of-central-
directory record *before* ``zipfile`` builds one object per entry, (3) sum the
declared uncompressed sizes, and (4) stream-inflate every member with a running
counter, because declared sizes are attacker-controlled and may lie.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from groove.parsers.base import ParseError

#: Cap on declared *and* actually inflated bytes, summed over all members: the
#: built-in one, which every read (get_document, resources) keeps.
MAX_UNCOMPRESSED_BYTES = 50 * 1024 * 1024
#: The cap in force in this context: an index run sets ``[index]
#: max_decompressed_size`` (:func:`decompression_budget`); None is unlimited.
_BUDGET: ContextVar[int | None] = ContextVar("groove_zip_budget", default=MAX_UNCOMPRESSED_BYTES)
_KEY = "[index] max_decompressed_size"


@contextmanager
def decompression_budget(limit: int | None) -> Iterator[None]:
    """Inflate up to ``limit`` bytes per file inside the block (an index run's setting)."""
    token = _BUDGET.set(limit)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def _over(total: int) -> bool:
    limit = _BUDGET.get()
    return limit is not None and total > limit


def _limit_words() -> str:
    limit = _BUDGET.get()
    shown = f"{limit // _MIB} MiB" if limit is not None and limit % _MIB == 0 else f"{limit} bytes"
    return f"the {shown} limit ({_KEY})"
#: Real documents have tens to a few thousand parts (slides, media, sheets).
MAX_MEMBERS = 10_000

CFB_MAGIC = b"\xd0\xcf\x11\xe0"
_EOCD_SIGNATURE = b"PK\x05\x06"
_EOCD_SIZE = 22
_MAX_COMMENT = 0xFFFF
_READ_CHUNK = 1 << 16
_MIB = 1024 * 1024


def guard_zip(data: bytes, rel_path: str, kind: str) -> None:
    """Raise :class:`ParseError` unless ``data`` is a zip that is safe to hand to a parser.

    ``kind`` ("docx", ...) only words the messages.
    """
    if data[:4] == CFB_MAGIC:
        raise ParseError(
            f"{rel_path}: password-protected or legacy format (an OLE/CFB container, not a "
            f"zip-based .{kind}: encrypted Office files and renamed .doc/.xls/.ppt look like "
            f"this); remove the password or save it as .{kind} to index it")
    _check_declared_count(data, rel_path, kind)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError) as exc:
        raise ParseError(f"{rel_path}: not a valid .{kind} file (broken zip container: "
                         f"{exc})") from None
    with archive:
        members = archive.infolist()
        _check_count(len(members), rel_path)
        declared = sum(m.file_size for m in members)
        if _over(declared):
            raise ParseError(
                f"{rel_path}: zip members declare {declared} bytes "
                f"({declared / _MIB:.1f} MiB) uncompressed, over {_limit_words()} for "
                f".{kind} files (zip-bomb guard)")
        _inflate_all(archive, members, rel_path, kind)


def _check_count(count: int, rel_path: str) -> None:
    if count > MAX_MEMBERS:
        raise ParseError(f"{rel_path}: zip container has {count} members, over the limit of "
                         f"{MAX_MEMBERS} (zip-bomb guard)")


def _check_declared_count(data: bytes, rel_path: str, kind: str) -> None:
    """Entry count from the end-of-central-directory record, read without ``zipfile``.

    A Zip64 archive stores 0xFFFF here; ``zipfile`` then parses it and the count
    is checked again from its member list (the file itself is size-capped).
    """
    tail_start = max(0, len(data) - _EOCD_SIZE - _MAX_COMMENT)
    at = data.rfind(_EOCD_SIGNATURE, tail_start)
    if at < 0 or at + _EOCD_SIZE > len(data):
        raise ParseError(f"{rel_path}: not a valid .{kind} file (no zip end-of-directory "
                         "record; the file is truncated or not a zip)")
    (total_entries,) = struct.unpack_from("<H", data, at + 10)
    _check_count(total_entries, rel_path)


def _inflate_all(archive: zipfile.ZipFile, members: list[zipfile.ZipInfo], rel_path: str,
                 kind: str) -> None:
    """Decompress every member, counting real output bytes, and stop past the cap."""
    total = 0
    for member in members:
        try:
            with archive.open(member) as stream:
                while chunk := stream.read(_READ_CHUNK):
                    total += len(chunk)
                    if _over(total):
                        raise ParseError(
                            f"{rel_path}: decompressing the zip members produced more than "
                            f"{_limit_words()} (stopped at {total} bytes in "
                            f"{member.filename!r}) for .{kind} files (zip-bomb guard)")
        except ParseError:
            raise
        except RuntimeError as exc:  # zipfile: "File ... is encrypted, password required"
            raise ParseError(f"{rel_path}: zip member {member.filename!r} is encrypted "
                             f"(password-protected .{kind}): {exc}") from None
        except (zipfile.BadZipFile, zlib.error, NotImplementedError, EOFError, OSError,
                ValueError) as exc:
            raise ParseError(f"{rel_path}: not a valid .{kind} file (zip member "
                             f"{member.filename!r} cannot be decompressed: {exc})") from None
