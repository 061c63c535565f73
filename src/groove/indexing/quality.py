"""A cheap per-chunk quality score (docs/indexing.md, "Quality score") and the stub test.

Start at 1.0 and subtract for each sign of a stub; the penalties stack, so a
bare "TBD" scores 0 while a real one-line sentence keeps 0.7. Chunks from
binary formats (PDF pages, slides, sheets) are exempt: their shape says
nothing about their worth; source-code definitions are exempt from the two
length penalties for the same reason.

:func:`is_link_or_metadata_only` recognises a body that carries no prose of
its own: every line is a link, a bare URL, a date, a short ``label: value``
metadata line, or a blockquote/list of those (``> 日本語版: [x.ja.md](x.ja.md)``,
``Last reviewed: 2025-02-10``), or a list of short links with short notes (a
"Related" list: ``- [Watcher](watch.md) — how files are re-indexed``,
``- [[rust-errors]] - [Error handling](errors.md)``); wikilinks and embeds
count as links like Markdown links do. Chunking folds such bodies into the next
chunk (docs/search.md, "Stub folding"); the quality score penalises them when
one still stands alone (a document made of nothing else).
"""

from __future__ import annotations

import functools
import re
import unicodedata

SHORT_CHARS = 30
SHORT_PENALTY = 0.6
BOILERPLATE_PENALTY = 0.5
ONE_LINE_CHARS = 80
ONE_LINE_PENALTY = 0.3
LINK_ONLY_PENALTY = 0.5

#: Placeholder phrases, compared after removing case, spaces and punctuation.
BOILERPLATE_PHRASES: tuple[str, ...] = (
    "tbd", "tba", "todo", "fixme", "wip", "xxx", "n/a", "coming soon", "to be written",
    "to be added", "to be determined", "to be done", "to do", "work in progress",
    "placeholder", "under construction", "draft", "stub", "lorem ipsum",
    "詳細は後述", "詳細は後述します", "後述", "準備中", "作成中", "執筆中", "工事中", "未定",
    "未記入", "検討中", "調整中", "記載予定", "追記予定", "後で書く", "あとで書く",
)


class _Dropped(dict[int, int | None]):
    """A ``str.translate`` table deleting whitespace, punctuation and symbols, filled in
    per code point on first sight (the lookups of known ones stay in C)."""

    def __missing__(self, code: int) -> int | None:
        char = chr(code)
        kept = None if char.isspace() or unicodedata.category(char)[0] in "PS" else code
        self[code] = kept
        return kept


_DROPPED = _Dropped()


def _normalise(text: str) -> str:
    """Lower-case text with whitespace, punctuation and symbols (markdown markers) removed."""
    return unicodedata.normalize("NFKC", text).casefold().translate(_DROPPED)


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


#: A Markdown link or image, or a wikilink or embed (``[[target#heading|label]]``); the
#: group ``text`` is what a reader sees of it.
#: No part of a link crosses the next ``[``, and a destination holds at most balanced
#: ``(…)`` (``wiki/Rust_(language)``): a line of ``[[[[…`` or ``[x](`` fails at each
#: opening at once instead of scanning the rest of the line from every one of them, a
#: cost that grew with the square of the line.
_MD_LINK = re.compile(
    r"!?\[\[(?:[^\[\]|\n]*\|)?(?P<wiki>[^\[\]\n]*)\]\]"
    r"|!?\[(?P<text>[^\[\]\n]*)\]\((?:[^()\n]|\([^()\n]*\))*\)")


def _link_texts(text: str) -> str:
    """``text`` with every link replaced by what a reader sees of it (its text or label)."""
    return _MD_LINK.sub(lambda m: m.group("wiki") or m.group("text") or "", text)


