"""Links as answers: what a document links to and what links to it (docs/graph.md, "Links").

The links themselves are found at indexing (:mod:`groove.parsers.links`) and
resolved by the store (:mod:`groove.store.links`); this module shapes them
for people and clients: the ``links`` tool and command, and the ``links`` and
``backlinks`` of ``get_document``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from groove.graph.params import LinksParams
from groove.models import WIKILINK, LinkRow

if TYPE_CHECKING:
    from groove.kb import KnowledgeBase

#: At most this many links in one answer (the total is always given).
LINKS_ANSWER_MAX = 500


def links_answer(kb: KnowledgeBase, params: LinksParams | None = None,
                 **arguments: Any) -> dict[str, Any]:
    """``{path, direction, total, links, truncated}``: the links written in ``params.path``,
    or with ``backlinks`` the links to it, each with both ends (LinkRow.to_json)."""
    params = params if params is not None else LinksParams(**arguments)
    rows = kb.links(params.path, backlinks=params.backlinks)
    return {"path": params.path, "direction": "backlinks" if params.backlinks else "outgoing",
            "total": len(rows), "links": [r.to_json() for r in rows[:LINKS_ANSWER_MAX]],
            "truncated": len(rows) > LINKS_ANSWER_MAX}


def document_links_json(kb: KnowledgeBase, path: str) -> dict[str, Any]:
    """The ``links`` and ``backlinks`` keys of a get_document answer (each capped, with
    ``links_total``/``backlinks_total`` when cut)."""
    out: dict[str, Any] = {}
    for key, backlinks in (("links", False), ("backlinks", True)):
        rows = kb.links(path, backlinks=backlinks)
        out[key] = [r.to_json() for r in rows[:LINKS_ANSWER_MAX]]
        if len(rows) > LINKS_ANSWER_MAX:
            out[f"{key}_total"] = len(rows)
    return out


def render_links_text(answer: dict[str, Any]) -> str:
    """One line per link: ``target -> document#heading`` (or ``source#heading: line``)."""
    backlinks = answer["direction"] == "backlinks"
    title = "links to" if backlinks else "links in"
    lines = [f"{answer['total']} {title} {answer['path']}"]
    for link in answer["links"]:
        if backlinks:
            where = link["source"] + (f" ({link['source_heading']})" if link["source_heading"]
                                      else "")
            anchor = f" -> #{link['heading']}" if link["heading"] else ""
            lines.append(f"  {where}{anchor}: {link['line']}")
        else:
            lines.append(f"  {_written(link)} -> {_resolved(link)}")
    if answer["truncated"]:
        lines.append(f"  … the first {len(answer['links'])} of {answer['total']}")
    return "\n".join(lines) + "\n"


def _written(link: dict[str, Any]) -> str:
    text = link["target"] + (f"#{link['heading']}" if link["heading"] else "")
    return ("!" if link["embed"] else "") + (f"[[{text}]]" if link["kind"] == WIKILINK
                                             else f"({text})")


def _resolved(link: dict[str, Any]) -> str:
    if link["path"] is None:
        return f"no document ({link.get('problem', 'missing')})"
    return link["path"] + (f"#{link['heading']}" if link["heading"] else "")


__all__ = ["LINKS_ANSWER_MAX", "LinkRow", "document_links_json", "links_answer",
           "render_links_text"]
