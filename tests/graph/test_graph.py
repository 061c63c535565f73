"""The connection graph (SPEC §9) as a caller sees it.

Most tests use a real SQLite index whose vectors are placed by hand on a
circle, so every similarity is known exactly: ``cos(angle difference)``. One
test at the end builds an index with the real default model.
"""

from __future__ import annotations

import contextlib
import math
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.errors import InvalidArgument, NotFound, PathRefused
from groove.graph import connection_graph, render_dot, render_svg, render_text
from groove.models import Chunk, DocumentRecord
from groove.store.sqlite import SQLiteStore

DIM = 4


def _vec(degrees: float) -> np.ndarray:
    rad = math.radians(degrees)
    return np.array([math.cos(rad), math.sin(rad), 0.0, 0.0], dtype=np.float32)


@dataclass
class _Quality:
    enabled: bool = True
    threshold: float = 0.3


@dataclass
class _Config:
    quality_filter: _Quality = field(default_factory=_Quality)


class _KB:
    """Just what connection_graph uses of a KnowledgeBase: ``config`` and ``reading()``."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store
        self.config = _Config()

    @contextlib.contextmanager
    def reading(self) -> Iterator[SQLiteStore]:
        yield self.store


def _write(store: SQLiteStore, path: str, chunks: list[tuple[str, float]], *,
           category: str | None = None, topic: str | None = None,
           quality: float = 1.0) -> None:
    """One document whose chunk i has heading chunks[i][0] and a vector at chunks[i][1] degrees."""
    record = DocumentRecord(
        path=path, sha256=path, title=path, category=category, topic=topic, date=None,
        tags=(), tags_invalid=False, metadata={}, size=1, mtime=0.0,
    )
    rows = [
        Chunk(chunk_index=i, heading=h, level=2, context="", token_count=10, quality=quality,
              content=f"Body of {h} in {path}. " * 3)
        for i, (h, _) in enumerate(chunks)
    ]
    store.write_document(record, rows, np.stack([_vec(a) for _, a in chunks]))


@pytest.fixture
def store(tmp_path: Path):
    s = SQLiteStore.open(tmp_path / "g.db", create=True)
    s.set_meta(model_id="test", dim=DIM, context_mode="off")
    _write(s, "start.md", [("S", 0.0)])
    _write(s, "a.md", [("A", 20.0)], category="eng")
    _write(s, "b.md", [("B", 40.0)], category="eng")
    _write(s, "c.md", [("C", 60.0)], category="ops")
    _write(s, "d.md", [("D", 80.0)], category="ops")
    _write(s, "far.md", [("F", 180.0)])
    yield s
    s.close()


@pytest.fixture
def kb(store):
    return _KB(store)


def _paths(graph):
    return [n["path"] for n in graph["nodes"]]


# --- bounds ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"depth": 4}, "depth"),
        ({"depth": -1}, "depth"),
        ({"fan_out": 21}, "fan_out"),
        ({"min_similarity": 1.5}, "min_similarity"),
        ({"min_similarity": float("nan")}, "min_similarity"),
        ({"seed_strategy": "random"}, "seed_strategy"),
        ({"max_seed_chunks": 0}, "max_seed_chunks"),
        ({"max_seed_chunks": 1001}, "max_seed_chunks"),
        ({"max_nodes": 0}, "max_nodes"),
        ({"max_nodes": 2001}, "max_nodes"),
        ({"exclude_paths": [f"x{i}.md" for i in range(65)]}, "exclude_paths"),
        ({"exclude_paths": ["x" * 1025]}, "exclude_paths"),
        ({"depth": True}, "depth"),
    ],
)
def test_out_of_range_arguments_are_refused_with_their_name_and_range(kb, kwargs, named):
    with pytest.raises(InvalidArgument) as info:
        connection_graph(kb, start="start.md", **kwargs)
    assert named in str(info.value)
    if named in {"depth", "fan_out", "max_nodes", "max_seed_chunks"}:
        assert ".." in str(info.value)  # the accepted range is spelled out


def test_bounds_are_checked_before_the_index_is_touched():
    class NoStore:
        @property
        def store(self):
            raise AssertionError("store opened before the arguments were checked")

    with pytest.raises(InvalidArgument, match="fan_out"):
        connection_graph(NoStore(), start="start.md", fan_out=99)


@pytest.mark.parametrize("start", ["../etc/passwd", "/etc/passwd", "a/../../x.md", "a\x00.md",
                                   "C:\\notes\\x.md"])
def test_start_paths_that_escape_the_kb_are_refused(kb, start):
    with pytest.raises(PathRefused):
        connection_graph(kb, start=start)


def test_an_unindexed_start_is_not_found(kb):
    with pytest.raises(NotFound, match="nope.md"):
        connection_graph(kb, start="nope.md")


def test_both_spellings_of_all_chunks_are_accepted(kb):
    a = connection_graph(kb, start="start.md", seed_strategy="all-chunks")
    b = connection_graph(kb, start="start.md", seed_strategy="all_chunks")
    assert a == b


# --- the walk -------------------------------------------------------------------------
def test_depth_and_fan_out_shape_the_breadth_first_walk(kb):
    graph = connection_graph(kb, start="start.md", depth=3, fan_out=1, min_similarity=0.0)
    nodes = graph["nodes"]
    assert _paths(graph) == ["start.md", "a.md", "b.md", "c.md"]
    assert [n["depth"] for n in nodes] == [0, 1, 2, 3]
    assert [n["parent_id"] for n in nodes] == [None] + [n["id"] for n in nodes[:-1]]
    # Calibrated: the median cosine between different documents here is cos 60° = 0.5.
    assert nodes[1]["score"] == pytest.approx((math.cos(math.radians(20)) - 0.5) / 0.5, abs=1e-4)
    assert nodes[1]["heading"] == "A" and nodes[1]["snippet"].startswith("Body of A in a.md.")
    assert graph["stats"] == {"seeds_used": 1, "knn_queries": 3, "total_nodes": 4}
    assert graph["truncated"] is False and "truncation" not in graph


def test_fan_out_limits_children_per_node(kb):
    graph = connection_graph(kb, start="start.md", depth=1, fan_out=2, min_similarity=0.0)
    assert _paths(graph) == ["start.md", "a.md", "b.md"]


def test_fan_out_zero_and_depth_zero_return_the_seeds_only(kb):
    for kwargs in ({"fan_out": 0}, {"depth": 0}):
        graph = connection_graph(kb, start="start.md", **kwargs)
        assert _paths(graph) == ["start.md"]
        assert graph["stats"]["knn_queries"] == 0


def test_min_similarity_drops_weak_links(kb):
    graph = connection_graph(kb, start="start.md", depth=1, fan_out=20, min_similarity=0.8)
    # Calibrated against the median unrelated cosine (0.5): cos 20° → 0.88, cos 40° → 0.53.
    assert _paths(graph) == ["start.md", "a.md"]
    everything = connection_graph(kb, start="start.md", depth=1, fan_out=20, min_similarity=0.0)
    assert "far.md" not in _paths(everything)  # cos 180° = -1 is below the unrelated level
    assert "d.md" not in _paths(everything)  # cos 80° = 0.17 too


def test_the_unrelated_baseline_is_the_median_cosine_between_different_documents(kb, store):
    from groove.graph.walk import unrelated_baseline

    ids, matrix = store.load_vectors()
    docs = np.array([{1: 0, 2: 1, 3: 2, 4: 3, 5: 4, 6: 5}[int(i)] for i in ids])
    # Pairs of the angles 0, 20, 40, 60, 80, 180: the 8th of 15 cosines is cos 60° = 0.5.
    assert unrelated_baseline(matrix, docs) == pytest.approx(0.5, abs=1e-6)
    assert unrelated_baseline(matrix, np.zeros(len(ids), dtype=np.int64)) == 0.0  # no pair


def test_dedup_by_path_draws_the_start_document_once(kb, store):
    _write(store, "pair.md", [("P1", 15.0), ("P2", 25.0)])
    graph = connection_graph(kb, start="pair.md", dedup_by_path=True, depth=1, fan_out=2,
                             min_similarity=0.0)
    paths = _paths(graph)
    assert paths[0] == "pair.md" and paths.count("pair.md") == 1
    assert len(paths) == len(set(paths))


def test_category_topic_and_exclude_paths_filter_neighbours(kb):
    eng = connection_graph(kb, start="start.md", depth=3, fan_out=5, min_similarity=0.0,
                           category="eng")
    assert set(_paths(eng)) == {"start.md", "a.md", "b.md"}
    excluded = connection_graph(kb, start="start.md", depth=1, fan_out=1, min_similarity=0.0,
                                exclude_paths=["a.md"])
    assert _paths(excluded) == ["start.md", "b.md"]
    none = connection_graph(kb, start="start.md", depth=1, fan_out=5, topic="nothing")
    assert _paths(none) == ["start.md"]


def test_low_quality_chunks_are_hidden_from_the_graph(kb, store):
    _write(store, "tbd.md", [("TBD", 10.0)], quality=0.1)
    graph = connection_graph(kb, start="start.md", depth=1, fan_out=1, min_similarity=0.0)
    assert _paths(graph) == ["start.md", "a.md"]


def test_dedup_by_path_keeps_one_node_per_document(kb, store):
    _write(store, "twin.md", [("T1", 5.0), ("T2", 6.0)])
    plain = connection_graph(kb, start="start.md", depth=1, fan_out=2, min_similarity=0.0)
    assert _paths(plain) == ["start.md", "twin.md", "twin.md"]
    dedup = connection_graph(kb, start="start.md", depth=1, fan_out=2, min_similarity=0.0,
                             dedup_by_path=True)
    assert _paths(dedup) == ["start.md", "twin.md", "a.md"]


def test_the_cache_follows_index_changes(kb, store):
    before = connection_graph(kb, start="start.md", depth=1, fan_out=1, min_similarity=0.0)
    _write(store, "closer.md", [("X", 1.0)])
    after = connection_graph(kb, start="start.md", depth=1, fan_out=1, min_similarity=0.0)
    assert _paths(before)[1] == "a.md" and _paths(after)[1] == "closer.md"


# --- truncation -----------------------------------------------------------------------
def test_node_budget_truncation_is_reported_when_a_node_was_dropped(kb):
    graph = connection_graph(kb, start="start.md", depth=1, fan_out=5, min_similarity=0.0,
                             max_nodes=2)
    assert len(graph["nodes"]) == 2
    assert graph["truncated"] is True
    [item] = graph["truncation"]
    assert item["reason"] == "node_budget" and item["limit"] == 2 and "max_nodes" in item["remedy"]


def test_a_budget_reached_exactly_is_not_a_truncation(kb):
    # Only a.md is within 0.85 of start (calibrated 0.879), so start + a fill a budget of 2.
    graph = connection_graph(kb, start="start.md", depth=1, fan_out=5, min_similarity=0.85,
                             max_nodes=2)
    assert _paths(graph) == ["start.md", "a.md"]
    assert graph["truncated"] is False and "truncation" not in graph


def test_seed_chunk_truncation_only_when_chunks_were_left_out(kb, store):
    _write(store, "long.md", [("L1", 0.0), ("L2", 1.0), ("L3", 2.0)])
    cut = connection_graph(kb, start="long.md", max_seed_chunks=2, fan_out=0)
    assert [n["heading"] for n in cut["nodes"]] == ["L1", "L2"]
    assert cut["stats"]["seeds_used"] == 2
    assert [t["reason"] for t in cut["truncation"]] == ["seed_chunks"]
    assert cut["truncation"][0]["limit"] == 2
    whole = connection_graph(kb, start="long.md", max_seed_chunks=3, fan_out=0)
    assert whole["truncated"] is False and "truncation" not in whole


def test_centroid_seeds_one_document_node_and_queries_once(kb, store):
    _write(store, "pair.md", [("P1", 15.0), ("P2", 25.0)])
    graph = connection_graph(kb, start="pair.md", seed_strategy="centroid", depth=1, fan_out=1,
                             min_similarity=0.0)
    root, child = graph["nodes"]
    assert root["id"] == "doc:pair.md" and root["depth"] == 0 and root["parent_id"] is None
    assert child["path"] == "a.md" and child["score"] == pytest.approx(1.0, abs=1e-4)
    assert graph["stats"] == {"seeds_used": 2, "knn_queries": 1, "total_nodes": 2}


# --- rendering ------------------------------------------------------------------------
def _truncated_graph(kb):
    return connection_graph(kb, start="start.md", depth=2, fan_out=3, min_similarity=0.0,
                            max_nodes=3)


def test_svg_is_well_formed_coloured_by_depth_labelled_and_notes_truncation(kb, store):
    _write(store, 'we<ird> & "odd".md', [("<script>alert(1)</script> \x01", 21.0)])
    graph = _truncated_graph(kb)
    svg = render_svg(graph)
    root = ET.fromstring(svg)
    ns = {"s": "http://www.w3.org/2000/svg"}
    fills = {g.get("data-depth"): g.find("s:rect", ns).get("fill")
             for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "node"}
    assert len(set(fills.values())) == len(fills) >= 2  # one colour per depth
    texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert any(t.startswith("truncated") and "max_nodes" in t for t in texts)
    child = graph["nodes"][1]
    assert f"{child['score']:.2f}" in texts  # edge label
    assert "<script>" not in svg and any("<script>" in t for t in texts)


def test_svg_without_truncation_has_no_note(kb):
    graph = connection_graph(kb, start="start.md", depth=1, fan_out=1)
    root = ET.fromstring(render_svg(graph))
    texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert not any("truncated" in t for t in texts)


def test_dot_output_declares_every_node_and_edge(kb, store):
    _write(store, 'quote"d.md', [('say "hi"\\', 19.0)])
    graph = _truncated_graph(kb)
    dot = render_dot(graph)
    assert dot.startswith("digraph groove {") and dot.rstrip().endswith("}")
    for node in graph["nodes"]:
        assert f'"{node["id"]}" [label=' in dot
    edges = [line for line in dot.splitlines() if "->" in line]
    assert len(edges) == len(graph["nodes"]) - 1
    assert 'say \\"hi\\"\\\\' in dot  # quotes and backslashes escaped
    assert "truncated" in dot


def test_text_output_is_blocks_separated_by_dashes(kb):
    graph = connection_graph(kb, start="start.md", depth=1, fan_out=2, min_similarity=0.0)
    blocks = render_text(graph).split("\n---\n")
    assert len(blocks) == 1 + len(graph["nodes"])
    assert blocks[2].startswith("path: a.md\nheading: A\nscore: 0.879")


# --- with the real model --------------------------------------------------------------
def test_graph_over_a_real_index_links_related_notes(tmp_path, write_files, make_kb):
    root = write_files(tmp_path / "kb", {
        "rust/async.md": "# Async Rust\n\n## Tasks\n\nSpawn tokio tasks to run futures "
                         "concurrently on the runtime worker threads.\n",
        "rust/tokio.md": "# Tokio runtime\n\n## Scheduling\n\nThe tokio runtime schedules "
                         "async tasks and futures across worker threads.\n",
        "cooking/bread.md": "# Bread\n\n## Starter\n\nFeed the sourdough starter flour and "
                            "water every day before baking bread.\n",
    })
    kb = make_kb(root)
    kb.index()
    graph = connection_graph(kb, start="rust/async.md", depth=1, fan_out=1, min_similarity=0.0)
    assert _paths(graph) == ["rust/async.md", "rust/tokio.md"]
    assert 0.0 < graph["nodes"][1]["score"] <= 1.0


# --- rendering never breaks on hostile text --------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text(max_size=60), st.one_of(st.none(), st.text(max_size=60)),
                          st.text(max_size=250)), min_size=1, max_size=6),
       st.booleans())
def test_svg_is_well_formed_for_any_text(items, truncated):
    nodes = [
        {"id": f"chunk:{i}", "parent_id": None if i == 0 else f"chunk:{(i - 1) // 2}",
         "depth": 0 if i == 0 else min(3, 1 + (i - 1) // 2), "score": 0.5,
         "path": path, "heading": heading, "snippet": snippet}
        for i, (path, heading, snippet) in enumerate(items)
    ]
    graph = {"start": items[0][0], "nodes": nodes, "truncated": truncated,
             "stats": {"seeds_used": 1, "knn_queries": 0, "total_nodes": len(nodes)}}
    if truncated:
        graph["truncation"] = [{"reason": "node_budget", "limit": 1, "remedy": "<&\"'>"}]
    root = ET.fromstring(render_svg(graph))
    groups = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "node"]
    assert len(groups) == len(nodes)
    dot = render_dot(graph)
    assert dot.count('" -> "') == len(nodes) - 1  # label quotes are escaped, so only edges


# --- one argument model for library, CLI and MCP ---------------------------------------
def test_every_graph_argument_is_a_cli_flag_and_an_mcp_property_with_the_same_bounds():
    from click.testing import CliRunner

    from groove.cli import cli
    from groove.cli.graph_cmd import graph_command  # registers the command
    from groove.graph.params import GraphParams
    from groove.server.tools import model_input_schema

    schema = model_input_schema(GraphParams, "get_connection_graphArguments")
    assert set(schema["properties"]) == set(GraphParams.model_fields)
    assert all("anyOf" not in prop for prop in schema["properties"].values())  # no unions
    assert schema["properties"]["depth"]["minimum"] == 0  # depth 0 everywhere now
    assert schema["required"] == ["start"]
    assert graph_command.name == "graph"
    help_text = CliRunner().invoke(cli, ["graph", "--help"]).output
    for flag in ("--depth", "--fan-out", "--min-similarity", "--seed-strategy",
                 "--max-seed-chunks", "--max-nodes", "--dedup-by-path", "--category", "--topic",
                 "--exclude-path"):
        assert flag in help_text
    assert "an integer 0..3" in help_text


def test_refusals_name_the_argument_without_pydantic_text(kb):
    with pytest.raises(InvalidArgument) as info:
        connection_graph(kb, start="start.md", depth=4, fan_out="x")
    text = str(info.value)
    assert "depth: 4 is out of range; accepted: an integer 0..3" in text
    assert "fan_out: expected an integer" in text
    assert "pydantic" not in text and "errors.pydantic.dev" not in text
