"""Publishing chunk text to the full-text index (:mod:`groove.fulltext`), rebuilding it
when its stamp does not match the database, and searching it.

The batch settings below are read at each write, so a test may patch them here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import suppress

from groove.errors import FullTextDamaged
from groove.fulltext import FullTextIndex, TextRow, fulltext_path
from groove.store.files import check_directory
from groove.store.sqlite._core import StoreCore, log

#: Queued full-text changes are published at least this often during a run.
FULLTEXT_BATCH_SECONDS = 1.0
#: ... or when this many documents are queued.
FULLTEXT_BATCH_DOCUMENTS = 500


class FullText(StoreCore):
    """The full-text index follows the chunk rows: queued, published, checked, rebuilt."""

    def _loaded_fulltext(self) -> tuple[FullTextIndex, bool]:
        """The full-text index and whether it reflects the database.

        It is reloaded only when the commit it holds does not carry the
        database's stamp (another process committed since, or it is stale):
        a search on an unchanged index costs one small SELECT, no reload.
        """
        fulltext = self._fulltext_index()
        with self._errors("reading the text generation"):
            stamp = self._db_stamp()
        if fulltext.problem() is not None:  # damaged: never current, rebuilt by the next writer
            self._fulltext_seen = None
            return fulltext, False
        if self._fulltext_seen != stamp:
            try:
                fulltext.refresh()
            except FullTextDamaged:
                self._fulltext_seen = None
                return fulltext, False
            self._fulltext_seen = fulltext.stamp()
        return fulltext, self._fulltext_seen == stamp

    def fulltext_problem(self) -> str | None:
        """Why the full-text index cannot answer now (None: it can); a missing one is not
        created here (a reader such as ``doctor`` only looks)."""
        with self._lock:
            if self._fulltext is None:
                path = fulltext_path(self._path)
                check_directory(path, "the full-text index folder")
                if not path.is_dir():
                    return "the folder is missing"
            return self._fulltext_index().problem()

    def _without_fulltext(self, exc: FullTextDamaged) -> None:
        """Say once per cause that answers come from the vector leg alone until the rebuild."""
        if self._fulltext_said != str(exc):
            self._fulltext_said = str(exc)
            log.warning("%s; until then searches answer from the vector leg alone", exc)

    def _before_text_write(self) -> None:
        """Before this process's first write since its last flush: rebuild a stale index.

        Queuing changes onto a stale full-text index and then stamping it
        current would hide the staleness for good.
        """
        if not self._fulltext_writing:
            self.ensure_fulltext()
            self._fulltext_writing = True
            self._fulltext_published = False

    def _queued(self, documents: int) -> None:
        """Count queued documents; publish the batch when it is the writer's first, big or
        old enough.

        The first write is published at once: on a cold build the first document is
        findable by full text right after it is read, not a batch later, and the
        batches that follow keep every document at most
        :data:`FULLTEXT_BATCH_SECONDS` behind its SQLite commit (a commit costs
        tens of milliseconds, so one per document would slow the rows pass).
        """
        self._fulltext_queued += documents
        if (not self._fulltext_published
                or self._fulltext_queued >= FULLTEXT_BATCH_DOCUMENTS
                or time.monotonic() - self._fulltext_committed_at >= FULLTEXT_BATCH_SECONDS):
            self._commit_fulltext()

    def publish_due(self) -> None:
        with self._lock:
            if (self._fulltext_queued and time.monotonic() - self._fulltext_committed_at
                    >= FULLTEXT_BATCH_SECONDS):
                self._commit_fulltext()

    def _commit_fulltext(self) -> None:
        with self._errors("reading the text generation"):
            stamp = self._db_stamp()
        self._fulltext_index().commit(stamp)
        self._fulltext_seen = stamp
        self._fulltext_queued = 0
        self._fulltext_committed_at = time.monotonic()
        self._fulltext_published = True

    def flush(self) -> None:
        """Resolve again the links the writes since the last flush may have changed (in one
        transaction), publish queued full-text changes and release the full-text writer."""
        with self._lock:
            self._settle_links()
            self._flush_fulltext()

    def _flush_fulltext(self) -> None:
        with self._lock:
            if self._fulltext is None:
                return
            if self._fulltext_queued:
                self._commit_fulltext()
            self._fulltext.release_writer()
            self._fulltext_writing = False

    def fulltext_current(self) -> bool:
        """Whether the full-text index reflects the database (or this process is mid-batch)."""
        with self._lock:
            if self._fulltext_queued:
                return True  # this process's own batch: published within a second
            return self._loaded_fulltext()[1]

    def ensure_fulltext(self, verify: bool = False) -> bool:
        """Rebuild the full-text index from the chunk rows when it is stale or damaged;
        True if rebuilt. ``verify``: read every entry first (an index run's start), so a
        damage no stamp shows is found and repaired too."""
        with self._lock:
            if verify and not self._fulltext_queued:
                with suppress(FullTextDamaged):  # recorded by the index: not current below
                    self._fulltext_index().verify()
            if self.fulltext_current():
                return False
            fulltext = self._fulltext_index()
            damage = fulltext.problem() or fulltext.recreated
            fulltext.recreated = None
            state = (f"damaged ({damage})" if damage is not None
                     else "missing" if fulltext.stamp() is None else "stale")
            log.warning("the full-text index %s is %s: rebuilding it from the database",
                        fulltext.path, state)
            self.rebuild_fulltext()
            return True

    def rebuild_fulltext(self) -> None:
        """Replace the full-text index's content with every chunk row, in one commit.

        A damaged index (one found damaged before, or failing during the refill)
        is thrown away first and refilled into an empty folder.
        """
        with self._lock:
            fulltext = self._fulltext_index()
            if fulltext.problem() is not None:
                fulltext.reset()
            try:
                self._refill_fulltext(fulltext)
            except FullTextDamaged as exc:
                log.warning("%s: starting it afresh", exc)
                fulltext.reset()
                self._refill_fulltext(fulltext)
            self._fulltext_said = None

    def _refill_fulltext(self, fulltext: FullTextIndex) -> None:
        with self._lock:
            fulltext.delete_all()
            with self._errors("reading chunks for the full-text index"), self.read_snapshot():
                stamp = self._db_stamp()
                cursor = self._conn.execute(
                    "SELECT id, doc_id, heading, context, content FROM chunks ORDER BY id")
                while block := cursor.fetchmany(4096):
                    fulltext.add([TextRow(*r) for r in block])
            fulltext.commit(stamp)
            self._fulltext_seen = stamp
            self._fulltext_queued = 0
            self._fulltext_committed_at = time.monotonic()
            if not self._fulltext_writing:
                fulltext.release_writer()

    def fulltext_search(self, phrases: Sequence[str], limit: int,
                        exclude: Sequence[str] = ()) -> list[tuple[int, float]]:
        """``[(chunk_id, score)]`` best first; the score is BM25 negated (lower is better)."""
        with self._lock:
            try:
                hits = self._loaded_fulltext()[0].search(phrases, limit, _searchable(exclude))
            except FullTextDamaged as exc:
                self._without_fulltext(exc)
                return []
        return [(chunk_id, -score) for chunk_id, score in hits]  # same order, lower is better

    def fulltext_matching(self, terms: Sequence[str], among: Sequence[int] | None = None
                          ) -> set[int]:
        """Chunks whose text holds any term, per the full-text index's matching rules."""
        wanted = _searchable(terms)
        if not wanted:
            return set()
        with self._lock:
            return self._loaded_fulltext()[0].matching(wanted, among)

    def fulltext_most_matching(self, terms: Sequence[str]) -> int:
        wanted = _searchable(terms)
        if not wanted:
            return 0
        with self._lock:
            return self._loaded_fulltext()[0].most_matching(wanted)

    def fulltext_findings(self) -> list[str]:
        """A missing, stale or damaged full-text index, or one holding another number of
        chunks (every chunk id is read once: a damaged fast field is found here)."""
        if self._fulltext is None and not fulltext_path(self._path).is_dir():
            check_directory(fulltext_path(self._path), "the full-text index folder")
            return [f"the full-text index {fulltext_path(self._path)} is missing"]
        if self._fulltext_queued:  # this process's own batch is not a finding: publish it
            self._commit_fulltext()
        fulltext = self._fulltext_index()
        try:
            fulltext.refresh()
            found = fulltext.stamp()
            stamp = self._db_stamp()
            if found is None:
                return [f"the full-text index {fulltext.path} is missing or empty"]
            if found != stamp:
                what = ("was built from another database" if found.index_id != stamp.index_id
                        else f"reflects text generation {found.generation}, the database is at "
                             f"{stamp.generation}")
                return [f"the full-text index {fulltext.path} is stale (it {what})"]
            with self._errors("counting chunks"):
                chunks = self._conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            held = fulltext.count()
            if held != chunks:
                return [f"the full-text index {fulltext.path} holds {held} chunk(s), the "
                        f"database {chunks}"]
            fulltext.verify()
        except FullTextDamaged as exc:
            return [str(exc)]
        return []


def _searchable(terms: Sequence[str]) -> list[str]:
    """Exclusion terms worth asking the full-text index about: distinct, not blank."""
    return [t for t in dict.fromkeys(terms) if t.strip()]
