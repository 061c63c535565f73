"""The FTS leg skips phrases so common that bm25 gives them no weight."""

from __future__ import annotations

import numpy as np

from groove.models import Chunk, DocumentRecord
from groove.search.candidates import _informative
from groove.search.query import parse_query
from groove.store import open_store


def _store(tmp_path, texts):
    store = open_store(tmp_path / "x.db", create=True)
    store.set_meta(model_id="test", dim=4, context_mode="off")
    for i, text in enumerate(texts):
        rec = DocumentRecord(path=f"d{i}.md", sha256=str(i), title=f"d{i}", category=None,
                             topic=None, date=None, tags=(), tags_invalid=False, metadata={},
                             size=1, mtime=0.0)
        chunk = Chunk(0, None, None, "", text, 5, 1.0)
        store.write_document(rec, [chunk], np.eye(4, dtype=np.float32)[[i % 4]])
    return store


def test_phrase_in_most_rows_is_dropped_but_rare_ones_stay(tmp_path):
    texts = [f"the note number {i}" for i in range(9)] + ["the kraken appears"]
    store = _store(tmp_path, texts)
    try:
        assert store.phrase_row_counts(["the", "kraken"]) == {"the": 10}
        parsed = parse_query("the kraken")
        assert _informative(store, parsed, 10).phrases == ("kraken",)
        assert store.fts_search(_informative(store, parsed, 10).fts_expression, (1, 1, 1)) == \
            store.fts_search('"kraken"', (1, 1, 1))
    finally:
        store.close()


def test_a_common_phrase_alone_is_kept(tmp_path):
    store = _store(tmp_path, [f"the note {i}" for i in range(6)])
    try:
        parsed = parse_query("the")
        assert _informative(store, parsed, 6) == parsed
        parsed_two = parse_query("the not")  # both common: nothing else would remain
        assert _informative(store, parsed_two, 6) == parsed_two
    finally:
        store.close()
