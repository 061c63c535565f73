"""What the index holds, document by document: ``groove ls`` (docs/cli.md, 'ls').

Each indexed document is listed with its size, its chunks and its state as
the index records it; files the index runs skipped are listed too, with the
reason, so "why is this file not found?" has an answer. Nothing here reads
the files: the state is the store's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from groove.errors import NotFound
from groove.models import DocumentRow
from groove.paths import check_doc_path

if TYPE_CHECKING:
    from groove.kb import KnowledgeBase

#: The states, in words: every chunk has its vector; some or none have (the full-text
#: leg finds it, the vector leg does not yet: ``groove index`` finishes it); the
#: parser found no text in it; an index run skipped the file.
EMBEDDED = "embedded"
PARTLY_EMBEDDED = "partly embedded"
FULL_TEXT_ONLY = "full-text only"
NO_TEXT = "no text"
SKIPPED = "skipped"
STATES = (EMBEDDED, PARTLY_EMBEDDED, FULL_TEXT_ONLY, NO_TEXT, SKIPPED)


@dataclass(frozen=True)
class Listed:
    """One row of ``groove ls``: an indexed document, or a file the index skipped."""

    path: str
    state: str
    size: int | None
    chunks: int
    chunks_embedded: int
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "state": self.state, "size": self.size,
                               "chunks": self.chunks, "chunks_embedded": self.chunks_embedded}
        if self.reason is not None:
            out["reason"] = self.reason
        return out


def document_state(row: DocumentRow) -> str:
    """A document's state from its chunk and pending counts."""
    if row.chunk_count == 0:
        return NO_TEXT
    if row.pending <= 0:
        return EMBEDDED
    return FULL_TEXT_ONLY if row.pending >= row.chunk_count else PARTLY_EMBEDDED


def folder_arg(folder: str | None) -> str | None:
    """The folder argument as the index writes paths; one trailing ``/`` (what a shell's
    completion adds) is accepted, any other spelling is refused naming the right one."""
    if folder is None or folder in ("", "."):
        return None
    return check_doc_path(folder[:-1] if folder.endswith("/") else folder, what="folder")


def list_folder(kb: KnowledgeBase, folder: str | None = None) -> list[Listed]:
    """Every indexed document and skipped file at or under ``folder`` (None: all), by path."""
    prefix = folder_arg(folder)

    def under(path: str) -> bool:
        return prefix is None or path == prefix or path.startswith(prefix + "/")

    with kb.reading() as store, store.read_snapshot():
        rows = store.list_documents()
        skipped = store.skip_reasons()
    listed = [Listed(r.path, document_state(r), r.size, r.chunk_count,
                     r.chunk_count - max(r.pending, 0)) for r in rows if under(r.path)]
    listed += [Listed(path, SKIPPED, None, 0, 0, reason)
               for path, reason in skipped.items() if under(path)]
    if not listed and prefix is not None:
        raise NotFound(f"no indexed document or skipped file under {prefix!r}; "
                       "`groove ls` lists them all")
    return sorted(listed, key=lambda item: item.path)
