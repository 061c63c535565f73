"""The connection graph (SPEC §9): BFS over embedding similarity from one document.

Shape of the walk:

* **Seeds** are the start document's chunks in ``chunk_index`` order (low-quality
  chunks are skipped unless that would leave none), at most ``max_seed_chunks``.
  With ``all_chunks`` every seed is a depth-0 node and is queried on its own;
  with ``centroid`` the seeds are averaged into one vector and the depth-0 node
  is the document itself (id ``doc:<path>``), queried once.
* **Expansion**: each node at depth ``d < depth`` asks for its ``fan_out`` most
  similar chunks (brute-force cosine over the whole matrix) that score at least
  ``min_similarity``, pass the filters, and are not in the graph yet; they
  become nodes at ``d + 1`` with that node as parent (first parent wins).
  The start document's own chunks are never neighbours: the graph is about
  what it connects *to*.
* **Bounds** are checked before the store is touched. ``truncated`` is always
  present; ``truncation`` appears only when a bound really dropped something:
  ``seed_chunks`` when the document had more usable chunks than were seeded,
  ``node_budget`` when at least one eligible node did not fit in ``max_nodes``
  (a budget that is merely reached exactly is not a truncation).

The vector matrix and chunk metadata are cached per store and refreshed when
``store.generation()`` changes, so a server answering many graph calls reads
SQLite once per index change.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape as _xml_escape

import numpy as np

from groove.errors import InvalidArgument, NotFound
from groove.models import ChunkRow

log = logging.getLogger("groove.graph")

DEPTH_MAX = 3
FAN_OUT_MAX = 20
MAX_SEED_CHUNKS_RANGE = (1, 1000)
MAX_NODES_RANGE = (1, 2000)
EXCLUDE_PATHS_MAX = 64
PATH_ARG_MAX_BYTES = 1024
SNIPPET_CHARS = 200
SEED_STRATEGIES = {"all_chunks": "all_chunks", "all-chunks": "all_chunks", "centroid": "centroid"}


@dataclass(frozen=True)
class GraphParams:
    """The validated, normalised arguments of one graph request."""

    start: str
    depth: int
    fan_out: int
    min_similarity: float
    seed_strategy: str
    max_seed_chunks: int
    max_nodes: int
    dedup_by_path: bool
    category: str | None
    topic: str | None
    exclude_paths: tuple[str, ...]


# --- argument checks --------------------------------------------------------------
def _int_arg(name: str, value: Any, low: int, high: int, note: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidArgument(
            f"{name} must be an integer in {low}..{high}{note}, got {value!r}"
        )
    return value


def _path_arg(name: str, value: Any) -> str:
    """A relative POSIX path inside kb_path, checked by the one lexical path gate."""
    from groove.server.paths import check_rel_path

    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument(f"{name} must be a non-empty relative path, got {value!r}")
    if len(value.encode("utf-8", "surrogatepass")) > PATH_ARG_MAX_BYTES:
        raise InvalidArgument(f"{name} must be at most {PATH_ARG_MAX_BYTES} bytes long")
    return check_rel_path(value, what=name)


def _optional_text(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value.encode("utf-8", "surrogatepass")) > PATH_ARG_MAX_BYTES:
        raise InvalidArgument(f"{name} must be a string of at most {PATH_ARG_MAX_BYTES} bytes")
    return value


def validate_graph_args(
    *,
    start: Any,
    depth: Any = 2,
    fan_out: Any = 5,
    min_similarity: Any = 0.3,
    seed_strategy: Any = "all_chunks",
    max_seed_chunks: Any = 32,
    max_nodes: Any = 100,
    dedup_by_path: Any = False,
    category: Any = None,
    topic: Any = None,
    exclude_paths: Any = None,
) -> GraphParams:
    """Check every bound (raising InvalidArgument / PathRefused) without touching the index."""
    depth = _int_arg("depth", depth, 0, DEPTH_MAX)
    fan_out = _int_arg("fan_out", fan_out, 0, FAN_OUT_MAX, " (0 = seed only)")
    if (
        isinstance(min_similarity, bool)
        or not isinstance(min_similarity, (int, float))
        or not math.isfinite(min_similarity)
        or not 0.0 <= min_similarity <= 1.0
    ):
        raise InvalidArgument(f"min_similarity must be a number in [0, 1], got {min_similarity!r}")
    if not isinstance(seed_strategy, str) or seed_strategy not in SEED_STRATEGIES:
        raise InvalidArgument(
            f"seed_strategy must be one of all_chunks (or all-chunks), centroid; got {seed_strategy!r}"
        )
    max_seed_chunks = _int_arg("max_seed_chunks", max_seed_chunks, *MAX_SEED_CHUNKS_RANGE)
    max_nodes = _int_arg("max_nodes", max_nodes, *MAX_NODES_RANGE)
    if not isinstance(dedup_by_path, bool):
        raise InvalidArgument(f"dedup_by_path must be true or false, got {dedup_by_path!r}")
    excludes: list[str] = []
    if exclude_paths is not None:
        if isinstance(exclude_paths, str) or not isinstance(exclude_paths, (list, tuple)):
            raise InvalidArgument("exclude_paths must be a list of relative paths")
        if len(exclude_paths) > EXCLUDE_PATHS_MAX:
            raise InvalidArgument(
                f"exclude_paths accepts at most {EXCLUDE_PATHS_MAX} entries, got {len(exclude_paths)}"
            )
        excludes = [_path_arg("exclude_paths entry", p).rstrip("/") for p in exclude_paths]
    return GraphParams(
        start=_path_arg("start", start),
        depth=depth,
        fan_out=fan_out,
        min_similarity=float(min_similarity),
        seed_strategy=SEED_STRATEGIES[seed_strategy],
        max_seed_chunks=max_seed_chunks,
        max_nodes=max_nodes,
        dedup_by_path=dedup_by_path,
        category=_optional_text("category", category),
        topic=_optional_text("topic", topic),
        exclude_paths=tuple(p for p in excludes if p),
    )


# --- the per-store cache ------------------------------------------------------------
@dataclass
class _Snapshot:
    """Everything the walk needs from the store, valid for one generation."""

    generation: int
    meta: list[ChunkRow]  # one per matrix row, same order
    matrix: np.ndarray  # float32 [n, dim], rows unit length
    row_of: dict[int, int]  # chunk id -> row
    doc_ids: np.ndarray  # int64 [n]
    quality: np.ndarray  # float64 [n]
    binary: np.ndarray  # bool [n]
    docs: dict[int, tuple[str, str | None, str | None]]  # doc id -> (path, category, topic)


_CACHE: weakref.WeakKeyDictionary[Any, _Snapshot] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def _snapshot(store: Any) -> _Snapshot:
    generation = store.generation()
    with _CACHE_LOCK:
        cached = _CACHE.get(store)
        if cached is not None and cached.generation == generation:
            return cached
    ids, matrix = store.load_vectors()
    by_id = {row.id: row for row in store.all_chunks_meta()}
    keep = [i for i, cid in enumerate(ids.tolist()) if cid in by_id]  # skip orphan vectors
    matrix = np.asarray(matrix, dtype=np.float32)[keep] if len(keep) else np.zeros((0, 0), np.float32)
    if matrix.size:
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    meta = [by_id[int(ids[i])] for i in keep]
    snap = _Snapshot(
        generation=generation,
        meta=meta,
        matrix=matrix,
        row_of={row.id: r for r, row in enumerate(meta)},
        doc_ids=np.fromiter((row.doc_id for row in meta), dtype=np.int64, count=len(meta)),
        quality=np.fromiter((row.quality for row in meta), dtype=np.float64, count=len(meta)),
        binary=np.fromiter((row.binary_format for row in meta), dtype=bool, count=len(meta)),
        docs={row.doc_id: (row.path, row.category, row.topic) for row in meta},
    )
    with _CACHE_LOCK:
        _CACHE[store] = snap
    return snap


# --- the walk ---------------------------------------------------------------------
def _quality_floor(config: Any) -> float | None:
    """The quality threshold hiding chunks from graph results, or None when the filter is off."""
    qf = getattr(config, "quality_filter", None)
    if qf is None or not getattr(qf, "enabled", True):
        return None
    return float(getattr(qf, "threshold", 0.3))


def _hidden(row: ChunkRow, floor: float | None) -> bool:
    return floor is not None and not row.binary_format and row.quality < floor


def _excluded(path: str, excludes: tuple[str, ...]) -> bool:
    return any(path == e or path.startswith(e + "/") for e in excludes)


def _eligible_mask(snap: _Snapshot, params: GraphParams, start_doc_id: int,
                   floor: float | None) -> np.ndarray:
    """Rows that may become neighbours: filters are decided per document, then broadcast."""
    refused = [
        doc_id for doc_id, (path, category, topic) in snap.docs.items()
        if doc_id == start_doc_id
        or (params.category is not None and category != params.category)
        or (params.topic is not None and topic != params.topic)
        or _excluded(path, params.exclude_paths)
    ]
    mask = ~np.isin(snap.doc_ids, np.array(refused, dtype=np.int64))
    if floor is not None:
        mask &= snap.binary | (snap.quality >= floor)
    return mask


def _ranked(scores: np.ndarray, valid: np.ndarray, first_block: int) -> Iterator[int]:
    """Rows with ``valid`` set, best score first (ties by row), computed lazily in blocks."""
    candidates = np.flatnonzero(valid)
    if candidates.size == 0:
        return
    cand_scores = scores[candidates]
    done = 0
    block = max(1, first_block)
    while done < candidates.size:
        block = min(block, candidates.size)
        if block < candidates.size:
            top = np.argpartition(-cand_scores, block - 1)[:block]
        else:
            top = np.arange(candidates.size)
        order = top[np.lexsort((candidates[top], -cand_scores[top]))]
        for pos in order[done:]:
            yield int(candidates[pos])
        done = block
        block *= 4


class _Walk:
    """Mutable state of one BFS: nodes so far, what is taken, counters, truncations."""

    def __init__(self, snap: _Snapshot, params: GraphParams, eligible: np.ndarray) -> None:
        self.snap = snap
        self.params = params
        self.eligible = eligible
        self.nodes: list[dict[str, Any]] = []
        self.rows_taken: set[int] = set()
        self.docs_taken: set[int] = set()
        self.knn_queries = 0
        self.budget_hit = False

    def add(self, node: dict[str, Any]) -> bool:
        """Append ``node`` unless the budget is full (then remember that something was dropped)."""
        if len(self.nodes) >= self.params.max_nodes:
            self.budget_hit = True
            return False
        self.nodes.append(node)
        return True

    def neighbours(self, vector: np.ndarray) -> Iterator[tuple[int, float]]:
        """Eligible rows not yet taken, most similar first, down to ``min_similarity``."""
        self.knn_queries += 1
        scores = self.snap.matrix @ vector
        valid = self.eligible & (scores >= self.params.min_similarity - 1e-6)
        taken = len(self.rows_taken)
        for row in _ranked(scores, valid, self.params.fan_out * 4 + taken + 16):
            if row in self.rows_taken:
                continue
            if self.params.dedup_by_path and int(self.snap.doc_ids[row]) in self.docs_taken:
                continue
            yield row, float(scores[row])

    def take(self, row: int) -> None:
        self.rows_taken.add(row)
        self.docs_taken.add(int(self.snap.doc_ids[row]))


def _chunk_node(row: ChunkRow, *, depth: int, parent: str | None, score: float) -> dict[str, Any]:
    return {
        "id": f"chunk:{row.id}",
        "parent_id": parent,
        "depth": depth,
        "score": round(score, 6),
        "path": row.path,
        "heading": row.heading,
        "chunk_id": row.id,
    }


def _seed_rows(snap: _Snapshot, store: Any, doc_id: int, floor: float | None) -> list[int]:
    """Matrix rows of the start document in chunk order, low-quality ones only as a last resort."""
    chunks = store.document_chunks(doc_id)
    rows = [snap.row_of[c.id] for c in chunks if c.id in snap.row_of]
    good = [r for r in rows if not _hidden(snap.meta[r], floor)]
    return good or rows


def _expand(walk: _Walk, frontier: list[tuple[dict[str, Any], np.ndarray]], depth: int
            ) -> list[tuple[dict[str, Any], np.ndarray]]:
    """One BFS level; stops at the first eligible node that no longer fits the budget."""
    nxt: list[tuple[dict[str, Any], np.ndarray]] = []
    for parent, vector in frontier:
        for added, (row, score) in enumerate(walk.neighbours(vector)):
            if added >= walk.params.fan_out:
                break
            node = _chunk_node(walk.snap.meta[row], depth=depth, parent=parent["id"], score=score)
            if not walk.add(node):
                return nxt
            walk.take(row)
            nxt.append((node, walk.snap.matrix[row]))
    return nxt


def connection_graph(
    kb: Any,
    *,
    start: str,
    depth: int = 2,
    fan_out: int = 5,
    min_similarity: float = 0.3,
    seed_strategy: str = "all_chunks",
    max_seed_chunks: int = 32,
    max_nodes: int = 100,
    dedup_by_path: bool = False,
    category: str | None = None,
    topic: str | None = None,
    exclude_paths: list[str] | None = None,
) -> dict[str, Any]:
    """The §9 graph around ``start`` as a JSON-ready dict (see the module docstring)."""
    params = validate_graph_args(
        start=start, depth=depth, fan_out=fan_out, min_similarity=min_similarity,
        seed_strategy=seed_strategy, max_seed_chunks=max_seed_chunks, max_nodes=max_nodes,
        dedup_by_path=dedup_by_path, category=category, topic=topic, exclude_paths=exclude_paths,
    )
    lock = getattr(kb, "lock", None) or threading.RLock()
    with lock:
        store = kb.store
        doc = store.get_document(params.start)
        if doc is None:
            raise NotFound(
                f"start {params.start!r} is not an indexed document; "
                "give a path relative to the knowledge base as `groove search` shows it"
            )
        snap = _snapshot(store)
        floor = _quality_floor(getattr(kb, "config", None))
        seeds = _seed_rows(snap, store, doc.id, floor)
        eligible = _eligible_mask(snap, params, doc.id, floor)
        graph = _walk(snap, params, doc, seeds, eligible)
        _attach_snippets(store, graph["nodes"])
    return graph


def _walk(snap: _Snapshot, params: GraphParams, doc: Any, seeds: list[int],
          eligible: np.ndarray) -> dict[str, Any]:
    truncation: list[dict[str, Any]] = []
    if len(seeds) > params.max_seed_chunks:
        truncation.append({
            "reason": "seed_chunks",
            "limit": params.max_seed_chunks,
            "remedy": f"{params.start} has {len(seeds)} chunks: raise max_seed_chunks "
                      f"(up to {MAX_SEED_CHUNKS_RANGE[1]}) or use seed_strategy=centroid",
        })
        seeds = seeds[: params.max_seed_chunks]
    walk = _Walk(snap, params, eligible)
    frontier: list[tuple[dict[str, Any], np.ndarray]] = []
    if params.seed_strategy == "centroid" and seeds:
        centroid = snap.matrix[seeds].mean(axis=0)
        norm = float(np.linalg.norm(centroid))
        root = {"id": f"doc:{doc.path}", "parent_id": None, "depth": 0, "score": 1.0,
                "path": doc.path, "heading": None, "chunk_id": snap.meta[seeds[0]].id}
        walk.add(root)
        frontier.append((root, centroid / norm if norm > 0 else centroid))
        seeds_used = len(seeds)
    else:
        for row in seeds:
            node = _chunk_node(snap.meta[row], depth=0, parent=None, score=1.0)
            if not walk.add(node):
                break
            frontier.append((node, snap.matrix[row]))
        seeds_used = len(frontier)
    if params.fan_out > 0:
        for level in range(1, params.depth + 1):
            if not frontier or walk.budget_hit:
                break
            frontier = _expand(walk, frontier, level)
    if walk.budget_hit:
        truncation.append({
            "reason": "node_budget",
            "limit": params.max_nodes,
            "remedy": f"raise max_nodes (up to {MAX_NODES_RANGE[1]}), lower depth or fan_out, "
                      "or raise min_similarity",
        })
    graph: dict[str, Any] = {
        "start": doc.path,
        "seed_strategy": params.seed_strategy,
        "nodes": walk.nodes,
        "stats": {
            "seeds_used": seeds_used,
            "knn_queries": walk.knn_queries,
            "total_nodes": len(walk.nodes),
        },
        "truncated": bool(truncation),
    }
    if truncation:
        graph["truncation"] = truncation
    return graph


def _attach_snippets(store: Any, nodes: list[dict[str, Any]]) -> None:
    """Fill ``snippet`` (first ~200 characters of the chunk) and drop the internal chunk id."""
    wanted = [n["chunk_id"] for n in nodes if n.get("chunk_id") is not None]
    rows = store.get_chunks(wanted) if wanted else {}
    for node in nodes:
        row = rows.get(node.pop("chunk_id", None))
        node["snippet"] = _snippet(row.content) if row is not None else ""


def _snippet(content: str) -> str:
    text = " ".join(content.split())
    if len(text) <= SNIPPET_CHARS:
        return text
    cut = text[:SNIPPET_CHARS]
    space = cut.rfind(" ")
    return (cut[:space] if space > SNIPPET_CHARS // 2 else cut) + "…"


# --- rendering ----------------------------------------------------------------------
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
            f"score: {node['score']:.3f}  depth: {node['depth']}  id: {node['id']}"
            f"  parent: {node['parent_id'] or '-'}",
        ]
        if node.get("snippet"):
            lines.append("")
            lines.append(node["snippet"])
        blocks.append("\n".join(lines))
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


def render_dot(graph: dict[str, Any]) -> str:
    """Graphviz source: left-to-right, nodes filled by depth, edges labelled with similarity."""
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
    for node in graph["nodes"]:
        if node["parent_id"] is not None:
            score = _dot_quote(format(node["score"], ".2f"))
            lines.append(
                f"  {_dot_quote(node['parent_id'])} -> {_dot_quote(node['id'])} [label={score}];"
            )
    lines.append("}")
    return "\n".join(lines) + "\n"


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


def _layout(nodes: list[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    """Top-left corner of each node: one column per depth, rows in BFS order."""
    rows_used: dict[int, int] = {}
    pos: dict[str, tuple[float, float]] = {}
    for node in nodes:
        d = node["depth"]
        r = rows_used.get(d, 0)
        rows_used[d] = r + 1
        pos[node["id"]] = (_MARGIN + d * (_BOX_W + _COL_GAP), _TOP + r * (_BOX_H + _ROW_GAP))
    return pos


def render_svg(graph: dict[str, Any]) -> str:
    """A self-contained SVG drawn without Graphviz: layered by depth, coloured, edges labelled."""
    nodes = graph["nodes"]
    pos = _layout(nodes)
    max_depth = max((n["depth"] for n in nodes), default=0)
    max_rows = max((sum(1 for n in nodes if n["depth"] == d) for d in range(max_depth + 1)), default=1)
    width = 2 * _MARGIN + (max_depth + 1) * _BOX_W + max_depth * _COL_GAP
    height = _TOP + max(max_rows, 1) * (_BOX_H + _ROW_GAP) + _MARGIN
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
        x = _MARGIN + d * (_BOX_W + _COL_GAP)
        out.append(f'<text x="{x}" y="{_TOP - 6}" fill="#555555">depth {d}</text>')
    out.append('<g class="edges" stroke="#888888" fill="none">')
    for node in nodes:
        parent = node["parent_id"]
        if parent is None or parent not in pos:
            continue
        (px, py), (cx, cy) = pos[parent], pos[node["id"]]
        x1, y1, x2, y2 = px + _BOX_W, py + _BOX_H / 2, cx, cy + _BOX_H / 2
        out.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"/>')
        out.append(
            f'<text x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2 - 3:.1f}" stroke="none" '
            f'fill="#333333" font-size="10" text-anchor="middle">{node["score"]:.2f}</text>'
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
