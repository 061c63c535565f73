"""Path arguments and ``kb://`` URIs as the MCP surface accepts them.

Every path a client hands us (tool argument or URI) goes through
:func:`check_rel_path` first. It is only the *lexical* gate, there to give a
clear message before anything touches the disk: ``..`` components, absolute
paths, NUL and backslashes are refused, both as given and after one round of
percent-decoding (so ``%2e%2e%2f`` cannot sneak through a layer that decodes
later). Links, hard links and anything that resolves outside ``kb_path`` are
refused by :func:`groove.indexing.walk.read_file_safely`, the one filesystem check,
which every read goes through afterwards.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from urllib.parse import quote, unquote

from groove.errors import PathRefused

DOC_URI_PREFIX = "kb://doc/"
TOPIC_URI_PREFIX = "kb://topic/"

_ACCEPTED = "a path relative to kb_path with '/' separators, e.g. 'guides/setup.md'"

#: Longest path argument accepted (bytes of UTF-8); also keeps every segment
#: far below what would make the filesystem raise ENAMETOOLONG.
PATH_MAX_BYTES = 1024
SEGMENT_MAX_BYTES = 255


def check_rel_path(path: str, *, what: str = "path") -> str:
    """Return ``path`` normalised (no ``./``, no trailing ``/``) or raise PathRefused."""
    if not isinstance(path, str) or not path.strip():
        raise PathRefused(f"{what} is empty; expected {_ACCEPTED}")
    try:
        encoded = path.encode("utf-8")
    except UnicodeEncodeError:
        raise PathRefused(f"{what} is not valid Unicode text (lone surrogate); "
                          f"expected {_ACCEPTED}") from None
    if len(encoded) > PATH_MAX_BYTES or any(
            len(seg.encode("utf-8")) > SEGMENT_MAX_BYTES for seg in path.split("/")):
        raise PathRefused(f"{what} is too long; expected at most {PATH_MAX_BYTES} bytes with "
                          f"segments of at most {SEGMENT_MAX_BYTES} bytes, {_ACCEPTED}")
    for form in {path, unquote(path)}:
        _refuse_lexically(form, path, what)
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts:
        raise PathRefused(f"{what} {path!r} names kb_path itself; expected {_ACCEPTED}")
    normalised = "/".join(parts)
    for form in {normalised, unquote(normalised)}:  # "./~" must not become an accepted "~"
        _refuse_lexically(form, path, what)
    return normalised


def _refuse_lexically(form: str, original: str, what: str) -> None:
    if "\x00" in form:
        raise PathRefused(f"{what} {original!r} contains a NUL byte; expected {_ACCEPTED}")
    if "\\" in form:
        raise PathRefused(f"{what} {original!r} contains a backslash; expected {_ACCEPTED}")
    if form.startswith("/") or (len(form) > 1 and form[1] == ":") or form.startswith("~"):
        raise PathRefused(f"{what} {original!r} is absolute; expected {_ACCEPTED}")
    if ".." in PurePosixPath(form).parts:
        raise PathRefused(f"{what} {original!r} climbs out with '..'; expected {_ACCEPTED}")


#: Device names Windows reserves in every folder, with or without an extension.
_RESERVED = frozenset({"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)),
                       *(f"LPT{i}" for i in range(1, 10))})
_UNTRAVELLED_CHARS = frozenset('<>:"|?*')
#: Any of them, or a control character: the quick test before the message is built.
_UNTRAVELLED = re.compile(r'[<>:"|?*\x00-\x1f]')


def travel_problem(rel_path: str) -> str | None:
    """Why ``rel_path`` is a name that cannot travel (None: it can).

    A knowledge base is a folder people sync and copy between machines, and
    Windows cannot create or open some names that Linux and macOS accept: a
    reserved device name (``CON``, ``PRN``, ``AUX``, ``NUL``, ``COM1``-``COM9``,
    ``LPT1``-``LPT9``, also with an extension: ``con.md``), a segment ending
    in a dot or a space, and the characters ``< > : " | ? *`` or a control
    character. groove leaves such names out of the index on every platform,
    so a search hit can always be opened wherever the folder goes. The index
    walk, the watcher, ``kb://doc/`` URIs and ``get_document`` all ask this
    one function (docs/indexing.md, 'Names that cannot travel').
    """
    for segment in rel_path.split("/"):
        if not segment:
            continue
        if _UNTRAVELLED.search(segment):
            bad = sorted({c for c in segment if c in _UNTRAVELLED_CHARS or ord(c) < 32})
            shown = " ".join(repr(c) for c in bad)
            return f"{segment!r} contains {shown}, which Windows does not allow in a name"
        if segment[-1] in ". ":
            return f"{segment!r} ends with a {'dot' if segment[-1] == '.' else 'space'}"
        if segment.split(".", 1)[0].rstrip(" ").upper() in _RESERVED:
            return f"{segment!r} is a device name Windows reserves"
    return None


def check_doc_path(path: str, *, what: str = "path") -> str:
    """:func:`check_rel_path`, then :func:`travel_problem`: a document name the index can hold.

    One spelling per document (GrooveSeek v1.12): ``./a.md``, ``guides//a.md`` or
    ``a.md/`` name the same file as ``a.md`` but are refused, with the canonical
    spelling in the message, so a client never caches one document under two names.
    """
    normalised = check_rel_path(path, what=what)
    if normalised != path:
        raise PathRefused(f"{what} {path!r} is not written the way the index names it; "
                          f"write {normalised!r} (no './', no '//', no trailing '/')")
    problem = travel_problem(normalised)
    if problem is not None:
        raise PathRefused(f"{what} {path!r} is a name that cannot travel: {problem}; groove "
                          "does not index such names (rename the file)")
    return normalised


def doc_uri(rel_path: str) -> str:
    """``kb://doc/<path>`` with everything but ``/`` percent-encoded (RFC 3986 unreserved kept)."""
    return DOC_URI_PREFIX + quote(rel_path, safe="/")


def topic_uri(prefix: str) -> str:
    return TOPIC_URI_PREFIX + quote(prefix, safe="/")


#: The topic group of documents at the top level of the KB (``kb://topic/``).
ROOT_TOPIC = ""


def topic_prefixes(rel_path: str) -> list[str]:
    """The one- and two-segment folder prefixes a document is grouped under.

    A document at the top level belongs to no folder: it is grouped under the
    root group (:data:`ROOT_TOPIC`, ``kb://topic/``), so every document is
    reachable from the list and the list has groups, not documents.
    """
    folders = rel_path.split("/")[:-1]
    if not folders:
        return [ROOT_TOPIC]
    return ["/".join(folders[:n]) for n in (1, 2) if len(folders) >= n]
