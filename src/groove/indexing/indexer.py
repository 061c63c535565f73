"""Incremental indexing: walk → read → hash → (rename | parse+chunk) → store → embed.

A run has two passes (docs/index-lifecycle.md):

1. **rows**: every new or changed document is parsed, chunked and written
   with its full-text rows but *without* vectors, one transaction per
   document, so a crash leaves each document old or new; the store publishes
   the first one to the full-text index at once and the rest in batches
   (at most about a second old, checked before each file too), so each
   document is searchable lexically while the walk goes on;
2. **vectors**: :mod:`groove.indexing.embedding_pass` embeds every pending
   chunk (this run's and any an interrupted run left behind).

The rules of the rows pass, in the order they are applied:

* a file whose SHA-256 matches what the index holds for its path is unchanged;
* a new path whose bytes equal a document that vanished from disk is a rename:
  the path is updated and nothing is re-embedded;
* anything else new or changed is parsed, chunked and written;
* indexed paths no longer on disk (or now excluded) are deleted;
* a file that cannot be read or parsed is skipped with one warning and its
  previously indexed version is kept.

``build_state`` is "building" from the start of a run until its embedding
pass ends ("text only" when the run was asked not to embed); a run limited
to some paths (the watcher) only marks the index complete if it was
complete before (it did not look at the other files).
"""

from __future__ import annotations

import logging
import os
import stat
import sys
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path

from groove.config import Config
from groove.config.schema import declared_field_names, field_strings, kb_schema
from groove.config.sizes import announce_raised
from groove.embedders.base import Embedder
from groove.errors import GrooveError, IndexMismatchError, NotFound
from groove.indexing.chunking import bounded_chunks, place_links
from groove.indexing.embedding_pass import (
    EmbeddingExecutor,
    EmbedProgress,
    LocalExecutor,
    run_embedding_pass,
)
from groove.indexing.fileset import FileSet
from groove.indexing.tokens import TokenCounts
from groove.indexing.walk import file_kind, read_file_safely, sha256_hex
from groove.models import (
    CHUNK_POLICY,
    COARSE,
    Chunk,
    DocumentRecord,
    Link,
    ParsedDocument,
    passage_text,
)
from groove.parsers import get_parser_for
from groove.parsers._zipguard import decompression_budget
from groove.parsers.markdown import FRONTMATTER_UNPARSED_TAG
from groove.search.language import document_is_cjk
from groove.store.base import BUILDING, COMPLETE, TEXT_ONLY, IndexMeta, Store, build_finished

log = logging.getLogger("groove.indexing.indexer")

ExecutorFactory = Callable[[Embedder], EmbeddingExecutor]


@dataclass
class IndexSummary:
    indexed: int = 0
    updated: int = 0
    renamed: int = 0
    deleted: int = 0
    skipped: int = 0
    unchanged: int = 0
    chunks_embedded: int = 0
    tokens_embedded: int = 0
    elapsed_s: float = 0.0
    embed_s: float = 0.0
    tokens_per_s: float = 0.0
    #: Documents whose input the embedding endpoint rejected (their vectors skipped).
    rejected: int = 0
    #: Documents read in this run whose frontmatter does not parse (tagged frontmatter:unparsed).
    frontmatter_unparsed: int = 0
    #: Set when the folder had no indexable file: why, and what to change.
    note: str | None = None

    def line(self) -> str:
        rate = (f", embedded {self.chunks_embedded} chunks at {self.tokens_per_s:.0f} tokens/s"
                if self.chunks_embedded else "")
        broken = (f", {self.frontmatter_unparsed} with a frontmatter that does not parse"
                  if self.frontmatter_unparsed else "")
        return (
            f"indexed {self.indexed}, updated {self.updated}, renamed {self.renamed}, "
            f"deleted {self.deleted}, skipped {self.skipped}, unchanged {self.unchanged}"
            f"{broken} in {self.elapsed_s:.2f}s{rate}"
        )

    def to_json(self) -> dict[str, float | int | str | None]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


