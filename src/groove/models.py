"""Plain data records passed between the stages of groove.

These are the shared vocabulary of the package: parsers produce
:class:`ParsedDocument`, chunking turns it into :class:`Chunk` records, the
store persists them and hands back :class:`ChunkRow` / :class:`DocumentRow`,
and search returns :class:`Hit` inside a :class:`SearchResponse`.

They are deliberately dumb (no I/O, no behaviour beyond small helpers) so that
every module can import them without pulling in SQLite, numpy or a model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The most characters of one chunk's content a model reads (two 512-token windows of
#: English; every chunk cut by sections or definitions is shorter): a chunk cut coarsely
#: from a huge file (a 12 MB minified line) costs the embedder at most this much. The
#: whole content is stored and full-text indexed.
PASSAGE_MAX_CHARS = 4096
#: The most characters of content one search hit carries (the hit says it was cut).
HIT_CONTENT_MAX_CHARS = 20_000


def passage_text(context: str, content: str) -> str:
    """The text a model reads for one chunk: the breadcrumb, a blank line, the content
    (its first :data:`PASSAGE_MAX_CHARS` characters).

    The embedder (at index time) and the reranker (at search time) both read
    this, so contextual mode means the same thing to both. Without a
    breadcrumb (contextual mode off) it is the content alone.
    """
    content = content[:PASSAGE_MAX_CHARS]
    return f"{context}\n\n{content}" if context else content


#: The other spelling of a line range's keys (GrooveSeek's): every answer that carries
#: ``line_start``/``line_end`` carries these too, with the same values, and the tools
#: that take a line range accept either (docs/search.md, "Line numbers").
LINE_ALIASES = {"line_start": "start_line", "line_end": "end_line"}


def with_line_aliases(out: dict[str, Any]) -> dict[str, Any]:
    """``out`` with ``start_line``/``end_line`` beside the ``line_start``/``line_end`` it has."""
    for key, alias in LINE_ALIASES.items():
        if out.get(key) is not None:
            out[alias] = out[key]
    return out


def estimated_tokens(text: str) -> int:
    """A chunk's tokens when its exact count is not stored yet: UTF-8 bytes / 4.

    Four bytes is about one token of English (four letters) and of Japanese
    (a token of one or two characters of three bytes each), so the estimate
    holds across scripts where characters / 4 would undercount Japanese
    about threefold.
    """
    return max(1, len(text.encode("utf-8", "surrogatepass")) // 4)


def passage_tokens(content_tokens: int | None, content: str, context: str) -> int:
    """What one pending chunk costs the embedder, before anything is counted exactly.

    The content's stored (or just counted) tokens, else :func:`estimated_tokens`,
    plus a quarter token per character of the breadcrumb. The embedding pass
    sizes its windows with it, and the store sums it for the progress total
    (``SQLiteStore.pending_token_estimate`` calls this same function), so the
    total and the windows always agree.
    """
    if len(content) > PASSAGE_MAX_CHARS:  # the model reads only the start (passage_text)
        return estimated_tokens(content[:PASSAGE_MAX_CHARS]) + len(context) // 4
    return (content_tokens or estimated_tokens(content)) + len(context) // 4


def code_breadcrumb(path: str, scope: str | None, kind: str | None, name: str | None,
                    keyword: str | None = None) -> str:
    """``src/db.rs > impl Database › fn open``: where a code chunk sits, in words.

    The enclosing definition's header comes first and the chunk's own
    definition follows it after ``›``, written with the keyword that
    introduces it in the source (``fn``, ``def``, ``struct``) or, when the
    grammar has none (a Java method), its kind. Parts that are unknown (a
    chunk of top-level lines has no definition) are left out; the path is
    always there.
    """
    label = f"{keyword or kind} {name}" if name and (keyword or kind) else name
    if scope and label:
        return f"{path} > {scope} › {label}"
    return " > ".join(part for part in (path, scope or label) if part)


@dataclass(frozen=True)
class Definition:
    """One definition a grammar's tags query reported, as whole lines (0-based, inclusive).

    ``kind`` is the grammar's word (``function``, ``class``, ``method``...),
    ``scope`` the first enclosing node with a name (``impl Database``,
    ``class Config``) or None at top level. ``children`` are the definitions
    nested inside it, in order and not overlapping. ``keyword`` is the
    source's own word that introduces it (``fn``, ``def``, ``struct``,
    ``impl``), None when there is none (a Java method starts with its type).
    ``container``: a block the tags query does not report but that holds
    definitions (Rust's ``impl``, a ``namespace``), added so its members are
    chunked with their header.
    """

    first_line: int
    last_line: int
    name: str
    kind: str
    scope: str | None = None
    children: tuple[Definition, ...] = ()
    keyword: str | None = None
    container: bool = False


@dataclass(frozen=True)
class CodeOutline:
    """What the code parser found in a source file: its text and its definitions.

    ``definitions`` are the top-level ones (nested ones hang below them),
    sorted and not overlapping. ``fallback`` names why the file is chunked
    by lines instead (``parse:too-deep``); chunking may add
    ``parse:too-many-chunks`` itself (docs/indexing.md, "Source code").
    """

    language: str
    text: str
    definitions: tuple[Definition, ...]
    fallback: str | None = None


#: How a document's chunks were built (stored per document; docs/indexing.md
#: 'Very long files'): by its sections, or coarsely by lines because by
#: sections it would have given more than ``max_chunks_per_file`` chunks.
BY_SECTIONS = "sections"
COARSE = "coarse"
#: The chunking policy this groove builds indexes with, recorded in the index:
#: every line of every file reaches a chunk. An index recording anything else
#: ("legacy") was written by a groove that dropped the tail of long files.
CHUNK_POLICY = "whole-file"
#: The link rule an index's stored links were read under ("3": wikilinks, inline and
#: reference Markdown links, a Markdown link's ``.html`` target naming the ``.md`` page).
#: An index that records another, or none, reads every Markdown document's links again
#: on its next run, touching no chunk or vector.
LINK_RULE = "3"
LEGACY_CHUNK_POLICY = "legacy"


@dataclass(frozen=True)
class Section:
    """One heading-delimited part of a parsed document.

    ``heading`` is None for the preamble (text before the first heading);
    ``ancestry`` holds the headings of the enclosing sections, outermost first,
    *including* ones dropped by ``exclude_headings`` (they still shape the
    breadcrumb of their children).
    """

    heading: str | None
    level: int | None
    body: str
    ancestry: tuple[str, ...] = ()


#: :attr:`Link.kind`: ``[[target]]``, or a Markdown link (inline or by reference).
WIKILINK = "wikilink"
MARKDOWN = "markdown"
#: The file name extensions of a Markdown document: what the Markdown parser reads, and
#: what a link target may leave out (``[[notes/setup]]`` names ``notes/setup.md``).
MARKDOWN_EXTENSIONS = ("md", "markdown")


@dataclass(frozen=True)
class Link:
    """One link as written in a document (:mod:`groove.parsers.links` finds them).

    ``start``/``end`` are offsets into the text that was parsed, and
    ``source`` is that slice (``[[api/retries#Backoff|backoff]]``). ``target``
    is what names the document, decoded and without its anchor
    (``api/retries``); ``anchor`` the heading or ``^block`` after ``#``;
    ``kind`` :data:`WIKILINK` or :data:`MARKDOWN`; ``embed`` a ``!``-prefixed link.
    """

    start: int
    end: int
    source: str
    kind: str
    target: str
    anchor: str | None = None
    label: str | None = None
    embed: bool = False


@dataclass(frozen=True)
class LinkRow:
    """A stored link, read back with both ends (``groove links``, get_document, doctor).

    ``target_path`` is the document the link resolves to (None: it points at
    no document; ``problem`` then says "missing" or "ambiguous").
    ``source_heading`` and ``source_line`` describe the linking chunk: its
    heading and its first non-blank line.
    """

    source_path: str
    source_heading: str | None
    source_line: str
    target: str
    target_path: str | None
    anchor: str | None
    label: str | None
    kind: str
    embed: bool
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source_path, "source_heading": self.source_heading,
                "line": self.source_line, "target": self.target, "path": self.target_path,
                "heading": self.anchor, "label": self.label, "kind": self.kind,
                "embed": self.embed, **({"problem": self.problem} if self.problem else {})}


@dataclass
class ParsedDocument:
    """What a parser extracted from one file, before chunking."""

    title: str
    sections: list[Section]
    metadata: dict[str, Any] = field(default_factory=dict)
    date: str | None = None
    tags: list[str] = field(default_factory=list)
    tags_invalid: bool = False
    category: str | None = None
    topic: str | None = None
    binary_format: bool = False
    warnings: list[str] = field(default_factory=list)
    #: Set by the code parsers: the file is chunked at its definitions, not its sections.
    outline: CodeOutline | None = None
    #: The links of the sections' bodies, in document order (Markdown only); offsets are
    #: into the body of the section they belong to.
    links: list[Link] = field(default_factory=list)
    #: Other names the document answers to as a link target (frontmatter ``aliases:``).
    aliases: tuple[str, ...] = ()
    #: The text the sections were cut from, when its lines are the file's lines
    #: (Markdown, plain text; None for extracted formats), and the file line it
    #: starts at: the prose chunks' line numbers are found in it
    #: (:mod:`groove.indexing.prose_lines`).
    line_text: str | None = None
    line_text_start: int = 1


@dataclass(frozen=True)
class _ChunkText:
    """What a chunk is, as written to the store and as read back."""

    chunk_index: int
    heading: str | None
    level: int | None
    context: str
    content: str
    #: The content's tokens, or None when the rows pass did not need to count
    #: them (groove.indexing.tokens): the vectors pass stores the count.
    token_count: int | None
    quality: float


@dataclass(frozen=True)
class Chunk(_ChunkText):
    """A unit of retrieval, ready to be embedded and stored."""

    ancestry: tuple[str, ...] = ()
    #: Source-code chunks only (None for prose): the definition's kind and
    #: enclosing scope, and the chunk's own 1-based line range in the file.
    symbol_kind: str | None = None
    scope: str | None = None
    line_start: int | None = None
    line_end: int | None = None


@dataclass(frozen=True)
class _DocumentFields:
    """What a document is, as written to the store and as read back."""

    path: str  # relative to kb_path, POSIX separators
    sha256: str
    title: str
    category: str | None
    topic: str | None
    date: str | None
    tags: tuple[str, ...]
    tags_invalid: bool
    metadata: dict[str, Any]
    size: int
    mtime: float


@dataclass(frozen=True)
class DocumentRecord(_DocumentFields):
    """Document-level fields written to the store alongside its chunks."""

    binary_format: bool = False
    #: The code parser's language id (``python``, ``rust``...); None for prose.
    language: str | None = None
    #: Whether the document is written in kana/kanji (search/language.py), judged on its
    #: text; None when unknown (an index written before groove recorded it).
    cjk: bool | None = None
    #: BY_SECTIONS or COARSE; kept as it was when a rename moves the document.
    chunking: str = BY_SECTIONS
    #: The values of the frontmatter keys the schema declares (docs/filters),
    #: each key with its strings (a list value gives several).
    fields: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: The document's links, each with the ``chunk_index`` of the chunk holding it.
    links: tuple[tuple[int, Link], ...] = ()
    #: Other names it answers to as a link target (frontmatter ``aliases:``).
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class DocumentRow(_DocumentFields):
    """A document as read back from the store (keyword construction only)."""

    id: int
    binary_format: bool
    indexed_at: float
    chunk_count: int
    language: str | None = None
    chunking: str = BY_SECTIONS
    #: Chunks still waiting for a vector (0: the document is embedded, or has no chunk).
    pending: int = 0


@dataclass(frozen=True, slots=True)
class _DocumentLabel:
    """What a search reads of a chunk's document: where it is and how it is labelled."""

    path: str
    title: str
    category: str | None
    topic: str | None
    date: str | None
    tags: tuple[str, ...]


@dataclass(frozen=True)
class ChunkRow(_ChunkText, _DocumentLabel):
    """A stored chunk joined with the document fields search needs (keyword construction)."""

    id: int
    doc_id: int
    binary_format: bool = False
    symbol_kind: str | None = None
    scope: str | None = None
    line_start: int | None = None
    line_end: int | None = None
    language: str | None = None


@dataclass(frozen=True, slots=True)
class DocumentMeta(_DocumentLabel):
    """The document fields search filters read, held once per document (not per chunk;
    keyword construction)."""

    id: int
    binary_format: bool = False
    language: str | None = None
    #: Written in kana/kanji (judged on the text at indexing); None: unknown, judge the title.
    cjk: bool | None = None


@dataclass(frozen=True)
class ChunkColumns:
    """Every chunk as parallel numpy columns, ordered by chunk id (see docs/scaling.md).

    A million chunks are three arrays, not a million objects; the document
    fields live once per document in ``documents`` (``doc_slot`` indexes it).
    """

    ids: Any  # int64[n], ascending
    doc_slot: Any  # int32[n], index into ``documents``
    quality: Any  # float64[n]
    documents: tuple[DocumentMeta, ...]
    #: int16[n] index into ``kinds`` (-1: no symbol kind, a prose or gap chunk).
    kind_code: Any = None
    kinds: tuple[str, ...] = ()


@dataclass
class Hit:
    """One search result as returned to callers (CLI JSON, MCP, UI).

    ``match_spans`` is None when not computed (the key is then omitted from
    JSON); ``expanded_from`` is set only when the parent retriever fired.
    ``context`` (the breadcrumb) is never returned to callers, so it is not here.
    """

    chunk_id: int
    score: float
    path: str
    title: str
    heading: str | None
    level: int | None
    category: str | None
    topic: str | None
    date: str | None
    tags: list[str]
    content: str
    match_spans: list[dict[str, int]] | None = None
    expanded_from: dict[str, Any] | None = None
    uri: str | None = None
    symbol_kind: str | None = None
    scope: str | None = None
    #: The hit's first and last line in its file (source code and text formats; absent
    #: for extracted formats such as PDF, and for prose indexed before groove kept them).
    line_start: int | None = None
    line_end: int | None = None
    #: The document's language (a parser id) for a source file, whose text is shown
    #: verbatim; None for prose. Not part of the JSON answer.
    language: str | None = None
    #: The score a later stage reordered this hit against (quotes first, the same-document
    #: margin, translations, MMR): ``score`` is then capped at the score of the hit above it,
    #: so scores never increase down the list, and this keeps the stage's own score.
    raw_score: float | None = None
    #: The content's length when :meth:`cap_content` cut it (None: it is whole).
    content_total_chars: int | None = None
    #: How many other documents link to this hit's document (None: none does).
    backlink_count: int | None = None
    #: How the ranking reached this hit, when the request asked (search/explain.py).
    explain: dict[str, Any] | None = None
    #: The collection the hit comes from, when several are served (None: one folder).
    collection: str | None = None
    #: Its score in its own collection's answer, before the merge's weight (collections only).
    collection_score: float | None = None

    def cap_content(self, limit: int = HIT_CONTENT_MAX_CHARS) -> None:
        """Keep the first ``limit`` characters of an over-long content, recording its length."""
        if len(self.content) > limit:
            self.content_total_chars = len(self.content)
            self.content = self.content[:limit]

    def location(self) -> str:
        """``path:line`` for a hit that knows its first line, the path alone otherwise."""
        return self.path if self.line_start is None else f"{self.path}:{self.line_start}"

    def to_json(self) -> dict[str, Any]:
        """The hit as the response object: optional keys only when set."""
        out: dict[str, Any] = {} if self.collection is None else {"collection": self.collection}
        out |= {
            "score": self.score,
            "path": self.path,
            "title": self.title,
            "heading": self.heading,
            "level": self.level,
            "category": self.category,
            "topic": self.topic,
            "date": self.date,
            "tags": list(self.tags),
            "content": self.content,
        }
        if self.match_spans is not None:
            out["match_spans"] = self.match_spans
        if self.expanded_from is not None:
            out["expanded_from"] = self.expanded_from
        if self.uri is not None:
            out["uri"] = self.uri
        for key in ("raw_score", "symbol_kind", "scope", "line_start", "line_end",
                    "backlink_count", "collection_score"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        with_line_aliases(out)
        cut = self.content_cut()
        if cut is not None:
            out["content_cut"] = cut
        if self.explain is not None:
            out["explain"] = self.explain
        return out

    def content_cut(self) -> str | None:
        """The sentence saying the content was cut (None: it is whole)."""
        if self.content_total_chars is None:
            return None
        return (f"content is cut to its first {len(self.content)} of "
                f"{self.content_total_chars} characters; get_document returns the document")


@dataclass
class SearchResponse:
    """``low_confidence``: the knowledge base probably does not answer the question, for the
    reason ``low_confidence_reason`` names — see docs/search.md, "low_confidence"."""

    results: list[Hit]
    low_confidence: bool
    filter_applied: dict[str, Any]
    #: How complete the index answering was (omitted from JSON when not computed).
    index: IndexState | None = None
    #: Why ``low_confidence`` is set: a code of ``search.confidence.REASONS``, and the same
    #: in words (both omitted from JSON when the flag is down).
    low_confidence_reason: str | None = None
    low_confidence_note: str | None = None
    #: What the caller should know about the answer, one sentence each: a filter that
    #: can match nothing (search/notes.py). Omitted from JSON when empty.
    notes: list[str] = field(default_factory=list)
    #: The best match's lift over its index's own cosine distribution (search/confidence.py;
    #: never in JSON): what collections merge on. None when it was not measured.
    lift: float | None = None
    #: The vector leg's best cosine (never in JSON; None: no vector leg ran).
    top_cosine: float | None = None
    #: Each searched collection's index state, when several are served (then ``index`` is None).
    collections: dict[str, IndexState] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "results": [h.to_json() for h in self.results],
            "low_confidence": self.low_confidence,
            "filter_applied": self.filter_applied,
        }
        if self.low_confidence and self.low_confidence_reason is not None:
            out["low_confidence_reason"] = self.low_confidence_reason
            out["low_confidence_note"] = self.low_confidence_note
        if self.index is not None:
            out["index"] = self.index.to_json()
        if self.collections is not None:
            out["collections"] = {name: state.to_json() for name, state in self.collections.items()}
        if self.notes:
            out["notes"] = list(self.notes)
        return out


#: ``IndexState.state`` values.
INDEX_STATES = ("missing", "building", "incomplete", "complete")


@dataclass(frozen=True)
class IndexState:
    """How complete the index is: part of every search answer, ``status`` and the UI.

    ``state``: "missing" (no index file), "building" (a writer holds the
    index's writer lock), "incomplete" (a build stopped before its end, or a
    one-shot search wrote the text only: some files may be missing and some
    chunks are only found by full-text matching), or "complete".
    ``files_newer`` counts files on disk that are new or changed since they
    were indexed, ``files_skipped`` files the index runs could not take (None
    when not counted yet).
    docs/index-lifecycle.md documents every field.
    """

    state: str
    documents: int
    documents_embedded: int
    chunks: int
    chunks_embedded: int
    build_running: bool
    last_change: str | None
    files_newer: int | None
    #: Files the index runs skipped and that have not changed since (None when not checked).
    files_skipped: int | None = None
    #: Member files on disk (None when not counted); only the note reads it (how far a
    #: build's reading is), it is not part of the JSON.
    files_total: int | None = None
    #: Why the full-text index cannot answer (damaged, being rebuilt): the answer then
    #: comes from the vector leg alone. None (and absent from JSON) when it can.
    fulltext_unavailable: str | None = None

    @property
    def complete(self) -> bool:
        return self.state == "complete"

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "documents": self.documents,
            "documents_embedded": self.documents_embedded,
            "chunks": self.chunks,
            "chunks_embedded": self.chunks_embedded,
            "build_running": self.build_running,
            "last_change": self.last_change,
            "files_newer": self.files_newer,
            "files_skipped": self.files_skipped,
            **({"fulltext_unavailable": self.fulltext_unavailable}
               if self.fulltext_unavailable is not None else {}),
        }

    def note(self) -> str | None:
        """One sentence for a person when the answer may be partial; None when it is not."""
        embedded = f"{self.documents_embedded} of {self.documents} documents embedded"
        if self.fulltext_unavailable is not None:
            return (f"the full-text index cannot be used ({self.fulltext_unavailable}); it is "
                    "rebuilt from the database, and until then answers come from the vector "
                    "leg alone (no keyword matches)")
        if self.state == "missing":
            return ("no index yet: a build is starting" if self.build_running
                    else "there is no index yet: run `groove index`")
        if self.state == "building":
            reading = ""
            if self.files_total is not None and self.files_newer is not None:
                done = self.files_total - self.files_newer
                reading = f"reading files: {done} of {self.files_total}, "
            return (f"the index is being built ({reading}{embedded}); answers come from "
                    "what is indexed so far, by full-text matching where vectors are missing")
        if self.documents == 0:  # "incomplete (0 of 0 …)" would contradict the folder's warning
            if self.files_newer:
                return (f"the index holds no documents yet ({self.files_newer} file(s) to "
                        "read): run `groove index`")
            return ("the index holds no documents: no file of the folder is one the enabled "
                    "parsers read (or each was skipped); `groove index` names the extensions "
                    "it found and which are enabled")
        if self.state == "incomplete":
            return (f"the index is incomplete ({embedded}); answers use full-text matching "
                    "where vectors are missing: run `groove index` to finish it")
        notes = []
        if self.files_newer:
            notes.append(f"{self.files_newer} file(s) changed since they were indexed: "
                         "run `groove index` to include the changes")
        if self.files_skipped:
            notes.append(f"{self.files_skipped} file(s) skipped: run `groove doctor` to see why")
        return "; ".join(notes) or None
