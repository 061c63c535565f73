"""Byte sizes in groove.toml (docs/configuration.md, '[index]'): the grammar and its refusals."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groove.config.sizes import parse_size

UNITS = {"B": 1, "KB": 1000, "MB": 1000**2, "GB": 1000**3, "TB": 1000**4,
         "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}


@given(n=st.integers(1, 10**6), unit=st.sampled_from(sorted(UNITS)), space=st.sampled_from(["", " "]),
       upper=st.booleans())
def test_a_whole_number_with_a_unit_is_that_many_bytes(n, unit, space, upper):
    text = f"{n}{space}{unit.upper() if upper else unit.lower()}"
    assert parse_size(text) == n * UNITS[unit]


@given(n=st.integers(1, 2**62))
def test_a_plain_number_is_bytes(n):
    assert parse_size(n) == n == parse_size(str(n))


@pytest.mark.parametrize("text", ["unlimited", "Unlimited", " UNLIMITED "])
def test_unlimited_is_spelled_out(text):
    assert parse_size(text) is None


@pytest.mark.parametrize("value", [0, -1, "0", "0 MiB", "1.5 MiB", "10 mb2", "lots", "", True,
                                   "-5 KiB", "none"])
def test_zero_negatives_fractions_and_words_are_refused_pointing_at_unlimited(value):
    with pytest.raises(ValueError, match='"unlimited"'):
        parse_size(value)


@given(st.text(st.characters(whitelist_categories=("Nd",)), min_size=1, max_size=4)
       .filter(lambda t: not t.isascii()))
def test_only_ascii_digits_make_a_size(digits):
    with pytest.raises(ValueError, match="is not a size"):
        parse_size(f"{digits} MB")