class Reporter:
    """Receives progress events; the default does nothing (library use)."""

    def start(self, total: int) -> None: ...

    def file_done(self, rel_path: str, action: str, detail: str = "") -> None: ...

    def embed_start(self, progress: EmbedProgress) -> None:
        """The embedding pass begins: ``progress.tokens_total`` tokens to embed."""

    def embed_progress(self, progress: EmbedProgress) -> None:
        """A batch was embedded (``tokens_done``, ``tokens_per_s`` and ``eta_s`` are current)."""

    def finish(self, summary: IndexSummary) -> None: ...

    def stop(self) -> None:
        """The run ended early (Ctrl-C, an error): release the display, print nothing more."""


@dataclass
class _Run:
    config: Config
    store: Store
    embedder: Embedder
    reporter: Reporter
    contextual: bool
    write_lock: AbstractContextManager
    #: The frontmatter keys groove-schema.toml declares (stored per document).
    declared: tuple[str, ...] = ()
    summary: IndexSummary = field(default_factory=IndexSummary)
    #: ``{path: mtime}`` recorded for each indexed document when the run began.
    mtimes: dict[str, float] = field(default_factory=dict)
    #: Member files this run skipped: ``{path: (mtime, reason)}``, recorded at the
    #: end of the rows pass so the changed-files count does not call them "newer".
    skipped: dict[str, tuple[float, str]] = field(default_factory=dict)
    #: Unchanged files whose mtime moved (a ``touch``): their new time is recorded.
    touched: dict[str, float] = field(default_factory=dict)
    #: Paths whose rows this run wrote (their declared fields are current).
    written: set[str] = field(default_factory=set)
    #: Documents whose vectors this run's embedding pass wrote.
    documents_embedded: int = 0
    #: Parser ids whose splitting rule changed since the index recorded it: their
    #: unchanged files are parsed again in this run (once; the new rule is recorded).
    reread: set[str] = field(default_factory=set)
    #: The embedder's tokenizer for the run, memoised and asked only when its
    #: cheap bounds do not settle a chunking decision (groove.indexing.tokens):
    #: one call costs about a microsecond per character, once the bulk of the
    #: rows pass. The vectors pass counts what the rows pass left out.
    count_tokens: TokenCounts = field(default_factory=lambda: TokenCounts(len))

    def __post_init__(self) -> None:
        self.count_tokens = TokenCounts(self.embedder.token_count, self.embedder)


def context_mode_name(enabled: bool) -> str:
    return "static" if enabled else "off"


def probe_before_reset(embedder: Embedder) -> None:
    """A forced rebuild may clear the index: first make sure the embedder answers.

    A remote endpoint that refuses (a wrong key, down, a wrong dimension) is
    found with one fixed text before anything is written, so ``--force`` and
    ``rebuild_index {force}`` never leave an emptied index behind (docs/scaling.md).
    """
    try:
        embedder.probe()
    except GrooveError as exc:
        raise GrooveError(f"the index was not modified: the embedding model did not answer the "
                          f"probe a forced rebuild sends first: {exc}") from None


def model_mismatch(meta: IndexMeta, model_id: str, db_path: Path) -> IndexMismatchError | None:
    """The refusal when the index was built by another model.

    The model is its name (and the dimension it gives, checked where vectors
    meet: :meth:`Embedder.expect_dim`); where a remote model is served is not
    part of it (GrooveSeek v1.13): the same model moved to another port or
    host keeps its index.
    """
    if meta.model_id is None or meta.model_id == model_id:
        return None
    return IndexMismatchError(
        f"the index at {db_path} was built with model {meta.model_id!r} (dim {meta.dim}), not "
        f"{model_id!r}; rebuild it with `groove index --force --model {model_id}` or use "
        f"--model {meta.model_id}")


