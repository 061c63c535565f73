"""``groove graph``: the connection graph as JSON (default), text, dot or SVG (docs/graph.md)."""

from __future__ import annotations

import json

import click

from groove.cli import cli
from groove.cli.options import format_option, kb_options
from groove.kb import KnowledgeBase


@cli.command("graph")
@click.option("--start", required=True, help="Indexed document to start from (path relative to kb_path).")
@click.option("--depth", type=int, default=2, show_default=True, help="BFS depth (0..3).")
@click.option("--fan-out", type=int, default=5, show_default=True,
              help="Neighbours per node (0..20, 0 = seed only).")
@click.option("--min-similarity", type=float, default=0.3, show_default=True,
              help="Cosine similarity floor in [0,1].")
@click.option("--seed-strategy", default="all_chunks", show_default=True,
              help="all_chunks (or all-chunks) | centroid.")
@click.option("--max-seed-chunks", type=int, default=32, show_default=True,
              help="Start-document chunks used as seeds (1..1000).")
@click.option("--max-nodes", type=int, default=100, show_default=True,
              help="Node budget (1..2000).")
@click.option("--dedup-by-path", is_flag=True, help="At most one node per document.")
@click.option("--category", default=None, help="Only neighbours in this category (exact).")
@click.option("--topic", default=None, help="Only neighbours in this topic (exact).")
@click.option("--exclude-path", "exclude_paths", multiple=True,
              help="Document (or folder) to leave out; repeat (at most 64).")
@format_option("json", "text", "dot", "svg", default="json")
@kb_options()
def graph_command(kb: KnowledgeBase, start: str, depth: int, fan_out: int, min_similarity: float,
                  seed_strategy: str, max_seed_chunks: int, max_nodes: int, dedup_by_path: bool,
                  category: str | None, topic: str | None, exclude_paths: tuple[str, ...],
                  fmt: str) -> None:
    """Documents connected to --start by embedding similarity (needs an index)."""
    from groove.graph import connection_graph, render_dot, render_svg, render_text

    graph = connection_graph(
        kb, start=start, depth=depth, fan_out=fan_out, min_similarity=min_similarity,
        seed_strategy=seed_strategy, max_seed_chunks=max_seed_chunks, max_nodes=max_nodes,
        dedup_by_path=dedup_by_path, category=category, topic=topic,
        exclude_paths=list(exclude_paths) or None,
    )
    if fmt == "json":
        click.echo(json.dumps(graph, ensure_ascii=False, indent=2))
    else:
        render = {"text": render_text, "dot": render_dot, "svg": render_svg}[fmt]
        click.echo(render(graph), nl=False)
