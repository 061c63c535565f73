"""Connection-graph renderers: plain text, Graphviz DOT and a self-contained SVG.
"""


from __future__ import annotations

import re
from typing import Any
from xml.sax.saxutils import escape as _xml_escape


# --- rendering ----------------------------------------------------------------------
def graph_edges(graph: dict[str, Any]) -> list[dict[str, Any]]:
    """The graph's typed edges; a graph without ``edges`` (from before they were listed)
    has one similarity edge per node with a parent."""
    if "edges" in graph:
        return list(graph["edges"])
    return [{"source": n["parent_id"], "target": n["id"], "type": "similarity",
             "score": n["score"]} for n in graph["nodes"] if n["parent_id"] is not None]


def _score_text(node: dict[str, Any]) -> str:
    """A similarity node's score; a node reached by a link has none (``link``)."""
    return "link" if node.get("score") is None else f"{node['score']:.3f}"


def _truncation_note(graph: dict[str, Any]) -> str | None:
    items = graph.get("truncation") or []
    if not graph.get("truncated") or not items:
        return None
    parts = [f"{t['reason']} limit {t['limit']}: {t['remedy']}" for t in items]
    return "truncated - " + "; ".join(parts)


def render_text(graph: dict[str, Any]) -> str:
    """LLM-friendly blocks separated by ``---`` (path, heading, score, then the snippet)."""
    stats = graph.get("stats", {})
    header = [
        f"start: {graph.get('start')}",
        f"nodes: {stats.get('total_nodes', len(graph['nodes']))}  seeds: {stats.get('seeds_used')}"
        f"  knn queries: {stats.get('knn_queries')}",
    ]
    note = _truncation_note(graph)
    if note:
        header.append(note)
    blocks = ["\n".join(header)]
    for node in graph["nodes"]:
        lines = [
            f"path: {node['path']}",
            f"heading: {node['heading'] if node['heading'] is not None else '(none)'}",
            f"score: {_score_text(node)}  depth: {node['depth']}  id: {node['id']}"
            f"  parent: {node['parent_id'] or '-'}",
        ]
        if node.get("snippet"):
            lines.append("")
            lines.append(node["snippet"])
        blocks.append("\n".join(lines))
    links = [e for e in graph_edges(graph) if e["type"] == "link"]
    if links:
        blocks.append("links:\n" + "\n".join(
            f"  {e['source'].removeprefix('doc:')} -> {e['target'].removeprefix('doc:')}"
            + (f" ({e['links']} links)" if e.get("links", 1) > 1 else "") for e in links))
    return "\n---\n".join(blocks) + "\n"


#: One fill colour per depth (0..3), light enough for black text.
DEPTH_COLOURS = ("#f4a261", "#8ecae6", "#b7e4c7", "#e9c6f5")


def _colour(depth: int) -> str:
    return DEPTH_COLOURS[min(max(depth, 0), len(DEPTH_COLOURS) - 1)]


def _dot_quote(text: str) -> str:
    text = _xml_safe(text).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("\r", " ").replace("\n", "\\n") + '"'


def _node_label(node: dict[str, Any], width: int = 40) -> tuple[str, str]:
    return _clip(node["path"], width), _clip(node["heading"] or "(document)", width)


#: How each edge type is drawn: a link solid, blue and bold; similarity dashed and grey.
EDGE_STYLES: dict[str, tuple[str, str | None, int]] = {
    "link": ("#1d4ed8", None, 2), "similarity": ("#888888", "5,4", 1)}  # colour, dash, width


