"""Which characters are kanji, hiragana or katakana: one definition for query and index.

The query grammar cuts phrases where the script changes (docs/search.md), and
the full-text index reads maximal runs of these scripts as CJK text (indexed
as character bigrams and single characters instead of words). Both use these
ranges, so a query's CJK run is always indexed the same way.
"""

from __future__ import annotations

import re

OTHER, KANJI, HIRAGANA, KATAKANA = range(4)

#: Inclusive code point ranges and their script.
SCRIPT_RANGES: tuple[tuple[int, int, int], ...] = (
    (0x3041, 0x309F, HIRAGANA),
    (0x30A0, 0x30FF, KATAKANA),  # includes the prolonged sound mark
    (0x31F0, 0x31FF, KATAKANA),
    (0xFF66, 0xFF9F, KATAKANA),  # half-width kana
    (0x4E00, 0x9FFF, KANJI),
    (0x3400, 0x4DBF, KANJI),
    (0xF900, 0xFAFF, KANJI),
    (0x20000, 0x323AF, KANJI),
    (0x3005, 0x3007, KANJI),  # 々 〆 〇
    (0x303B, 0x303B, KANJI),  # 〻
)

#: A maximal run of CJK characters (Python ``re``).
CJK_RUN = re.compile("[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi, _ in SCRIPT_RANGES)
                     + "]+")


def rust_cjk_class() -> str:
    """The same ranges as the body of a Rust-regex character class (``\\x{3041}-\\x{309F}…``)."""
    return "".join(f"\\x{{{lo:X}}}-\\x{{{hi:X}}}" for lo, hi, _ in SCRIPT_RANGES)
