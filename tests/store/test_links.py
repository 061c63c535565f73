"""Which document a link names (store/links.py), over the Obsidian-style vault fixture."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    # reference links, their labels defined at the end of the note
    ("guides/overview.md", "../ops/runbook.md", "restore", False): ("ops/runbook.md", None),
    ("guides/overview.md", "../api/retries.md", None, False): ("api/retries.md", None),
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
        ("api/client.md", "Backoff"), ("api/overview.md", None),
        ("guides/overview.md", None)]  # a reference link
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


@pytest.mark.parametrize("recorded", [None, "2"])
def test_links_read_under_an_older_rule_are_read_again_without_reembedding(
        make_kb, vault: Path, recorded: str | None) -> None:
    """An index whose links were read under an older rule (before groove read
    ``[text][label]``: no links_rule; before ``.html`` pages: "2") reads every document's
    links again on its next run, and nothing else."""
    kb = make_kb(vault)
    kb.index()
    kb.close()
    conn = sqlite3.connect(kb.db_path)
    conn.execute("DELETE FROM links WHERE kind = 'markdown' AND target LIKE '../%' AND doc_id = "
                 "(SELECT id FROM documents WHERE path = 'guides/overview.md')")  # as read then
    conn.execute("DELETE FROM index_meta WHERE key = 'links_rule'")
    if recorded is not None:
        conn.execute("INSERT INTO index_meta(key, value) VALUES ('links_rule', ?)", (recorded,))
    conn.commit()
    conn.close()
    again = make_kb(vault)
    assert ("guides/overview.md", "../api/retries.md", None, False) not in _table(again)
    with again.reading() as store:
        assert store.links_pending()
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
    assert link_key("api/Retries.md", "wikilink") == "retries"
    assert link_key("../Ops/Run Book", "markdown") == "run book"
    assert link_key("img/Chart.PNG", "markdown") == "chart.png"
    assert link_key("ch08-02-strings.html", "markdown") == "ch08-02-strings"
    assert link_key("page.html", "wikilink") == "page.html"


@pytest.mark.parametrize(("kind", "target", "expected"), [
    ("markdown", "ch08-02-strings.html", "en/ch08-02-strings.md"),  # mdBook's cross-links
    ("markdown", "ch08-02-strings.htm", "en/ch08-02-strings.md"),
    ("markdown", "../en/ch08-02-strings.html", "en/ch08-02-strings.md"),
    ("markdown", "ch08-02-strings.md", "en/ch08-02-strings.md"),
    ("markdown", "nowhere.html", MISSING),  # a page of another site, not guessed
    ("markdown", "../std/option/enum.Option.html", MISSING),
    ("wikilink", "ch08-02-strings.html", MISSING),  # a wikilink names a file as it is
])
def test_a_markdown_link_to_a_published_page_names_its_source(kind: str, target: str,
                                                               expected: str) -> None:
    docs = _docs("en/ch08-02-strings.md", "en/ch08-00-common-collections.md")
    found, problem = resolve(kind, target, "en/ch08-00-common-collections.md", docs)
    assert (problem if found is None else docs[found].path) == expected


# --- kept current: incremental answers equal answers from scratch ----------------------------
_PATHS = ["a.md", "x/a.md", "y/a.md", "x/b.md", "b.md", "y/z/c.md", "c.md", "x/Alias.md"]
_TARGETS = [("wikilink", "a"), ("wikilink", "x/a"), ("markdown", "b.md"), ("wikilink", "C"),
            ("markdown", "../a.md"), ("wikilink", "./b"), ("wikilink", "/a"),
            ("wikilink", "alias"), ("markdown", "y/z/c.md"), ("wikilink", "nowhere"),
            ("markdown", "x/b.html"), ("markdown", "../c.htm"), ("wikilink", "a.html")]
_ALIASES = [(), ("alias",), ("Alias", "c")]


def _write(store, path: str, targets: list[int], aliases: tuple[str, ...]) -> None:
    from groove.models import Chunk, DocumentRecord, Link

    links = tuple((0, Link(0, 1, "[[x]]", *_TARGETS[i])) for i in targets)
    store.write_document(
        DocumentRecord(path=path, sha256=path, title=path, category=None, topic=None, date=None,
                       tags=(), tags_invalid=False, metadata={}, size=1, mtime=0.0,
                       links=links, aliases=aliases),
        [Chunk(0, None, None, "", f"text of {path}", 3, 1.0)], None)


def _from_scratch(db: Path) -> tuple[dict, dict]:
    """Every link's stored answer, and the answer the rule gives reading every document."""
    conn = sqlite3.connect(db)
    try:
        docs = dict(conn.execute("SELECT id, path FROM documents"))
        aliases: dict[int, set[str]] = {}
        for doc_id, name in conn.execute("SELECT doc_id, name FROM link_names WHERE alias = 1"):
            aliases.setdefault(doc_id, set()).add(name)
        everyone = [Candidate(i, p, frozenset(aliases.get(i, ()))) for i, p in docs.items()]
        stored, fresh = {}, {}
        for doc_id, ordinal, kind, target, target_id, problem in conn.execute(
                "SELECT doc_id, ordinal, kind, target, target_id, problem FROM links"):
            stored[(doc_id, ordinal)] = (target_id, problem)
            fresh[(doc_id, ordinal)] = resolve(kind, target, docs[doc_id], everyone)
        return stored, fresh
    finally:
        conn.close()