def prepare_meta(store: Store, config: Config, embedder_id: str, dim: Callable[[], int],
                 *, force: bool, embedder_url: str | None = None) -> bool:
    """Check (or record) model and context mode; return whether contextual mode is on.

    A model mismatch (another model name) is refused unless ``force``;
    with ``force`` the old vectors are incompatible, so the index is cleared
    first. A changed contextual setting without ``force`` keeps the recorded mode.
    """
    meta = store.meta()
    wanted_mode = context_mode_name(config.contextual.enabled)
    fresh = meta.model_id is None
    mismatch = model_mismatch(meta, embedder_id, config.db_path)
    if mismatch is not None and not force:
        raise mismatch
    if not fresh and not force and (meta.model_url or None) != (embedder_url or None):
        log.info("model %s is now served at %s (the index was built through %s); same model, "
                 "the index is kept", embedder_id, embedder_url or "this process",
                 meta.model_url or "this process")
        store.set_meta(model_url=embedder_url or "")
    if fresh or force:
        if not fresh and (mismatch is not None or meta.context_mode != wanted_mode):
            store.clear()
        store.set_meta(model_id=embedder_id, dim=dim(), context_mode=wanted_mode,
                       model_url=embedder_url or "")
        return config.contextual.enabled
    if meta.context_mode != wanted_mode:
        log.warning(
            "contextual mode in groove.toml is %r but the index was built with %r; "
            "keeping %r (run `groove index --force` to change it)",
            wanted_mode, meta.context_mode, meta.context_mode,
        )
    return meta.context_mode == "static"


def run_index(
    config: Config,
    store: Store,
    embedder_factory: Callable[[], Embedder],
    *,
    force: bool = False,
    reporter: Reporter | None = None,
    only_paths: Iterable[str] | None = None,
    write_lock: AbstractContextManager | None = None,
    executor_factory: ExecutorFactory | None = None,
    embed: bool = True,
) -> IndexSummary:
    """Bring the index in line with the files on disk: the rows pass, then the vectors pass.

    ``only_paths`` (used by the watcher) limits the rows pass to those
    relative paths: each is re-indexed if present, deleted if gone, and
    renames are detected among them. ``write_lock`` is held around each
    single-document write, so readers holding it never see a run half-way
    through a document. ``executor_factory`` chooses where embedding batches
    run (default: :class:`~groove.indexing.embedding_pass.LocalExecutor`).
    ``embed=False`` stops after the rows pass (the one-shot search on a new
    folder): the index is then searchable by full text and stays incomplete.

    The full-text index is checked first (rebuilt from the database when a
    crash left it stale; always rebuilt with ``force``) and flushed after the
    rows pass and at the end, whatever happens.
    """
    try:
        return _run_index(config, store, embedder_factory, force=force, reporter=reporter,
                          only_paths=only_paths, write_lock=write_lock,
                          executor_factory=executor_factory, embed=embed)
    finally:
        store.flush()  # whatever SQLite committed reaches the full-text index


