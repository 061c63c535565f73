"""Which document a link names: the one resolution rule, and keeping it current.

The rule (docs/indexing.md, "Links"), as Obsidian resolves a link, compared
case-insensitively (Unicode case folding, NFC), a Markdown document's path
with or without its ``.md``/``.markdown``:

1. a target starting with ``/`` is a path from the knowledge base's root;
   one starting with ``./`` or ``../`` a path from the linking document's
   folder; nothing else is tried for either;
2. otherwise the path from the linking document's folder (the file beside
   it), then the path from the root;
3. then the file name, or a path ending the document's path
   (``[[api/retries]]`` finds ``notes/api/retries.md``): one document → it;
   several → the one in the linking document's folder if there is exactly
   one, else the link is **ambiguous**;
4. then, for a wikilink without a ``/``, a frontmatter alias
   (``aliases: [Rate limits]``) held by exactly one document;
5. else it points at no document (**missing**). Nothing is guessed.

A Markdown link's ``.html``/``.htm`` target is compared without that suffix,
like ``.md``: a book's sources link to the page a static-site generator
makes of a chapter (mdBook's ``[strings]: ch08-02-strings.html`` names
``ch08-02-strings.md``), and no parser reads HTML, so no other document can
be meant. A wikilink names a file as it is (``[[page.html]]`` stays missing).

Keeping it current costs what changed, not the size of the index. Every
link row carries a *key*, the last segment of its target
(:func:`link_key`), and every document its *names* (:func:`document_names`:
its file name and its aliases), both indexed. A link can only resolve to a
document one of whose names is the link's key, so when a document appears,
moves, changes its aliases or goes away, only the links whose key is one of
its old or new names need resolving again (:func:`relink`), reading only the
documents holding those names.

A hit's ``backlink_count`` is read, never counted, on the search path: triggers
keep ``link_pairs`` (links per linking and linked document) and
``backlink_sources`` (other documents linking to each document) in step with
every insert, delete and re-resolution of a link row, foreign-key cascades
included, so a search reads one row per hit whatever a note's backlinks.

A write resolves the document's own links at once and records the names it
touched in ``links_unsettled``, in the same transaction; the store's flush
(the end of an index run's rows pass, of a watcher run, of a run cut short:
any later flush) resolves every link of those keys once (:func:`settle`) and
clears them in one transaction. A build writing a thousand ``index.md`` files
thus resolves the links to ``index`` once, not once per file, and a crash
between the two leaves the marks for the next flush.
"""

from __future__ import annotations

import json
import posixpath
import sqlite3
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from groove.models import MARKDOWN, MARKDOWN_EXTENSIONS, WIKILINK, Link

#: ``links.problem`` values.
MISSING = "missing"
AMBIGUOUS = "ambiguous"

#: What a Markdown document's file name ends with; a target is compared without it.
MARKDOWN_SUFFIXES = tuple(f".{extension}" for extension in MARKDOWN_EXTENSIONS)
#: What a Markdown page is published as; a Markdown link's target is read without it.
_PUBLISHED_SUFFIXES = (".html", ".htm")

def _pair_trigger(name: str, event: str, row: str, change: str) -> str:
    """A trigger keeping ``link_pairs`` in step with one kind of change to a link row:
    ``row`` is NEW or OLD, ``change`` adds (+1) or removes (-1) one link of its pair."""
    when = f"WHEN {row}.target_id IS NOT NULL AND {row}.target_id != {row}.doc_id"
    if change == "+1":
        body = (f"INSERT INTO link_pairs(target_id, source_id, links) VALUES ({row}.target_id, "
                f"{row}.doc_id, 1) ON CONFLICT(target_id, source_id) DO UPDATE SET links = links + 1;")
    else:
        pair = f"target_id = {row}.target_id AND source_id = {row}.doc_id"
        body = (f"UPDATE link_pairs SET links = links - 1 WHERE {pair}; "
                f"DELETE FROM link_pairs WHERE {pair} AND links <= 0;")
    return f"CREATE TRIGGER IF NOT EXISTS {name} AFTER {event} ON links\n{when} BEGIN\n    {body}\nEND;\n"


