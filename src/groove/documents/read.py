"""Reading indexed documents by path: the one place a client-given document path is served.

Every surface that takes a document path (``get_document``, ``multi_get``,
``kb://doc/`` resources, ``get_best_practice``, ``groove get``) goes through
:func:`read_document`: the canonical-path rule (:func:`groove.paths.check_doc_path`),
an extension an enabled parser handles, then the facade's safe read. A
later argument naming which knowledge base to read belongs here too.

:func:`multi_get` reads several documents by path or glob, each and all
together bounded in bytes (:class:`~groove.documents.request.GetRequest`);
what was cut, and what was left out, is said in the answer (docs/mcp.md,
'multi_get').
"""

from __future__ import annotations

import functools
import os
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from groove.documents.lines import LineWindow, cut_to_bytes, line_window, split_location, utf8_size
from groove.documents.request import MAX_DOCUMENTS, GetRequest, is_glob
from groove.errors import GrooveError, NotFound, PathRefused
from groove.models import with_line_aliases
from groove.paths import check_doc_path, doc_uri, travel_problem

if TYPE_CHECKING:
    from groove.kb import DocumentText, KnowledgeBase

#: At most this many paths are listed as not returned (the count is always given).
NOT_RETURNED_LISTED = 100


def servable(kb: KnowledgeBase, rel_path: str) -> bool:
    """A path the MCP surface offers: a name that can travel, with an extension an enabled
    parser handles."""
    return travel_problem(rel_path) is None and _servable_suffix(
        tuple(kb.config.parsers.enabled), PurePosixPath(rel_path).suffix)


@functools.lru_cache(maxsize=256)
def _servable_suffix(enabled: tuple[str, ...], suffix: str) -> bool:
    """Per (enabled parsers, suffix): asked for every hit and every listed document."""
    from groove.parsers import get_parser_for

    return get_parser_for("_" + suffix, enabled) is not None


def _refusal_for(kb: KnowledgeBase, rel_path: str) -> GrooveError | None:
    """Why read_file_safely refuses this path, if it does (links, escapes, ...)."""
    from groove.indexing.walk import read_file_safely

    if not os.path.lexists(kb.kb_path / rel_path):
        return None
    try:
        read_file_safely(kb.kb_path, rel_path)
    except PathRefused as exc:
        return exc
    except GrooveError:
        return None
    return None


def read_document(kb: KnowledgeBase, rel_path: str) -> DocumentText:
    """kb.read_document behind the lexical gate, with the clearest refusal message."""
    rel_path = check_doc_path(rel_path)
    if not servable(kb, rel_path):
        enabled = ", ".join(kb.config.parsers.enabled)
        raise PathRefused(
            f"{rel_path!r} has an extension no enabled parser handles (enabled: {enabled})"
        )
    try:
        return kb.read_document(rel_path)
    except NotFound:
        refusal = _refusal_for(kb, rel_path)
        if refusal is not None:
            raise refusal from None
        raise


# --------------------------------------------------------------------------- multi_get


def multi_get(kb: KnowledgeBase, request: GetRequest) -> dict[str, Any]:
    """The documents ``request`` names, in the order asked (a glob's matches by path), each
    once, every text within ``max_bytes`` and all of them within ``max_total_bytes``.

    An entry that cannot be read is reported in ``errors`` and the others are
    still returned; documents past the total cap (or past
    :data:`~groove.documents.request.MAX_DOCUMENTS`) are listed in
    ``not_returned``. ``note`` says in one sentence what was cut or left out.
    """
    wanted, errors = _resolve(kb, request.paths)
    documents: list[dict[str, Any]] = []
    not_returned: list[str] = []
    budget = request.max_total_bytes
    cut_by = {"max_bytes": 0, "max_total_bytes": 0}
    for entry, path, first, last in wanted:
        if len(documents) >= MAX_DOCUMENTS or budget <= 0:
            not_returned.append(path)
            continue
        try:
            doc = read_document(kb, path)
            window = line_window(doc.text, first, last, path=repr(path))
        except GrooveError as exc:
            errors.append({"entry": entry, "error": str(exc)})
            continue
        cap = min(request.max_bytes, budget)
        which = "max_bytes" if request.max_bytes <= budget else "max_total_bytes"
        item = document_part(doc, window, cap, which)
        if "cut" in item:
            cut_by[which] += 1
        budget -= item["bytes"]
        documents.append(item)
    out: dict[str, Any] = {
        "documents": documents,
        "bytes": request.max_total_bytes - budget,
        "max_bytes": request.max_bytes,
        "max_total_bytes": request.max_total_bytes,
        "errors": errors,
        "not_returned": not_returned[:NOT_RETURNED_LISTED],
        "not_returned_count": len(not_returned),
    }
    note = _note(request, len(documents), cut_by, len(not_returned), len(errors))
    if note:
        out["note"] = note
    return out