def _run_index(
    config: Config,
    store: Store,
    embedder_factory: Callable[[], Embedder],
    *,
    force: bool,
    reporter: Reporter | None,
    only_paths: Iterable[str] | None,
    write_lock: AbstractContextManager | None,
    executor_factory: ExecutorFactory | None,
    embed: bool,
) -> IndexSummary:
    started = time.perf_counter()
    # A schema that does not load stops the run before anything is written: indexing
    # without it would make every --field filter answer empty and say nothing.
    declared = declared_field_names(kb_schema(config.kb_path))
    if force:
        store.rebuild_fulltext()
    else:
        store.ensure_fulltext(verify=True)
    embedder = embedder_factory()
    if force:
        probe_before_reset(embedder)
    was_complete = build_finished(store.meta())
    contextual = prepare_meta(store, config, embedder.model_id, lambda: embedder.dim, force=force,
                              embedder_url=embedder.source)
    embedder.expect_dim(store.meta().dim)
    store.set_meta(build_state=BUILDING)
    run = _Run(config, store, embedder, reporter or Reporter(), contextual,
               write_lock or nullcontext(), declared)
    announce_raised(config.index.size_caps())

    files = FileSet.from_config(config)
    on_disk = _files_to_consider(run, files, only_paths)
    if only_paths is None and not on_disk:
        run.summary.note = files.explain_empty()
        log.warning("%s", run.summary.note)
    known = store.document_hashes()
    run.mtimes = store.document_mtimes()
    # Every document this run writes is chunked under the current policy; when it
    # rewrites all of them (--force over the whole folder) or starts from none, the
    # index as a whole is built under it (docs/index-lifecycle.md).
    whole_policy = not known or (force and only_paths is None)
    wanted_policies = parser_policies(config)
    recorded_policies = store.meta().parser_policies or {}
    if known and not force:  # parsers whose rule changed re-read their unchanged files once
        run.reread = {pid for pid, policy in wanted_policies.items()
                      if recorded_policies.get(pid) != policy}
    scope = set(on_disk) | (set(only_paths) & set(known) if only_paths is not None else set(known))
    vanished = {p: h for p, h in known.items() if p in scope and p not in on_disk}
    run.reporter.start(len(on_disk))

    with decompression_budget(config.index.max_decompressed_size):
        for rel_path in on_disk:
            store.publish_due()  # a due batch waits for no write (unchanged files)
            _process_file(run, rel_path, known, vanished, force=force)
    for rel_path in sorted(vanished):
        with run.write_lock:
            store.delete_document(rel_path)
        run.summary.deleted += 1
        run.reporter.file_done(rel_path, "deleted")
    store.refresh_mtimes(run.touched)
    store.record_skipped(run.skipped, None if only_paths is None else set(only_paths))

    if whole_policy:
        store.set_meta(chunk_policy=CHUNK_POLICY)
    if only_paths is None and recorded_policies != wanted_policies:
        store.set_meta(parser_policies=wanted_policies)
    if store.meta().declared_fields != declared:
        _refresh_declared_fields(run)
    if store.links_pending():
        _read_links(run)
    store.flush()  # the rows pass is searchable by the full-text leg before embedding starts
    whole = only_paths is None or was_complete  # the run saw every file, or nothing was missing
    if not embed:
        # Finished as asked, so status must not say "interrupted"; with nothing left to
        # embed (a folder without documents, say) the index is simply complete.
        counts = store.embedding_counts()
        _mark_end(store, complete=whole and counts.chunks_embedded >= counts.chunks,
                  otherwise=TEXT_ONLY)
        run.summary.elapsed_s = time.perf_counter() - started
        run.reporter.finish(run.summary)
        return run.summary
    _embed_pending(run, executor_factory or LocalExecutor)
    _mark_end(store, complete=whole)
    run.summary.elapsed_s = time.perf_counter() - started
    run.reporter.finish(run.summary)
    if run.summary.rejected and not run.documents_embedded:
        raise GrooveError(
            f"the embedding endpoint rejected the input of every document this run sent "
            f"({run.summary.rejected}) and embedded none: that points at the configuration "
            "(model, [embedder] url, max_input_chars) rather than at the files; the rest of "
            "the run finished (deleted and renamed files are recorded)")
    return run.summary


def _mark_end(store: Store, *, complete: bool, otherwise: str | None = None) -> None:
    """Record how the run ended: complete (with its time), else ``otherwise`` if given
    (else the "building" it started with stays, as for a run limited to some paths)."""
    if complete:
        store.set_meta(last_indexed=time.time(), build_state=COMPLETE)
    elif otherwise is not None:
        store.set_meta(build_state=otherwise)


