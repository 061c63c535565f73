"""Opening the files groove keeps beside the index, without following what was planted there.

A knowledge base is often a cloned repository, so whatever sits at the names
groove uses (``.groove.db``, ``.groove.db.lock``, ``.groove-eval-history.json``,
the approximate-index files) may have been put there by someone else: a
symbolic link to a victim file (writing through it would truncate or overwrite
the victim; a dangling one would create a file outside the KB), a FIFO that
blocks every open, a directory, a file with a second hard link. Every such
file is opened through this module:

* ``O_NOFOLLOW``: a link is refused, never followed;
* ``O_NONBLOCK`` and an ``fstat`` type check: a FIFO or a device is refused at
  once instead of being waited on;
* a file with more than one hard link is refused for writing (its other name
  belongs to somebody);
* temporaries are made by ``mkstemp`` (``O_EXCL``, an unpredictable name) and
  renamed over the final name, so nothing is written through a pre-created name.

Each refusal is one :class:`~groove.errors.UnsafeFile` line naming the path and
what is there. A missing file is not a refusal: reading one raises
``FileNotFoundError`` as usual.

The full-text index is a folder (``.groove.db.fts/``) whose files a library
opens by itself: :func:`check_directory` refuses the folder when it is a link
or not a folder, and :func:`planted_entries` names whatever inside it is not a
regular file (a link, a FIFO, a device), checked before the library sees it.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from groove.errors import UnsafeFile

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
#: errno values an ``O_NOFOLLOW`` / ``O_NONBLOCK`` open gives for something that is not a file.
_NOT_A_FILE = {errno.ELOOP, errno.EMLINK, errno.EISDIR, errno.ENXIO, errno.ENOTDIR}


def _kind(mode: int) -> str | None:
    """What a file of this ``st_mode`` is, in words; None for a regular file."""
    for test, words in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"),
                        (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                        (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device")):
        if test(mode):
            return words
    return None if stat.S_ISREG(mode) else "not a regular file"


def _refused(path: Path, what: str, kind: str, wanted: str = "a regular file") -> UnsafeFile:
    return UnsafeFile(f"{what} {path} is {kind}; groove uses only {wanted} there and never "
                      "follows a link: remove it (it may have come with a cloned repository) "
                      "and run again")


def check_directory(path: Path, what: str) -> None:
    """Refuse ``path`` unless it is missing or a real directory (a link to one is refused)."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return  # creating it says what is in the way
    except OSError as exc:
        raise UnsafeFile(f"{what} {path} cannot be examined: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(mode):
        kind = _kind(mode) or "a regular file"
        raise _refused(path, what, kind, "a directory")


def planted_entries(folder: Path) -> list[str]:
    """``"<name> (<what it is>)"`` for each entry of ``folder`` that is not a regular file
    (``lstat``: nothing is followed or opened); empty for a missing folder."""
    found = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    kind = _kind(entry.stat(follow_symlinks=False).st_mode)
                except FileNotFoundError:
                    continue  # removed meanwhile (a merge): nothing there any more
                if kind is not None:
                    found.append(f"{entry.name} ({kind})")
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(found)


def check_regular(path: Path, what: str) -> None:
    """Refuse ``path`` unless it is missing or a regular file (``lstat``: links are not followed)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UnsafeFile(f"{what} {path} cannot be examined: {exc.strerror or exc}") from None
    kind = _kind(mode)
    if kind is not None:
        raise _refused(path, what, kind)


def open_fd(path: Path, flags: int, what: str, mode: int = 0o644) -> int:
    """``os.open`` for a file beside the index: a regular file or :class:`UnsafeFile`.

    The descriptor is returned in blocking mode. ``FileNotFoundError`` (no
    ``O_CREAT``) passes through; other errors than "not a regular file" and
    "permission denied" pass through as ``OSError`` (a full disk, say).
    """
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC, mode)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno in _NOT_A_FILE:
            try:
                kind = _kind(os.lstat(path).st_mode) or "not a regular file"
            except OSError:
                kind = "not a regular file"
            raise _refused(path, what, kind) from None
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            access = "written" if flags & (os.O_WRONLY | os.O_RDWR) else "read"
            raise UnsafeFile(f"{what} {path} cannot be {access}: {exc.strerror} (a read-only or "
                             "immutable file?); fix its permissions or remove it") from None
        raise
    try:
        info = os.fstat(fd)
        found = _kind(info.st_mode)
        if found is not None:
            raise _refused(path, what, found)
        if flags & (os.O_WRONLY | os.O_RDWR) and info.st_nlink > 1:
            raise _refused(path, what, f"a file with {info.st_nlink} hard links")
        if _NONBLOCK:  # (no O_NONBLOCK, e.g. Windows: it was never set)
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: Path, what: str, limit: int | None = None) -> bytes:
    """The file's bytes (at most ``limit``); ``FileNotFoundError`` when it is missing."""
    fd = open_fd(path, os.O_RDONLY, what)
    with os.fdopen(fd, "rb") as fh:
        return fh.read() if limit is None else fh.read(limit)


def replace_atomically(path: Path, write: Callable[[Path], object], what: str) -> None:
    """Write a new ``path`` through ``write(tmp)`` and rename it into place.

    ``tmp`` is a fresh, empty file beside ``path`` with an unpredictable name
    (``mkstemp``), removed again if anything fails. What is at ``path`` now
    must be a regular file or nothing.
    """
    check_regular(path, what)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f"{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
