"""``groove graph``: the connection graph as JSON (default), text, dot or SVG (docs/graph.md).

The flags are derived from :class:`groove.graph.params.GraphParams`, the same
model the MCP ``get_connection_graph`` tool and the library use, so bounds,
defaults and messages are the same everywhere.
"""

from __future__ import annotations

import json
from typing import Any

import click

from groove.cli import cli
from groove.cli.options import format_option, kb_options, model_flag
from groove.graph.params import GraphParams
from groove.kb import KnowledgeBase


def graph_options(func: Any) -> Any:
    """One flag per :class:`GraphParams` field (``--start`` required)."""
    for name, info in reversed(list(GraphParams.model_fields.items())):
        if name == "start":
            func = click.option("--start", required=True, help=info.description)(func)
        else:
            func = model_flag(name, info, GraphParams)(func)
    return func


@cli.command("graph")
@graph_options
@format_option("json", "text", "dot", "svg", default="json")
@kb_options(model=True, one=True)
def graph_command(kb: KnowledgeBase, fmt: str, **arguments: Any) -> None:
    """Documents connected to --start by the links the notes write and by embedding
    similarity (needs an index).

    \b
    Example:
      groove graph --start Home.md --edges links --depth 3 --fan-out 20 --format svg > links.svg
    """
    from groove.graph import connection_graph, render_dot, render_svg, render_text

    given = {name: value for name, value in arguments.items() if value not in (None, ())}
    kb.check_model()  # the graph reads stored vectors only, but the index must be the model's
    graph = connection_graph(kb, GraphParams(**given))
    if fmt == "json":
        click.echo(json.dumps(graph, ensure_ascii=False, indent=2))
    else:
        render = {"text": render_text, "dot": render_dot, "svg": render_svg}[fmt]
        click.echo(render(graph), nl=False)
