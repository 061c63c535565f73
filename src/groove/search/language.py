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

A document's script is the script of its **title** (the frontmatter title,
else the first heading, else the file name): it is held once per document,
so the per-script mask the vector leg needs costs nothing per query beyond a
numpy lookup. A Japanese document with an English title (or a file name for
a title) is counted as English; the docs say so.
"""

from __future__ import annotations

from groove.search.query import is_cjk_char

#: A text is CJK when at least this share of its letters and digits are kana or kanji.
CJK_SHARE = 0.3


def cjk_share(text: str) -> float:
    """The share of ``text``'s letters and digits that are kana or kanji (0 for none)."""
    letters = [c for c in text if c.isalnum()]
    if not letters:
        return 0.0
    return sum(1 for c in letters if is_cjk_char(c)) / len(letters)


def is_cjk(text: str) -> bool:
    """True when ``text`` is written in kana/kanji (see :data:`CJK_SHARE`)."""
    return cjk_share(text) >= CJK_SHARE
