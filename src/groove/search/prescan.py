"""The exact scan's shortlist: one byte per dimension read first, full vectors only for rows that can still win.

An exact scan reads every resident vector (77 MB at 50k float32 chunks), and on
a small machine that read, not the arithmetic, is its cost. A :class:`Prescan`
holds each vector a second time as one byte per dimension: each dimension is
mapped onto [-1, 1] by its own range over the collection and cut into 256
levels. faiss scores those codes (a quarter of the bytes, the rows cut into one
share per core like the plain scan), and the resident vectors then score just
the rows whose coded score leaves them a chance. With faiss missing there is
no prescan and the plain scan answers.

**Exact, not approximate.** Up to a constant shared by every row (the query
times the ranges' centre), ``coded score − true score`` is ``q · r`` for the
row's rounding residual ``r``, so it is at most the query's *slack*: the smaller
of ``Σ |q_d| · max|r_d|`` (the largest residual seen in each dimension) and
``‖q‖ · max‖r‖`` (the largest residual seen in any row), plus a margin for
float32 rounding. A row among the true best ``n`` (ties with the ``n``-th
included) therefore has a coded score at most two slacks below the ``n``-th best
coded score. :meth:`Shortlist.certain` returns every row above that line, or
None when the coded search stopped before reaching it; the caller then scans
everything. Either way the answer is the plain scan's, score for score (the
resident matrix scores a row the same way whatever rows come with it,
:mod:`groove.search.resident`).

**Groups.** A mask that follows the scores (the other script family's chunks,
which a question in one language ranks low as a body) would find few of its
rows among the best coded rows of the whole matrix. So the rows are coded in
groups (the vector index makes one per script family) and each group is
searched on its own: a mask is answered from the groups it allows rows in, at
a depth set by its share of each.

A row that is not embedded yet is coded as the zero vector it is in the matrix;
the masks the vector leg passes never allow it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from groove.search import resident
from groove.search.ann import available  # the same optional faiss
from groove.search.resident import ResidentMatrix

#: Below this many rows the plain scan is cheap enough (one core, under half a
#: millisecond at 10k chunks) that a second copy does not pay.
MIN_ROWS = 16_384
#: Rows of a group's coded search beyond the ``2n / share`` a mask needs, to begin
#: with: room for the rows within two slacks of the line. At 50k random unit
#: vectors and at 8k chunks of real text, 256 was the least that never fell
#: short in 40 searches. How many rows lie that close grows with the collection
#: and with how alike its vectors are, so each time the codes cannot tell, the
#: band doubles, up to ``MAX_BAND`` (:class:`Band`).
BAND_ROWS = 512
MAX_BAND = 4096
#: Each part of a group is searched to its share of the depth plus this many rows
#: (the best rows fall in any part; a shortfall only costs a plain scan).
PART_MARGIN = 64
#: A deeper coded search than this is refused: the plain scan answers instead.
MAX_DEPTH = 8192
#: Added to every slack: a float32 dot product of 384 terms rounds by ~2e-5.
ROUNDING = 1e-4


class Band:
    """The band of one prescan: its rows, doubled each time a shortlist fell short.

    Only speed depends on it (a shortlist that cannot tell is never used), so
    threads may race on it harmlessly.
    """

    def __init__(self) -> None:
        self.rows = BAND_ROWS

    def widen(self) -> None:
        self.rows = min(2 * self.rows, MAX_BAND)


@dataclass(frozen=True)
class _Part:
    group: int
    rows: np.ndarray  # int64: the matrix row of each code, in code order
    index: Any  # faiss.IndexScalarQuantizer (QT_8bit_uniform over [-1, 1])


@dataclass(frozen=True)
class _Listed:
    """One group's best coded rows, best first, and the best coded score it left out."""

    rows: np.ndarray
    coded: np.ndarray
    floor: float  # -inf: nothing was left out


