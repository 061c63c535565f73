"""A chunk deleted by another process between the vector refresh and the row fetch is skipped."""

from __future__ import annotations

from searchkit import Sec, unit


class _DeletedMeanwhile:
    """Wraps the real store; ``get_chunks`` no longer finds ``gone`` (a concurrent delete)."""

    def __init__(self, store, gone: set[int]) -> None:
        self._store = store
        self._gone = gone

    def get_chunks(self, ids):
        return {c: r for c, r in self._store.get_chunks(ids).items() if c not in self._gone}

    def __getattr__(self, name):
        return getattr(self._store, name)


class _LengthScorer:
    def score(self, query: str, texts: list[str]) -> list[float]:
        return [float(len(t)) for t in texts]


def test_vanished_chunk_is_skipped_not_a_crash(fixed):
    first = fixed.add("a.md", [Sec("guide one", vector=unit((0, 1.0)))])
    fixed.add("b.md", [Sec("guide two", vector=unit((0, 1.0), (1, 0.3)))])
    fixed.store = _DeletedMeanwhile(fixed.store, set(first))
    for scorer in (None, _LengthScorer()):
        response = fixed.search("guide", include_low_quality=True, scorer=scorer, rerank=True)
        assert fixed.paths(response) == ["b.md"]
