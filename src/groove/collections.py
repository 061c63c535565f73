"""Collections: several knowledge bases served and searched together (docs/collections.md).

One ``groove.toml`` names several folders (``[collections.NAME]``, read by
:mod:`groove.config.collections`); :class:`Collections` holds one
:class:`~groove.kb.KnowledgeBase` per name and is the one place that knows
there are several. Every collection keeps its own index file, parsers,
exclusions, schema and model; collections that use the same model share one
loaded copy of it (:class:`EmbedderPool`), so a server with three collections
holds the model once.

A search runs the whole pipeline in each chosen collection with the same
request, then :func:`merge_answers` makes one ranking. The scores of two
collections are not comparable as they are: fusion normalises each leg over
its own candidate pool, so every collection's best hit scores near 1 whether
or not it answers the question. The merge therefore weighs each collection's
scores by how well that collection matches the question, measured on a scale
the collections share: the best cosine of its vector leg (the same model
embedded the question once for all of them). The collection with the best
cosine keeps its scores; another one's are multiplied by
``exp(-COSINE_SHARPNESS * (best_cosine - its_cosine))``, so a collection
0.05 below the best counts for about an eighth. Collections with different
models have no shared cosine scale; they are weighed by the lift of their best
match over their own cosine distribution instead (search/confidence.py,
defined to mean the same for any index and model; :data:`LIFT_SHARPNESS`).
Each collection's own order is kept (one positive weight per collection never
reorders its hits), and a collection searched alone gives exactly its own
answer. benchmarks/collections_merge.py measures the rule against the
alternatives (docs/collections.md, "How results are merged").
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from groove.config import Config
from groove.embedders.base import Embedder, WrappedEmbedder
from groove.errors import InvalidArgument
from groove.kb import KnowledgeBase
from groove.models import Hit, IndexState, SearchResponse
from groove.search.request import SearchRequest

#: How fast a collection's weight falls with its best cosine below the best collection's
#: (chosen with benchmarks/collections_merge.py; docs/collections.md gives the figures).
COSINE_SHARPNESS = 40.0
#: The same for the lift, when the collections' models differ (measured the same way).
LIFT_SHARPNESS = 2.0
#: What a merge weighs collections by: a name of a SearchResponse field.
Signal = Literal["top_cosine", "lift"]


class EmbedderPool:
    """One loaded model per distinct model setting, shared by the collections using it.

    The key is everything that decides what the model computes: its id, the
    engine that runs it, the cache it loads from and the remote service's
    settings. Loading happens on first use, under a lock, so two collections
    asking at once still load it once.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loaded: dict[str, Embedder] = {}

    @staticmethod
    def key(config: Config) -> str:
        """What makes two collections' models the same model (JSON text)."""
        return json.dumps({"model": config.model, "engine": config.embedding_engine,
                           "cache": str(config.model_cache_dir),
                           "embedder": config.embedder.model_dump(mode="json")}, sort_keys=True)

    def source(self, config: Config) -> Callable[[], Embedder]:
        """The loader a KnowledgeBase calls on first use of its model."""
        return lambda: self.get(config)

    def get(self, config: Config) -> Embedder:
        from groove.embedders import get_embedder

        key = self.key(config)
        with self._lock:
            if key not in self._loaded:
                self._loaded[key] = SharedModel(get_embedder(
                    config.model, cache_dir=config.model_cache_dir, settings=config.embedder,
                    engine=config.embedding_engine))
            return self._loaded[key]

    @property
    def loaded(self) -> int:
        """How many distinct models are in memory now."""
        return len(self._loaded)


class SharedModel(WrappedEmbedder):
    """One loaded model seen by several collections: a question is embedded once for all.

    A search over collections asks each collection's pipeline for the same
    question's vector, one after the other; the few most recent questions'
    vectors are kept (a copy is handed out, so no caller can change another's),
    so the second and third collections cost no model time. Everything else is
    the wrapped model's.
    """

    #: How many recent questions' vectors are kept (a search asks for one).
    RECENT = 8

    def __init__(self, model: Embedder) -> None:
        super().__init__(model)
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            known = self._recent.get(text)
            if known is not None:
                self._recent.move_to_end(text)
                return known.copy()
        vector = self.model.embed_query(text)
        with self._lock:
            self._recent[text] = vector.copy()
            while len(self._recent) > self.RECENT:
                self._recent.popitem(last=False)
        return vector