@dataclass(frozen=True)
class Shortlist:
    """One query's coded search: each group's best rows (None: not searched), and the slack."""

    groups: tuple[_Listed | None, ...]
    depths: tuple[int, ...]  # the depth each group was searched to (0: not searched)
    slack: float  # |coded − true − a constant| is at most this for every row

    def certain(self, n: int, allowed: np.ndarray, shares: Sequence[float]) -> np.ndarray | None:
        """Rows that surely hold the true best ``n`` rows ``allowed`` keeps, ties included.

        ``shares``: the fraction of each group ``allowed`` keeps (:meth:`Prescan.shares`).
        None when a group the mask allows rows in was not searched, or not far enough.
        """
        listed = [self.groups[g] for g, share in enumerate(shares) if share > 0]
        if not listed:
            return np.zeros(0, dtype=np.int64)
        if any(group is None for group in listed):
            return None
        found = [group for group in listed if group is not None]
        rows = np.concatenate([group.rows for group in found])
        coded = np.concatenate([group.coded for group in found])
        floor = max(group.floor for group in found)
        ok = allowed[rows]
        allowed_coded = np.sort(coded[ok])[::-1]
        if len(allowed_coded) < n:
            return rows[ok] if floor == -np.inf else None
        line = float(allowed_coded[n - 1]) - 2.0 * self.slack
        if floor >= line:
            return None
        return rows[ok & (coded >= line)]


