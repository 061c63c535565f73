"""TokenCounts: decisions from bounds equal the exact ones; the tokenizer runs only when needed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from groove.indexing.tokens import TokenCounts, token_counts


def count(text: str) -> int:
    """A stand-in tokenizer: two specials, one token per word, one more per 7 characters."""
    return 2 + len(text.split()) + len(text) // 7


class Bounds:
    """Valid but loose bounds on ``count`` (a word is at least one character plus a space).

    ``slack`` loosens both bounds; a negative one means "no ceiling" (the floor
    then stays exact on the characters, never above the count).
    """

    def __init__(self, slack: int) -> None:
        self.slack = slack

    def token_floor(self, text: str) -> int:
        return max(0, 2 + len(text) // 7 - max(self.slack, 0))

    def token_ceiling(self, text: str) -> int | None:
        return None if self.slack < 0 else 2 + (len(text) + 1) // 2 + len(text) // 7 + self.slack


texts = st.text(alphabet=st.sampled_from("ab c\n日"), max_size=60)


@settings(max_examples=300, deadline=None)
@given(text=texts, limit=st.integers(-1, 40), slack=st.integers(-1, 5))
def test_decisions_equal_the_exact_comparison_and_count_only_when_open(text, limit, slack):
    asked: list[str] = []

    def counted(t: str) -> int:
        asked.append(t)
        return count(t)

    bounds = Bounds(slack)
    lazy = TokenCounts(counted, bounds)
    assert lazy.fits(text, limit) == (count(text) <= limit)
    assert lazy.below(text, limit) == (count(text) < limit)
    ceiling = bounds.token_ceiling(text)
    settled_fit = ceiling is not None and ceiling <= limit
    settled_fit = settled_fit or bounds.token_floor(text) > limit
    settled_below = ceiling is not None and ceiling <= limit - 1
    settled_below = settled_below or bounds.token_floor(text) > limit - 1
    assert (asked == []) == (settled_fit and settled_below)
    assert len(asked) <= 1  # the exact count is memoised
    assert lazy.stored(text) == (count(text) if asked else None)


def test_without_bounds_every_count_is_exact_and_stored():
    exact = token_counts(count)
    assert isinstance(exact, TokenCounts) and token_counts(exact) is exact
    assert exact.fits("a b c", 5) and not exact.fits("a b c d", 5)
    assert exact.stored("never asked before") == count("never asked before")


def test_the_memo_is_bounded_and_forgets_the_oldest_first():
    asked: list[str] = []

    def counted(t: str) -> int:
        asked.append(t)
        return count(t)

    counts = TokenCounts(counted, Bounds(0), memo=2)
    for text in ("one", "two", "one", "three", "one"):
        counts(text)
    assert asked == ["one", "two", "three", "one"]
    assert counts.stored("two") is None and counts.stored("one") == count("one")