def _resolve(kb: KnowledgeBase, entries: list[str]
             ) -> tuple[list[tuple[str, str, int | None, int | None]], list[dict[str, str]]]:
    """Each entry as ``(entry, path, first line, last line)``, globs expanded against the
    indexed documents (by path), each (path, window) once; the entries that name nothing."""
    from groove.search.filters import path_matches

    wanted: list[tuple[str, str, int | None, int | None]] = []
    errors: list[dict[str, str]] = []
    seen: set[tuple[str, int | None, int | None]] = set()
    indexed: list[str] | None = None
    for entry in entries:
        matched: list[tuple[str, int | None, int | None]]
        if is_glob(entry):
            if indexed is None:
                indexed = [d.path for d in kb.list_documents() if servable(kb, d.path)]
            matched = [(p, None, None) for p in indexed if path_matches([entry], p)]
            if not matched:
                errors.append({"entry": entry, "error": f"glob {entry!r} matches no indexed "
                               "document; `groove ls` (or list_topics) shows what is indexed"})
        else:
            try:
                path, first, last = split_location(entry)
                matched = [(check_doc_path(path), first, last)]
            except GrooveError as exc:
                errors.append({"entry": entry, "error": str(exc)})
                continue
        for key in matched:
            if key not in seen:
                seen.add(key)
                wanted.append((entry, *key))
    return wanted, errors


def document_part(doc: DocumentText, window: LineWindow, cap: int, which: str) -> dict[str, Any]:
    """One document of a multi_get answer: the window's text cut to ``cap`` bytes.

    ``line_end`` is the last line returned (whole, or the one line cut in two
    when not even it fits); when the text was cut, ``cut`` says where and
    ``next_line`` is where the rest starts.
    """
    row = doc.document
    kept = cut_to_bytes(window.text, cap)
    item: dict[str, Any] = {
        "path": row.path, "uri": doc_uri(row.path), "title": row.title, "size": row.size,
        "lines": window.total, "line_start": window.first, "line_end": window.last,
        "bytes": utf8_size(kept), "text": kept,
    }
    if kept != window.text:
        whole = kept.count("\n")  # a cut keeps whole lines, each with its newline
        resume = window.first + whole
        item["line_end"] = max(resume - 1, window.first)
        where = (f"inside line {window.first}, which is longer than {cap} bytes" if whole == 0
                 else f"after line {resume - 1} of {window.total}")
        item["cut"] = (f"text cut at {cap} bytes ({which}) {where}; "
                       f"ask for '{row.path}:{resume}' for the rest")
        item["next_line"] = resume
    if doc.truncated:
        item["truncated"] = True
    return with_line_aliases(item)


def _note(request: GetRequest, returned: int, cut_by: dict[str, int], left_out: int,
          failed: int) -> str | None:
    """The answer's one sentence about what was cut or left out (None: nothing was)."""
    parts = []
    if cut_by["max_bytes"]:
        parts.append(f"{cut_by['max_bytes']} of {returned} document(s) cut at max_bytes "
                     f"({request.max_bytes} bytes each)")
    if cut_by["max_total_bytes"]:
        parts.append(f"{cut_by['max_total_bytes']} cut where the answer reached max_total_bytes "
                     f"({request.max_total_bytes} bytes)")
    if left_out:
        parts.append(f"{left_out} more document(s) not returned: the answer reached "
                     f"max_total_bytes ({request.max_total_bytes}) or {MAX_DOCUMENTS} "
                     "documents; ask for them by path (not_returned lists them)")
    if failed:
        parts.append(f"{failed} entr{'y' if failed == 1 else 'ies'} could not be read (see errors)")
    return "; ".join(parts) or None