_URL = re.compile(r"<?(?:https?|ftp|mailto):[^\s>]*>?|<[^<>\s]+>")
_DATE = re.compile(
    r"\d{4}[-/.]\d{1,2}(?:[-/.]\d{1,2})?(?:[T ]\d{1,2}:\d{2}(?::\d{2})?Z?)?"
    r"|\d{4}年\d{1,2}月(?:\d{1,2}日)?|\d{1,2}月\d{1,2}日"
)
#: A line prefix that carries no words: blockquote, list and emphasis markers.
_LINE_MARKUP = re.compile(r"^[\s>*+\-#|]*(?:\d+[.)]\s+)?")
#: An HTML tag (``<a id="slices"></a>``, ``<br/>``, ``<img src=...>``) or comment: markup,
#: not words, so a line of anchors reads as bare as a line of links.
_HTML_TAG = re.compile(r"<!--(?:[^<\n]|<(?!!--))*?-->|</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>")
#: A horizontal rule or a table's delimiter row: ``---``, ``***``, ``___``, ``|:--|--:|``.
#: Possessive runs of space (``\s*+``): a long run of spaces is not cut in every way
#: between the patterns' neighbouring ``\s*`` before the line is given up.
_RULE = re.compile(r"^\s*+(?:[-*_=]\s*+){3,}$|^\s*+\|?(?:\s*+:?-++:?\s*+\|)+\s*+:?-*+:?\s*$")
#: ``label: value`` with a short label (at most 4 words or 12 CJK characters). The label
#: starts after the emphasis, with a character that cannot be emphasis: otherwise a long
#: run of ``*_*_…`` could be cut between the two in as many ways as it is long, and
#: matching it took minutes.
_METADATA_LINE = re.compile(r"^[*_]*[^\s:：*_][^:：]{0,30}?[*_]*\s*[:：]\s*(?P<value>.*)$")
METADATA_VALUE_MAX_CHARS = 40


#: What every match of :data:`_DATE` holds: a digit right before ``-/.年月``.
_DATE_MARK = re.compile(r"\d[-/.年月]")


def _is_bare_line(line: str) -> bool:
    """True when ``line`` holds no prose: markup, HTML tags, rules, links, URLs and dates only.

    Tags, links, URLs and dates are blanked out in that order; each pattern is
    tried only on a text holding the mark all its matches hold (``<``; ``[``;
    ``:`` or ``<``; a digit before ``-/.年月``), since a pattern that cannot match
    leaves the text as it is. Every line of every section is asked this while
    chunking, and most prose lines hold none of the marks.
    """
    if _RULE.match(line):
        return True
    rest = _HTML_TAG.sub(" ", line) if "<" in line else line
    if "[" in rest:
        rest = _MD_LINK.sub(" ", rest)
    if ":" in rest or "<" in rest:
        rest = _URL.sub(" ", rest)
    if _DATE_MARK.search(rest):
        rest = _DATE.sub(" ", rest)
    return not any(ch.isalnum() for ch in _LINE_MARKUP.sub("", rest))


def _is_metadata_line(line: str) -> bool:
    """``Owner: ops`` / ``**最終更新**：2025年2月10日`` — a short label and a short value."""
    text = _LINE_MARKUP.sub("", line).strip()
    match = _METADATA_LINE.match(text)
    if match is None:
        return False
    label = text[: match.start("value")].rstrip(" :：*_")
    if len(label.split()) > 4 or len(label) > 30:
        return False
    value = match.group("value")
    return _is_bare_line(value) or len(_link_texts(value)) <= METADATA_VALUE_MAX_CHARS


#: A list item that starts with a reference: ``- [text](url)``, ``- [text][label]``,
#: ``- [label][]``, ``- <url>``, ``- https://...`` or ``- `docs/x.md```; the rest of the
#: line is its note. A lone ``[label]`` is not one: ``- [ ] buy milk`` is a task.
_LIST_MARKER = re.compile(r"^\s*(?:>\s*)*(?:[-*+]|\d+[.)])\s+")
_REFERENCE = re.compile(
    r"^(?:!?\[\[(?:[^\]|]*\|)?(?P<wiki>[^\]]*)\]\]"
    r"|!?\[(?P<text>[^\]]*)\](?:\([^)]*\)|\[[^\]\n]*\])"
    r"|<[^>\s]+>|(?:https?|ftp|mailto):\S+"
    r"|`(?P<code>[^`\s]*[/.][^`\s]*)`)")
_NOTE_SEPARATOR = re.compile(r"^\s*(?:[—–:：|]|--?|\(|（)?\s*")
#: A link text or a note longer than this is prose, not a pointer.
LINK_TEXT_MAX_WORDS = 6
LINK_NOTE_MAX_WORDS = 12
#: For text without spaces (Japanese), characters stand in for words.
CJK_CHARS_PER_WORD = 3