_OPS = st.lists(st.one_of(
    st.tuples(st.just("write"), st.sampled_from(_PATHS),
              st.lists(st.integers(0, len(_TARGETS) - 1), max_size=4),
              st.sampled_from(_ALIASES)),
    st.tuples(st.just("delete"), st.sampled_from(_PATHS)),
    st.tuples(st.just("rename"), st.sampled_from(_PATHS), st.sampled_from(_PATHS)),
), min_size=1, max_size=14)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_OPS)
def test_after_any_adds_renames_and_deletes_every_link_resolves_as_from_scratch(tmp_path, ops):
    """The store re-resolves only the links a change can affect; whatever the sequence of
    changes, the answers equal those of resolving every link against every document."""
    from groove.models import DocumentRecord
    from groove.store import open_store

    db = tmp_path / f"{len(list(tmp_path.iterdir()))}.db"
    store = open_store(db, create=True)
    try:
        present: dict[str, tuple[str, ...]] = {}
        for op in ops:
            if op[0] == "write":
                _write(store, op[1], op[2], op[3])
                present[op[1]] = op[3]
            elif op[0] == "delete":
                store.delete_document(op[1])
                present.pop(op[1], None)
            elif op[1] in present:
                _, old, new = op
                store.rename_document(old, DocumentRecord(
                    path=new, sha256=old, title=new, category=None, topic=None, date=None,
                    tags=(), tags_invalid=False, metadata={}, size=1, mtime=0.0,
                    aliases=present[old]))
                present[new] = present.pop(old)
        store.flush()
        reader = sqlite3.connect(db)
        every = [r[0] for r in reader.execute("SELECT path FROM documents")]
        counted = dict(reader.execute(
            "SELECT d.path, count(DISTINCT l.doc_id) FROM documents d JOIN links l"
            " ON l.target_id = d.id AND l.doc_id != d.id GROUP BY d.path").fetchall())
        reader.close()
        assert store.backlink_counts(every) == counted  # kept by triggers, never counted
    finally:
        store.close()
    stored, fresh = _from_scratch(db)
    assert stored == fresh


def test_a_write_marks_the_names_it_touched_and_the_flush_settles_them(tmp_path) -> None:
    """Links of other documents are resolved once per batch, at the flush; marks left by a
    run that never flushed (a crash) are settled by the next flush."""
    from groove.store import open_store

    db = tmp_path / "index.db"
    store = open_store(db, create=True)
    _write(store, "a.md", [2], ())  # b.md: not there yet
    _write(store, "x/b.md", [], ())
    assert [r.problem for r in store.document_links("a.md")] == ["missing"]
    store.close()  # closing flushes
    store = open_store(db)
    assert [r.target_path for r in store.document_links("a.md")] == ["x/b.md"]
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM links_unsettled").fetchone()[0] == 0
    conn.execute("INSERT INTO links_unsettled(key) VALUES ('b')")  # as a crash leaves it
    conn.execute("UPDATE links SET target_id = NULL, problem = 'missing'")
    conn.commit()
    conn.close()
    store.flush()
    assert [r.target_path for r in store.document_links("a.md")] == ["x/b.md"]
    store.close()


def test_backlink_counts_read_only_the_asked_documents(tmp_path) -> None:
    """The query behind a hit's backlink_count goes through indexes: no table is scanned."""
    from groove.store import open_store

    db = tmp_path / "index.db"
    store = open_store(db, create=True)
    _write(store, "a.md", [0, 2], ())  # [[a]] (itself: not counted) and b.md (x/b.md)
    _write(store, "x/b.md", [0, 6], ())  # [[a]] and [[/a]]: one document linking
    store.flush()  # the links waiting for x/b.md are resolved at the end of a batch
    assert store.backlink_counts(["a.md", "x/b.md", "nothing.md"]) == {"a.md": 1, "x/b.md": 1}
    store.close()
    conn = sqlite3.connect(db)
    plan = " | ".join(r[3] for r in conn.execute(
        "EXPLAIN QUERY PLAN SELECT d.path, count(DISTINCT l.doc_id) FROM documents d"
        " JOIN links l ON l.target_id = d.id AND l.doc_id != d.id"
        " WHERE d.path IN (SELECT value FROM json_each(?)) GROUP BY d.path", ('["a.md"]',)))
    conn.close()
    assert "SCAN d" not in plan and "SCAN l" not in plan, plan


def test_search_hits_carry_backlink_count(make_kb, vault: Path) -> None:
    from groove.search.request import SearchRequest

    kb = make_kb(vault)
    kb.index()
    hits = kb.search(SearchRequest(query="token bucket of requests per minute", limit=10)).results
    counts = {h.path: h.backlink_count for h in hits}
    assert counts["Rate limiting.md"] == 4  # Home, api/retries, ops/My Note, the plan
    assert counts.get("projects/alpha/plan.md") is None  # nothing links to it: no key
    assert "backlink_count" not in next(h for h in hits if h.backlink_count is None).to_json()
