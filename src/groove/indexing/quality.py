"""A cheap per-chunk quality score (docs/indexing.md, 'Quality score') used to hide stub chunks.

Start at 1.0 and subtract for each sign of a stub; the penalties stack, so a
bare "TBD" scores 0 while a real one-line sentence keeps 0.7. Chunks from
binary formats (PDF pages, slides, sheets) are exempt: their shape says
nothing about their worth.
"""

from __future__ import annotations

import re
import unicodedata

SHORT_CHARS = 30
SHORT_PENALTY = 0.6
BOILERPLATE_PENALTY = 0.5
ONE_LINE_CHARS = 80
ONE_LINE_PENALTY = 0.3

#: Placeholder phrases, compared after removing case, spaces and punctuation.
BOILERPLATE_PHRASES: tuple[str, ...] = (
    "tbd", "tba", "todo", "fixme", "wip", "xxx", "n/a", "coming soon", "to be written",
    "to be added", "to be determined", "to be done", "to do", "work in progress",
    "placeholder", "under construction", "draft", "stub", "lorem ipsum",
    "詳細は後述", "詳細は後述します", "後述", "準備中", "作成中", "執筆中", "工事中", "未定",
    "未記入", "検討中", "調整中", "記載予定", "追記予定", "後で書く", "あとで書く",
)


def _normalise(text: str) -> str:
    """Lower-case text with whitespace, punctuation and symbols (markdown markers) removed."""
    kept = (ch for ch in unicodedata.normalize("NFKC", text).casefold()
            if not (ch.isspace() or unicodedata.category(ch)[0] in "PS"))
    return "".join(kept)


_BOILERPLATE = re.compile(
    "(?:" + "|".join(sorted({re.escape(_normalise(p)) for p in BOILERPLATE_PHRASES},
                            key=len, reverse=True)) + ")+"
)
_LOREM = _normalise("lorem ipsum")


def is_boilerplate(content: str) -> bool:
    """True when the text is nothing but placeholder phrases (or lorem ipsum filler)."""
    norm = _normalise(content)
    if not norm:
        return False
    return norm.startswith(_LOREM) or _BOILERPLATE.fullmatch(norm) is not None


def quality_score(content: str, *, binary_format: bool = False) -> float:
    """Score in [0, 1]; below the configured threshold a chunk is hidden from results."""
    if binary_format:
        return 1.0
    text = content.strip()
    score = 1.0
    if len(text) < SHORT_CHARS:
        score -= SHORT_PENALTY
    if is_boilerplate(text):
        score -= BOILERPLATE_PENALTY
    if "\n" not in text and len(text) < ONE_LINE_CHARS:
        score -= ONE_LINE_PENALTY
    return round(min(1.0, max(0.0, score)), 6)
