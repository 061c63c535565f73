"""End to end: a KB with every opt-in format plus hostile files indexes what it can."""

from __future__ import annotations

import logging

from office_files import (
    CFB_HEADER,
    make_docx,
    make_pdf,
    make_pptx,
    make_xlsx,
    make_zip_bomb,
)

from groove.config import load_config
from groove.kb import KnowledgeBase

ALL_FORMATS = ["md", "pdf", "docx", "xlsx", "pptx"]


def good_files() -> dict[str, bytes]:
    return {
        "notes/readme.md": b"# Readme\n\nThe knowledge base covers rollout plans and budgets.\n",
        "papers/rollout.pdf": make_pdf(
            [["The rollout plan moves the search service to the new cluster in three",
              "phases, starting with the read replicas and ending with the writers."]],
            title="Rollout Plan"),
        "docs/design.docx": make_docx(
            [("h1", "Design"), ("p", "The indexer writes one transaction per document."),
             ("table", [["component", "owner"], ["store", "ana"]])], title="Design Doc"),
        "sheets/budget.xlsx": make_xlsx({"Budget": [["item", "cost"], ["servers", 4200]]}),
        "decks/kickoff.pptx": make_pptx(
            [("Kickoff", "Goals for the quarter: ship search.", "Thank the team")]),
    }


def bad_files(good: dict[str, bytes]) -> dict[str, bytes]:
    return {
        "bad/bomb.docx": make_zip_bomb(),
        "bad/broken.pdf": good["papers/rollout.pdf"][:400],
        "bad/locked.xlsx": CFB_HEADER,
    }


def test_every_format_indexes_and_hostile_files_are_skipped_with_a_warning(
        tmp_path, embedder, caplog):
    good = good_files()
    bad = bad_files(good)
    root = tmp_path / "kb"
    for rel, data in {**good, **bad}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    config = load_config(kb_path=root, cwd=tmp_path,
                         overrides={"parsers": {"enabled": ALL_FORMATS}})
    kb = KnowledgeBase(config, embedder=embedder)
    try:
        with caplog.at_level(logging.WARNING, logger="groove"):
            summary = kb.index()
        docs = {d.path: d for d in kb.store.list_documents()}
        chunks = {path: kb.store.document_chunks(doc.id) for path, doc in docs.items()}
    finally:
        kb.close()

    assert (summary.indexed, summary.skipped) == (len(good), len(bad))
    assert set(docs) == set(good)
    assert {p for p, d in docs.items() if d.binary_format} == set(good) - {"notes/readme.md"}
    assert docs["papers/rollout.pdf"].title == "Rollout Plan"
    assert docs["docs/design.docx"].title == "Design Doc"
    headings = {path: [c.heading for c in rows] for path, rows in chunks.items()}
    assert headings["papers/rollout.pdf"] == ["p.1"]
    assert headings["docs/design.docx"] == ["Design"]
    assert headings["sheets/budget.xlsx"] == ["Sheet: Budget"]
    assert headings["decks/kickoff.pptx"] == ["Slide 1: Kickoff"]
    assert "component\towner\nstore\tana" in chunks["docs/design.docx"][0].content
    assert chunks["decks/kickoff.pptx"][0].content.endswith("[notes] Thank the team")

    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    for rel, reason in [("bad/bomb.docx", "zip-bomb guard"), ("bad/broken.pdf", "PDF"),
                        ("bad/locked.xlsx", "password-protected or legacy format")]:
        lines = [w for w in warnings if rel in w]
        assert len(lines) == 1, (rel, warnings)
        assert reason in lines[0]
        assert "Traceback" not in lines[0]
