"""The two retrieval legs: dense (cosine over the resident matrix) and full-text BM25.

Both legs see the same allowed set — filters AND exclusions — before their
cut to N, so a restrictive filter still fills ``limit`` and an excluded term
can never come back through the other leg.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from groove.config import Config
from groove.embedders.base import Embedder
from groove.search.language import is_cjk, is_prose
from groove.search.query import ParsedQuery
from groove.search.vectors import VectorIndex
from groove.store.base import Store


@dataclass(frozen=True)
class Candidates:
    vector: list[tuple[int, float]]  # (chunk_id, cosine (+ cross-language offset)), best first
    fts: list[tuple[int, float]]  # (chunk_id, bm25 — lower is better), best first
    #: Candidates whose document is in the other script family than the question
    #: (search/language.py): the full-text leg could not have matched them.
    foreign: frozenset[int] = frozenset()
    #: Full-text candidates whose vector is still pending (an incomplete index):
    #: the vector leg could not have found them.
    vectorless: frozenset[int] = frozenset()
    #: The question's embedding (None when the model gave none), for the answerability lift.
    query_vector: np.ndarray | None = None
    #: Which resident rows this search may return (filters and exclusions), if known.
    allowed: np.ndarray | None = None


def candidate_count(limit: int) -> int:
    """N = max(50, limit × 5): each leg's cut, and the pool MMR and the reranker draw from."""
    return max(50, limit * 5)


def allowed_mask(store: Store, vectors: VectorIndex, base_mask: np.ndarray,
                 parsed: ParsedQuery) -> np.ndarray:
    """The filter mask minus every chunk whose heading or content holds an exclusion."""
    if not parsed.exclusions:
        return base_mask
    excluded = excluded_chunk_ids(store, parsed)
    if not excluded:
        return base_mask
    # Cost follows the excluded chunks (a lookup each), not the corpus.
    rows = vectors.positions(np.fromiter(excluded, dtype=np.int64, count=len(excluded)))
    allowed = base_mask.copy()
    allowed[rows[rows >= 0]] = False
    return allowed


def excluded_chunk_ids(store: Store, parsed: ParsedQuery) -> set[int]:
    """Every chunk holding an exclusion, found through the full-text index (no scan).

    One set removed from both legs, so an excluded chunk cannot come back
    through the vector leg.
    """
    return store.fulltext_matching(parsed.exclusions)


def vector_leg(query_vec: np.ndarray, vectors: VectorIndex, allowed: np.ndarray,
               n: int) -> list[tuple[int, float]]:
    return vectors.top_n(query_vec, n, allowed)


def bilingual_vector_leg(query_vec: np.ndarray, vectors: VectorIndex, allowed: np.ndarray,
                         n: int, *, query_cjk: bool, offset: float) -> list[tuple[int, float]]:
    """The vector leg with the model's language gap taken out (docs/search.md).

    The ordinary best ``n`` chunks are found first; every member written in
    the other script family than the question gets ``offset`` added to its
    cosine. The best ``n`` chunks of the other script family are then found on
    their own (so an other-language answer is a candidate even when dozens of
    same-language chunks outscore it), and each that reaches the ordinary
    pool's lowest score after the offset joins the pool. The pool's floor is
    therefore unchanged, and so is the normalised score of every same-script
    chunk below the top; the leg holds at most ``2n`` chunks. Ties are broken
    by chunk id, as in :meth:`VectorIndex.top_n`.
    """
    if offset <= 0.0:
        return vector_leg(query_vec, vectors, allowed, n)
    # One pass over the matrix serves both masks (VectorIndex.top_n_each).
    base, other_script = vectors.top_n_each(
        query_vec, n, (allowed, allowed & vectors.script_mask(not query_cjk)))
    if not base:
        return base
    floor = base[-1][1]
    ids = [chunk_id for chunk_id, _ in base]
    other = dict.fromkeys(c for c, same in zip(ids, vectors.in_script(ids, query_cjk), strict=True)
                          if not same)
    merged = {c: score + (offset if c in other else 0.0) for c, score in base}
    for chunk_id, score in other_script:
        if score + offset >= floor:
            merged[chunk_id] = score + offset
    return sorted(merged.items(), key=lambda item: (-item[1], item[0]))


