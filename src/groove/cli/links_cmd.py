"""``groove links PATH``: what a document links to, or with ``--backlinks`` what links to it."""

from __future__ import annotations

import json

import click

from groove.cli import cli
from groove.cli.options import format_option, kb_options
from groove.graph.params import LinksParams
from groove.kb import KnowledgeBase


@cli.command("links")
@click.argument("path")
@click.option("--backlinks", is_flag=True, default=False,
              help=LinksParams.model_fields["backlinks"].description)
@format_option("text", "json", default="text")
@kb_options(one=True)
def links_command(kb: KnowledgeBase, path: str, backlinks: bool, fmt: str) -> None:
    """The links written in PATH (wikilinks and Markdown links, each with the document it
    resolves to, or why it points at none), or with --backlinks the links to PATH (the
    linking document, its section and that section's first line). Needs an index.

    \b
    Example:
      groove links "notes/Rate limiting.md" --backlinks
    """
    from groove.graph.links import links_answer, render_links_text

    answer = links_answer(kb, LinksParams(path=path, backlinks=backlinks))
    if fmt == "json":
        click.echo(json.dumps(answer, ensure_ascii=False, indent=2))
    else:
        click.echo(render_links_text(answer), nl=False)
