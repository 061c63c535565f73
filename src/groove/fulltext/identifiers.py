"""Identifiers cut into their words: ``_redirect_url`` -> ``redirect url``.

Code names its things by gluing words together: ``snake_case``,
``camelCase``, ``PascalCase``, ``SCREAMING_CASE``, ``kebab-case``. The
full-text tokenizer keeps a run of letters, digits and ``_`` whole (so the
name ``_redirect_url`` finds its definition exactly), which means the words
inside it are not words to the index: "redirect url" does not match it. The
``parts`` field of the full-text index (:mod:`groove.fulltext.tantivy`) holds
the words of every such compound identifier of a chunk, and a query is
matched against it too, its own identifiers cut the same way.

A part boundary is an ``_`` or ``-`` run, a lower-case letter or digit
followed by an upper-case one (``hybridQuery``), and the last capital of a
run of capitals followed by a lower-case letter (``HTTPServer`` -> ``HTTP
Server``). Digits stay with the letters before them (``sha256_hex`` ->
``sha256 hex``). Nothing else is dropped: the parts, joined, are the
identifier's letters and digits in order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

#: What the full-text tokenizer keeps as one word: letters, digits and ``_`` (``-`` is
#: already a word boundary there, so a kebab-case name is cut by the tokenizer itself).
_WORD = re.compile(r"\w+")
_SEPARATORS = re.compile(r"[_\-]+")
#: More parts than this in one identifier: not a name (a long generated constant).
MAX_PARTS = 12


def split_identifier(identifier: str) -> list[str]:
    """The words of one identifier, in order (a plain word is one part)."""
    parts: list[str] = []
    for piece in _SEPARATORS.split(identifier):
        parts.extend(_split_case(piece))
    return parts


def _split_case(piece: str) -> Iterator[str]:
    start = 0
    for i in range(1, len(piece)):
        before, here = piece[i - 1], piece[i]
        after = piece[i + 1] if i + 1 < len(piece) else ""
        if here.isupper() and (before.islower() or before.isdigit()
                               or (before.isupper() and after.islower())):
            yield piece[start:i]
            start = i
    if start < len(piece):
        yield piece[start:]


def identifier_parts(text: str) -> list[str]:
    """The parts of every compound identifier of ``text`` (one the full-text tokenizer
    keeps whole but that splits into two or more words), each identifier's parts
    joined by spaces; plain words are left out (the ``text`` field has them)."""
    out: list[str] = []
    for match in _WORD.finditer(text):
        token = match.group()
        rest = token[1:]
        if "_" not in token and (rest.islower() or not any(map(str.isupper, rest))):
            continue  # no capital after the first letter (``Word``, ``2024``, ``東京``): no cut
        parts = split_identifier(token)
        if 2 <= len(parts) <= MAX_PARTS:
            out.append(" ".join(parts))
    return out


def query_parts(phrase: str) -> list[str]:
    """A query phrase's words with its identifiers cut (``hybridQuery weights`` ->
    ``hybrid Query weights``): what is matched against the ``parts`` field."""
    words: list[str] = []
    for word in re.findall(r"[\w\-]+", phrase):
        words.extend(p for p in split_identifier(word) if p)
    return words
