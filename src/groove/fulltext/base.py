"""The full-text index contract: a derived, rebuildable index over chunk text.

SQLite is the source of truth (docs/indexing.md, "Index files"). The full-text
index is derived from it: the store writes it in the same write path, commits
it per batch, and records in both places a :class:`Stamp` — the identity of
the database it was built from and the database's text generation — so that a
full-text index left behind by a crash (SQLite committed, the full-text commit
not) or copied from another database is *detected* and rebuilt, never
silently searched.

A backend answers two questions, both with a cost that follows the number of
matching chunks, not the corpus:

* :meth:`FullTextIndex.search`: the best ``limit`` chunks for a list of
  phrases (any phrase may match), best first;
* :meth:`FullTextIndex.matching`: every chunk containing any of some terms
  (what ``-term`` exclusions drop).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Stamp:
    """Which database state a full-text commit reflects.

    ``index_id`` is a random id the database records once; ``generation`` is
    its text generation, bumped by every write that changes chunk text.
    """

    index_id: str
    generation: int

    def encode(self) -> str:
        return f"{self.index_id}:{self.generation}"

    @classmethod
    def decode(cls, text: str) -> Stamp | None:
        index_id, _, generation = text.rpartition(":")
        if not index_id or not generation.isdigit():
            return None
        return cls(index_id, int(generation))


@dataclass(frozen=True)
class TextRow:
    """One chunk as the full-text index sees it."""

    chunk_id: int
    doc_id: int
    heading: str | None
    context: str
    content: str


class FullTextIndex(ABC):
    """A full-text index beside the database; one writer at a time (the store's)."""

    #: Where the index lives (named in messages).
    path: Path
    #: Why a damaged index found when opening was replaced by an empty one (None: it
    #: was not); the store names it when it refills the index.
    recreated: str | None = None

    # --- reads (on the commit last loaded) -------------------------------------------
    @abstractmethod
    def refresh(self) -> None:
        """Load the newest commit, possibly made by another process."""

    @abstractmethod
    def stamp(self) -> Stamp | None:
        """The stamp of the last commit, or None for an empty/new/unreadable index."""

    @abstractmethod
    def search(self, phrases: Sequence[str], limit: int,
               exclude: Sequence[str] = ()) -> list[tuple[int, float]]:
        """``[(chunk_id, score)]`` for chunks matching any phrase and none of ``exclude``:
        higher score first, equal scores in chunk-id order (also deciding which tied
        chunks make the cut)."""

    @abstractmethod
    def matching(self, terms: Sequence[str], among: Sequence[int] | None = None) -> set[int]:
        """Every chunk whose text contains any of ``terms`` (exclusions); with ``among``,
        only those chunk ids are considered (the cost follows ``among``)."""

    @abstractmethod
    def most_matching(self, terms: Sequence[str]) -> int:
        """An upper bound on how many chunks :meth:`matching` returns for ``terms``,
        found without visiting the matches."""

    @abstractmethod
    def count(self) -> int:
        """How many chunks the last commit holds."""

    # --- damage (the index is derived: a damaged one is rebuilt, never repaired) -------
    @abstractmethod
    def problem(self) -> str | None:
        """Why the index cannot be read now, in words (None: it looks intact); cheap
        enough to ask before every search."""

    @abstractmethod
    def verify(self) -> None:
        """Read every entry once; :class:`~groove.errors.FullTextDamaged` if one cannot be."""

    @abstractmethod
    def reset(self) -> None:
        """Throw the index away and start an empty one in its place."""

    # --- writes (buffered until :meth:`commit`) -----------------------------------
    @abstractmethod
    def add(self, rows: Sequence[TextRow]) -> None: ...

    @abstractmethod
    def delete_document(self, doc_id: int) -> None:
        """Drop every chunk of one document."""

    @abstractmethod
    def delete_all(self) -> None: ...

    @abstractmethod
    def commit(self, stamp: Stamp) -> None:
        """Publish everything buffered, recording ``stamp`` in the same commit."""

    @abstractmethod
    def release_writer(self) -> None:
        """Drop the write handle (and its lock) so another process may write; no-op if none."""

    @abstractmethod
    def close(self) -> None: ...
