"""Fusion of the two legs: Reciprocal Rank Fusion or a convex combination (docs/search.md).

RRF (SPEC §5) looks at ranks only: ``Σ 1 / (rrf_k + rank + 1)``. Its scores
are nearly flat by construction, and it ignores how far apart two
candidates are within a leg.

The convex combination (Bruch, Gai & Ingber 2023) looks at scores::

    fused(c) = w · vec(c) + (1 − w) · fts(c)

with ``w`` = ``[search.fusion] vector_weight`` and each leg normalised over
its own candidate pool:

* ``vec(c) = (cos(c) − cos_min) / (cos_max − cos_min)``: min-max over the
  vector pool. Every chunk has a cosine, and the pool's minimum is the best
  score a chunk outside the pool could have, so it maps to 0.
* ``fts(c) = bm25(c) / bm25_best``: FTS5's bm25 is ≤ 0 and a chunk that does
  not match scores 0, so 0 is the leg's theoretical minimum (the "TM2C2"
  normalisation of the paper). A chunk outside the FTS pool gets 0.

Language-aware fusion (``foreign``, docs/search.md): a chunk whose document
is written in the other script family than the question (search/language.py)
could not have matched the full-text leg, so its missing full-text score is
*imputed* instead of counting as 0: convex fusion uses
``max(fts(c), g · vec(c)³)`` for it (``g`` = ``[search.fusion]
cross_language_imputation``), RRF counts its vector rank for both legs. The
cube keeps the stand-in for chunks near the top of the vector pool: a
mid-pool other-language chunk (vec 0.5) gets an eighth of what the best one
gets, so it does not crowd out same-language answers that really match.
A real full-text match (a shared code such as ``PG-E311``) still counts when it
is the larger. Same-script chunks are untouched: for them a missing match is
evidence.

Fusion during a build (``vectorless``, docs/index-lifecycle.md): a chunk whose
vector is still pending could not have been found by the vector leg, so its
missing vector score is imputed from its full-text score ("full text where
vectors are missing"): convex fusion uses ``max(vec(c), fts(c))`` for it, RRF
counts its full-text rank for the vector leg too. Without this, the few
documents already embedded outranked a better full-text match in the rest of
the folder. On a complete index the set is empty and nothing changes.

Both stay defined for one-hit and tied legs: when a leg's pool has one
distinct score (one hit, all tied, or a best bm25 of 0) every member of the
pool gets 1.0. A chunk in only one leg gets 0 from the other. Equal fused
scores are ordered by chunk id, as in RRF.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

Leg = Sequence[tuple[int, float]]

#: The imputed full-text score of an other-script chunk is ``g · vec ** IMPUTATION_POWER``.
IMPUTATION_POWER = 3


def reciprocal_rank_fusion(legs: Sequence[Leg], rrf_k: float,
                           imputed: Collection[int] = (),
                           vectorless: Collection[int] = ()) -> list[tuple[int, float]]:
    """``[(chunk_id, fused)]`` best first; each leg adds ``1 / (rrf_k + rank + 1)``.

    Ranks count from 0. Equal fused scores are ordered by chunk id, so the
    ranking never depends on dict or set iteration order. A chunk of
    ``imputed`` missing from a leg is counted in it at its rank in the first
    leg (the vector leg) that has it; a chunk of ``vectorless`` is counted in
    the first leg at its rank in the second (the full-text leg).
    """
    return best_first({c: sum(parts) for c, parts in rrf_parts(legs, rrf_k, imputed,
                                                               vectorless).items()})


def rrf_parts(legs: Sequence[Leg], rrf_k: float, imputed: Collection[int] = (),
              vectorless: Collection[int] = ()) -> dict[int, list[float]]:
    """Each chunk's share of its RRF score from each leg (summed in leg order: the score).

    An imputed chunk's stand-in for the legs it is missing from is written
    into the first of them, a vectorless chunk's into the first leg.
    """
    parts: dict[int, list[float]] = {}
    for i, leg in enumerate(legs):
        for rank, (chunk_id, _score) in enumerate(leg):
            parts.setdefault(chunk_id, [0.0] * len(legs))[i] = 1.0 / (rrf_k + rank + 1)
    if imputed and legs:
        members = [{c for c, _ in leg} for leg in legs]
        for rank, (chunk_id, _score) in enumerate(legs[0]):
            if chunk_id in imputed:
                missing = [i for i, m in enumerate(members[1:], 1) if chunk_id not in m]
                if missing:
                    parts[chunk_id][missing[0]] += len(missing) / (rrf_k + rank + 1)
    if vectorless and len(legs) > 1:
        first = {c for c, _ in legs[0]}
        for rank, (chunk_id, _score) in enumerate(legs[1]):
            if chunk_id in vectorless and chunk_id not in first:
                parts[chunk_id][0] += 1.0 / (rrf_k + rank + 1)
    return parts


def normalise_vector_leg(leg: Leg) -> dict[int, float]:
    """Min-max of the cosines over the pool; a single distinct score maps to 1.0."""
    if not leg:
        return {}
    scores = [s for _, s in leg]
    low, high = min(scores), max(scores)
    if high - low <= 0.0:
        return {c: 1.0 for c, _ in leg}
    return {c: (s - low) / (high - low) for c, s in leg}


def normalise_fts_leg(leg: Leg) -> dict[int, float]:
    """bm25 over the best bm25 (theoretical minimum 0); a best of 0 maps everyone to 1.0."""
    if not leg:
        return {}
    best = min(s for _, s in leg)  # bm25: lower is better, all ≤ 0
    if best >= 0.0:
        return {c: 1.0 for c, _ in leg}
    return {c: min(1.0, max(0.0, s / best)) for c, s in leg}


def convex_fusion(vector: Leg, fts: Leg, vector_weight: float,
                  foreign: Collection[int] = (), imputation: float = 1.0,
                  vectorless: Collection[int] = ()) -> list[tuple[int, float]]:
    """``[(chunk_id, w·vec + (1 − w)·fts)]`` best first, legs normalised as above.

    For a chunk of ``foreign`` the full-text term is ``max(fts, imputation · vec³)``;
    for a chunk of ``vectorless`` the vector term is ``max(vec, fts)``.
    """
    return best_first({c: v + f for c, (v, f) in convex_parts(
        vector, fts, vector_weight, foreign, imputation, vectorless).items()})


def convex_parts(vector: Leg, fts: Leg, vector_weight: float,
                 foreign: Collection[int] = (), imputation: float = 1.0,
                 vectorless: Collection[int] = ()) -> dict[int, tuple[float, float]]:
    """Each chunk's ``(w·vec, (1 − w)·fts)``: the two terms of its convex score."""
    vec = normalise_vector_leg(vector)
    lex = normalise_fts_leg(fts)
    parts = {}
    for c in vec.keys() | lex.keys():
        v, f = vec.get(c, 0.0), lex.get(c, 0.0)
        if c in foreign:
            f = max(f, imputation * v ** IMPUTATION_POWER)
        if c in vectorless:
            v = max(v, f)
        parts[c] = (vector_weight * v, (1.0 - vector_weight) * f)
    return parts


