"""Notes on a search answer: a filter that can match nothing says so (docs/search.md, 'Filters').

A filter on a value the index does not hold (``--field nosuch=x`` for a key
no schema declares, ``--category Guides`` when the categories are ``guide``
and ``howto``) is not an error: the answer is still the truth, no document
passes. But ``[]`` alone reads as "nothing relevant", so the answer carries a
note naming the value and what the index knows instead. The notes go into the
answer's ``notes`` (JSON, MCP) and, on the command line, to stderr.

What a request refuses outright (an unknown language, a field with no value)
is checked earlier, by :class:`~groove.search.request.SearchRequest`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from groove.parsers import PARSER_ALIASES
from groove.search.filters import DocumentFields
from groove.search.request import SearchRequest

#: At most this many known values are listed in one note.
MAX_LISTED = 12


def filter_notes(request: SearchRequest, *, declared: Sequence[str] | None,
                 documents: Sequence[DocumentFields]) -> list[str]:
    """One note per filter value that no indexed document can match.

    ``declared`` are the schema's declared field names (None: no schema);
    ``documents`` every indexed document's fields.
    """
    notes: list[str] = []
    for name in ("fields", "fields_not"):
        keys = getattr(request, name) or {}
        unknown = [key for key in keys if key not in (declared or ())]
        effect = "no document can match it" if name == "fields" else "it leaves nothing out"
        for key in unknown:
            where = (f"groove-schema.toml declares {_listing(declared)}" if declared
                     else "no groove-schema.toml declares any field")
            notes.append(f"{name}: {key!r} is not a declared field ({where}), so {effect}")
    if not documents:
        return notes
    asked: dict[str, list[str]] = {
        "category": [request.category] if request.category else [],
        "topic": [request.topic] if request.topic else [],
        "tags": [*(request.tags_any or ()), *(request.tags_all or ())],
        "languages": [PARSER_ALIASES.get(x, x) for x in request.languages or ()],
    }
    for name, values in asked.items():
        for value in dict.fromkeys(values):
            # the usual case, a value some document has, stops at the first such document
            if any(value in _values(name, d) for d in documents):
                continue
            known = {v for d in documents for v in _values(name, d)}
            held = f"it holds {_listing(known)}" if known else "it holds none"
            notes.append(f"{name}: no indexed document has {value!r} ({held})")
    return notes


def _values(name: str, document: DocumentFields) -> tuple[str, ...]:
    """What one document holds for a filter: its category, topic, tags or language."""
    if name == "tags":
        return tuple(document.tags)
    value = getattr(document, "language" if name == "languages" else name)
    return (value,) if value else ()


def _listing(values: Iterable[str]) -> str:
    ordered = sorted(values)
    shown = ", ".join(repr(v) for v in ordered[:MAX_LISTED])
    more = len(ordered) - MAX_LISTED
    return shown + (f" and {more} more" if more > 0 else "")
