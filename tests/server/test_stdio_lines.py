"""The stdin line check, as a property: a request with an id is never dropped silently."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from groove.server.stdio import check_line

_ids = st.one_of(st.integers(min_value=-(2**31), max_value=2**31), st.text(min_size=1, max_size=8))
_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(), st.floats(allow_nan=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=8)


def _answered_ids(line: str) -> set:
    replies = check_line(line)
    return set() if replies is None else {r.id for r in replies}


@settings(max_examples=200, deadline=None)
@given(request_id=_ids, method=st.one_of(st.text(max_size=12), st.integers()), params=_values)
def test_a_request_with_an_id_is_passed_on_or_answered_for_that_id(request_id, method, params):
    line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    replies = check_line(line)
    usable = not (isinstance(request_id, str) and _lone_surrogate(request_id))
    if replies is not None and usable:
        assert {r.id for r in replies} == {request_id}


@settings(max_examples=100, deadline=None)
@given(ids=st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=5, unique=True))
def test_every_id_of_a_batch_is_answered(ids):
    line = json.dumps([{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in ids])
    assert _answered_ids(line) == set(ids)


@settings(max_examples=300, deadline=None)
@given(st.text().filter(lambda s: not s.lstrip().startswith(("{", "["))))
def test_a_line_that_is_not_json_gets_one_parse_error_with_a_null_id(text):
    """JSON-RPC 2.0: a parse error whose id cannot be read is answered with id null; JSON
    that is no request (``1``, ``"x"``) and blank lines get no reply."""
    replies = check_line(text.replace("\n", " "))
    try:
        json.loads(text)
        is_json = True
    except ValueError:
        is_json = False
    if is_json or not text.strip():
        assert not replies
    else:
        assert replies is not None and len(replies) == 1
        assert replies[0].id is None and replies[0].error.code == -32700


def _lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
