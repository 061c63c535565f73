"""Full-text query compilation: one split shared by FTS and match_spans.

The user-facing rules are in docs/search.md, 'Query syntax'.

Two entry points:

* :func:`parse_query` runs step 1 (exclusions) on the raw query and yields a
  :class:`ParsedQuery`.  Its ``positive_text`` is the *single source* for every
  later step: the FTS phrases and the match_spans terms are both computed from
  it, so the two can never disagree about what was excluded.
* :func:`query_phrases` runs steps 2-5 (quoted phrases, groups, script runs,
  short-run joining, dedupe, cap) on any text.  match_spans calls it on the
  positive text; :class:`ParsedQuery` adds step 6 (whole-text fallback) on top.

Step 6 lives in :class:`ParsedQuery`, not in :func:`query_phrases`, because
the match_spans contract (docs/citations.md) decides it: for ``ab cd``
match_spans must see "no phrase" and fall back to a whitespace split
(``ab``, ``cd``), while FTS searches the whole text ``"ab cd"``.

Exclusion grammar (choices made here are marked *decision*):

* A *group* starts at the beginning of the text, after whitespace, or right
  after the closing quote of a quoted exclusion (*decision*, see below).
* ``-"..."`` at a group start, with a closing quote, excludes the phrase
  (``""`` inside is a literal quote).  A blank phrase (``-""``, ``-"  "``)
  excludes nothing but is still removed from the positive text (*decision*:
  excluding "the empty string" would drop every document).
* Otherwise ``-`` at a group start followed by the rest of the
  whitespace-delimited group excludes that rest *verbatim* (``-foo,`` excludes
  ``foo,``; an unclosed ``-"foo`` excludes ``"foo`` because an unclosed quote
  is plain text), provided the rest does not start with ``-`` and contains at
  least one letter, digit or ``_`` (*decision*: ``--release``, ``->`` and
  ``---`` are ordinary text, not exclusions of ``-release``, ``>``, ``--``).
* A lone ``-`` and in-word hyphens (``tokio-rs``, ``e-mail``, ``"a"-b``) are
  plain text.  A ``-`` inside a positive quoted phrase is plain text.
* ``foo -"bar"-baz``: after the quoted exclusion ``bar`` closes, the tail is
  read as a new group, so ``-baz`` is a second exclusion and the positive text
  is ``foo``.  FTS and match_spans both use that positive text, so neither
  searches nor highlights ``baz`` (the lost highlight that docs/citations.md
  mentions cannot happen here).  A tail that does not start with ``-`` stays
  positive: ``-"bar"baz`` excludes ``bar`` and searches ``baz``.
* An unclosed quote makes the rest of the text free of quoted regions (its
  quotes are plain text), both here and in :func:`query_phrases`, which keeps
  the scan linear on ``"`` storms.

What an exclusion then does on each leg is said in one place,
:mod:`groove.search.exclusions`.

U+0000 and lone surrogates are turned into spaces before parsing: neither can
be a meaningful search term, and a lone surrogate cannot be encoded for the
full-text engine at all.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass

from groove.fulltext.scripts import OTHER as _OTHER
from groove.fulltext.scripts import SCRIPT_RANGES

logger = logging.getLogger("groove.search.query")

PHRASE_CAP = 32
MIN_PHRASE_CHARS = 3  # shorter fragments are joined to their neighbours (step 4)

_UNREPRESENTABLE = re.compile("[\x00\ud800-\udfff]")

_ASCII_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


@dataclass(frozen=True)
class ParsedQuery:
    """A query after exclusion removal and phrase splitting.

    ``phrases`` are the query's phrases: :func:`query_phrases` of ``positive_text``,
    or (step 6) the whole trimmed positive text when that yields nothing and it
    has at least 3 code points.  ``capped`` is true when the 32-phrase cap
    dropped phrases. ``whole_text_fallback`` is true when ``phrases`` is the
    step-6 fallback (match_spans then splits on whitespace instead).
    """

    raw: str
    positive_text: str
    exclusions: tuple[str, ...]
    phrases: tuple[str, ...]
    capped: bool
    whole_text_fallback: bool = False

    @property
    def model_text(self) -> str:
        """What the embedder and the reranker read: the positive text, else the raw query
        (a query of exclusions only still has something to embed)."""
        return self.positive_text.strip() or self.raw.strip()

    @property
    def quoted(self) -> tuple[str, ...]:
        """The quoted phrases of the positive text: requirements (docs/search.md, 'Quotes and codes')."""
        return quoted_phrases(self.positive_text)

    @property
    def codes(self) -> tuple[str, ...]:
        """The codes of the positive text outside quotes (``PG-E311``, ``BL-305``, ``P2``).

        Soft requirements (docs/search.md, 'Quotes and codes'): see :func:`code_terms`.
        """
        outside = " ".join(segment for segment, quoted in _segments(self.positive_text)
                           if not quoted)
        return code_terms(outside)

    @property
    def has_content(self) -> bool:
        """False when the positive text holds no letter or digit (``"``, ``-``, ``*`` ...)."""
        return has_content_word(self.positive_text)

    @property
    def split_phrases(self) -> tuple[str, ...]:
        """Steps 2-5 only: the phrases without the whole-text fallback (match_spans' terms)."""
        return () if self.whole_text_fallback else self.phrases

    @property
    def fulltext_phrases(self) -> tuple[str, ...]:
        """What the full-text leg searches: ``phrases``, else a short (1-2 character) text.

        The full-text index matches words and CJK characters of any length,
        so a query too short to make a phrase (``猫``, ``AI``) is still
        searched as a whole; empty when it holds no letter or digit.
        """
        if self.phrases:
            return self.phrases
        whole = self.positive_text.strip()
        return (whole,) if any(c.isalnum() for c in whole) else ()


def parse_query(raw: str) -> ParsedQuery:
    """Split ``raw`` into positive text and exclusions, then into FTS phrases."""
    positive, exclusions = split_exclusions(raw)
    phrases, capped = _capped_phrases(positive, warn=True)
    fallback = False
    if not phrases:
        whole = positive.strip()
        if len(whole) >= MIN_PHRASE_CHARS:
            phrases, fallback = [whole], True
    return ParsedQuery(
        raw=raw,
        positive_text=positive,
        exclusions=exclusions,
        phrases=tuple(phrases),
        capped=capped,
        whole_text_fallback=fallback,
    )


def split_exclusions(raw: str) -> tuple[str, tuple[str, ...]]:
    """Step 1 alone: (positive text, exclusions), without the phrase split or its warnings."""
    positive, exclusions = _strip_exclusions(_UNREPRESENTABLE.sub(" ", raw))
    return positive, tuple(dict.fromkeys(exclusions))


def query_phrases(text: str, *, warn_on_cap: bool = True) -> list[str]:
    """Query steps 2-5 on ``text``: the deduplicated, capped phrase list (docs/search.md).

    Returns ``[]`` when no fragment reaches 3 code points; step 6 (whole-text
    fallback) is the caller's business (see the module docstring).  Every
    phrase is a contiguous substring of ``text``, except that a quoted phrase
    has its ``""`` escapes undone.  ``warn_on_cap`` exists so that per-hit
    callers (match_spans) do not repeat the warning parse_query already logged.
    """
    return _capped_phrases(text, warn=warn_on_cap)[0]


def _capped_phrases(text: str, *, warn: bool) -> tuple[list[str], bool]:
    found = list(dict.fromkeys(_raw_phrases(text)))
    if len(found) <= PHRASE_CAP:
        return found, False
    if warn:
        logger.warning(
            "query has %d distinct phrases; only the first %d are searched and highlighted",
            len(found),
            PHRASE_CAP,
        )
    return found[:PHRASE_CAP], True


# --- step 1: exclusions -------------------------------------------------------


def _closing_quote(text: str, start: int) -> int:
    """Index just past the quote closing the one at ``start``, or -1 if unclosed."""
    i = start + 1
    while True:
        j = text.find('"', i)
        if j == -1:
            return -1
        if text.startswith('"', j + 1):
            i = j + 2
            continue
        return j + 1


def _unquote(region: str) -> str:
    return region[1:-1].replace('""', '"')


def _strip_exclusions(text: str) -> tuple[str, list[str]]:
    """Remove exclusion groups from ``text``; return (positive text, exclusions)."""
    out: list[str] = []
    exclusions: list[str] = []
    i, n = 0, len(text)
    group_start = True
    quotes_live = True  # False after an unclosed quote: the rest has no regions
    while i < n:
        c = text[i]
        if c.isspace():
            out.append(c)
            i += 1
            group_start = True
            continue
        if c == '"' and quotes_live:
            end = _closing_quote(text, i)
            if end == -1:
                quotes_live = False
                out.append(c)
                i += 1
            else:
                out.append(text[i:end])
                i = end
            group_start = False
            continue
        if c == "-" and group_start:
            if quotes_live and text.startswith('"', i + 1):
                end = _closing_quote(text, i + 1)
                if end != -1:
                    phrase = _unquote(text[i + 1 : end])
                    if phrase.strip():
                        exclusions.append(phrase)
                    i = end
                    continue  # group_start stays True: the tail is a new group
            end = i + 1
            while end < n and not text[end].isspace():
                end += 1
            term = text[i + 1 : end]
            if _is_exclusion_term(term):
                exclusions.append(term)
                i = end
                continue
        out.append(c)
        i += 1
        group_start = False
    return "".join(out), exclusions


def _is_exclusion_term(term: str) -> bool:
    return (
        bool(term) and not term.startswith("-") and any(_is_word_char(c) and c != "-" for c in term)
    )


# --- steps 2-4: phrases ---------------------------------------------------------


def _segments(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into plain stretches and closed quoted phrases (unquoted), in order."""
    segments: list[tuple[str, bool]] = []
    plain_start = 0
    i = 0
    while True:
        q = text.find('"', i)
        if q == -1:
            break
        end = _closing_quote(text, q)
        if end == -1:
            break  # unclosed: this quote and everything after is plain
        segments.append((text[plain_start:q], False))
        segments.append((_unquote(text[q:end]), True))
        i = plain_start = end
    segments.append((text[plain_start:], False))
    return segments


def _raw_phrases(text: str) -> list[str]:
    """Phrases in query order, before dedupe and cap."""
    phrases: list[str] = []
    for segment, quoted in _segments(text):
        if not quoted:
            phrases.extend(_plain_phrases(segment))
        elif len(segment) >= MIN_PHRASE_CHARS and segment.strip():
            phrases.append(segment)
    return phrases


def quoted_phrases(text: str) -> tuple[str, ...]:
    """The closed ``"..."`` phrases of ``text`` that hold a letter or digit, deduplicated."""
    found = (segment.strip() for segment, quoted in _segments(text) if quoted)
    return tuple(dict.fromkeys(p for p in found if has_content_word(p)))


#: A code: an ASCII word that starts with a letter and holds a digit, with optional
#: ``-``/``_``-joined parts (``PG-E311``, ``BL-305``, ``P2``, ``CO2``, ``IPv6``). A word
#: that starts with a digit is a quantity (``10km``, ``24h``, ``2026``), not a code.
_CODE = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*(?![A-Za-z0-9_-])")


def code_terms(text: str) -> tuple[str, ...]:
    """The codes of ``text`` (see :data:`_CODE`), deduplicated in order."""
    found = (m.group(0) for m in _CODE.finditer(text))
    return tuple(dict.fromkeys(c for c in found if any(ch.isdigit() for ch in c)))


def has_content_word(text: str) -> bool:
    """True when ``text`` holds a letter or a digit (``"``, ``-`` or ``*`` alone do not count)."""
    return any(c.isalnum() for c in text)


def _is_word_char(c: str) -> bool:
    """Letter, digit (any number), combining mark, ``_`` or ``-``.

    Marks count as word characters (decision) so that decomposed accents and
    Indic vowel signs do not cut a word in two.
    """
    if c in _ASCII_WORD:
        return True
    if c.isascii():
        return False
    return unicodedata.category(c)[0] in "LNM"


def _script(c: str) -> int:
    o = ord(c)
    for lo, hi, script in SCRIPT_RANGES:
        if lo <= o <= hi:
            return script
    return _OTHER


def is_cjk_char(c: str) -> bool:
    """True for a kana or kanji character (the scripts :func:`_script_runs` separates)."""
    return _script(c) != _OTHER


def _plain_phrases(text: str) -> list[str]:
    phrases: list[str] = []
    group: list[str] = []
    for c in text:
        if _is_word_char(c):
            group.append(c)
        elif group:
            phrases.extend(_group_phrases("".join(group)))
            group = []
    if group:
        phrases.extend(_group_phrases("".join(group)))
    return phrases


def _script_runs(group: str) -> list[str]:
    """Cut a group where the script changes; a combining mark keeps the script before it."""
    runs: list[str] = []
    start = 0
    current = -1
    for i, c in enumerate(group):
        script = current if (current >= 0 and _is_mark(c)) else _script(c)
        if i > 0 and script != current:
            runs.append(group[start:i])
            start = i
        current = script
    runs.append(group[start:])
    return runs


def _is_mark(c: str) -> bool:
    return not c.isascii() and unicodedata.category(c)[0] == "M"


def _group_phrases(group: str) -> list[str]:
    """Step 4: join short runs forward, trailing short runs backward."""
    out: list[str] = []
    last = -1  # index in ``out`` of the group's most recent unit
    last_is_single_run = False
    pending = ""
    for run in _script_runs(group):
        if not pending and len(run) >= MIN_PHRASE_CHARS:
            out.append(run)
            last, last_is_single_run = len(out) - 1, True
            continue
        pending += run
        if len(pending) >= MIN_PHRASE_CHARS:
            out.append(pending)
            last, last_is_single_run = len(out) - 1, False
            if len(run) >= MIN_PHRASE_CHARS and len(run) < len(pending):
                out.append(run)  # the join extended a long run: emit it alone too
            pending = ""
    if pending and last >= 0:
        base = out[last]
        out[last] = base + pending
        if last_is_single_run:
            out.insert(last + 1, base)
    return out
