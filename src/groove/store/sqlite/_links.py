"""Links between documents (store/links.py holds their tables and resolution) and the
declared frontmatter fields and tags searches filter on."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from groove.models import LINK_RULE, Link, LinkRow
from groove.store.links import (
    mark_unsettled,
    names_of,
    relink,
    settle,
    unsettled,
    write_links,
    write_names,
)
from groove.store.sqlite._core import StoreCore


class Links(StoreCore):
    """Links written, resolved and read; declared fields and tags read."""

    def field_row_count(self) -> int:
        return self._counters()["count_field_values"]

    def tagged_paths(self, tag: str) -> list[str]:
        """One pass over the documents' tag lists (a LIKE prefilter, then the exact JSON test)."""
        with self._errors("reading document tags"):
            return [r[0] for r in self._conn.execute(
                "SELECT path FROM documents WHERE tags LIKE ? ESCAPE '\\' AND EXISTS "
                "(SELECT 1 FROM json_each(documents.tags) WHERE value = ?) ORDER BY path",
                (f"%{_like_escape(json.dumps(tag, ensure_ascii=False))}%", tag))]

    def field_matches(self, key: str, values: Sequence[str]) -> set[int]:
        """Document ids holding ``key`` = one of ``values`` (the (key, value) index answers)."""
        with self._errors("reading declared fields"):
            return {r[0] for r in self._conn.execute(
                "SELECT DISTINCT doc_id FROM document_fields WHERE key = ?"
                " AND value IN (SELECT value FROM json_each(?))",
                (key, json.dumps(list(values), ensure_ascii=False)))}

    def field_values(self, doc_id: int) -> dict[str, tuple[str, ...]]:
        with self._errors("reading declared fields"):
            rows = self._conn.execute(
                "SELECT key, value FROM document_fields WHERE doc_id = ? ORDER BY key, value",
                (doc_id,)).fetchall()
        out: dict[str, list[str]] = {}
        for key, value in rows:
            out.setdefault(key, []).append(value)
        return {k: tuple(v) for k, v in out.items()}

    # --- links (store/links.py) ---------------------------------------------------
    def links_pending(self) -> bool:
        with self._errors("reading index_meta"):
            return self._meta_values().get("links_rule") != LINK_RULE

    def write_document_links(self, links_by_path: dict[str, tuple[
            tuple[tuple[int, Link], ...], tuple[str, ...]]]) -> None:
        """Replace the links and aliases of these documents (no chunk is touched), one
        transaction; links to them and from them are resolved again."""
        if not links_by_path:
            return
        with self._write("writing links") as conn:
            keys: set[str] = set()
            ids = []
            for path, (links, aliases) in links_by_path.items():
                row = conn.execute("SELECT id FROM documents WHERE path = ?", (path,)).fetchone()
                if row is None:
                    continue
                keys |= names_of(conn, row[0]) ^ write_names(conn, row[0], path, aliases)
                write_links(conn, row[0], links)
                ids.append(row[0])
            relink(conn, (), ids)
            mark_unsettled(conn, keys)

    def _settle_links(self) -> None:
        """Re-resolve the links of every key a write marked (store/links.py, "Kept current")."""
        if self._closed:
            return
        with self._errors("reading links"):
            if not unsettled(self._conn):
                return
        with self._write("resolving links") as conn:
            settle(conn)

    def mark_links_read(self) -> None:
        """Every document's links are stored, under :data:`LINK_RULE` (the end of the run
        that read them)."""
        with self._errors("writing index_meta"), self._transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO index_meta(key, value) VALUES ('links_rule', ?)",
                         (LINK_RULE,))

    _LINK_SELECT = (
        "SELECT s.path, c.heading, substr(c.content, 1, 1000), l.target, t.path, l.anchor,"
        " l.label, l.kind, l.embed, l.problem FROM links l"
        " JOIN documents s ON s.id = l.doc_id"
        " LEFT JOIN chunks c ON c.doc_id = l.doc_id AND c.chunk_index = l.chunk_index"
        " LEFT JOIN documents t ON t.id = l.target_id")

    def document_links(self, path: str, *, backlinks: bool = False) -> list[LinkRow] | None:
        """The links written in ``path`` (or, with ``backlinks``, the links that resolve to
        it), in document order (by linking document and position); None: not indexed."""
        with self._errors("reading links"), self.read_snapshot():
            row = self._conn.execute("SELECT id FROM documents WHERE path = ?",
                                     (path,)).fetchone()
            if row is None:
                return None
            where = ("WHERE l.target_id = ? ORDER BY s.path, l.ordinal" if backlinks
                     else "WHERE l.doc_id = ? ORDER BY l.ordinal")
            rows = self._conn.execute(f"{self._LINK_SELECT} {where}", (row[0],)).fetchall()
        return [_link_row(r) for r in rows]

    def backlink_counts(self, paths: Iterable[str]) -> dict[str, int]:
        """``{path: other documents linking to it}`` for these paths, those with none left
        out: one row per path, kept current by triggers (store/links.py), so the cost is
        that of ``paths`` whatever the number of backlinks."""
        wanted = json.dumps(sorted(set(paths)), ensure_ascii=False)
        with self._errors("reading links"):
            return dict(self._conn.execute(
                "SELECT d.path, b.sources FROM documents d"
                " JOIN backlink_sources b ON b.doc_id = d.id"
                " WHERE d.path IN (SELECT value FROM json_each(?))", (wanted,)).fetchall())

    def link_edges(self, doc_ids: Iterable[int]) -> list[tuple[int, int, int]]:
        """``(source doc, target doc, links)`` of every resolved link from or to these
        documents, self-links left out."""
        wanted = json.dumps(sorted({int(d) for d in doc_ids}))
        with self._errors("reading links"):
            return [tuple(r) for r in self._conn.execute(
                "SELECT doc_id, target_id, count(*) FROM links"
                " WHERE doc_id IN (SELECT value FROM json_each(?1)) AND target_id IS NOT NULL"
                " AND target_id != doc_id GROUP BY doc_id, target_id"
                " UNION SELECT doc_id, target_id, count(*) FROM links"
                " WHERE target_id IN (SELECT value FROM json_each(?1)) AND target_id != doc_id"
                " GROUP BY doc_id, target_id", (wanted,)).fetchall()]

    def unresolved_links(self) -> list[LinkRow]:
        """Every link that points at no document, by linking document (``doctor``)."""
        with self._errors("reading links"), self.read_snapshot():
            rows = self._conn.execute(
                f"{self._LINK_SELECT} WHERE l.target_id IS NULL ORDER BY s.path, l.ordinal"
            ).fetchall()
        return [_link_row(r) for r in rows]


def _link_row(r: tuple[Any, ...]) -> LinkRow:
    source, heading, content, target, target_path, anchor, label, kind, embed, problem = r
    first = next((line.strip() for line in (content or "").split("\n") if line.strip()), "")
    return LinkRow(source, heading, first, target, target_path, anchor, label, kind,
                   bool(embed), None if target_path is not None else problem)


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


