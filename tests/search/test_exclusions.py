"""Exclusions (search/exclusions.py): which chunks hold a ``-term``, asked only about the
chunks a search looks at; what is echoed; a query of exclusions only refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.search import exclusions


def test_past_the_threshold_exclusions_are_looked_up_once_as_a_whole_set(monkeypatch) -> None:
    held = set(range(0, 100, 3))
    calls: list[object] = []

    class Store:
        def fulltext_matching(self, terms, among=None):
            calls.append(None if among is None else len(among))
            return held if among is None else held & set(among)

    monkeypatch.setattr(exclusions, "WHOLE_SET_AFTER", 40)
    check = exclusions.Exclusions(Store(), ["legacy"])  # type: ignore[arg-type]
    assert check.among(range(30)) == {c for c in range(30) if c % 3 == 0}
    assert check.among(range(30, 90)) == {c for c in range(30, 90) if c % 3 == 0}
    assert check.among(range(100)) == held
    assert calls == [30, None]  # per chunk first; past 40 asked, the whole set once


def test_an_exclusion_held_by_few_chunks_is_fetched_whole_ahead_and_answers_alike(
        monkeypatch) -> None:
    """Looked ahead (beside the embedding), a rare exclusion is one fetch; a common one is
    left to the per-batch questions; either way each batch gets the same answer."""

    held = set(range(0, 100, 3))

    class Store:
        def __init__(self) -> None:
            self.calls: list[object] = []

        def fulltext_most_matching(self, terms):
            return len(held) + 5  # an upper bound, as the index gives

        def fulltext_matching(self, terms, among=None):
            self.calls.append(None if among is None else len(among))
            return held if among is None else held & set(among)

    for at_most, calls in ((len(held) + 5, [None]), (len(held) + 4, [30, 60])):
        monkeypatch.setattr(exclusions, "LOOK_AHEAD_AT_MOST", at_most)
        store = Store()
        check = exclusions.Exclusions(store, ["legacy"])  # type: ignore[arg-type]
        check.look_ahead()
        assert check.among(range(30)) == {c for c in range(30) if c % 3 == 0}
        assert check.among(range(30, 90)) == {c for c in range(30, 90) if c % 3 == 0}
        assert store.calls == calls


# --- a query of exclusions only (GrooveSeek v1.1) ------------------------------------

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORD, min_size=1, max_size=5), st.sampled_from([" ", "  ", "\t"]))
def test_a_query_of_exclusions_only_is_refused_naming_it(words: list[str], sep: str) -> None:
    from groove.errors import InvalidArgument
    from groove.search.exclusions import check_searchable

    raw = sep.join(f"-{w}" if i % 2 else f'-"{w} {w}"' for i, w in enumerate(words))
    with pytest.raises(InvalidArgument, match="holds only exclusions") as caught:
        check_searchable(raw)
    assert repr(raw.strip()) in str(caught.value)


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORD, min_size=0, max_size=4), _WORD)
def test_one_word_beside_the_exclusions_is_searchable(excluded: list[str], word: str) -> None:
    from groove.search.exclusions import check_searchable, excluded_terms

    raw = " ".join([*(f"-{w}" for w in excluded), word])
    check_searchable(raw)  # no error
    assert excluded_terms(raw) == tuple(dict.fromkeys(excluded))
    check_searchable(f'"-{word}"')  # a quoted hyphen is a word to look for


def test_an_exclusion_of_punctuation_is_not_echoed() -> None:
    from groove.search.exclusions import excluded_terms

    assert excluded_terms('tokio -"..." -async') == ("async",)