@dataclass(frozen=True)
class Prescan:
    """One-byte codes of a resident matrix, and the bounds that make them safe to prune with."""

    parts: tuple[_Part, ...]
    bins: tuple[tuple[int, ...], ...]  # the parts each thread searches in turn
    group_rows: tuple[np.ndarray, ...]  # each group's matrix rows
    half_range: np.ndarray  # float32 (dim,): what a coded value of 1 is in each dimension
    worst_dim: np.ndarray  # float32 (dim,): the largest |residual| in each dimension
    worst_row: float  # the largest residual norm of any row
    band: Band = field(default_factory=Band)

    @classmethod
    def build(cls, matrix: ResidentMatrix, groups: Sequence[np.ndarray] | None = None
              ) -> Prescan | None:
        """Codes for every row of ``matrix``, in ``groups`` of rows (default: one group),
        each cut into one part per core. None when faiss is missing or the matrix is empty."""
        if not len(matrix) or not matrix.dim or not available():
            return None
        import faiss

        low = np.full(matrix.dim, np.inf, dtype=np.float32)
        high = np.full(matrix.dim, -np.inf, dtype=np.float32)
        for block in _blocks(matrix, np.arange(len(matrix))):
            np.minimum(low, block.min(axis=0), out=low)
            np.maximum(high, block.max(axis=0), out=high)
        centre = (high + low) / 2
        half_range = np.maximum((high - low) / 2, np.float32(1e-30)).astype(np.float32)
        worst_dim = np.zeros(matrix.dim, dtype=np.float32)
        worst_row = 0.0
        chosen = [np.asarray(g, dtype=np.int64) for g in (groups or [np.arange(len(matrix))])]
        chosen = [g for g in chosen if len(g)]
        parts: list[_Part] = []
        for number, group in enumerate(chosen):
            for start, end in resident.scan_parts(len(group)):
                index = faiss.IndexScalarQuantizer(
                    matrix.dim, faiss.ScalarQuantizer.QT_8bit_uniform, faiss.METRIC_INNER_PRODUCT)
                faiss.copy_array_to_vector(np.array([-1.0, 2.0], dtype=np.float32),
                                           index.sq.trained)
                index.is_trained = True  # every value lies in [-1, 1]: none is clipped
                for block in _blocks(matrix, group[start:end]):
                    unit = (block - centre) / half_range
                    codes = index.sa_encode(np.ascontiguousarray(unit, dtype=np.float32))
                    residual = block - (centre + index.sa_decode(codes) * half_range)
                    np.maximum(worst_dim, np.abs(residual).max(axis=0), out=worst_dim)
                    worst_row = max(worst_row,
                                    float(np.sqrt((residual * residual).sum(axis=1)).max()))
                    index.add_sa_codes(codes)
                parts.append(_Part(number, group[start:end], index))
        # One bin of parts per thread: the largest part first, to the least loaded bin.
        bins: list[list[int]] = [[] for _ in range(resident.CORES)]
        load = [0] * resident.CORES
        for p in sorted(range(len(parts)), key=lambda p: -len(parts[p].rows)):
            target = load.index(min(load))
            bins[target].append(p)
            load[target] += len(parts[p].rows)
        return cls(tuple(parts), tuple(tuple(b) for b in bins if b), tuple(chosen),
                   half_range, worst_dim, worst_row)

    @property
    def nbytes(self) -> int:
        return sum(int(p.index.sa_code_size()) * int(p.index.ntotal) + p.rows.nbytes
                   for p in self.parts)

    def shares(self, allowed: np.ndarray) -> list[float]:
        """The fraction of each group's rows ``allowed`` keeps (a pass over the mask:
        callers keep it per mask)."""
        return [float(np.count_nonzero(allowed[g])) / len(g) for g in self.group_rows]

    def depths(self, n: int, shares: Sequence[float]) -> list[int] | None:
        """How deep to search each group for the best ``n`` of a mask keeping ``shares``
        of them (0: a group it keeps nothing of), or None when a group would need more
        than ``MAX_DEPTH`` rows (scan everything instead)."""
        out = []
        for rows, share in zip(self.group_rows, shares, strict=True):
            if share <= 0:
                out.append(0)
                continue
            depth = min(math.ceil(2 * n / share) + self.band.rows, len(rows))
            if depth > MAX_DEPTH:
                return None
            out.append(depth)
        return out

    def search(self, query: np.ndarray, depths: Sequence[int]) -> Shortlist:
        """Each group's best coded rows for ``query``, about ``depths[group]`` of them
        (each part gives its share); a group of depth 0 is not searched."""
        query = query.astype(np.float32, copy=False)
        scaled = np.ascontiguousarray((query * self.half_range)[None, :], dtype=np.float32)

        def one(part: _Part) -> tuple[np.ndarray, np.ndarray, float]:
            total = int(part.index.ntotal)
            share = total / len(self.group_rows[part.group])
            k = min(math.ceil(depths[part.group] * share) + PART_MARGIN, total)
            coded, found = part.index.search(scaled, k)
            keep = found[0] >= 0
            floor = float(coded[0][k - 1]) if k < total else -np.inf
            return part.rows[found[0][keep]], coded[0][keep], floor

        def run(bin_: tuple[int, ...]) -> list[tuple[int, tuple[np.ndarray, np.ndarray, float]]]:
            import faiss

            faiss.omp_set_num_threads(1)  # per thread; a team per call costs more than it saves
            return [(p, one(self.parts[p])) for p in bin_ if depths[self.parts[p].group] > 0]

        results = [found for done in resident.in_parallel(run, self.bins) for found in done]
        groups: list[_Listed | None] = []
        for number in range(len(self.group_rows)):
            mine = [found for p, found in results if self.parts[p].group == number]
            if not mine:
                groups.append(None)
                continue
            groups.append(_Listed(np.concatenate([r for r, _, _ in mine]),
                                  np.concatenate([c for _, c, _ in mine]),
                                  max(f for _, _, f in mine)))
        slack = min(float(np.abs(query) @ self.worst_dim),
                    float(np.linalg.norm(query)) * self.worst_row)
        return Shortlist(tuple(groups), tuple(depths), slack * (1.0 + 1e-3) + ROUNDING)


def _blocks(matrix: ResidentMatrix, rows: np.ndarray) -> Iterator[np.ndarray]:
    """``rows`` of ``matrix`` as float32, a block at a time."""
    for first in range(0, len(rows), resident.BLOCK_ROWS):
        yield matrix.vectors(rows[first:first + resident.BLOCK_ROWS])
