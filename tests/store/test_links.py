"""Which document a link names (store/links.py), over the Obsidian-style vault fixture."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from groove.store.links import AMBIGUOUS, MISSING, Candidate, link_key, resolve

VAULT = Path(__file__).parent.parent / "fixtures" / "vault"

#: Every link of the fixture as Obsidian resolves it:
#: (source, target as written, anchor, embed) -> (document, problem).
EXPECTED: dict[tuple[str, str, str | None, bool], tuple[str | None, str | None]] = {
    ("Home.md", "Rate limiting", None, False): ("Rate limiting.md", None),
    ("Home.md", "api/retries", "Backoff", False): ("api/retries.md", None),
    ("Home.md", "Throttling", None, False): ("Rate limiting.md", None),  # an alias
    ("Home.md", "rate LIMITING", "^quota", False): ("Rate limiting.md", None),  # any case
    ("Home.md", "ops/runbook", None, True): ("ops/runbook.md", None),  # an embed
    ("Home.md", "Missing note", None, False): (None, MISSING),
    ("Home.md", "ops/runbook.md", "restore", False): ("ops/runbook.md", None),
    ("Home.md", "ops/My Note.md", None, False): ("ops/My Note.md", None),  # <…> and %20
    ("Home.md", "overview", None, False): (None, AMBIGUOUS),  # api/ and guides/, neither beside
    ("Home.md", "guides/overview", None, False): ("guides/overview.md", None),
    ("Home.md", "retries.md", None, False): ("api/retries.md", None),  # the only one by name
    ("Rate limiting.md", "api/retries", "Backoff", False): ("api/retries.md", None),
    ("api/retries.md", "Rate limiting", "Quotas", False): ("Rate limiting.md", None),
    ("api/overview.md", "overview", None, False): ("api/overview.md", None),  # beside it
    ("api/overview.md", "retries", None, False): ("api/retries.md", None),
    ("api/client.md", "overview", None, False): ("api/overview.md", None),  # beside it
    ("api/client.md", "retries", "Backoff", False): ("api/retries.md", None),
    ("guides/overview.md", "ops/runbook", None, False): ("ops/runbook.md", None),
    ("ops/My Note.md", "../Home.md", None, False): ("Home.md", None),
    ("ops/My Note.md", "../Rate limiting.md", "quotas", False): ("Rate limiting.md", None),
    ("projects/alpha/plan.md", "../../ops/runbook.md", None, False): ("ops/runbook.md", None),
    ("projects/alpha/plan.md", "overview", None, False): (None, AMBIGUOUS),
    ("projects/alpha/plan.md", "/Home", None, False): ("Home.md", None),  # from the root
    ("projects/alpha/plan.md", "./notes", None, False): (None, MISSING),  # beside only
    ("projects/alpha/plan.md", "Request quotas", None, False): ("Rate limiting.md", None),
}


def _table(kb) -> dict[tuple[str, str, str | None, bool], tuple[str | None, str | None]]:
    """Every stored link of the index, keyed like EXPECTED (duplicates collapse)."""
    return {(row.source_path, row.target, row.anchor, row.embed): (row.target_path, row.problem)
            for doc in kb.list_documents() for row in kb.links(doc.path)}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return Path(shutil.copytree(VAULT, tmp_path / "vault"))


def test_every_link_of_the_vault_resolves_as_obsidian_does(make_kb, vault: Path) -> None:
    kb = make_kb(vault)
    kb.index(embed=False)
    assert _table(kb) == EXPECTED
    counts = {doc.path: len(kb.links(doc.path)) for doc in kb.list_documents()}
    assert counts["Home.md"] == 12  # both spellings of My Note count; no URL, no code


def test_backlinks_name_the_linking_document_heading_and_line(make_kb, vault: Path) -> None:
    kb = make_kb(vault)
    kb.index(embed=False)
    back = kb.links("api/retries.md", backlinks=True)
    assert [(b.source_path, b.anchor) for b in back] == [
        ("Home.md", "Backoff"), ("Home.md", None), ("Rate limiting.md", "Backoff"),
        ("api/client.md", "Backoff"), ("api/overview.md", None)]
    related = next(b for b in back if b.source_path == "Rate limiting.md")
    assert related.source_heading == "Quotas" or related.source_heading == "Related"
    assert related.source_line  # the linking chunk's first line, never empty


def test_links_follow_renames_deletes_and_new_namesakes(make_kb, vault: Path) -> None:
    kb = make_kb(vault)
    kb.index(embed=False)
    # A rename: the links by file name follow it; the path-written ones now miss.
    (vault / "api" / "retries.md").rename(vault / "api" / "retrying.md")
    kb.index(embed=False)
    table = _table(kb)
    assert table[("Home.md", "api/retries", "Backoff", False)] == (None, MISSING)
    assert [b.source_path for b in kb.links("api/retrying.md", backlinks=True)] == []
    (vault / "api" / "retrying.md").rename(vault / "ops" / "retries.md")
    kb.index(embed=False)
    table = _table(kb)
    assert table[("Home.md", "retries.md", None, False)] == ("ops/retries.md", None)
    assert table[("api/client.md", "retries", "Backoff", False)] == ("ops/retries.md", None)
    assert table[("Home.md", "api/retries", "Backoff", False)] == (None, MISSING)
    # A delete: what pointed at it points at nothing.
    (vault / "Rate limiting.md").unlink()
    kb.index(embed=False)
    table = _table(kb)
    assert table[("Home.md", "Throttling", None, False)] == (None, MISSING)
    assert table[("ops/My Note.md", "../Rate limiting.md", "quotas", False)] == (None, MISSING)
    # A namesake appears: a unique name becomes ambiguous, never a guess.
    (vault / "guides" / "runbook.md").write_text("# Another runbook\n\nFor guides.\n")
    kb.index(embed=False)
    table = _table(kb)
    assert table[("Home.md", "ops/runbook", None, True)] == ("ops/runbook.md", None)
    assert table[("guides/overview.md", "ops/runbook", None, False)] == ("ops/runbook.md", None)
    # guides/overview.md links [[ops/runbook]] by path; a bare name would now be ambiguous:
    (vault / "new.md").write_text("# New\n\nSee [[runbook]] and [[Throttling]].\n")
    kb.index(embed=False)
    assert [(r.target_path, r.problem) for r in kb.links("new.md")] == [
        (None, AMBIGUOUS), (None, MISSING)]
    # ... and an alias that comes back resolves the links waiting for it.
    (vault / "limits.md").write_text("---\naliases: [throttling]\n---\n# Limits\n\nText.\n")
    kb.index(embed=False)
    assert [(r.target_path, r.problem) for r in kb.links("new.md")] == [
        (None, AMBIGUOUS), ("limits.md", None)]


def test_an_index_from_before_links_reads_them_without_reembedding(make_kb, vault: Path) -> None:
    kb = make_kb(vault)
    kb.index()
    kb.close()
    conn = sqlite3.connect(kb.db_path)
    conn.execute("DROP TABLE links")
    conn.execute("DROP TABLE link_names")
    conn.execute("UPDATE index_meta SET value = '6' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    again = make_kb(vault)
    summary = again.index()
    assert (summary.chunks_embedded, summary.unchanged) == (0, 9)
    assert _table(again) == EXPECTED
    with again.reading() as store:
        assert not store.links_pending()


# --- the rule alone ---------------------------------------------------------------
def _docs(*paths: str, aliases: dict[str, str] | None = None) -> list[Candidate]:
    return [Candidate(i, p, frozenset({(aliases or {}).get(p, "")} - {""}))
            for i, p in enumerate(paths)]


@pytest.mark.parametrize(("target", "source", "paths", "expected"), [
    ("Note", "x.md", ["note.md"], "note.md"),
    ("note.md", "x.md", ["Note.MD"], "Note.MD"),
    ("note", "a/x.md", ["note.md", "a/note.md"], "a/note.md"),  # the file beside wins
    ("note", "b/x.md", ["note.md", "a/note.md"], "note.md"),  # then the root
    ("note", "c/x.md", ["a/note.md", "b/note.md"], AMBIGUOUS),
    ("a/note", "c/x.md", ["a/note.md", "b/note.md"], "a/note.md"),
    ("deep/a/note", "x.md", ["deep/a/note.md", "a/note.md"], "deep/a/note.md"),
    ("/note", "a/x.md", ["note.md", "a/note.md"], "note.md"),
    ("./note", "a/x.md", ["b/note.md"], MISSING),
    ("../../../escape", "a/x.md", ["escape.md"], MISSING),
    ("report.pdf", "x.md", ["docs/report.pdf"], "docs/report.pdf"),
    ("report", "x.md", ["docs/report.pdf"], MISSING),  # only Markdown drops its suffix
    ("Ｎｏｔｅ", "x.md", ["ｎｏｔｅ.md"], "ｎｏｔｅ.md"),
])
def test_resolution_rule(target: str, source: str, paths: list[str], expected: str) -> None:
    docs = _docs(*paths)
    found, problem = resolve("wikilink", target, source, docs)
    got = problem if found is None else docs[found].path
    assert got == expected


def test_aliases_only_for_wikilinks_and_only_when_unique() -> None:
    docs = _docs("a.md", "b.md", aliases={"a.md": "quota"})
    assert resolve("wikilink", "Quota", "x.md", docs) == (0, None)
    assert resolve("markdown", "Quota", "x.md", docs) == (None, MISSING)
    both = _docs("a.md", "b.md", aliases={"a.md": "quota", "b.md": "quota"})
    assert resolve("wikilink", "quota", "x.md", both) == (None, AMBIGUOUS)


def test_the_key_is_the_last_segment_without_markdown_suffix() -> None:
    assert link_key("api/Retries.md") == "retries"
    assert link_key("../Ops/Run Book") == "run book"
    assert link_key("img/Chart.PNG") == "chart.png"
