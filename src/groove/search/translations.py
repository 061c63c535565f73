"""Translations of a result: the same section in the other-language version of its file.

A bilingual folder often keeps a note and its translation side by side —
``refunds.md`` and ``refunds.ja.md`` — and a reader of either language is
answered by both. The legs do not see that: the full-text leg cannot match
the translation at all (search/language.py), and the vector leg scores it a
little lower for being in the other language, so the translation of the best
section often falls out of the first five behind more of the same file.

Two rules find a result's translation (docs/search.md, "Translations"):

* **Translated files** share their path once a language tag before the
  extension is removed: ``a/b.ja.md``, ``a/b.md`` and ``a/b.en-GB.md`` are
  versions of ``a/b.md``. Only the file name's tag counts: a folder named
  ``it`` is a department as often as it is Italian.
* **Translated sections** are *mutual* nearest neighbours by embedding
  between the chunks of two translated files: a section of one file whose
  closest chunk in the other file has it as its own closest chunk. A section
  one version has and the other lacks matches nothing, because its nearest
  neighbour prefers its own counterpart.

Two rules then apply to the first results (``[search.fusion] translation_ratio``;
0 turns both off):

1. A result in the other script family than the question exchanges places
   with its translation in the question's script when that scores less: the
   asker reads the first version shown, and nothing else moves.
2. The translation in the other script of each first result scores at least
   ``ratio`` × that result's score: it ranks close behind the section it
   translates — ahead of everything scoring less than that share — unless it
   was already ahead.

The cost is one lookup per document among the first few candidates and a
product of two documents' chunk vectors, whatever the size of the knowledge
base; in a knowledge base without translated files, nothing at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from groove.search.fusion import best_first

if TYPE_CHECKING:
    from groove.models import DocumentMeta
    from groove.store.base import Store

#: A language tag in a file name: ``ja``, ``en``, ``pt-BR``, ``zh_Hant`` (two letters, as in
#: ISO 639-1, so ``archive.tar.gz`` holds none).
_LANGUAGE_TAG = re.compile(r"^[a-z]{2}(?:[-_][A-Za-z]{2,4})?$")

Ranked = list[tuple[int, float]]


class ChunkVectors(Protocol):
    """What a translation finder reads of the vector index (search/vectors.py's
    ``VectorIndex``, which itself asks this module which documents are translations)."""

    embedded: np.ndarray

    def positions(self, chunk_ids: list[int]) -> np.ndarray: ...

    def vectors_for(self, chunk_ids: list[int]) -> np.ndarray: ...

    def document_of(self, chunk_id: int) -> DocumentMeta | None: ...

    def translations_of(self, doc_id: int) -> tuple[DocumentMeta, ...]: ...


def neutral_path(path: str) -> str:
    """``path`` without a language tag before its extension (``a/b.ja.md`` → ``a/b.md``)."""
    folder, _, name = path.rpartition("/")
    pieces = name.split(".")
    if len(pieces) >= 3 and pieces[0] and _LANGUAGE_TAG.match(pieces[-2]):
        name = ".".join(pieces[:-2] + pieces[-1:])
    return f"{folder}/{name}" if folder else name


def translated_documents(paths: Sequence[str]) -> dict[int, tuple[int, ...]]:
    """For each index of ``paths`` with a translation: the indexes of its other versions."""
    groups: dict[str, list[int]] = {}
    for i, path in enumerate(paths):
        groups.setdefault(neutral_path(path), []).append(i)
    return {i: tuple(j for j in members if j != i)
            for members in groups.values() if len(members) > 1 for i in members}


def mutual_nearest(left: np.ndarray, right: np.ndarray) -> list[tuple[int, int]]:
    """Pairs ``(i, j)`` where row ``j`` of ``right`` is the nearest to ``left[i]`` and back.

    Rows are unit vectors (cosine = dot product). Deterministic: ties go to
    the lower index.
    """
    if not len(left) or not len(right):
        return []
    sims = left @ right.T
    best_right = sims.argmax(axis=1)
    best_left = sims.argmax(axis=0)
    return [(i, int(j)) for i, j in enumerate(best_right.tolist()) if int(best_left[j]) == i]


def raise_translations(ranked: Sequence[tuple[int, float]], twins: Callable[[int], Iterable[int]],
                       ratio: float, depth: int, asked: Callable[[int], bool]) -> Ranked:
    """``ranked`` with the translations of its first ``depth`` chunks moved up.

    ``twins(c)`` gives the translations of chunk ``c``; ``asked(c)`` says whether
    chunk ``c`` is written in the question's script family.

    1. **The asker's version first.** A first-``depth`` result in the other
       script whose translation in the question's script scores less exchanges
       scores with it (a translation not in ``ranked`` counts 0): the version
       the asker reads takes the better place, and nothing else moves.
    2. **The other version close behind.** Each translation in the other script
       of the first ``depth`` results (after step 1) scores at least ``ratio``
       × that result's score; a translation not in ``ranked`` joins it.

    Re-sorted best first, ties by chunk id. ``ratio`` 0 turns both off.
    """
    if ratio <= 0.0 or not ranked:
        return list(ranked)
    scores = dict(ranked)
    for chunk_id, _ in ranked[:depth]:
        if asked(chunk_id):
            continue
        home = [t for t in twins(chunk_id) if asked(t)]
        if home and scores.get(home[0], 0.0) < scores[chunk_id]:
            scores[home[0]], scores[chunk_id] = scores[chunk_id], scores.get(home[0], 0.0)
    for chunk_id, score in best_first(scores)[:depth]:
        for twin in twins(chunk_id):
            if not asked(twin):
                scores[twin] = max(scores.get(twin, -np.inf), ratio * score)
    return best_first(scores)


def translation_finder(store: Store, vectors: ChunkVectors,
                       may_return: Callable[[Sequence[int]], list[bool]] | None = None
                       ) -> Callable[[int], tuple[int, ...]]:
    """``twins(chunk_id)``: the chunk's translated sections, in the other versions of its file.

    With ``may_return`` (the search's filters and exclusions,
    :meth:`Candidates.may_return <groove.search.candidates.Candidates.may_return>`)
    a translation the search may not return is not returned.

    Each pair of documents is read and matched once per finder (one finder per search).
    """
    pairs: dict[tuple[int, int], dict[int, int]] = {}

    def embedded_chunks(doc_id: int) -> tuple[list[int], np.ndarray]:
        ids = [row.id for row in store.document_chunks(doc_id)]
        pos = vectors.positions(ids)
        keep = [c for c, p in zip(ids, pos.tolist(), strict=True)
                if p >= 0 and bool(vectors.embedded[p])]  # a pending vector matches nothing
        return keep, vectors.vectors_for(keep).astype(np.float32)

    def matches(doc_id: int, other_id: int) -> dict[int, int]:
        key = (doc_id, other_id)
        if key not in pairs:
            (left_ids, left), (right_ids, right) = embedded_chunks(doc_id), embedded_chunks(other_id)
            found = {left_ids[i]: right_ids[j] for i, j in mutual_nearest(left, right)}
            pairs[key] = found
            pairs[(other_id, doc_id)] = {b: a for a, b in found.items()}
        return pairs[key]

    def twins(chunk_id: int) -> tuple[int, ...]:
        doc = vectors.document_of(chunk_id)
        if doc is None:
            return ()
        out = [matches(doc.id, other.id).get(chunk_id) for other in vectors.translations_of(doc.id)]
        found = [c for c in out if c is not None]
        if not found or may_return is None:
            return tuple(found)
        return tuple(c for c, ok in zip(found, may_return(found), strict=True) if ok)

    return twins
