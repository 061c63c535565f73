"""Line windows and byte caps: the guarantees docs/mcp.md states, checked on any text."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from groove.documents.lines import cut_to_bytes, line_window, split_location, text_lines
from groove.errors import InvalidArgument

# Any Unicode text (astral characters, CJK, combining marks), made of lines.
LINE = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=30)
TEXT = st.builds(lambda lines, end: "\n".join(lines) + ("\n" if end else ""),
                 st.lists(LINE, max_size=12), st.booleans())


@given(TEXT, st.integers(0, 400))
def test_a_byte_cap_is_never_exceeded_and_never_splits_a_character(text, cap):
    kept = cut_to_bytes(text, cap)
    data = kept.encode("utf-8")
    assert len(data) <= cap
    assert text.startswith(kept)  # a prefix of the text, so decodable and on a boundary
    if len(text.encode("utf-8")) <= cap:
        assert kept == text


@given(TEXT, st.integers(1, 400))
def test_a_cut_keeps_whole_lines_when_one_fits(text, cap):
    kept = cut_to_bytes(text, cap)
    assume(kept != text)
    first_line = text.split("\n", 1)[0] + "\n"
    if len(first_line.encode("utf-8")) <= cap:
        assert kept.endswith("\n")
        assert text_lines(kept) == text_lines(text)[:len(text_lines(kept))]
    else:  # only a part of the first line fits: as many characters of it as fit
        assert "\n" not in kept
        nxt = text[len(kept)]
        assert len((kept + nxt).encode("utf-8")) > cap


@given(TEXT, st.data())
def test_a_line_window_returns_exactly_those_lines(text, data):
    lines = text_lines(text)
    assume(lines)
    first = data.draw(st.integers(1, len(lines)))
    last = data.draw(st.none() | st.integers(first, len(lines) + 5))
    most = data.draw(st.none() | st.integers(1, len(lines) + 2))
    window = line_window(text, first, last, most)
    end = len(lines) if last is None else min(last, len(lines))
    if most is not None:
        end = min(end, first + most - 1)
    assert (window.first, window.last, window.total) == (first, end, len(lines))
    assert window.text.split("\n") == lines[first - 1:end]


@given(TEXT)
def test_lines_are_what_an_editor_numbers(text):
    """A final newline ends the last line; it does not start one."""
    assert len(text_lines(text)) == len(text.splitlines()) or any(
        sep in text for sep in "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def test_a_window_past_the_end_names_the_documents_line_count():
    with pytest.raises(InvalidArgument, match=r"past the end of 'a.md' \(3 lines\); accepted: 1..3"):
        line_window("one\ntwo\nthree\n", 4, None, path="'a.md'")
    with pytest.raises(InvalidArgument, match="before line_start 3"):
        line_window("one\ntwo\nthree\n", 3, 2)
    with pytest.raises(InvalidArgument, match="no lines"):
        line_window("", 1, None, path="'empty.md'")


@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=":"), min_size=1),
       st.integers(1, 10**6), st.none() | st.integers(0, 10**6))
def test_a_location_in_the_path_splits_off(path, first, extra):
    last = None if extra is None else first + extra
    spelled = f"{path}:{first}" + ("" if last is None else f"-{last}")
    assert split_location(spelled) == (path, first, last)
    assert split_location(path) == (path, None, None)


def test_a_location_that_cannot_be_a_window_is_refused():
    with pytest.raises(InvalidArgument, match="no line 0"):
        split_location("a.md:0")
    with pytest.raises(InvalidArgument, match="ends before it starts"):
        split_location("a.md:9-3")
