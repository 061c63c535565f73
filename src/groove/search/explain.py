"""How the ranking reached each hit, for ``explain`` (docs/search.md, 'Explain').

A :class:`Trace` is made only when a request asks for it; the pipeline then
hands it the ranking after each stage (:meth:`Trace.record`). Without one,
the pipeline's recorder is :func:`untraced`, which returns its argument: the
cost of an unexplained search is one function call per stage.

Per hit, the explanation holds each leg's own score and rank (1-based; null
when the leg did not find it), the fusion (method, the share each leg gave to
the fused score — they add up to it exactly, as :func:`groove.search.fusion.fuse`
adds them — and the rank after fusion), then every later stage that moved the
hit, as ``{stage, from, to}`` ranks (and the stage's own score where it sets
one, the reranker's), and the final rank and score. Read in order, the steps
lead from the fusion rank to the final one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from groove.search.candidates import Candidates
from groove.search.fusion import fusion_parts
from groove.search.stages import Stages

Ranked = list[tuple[int, float]]
#: The pipeline's recorder: ``record("stage", ranked)`` returns ``ranked``.
Recorder = Callable[[str, Ranked], Ranked]

#: Stages that set a score of their own (the explanation shows it).
SCORING_STAGES = frozenset({"rerank"})


def untraced(stage: str, ranked: Ranked) -> Ranked:
    """The recorder of a search nobody asked to explain: nothing is kept."""
    return ranked


def _ranks(ranked: Ranked) -> dict[int, tuple[int, float]]:
    return {chunk_id: (rank, score) for rank, (chunk_id, score) in enumerate(ranked, 1)}


class Trace:
    """The rankings of one search, stage by stage."""

    def __init__(self, candidates: Candidates, stages: Stages, imputation: float) -> None:
        self.vector = _ranks(candidates.vector)
        self.fulltext = _ranks(candidates.fts)
        self.foreign = candidates.foreign
        self.vectorless = candidates.vectorless
        self.method = stages.fusion_method
        self.parts = fusion_parts(candidates.vector, candidates.fts, method=stages.fusion_method,
                                  rrf_k=stages.rrf_k, vector_weight=stages.vector_weight,
                                  foreign=candidates.foreign, imputation=imputation,
                                  vectorless=candidates.vectorless)
        self.settings: dict[str, float] = (
            {"rrf_k": stages.rrf_k} if stages.fusion_method == "rrf"
            else {"vector_weight": stages.vector_weight})
        self.steps: list[tuple[str, dict[int, tuple[int, float]]]] = []

    def record(self, stage: str, ranked: Ranked) -> Ranked:
        """Keep the ranking after ``stage`` (the first recorded one is the fusion)."""
        self.steps.append((stage, _ranks(ranked)))
        return ranked

    def explain(self, chunk_id: int, rank: int, score: float,
                raw_score: float | None) -> dict[str, Any]:
        """The explanation of the hit of ``chunk_id``, shown at ``rank`` with ``score``."""
        vector, fulltext = self.vector.get(chunk_id), self.fulltext.get(chunk_id)
        fused = self.steps[0][1].get(chunk_id) if self.steps else None
        parts = self.parts.get(chunk_id, (0.0, 0.0))
        fusion: dict[str, Any] = {
            "method": self.method, **self.settings,
            "rank": fused[0] if fused else None, "score": fused[1] if fused else None,
            "vector_part": parts[0], "fulltext_part": parts[1],
        }
        if chunk_id in self.foreign and fulltext is None:
            fusion["imputed"] = ("fulltext: the document is in the other script family, "
                                 "so its vector rank stands in for the full-text leg")
        elif chunk_id in self.vectorless and vector is None:
            fusion["imputed"] = ("vector: its vector is still pending, so its full-text rank "
                                 "stands in for the vector leg")
        moves: list[dict[str, Any]] = []
        before = fused
        for stage, ranking in self.steps[1:]:
            after = ranking.get(chunk_id)
            if after is None or before is None:
                before = after
                continue
            if after[0] != before[0] or (stage in SCORING_STAGES and after[1] != before[1]):
                move: dict[str, Any] = {"stage": stage, "from": before[0], "to": after[0]}
                if stage in SCORING_STAGES:
                    move["score"] = after[1]
                moves.append(move)
            before = after
        if before is not None and before[0] != rank:  # a chunk above it was deleted meanwhile
            moves.append({"stage": "deleted above", "from": before[0], "to": rank})
        out: dict[str, Any] = {
            "vector": None if vector is None else {"rank": vector[0], "score": vector[1]},
            "fulltext": None if fulltext is None else {"rank": fulltext[0], "score": fulltext[1]},
            "fusion": fusion,
            "steps": moves,
            "final": {"rank": rank, "score": score},
        }
        if raw_score is not None:
            out["final"]["raw_score"] = raw_score
        return out