def _words(text: str) -> int:
    """Words in ``text``; a run without spaces counts one word per CJK_CHARS_PER_WORD characters."""
    return sum(max(1, len(w) // CJK_CHARS_PER_WORD) if not w.isascii() else 1
               for w in text.split())


def _is_link_list_line(line: str) -> bool:
    """``- [Watcher](watch.md) — how files are re-indexed``: a short pointer with a short note."""
    marker = _LIST_MARKER.match(line)
    if marker is None:
        return False
    rest = line[marker.end():].strip()
    ref = _REFERENCE.match(rest)
    if ref is None:
        return False
    if _words(_link_texts(ref.group("text") or ref.group("wiki") or "")) > LINK_TEXT_MAX_WORDS:
        return False
    note = _NOTE_SEPARATOR.sub("", rest[ref.end():], count=1)
    return _words(_link_texts(note)) <= LINK_NOTE_MAX_WORDS


@functools.lru_cache(maxsize=256)  # chunking asks it of a body, then scores the same text
def is_link_or_metadata_only(content: str) -> bool:
    """True when every non-blank line is a link, URL, date, short metadata line, or link-list item.

    A link-list item is a list entry that starts with a short link (at most
    :data:`LINK_TEXT_MAX_WORDS` words of link text), a URL or an inline-code
    path, followed by at most :data:`LINK_NOTE_MAX_WORDS` words of note — a
    "Related" / "See also" list.
    """
    lines = [ln for ln in content.splitlines() if ln.strip()]
    return bool(lines) and all(
        _is_bare_line(ln) or _is_metadata_line(ln) or _is_link_list_line(ln) for ln in lines)


def quality_score(content: str, *, binary_format: bool = False,
                  definition: bool = False) -> float:
    """Score in [0, 1]; below the configured threshold a chunk is hidden from results.

    ``definition``: the chunk is a source-code definition (or a piece of one),
    so being short is its shape, not a sign of a stub (``MAXYEAR = 9999`` is
    worth finding): the two length penalties are skipped, the boilerplate
    one still applies. The code chunker never leaves a short piece of a
    longer definition standing alone, so a short chunk with a kind is a
    whole definition.
    """
    if binary_format:
        return 1.0
    text = content.strip()
    score = 1.0
    if len(text) < SHORT_CHARS and not definition:
        score -= SHORT_PENALTY
    if is_boilerplate(text):
        score -= BOILERPLATE_PENALTY
    elif is_link_or_metadata_only(text):
        score -= LINK_ONLY_PENALTY
    if "\n" not in text and len(text) < ONE_LINE_CHARS and not definition:
        score -= ONE_LINE_PENALTY
    return round(min(1.0, max(0.0, score)), 6)


#: A line that only brings names in: ``use``/``mod x;``/``extern crate`` (Rust),
#: ``import``/``from x import`` (Python, JS, Java, Go), ``package``, ``#include``,
#: ``using``, ``require``.
_IMPORT_LINE = re.compile(
    r"^(?:pub(?:\([^)]*\))?\s+)?(?:use\s|extern\s+crate\s|mod\s+\w+\s*;)"
    r"|^import\b|^from\s+\S+\s+import\b|^package\s|^#\s*include\b|^using\s"
    r"|^(?:const|let|var)\s+[\w{}\s,]+=\s*require\(|^require\b|^export\s+(?:\*|\{[^}]*\})\s+from\b")
#: A line that only annotates what follows: an attribute or a decorator (``#[derive(..)]``,
#: ``@dataclass``), or a comment.
_ANNOTATION_LINE = re.compile(r"^(?:#!?\[|@\w|//|/\*|\*|#(?!\s*include))")
_BRACES = frozenset("{}()[];,")


def is_import_only(content: str) -> bool:
    """True when a code chunk holds nothing but imports, attributes, comments and braces,
    with at least one import or attribute (``use std::error::Error;\\nuse std::fs::File;``).

    Such a chunk (the lines before a file's first definition) keeps every
    byte in the index, but it answers no question about what the code
    does: search ranks it as a stub (docs/indexing.md, "Source code"). A
    multi-line import (``from x import (`` ... ``)``, ``use std::{`` ... ``};``)
    counts as one import.
    """
    seen = False
    open_import = False
    for raw in content.splitlines():
        line = raw.strip()
        if not line:
            continue
        if open_import:
            open_import = not any(closer in line for closer in (")", "}"))
            continue
        if _IMPORT_LINE.match(line):
            seen = True
            open_import = (line.count("(") > line.count(")")
                           or line.count("{") > line.count("}"))
        elif _ANNOTATION_LINE.match(line):
            seen = seen or line.startswith(("#[", "#![", "@"))
        elif not set(line) <= _BRACES:
            return False
    return seen
