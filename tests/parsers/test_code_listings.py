"""Rust listings like a book's (tests/fixtures/rust_listings): an ``impl`` block is found as
a block, never as its header line alone, and the ``use`` lines above a function never win
over the function (docs/indexing.md, "Source code")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from groove.search.request import SearchRequest

LISTINGS = Path(__file__).resolve().parents[1] / "fixtures" / "rust_listings"


@pytest.fixture(scope="module")
def listings_kb(embedder, tmp_path_factory):
    from groove.config import load_config
    from groove.kb import KnowledgeBase

    root = tmp_path_factory.mktemp("listings")
    shutil.copytree(LISTINGS, root / "kb")
    kb = KnowledgeBase(load_config(kb_path=root / "kb", cwd=root,
                                   overrides={"parsers": {"enabled": ["md", "rust"]}}),
                       embedder=embedder)
    kb.index()
    yield kb
    kb.close()


def _chunks(kb):
    with kb.reading() as store:
        return [(d.path, c) for d in store.list_documents() for c in store.document_chunks(d.id)]


def test_no_chunk_is_only_an_impl_header_and_each_impl_is_one_chunk(listings_kb):
    chunks = _chunks(listings_kb)
    assert not any(c.content.strip().startswith("impl") and "\n" not in c.content.strip()
                   for _, c in chunks)
    impls = [(p, c) for p, c in chunks if c.content.startswith("impl Summary for")]
    assert len(impls) == 2
    for _, chunk in impls:  # the one method, its impl header and closing brace
        assert (chunk.heading, chunk.symbol_kind) == ("summarize", "method")
        assert chunk.scope in ("impl Summary for NewsArticle", "impl Summary for SocialPost")
        assert chunk.context.endswith(f"{chunk.scope} › fn summarize")
        assert chunk.content.rstrip().endswith("}\n}")


def test_the_impl_block_answers_which_listing_implements_a_trait(listings_kb):
    hits = listings_kb.search(SearchRequest(
        query="which listing implements a trait Summary for a struct", limit=5)).results
    assert hits[0].path == "trait-on-two-types/src/lib.rs"
    assert hits[0].content.startswith("impl Summary for ")


def test_use_lines_do_not_answer_a_question_about_the_question_mark_operator(listings_kb):
    hits = listings_kb.search(SearchRequest(
        query="which listing shows the ? operator propagating an error", limit=5)).results
    assert hits[0].symbol_kind == "function"
    assert not any(h.content.startswith("use std::") for h in hits)


def test_use_lines_still_answer_a_question_naming_the_imported_module(listings_kb):
    hits = listings_kb.search(SearchRequest(
        query="which listing imports std::error", limit=3)).results
    assert hits[0].content.startswith("use std::error::Error;")
