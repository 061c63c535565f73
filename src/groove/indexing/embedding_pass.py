"""The embedding pass: fill in the vectors of every pending chunk, document by document.

A build first writes each document's rows and full-text rows without vectors
(searchable lexically at once), then this pass embeds what is pending. It is
resumable by construction: "pending" is simply "a chunk without an embedding
row", so after a crash or Ctrl-C the next run starts where this one stopped.

The rules:

* chunks are taken a small window of whole documents at a time (about 1/32
  of the pass, :func:`window_tokens_for`), sorted by token length and cut into
  batches of similar length (:func:`make_batches`), so short and long texts
  are not batched together, yet documents complete steadily through the run
  and an interrupt keeps all but the window in flight (a sort across the
  whole corpus completed no document before the end);
* batches go through an :class:`EmbeddingExecutor`; the default
  :class:`LocalExecutor` embeds in a worker thread, so the calling thread
  reads the next window and writes finished documents while the model works;
* a document's vectors are written in one transaction once *all* its chunks
  came back, so a document is either fully in the vector leg or not at all;
* progress is counted in model tokens, which is what the embedder's time is
  proportional to (files or chunks are not);
* a chunk the rows pass stored without its token count (it fit the window
  by a bound, groove.indexing.tokens) is counted here and its count written
  with its vector, so a complete index holds every exact count.

The executor seam (for other executors: remote actors, a remote embedder)
is :class:`EmbeddingExecutor`: one method, :meth:`EmbeddingExecutor.map`.
docs/index-lifecycle.md describes the whole build.
"""

from __future__ import annotations

import logging
import math
import os
import queue
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field

import numpy as np

from groove.embedders.base import Embedder
from groove.errors import InputRejected
from groove.models import passage_text, passage_tokens
from groove.store.base import PendingChunk, Store

log = logging.getLogger("groove.indexing.embedding_pass")

#: Pending chunks read from the store at a time (whole documents).
PAGE_CHUNKS = 256
#: A window (whole documents, sorted by length into batches) is about this
#: share of the pass (see :func:`window_tokens_for`) ...
WINDOWS_PER_PASS = 32
#: ... but never fewer tokens than this (enough texts per batch to keep every
#: core busy) ...
WINDOW_TOKENS_MIN = 4096
#: ... nor more than this.
WINDOW_TOKENS_MAX = 16384
#: The first window (at least one whole document) is cut into batches of at
#: most this many tokens, so the first batch (and with it the rate and the ETA
#: a person is waiting for) comes back within seconds even when the first
#: document is long.
WINDOW_TOKENS_FIRST = 1024
#: Upper bound on the model tokens of one batch ...
BATCH_TOKENS = 8192
#: ... and on its number of texts.
BATCH_TEXTS = 64


@dataclass(frozen=True)
class EmbedItem:
    """One text to embed, and where its vector goes."""

    chunk_id: int
    doc_id: int
    text: str
    tokens: int
    #: The content's exact count when the stored row lacked it (written with the vector).
    content_tokens: int | None = None


@dataclass(frozen=True)
class EmbedBatch:
    """Texts of similar token length embedded in one call."""

    items: tuple[EmbedItem, ...]

    @property
    def texts(self) -> list[str]:
        return [item.text for item in self.items]

    @property
    def tokens(self) -> int:
        return sum(item.tokens for item in self.items)


class EmbeddingExecutor(ABC):
    """Where batches are embedded. Implementations must keep this contract:

    * :meth:`map` pulls ``batches`` lazily and keeps only a bounded number in
      flight (memory stays flat on a 200k-chunk build);
    * it yields ``(batch, vectors)`` for every batch exactly once, in any
      order, ``vectors`` being ``float32[len(batch.items), dim]``, rows
      L2-normalised, as :meth:`groove.embedders.base.Embedder.embed_passages`
      returns them for ``batch.texts``;
    * an error embedding a batch is raised from the generator (the pass
      stops; what was written stays, the rest stays pending), except an input
      the embedder rejects (:class:`~groove.errors.InputRejected`), whose row
      is NaN: the pass then writes nothing of that document and goes on;
    * closing the generator early (Ctrl-C, an error in the caller) abandons
      the batches in flight without waiting for them to finish.
    """

    @abstractmethod
    def map(self, batches: Iterable[EmbedBatch]) -> Iterator[tuple[EmbedBatch, np.ndarray]]:
        """Embed every batch; yield each with its vectors as it completes."""


#: How much nicer (in ``nice`` steps) the embedding worker thread runs than the process.
WORKER_NICENESS = 5


