"""Which script a text is written in, for language-aware retrieval (docs/search.md).

groove tells apart two script families only: **CJK** (kana and kanji) and
**everything else** (Latin, Cyrillic, ...). That is the split that matters
to both retrievers:

* the full-text leg cannot match a question written in one family against a
  chunk written in the other (except for shared codes such as ``PG-E311``), so
  a chunk's missing full-text score is no evidence against it;
* multilingual embedding models score a passage in the question's own
  language higher than an equally relevant one in another language (for
  multilingual-e5-small the gap between the best same-language and the best
  other-language chunk is about 0.05-0.11 cosine when the answer is in the
  question's language and -0.02-0.05 when it is not, on both evaluation sets).

A text is CJK when at least :data:`CJK_SHARE` of its letters and digits are
kana or kanji. The share is counted per character, so a Japanese sentence
with one long English word (``Wi-Fiのパスワード``) is still CJK, while an English
sentence quoting one kanji term is not.

Only a question in words gets the cross-language help (:func:`is_prose`): a
lookup of a few terms (``Retry-After header``, ``02:00 UTC``, ``3007 が返ってきた``)
is matched in the terms' own language, and on GrooveSeek's evaluation set the
help moved such lookups off rank 1.

A document's script is judged once, at indexing, on its title and the first
:data:`SCRIPT_SAMPLE_CHARS` characters of its text (:func:`document_is_cjk`),
and held once per document, so the per-script mask the vector leg needs costs
nothing per query beyond a numpy lookup. (An index written before groove
recorded it is judged on its chunks when it is first opened.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from groove.fulltext.scripts import CJK_RUN
from groove.search.query import is_cjk_char

#: A text is CJK when at least this share of its letters and digits are kana or kanji.
CJK_SHARE = 0.3
#: A question of fewer words than this is a lookup of terms (a code, a header name, a
#: time), which are matched in their own language: it gets no cross-language help.
PROSE_MIN_WORDS = 4
#: Kana/kanji characters per word, for counting words in text without spaces.
CJK_CHARS_PER_WORD = 2

_LATIN_WORD = re.compile(r"[^\W\d_]{2,}")


#: Everything that is not a letter or digit (``str.isalnum``: ``\\w`` without ``_``).
_NOT_ALNUM = re.compile(r"[\W_]+")


def cjk_share(text: str) -> float:
    """The share of ``text``'s letters and digits that are kana or kanji (0 for none).

    Counted by regular expressions, not per character in Python: every indexed
    document is judged (:func:`document_is_cjk`), and a per-character loop was
    a third of the rows pass of ``groove index``.
    """
    letters = len(_NOT_ALNUM.sub("", text))
    if not letters:
        return 0.0
    cjk = len(_NOT_ALNUM.sub("", "".join(CJK_RUN.findall(text))))
    return cjk / letters


def is_cjk(text: str) -> bool:
    """True when ``text`` is written in kana/kanji (see :data:`CJK_SHARE`)."""
    return cjk_share(text) >= CJK_SHARE


#: A document's script is judged on at most this many characters of its title and body.
SCRIPT_SAMPLE_CHARS = 20_000


def document_is_cjk(title: str, bodies: Iterable[str]) -> bool:
    """Whether a document is written in kana/kanji, judged on its title and body text.

    The title alone misleads: a chapter without a level-1 heading is titled by
    its file name (``ch16-01-threads``), which would count a Japanese chapter as
    English. Code in the body weighs little against the prose around it.
    """
    sample: list[str] = [title]
    size = len(title)
    for body in bodies:
        if size >= SCRIPT_SAMPLE_CHARS:
            break
        sample.append(body[:SCRIPT_SAMPLE_CHARS - size])
        size += len(sample[-1])
    return is_cjk("\n".join(sample))


def prose_words(text: str) -> float:
    """Words of prose in ``text``: runs of two or more letters outside CJK, plus kana/kanji
    characters divided by :data:`CJK_CHARS_PER_WORD`. Digits and symbols do not count."""
    cjk = sum(1 for c in text if is_cjk_char(c))
    latin = sum(1 for w in _LATIN_WORD.findall(text) if not any(is_cjk_char(c) for c in w))
    return latin + cjk / CJK_CHARS_PER_WORD


def is_prose(text: str) -> bool:
    """True for a question in words (at least :data:`PROSE_MIN_WORDS`), not a term lookup."""
    return prose_words(text) >= PROSE_MIN_WORDS