def _refresh_declared_fields(run: _Run) -> None:
    """The schema declares another set of keys: rewrite every Markdown document's field
    rows (no chunk, no vector is touched), then record the set.

    Documents this run wrote already carry the new set; a file that cannot be
    read or parsed now keeps its old rows (it is skipped again by the next run).
    """
    batch: dict[str, dict[str, tuple[str, ...]]] = {}

    def flush() -> None:
        with run.write_lock:
            run.store.write_fields(batch)
        batch.clear()

    for rel_path in sorted(set(run.store.document_hashes()) - run.written):
        if not _carries_fields(run, rel_path):
            continue
        try:
            data = read_file_safely(run.config.kb_path, rel_path,
                                    max_bytes=index_read_cap(run.config, rel_path))
            parser = get_parser_for(rel_path, run.config.parsers.enabled)
            assert parser is not None  # _carries_fields checked it
            parsed = parser.parse(data, rel_path)
        except Exception as exc:  # noqa: BLE001 - one unreadable file must not stop the refresh
            log.warning("%s: declared fields not refreshed (%s)", rel_path, exc)
            continue
        batch[rel_path] = _declared_values(run, rel_path, parsed)
        if len(batch) >= 256:
            flush()
    flush()
    run.store.set_meta(declared_fields=run.declared)


def _read_links(run: _Run) -> None:
    """An index from before links were stored: read every Markdown document's links and
    aliases from its file and place them in its stored chunks (no chunk, no vector is
    touched), then record that the links are read.

    A file that cannot be read or parsed now keeps no links (it is read again when it
    changes).
    """
    batch: dict[str, tuple[tuple[tuple[int, Link], ...], tuple[str, ...]]] = {}

    def flush() -> None:
        with run.write_lock:
            run.store.write_document_links(batch)
        batch.clear()

    for document in run.store.list_documents():
        if document.path in run.written or not _carries_fields(run, document.path):
            continue
        try:
            data = read_file_safely(run.config.kb_path, document.path,
                                    max_bytes=index_read_cap(run.config, document.path))
            parser = get_parser_for(document.path, run.config.parsers.enabled)
            assert parser is not None  # _carries_fields checked it
            parsed = parser.parse(data, document.path)
        except Exception as exc:  # noqa: BLE001 - one unreadable file must not stop the run
            log.warning("%s: links not read (%s)", document.path, exc)
            continue
        contents = [c.content for c in run.store.document_chunks(document.id)]
        batch[document.path] = (place_links(parsed.links, contents), parsed.aliases)
        if len(batch) >= 256:
            flush()
    flush()
    run.store.mark_links_read()


def _carries_fields(run: _Run, rel_path: str) -> bool:
    """Only Markdown has frontmatter whose keys a schema declares."""
    parser = get_parser_for(rel_path, run.config.parsers.enabled)
    return parser is not None and parser.id == "md"


def _declared_values(run: _Run, rel_path: str,
                     parsed: ParsedDocument) -> dict[str, tuple[str, ...]]:
    if not run.declared or not _carries_fields(run, rel_path):
        return {}
    values = {key: field_strings(parsed.metadata.get(key)) for key in run.declared}
    return {key: strings for key, strings in values.items() if strings}


def _embed_pending(run: _Run, executor_factory: ExecutorFactory) -> None:
    """The vectors pass over everything pending; its totals go into the summary."""
    progress = run_embedding_pass(
        run.store, executor_factory(run.embedder),
        on_start=run.reporter.embed_start, on_progress=run.reporter.embed_progress,
        write_lock=run.write_lock, count_missing=run.count_tokens,
    )
    run.summary.chunks_embedded = progress.chunks_done
    run.summary.rejected = progress.documents_rejected
    run.documents_embedded = progress.documents_done
    run.summary.tokens_embedded = progress.tokens_done
    run.summary.embed_s = progress.elapsed_s
    run.summary.tokens_per_s = round(progress.tokens_per_s, 1)


def _files_to_consider(run: _Run, files: FileSet, only_paths: Iterable[str] | None) -> list[str]:
    """The member files present on disk (all of them, or those among ``only_paths``).

    What the walk sees but cannot take (links, FIFOs, undecodable names) is
    counted as skipped with one warning each, like a file that fails to parse.
    """
    def on_skip(shown: str, reason: str) -> None:  # refused by the walk: not a member file
        _skip(run, shown, reason, member=False)

    if only_paths is None:
        return list(files.walk(on_skip))
    present = []
    for rel in sorted(set(only_paths)):
        if not files.includes(rel):  # covers every parent directory too
            continue
        try:
            mode = os.lstat(files.kb_path / rel).st_mode
        except OSError:  # gone: deleted below if it was indexed
            continue
        if stat.S_ISREG(mode):
            present.append(rel)
        else:
            on_skip(rel, f"it is {file_kind(mode)}; only regular files are indexed")
    return present