def lower_this_threads_priority() -> None:
    """Let the calling thread (and the threads it starts) yield the cores to its process.

    Embedding is background work: beside a server's searches (and a watcher's
    rows, which make each changed document findable by full text) those should
    get the cores first and the embedding the rest. On Linux a thread has its
    own nice value, and threads an engine starts from it (onnxruntime's pool)
    inherit it; elsewhere the value belongs to the whole process, so nothing is
    changed there.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + WORKER_NICENESS)
    except OSError:  # not allowed here (a sandbox): run at the process's priority
        pass


def embed_one_by_one(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """A batch the embedder rejected, again one text at a time: a text rejected on its own
    gets a row of NaN, which the pass reads as "this document was rejected"."""
    rows = []
    for text in texts:
        try:
            rows.append(embedder.embed_passages([text])[0])
        except InputRejected:
            rows.append(np.full(embedder.dim, np.nan, dtype=np.float32))
    return np.vstack(rows) if rows else np.zeros((0, embedder.dim), dtype=np.float32)


class LocalExecutor(EmbeddingExecutor):
    """In-process: one daemon worker thread runs the embedder, ``in_flight`` batches ahead.

    The engines release the GIL while they compute, so the caller's SQLite
    reads and writes overlap with the model instead of idling it.
    """

    def __init__(self, embedder: Embedder, *, in_flight: int = 2) -> None:
        self.embedder = embedder
        self.in_flight = max(1, in_flight)

    def map(self, batches: Iterable[EmbedBatch]) -> Iterator[tuple[EmbedBatch, np.ndarray]]:
        todo: queue.Queue[EmbedBatch | None] = queue.Queue()
        done: queue.Queue[tuple[EmbedBatch, np.ndarray | BaseException]] = queue.Queue()
        stop = threading.Event()

        def work() -> None:
            lower_this_threads_priority()
            while not stop.is_set():
                batch = todo.get()
                if batch is None:
                    return
                try:
                    try:
                        matrix = self.embedder.embed_passages(batch.texts)
                    except InputRejected:
                        matrix = embed_one_by_one(self.embedder, batch.texts)
                    done.put((batch, matrix))
                except BaseException as exc:  # handed to the caller, who re-raises
                    done.put((batch, exc))
                    return

        worker = threading.Thread(target=work, name="groove-embed", daemon=True)
        worker.start()
        source = iter(batches)
        pending = 0
        try:
            while True:
                while pending < self.in_flight:
                    batch = next(source, None)
                    if batch is None:
                        break
                    todo.put(batch)
                    pending += 1
                if pending == 0:
                    return
                finished, result = done.get()
                pending -= 1
                if isinstance(result, BaseException):
                    raise result
                yield finished, result
        finally:
            stop.set()
            todo.put(None)


def make_batches(items: Iterable[EmbedItem], *, max_tokens: int = BATCH_TOKENS,
                 max_texts: int = BATCH_TEXTS) -> list[EmbedBatch]:
    """Items sorted by token length, packed into batches under both limits.

    Every item lands in exactly one batch; an item longer than ``max_tokens``
    gets a batch of its own.
    """
    batches: list[EmbedBatch] = []
    current: list[EmbedItem] = []
    size = 0
    for item in sorted(items, key=lambda i: (i.tokens, i.chunk_id)):
        if current and (size + item.tokens > max_tokens or len(current) >= max_texts):
            batches.append(EmbedBatch(tuple(current)))
            current, size = [], 0
        current.append(item)
        size += item.tokens
    if current:
        batches.append(EmbedBatch(tuple(current)))
    return batches


#: The ETA's point rate is measured over this many of the latest batches (the whole
#: pass's average lags: batches go shortest texts first, and a longer text embeds fewer
#: tokens per second, so the rate keeps falling as the pass goes on).
RATE_WINDOW_BATCHES = 8
#: Batches needed before the rate's trend is extrapolated.
TREND_MIN_BATCHES = 4
#: The extrapolated rate never falls below this share of the recent one.
TREND_FLOOR = 0.25
#: Two ends within this fraction of each other: one ETA, not a range.
RANGE_MIN_SPREAD = 0.05


@dataclass
class EmbedProgress:
    """Totals of one pass (tokens are what the ETA is computed from).

    The ETA is a range over the tokens left: one end at the rate of the latest
    batches (:data:`RATE_WINDOW_BATCHES`), the other following the rate's
    trend over the pass so far (a straight line through each batch's rate
    against its position in tokens, extrapolated to the end of the pass).
    While the rate is steady both ends agree and one ETA is shown.
    """

    documents_total: int = 0
    tokens_total: int = 0
    documents_done: int = 0
    tokens_done: int = 0
    chunks_done: int = 0
    #: Documents whose input the embedder rejected: their chunks stay pending
    #: (searchable by full text), and a later run sends them again.
    documents_rejected: int = 0
    elapsed_s: float = 0.0
    started: float = field(default_factory=time.perf_counter)
    #: (tokens, seconds) of every batch, in order, for :attr:`recent_rate` and the trend.
    batches: list[tuple[int, float]] = field(default_factory=list, repr=False)

    def batch_done(self, tokens: int, now: float | None = None) -> None:
        """A batch of ``tokens`` finished at ``now`` (``perf_counter``; default: now)."""
        now = time.perf_counter() if now is None else now
        took = now - self.started - self.elapsed_s
        self.batches.append((tokens, max(took, 1e-6)))
        self.tokens_done += tokens
        self.elapsed_s = now - self.started

    @property
    def tokens_per_s(self) -> float:
        """The whole pass's average rate."""
        return self.tokens_done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def recent_rate(self) -> float:
        """The rate of the latest batches (the average before any batch was recorded)."""
        recent = self.batches[-RATE_WINDOW_BATCHES:]
        seconds = sum(took for _, took in recent)
        if not recent or seconds <= 0:
            return self.tokens_per_s
        return sum(tokens for tokens, _ in recent) / seconds

    @property
    def eta_s(self) -> float | None:
        """Tokens left over the recent rate."""
        rate = self.recent_rate
        return (self.tokens_total - self.tokens_done) / rate if rate > 0 else None

    @property
    def eta_range_s(self) -> tuple[float, float] | None:
        """(soonest, latest); equal (one ETA) while the rate is steady; None before a batch."""
        point = self.eta_s
        if point is None:
            return None
        trend = self._trend_eta()
        if trend is None or abs(trend - point) <= RANGE_MIN_SPREAD * max(point, 1e-9):
            return point, point
        return min(point, trend), max(point, trend)

    def _trend_eta(self) -> float | None:
        """Seconds for the tokens left if the rate keeps changing as it has: the time
        integral of 1 / (a + b x) from here to the end, with the rate floored."""
        if len(self.batches) < TREND_MIN_BATCHES:
            return None
        xs, ys, at = [], [], 0
        for tokens, took in self.batches:
            xs.append(at + tokens / 2)
            ys.append(tokens / took)
            at += tokens
        mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
        spread = sum((x - mean_x) ** 2 for x in xs)
        if spread <= 0:
            return None
        slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread
        left = self.tokens_total - self.tokens_done
        now_rate = self.recent_rate
        end_rate = max(now_rate + slope * left, TREND_FLOOR * now_rate)
        if now_rate <= 0 or left <= 0:
            return None
        if abs(end_rate - now_rate) < 1e-9 * now_rate:
            return left / now_rate
        # the rate moves linearly from now_rate to end_rate over ``left`` tokens
        return left * math.log(end_rate / now_rate) / (end_rate - now_rate)