class Collections:
    """The served collections, by name, in the order the file names them."""

    def __init__(self, configs: Mapping[str, Config], *,
                 only: Sequence[str] | None = None,
                 embedders: EmbedderPool | None = None) -> None:
        """``only`` keeps the named collections (checked: an unknown name is refused)."""
        self.models = embedders or EmbedderPool()
        names = list(configs)
        chosen = check_names(only, names) if only else names
        self.configs = {name: configs[name] for name in chosen}
        self.kbs = {name: KnowledgeBase(config, embedder_source=self.models.source(config))
                    for name, config in self.configs.items()}

    @property
    def names(self) -> list[str]:
        return list(self.kbs)

    def __getitem__(self, name: str) -> KnowledgeBase:
        check_names([name], self.names)
        return self.kbs[name]

    def __iter__(self) -> Iterator[tuple[str, KnowledgeBase]]:
        return iter(self.kbs.items())

    def __len__(self) -> int:
        return len(self.kbs)

    def chosen(self, names: Sequence[str] | None) -> list[str]:
        """The collections a request names (all when it names none), in the file's order."""
        return check_names(names, self.names) if names else self.names

    def search(self, request: SearchRequest) -> SearchResponse:
        """The request in every chosen collection, merged into one ranking (module docstring)."""
        chosen = self.chosen(request.collection)
        one = request.replace(collection=None)
        answers = [(name, self.kbs[name].search(one, calibrate=True)) for name in chosen]
        return merge_answers(answers, one.limit, signal=self.signal(chosen))

    def signal(self, names: Sequence[str]) -> Signal:
        """The best cosine when these collections share a model, else the lift."""
        models = {str(self.configs[name].model) for name in names}
        return "top_cosine" if len(models) == 1 else "lift"

    def close(self) -> None:
        for kb in self.kbs.values():
            kb.close()


def check_names(names: Sequence[str] | None, known: Sequence[str]) -> list[str]:
    """``names`` in ``known``'s order; an unknown one is refused, naming the known ones."""
    wanted = list(names or [])
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise InvalidArgument(f"collection: {', '.join(repr(n) for n in unknown)} is not a "
                              f"collection here; accepted: {', '.join(known)}")
    return [n for n in known if n in wanted]


def collection_weights(lifts: Mapping[str, float | None], sharpness: float) -> dict[str, float]:
    """Each collection's weight in the merge: 1 for the best signal, less below it.

    A signal that was not measured (no vector for the question, nothing indexed)
    counts as the best: nothing is known against it, so its order stands.
    """
    finite = [v for v in lifts.values() if v is not None and math.isfinite(v)]
    if not finite:
        return dict.fromkeys(lifts, 1.0)
    best = max(finite)
    return {name: 1.0 if v is None or not math.isfinite(v)
            else math.exp(-sharpness * (best - v)) for name, v in lifts.items()}


@dataclass(frozen=True)
class _Ranked:
    key: float
    order: int
    rank: int
    hit: Hit


def merge_hits(parts: Sequence[tuple[str, Sequence[Hit]]], weights: Mapping[str, float],
               limit: int) -> list[Hit]:
    """One ranking of several collections' hits: by weighted score, best first.

    Ties go to the collection named first, then to the better rank in its own
    list, so each collection's own order is kept (its scores never increase down
    its list and its weight is one positive number). Every hit is labelled with
    its collection; its score becomes the weighted one and ``collection_score``
    keeps the one its collection gave.
    """
    pool = [_Ranked(hit.score * weights.get(name, 1.0), order, rank, hit)
            for order, (name, hits) in enumerate(parts) for rank, hit in enumerate(hits)]
    pool.sort(key=lambda r: (-r.key, r.order, r.rank))
    out = []
    for ranked in pool[:limit]:
        hit = ranked.hit
        name = parts[ranked.order][0]
        hit.collection, hit.collection_score, hit.score = name, hit.score, ranked.key
        out.append(hit)
    ceiling = math.inf  # a tie broken by order may sit a hair above: scores never rise
    for hit in out:
        hit.score = min(hit.score, ceiling)
        ceiling = hit.score
    return out


def merge_answers(answers: Sequence[tuple[str, SearchResponse]], limit: int,
                  signal: Signal = "top_cosine", sharpness: float | None = None
                  ) -> SearchResponse:
    """One answer from each collection's answer to the same request.

    The low_confidence flag and its reason are those of the collection with
    the best signal (the one that answers, if any does); the notes are each
    collection's, named; ``collections`` holds each one's index state.
    """
    if sharpness is None:
        sharpness = COSINE_SHARPNESS if signal == "top_cosine" else LIFT_SHARPNESS
    weights = collection_weights({name: getattr(a, signal) for name, a in answers}, sharpness)
    hits = merge_hits([(name, a.results) for name, a in answers], weights, limit)
    leader = max(answers, key=lambda pair: (weights[pair[0]],
                                            -[n for n, _ in answers].index(pair[0])))[1]
    states: dict[str, IndexState] = {name: a.index for name, a in answers if a.index is not None}
    notes = [f"{name}: {note}" for name, a in answers for note in a.notes]
    return SearchResponse(results=hits, low_confidence=leader.low_confidence,
                          filter_applied=leader.filter_applied,
                          low_confidence_reason=leader.low_confidence_reason,
                          low_confidence_note=leader.low_confidence_note,
                          notes=notes, lift=leader.lift, top_cosine=leader.top_cosine,
                          collections=states)


def status_of(collections: Collections, **options: Any) -> dict[str, Any]:
    """``groove status`` for every collection: ``{name: status or {"error": ...}}``."""
    from groove.errors import GrooveError

    out: dict[str, Any] = {}
    for name, kb in collections:
        try:
            out[name] = kb.status(**options)
        except GrooveError as exc:
            out[name] = {"kb_path": str(kb.kb_path), "index_path": str(kb.db_path),
                         "error": str(exc)}
    return out
