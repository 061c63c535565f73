"""Which files belong to the knowledge base, and how their bytes are read.

:class:`ExclusionRules` is the single answer to "is this path part of the
KB?"; the initial walk and the file watcher both ask it, so they can never
disagree. :func:`read_file_safely` is the only way file contents enter the
index: every check (type, hard links, size) is taken from the descriptor the
bytes are read from, so a file swapped for a link or a FIFO after the walk is
refused instead of followed or blocked on; and every path component is opened
relative to the KB root's descriptor with ``O_NOFOLLOW``, so a *parent*
directory swapped for a link is refused too (``realpath`` then ``open`` left
a window in which outside files could be read).

Names groove cannot carry (not valid UTF-8, or holding a backslash) and
special files (FIFOs, sockets, devices) are skipped with one warning each.
:class:`groove.indexing.fileset.FileSet` bundles these rules with the enabled
extensions; callers ask it rather than assembling the pieces themselves.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePosixPath

from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from groove.config import ALWAYS_EXCLUDED_DIRS
from groove.errors import PathRefused
from groove.fulltext import FULLTEXT_SUFFIX
from groove.paths import travel_problem

log = logging.getLogger("groove.indexing.walk")

IGNORE_FILE_NAME = ".grooveignore"
IGNORE_FILE_MAX_BYTES = 64 * 1024
IGNORE_FILE_MAX_PATTERNS = 1000
DEFAULT_MAX_FILE_BYTES = 50 * 1024 * 1024
#: Folder levels the walk enters at most. Listing a folder opens its whole chain
#: from the root (no link can be swapped in), so a tree thousands of levels deep
#: would make every walk (and every search's changed-files count) quadratic; a
#: path that deep could not be asked for anyway (``groove.paths.PATH_MAX_BYTES``).
MAX_DIR_DEPTH = 256
DB_SIDECAR_SUFFIXES = ("", "-wal", "-shm", "-journal", ".lock")

_READ_CHUNK = 1024 * 1024


def _open_flags() -> int:
    return (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
            | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


class ExclusionRules:
    """Directory-name exclusions, the DB files, and the root ``.grooveignore``.

    All comparisons are case-insensitive. Paths are relative to ``kb_path``
    with POSIX separators. ``.grooveignore`` follows gitignore semantics with
    git's documented rule that nothing below an excluded directory can be
    re-included; its ``!`` lines only undo earlier lines of the same file,
    never ``exclude_dirs`` or the DB files.
    """

    def __init__(self, kb_path: str | os.PathLike[str], exclude_dirs: Iterable[str],
                 db_path: str | os.PathLike[str] | None) -> None:
        self.kb_path = Path(kb_path)
        self._dir_names = {d.casefold() for d in (*exclude_dirs, *ALWAYS_EXCLUDED_DIRS)}
        self._db_files = self._db_rel_paths(db_path)
        #: The derived full-text index directory (``<db>.fts``) when it lies inside the KB.
        self._db_dirs = frozenset(f.removesuffix(".lock") + FULLTEXT_SUFFIX.casefold()
                                  for f in self._db_files if f.endswith(".lock"))
        self._patterns: list[tuple[re.Pattern[str], bool]] = []
        self.warnings: list[str] = []
        self.reload()

    # --- public API -----------------------------------------------------------
    def reload(self) -> None:
        """Re-read ``.grooveignore`` (the watcher calls this when it changes)."""
        self.warnings = []
        self._patterns = self._compile(self._read_ignore_lines())
        #: excludes_dir() answers per directory: a walk asks once per file.
        self._dir_answers: dict[str, bool] = {}

    def excludes_dir(self, rel_dir: str) -> bool:
        """True if the directory, or any directory above it, is excluded."""
        answer = self._dir_answers.get(rel_dir)
        if answer is None:
            answer = self._dir_answers[rel_dir] = self._excludes_dir(_parts(rel_dir))
            if len(self._dir_answers) > _DIR_ANSWERS_MAX:  # a bound, not an eviction policy
                self._dir_answers.clear()
        return answer

    def _excludes_dir(self, parts: list[str]) -> bool:
        if any(p.casefold() in self._dir_names for p in parts):
            return True
        if any("/".join(parts[:i]).casefold() in self._db_dirs for i in range(1, len(parts) + 1)):
            return True
        return any(self._ignored("/".join(parts[:i]) + "/") for i in range(1, len(parts) + 1))

    def excludes_file(self, rel_path: str) -> bool:
        """True if the file is excluded, including because a parent directory is."""
        parts = _parts(rel_path)
        if not parts:
            return True
        if "/".join(parts).casefold() in self._db_files:
            return True
        if len(parts) > 1 and self.excludes_dir("/".join(parts[:-1])):
            return True
        return self._ignored("/".join(parts))

    # --- internals --------------------------------------------------------------
    def _db_rel_paths(self, db_path: str | os.PathLike[str] | None) -> frozenset[str]:
        if db_path is None:
            return frozenset()
        db = Path(db_path)
        if not db.is_absolute():
            db = self.kb_path / db
        rel = None
        for kb in (self.kb_path.absolute(), self.kb_path.resolve()):
            for candidate in (db.absolute(), db.resolve()):
                try:
                    rel = candidate.relative_to(kb).as_posix()
                    break
                except ValueError:
                    continue
            if rel is not None:
                break
        if rel is None:  # the DB lives outside the KB: nothing to exclude
            return frozenset()
        return frozenset((rel + s).casefold() for s in DB_SIDECAR_SUFFIXES)

    def is_index_file(self, rel_path: str) -> bool:
        """True for the index's own files (the database, its journals, its writer lock,
        its full-text index directory)."""
        folded = rel_path.casefold()
        return folded in self._db_files or any(folded.startswith(d + "/") for d in self._db_dirs)

    def _ignored(self, path: str) -> bool:
        excluded = False
        for regex, include in self._patterns:
            if regex.match(path):
                excluded = include
        return excluded

    def _read_ignore_lines(self) -> list[str]:
        path = self.kb_path / IGNORE_FILE_NAME
        try:
            fd = os.open(path, _open_flags())
        except FileNotFoundError:
            return []
        except OSError as exc:
            self._warn(f"{IGNORE_FILE_NAME} could not be read ({_os_reason(exc)}); no patterns applied")
            return []
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                self._warn(f"{IGNORE_FILE_NAME} is not a regular file; no patterns applied")
                return []
            data = _read_fd(fd, IGNORE_FILE_MAX_BYTES + 1)
        finally:
            os.close(fd)
        problems = []
        if len(data) > IGNORE_FILE_MAX_BYTES:
            data = data[:IGNORE_FILE_MAX_BYTES]
            data = data[: data.rfind(b"\n") + 1]  # drop the line the cap cut through
            problems.append(f"is over {IGNORE_FILE_MAX_BYTES // 1024} KiB")
        text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
        if len(lines) > IGNORE_FILE_MAX_PATTERNS:
            lines = lines[:IGNORE_FILE_MAX_PATTERNS]
            problems.append(f"has over {IGNORE_FILE_MAX_PATTERNS} patterns")
        if problems:
            self._warn(f"{IGNORE_FILE_NAME} {' and '.join(problems)}; only the first "
                       f"{len(lines)} patterns within {IGNORE_FILE_MAX_BYTES // 1024} KiB are used")
        return lines

    def _compile(self, lines: list[str]) -> list[tuple[re.Pattern[str], bool]]:
        compiled = []
        for line in lines:
            try:
                pattern = GitIgnoreSpecPattern(line)
            except Exception as exc:  # pathspec rejects some malformed lines outright
                self._warn(f"{IGNORE_FILE_NAME}: pattern {line!r} ignored ({exc})")
                continue
            if pattern.include is None or pattern.regex is None:
                continue  # comment, blank, or a range git itself discards
            compiled.append((re.compile(pattern.regex.pattern, re.IGNORECASE), pattern.include))
        return compiled

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        log.warning("%s", message)


#: How many directories' answers ExclusionRules keeps (about 100 bytes each).
_DIR_ANSWERS_MAX = 1 << 16


def _parts(rel: str) -> list[str]:
    """The segments of a relative path, ``.`` and empty ones dropped (``\\`` counts as ``/``)."""
    return [p for p in rel.replace("\\", "/").split("/") if p not in ("", ".")]


def _suffix(name: str) -> str:
    """The extension of a file name with its dot, as :attr:`PurePath.suffix` gives it."""
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


# --- names groove can carry --------------------------------------------------------
def display_path(rel: str) -> str:
    """``rel`` as text that can always be printed and logged: undecodable bytes shown as ``\\xff``."""
    try:
        rel.encode("utf-8")
        return rel
    except UnicodeEncodeError:
        return os.fsencode(rel).decode("utf-8", errors="backslashreplace")


def name_problem(rel: str) -> str | None:
    """Why groove cannot carry this name as a document path, or None.

    A name that is not valid UTF-8 cannot be stored, searched or sent to a
    client; a backslash is a separator on Windows and is refused by the MCP
    path gate, so such a file could never be served; and a name that cannot
    travel (:func:`groove.paths.travel_problem`: a Windows device name, a
    trailing dot or space, ``< > : " | ? *``) is left out on every platform.
    """
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return "the file name is not valid UTF-8; rename it to index it"
    if "\\" in rel:
        return "the file name contains a backslash, which groove does not accept in paths; rename it"
    travel = travel_problem(rel)
    if travel is not None:
        return f"the file name cannot travel: {travel}; rename it to index it"
    return None


# --- descriptor-relative opening ------------------------------------------------------
#: Opening every component relative to its parent's descriptor, never following a
#: link, is what makes a directory swapped for a symlink mid-walk harmless.
_AT_SUPPORTED = os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd
_DIR_FLAGS = (os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
              | getattr(os, "O_CLOEXEC", 0))
_GONE = (errno.ENOENT,)
_NOT_A_PLAIN_DIR = (errno.ELOOP, errno.ENOTDIR)


def _open_root(kb_path: Path) -> int:
    """The KB folder itself may be a link the user chose; everything below it may not."""
    return os.open(os.path.realpath(kb_path),
                   os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))


def _open_dirs(root_fd: int, parts: list[str]) -> list[int]:
    """Descriptors of ``parts`` opened one below the other (caller closes them)."""
    chain: list[int] = []
    try:
        for part in parts:
            chain.append(os.open(part, _DIR_FLAGS, dir_fd=chain[-1] if chain else root_fd))
    except BaseException:
        _close_all(chain)
        raise
    return chain


def _close_all(fds: list[int]) -> None:
    for fd in reversed(fds):
        os.close(fd)


def _chain_intact(root_fd: int, chain: list[int]) -> bool:
    """Each opened directory's ``..`` is still the directory it was opened from.

    Fails when a directory was moved out of the knowledge base after it was
    opened, so its files are no longer under the root.
    """
    parent = os.fstat(root_fd)
    for fd in chain:
        up = os.stat("..", dir_fd=fd, follow_symlinks=False)
        if (up.st_dev, up.st_ino) != (parent.st_dev, parent.st_ino):
            return False
        parent = os.fstat(fd)
    return True


def _dir_refusal(rel_path: str, exc: OSError) -> PathRefused:
    if exc.errno in _GONE:
        return PathRefused(f"{display_path(rel_path)}: does not exist (it may have been moved or "
                           "deleted while groove was reading)")
    if exc.errno in _NOT_A_PLAIN_DIR:
        return PathRefused(f"{display_path(rel_path)}: a parent directory is a symbolic link or "
                           "not a directory; groove never follows links")
    return PathRefused(f"{display_path(rel_path)}: cannot be opened ({_os_reason(exc)})")


# --- the walk ------------------------------------------------------------------------------
SkipReporter = Callable[[str, str], None]


def _log_skip(shown_path: str, reason: str) -> None:
    log.warning("skipped %s: %s", shown_path, reason)


def iter_candidate_files(kb_path: str | os.PathLike[str], rules: ExclusionRules,
                         extensions: set[str], on_skip: SkipReporter | None = None) -> Iterator[str]:
    """Relative POSIX paths of indexable files, sorted.

    Uses an explicit stack (deep trees must not hit the recursion limit),
    prunes excluded directories before entering them, and never follows a
    symlink: every directory is opened relative to the KB root's descriptor
    with ``O_NOFOLLOW``, so one swapped for a link after it was listed is
    refused rather than entered. Files the walk sees but cannot take (links,
    FIFOs and other special files, names that are not valid UTF-8 or hold a
    backslash, directories that vanish mid-walk, a folder deeper than
    :data:`MAX_DIR_DEPTH` levels) are reported once each to
    ``on_skip(path as printable text, reason)``, which logs a warning by default.
    """
    report = on_skip or _log_skip
    wanted = {e.lower().lstrip(".") for e in extensions}
    found: list[str] = []
    stack: list[str] = [""]
    root_fd = _open_root(Path(kb_path)) if _AT_SUPPORTED else -1
    try:
        while stack:
            rel_dir = stack.pop()
            try:
                entries = _list_dir(Path(kb_path), root_fd, rel_dir)
            except OSError as exc:
                if rel_dir and exc.errno in _GONE + _NOT_A_PLAIN_DIR:
                    report(display_path(rel_dir), "the directory changed during the walk "
                           "(moved, deleted or replaced by a link); it is picked up next run")
                else:
                    report(display_path(rel_dir or "."), f"directory not readable ({_os_reason(exc)})")
                continue
            for name, kind in entries:
                rel = f"{rel_dir}/{name}" if rel_dir else name
                _visit(name, kind, rel, rules, wanted, stack, found, report)
    finally:
        if root_fd >= 0:
            os.close(root_fd)
    found.sort()
    yield from found


def _list_dir(kb_path: Path, root_fd: int, rel_dir: str) -> list[tuple[str, str]]:
    """``(name, kind)`` of each entry, kind being "link", "dir", "file" or :func:`file_kind`.

    Kinds are taken while the directory is open and never through a link
    (a ``DirEntry`` from a descriptor must not be asked anything after the
    descriptor is closed: the number may already name another directory).
    """
    if root_fd < 0:  # no *at() calls on this platform: the path-based listing
        with os.scandir(kb_path / rel_dir if rel_dir else kb_path) as it:
            return [(e.name, _kind(e)) for e in it]
    chain = _open_dirs(root_fd, _parts(rel_dir))
    try:
        with os.scandir(chain[-1] if chain else root_fd) as it:
            return [(e.name, _kind(e)) for e in it]
    finally:
        _close_all(chain)


def _kind(entry: os.DirEntry[str]) -> str:
    try:
        if entry.is_symlink():
            return "link"
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        if entry.is_file(follow_symlinks=False):
            return "file"
        return file_kind(entry.stat(follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return "vanished"
    except OSError as exc:
        return f"unreadable ({_os_reason(exc)})"


def _visit(name: str, kind: str, rel: str, rules: ExclusionRules, wanted: set[str],
           stack: list[str], found: list[str], report: SkipReporter) -> None:
    if kind == "dir":
        if not rules.excludes_dir(rel):
            problem = name_problem(rel)
            if problem is None and rel.count("/") >= MAX_DIR_DEPTH:
                report(display_path(rel), f"it is deeper than {MAX_DIR_DEPTH} folder levels; "
                       "groove does not go further down (move the files higher up)")
            elif problem is None:
                stack.append(rel)
            else:
                report(display_path(rel), problem.replace("file name", "directory name"))
    elif kind == "link":  # never followed, not even to ask what it points at
        has_suffix = bool(_suffix(name))
        if not rules.excludes_dir(rel) and not (has_suffix and _skip_file(rel, rules, wanted)):
            report(display_path(rel), "it is a symbolic link; groove never follows symbolic links")
    elif not _skip_file(rel, rules, wanted):
        if kind == "vanished":
            report(display_path(rel), "it vanished during the walk; it is picked up next run")
        elif kind.startswith("unreadable"):
            report(display_path(rel), kind)
        elif kind != "file":
            report(display_path(rel), f"it is {kind}; only regular files are indexed")
        elif (problem := name_problem(name)) is not None:  # the folders above were checked
            report(display_path(rel), problem)
        else:
            found.append(rel)


def _skip_file(rel: str, rules: ExclusionRules, wanted: set[str]) -> bool:
    ext = _suffix(rel.rpartition("/")[2]).lower().lstrip(".")
    return not ext or ext not in wanted or rules.excludes_file(rel)


# --- reading -------------------------------------------------------------------------------
def read_file_safely(kb_path: str | os.PathLike[str], rel_path: str,
                     max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> bytes:
    """The bytes of one KB file, or :class:`PathRefused` saying why not.

    Refused: paths leaving ``kb_path`` (absolute, ``..``, NUL, backslash, a
    symlinked parent directory), symlinks, anything but a regular file, files
    with more than one hard link, and files over ``max_bytes`` (checked
    before reading, and again while reading in case the file grows).

    Every component is opened relative to the KB root's descriptor without
    following links, and after reading, each opened directory must still sit
    where it was opened from; so no interleaving of renames and symlink swaps
    can make bytes from outside the KB come back from this function.
    """
    parts = _checked_parts(rel_path)
    if not _AT_SUPPORTED:
        return _read_by_path(Path(kb_path), parts, rel_path, max_bytes)
    root_fd = _open_root(Path(kb_path))
    try:
        try:
            chain = _open_dirs(root_fd, parts[:-1])
        except OSError as exc:
            raise _dir_refusal(rel_path, exc) from None
        try:
            data = _read_leaf(parts[-1], chain[-1] if chain else root_fd, rel_path, max_bytes)
            if not _chain_intact(root_fd, chain):
                raise PathRefused(f"{display_path(rel_path)}: a parent directory was moved out of "
                                  "the knowledge base while it was read; refused")
            return data
        finally:
            _close_all(chain)
    finally:
        os.close(root_fd)


def _read_leaf(name: str, dir_fd: int | None, rel_path: str, max_bytes: int) -> bytes:
    """Open ``name`` (relative to ``dir_fd``, or a full path when None) and read it under the checks."""
    shown = display_path(rel_path)
    try:
        fd = os.open(name, _open_flags(), dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PathRefused(f"{shown}: is a symbolic link; groove never follows links") from None
        if exc.errno in _GONE:
            raise PathRefused(f"{shown}: does not exist (it may have been moved or deleted "
                              "while groove was reading)") from None
        raise PathRefused(f"{shown}: cannot be opened ({_os_reason(exc)})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PathRefused(f"{shown}: is not a regular file ({file_kind(st.st_mode)}); "
                              "only regular files are indexed")
        if st.st_nlink > 1:
            raise PathRefused(f"{shown}: has {st.st_nlink} hard links; files with more "
                              "than one hard link are refused")
        if st.st_size > max_bytes:
            raise PathRefused(f"{shown}: is {_mib(st.st_size)}, over the {_mib(max_bytes)} limit")
        try:
            data = _read_fd(fd, max_bytes + 1)
        except OSError as exc:
            raise PathRefused(f"{shown}: read failed ({_os_reason(exc)})") from None
        if len(data) > max_bytes:
            raise PathRefused(f"{shown}: grew over the {_mib(max_bytes)} limit while being read")
        return data
    finally:
        os.close(fd)


def _checked_parts(rel_path: str) -> list[str]:
    """The components of ``rel_path`` after proving it is lexically inside the KB."""
    if not rel_path or "\x00" in rel_path:
        raise PathRefused(f"{rel_path!r}: not a usable relative path (empty or contains NUL)")
    if "\\" in rel_path:
        raise PathRefused(f"{display_path(rel_path)}: contains a backslash; groove does not "
                          "accept backslashes in paths (use '/' between folders)")
    rel = PurePosixPath(rel_path)
    if rel.is_absolute() or re.match(r"^[A-Za-z]:", rel_path) or ".." in rel.parts:
        raise PathRefused(f"{display_path(rel_path)}: must be relative to the knowledge base "
                          "without '..'")
    parts = [p for p in rel.parts if p != "."]
    if not parts:
        raise PathRefused(f"{rel_path!r}: names the knowledge base folder, not a file")
    return parts


def _read_by_path(kb_path: Path, parts: list[str], rel_path: str, max_bytes: int) -> bytes:
    """Fallback where ``dir_fd`` is unavailable: realpath the parent, then open the leaf."""
    kb_real = Path(os.path.realpath(kb_path))
    parent = kb_real.joinpath(*parts[:-1])
    if Path(os.path.realpath(parent)) != parent:
        raise PathRefused(f"{display_path(rel_path)}: a parent directory is a symbolic link or "
                          "leaves the knowledge base; groove never follows links")
    return _read_leaf(str(parent / parts[-1]), None, rel_path, max_bytes)


def _read_fd(fd: int, limit: int) -> bytes:
    """Read until EOF or ``limit`` bytes, whichever comes first."""
    pieces: list[bytes] = []
    total = 0
    while total < limit:
        piece = os.read(fd, min(_READ_CHUNK, limit - total))
        if not piece:
            break
        pieces.append(piece)
        total += len(piece)
    return b"".join(pieces)


def file_kind(mode: int) -> str:
    """'a FIFO', 'a directory', … for messages about files groove does not index."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "an unknown file type"


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB" if n >= 1024 * 1024 else f"{n} bytes"


def _os_reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def sha256_hex(data: bytes) -> str:
    """Hex SHA-256 of the raw bytes: the identity used for change and rename detection."""
    return hashlib.sha256(data).hexdigest()