ProgressCallback = Callable[[EmbedProgress], None]


def window_tokens_for(total_tokens: int) -> int:
    """The token budget of one window for a pass of ``total_tokens``.

    A window's documents complete only once all of its batches are back, so
    an interrupted pass loses at most the window in flight: a window of at
    most 1/:data:`WINDOWS_PER_PASS` of the pass (between the floor and the
    ceiling) keeps documents completing steadily through the run.
    """
    return max(WINDOW_TOKENS_MIN, min(WINDOW_TOKENS_MAX, total_tokens // WINDOWS_PER_PASS))


def run_embedding_pass(store: Store, executor: EmbeddingExecutor, *,
                       count_tokens: Callable[[str], int] | None = None,
                       on_progress: ProgressCallback | None = None,
                       on_start: ProgressCallback | None = None,
                       window_tokens: int | None = None,
                       write_lock: AbstractContextManager | None = None,
                       count_missing: Callable[[str], int] | None = None) -> EmbedProgress:
    """Embed every pending chunk; return the totals.

    ``count_tokens`` (the embedder's tokenizer) sizes batches and progress;
    without it (the indexer's choice: tokenizing again costs as much as a
    tenth of the embedding) the count stored at chunking time plus a
    breadcrumb estimate of four characters per token is used.
    ``count_missing`` (the indexer's tokenizer) counts the content of every
    chunk stored without a count; the count is written in the transaction
    that writes the chunk's document's vectors.
    ``window_tokens`` overrides :func:`window_tokens_for`. ``write_lock`` (a
    reusable lock) is held around each document's write, as for the rest of
    the indexer.

    Windows are read ahead of the model (the executor pulls the next window's
    batches while the current ones are embedded), so the model never waits
    for a window boundary. Chunks written after the pass passed their
    document stay pending for the next run.
    """
    progress = EmbedProgress()
    progress.documents_total, progress.tokens_total = store.pending_token_estimate()
    if on_start is not None:
        on_start(progress)
    if progress.documents_total == 0:
        return progress
    lock = write_lock or nullcontext()
    feed = _WindowFeed(store, count_tokens, window_tokens or window_tokens_for(progress.tokens_total),
                       count_missing)
    vectors: dict[int, dict[int, np.ndarray]] = {}
    counts: dict[int, dict[int, int]] = {}
    rejected: set[int] = set()
    for batch, matrix in executor.map(feed.batches()):
        if matrix.shape[0] != len(batch.items):
            raise ValueError(f"embedder returned {matrix.shape[0]} vectors for {len(batch.items)} texts")
        for item, vector in zip(batch.items, matrix, strict=True):
            if np.isnan(vector).any():
                rejected.add(item.doc_id)
            vectors.setdefault(item.doc_id, {})[item.chunk_id] = vector
            if item.content_tokens is not None:
                counts.setdefault(item.doc_id, {})[item.chunk_id] = item.content_tokens
            feed.waiting[item.doc_id] -= 1
            if feed.waiting[item.doc_id] == 0:
                del feed.waiting[item.doc_id]
                if item.doc_id in rejected:
                    vectors.pop(item.doc_id)
                    counts.pop(item.doc_id, None)
                    progress.documents_rejected += 1
                    log.warning("%s: the embedding endpoint rejected its input; skipped: its "
                                "text stays searchable by full text and the next run sends it "
                                "again", store.document_path(item.doc_id) or item.doc_id)
                    continue
                with lock:
                    store.write_vectors(vectors.pop(item.doc_id), counts.pop(item.doc_id, None))
                progress.documents_done += 1
        progress.batch_done(batch.tokens)
        progress.chunks_done += len(batch.items)
        if on_progress is not None:
            on_progress(progress)
    progress.tokens_total = max(progress.tokens_total, progress.tokens_done)
    progress.elapsed_s = time.perf_counter() - progress.started
    return progress


def _item(chunk: PendingChunk, count_tokens: Callable[[str], int] | None,
          count_missing: Callable[[str], int] | None) -> EmbedItem:
    text = passage_text(chunk.context, chunk.content)
    missing = None
    if chunk.token_count is None and count_missing is not None:
        missing = count_missing(chunk.content)
    if count_tokens is not None:
        tokens = count_tokens(text)
    else:
        tokens = passage_tokens(chunk.token_count or missing, chunk.content, chunk.context)
    return EmbedItem(chunk.chunk_id, chunk.doc_id, text, max(1, tokens), missing)


class _WindowFeed:
    """Pending chunks, read forward by document id, cut into windows of whole documents.

    ``waiting`` counts, per document handed out, the chunks whose vectors
    have not come back yet; the pass writes a document when it reaches zero.
    """

    def __init__(self, store: Store, count_tokens: Callable[[str], int] | None,
                 window_tokens: int, count_missing: Callable[[str], int] | None = None) -> None:
        self.store = store
        self.count_tokens = count_tokens
        self.count_missing = count_missing
        self.window_tokens = max(1, window_tokens)
        self.waiting: dict[int, int] = {}

    def batches(self) -> Iterator[EmbedBatch]:
        window: list[EmbedItem] = []
        size = 0
        first = True
        for document in self._documents():
            window += document
            size += sum(item.tokens for item in document)
            if size >= (min(self.window_tokens, WINDOW_TOKENS_FIRST) if first else self.window_tokens):
                yield from self._release(window, first=first)
                window, size, first = [], 0, False
        if window:
            yield from self._release(window, first=first)

    def _release(self, window: list[EmbedItem], *, first: bool) -> list[EmbedBatch]:
        """The window's batches; the first window's are small, so the first rate comes soon."""
        for item in window:
            self.waiting[item.doc_id] = self.waiting.get(item.doc_id, 0) + 1
        return make_batches(window, max_tokens=WINDOW_TOKENS_FIRST) if first else make_batches(window)

    def _documents(self) -> Iterator[list[EmbedItem]]:
        """Each pending document's items, lowest document id first, read a page at a time."""
        after: int | None = None
        while True:
            page = self.store.pending_chunks(PAGE_CHUNKS, after_doc=after)
            if not page:
                return
            if after is not None and page[0].doc_id <= after:  # the store ignored the cursor
                raise RuntimeError(f"pending chunks of document {page[0].doc_id} were read twice")
            current: list[EmbedItem] = []
            for chunk in page:
                if current and chunk.doc_id != current[0].doc_id:
                    yield current
                    current = []
                current.append(_item(chunk, self.count_tokens, self.count_missing))
            yield current
            after = page[-1].doc_id