def fuse(vector: Leg, fts: Leg, *, method: str, rrf_k: float, vector_weight: float,
         foreign: Collection[int] = (), imputation: float = 1.0,
         vectorless: Collection[int] = ()) -> list[tuple[int, float]]:
    """The fused ranking of the configured ``method`` ("rrf" or "convex")."""
    if method == "convex":
        return convex_fusion(vector, fts, vector_weight, foreign, imputation, vectorless)
    return reciprocal_rank_fusion([vector, fts], rrf_k, foreign, vectorless)


def fusion_parts(vector: Leg, fts: Leg, *, method: str, rrf_k: float, vector_weight: float,
                 foreign: Collection[int] = (), imputation: float = 1.0,
                 vectorless: Collection[int] = ()) -> dict[int, tuple[float, float]]:
    """Each candidate's (vector leg, full-text leg) share of the score :func:`fuse` gives it
    (their sum, in this order): what ``explain`` shows."""
    if method == "convex":
        return convex_parts(vector, fts, vector_weight, foreign, imputation, vectorless)
    return {c: (p[0], p[1]) for c, p in rrf_parts([vector, fts], rrf_k, foreign,
                                                  vectorless).items()}


def best_first(scores: Mapping[int, float] | Iterable[tuple[int, float]]
               ) -> list[tuple[int, float]]:
    """``[(chunk_id, score)]`` highest score first, equal scores by chunk id: every
    ranking a search stage hands on is in this order, so none depends on dict or
    set iteration order."""
    items = scores.items() if isinstance(scores, Mapping) else scores
    return sorted(items, key=lambda item: (-item[1], item[0]))
