"""The connection-graph walk: BFS over embedding similarity from one document.

See docs/graph.md for the shape of the walk (seeds, expansion, bounds).

The vector matrix and chunk metadata are cached per store and refreshed when
``store.generation()`` changes, so a server answering many graph calls reads
SQLite once per index change.
"""


from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from groove.errors import NotFound
from groove.graph.params import (
    MAX_NODES_RANGE,
    MAX_SEED_CHUNKS_RANGE,
    SNIPPET_CHARS,
    GraphParams,
)
from groove.models import ChunkRow

if TYPE_CHECKING:
    from groove.config import Config
    from groove.kb import KnowledgeBase
    from groove.store.base import Store

log = logging.getLogger("groove.graph")

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
    baseline: float  # median cosine between chunks of different documents (see calibrate)


_CACHE: weakref.WeakKeyDictionary[Any, _Snapshot] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def _snapshot(store: Store) -> _Snapshot:
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
        baseline=unrelated_baseline(matrix, np.fromiter((row.doc_id for row in meta),
                                                        dtype=np.int64, count=len(meta))),
    )
    with _CACHE_LOCK:
        _CACHE[store] = snap
    return snap


# --- similarity calibration ---------------------------------------------------------
#: Chunks sampled (deterministically) to estimate how similar unrelated text is.
BASELINE_SAMPLE = 256


def unrelated_baseline(matrix: np.ndarray, doc_ids: np.ndarray) -> float:
    """The median cosine between chunks of *different* documents in this index.

    It is the model's (and the folder's) "unrelated" level: multilingual-e5
    puts it near 0.8, other models near 0.1. Computed once per index
    generation from at most BASELINE_SAMPLE chunks; 0 when there is no pair.
    """
    if len(matrix) < 2:
        return 0.0
    rows = np.random.default_rng(0).permutation(len(matrix))[:BASELINE_SAMPLE]
    sims = matrix[rows] @ matrix[rows].T
    other = doc_ids[rows][:, None] != doc_ids[rows][None, :]
    values = sims[other]
    return float(np.median(values)) if values.size else 0.0


def calibrated(cosine: np.ndarray, baseline: float) -> np.ndarray:
    """``(cos − baseline) / (1 − baseline)``: 0 = unrelated-level, 1 = identical.

    ``min_similarity`` (≥ 0) and node scores are on this scale (docs/graph.md),
    so 0.3 means "clearly more related than unrelated notes" for every model,
    and a floor of 0 still leaves out what is less similar than unrelated notes.
    """
    span = max(1e-6, 1.0 - baseline)
    return (np.asarray(cosine) - baseline) / span


# --- the walk ---------------------------------------------------------------------
def _quality_floor(config: Config) -> float | None:
    """The quality threshold hiding chunks from graph results, or None when the filter is off."""
    qf = getattr(config, "quality_filter", None)
    if qf is None or not getattr(qf, "enabled", True):
        return None
    return float(getattr(qf, "threshold", 0.3))


def _hidden(row: ChunkRow, floor: float | None) -> bool:
    return floor is not None and not row.binary_format and row.quality < floor


def _excluded(path: str, excludes: list[str] | None) -> bool:
    return any(path == e or path.startswith(e + "/") for e in excludes or ())


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
        scores = calibrated(self.snap.matrix @ vector, self.snap.baseline)
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


def _seed_rows(snap: _Snapshot, store: Store, doc_id: int, floor: float | None) -> list[int]:
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


def connection_graph(kb: KnowledgeBase, params: GraphParams | None = None,
                     **arguments: Any) -> dict[str, Any]:
    """The connection graph around ``start`` as a JSON-ready dict (docs/graph.md).

    Pass a :class:`GraphParams` or its fields as keyword arguments (checked
    before the index is touched). ``edges`` chooses what connects two notes:
    the links they write (:func:`_link_walk`, taken first), embedding
    similarity (the breadth-first walk below), or both; every edge is listed
    in ``edges`` with its ``type``.
    """
    params = params if params is not None else GraphParams(**arguments)
    with kb.reading() as store:
        doc = store.get_document(params.start)
        if doc is None:
            raise NotFound(
                f"start {params.start!r} is not an indexed document; "
                "give a path relative to the knowledge base as `groove search` shows it"
            )
        linked = (_link_walk(store, params, doc, required=params.edges == "links")
                  if params.edges != "similarity" else _LinkWalk([], [], False))
        if params.edges == "links":
            graph = _graph(params, doc, linked.nodes, seeds_used=0, knn_queries=0,
                           truncation=[])
        else:
            snap = _snapshot(store)
            floor = _quality_floor(kb.config)
            seeds = _seed_rows(snap, store, doc.id, floor)
            eligible = _eligible_mask(snap, params, doc.id, floor)
            left = params.max_nodes - len(linked.nodes)
            similar = params.model_copy(update={"max_nodes": max(left, 1)})
            graph = _walk(snap, similar, doc, seeds, eligible)
            taken = {node["id"] for node in linked.nodes}
            graph["nodes"] = linked.nodes + [n for n in graph["nodes"] if n["id"] not in taken]
            graph["stats"]["total_nodes"] = len(graph["nodes"])
            if left < 1:
                graph["nodes"] = linked.nodes
                graph["stats"]["total_nodes"] = len(linked.nodes)
        graph["edges"] = linked.edges + [
            {"source": n["parent_id"], "target": n["id"], "type": "similarity",
             "score": n["score"]}
            for n in graph["nodes"] if n.get("via") != "link" and n["parent_id"] is not None]
        if linked.budget_hit and not graph["truncated"]:
            graph["truncated"] = True
            graph["truncation"] = [_budget_truncation(params)]
        _attach_snippets(store, graph["nodes"])
    return graph


