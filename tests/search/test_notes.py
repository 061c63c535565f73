"""search/notes.py: a filter value gets a note exactly when no indexed document has it."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from groove.search.notes import filter_notes
from groove.search.request import SearchRequest

_NAMES = st.sampled_from(["guide", "howto", "faq", "Guide"])
_LANGS = st.sampled_from([None, "python", "rust"])


@dataclass(frozen=True)
class Doc:
    path: str
    category: str | None
    topic: str | None
    date: str | None
    tags: tuple[str, ...]
    language: str | None


_DOCS = st.lists(st.builds(Doc, path=st.just("a.md"), category=st.none() | _NAMES,
                           topic=st.none() | _NAMES, date=st.none(),
                           tags=st.lists(_NAMES, max_size=3).map(tuple), language=_LANGS),
                 min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(_DOCS, st.none() | _NAMES, st.lists(_NAMES, max_size=3),
       st.lists(st.sampled_from(["python", "rust", "go"]), max_size=2))
def test_a_note_exactly_for_each_value_no_document_has(docs, category, tags, languages):
    request = SearchRequest(query="q", category=category, tags_any=tags or None,
                            languages=languages or None)
    notes = filter_notes(request, declared=None, documents=docs)
    expected = set()
    if category is not None and not any(d.category == category for d in docs):
        expected.add(("category", category))
    for tag in tags:
        if not any(tag in d.tags for d in docs):
            expected.add(("tags", tag))
    for language in languages:
        if not any(d.language == language for d in docs):
            expected.add(("languages", language))
    got = {(note.split(":", 1)[0], note.split("'")[1]) for note in notes}
    assert got == expected and len(notes) == len(expected)


@given(st.dictionaries(_NAMES, st.lists(_NAMES, min_size=1, max_size=2), max_size=3),
       st.lists(_NAMES, max_size=3, unique=True))
def test_each_undeclared_field_key_is_named(fields, declared):
    request = SearchRequest(query="q", fields=fields or None)
    notes = filter_notes(request, declared=declared or None, documents=[])
    assert [n.split("'")[1] for n in notes] == [k for k in fields if k not in declared]
    assert all(n.startswith("fields: ") for n in notes)
