"""What a ``-term`` exclusion does, leg by leg (docs/search.md, "Exclusions").

The grammar (which ``-`` starts an exclusion, quoted ``-"…"`` phrases) is step
1 of the query grammar in :mod:`groove.search.query`, since it shares the
quote rules of the phrase steps. Everything an exclusion *does* is here:

* **Both legs**: a chunk holding any exclusion, as the full-text index matches
  it (the same stemming and CJK bigrams as a search:
  ``Store.fulltext_matching``), is removed from the allowed set of the
  full-text leg and of the vector leg *before* their cut to N
  (:class:`Exclusions`, read by ``Candidates.may_return`` in
  search/candidates.py), so an excluded chunk never takes a place and
  ``limit`` still fills. Cross-language twins and parent expansion go through
  the same ``may_return``.
* **What the models read**: the exclusions are removed from the text that is
  embedded and that the reranker reads (``ParsedQuery.model_text``, the
  positive text), so ``-async`` does not pull the vector leg towards *async*.
* **match_spans**: computed from the positive text only (search/spans.py), so
  an excluded word is never highlighted.
* **The answer**: ``filter_applied.excluded_terms`` echoes the exclusions that
  exclude something (:func:`excluded_terms`); a query of exclusions only is
  refused on every surface (:func:`check_searchable`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from groove.errors import InvalidArgument
from groove.search.query import ParsedQuery, split_exclusions

if TYPE_CHECKING:
    from groove.store.base import Store


def excluded_terms(raw: str) -> tuple[str, ...]:
    """The exclusions of ``raw`` that exclude something (a letter or digit in them), as
    echoed in ``filter_applied.excluded_terms``: ``-"..."`` of punctuation excludes nothing."""
    return tuple(t for t in split_exclusions(raw)[1] if any(c.isalnum() for c in t))


def check_searchable(raw: str) -> None:
    """Refuse (:class:`~groove.errors.InvalidArgument`) a query that is only exclusions.

    A query such as ``-async`` asks for nothing: answering it would return
    whatever the vector leg prefers for the word it excludes. GrooveSeek (v1.1)
    refuses it on every surface, and so does groove: the CLI, MCP and a golden file.
    """
    if raw.strip() and not split_exclusions(raw)[0].strip():
        raise InvalidArgument(
            f"query: {raw.strip()!r} holds only exclusions, so nothing is left to search for; "
            "accepted: at least one word to search for beside the -terms (to search for a "
            "word that starts with '-', put it in quotes: \"-word\")")


#: Past this many chunks to check, one whole-set lookup is cheaper than asking per chunk
#: (an exclusion held by nearly every near neighbour: rare, and costly either way).
WHOLE_SET_AFTER = 16_384
#: Exclusions held by at most this many chunks are all fetched beside the embedding
#: (Exclusions.look_ahead): about 0.25 µs a chunk, so at most ~4 ms on the other core.
LOOK_AHEAD_AT_MOST = 16_384


class Exclusions:
    """Which chunks hold one of the question's ``-term`` exclusions, asked only about the
    chunks the search looks at (one full-text query per batch) and remembered for it."""

    def __init__(self, store: Store, terms: Sequence[str]) -> None:
        self._store = store
        self.terms = tuple(terms)
        self._held: dict[int, bool] = {}
        self._whole: set[int] | None = None

    def look_ahead(self) -> None:
        """Fetch every chunk holding an exclusion now, when there are few of them.

        Called while the query is being embedded, so the vector leg that
        follows finds its answers in a set instead of asking the index per batch
        (at 50k chunks, one batch took 2.5 ms after the embedding, the whole set
        1 ms beside it). Whether they are few is judged by the terms'
        frequencies, so a common term costs a few lookups, not its matches.
        """
        if self._store.fulltext_most_matching(self.terms) <= LOOK_AHEAD_AT_MOST:
            self._whole_set()

    def among(self, ids: Iterable[int]) -> set[int]:
        """The chunks of ``ids`` that hold an exclusion."""
        wanted = list(dict.fromkeys(ids))
        if self._whole is not None or len(self._held) + len(wanted) > WHOLE_SET_AFTER:
            whole = self._whole_set()
            return {c for c in wanted if c in whole}
        unknown = [c for c in wanted if c not in self._held]
        if unknown:
            held = self._store.fulltext_matching(self.terms, among=unknown)
            self._held.update((c, c in held) for c in unknown)
        return {c for c in wanted if self._held[c]}

    def _whole_set(self) -> set[int]:
        """Every chunk holding an exclusion, fetched once."""
        if self._whole is None:
            self._whole = self._store.fulltext_matching(self.terms)
        return self._whole


def exclusions_of(store: Store, parsed: ParsedQuery) -> Exclusions | None:
    return Exclusions(store, parsed.exclusions) if parsed.exclusions else None