def _process_file(run: _Run, rel_path: str, known: dict[str, str], vanished: dict[str, str],
                  *, force: bool) -> None:
    cap = index_read_cap(run.config, rel_path)
    try:
        data = read_file_safely(run.config.kb_path, rel_path, max_bytes=cap)
    except GrooveError as exc:
        over = "limit" in str(exc) and "over the" in str(exc)
        _skip(run, rel_path, str(exc) + (f" ([index] {cap_key(run.config, rel_path)})"
                                         if over else ""))
        return
    digest = sha256_hex(data)
    if not force and known.get(rel_path) == digest and not _reread(run, rel_path):
        mtime = _mtime(run, rel_path)
        if mtime is not None and mtime != run.mtimes.get(rel_path):
            run.touched[rel_path] = mtime  # same bytes, new time: not "newer" any more
        run.summary.unchanged += 1
        run.reporter.file_done(rel_path, "unchanged")
        return
    parsed: ParsedDocument | None = None
    if rel_path not in known and (old_path := _rename_source(digest, vanished)) is not None:
        parsed = _parse(run, rel_path, data)
        if parsed is None:
            return
        del vanished[old_path]
        if _renamed(run, old_path, _record(run, rel_path, data, digest, parsed)):
            return
    parsed = parsed or _parse(run, rel_path, data)
    if parsed is None:
        return
    cap = run.config.max_chunks_per_file
    plan = bounded_chunks(
        parsed,
        exclude_headings=list(run.config.exclude_headings),
        max_tokens=max(16, run.embedder.max_input_tokens - 16),
        count_tokens=run.count_tokens,
        max_chunks=cap,
        path=rel_path,
        code_chunk_chars=run.config.parsers.code.max_chunk_chars,
    )
    chunks = plan.chunks
    if plan.chunking == COARSE and parsed.outline is None:  # code chunking says why itself
        log.warning("%s: more than %d chunks by its sections; chunked coarsely by lines into "
                    "%d chunks so all of it is indexed (split the file, or raise "
                    "max_chunks_per_file and run `groove index --force`, for finer chunks)",
                    rel_path, cap, len(chunks))
    if not run.contextual:
        chunks = [_without_context(c) for c in chunks]
    action = "updated" if rel_path in known else "indexed"
    record = replace(_record(run, rel_path, data, digest, parsed), chunking=plan.chunking,
                     links=place_links(parsed.links, [c.content for c in chunks]))
    with run.write_lock:
        run.store.write_document(record, chunks, None)
    run.written.add(rel_path)
    setattr(run.summary, action, getattr(run.summary, action) + 1)
    run.reporter.file_done(rel_path, action, f"{len(chunks)} chunks")


def cap_key(config: Config, rel_path: str) -> str:
    """``max_binary_file_size`` for PDF and Office files, ``max_text_file_size`` for the rest."""
    parser = get_parser_for(rel_path, config.parsers.enabled)
    binary = parser is not None and parser.binary_format
    return "max_binary_file_size" if binary else "max_text_file_size"


def parser_policies(config: Config) -> dict[str, str]:
    """{parser id: splitting rule} of the enabled parsers that name one (Parser.policy)."""
    from groove.parsers import PARSERS

    out: dict[str, str] = {}
    for parser_id in config.parsers.enabled:
        parser = PARSERS.load(parser_id) if parser_id in PARSERS else None
        if parser is not None and parser.policy:
            out[parser.id] = parser.policy
    return out


def _reread(run: _Run, rel_path: str) -> bool:
    """An unchanged file whose parser changed its splitting rule since the index recorded it."""
    if not run.reread:
        return False
    parser = get_parser_for(rel_path, run.config.parsers.enabled)
    return parser is not None and parser.id in run.reread