def foreign_candidates(vectors: VectorIndex, legs: Sequence[Sequence[tuple[int, float]]],
                       query_cjk: bool) -> frozenset[int]:
    """The candidates of ``legs`` whose document is in the other script family."""
    ids = list(dict.fromkeys(chunk_id for leg in legs for chunk_id, _ in leg))
    if not ids:
        return frozenset()
    same = vectors.in_script(ids, query_cjk)
    return frozenset(c for c, is_same in zip(ids, same, strict=True) if not is_same)


#: The query embedding runs here while the calling thread does the full-text
#: work (exclusions, BM25); both release the GIL, so the two overlap.
#: The query path runs OpenMP on one thread, so it does not fight the
#: full-text work on the other core (index batches keep their own thread count).
def _single_threaded_openmp() -> None:
    # Another OpenMP runtime, or none: keep its default.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libgomp.so.1").omp_set_num_threads(1)


_EMBED_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="groove-query-embed",
                                 initializer=_single_threaded_openmp)


def fulltext_leg(store: Store, vectors: VectorIndex, parsed: ParsedQuery,
                 allowed: np.ndarray, n: int) -> list[tuple[int, float]]:
    """The best ``n`` allowed chunks by BM25 (score lower is better), best first.

    Filters are a mask the engine does not see, so it is asked for more than
    ``n`` hits — ``n`` divided by the share of allowed chunks, then four times
    as many each round — until ``n`` of them are allowed or the matches run
    out. The top ``n`` allowed among the first hits are the top ``n`` allowed
    overall, so this is exact; its cost follows the matches fetched, not the
    number of chunks the filter hides.
    """
    phrases = parsed.fulltext_phrases
    if not phrases or not len(allowed):
        return []
    share = np.count_nonzero(allowed) / len(allowed)
    if share <= 0.0:
        return []
    fetch = max(n, int(np.ceil(n / share)))
    while True:
        rows = store.fulltext_search(phrases, fetch)
        if not rows:
            return []
        pos = vectors.positions([chunk_id for chunk_id, _ in rows])
        keep = (pos >= 0) & allowed[np.maximum(pos, 0)]
        kept = [row for row, ok in zip(rows, keep.tolist(), strict=True) if ok]
        if len(kept) >= n or len(rows) < fetch or fetch >= len(allowed):
            return kept[:n]
        fetch *= 4


def gather(store: Store, embedder: Embedder, config: Config, vectors: VectorIndex,
           parsed: ParsedQuery, base_mask: np.ndarray, limit: int) -> Candidates:
    n = candidate_count(limit)
    query_vec = _EMBED_POOL.submit(embedder.embed_query, parsed.model_text)
    allowed = allowed_mask(store, vectors, base_mask, parsed)
    fts = fulltext_leg(store, vectors, parsed, allowed, n)
    fusion = config.search.fusion
    query_cjk = is_cjk(parsed.model_text)
    prose = is_prose(parsed.model_text)  # a term lookup gets no cross-language help
    qv = query_vec.result()
    vector = bilingual_vector_leg(qv, vectors, allowed, n, query_cjk=query_cjk,
                                  offset=fusion.cross_language_offset if prose else 0.0)
    foreign = (foreign_candidates(vectors, (vector, fts), query_cjk)
               if prose and fusion.cross_language_imputation > 0 else frozenset())
    return Candidates(vector=vector, fts=fts, foreign=foreign,
                      vectorless=vectorless_candidates(vectors, fts), query_vector=qv,
                      allowed=allowed)


def vectorless_candidates(vectors: VectorIndex, fts: Sequence[tuple[int, float]]
                          ) -> frozenset[int]:
    """The full-text candidates whose vector is still pending (none on a complete index)."""
    if not fts:
        return frozenset()
    pos = vectors.positions([chunk_id for chunk_id, _ in fts])
    pending = (pos >= 0) & ~vectors.embedded[np.maximum(pos, 0)]
    return frozenset(c for (c, _), p in zip(fts, pending.tolist(), strict=True) if p)