@dataclass
class _LinkWalk:
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    budget_hit: bool


def _link_walk(store: Store, params: GraphParams, doc: Any, *, required: bool) -> _LinkWalk:
    """Breadth-first over the links the notes write, in both directions (a link from the
    start document and a link to it both connect), at most ``fan_out`` new documents per
    node (its outgoing links first, then its backlinks, each by path), ``depth`` levels,
    within ``max_nodes`` and the category, topic and ``exclude_paths`` filters.

    Returns document nodes (``doc:<path>``, ``via: "link"``; the start document's
    node only when a link was found or ``required``) and one edge per pair of
    documents in the graph that a link joins, from the linking document, with how
    many links it writes.
    """
    root = {"id": f"doc:{doc.path}", "parent_id": None, "depth": 0, "score": 1.0,
            "path": doc.path, "heading": None, "via": "link", "doc_id": doc.id}
    nodes: dict[int, dict[str, Any]] = {doc.id: root}
    frontier = [doc.id]
    budget_hit = False
    for level in range(1, params.depth + 1):
        if not frontier or params.fan_out == 0:
            break
        pairs = store.link_edges(frontier)
        found: dict[int, list[tuple[int, int]]] = {}  # parent -> [(order, neighbour)]
        for source, target, _ in pairs:
            if source in frontier and target not in nodes:
                found.setdefault(source, []).append((0, target))
            if target in frontier and source not in nodes:
                found.setdefault(target, []).append((1, source))
        rows = store.documents_by_id({n for near in found.values() for _, n in near})
        nxt: list[int] = []
        for parent in frontier:
            near = [(order, rows[n].path, n) for order, n in found.get(parent, ()) if n in rows]
            added = 0
            for _, path, neighbour in sorted(set(near)):
                if added >= params.fan_out:
                    break
                if neighbour in nodes or not _link_eligible(rows[neighbour], params):
                    continue
                if len(nodes) >= params.max_nodes:  # the start's node counts once a link is in
                    budget_hit = True
                    break
                nodes[neighbour] = {
                    "id": f"doc:{path}", "parent_id": nodes[parent]["id"], "depth": level,
                    "score": None, "path": path, "heading": None, "via": "link",
                    "doc_id": neighbour}
                nxt.append(neighbour)
                added += 1
        frontier = nxt
    if len(nodes) == 1 and not required:
        return _LinkWalk([], [], budget_hit)
    edges = [{"source": nodes[s]["id"], "target": nodes[t]["id"], "type": "link", "links": n}
             for s, t, n in sorted(store.link_edges(list(nodes)))
             if s in nodes and t in nodes]
    for node in nodes.values():
        first = store.document_chunks(node.pop("doc_id"))
        node["chunk_id"] = first[0].id if first else None
    return _LinkWalk(list(nodes.values()), edges, budget_hit)


def _link_eligible(row: Any, params: GraphParams) -> bool:
    return ((params.category is None or row.category == params.category)
            and (params.topic is None or row.topic == params.topic)
            and not _excluded(row.path, params.exclude_paths))


def _budget_truncation(params: GraphParams) -> dict[str, Any]:
    return {"reason": "node_budget", "limit": params.max_nodes,
            "remedy": f"raise max_nodes (up to {MAX_NODES_RANGE[1]}), lower depth or fan_out, "
                      "or raise min_similarity"}


def _graph(params: GraphParams, doc: Any, nodes: list[dict[str, Any]], *, seeds_used: int,
           knn_queries: int, truncation: list[dict[str, Any]]) -> dict[str, Any]:
    graph: dict[str, Any] = {
        "start": doc.path,
        "seed_strategy": params.seed_strategy,
        "nodes": nodes,
        "stats": {"seeds_used": seeds_used, "knn_queries": knn_queries,
                  "total_nodes": len(nodes)},
        "truncated": bool(truncation),
    }
    if truncation:
        graph["truncation"] = truncation
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
    root = {"id": f"doc:{doc.path}", "parent_id": None, "depth": 0, "score": 1.0,
            "path": doc.path, "heading": None, "chunk_id": snap.meta[seeds[0]].id if seeds else None}
    if params.seed_strategy == "centroid" and seeds:
        centroid = snap.matrix[seeds].mean(axis=0)
        norm = float(np.linalg.norm(centroid))
        walk.add(root)
        frontier.append((root, centroid / norm if norm > 0 else centroid))
        seeds_used = len(seeds)
    elif params.dedup_by_path and seeds:
        # One node for the start document; every seed chunk still searches from it.
        walk.add(root)
        frontier.extend((root, snap.matrix[row]) for row in seeds)
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
        truncation.append(_budget_truncation(params))
    return _graph(params, doc, walk.nodes, seeds_used=seeds_used, knn_queries=walk.knn_queries,
                  truncation=truncation)


def _attach_snippets(store: Store, nodes: list[dict[str, Any]]) -> None:
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