def index_read_cap(config: Config, rel_path: str) -> int:
    """How many bytes of ``rel_path`` an index run reads (its ``[index]`` cap; "unlimited":
    no cap)."""
    cap = getattr(config.index, cap_key(config, rel_path))
    return sys.maxsize if cap is None else int(cap)


def _renamed(run: _Run, old_path: str, record: DocumentRecord) -> bool:
    """Move ``old_path``'s row to ``record.path``; False if another writer removed it first.

    Two indexers (``groove index`` beside ``serve``) can both see the same
    rename; the second finds the source gone and indexes the target instead.
    """
    try:
        with run.write_lock:
            run.store.rename_document(old_path, record)
    except NotFound:
        log.info("%s: rename source %s is no longer in the index; indexing it afresh",
                 record.path, old_path)
        return False
    run.summary.renamed += 1
    run.written.add(record.path)
    run.reporter.file_done(record.path, "renamed", f"from {old_path}")
    return True


def _rename_source(digest: str, vanished: dict[str, str]) -> str | None:
    for old_path in sorted(vanished):
        if vanished[old_path] == digest:
            return old_path
    return None


def _parse(run: _Run, rel_path: str, data: bytes) -> ParsedDocument | None:
    parser = get_parser_for(rel_path, run.config.parsers.enabled)
    if parser is None:  # the file set admits only extensions an enabled parser handles
        _skip(run, rel_path, "no enabled parser handles this extension")
        return None
    try:
        parsed = parser.parse(data, rel_path)
    except GrooveError as exc:
        _skip(run, rel_path, str(exc))
        return None
    except Exception as exc:  # a parser bug or hostile file must not stop the run
        _skip(run, rel_path, f"parser {parser.id} failed: {type(exc).__name__}: {exc}")
        return None
    for warning in parsed.warnings:
        log.warning("%s: %s", rel_path, warning)
    if FRONTMATTER_UNPARSED_TAG in parsed.tags:
        run.summary.frontmatter_unparsed += 1
    return parsed


def _skip(run: _Run, rel_path: str, reason: str, *, member: bool = True) -> None:
    """Count and warn; a member file's skip is also recorded with its mtime (see ``_Run``)."""
    log.warning("skipped %s: %s", rel_path, reason)
    run.summary.skipped += 1
    run.reporter.file_done(rel_path, "skipped", reason)
    if member and (mtime := _mtime(run, rel_path)) is not None:
        run.skipped[rel_path] = (mtime, reason)


def _mtime(run: _Run, rel_path: str) -> float | None:
    """The file's mtime as the changed-files count reads it (the entry itself, no link followed)."""
    try:
        return os.stat(run.config.kb_path / rel_path, follow_symlinks=False).st_mtime
    except OSError:
        return None


def _without_context(chunk: Chunk) -> Chunk:
    return replace(chunk, context="")


def _record(run: _Run, rel_path: str, data: bytes, digest: str,
            parsed: ParsedDocument) -> DocumentRecord:
    mtime = _mtime(run, rel_path)
    return DocumentRecord(
        path=rel_path,
        sha256=digest,
        title=parsed.title,
        category=parsed.category,
        topic=parsed.topic,
        date=parsed.date,
        tags=tuple(parsed.tags),
        tags_invalid=parsed.tags_invalid,
        metadata=parsed.metadata,
        size=len(data),
        mtime=0.0 if mtime is None else mtime,
        binary_format=parsed.binary_format,
        fields=_declared_values(run, rel_path, parsed),
        language=parsed.outline.language if parsed.outline is not None else None,
        cjk=document_is_cjk(parsed.title, (s.body for s in parsed.sections)),
        aliases=parsed.aliases,
    )


def embedding_input(chunk: Chunk) -> str:
    """What the embedder sees: the breadcrumb first in contextual mode."""
    return passage_text(chunk.context, chunk.content)
