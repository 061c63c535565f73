"""``groove search``: one query, JSON (default) or LLM-friendly text blocks."""

from __future__ import annotations

import json

import click

from groove.cli import cli
from groove.cli.options import format_option, kb_options, search_options, search_overrides
from groove.cli.progress import make_reporter
from groove.kb import KnowledgeBase
from groove.models import SearchResponse
from groove.search.request import SearchRequest


def render_text(response: SearchResponse) -> str:
    """Blocks separated by ``---``: path, heading, score, then the content."""
    blocks = []
    for hit in response.results:
        blocks.append(
            f"path: {hit.path}\nheading: {hit.heading or ''}\nscore: {hit.score:.4f}\n\n{hit.content}"
        )
    return "\n---\n".join(blocks)


@cli.command("search")
@click.argument("query")
@format_option("json", "text", default="json")
@kb_options(overrides=search_overrides)
@search_options
def search_command(kb: KnowledgeBase, base_request: SearchRequest, query: str, fmt: str) -> None:
    """Search the knowledge base (builds the index first when there is none)."""
    from groove.search.request import validate_request

    request = validate_request(base_request.replace(query=query))
    kb.ensure_index(reporter=make_reporter(quiet=True, progress=False))
    response = kb.search(request)
    if fmt == "json":
        click.echo(json.dumps(response.to_json(), ensure_ascii=False, indent=2))
    else:
        if response.low_confidence:
            click.echo("note: low confidence: no hit stands out from the rest", err=True)
        click.echo(render_text(response))