def render_dot(graph: dict[str, Any]) -> str:
    """Graphviz source: left-to-right, nodes filled by depth; a link edge bold and blue
    (labelled "link"), a similarity edge dashed and labelled with its score."""
    lines = ["digraph groove {", "  rankdir=LR;",
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9];']
    note = _truncation_note(graph)
    title = f"groove graph from {graph.get('start')}" + (f"\n{note}" if note else "")
    lines.append(f"  labelloc=t; label={_dot_quote(title)};")
    for node in graph["nodes"]:
        path, heading = _node_label(node)
        lines.append(
            f"  {_dot_quote(node['id'])} [label={_dot_quote(path + chr(10) + heading)}, "
            f"fillcolor={_dot_quote(_colour(node['depth']))}, tooltip={_dot_quote(node.get('snippet') or '')}];"
        )
    for edge in graph_edges(graph):
        ends = f"  {_dot_quote(edge['source'])} -> {_dot_quote(edge['target'])}"
        if edge["type"] == "link":
            label = "link" if edge.get("links", 1) == 1 else f"{edge['links']} links"
            lines.append(f'{ends} [label={_dot_quote(label)}, color="#1d4ed8", penwidth=2, '
                         'style=solid];')
        else:
            score = _dot_quote(format(edge["score"], ".2f"))
            lines.append(f'{ends} [label={score}, color="#888888", style=dashed];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _edge_style(kind: str) -> str:
    colour, dashes, width = EDGE_STYLES.get(kind, EDGE_STYLES["similarity"])
    dash = f' stroke-dasharray="{dashes}"' if dashes else ""
    return f' stroke="{colour}" stroke-width="{width}"{dash}'


_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _xml_safe(text: str) -> str:
    """Drop characters XML 1.0 cannot carry at all (control characters, lone surrogates)."""
    return _XML_INVALID.sub("\ufffd", text)


def _esc(text: str) -> str:
    return _xml_escape(_xml_safe(text), {'"': "&quot;"})


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


# SVG geometry (pixels).
_BOX_W, _BOX_H, _COL_GAP, _ROW_GAP, _MARGIN, _TOP = 260, 44, 90, 14, 20, 56


#: A depth layer wraps into another column after this many rows, so the drawing
#: stays bounded (at most ROWS_PER_COLUMN boxes tall) whatever the fan-out.
ROWS_PER_COLUMN = 12
_LEGEND_H = 30


def _layout(nodes: list[dict[str, Any]]) -> tuple[dict[str, tuple[float, float]], int, int]:
    """Top-left corner of each node, plus the number of columns and of rows used.

    Layered: the start document first, then one band per depth, in BFS order;
    a band taller than ROWS_PER_COLUMN wraps into further columns. Boxes sit
    on a grid, so no two overlap.
    """
    by_depth: dict[int, list[dict[str, Any]]] = {}
    for node in nodes:
        by_depth.setdefault(node["depth"], []).append(node)
    pos: dict[str, tuple[float, float]] = {}
    column = 0
    rows = 1
    for depth in sorted(by_depth):
        band = by_depth[depth]
        for i, node in enumerate(band):
            c, r = column + i // ROWS_PER_COLUMN, i % ROWS_PER_COLUMN
            pos[node["id"]] = (_MARGIN + c * (_BOX_W + _COL_GAP), _TOP + r * (_BOX_H + _ROW_GAP))
        column += -(-len(band) // ROWS_PER_COLUMN)
        rows = max(rows, min(len(band), ROWS_PER_COLUMN))
    return pos, max(column, 1), rows


def render_svg(graph: dict[str, Any]) -> str:
    """A self-contained SVG drawn without Graphviz: layered by depth, coloured, edges labelled,
    bounded in size (bands wrap into columns), with a legend of the depth colours."""
    nodes = graph["nodes"]
    pos, columns, rows = _layout(nodes)
    max_depth = max((n["depth"] for n in nodes), default=0)
    width = 2 * _MARGIN + columns * _BOX_W + (columns - 1) * _COL_GAP
    legend_y = _TOP + rows * (_BOX_H + _ROW_GAP) + 6
    height = legend_y + _LEGEND_H + _MARGIN
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="11">',
        f"<title>{_esc('groove graph from ' + str(graph.get('start')))}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{_MARGIN}" y="20" font-size="13" font-weight="bold">'
        f"{_esc('Connections of ' + str(graph.get('start')))}</text>",
    ]
    note = _truncation_note(graph)
    if note:
        out.append(f'<text class="truncation" x="{_MARGIN}" y="38" fill="#b00020">{_esc(note)}</text>')
    for d in range(max_depth + 1):
        first = next((pos[n["id"]] for n in nodes if n["depth"] == d), None)
        if first is not None:
            out.append(f'<text x="{first[0]}" y="{_TOP - 6}" fill="#555555">depth {d}</text>')
    edges = graph_edges(graph)
    out.append(f'<g class="legend" transform="translate({_MARGIN},{legend_y})">')
    for d in range(max_depth + 1):
        label = "start document" if d == 0 else f"depth {d}"
        out.append(f'<rect x="{d * 130}" y="0" width="14" height="14" fill="{_colour(d)}" '
                   f'stroke="#444444"/><text x="{d * 130 + 20}" y="11">{_esc(label)}</text>')
    x = (max_depth + 1) * 130
    kinds = {e["type"] for e in edges}
    for kind in sorted(kinds) if "link" in kinds else ():  # similarity alone needs no key
        out.append(f'<line x1="{x}" y1="7" x2="{x + 24}" y2="7"{_edge_style(kind)}/>'
                   f'<text x="{x + 30}" y="11">{_esc(kind)}</text>')
        x += 110
    out.append("</g>")
    out.append('<g class="edges" fill="none">')
    for edge in edges:
        if edge["source"] not in pos or edge["target"] not in pos:
            continue
        (px, py), (cx, cy) = pos[edge["source"]], pos[edge["target"]]
        x1, y1, x2, y2 = px + _BOX_W, py + _BOX_H / 2, cx, cy + _BOX_H / 2
        if cx <= px:  # back to an earlier column, or within one: leave from the left side
            x1 = px
            x2 = cx + (_BOX_W if cx < px else 0)
        label = (f'{edge["score"]:.2f}' if edge["type"] == "similarity"
                 else ("link" if edge.get("links", 1) == 1 else f'{edge["links"]} links'))
        out.append(f'<line class="edge-{_esc(edge["type"])}" x1="{x1}" y1="{y1}" x2="{x2}" '
                   f'y2="{y2}"{_edge_style(edge["type"])}/>')
        out.append(
            f'<text x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2 - 3:.1f}" stroke="none" '
            f'fill="#333333" font-size="10" text-anchor="middle">{_esc(label)}</text>'
        )
    out.append("</g>")
    for node in nodes:
        x, y = pos[node["id"]]
        path, heading = _node_label(node)
        out.append(f'<g class="node" data-depth="{node["depth"]}">')
        out.append(f"<title>{_esc(node.get('snippet') or node['path'])}</title>")
        out.append(
            f'<rect x="{x}" y="{y}" width="{_BOX_W}" height="{_BOX_H}" rx="6" '
            f'fill="{_colour(node["depth"])}" stroke="#444444"/>'
        )
        out.append(f'<text x="{x + 8}" y="{y + 17}" font-weight="bold">{_esc(path)}</text>')
        out.append(f'<text x="{x + 8}" y="{y + 34}">{_esc(heading)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"