_LINK_TABLES = """
CREATE TABLE IF NOT EXISTS links (
    doc_id      INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal     INTEGER NOT NULL,
    chunk_index INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    embed       INTEGER NOT NULL DEFAULT 0,
    target      TEXT NOT NULL,
    anchor      TEXT,
    label       TEXT,
    key         TEXT NOT NULL,
    target_id   INTEGER REFERENCES documents(id) ON DELETE SET NULL,
    problem     TEXT,
    PRIMARY KEY (doc_id, ordinal)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS links_by_key ON links(key);
CREATE INDEX IF NOT EXISTS links_by_target ON links(target_id, doc_id);
CREATE TABLE IF NOT EXISTS link_names (
    name   TEXT NOT NULL,
    doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    alias  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (name, doc_id, alias)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS link_names_by_doc ON link_names(doc_id);
CREATE TABLE IF NOT EXISTS links_unsettled (
    key TEXT PRIMARY KEY
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS link_pairs (
    target_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    source_id INTEGER NOT NULL,
    links     INTEGER NOT NULL,
    PRIMARY KEY (target_id, source_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS backlink_sources (
    doc_id  INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
    sources INTEGER NOT NULL
);
{pair_triggers}CREATE TRIGGER IF NOT EXISTS backlink_source_added AFTER INSERT ON link_pairs BEGIN
    INSERT INTO backlink_sources(doc_id, sources) VALUES (NEW.target_id, 1)
        ON CONFLICT(doc_id) DO UPDATE SET sources = sources + 1;
END;
CREATE TRIGGER IF NOT EXISTS backlink_source_dropped AFTER DELETE ON link_pairs BEGIN
    UPDATE backlink_sources SET sources = sources - 1 WHERE doc_id = OLD.target_id;
    DELETE FROM backlink_sources WHERE doc_id = OLD.target_id AND sources <= 0;
END;
"""
LINK_TABLES = _LINK_TABLES.replace("{pair_triggers}", "".join((
    _pair_trigger("link_pair_added", "INSERT", "NEW", "+1"),
    _pair_trigger("link_pair_dropped", "DELETE", "OLD", "-1"),
    _pair_trigger("link_pair_left", "UPDATE OF target_id", "OLD", "-1"),
    _pair_trigger("link_pair_joined", "UPDATE OF target_id", "NEW", "+1"))))


def fold(text: str) -> str:
    """The form names are compared in: NFC, case-folded, ``\\`` read as ``/``, trimmed."""
    return unicodedata.normalize("NFC", text).casefold().replace("\\", "/").strip()


def _without_suffix(path: str, suffixes: tuple[str, ...] = MARKDOWN_SUFFIXES) -> str:
    for suffix in suffixes:
        if path.endswith(suffix) and len(path) > len(suffix):
            return path[: -len(suffix)]
    return path


def document_form(path: str) -> str:
    """A document's path as targets are compared with it (Markdown without its suffix)."""
    return _without_suffix(fold(path))


def target_form(target: str, kind: str) -> str:
    """A link target as compared (leading ``/``, ``./`` and ``../`` kept for the rule);
    a Markdown link's also without a published page's suffix (the module's rule)."""
    form = fold(target).rstrip("/")
    if kind == MARKDOWN:
        form = _without_suffix(form, _PUBLISHED_SUFFIXES)
    return _without_suffix(form)


def link_key(target: str, kind: str) -> str:
    """The last segment of a target: a document can only be its target if one of its names
    (:func:`document_names`) is this."""
    return target_form(target, kind).rsplit("/", 1)[-1]


def document_names(path: str, aliases: Iterable[str]) -> set[tuple[str, bool]]:
    """``{(name, is_alias)}``: the document's file name (a Markdown one without its suffix)
    and its aliases, each folded."""
    names = {(document_form(path).rsplit("/", 1)[-1], False)}
    names |= {(fold(a), True) for a in aliases if fold(a)}
    return names


@dataclass(frozen=True)
class Candidate:
    """A document a link may name: its id, path and folded aliases."""

    doc_id: int
    path: str
    aliases: frozenset[str] = frozenset()


def resolve(kind: str, target: str, source_path: str,
            candidates: Sequence[Candidate]) -> tuple[int | None, str | None]:
    """``(document id, None)``, or ``(None, MISSING | AMBIGUOUS)`` (the module's rule).

    ``candidates`` must hold every document one of whose names is the link's
    key (more do no harm).
    """
    wanted = target_form(target, kind)
    folder = posixpath.dirname(fold(source_path))
    forms = [(c, document_form(c.path)) for c in candidates]

    def at(form: str) -> list[Candidate]:
        return [c for c, f in forms if f == form]

    if wanted.startswith("/"):
        return _one(at(posixpath.normpath(wanted.lstrip("/") or ".")))
    if wanted.startswith(("./", "../")):
        return _one(at(_joined(folder, wanted)))
    for form in (_joined(folder, wanted), posixpath.normpath(wanted)):
        found = at(form)
        if len(found) == 1:
            return found[0].doc_id, None
    by_name = [c for c, f in forms if f == wanted or f.endswith("/" + wanted)]
    if len(by_name) == 1:
        return by_name[0].doc_id, None
    if len(by_name) > 1:
        beside = [c for c in by_name if posixpath.dirname(fold(c.path)) == folder]
        return (beside[0].doc_id, None) if len(beside) == 1 else (None, AMBIGUOUS)
    if kind == WIKILINK and "/" not in wanted:
        named = {c.doc_id for c in candidates if fold(target) in c.aliases}
        if len(named) == 1:
            return next(iter(named)), None
        if named:
            return None, AMBIGUOUS
    return None, MISSING


def _joined(folder: str, target: str) -> str:
    joined = posixpath.normpath(posixpath.join(folder, target))
    return "" if joined == ".." or joined.startswith("../") else joined


def _one(found: list[Candidate]) -> tuple[int | None, str | None]:
    return (found[0].doc_id, None) if len(found) == 1 else (None, MISSING)


