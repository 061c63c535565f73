"""Path globs (search/globs.py): GrooveSeek's brace groups and the refusal of a glob
the gitignore matcher cannot compile."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groove.errors import InvalidArgument
from groove.search.globs import check_glob, expand_braces


def test_a_brace_glob_expanding_too_far_is_refused():
    with pytest.raises(InvalidArgument, match="expands to more than 256"):
        expand_braces("{a,b,c,d}/{a,b,c,d}/{a,b,c,d}/{a,b,c,d}/{a,b,c,d}")


_WORD = st.text("abc/*", min_size=0, max_size=3)


@given(st.lists(_WORD, min_size=2, max_size=4), _WORD, _WORD)
def test_one_brace_group_expands_to_each_alternative_in_order(alternatives, before, after):
    pattern = before + "{" + ",".join(alternatives) + "}" + after
    assert expand_braces(pattern) == [before + a + after for a in alternatives]


def test_a_glob_the_matcher_cannot_compile_is_named():
    check_glob("docs/{a,b}/**")
    with pytest.raises(ValueError, match=r"'\[z-a\]' is not a valid glob"):
        check_glob("[z-a]")
