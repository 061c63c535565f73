"""The full-text index on tantivy (the Rust search library, through its Python bindings).

Why tantivy: its BM25 top-k search skips blocks that cannot enter the top k,
so a query costs what its answer costs, where SQLite FTS5 scored every row
matching any trigram (docs/scaling.md has the measurements).

Fields (one tantivy document per chunk):

* ``text``: heading twice, the breadcrumb, then the content, as separate
  values of one field (a phrase never matches across two of them). Words are
  runs of letters, digits, marks and ``_`` outside the CJK scripts,
  lower-cased and stemmed (English Snowball): ``Running`` finds ``runs``. One
  field with the heading twice ranked better on the dev set than three
  weighted fields.
* ``parts``: the words of the compound identifiers that name the chunk
  (``_redirect_url`` -> ``redirect url``, ``hybridQuery`` -> ``hybrid
  query``; :mod:`groove.fulltext.identifiers`): its heading twice and its
  breadcrumb (path, scope, definition), analysed like ``text``. Not its
  content: a name used in a body is not what the body defines, and on the
  evaluation matrix the content's names let call sites outrank definitions. A search also asks it
  for each of its identifiers cut into words and for each two neighbouring
  words (``redirect url``), as phrases inside one name, each clause weighted
  by :data:`PARTS_WEIGHT` (chosen on the evaluation matrix,
  docs/evaluation.md); an exclusion does not (it matches the word as
  written). Plain words are
  not repeated here, so a prose chunk without such names has an empty
  ``parts`` and its ranking is what ``text`` alone gives.
* ``cjk``: every maximal run of kanji, hiragana and katakana
  (:mod:`groove.fulltext.scripts`) as overlapping character bigrams with
  positions, so a CJK phrase of two or more characters is a bigram *phrase*
  query: a substring test, like the trigram index it replaces. The query
  names every other bigram and the last at their positions: they cover every
  character, so it matches the same chunks while reading half the lists.
* ``cjk1``: the same runs as single characters (no positions): what a
  one-character CJK query (``猫``) matches.
* ``chunk_id`` / ``doc_id``: integers to map hits back and to delete a
  document's chunks. The chunk with id 0 (never a real chunk: SQLite ids start
  at 1) carries the :class:`~groove.fulltext.base.Stamp` of the last commit.

The folder is untrusted input like every file beside the database (it may
come with a cloned repository), and tantivy reads it through memory maps and
panics (a Rust panic: ``pyo3_runtime.PanicException``, a ``BaseException``)
on damaged bytes. So: the folder itself must be a real directory (a link or a
file there is refused, :func:`groove.store.files.check_directory`); whatever
inside it is not a regular file (a FIFO, a link such as a dangling
``.tantivy-writer.lock``) is found with ``lstat`` before tantivy opens
anything; every call into tantivy goes through one guard
(:meth:`TantivyIndex._tantivy`) that turns a panic, an error or an
impossible value into :class:`~groove.errors.FullTextDamaged`; and the sizes
of the (immutable) segment files are checked before each read, so a file
truncated under a running server is noticed before a read of its mapped
pages could kill the process with SIGBUS. A damaged folder is never
repaired in place: :meth:`TantivyIndex.reset` removes it and the store
refills it from the database.

A query phrase is cut into CJK runs and the text between them; each piece
must match (word, word phrase, bigram phrase or single character) and the
phrases are ORed, scored by BM25. A searched one-word piece that is an
irregular past form also matches its base form (``taken`` → ``take``,
:mod:`groove.fulltext.irregular`); an exclusion matches the word as written.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import tantivy

from groove.errors import FullTextDamaged, GrooveError
from groove.fulltext.base import FullTextIndex, Stamp, TextRow
from groove.fulltext.identifiers import identifier_parts, query_parts
from groove.fulltext.irregular import BASE_FORMS
from groove.fulltext.scripts import CJK_RUN, rust_cjk_class
from groove.store.files import check_directory, planted_entries

log = logging.getLogger("groove.fulltext")

_WORDS = "groove_words"
_SPACES = "groove_spaces"
#: Letters, digits, marks and ``_``, minus the CJK scripts (those go to ``cjk``).
_WORD_PATTERN = rf"[\p{{L}}\p{{N}}\p{{M}}_&&[^{rust_cjk_class()}]]+"
#: Longer tokens (base64 blobs, hashes) are dropped from the index, as tantivy's default does.
_MAX_TOKEN_CHARS = 40
_STAMP_CHUNK = 0
#: The boost of a phrase's clause on ``parts`` beside its clause on ``text`` (0: off).
PARTS_WEIGHT = 1.0
_WRITER_HEAP = 48_000_000
#: How the folder is named in refusals.
_WHAT = "the full-text index folder"
#: How long a look that found the folder intact answers for (one search asks several
#: times; a truncation between the look and the read is a race either way).
_INTACT_FOR_S = 0.05
#: Files tantivy rewrites in place (every other file of a segment is written once).
_MUTABLE = frozenset({"meta.json", ".managed.json", ".tantivy-writer.lock",
                      ".tantivy-meta.lock"})


def is_panic(exc: BaseException) -> bool:
    """Whether ``exc`` is a Rust panic surfaced by pyo3 (``pyo3_runtime.PanicException``,
    a ``BaseException`` that no ``except Exception`` catches)."""
    return type(exc).__name__ == "PanicException"


def _word_analyzer() -> tantivy.TextAnalyzer:
    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(_WORD_PATTERN))
            .filter(tantivy.Filter.remove_long(_MAX_TOKEN_CHARS))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.stemmer("english"))
            .build())


def _space_analyzer() -> tantivy.TextAnalyzer:
    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("chunk_id", stored=True, indexed=True, fast=True)
    builder.add_integer_field("doc_id", indexed=True)
    builder.add_text_field("text", tokenizer_name=_WORDS, index_option="position")
    builder.add_text_field("parts", tokenizer_name=_WORDS, index_option="position")
    builder.add_text_field("cjk", tokenizer_name=_SPACES, index_option="position")
    builder.add_text_field("cjk1", tokenizer_name=_SPACES, index_option="freq")
    builder.add_text_field("stamp", stored=True, tokenizer_name="raw")
    return builder.build()


def bigrams(run: str) -> list[str]:
    """Overlapping character pairs of a CJK run (a 1-character run has none)."""
    return [run[i:i + 2] for i in range(len(run) - 1)]


def _pieces(text: str) -> Iterator[tuple[bool, str]]:
    """``(is_cjk, piece)`` in order: CJK runs and the text between them."""
    pos = 0
    for m in CJK_RUN.finditer(text):
        if m.start() > pos:
            yield False, text[pos:m.start()]
        yield True, m.group()
        pos = m.end()
    if pos < len(text):
        yield False, text[pos:]


class TantivyIndex(FullTextIndex):
    """A tantivy index in one directory; see the module docstring for the fields."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._schema = _schema()
        self._words = _word_analyzer()
        #: Stem of an irregular past form → stem of its base form (``taken`` → ``take``).
        self._base_stems = {self._words.analyze(form)[0]: self._words.analyze(base)[0]
                            for form, base in BASE_FORMS.items()}
        self._lock = threading.RLock()
        self._writer: tantivy.IndexWriter | None = None
        #: Why the folder cannot be read (set by a failed call or a shrunk file; cleared
        #: only by :meth:`reset`): tantivy is not called on it again.
        self._broken: str | None = None
        #: Segment file sizes when last (re)loaded: one that shrinks was truncated.
        self._sizes: dict[str, int] = {}
        #: When :meth:`problem` last found the folder intact (monotonic seconds).
        self._intact_at = -_INTACT_FOR_S
        self.recreated: str | None = None
        self._index = self._open()

    # --- opening, checking, resetting ---------------------------------------------
    def _open(self) -> tantivy.Index:
        """Open the folder, creating it; an unusable one is replaced by an empty index.

        The folder is derived data: when tantivy cannot read it (damaged,
        another format) or it holds something that is not a regular file, it
        is removed and recreated empty; its missing stamp then makes the store
        rebuild it from SQLite. A link or a file at the folder's name is
        refused (:class:`~groove.errors.UnsafeFile`); a folder groove may not
        create or write is a one-line error naming it.
        """
        check_directory(self.path, _WHAT)
        try:
            why = self._planted()
            if why is None:
                self.path.mkdir(parents=True, exist_ok=True)
                try:
                    with self._tantivy("opening it"):
                        index = tantivy.Index(self._schema, path=str(self.path), reuse=True)
                except FullTextDamaged:
                    why = self._broken
            if why is not None:
                log.info("the full-text index %s cannot be used (%s): recreating it empty",
                         self.path, why)
                self.recreated = why
                index = self._create()
        except OSError as exc:
            raise GrooveError(
                f"cannot open the full-text index {self.path} ({exc}): groove keeps it beside "
                "the index file and needs to write there; fix the permissions or set db_path "
                "to a writable place") from exc
        self._broken = None
        self._register(index)
        self._sizes = self._segment_sizes()
        return index

    def _create(self) -> tantivy.Index:
        """An empty index in a fresh folder (whatever was there is removed, links unfollowed)."""
        check_directory(self.path, _WHAT)
        shutil.rmtree(self.path, ignore_errors=True)
        self.path.mkdir(parents=True, exist_ok=True)
        try:
            with self._tantivy("creating it"):
                index = tantivy.Index(self._schema, path=str(self.path), reuse=False)
        except FullTextDamaged as exc:
            raise GrooveError(f"cannot create the full-text index {self.path}: {exc}") from exc
        self._register(index)
        return index

    def _register(self, index: tantivy.Index) -> None:
        index.register_tokenizer(_WORDS, self._words)
        index.register_tokenizer(_SPACES, _space_analyzer())

    def _planted(self) -> str | None:
        """What in the folder is not a regular file, in words (None: nothing)."""
        planted = planted_entries(self.path)
        return f"it holds {', '.join(planted)}, where tantivy keeps only files" if planted else None

    def _segment_sizes(self) -> dict[str, int]:
        """The size of every segment file now (tantivy never rewrites one in place)."""
        sizes = {}
        try:
            with os.scandir(self.path) as entries:
                for entry in entries:
                    if entry.name not in _MUTABLE:
                        try:
                            sizes[entry.name] = entry.stat(follow_symlinks=False).st_size
                        except FileNotFoundError:
                            continue
        except FileNotFoundError:
            return {}
        return sizes

    def problem(self) -> str | None:
        """Why the folder cannot be read now, or None: a damage seen before, a missing
        folder or ``meta.json``, a planted FIFO or link, a segment file that shrank
        since it was mapped. One directory listing; nothing is opened."""
        with self._lock:
            if self._broken is not None:
                return self._broken
            now = time.monotonic()
            if now - self._intact_at < _INTACT_FOR_S:  # one search asks several times
                return None
            check_directory(self.path, _WHAT)
            if not self.path.exists():
                return "the folder is missing"
            why = self._planted()
            if why is not None:
                return why
            if not (self.path / "meta.json").exists():
                return "its meta.json is missing"
            sizes = self._segment_sizes()
            shrunk = sorted(name for name, size in self._sizes.items()
                            if name in sizes and sizes[name] < size)
            if shrunk:
                # Reading the mapped pages past the new end would be SIGBUS: never again.
                self._broken = f"{shrunk[0]} was truncated from {self._sizes[shrunk[0]]} bytes"
                return self._broken
            self._intact_at = now
            return None

    def _ready(self) -> None:
        """Raise :class:`FullTextDamaged` unless the folder can be read (see :meth:`problem`)."""
        why = self.problem()
        if why is not None:
            raise self._damaged(why)

    @contextmanager
    def _tantivy(self, doing: str) -> Iterator[None]:
        """The one boundary where groove calls tantivy: a panic, an error or a value that
        cannot be (a chunk id of None) becomes :class:`FullTextDamaged`, and the folder is
        not read again until :meth:`reset`."""
        try:
            yield
        except FullTextDamaged:
            raise
        except (ValueError, TypeError, OSError) as exc:
            self._broken = f"{doing} failed: {exc}"
            raise self._damaged(self._broken) from exc
        except BaseException as exc:
            if not is_panic(exc):
                raise
            self._broken = f"tantivy panicked {doing}: {exc}"
            raise self._damaged(self._broken) from None

    def _damaged(self, why: str) -> FullTextDamaged:
        return FullTextDamaged(
            f"the full-text index {self.path} cannot be used ({why}); it is derived data: "
            "the next search or `groove index` rebuilds it from the database")

    def reset(self) -> None:
        """Remove the folder and start an empty index in it; the store refills it."""
        with self._lock:
            writer, self._writer = self._writer, None
            del writer  # dropped unused: its lock file goes with the folder
            self._index = self._create()
            self._broken = None
            self._sizes = {}
            self._intact_at = -_INTACT_FOR_S

    # --- reads -------------------------------------------------------------------
    def _searcher(self) -> tantivy.Searcher:
        """A searcher on the commit last loaded (see :meth:`refresh`)."""
        return self._index.searcher()

    def refresh(self) -> None:
        with self._lock:
            self._ready()
            with self._tantivy("reloading it"):
                self._index.reload()
            self._sizes = self._segment_sizes()

    def stamp(self) -> Stamp | None:
        with self._lock:
            try:
                self._ready()
                with self._tantivy("reading its stamp"):
                    searcher = self._searcher()
                    hits = searcher.search(
                        tantivy.Query.term_query(self._schema, "chunk_id", _STAMP_CHUNK), 1).hits
                    if not hits:
                        return None
                    values = searcher.doc(hits[0][1]).get_all("stamp")
            except FullTextDamaged:
                return None
        return Stamp.decode(str(values[0])) if values else None

    def count(self) -> int:
        with self._lock:
            self._ready()
            with self._tantivy("counting its documents"):
                searcher = self._searcher()
                stamped = searcher.search(
                    tantivy.Query.term_query(self._schema, "chunk_id", _STAMP_CHUNK), 1).hits
                return int(searcher.num_docs) - len(stamped)

    def verify(self) -> None:
        """Read every chunk id once (what a search reads for its hits): a damaged
        fast field or a panic is :class:`FullTextDamaged` now, not at some search."""
        with self._lock:
            self._ready()
            with self._tantivy("reading every chunk id"):
                searcher = self._searcher()
                every = tantivy.Query.all_query()
                total = self._count(searcher, every)
                hits = searcher.search(every, total, count=False).hits if total else []
                ids = searcher.fast_field_values("chunk_id", [address for _, address in hits])
                self._ids(ids)

    def _ids(self, values: Sequence[object]) -> list[int]:
        """Chunk ids read from the fast field; a value that is not an integer is damage."""
        if any(not isinstance(v, int) for v in values):
            raise TypeError("a chunk id in the fast field cannot be read")
        return [int(v) for v in values]  # type: ignore[call-overload]

    def search(self, phrases: Sequence[str], limit: int,
               exclude: Sequence[str] = ()) -> list[tuple[int, float]]:
        """The best ``limit`` chunks holding none of ``exclude``; equal scores in chunk-id
        order, also at the cut.

        An exclusion is a MUST_NOT clause of the same query, so excluded chunks
        cost nothing: they are skipped while the engine walks the matches.

        tantivy breaks ties by its own document order, so hits beyond the cut
        are fetched with it: ``2 × limit + 1`` at first (a deeper top-k costs
        about the same, since the pruning threshold hardly moves), then twice as
        many each time the last one fetched still ties with the one at the cut,
        until the tie is whole; then the tie is ordered by chunk id and cut. A
        tie at the cut is common where notes repeat one another (at a million
        templated chunks, most queries had one), and fetching only
        ``limit + 1`` first made each of those a second full search.
        """
        query = self._any_of(phrases, searched=True)
        if query is None or limit <= 0:
            return []
        excluded = self._any_of(exclude, searched=False)
        if excluded is not None:
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query),
                                                 (tantivy.Occur.MustNot, excluded)])
        fetch = 2 * limit + 1
        with self._lock:
            self._ready()
            with self._tantivy("searching it"):
                searcher = self._searcher()
                while True:
                    hits = searcher.search(query, fetch, count=False).hits
                    if len(hits) < fetch or hits[-1][0] != hits[limit - 1][0]:
                        break
                    fetch *= 2
                ids = self._ids(searcher.fast_field_values(
                    "chunk_id", [address for _, address in hits]))
        ranked = sorted(((cid, float(score)) for (score, _), cid in zip(hits, ids, strict=True)),
                        key=lambda hit: (-hit[1], hit[0]))
        return ranked[:limit]

    def matching(self, terms: Sequence[str], among: Sequence[int] | None = None) -> set[int]:
        """Every chunk holding any term: a count, then exactly that many unscored hits.

        Both passes visit only the matching documents, so the cost follows the
        matching chunks, never the size of the index; with ``among`` the query
        is also restricted to those chunk ids, so it follows ``among``, and it is
        one pass: there cannot be more hits than ids asked about.
        """
        query = self._any_of(terms, searched=False)
        if query is None:
            return set()
        if among is not None:
            if not among:
                return set()
            # One term query per id, not a term-set query: at 1M chunks in 14 segments
            # the set cost 1.8 ms for 100 ids and 5.0 for 400, the terms 0.33 and 1.2.
            asked = tantivy.Query.boolean_query([
                (tantivy.Occur.Should, tantivy.Query.term_query(self._schema, "chunk_id", int(c)))
                for c in among])
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query),
                                                 (tantivy.Occur.Must, asked)])
        constant = tantivy.Query.const_score_query(query, 1.0)
        with self._lock:
            self._ready()
            with self._tantivy("matching in it"):
                searcher = self._searcher()
                total = len(among) if among is not None else self._count(searcher, constant)
                hits = searcher.search(constant, total, count=False).hits if total else []
                if among is not None and hits and len(hits) == total:
                    # Every id asked about matched, unless a chunk is in the index twice.
                    counted = self._count(searcher, constant)
                    if counted > total:
                        hits = searcher.search(constant, counted, count=False).hits
                ids = self._ids(searcher.fast_field_values(
                    "chunk_id", [address for _, address in hits]))
        return set(ids)

    @staticmethod
    def _count(searcher: tantivy.Searcher, query: tantivy.Query) -> int:
        return int(searcher.search(query, 1, count=True).count or 0)  # type: ignore[attr-defined]

    # --- query compilation ---------------------------------------------------------
    def _any_of(self, phrases: Sequence[str], *, searched: bool) -> tantivy.Query | None:
        """Chunks matching any phrase (SHOULD), or None when no phrase has a searchable piece.

        ``searched``: a search, where a one-word piece also matches the base form
        of an irregular past form; otherwise an exclusion (the words as written).
        """
        clauses = [q for q in (self._phrase(p, searched) for p in phrases) if q is not None]
        if not clauses:
            return None
        if searched and PARTS_WEIGHT > 0:
            clauses += [tantivy.Query.boost_query(self._in_order("parts", words), PARTS_WEIGHT)
                        for words in self._identifier_phrases(phrases)]
        if len(clauses) == 1:
            return clauses[0]
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in clauses])

    def _identifier_phrases(self, phrases: Sequence[str]) -> list[list[str]]:
        """What a search asks of ``parts``: two or more words in order, never one alone.

        A phrase that is itself an identifier (``hybridQuery``, ``_redirect_url``)
        asks for its parts; two neighbouring one-word phrases (``redirect``,
        ``url``) ask for the pair, which matches only inside one name. A lone
        word is not asked: on the evaluation matrix, every word of a question
        also matching inside names ranked worse (docs/evaluation.md).
        """
        words = [[] if CJK_RUN.search(p) else
                 [t for w in query_parts(p) for t in self._words.analyze(w)] for p in phrases]
        asked = [w for w in words if len(w) >= 2]
        asked += [a + b for a, b in zip(words[:-1], words[1:], strict=True)
                  if len(a) == 1 and len(b) == 1]
        unique: dict[tuple[str, ...], list[str]] = {tuple(w): w for w in asked}
        return list(unique.values())

    def _phrase(self, phrase: str, searched: bool) -> tantivy.Query | None:
        """Every piece of the phrase must match: words in order, CJK runs as substrings."""
        parts: list[tantivy.Query] = []
        for field, tokens in self._piece_terms(phrase):
            if field == "text" and len(tokens) == 1:
                parts.append(self._word(tokens[0], searched))
            elif field == "text":
                parts.append(self._in_order("text", tokens))
            elif field == "cjk1" or len(tokens) == 1:
                parts.append(tantivy.Query.term_query(self._schema, field, tokens[0]))
            else:
                parts.append(self._cjk_phrase(tokens))
        if not parts:
            return None
        if len(parts) == 1:
            return parts[0]
        return tantivy.Query.boolean_query([(tantivy.Occur.Must, q) for q in parts])

    def _piece_terms(self, phrase: str) -> Iterator[tuple[str, list[str]]]:
        """``(field, terms)`` for each piece of ``phrase`` that can match: the words of
        the text between CJK runs (``text``); a CJK run's bigrams (``cjk``), or the
        run itself when it is one character (``cjk1``)."""
        for cjk, piece in _pieces(phrase):
            if not cjk:
                words = self._words.analyze(piece)
                if words:
                    yield "text", words
                continue
            pairs = bigrams(piece)
            yield ("cjk", pairs) if pairs else ("cjk1", [piece])

    def most_matching(self, terms: Sequence[str]) -> int:
        """At most how many chunks :meth:`matching` can return for ``terms``, from the
        terms' document frequencies alone (a chunk holding a phrase holds each of
        its terms): a few dictionary lookups, whatever the matches."""
        bound = 0
        with self._lock:
            self._ready()
            with self._tantivy("reading term counts"):
                searcher = self._searcher()
                for phrase in terms:
                    fewest = [searcher.doc_freq(field, term)
                              for field, tokens in self._piece_terms(phrase) for term in tokens]
                    bound += min(fewest, default=0)
        return bound

    def _word(self, stem: str, searched: bool) -> tantivy.Query:
        """One word; in a search, an irregular past form also matches its base form."""
        query = tantivy.Query.term_query(self._schema, "text", stem)
        base = self._base_stems.get(stem) if searched else None
        if base is None:
            return query
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, query),
             (tantivy.Occur.Should, tantivy.Query.term_query(self._schema, "text", base))])

    def _cjk_phrase(self, pairs: list[str]) -> tantivy.Query:
        """A CJK run of three or more characters, as its bigrams at their positions."""
        # Every other pair, and the last, at their own positions, cover every
        # character: the same matches as all the pairs, with half the lists.
        steps = [*range(0, len(pairs), 2), *([len(pairs) - 1] if len(pairs) % 2 == 0 else [])]
        words: list[str | tuple[int, str]] = [(i, pairs[i]) for i in steps]
        return tantivy.Query.phrase_query(self._schema, "cjk", words)

    def _in_order(self, field: str, tokens: list[str]) -> tantivy.Query:
        """A phrase query: the tokens at consecutive positions."""
        words: list[str | tuple[int, str]] = list(tokens)
        return tantivy.Query.phrase_query(self._schema, field, words)

    # --- writes ----------------------------------------------------------------------
    def _writing(self) -> tantivy.IndexWriter:
        if self._writer is None:
            self._ready()  # a dangling .tantivy-writer.lock link: never written through
            try:
                self._writer = self._index.writer(heap_size=_WRITER_HEAP, num_threads=1)
            except ValueError as exc:
                if "LockBusy" not in str(exc) and "locked" not in str(exc).lower():
                    self._broken = f"opening a writer failed: {exc}"
                    raise self._damaged(self._broken) from exc
                raise GrooveError(
                    f"the full-text index {self.path} is locked by another writer ({exc}); "
                    "only one groove process may index at a time") from exc
            except BaseException as exc:
                if not is_panic(exc):
                    raise
                self._broken = f"tantivy panicked opening a writer: {exc}"
                raise self._damaged(self._broken) from None
        return self._writer

    def add(self, rows: Sequence[TextRow]) -> None:
        with self._lock:
            writer = self._writing()
            with self._tantivy("adding documents"):
                for row in rows:
                    writer.add_document(self._document(row))

    @staticmethod
    def _document(row: TextRow) -> tantivy.Document:
        doc = tantivy.Document()
        doc.add_integer("chunk_id", row.chunk_id)
        doc.add_integer("doc_id", row.doc_id)
        heading = row.heading or ""
        heading_parts = identifier_parts(heading)
        for parts in (heading_parts, heading_parts, identifier_parts(row.context)):
            for words in parts:
                doc.add_text("parts", words)
        for value in (heading, heading, row.context, row.content):
            doc.add_text("text", value)
            if value.isascii():
                continue  # no CJK run (the common case, checked in C)
            for run in CJK_RUN.findall(value):
                pairs = bigrams(run)
                if pairs:
                    doc.add_text("cjk", " ".join(pairs))
                doc.add_text("cjk1", " ".join(run))
        return doc

    def delete_document(self, doc_id: int) -> None:
        with self._lock:
            writer = self._writing()
            with self._tantivy("deleting a document"):
                writer.delete_documents_by_term("doc_id", int(doc_id))

    def delete_all(self) -> None:
        with self._lock:
            writer = self._writing()
            with self._tantivy("emptying it"):
                writer.delete_all_documents()

    def commit(self, stamp: Stamp) -> None:
        with self._lock:
            writer = self._writing()
            with self._tantivy("committing"):
                writer.delete_documents_by_term("chunk_id", _STAMP_CHUNK)
                doc = tantivy.Document()
                doc.add_integer("chunk_id", _STAMP_CHUNK)
                doc.add_text("stamp", stamp.encode())
                writer.add_document(doc)
                writer.commit()
                self._index.reload()  # this process searches what it just committed
            self._sizes = self._segment_sizes()

    def release_writer(self) -> None:
        with self._lock:
            writer, self._writer = self._writer, None
        if writer is None:
            return
        try:
            with self._tantivy("closing its writer"):
                writer.rollback()  # nothing uncommitted should remain; never publish half a batch
                writer.wait_merging_threads()
        except FullTextDamaged as exc:  # recorded: the next use rebuilds the folder
            log.warning("%s", exc)

    def close(self) -> None:
        self.release_writer()