# --- the rows ----------------------------------------------------------------------
def names_of(conn: sqlite3.Connection, doc_id: int) -> set[str]:
    """The names a stored document answers to (its file name and aliases, folded)."""
    return {r[0] for r in conn.execute("SELECT name FROM link_names WHERE doc_id = ?", (doc_id,))}


def write_names(conn: sqlite3.Connection, doc_id: int, path: str,
                aliases: Iterable[str]) -> set[str]:
    """Replace a document's names; return them."""
    names = document_names(path, aliases)
    conn.execute("DELETE FROM link_names WHERE doc_id = ?", (doc_id,))
    conn.executemany("INSERT OR IGNORE INTO link_names(name, doc_id, alias) VALUES (?, ?, ?)",
                     [(name, doc_id, int(alias)) for name, alias in names])
    return {name for name, _ in names}


def write_links(conn: sqlite3.Connection, doc_id: int,
                links: Sequence[tuple[int, Link]]) -> None:
    """Replace a document's link rows (unresolved until :func:`relink` runs)."""
    conn.execute("DELETE FROM links WHERE doc_id = ?", (doc_id,))
    conn.executemany(
        "INSERT INTO links(doc_id, ordinal, chunk_index, kind, embed, target, anchor, label,"
        " key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(doc_id, ordinal, chunk_index, link.kind, int(link.embed), link.target, link.anchor,
          link.label, link_key(link.target, link.kind))
         for ordinal, (chunk_index, link) in enumerate(links)])


def mark_unsettled(conn: sqlite3.Connection, keys: Iterable[str]) -> None:
    """Record keys whose links must be resolved again at the next :func:`settle`."""
    conn.executemany("INSERT OR IGNORE INTO links_unsettled(key) VALUES (?)",
                     [(k,) for k in set(keys)])


def unsettled(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT EXISTS (SELECT 1 FROM links_unsettled)").fetchone()[0] == 1


def settle(conn: sqlite3.Connection) -> None:
    """Resolve again every link of the recorded keys, then forget them (one transaction)."""
    keys = [r[0] for r in conn.execute("SELECT key FROM links_unsettled")]
    relink(conn, keys)
    conn.execute("DELETE FROM links_unsettled")


def relink(conn: sqlite3.Connection, keys: Iterable[str] = (),
           doc_ids: Iterable[int] = ()) -> None:
    """Resolve again every link whose key is in ``keys`` and every link of ``doc_ids``.

    Reads those links and the documents named by their keys (indexed
    lookups), and writes only the rows whose answer changed.
    """
    wanted_keys = json.dumps(sorted(set(keys)), ensure_ascii=False)
    sources = json.dumps(sorted({int(d) for d in doc_ids}))
    rows = conn.execute(
        "SELECT l.doc_id, l.ordinal, l.kind, l.target, l.key, l.target_id, l.problem, d.path"
        " FROM links l JOIN documents d ON d.id = l.doc_id"
        " WHERE l.key IN (SELECT value FROM json_each(?))"
        " UNION SELECT l.doc_id, l.ordinal, l.kind, l.target, l.key, l.target_id, l.problem,"
        " d.path FROM links l JOIN documents d ON d.id = l.doc_id"
        " WHERE l.doc_id IN (SELECT value FROM json_each(?))", (wanted_keys, sources)).fetchall()
    if not rows:
        return
    by_key = _candidates(conn, {r[4] for r in rows})
    changed = []
    answers: dict[tuple[str, str, str], tuple[int | None, str | None]] = {}
    for doc_id, ordinal, kind, target, key, target_id, problem, path in rows:
        # The answer depends on the kind, the target and the linking document's folder only.
        same = (kind, target, posixpath.dirname(path))
        answer = answers.get(same)
        if answer is None:
            answer = answers[same] = resolve(kind, target, path, by_key.get(key, ()))
        if answer != (target_id, problem):
            changed.append((*answer, doc_id, ordinal))
    conn.executemany("UPDATE links SET target_id = ?, problem = ? WHERE doc_id = ? AND ordinal = ?",
                     changed)


def _candidates(conn: sqlite3.Connection, keys: set[str]) -> dict[str, list[Candidate]]:
    """``{key: documents holding that name}``, each with its aliases."""
    rows = conn.execute(
        "SELECT n.name, d.id, d.path FROM link_names n JOIN documents d ON d.id = n.doc_id"
        " WHERE n.name IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(keys), ensure_ascii=False),)).fetchall()
    ids = sorted({r[1] for r in rows})
    aliases: dict[int, set[str]] = {}
    for doc_id, name in conn.execute(
            "SELECT doc_id, name FROM link_names WHERE alias = 1"
            " AND doc_id IN (SELECT value FROM json_each(?))", (json.dumps(ids),)):
        aliases.setdefault(doc_id, set()).add(name)
    out: dict[str, dict[int, Candidate]] = {}
    for name, doc_id, path in rows:
        out.setdefault(name, {})[doc_id] = Candidate(doc_id, path,
                                                     frozenset(aliases.get(doc_id, ())))
    return {key: list(found.values()) for key, found in out.items()}
